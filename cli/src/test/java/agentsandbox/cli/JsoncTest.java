// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JsoncTest {
    private static Jsonc.Value parse(String text) throws Jsonc.SyntaxError {
        return Jsonc.parse(text);
    }

    private static Jsonc.SyntaxError error(String text) {
        Jsonc.SyntaxError e = catchThrowableOfType(Jsonc.SyntaxError.class, () -> Jsonc.parse(text));
        assertThat(e).as("expected a syntax error for: " + text).isNotNull();
        return e;
    }

    @Test
    void Plain_Json_Parses_With_Types_And_Positions() throws Exception {
        Jsonc.Obj o = (Jsonc.Obj) parse("{\n  \"a\": [1, -2.5e3, \"s\"],\n  \"b\": {\"c\": true, \"d\": null}\n}");
        assertThat(o.members()).containsOnlyKeys("a", "b");
        Jsonc.Member a = o.members().get("a");
        assertThat(a.line()).isEqualTo(2);
        assertThat(a.column()).isEqualTo(3);
        Jsonc.Arr arr = (Jsonc.Arr) a.value();
        assertThat(arr.items()).hasSize(3);
        assertThat(((Jsonc.Num) arr.items().get(1)).text()).isEqualTo("-2.5e3");
        assertThat(arr.items().get(2)).isEqualTo(new Jsonc.Str("s", 2, 20));
        Jsonc.Obj b = (Jsonc.Obj) o.members().get("b").value();
        assertThat(b.members().get("c").value()).isEqualTo(new Jsonc.Bool(true, 3, 14));
        assertThat(b.members().get("d").value().kind()).isEqualTo("null");
    }

    @Test
    void Comments_And_Trailing_Commas_Are_Accepted() throws Exception {
        Jsonc.Obj o = (Jsonc.Obj) parse("""
                // leading comment
                {
                  /* block
                     comment */ "a": [1, 2,], // trailing
                  "b": "// not a comment",
                }
                """);
        assertThat(((Jsonc.Arr) o.members().get("a").value()).items()).hasSize(2);
        assertThat(o.members().get("b").value()).isEqualTo(new Jsonc.Str("// not a comment", 5, 8));
        assertThat(o.members().get("a").line()).isEqualTo(4);
    }

    @Test
    void String_Escapes_Are_Decoded() throws Exception {
        Jsonc.Str s = (Jsonc.Str) parse("\"q\\\" b\\\\ s\\/ \\n\\t \\u00e9 \\ud83d\\ude00\"");
        assertThat(s.value()).isEqualTo("q\" b\\ s/ \n\t é 😀");
    }

    @Test
    void A_Byte_Order_Mark_Is_Skipped() throws Exception {
        assertThat(parse("\uFEFF{}")).isInstanceOf(Jsonc.Obj.class);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "''                       | 1 | 1  | empty document",
        "'{\"a\": tr}'            | 1 | 7  | expected a value",
        "'{\"a\": 1'              | 1 | 8  | missing '}'",
        "'[1 2]'                  | 1 | 4  | expected ',' or ']'",
        "'{\"a\" 1}'              | 1 | 6  | expected ':'",
        "'{a: 1}'                 | 1 | 2  | expected a \"key\"",
        "'{\"a\": 1, \"a\": 2}'   | 1 | 10 | duplicate key \"a\"",
        "'\"abc'                  | 1 | 1  | unterminated string",
        "'/* open'                | 1 | 1  | unterminated /* comment",
        "'{} x'                   | 1 | 4  | after the end of the document",
        "'01'                     | 1 | 2  | after the end of the document",
        "'1.'                     | 1 | 3  | digits after '.'",
        "'\"\\x\"'                | 1 | 2  | invalid escape",
        "'\"\\u12\"'              | 1 | 2  | \\u escape",
        "'[\"a\\ud800\"]'         | 1 | 2  | half a character",
        "'[\"\\ude00\\ud83d\"]'  | 1 | 2  | half a character",
        "'[,]'                    | 1 | 2  | expected a value",
        "'{,}'                    | 1 | 2  | expected a \"key\"",
    })
    void Syntax_Errors_Point_At_The_Problem(String text, int line, int column, String message) {
        Jsonc.SyntaxError e = error(text);
        assertThat(e.getMessage()).contains(message);
        assertThat(e.line).isEqualTo(line);
        assertThat(e.column).isEqualTo(column);
    }

    @Test
    void Positions_Count_Lines_After_Comments() {
        Jsonc.SyntaxError e = error("{\n /* a\n b */\n  \"x\": ?\n}");
        assertThat(e.line).isEqualTo(4);
        assertThat(e.column).isEqualTo(8);
    }

    @Test
    void Control_Characters_In_Strings_Are_Refused() {
        assertThat(error("\"a\nb\"").getMessage()).contains("control character U+000A");
    }

    @Test
    void Deep_Nesting_Is_Refused_Without_Exhausting_The_Stack() {
        Jsonc.SyntaxError e = error("[".repeat(1_000_000));
        assertThat(e.getMessage()).contains("nested deeper than " + Jsonc.MAX_DEPTH);
        String ok = "[".repeat(Jsonc.MAX_DEPTH - 1) + "]".repeat(Jsonc.MAX_DEPTH - 1);
        assertThat(catchThrowableOfType(Jsonc.SyntaxError.class, () -> Jsonc.parse(ok))).isNull();
    }
}
