// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class ShellQuoteTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "--ro-bind|--ro-bind",
        "/usr/bin/git|/usr/bin/git",
        "a b|'a b'",
        "it's|'it'\\''s'",
        "\"\"|''",
        "$HOME|'$HOME'",
        "~/x|'~/x'",
        "a*b|'a*b'",
        "x=1|'x=1'",
        "semi;colon|'semi;colon'",
    })
    void Quotes_Only_What_A_Shell_Would_Change(String word, String expected) {
        assertThat(ShellQuote.quote(word)).isEqualTo(expected);
    }

    @Test
    void Quotes_Line_Breaks_In_ANSI_C_Quotes_So_The_Line_Stays_One_Line() {
        assertThat(ShellQuote.quote("a\nb")).isEqualTo("$'a\\nb'");
        assertThat(ShellQuote.quote("it's\r\n\\n\tx")).isEqualTo("$'it\\'s\\r\\n\\\\n\tx'");
    }

    @Test
    void Joins_With_Single_Spaces() {
        assertThat(ShellQuote.join(List.of("sh", "-c", "echo hi"))).isEqualTo("sh -c 'echo hi'");
    }
}
