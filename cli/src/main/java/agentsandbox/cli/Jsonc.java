// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSONC reader: JSON plus {@code //} and {@code /* *}{@code /} comments and
 * trailing commas. Every value remembers its line and column so that configuration
 * errors can point at the offending spot. Duplicate keys are an error (the second one
 * would otherwise silently win). Nesting is limited so hostile input cannot exhaust
 * the stack.
 */
final class Jsonc {
    /** Deeper than any sensible configuration. */
    static final int MAX_DEPTH = 64;

    /** A parsed value and where it starts. */
    sealed interface Value {
        int line();

        int column();

        /** The JSON type name used in messages. */
        String kind();
    }

    record Obj(Map<String, Member> members, int line, int column) implements Value {
        public String kind() {
            return "object";
        }
    }

    /** An object member; the position is the key's. */
    record Member(String key, Value value, int line, int column) {}

    record Arr(List<Value> items, int line, int column) implements Value {
        public String kind() {
            return "array";
        }
    }

    record Str(String value, int line, int column) implements Value {
        public String kind() {
            return "string";
        }
    }

    record Num(String text, int line, int column) implements Value {
        public String kind() {
            return "number";
        }
    }

    record Bool(boolean value, int line, int column) implements Value {
        public String kind() {
            return "boolean";
        }
    }

    record Null(int line, int column) implements Value {
        public String kind() {
            return "null";
        }
    }

    /** Invalid JSONC, with the position of the problem. */
    static final class SyntaxError extends Exception {
        final int line;
        final int column;

        SyntaxError(int line, int column, String message) {
            super(message, null, false, false);
            this.line = line;
            this.column = column;
        }
    }

    private final String text;
    private int pos;
    private int line = 1;
    private int lineStart;

    private Jsonc(String text) {
        this.text = text;
    }

    /** Parses one complete document. */
    static Value parse(String text) throws SyntaxError {
        Jsonc p = new Jsonc(text);
        if (text.startsWith("\uFEFF")) {
            p.pos = 1;
            p.lineStart = 1;
        }
        p.skipBlank();
        if (p.pos >= text.length()) {
            throw p.error("empty document (expected a JSON object such as {})");
        }
        Value v = p.value(0);
        p.skipBlank();
        if (p.pos < text.length()) {
            throw p.error("unexpected " + p.describeHere() + " after the end of the document");
        }
        return v;
    }

    private int column() {
        return pos - lineStart + 1;
    }

    private SyntaxError error(String message) {
        return new SyntaxError(line, column(), message);
    }

    private String describeHere() {
        if (pos >= text.length()) {
            return "end of file";
        }
        int cp = text.codePointAt(pos);
        if (cp < 0x20 || cp == 0x7f) {
            return String.format("control character U+%04X", cp);
        }
        return "'" + new String(Character.toChars(cp)) + "'";
    }

    private void skipBlank() throws SyntaxError {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '\n') {
                pos++;
                line++;
                lineStart = pos;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                pos++;
            } else if (c == '/' && pos + 1 < text.length() && text.charAt(pos + 1) == '/') {
                while (pos < text.length() && text.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == '/' && pos + 1 < text.length() && text.charAt(pos + 1) == '*') {
                int startLine = line;
                int startCol = column();
                pos += 2;
                while (true) {
                    if (pos >= text.length()) {
                        throw new SyntaxError(startLine, startCol, "unterminated /* comment");
                    }
                    char d = text.charAt(pos);
                    if (d == '*' && pos + 1 < text.length() && text.charAt(pos + 1) == '/') {
                        pos += 2;
                        break;
                    }
                    pos++;
                    if (d == '\n') {
                        line++;
                        lineStart = pos;
                    }
                }
            } else {
                return;
            }
        }
    }

    private Value value(int depth) throws SyntaxError {
        if (depth >= MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH + " levels");
        }
        if (pos >= text.length()) {
            throw error("unexpected end of file, expected a value");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object(depth);
            case '[' -> array(depth);
            case '"' -> {
                int l = line;
                int col = column();
                yield new Str(string(), l, col);
            }
            case 't' -> literal("true", new Bool(true, line, column()));
            case 'f' -> literal("false", new Bool(false, line, column()));
            case 'n' -> literal("null", new Null(line, column()));
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield number();
                }
                throw error("unexpected " + describeHere() + ", expected a value");
            }
        };
    }

    private Value literal(String word, Value v) throws SyntaxError {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected " + describeHere() + ", expected a value");
        }
        pos += word.length();
        return v;
    }

    private Obj object(int depth) throws SyntaxError {
        int l = line;
        int col = column();
        pos++;
        Map<String, Member> members = new LinkedHashMap<>();
        while (true) {
            skipBlank();
            if (pos >= text.length()) {
                throw error("unexpected end of file inside an object (missing '}')");
            }
            if (text.charAt(pos) == '}') {
                pos++;
                return new Obj(Collections.unmodifiableMap(members), l, col);
            }
            if (text.charAt(pos) != '"') {
                throw error("unexpected " + describeHere() + ", expected a \"key\" or '}'");
            }
            int keyLine = line;
            int keyCol = column();
            String key = string();
            skipBlank();
            if (pos >= text.length() || text.charAt(pos) != ':') {
                throw error("unexpected " + describeHere() + ", expected ':' after \"" + key + "\"");
            }
            pos++;
            skipBlank();
            Value v = value(depth + 1);
            if (members.containsKey(key)) {
                throw new SyntaxError(keyLine, keyCol, "duplicate key \"" + key + "\"");
            }
            members.put(key, new Member(key, v, keyLine, keyCol));
            skipBlank();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
            } else if (pos < text.length() && text.charAt(pos) == '}') {
                // closed on the next turn
            } else if (pos >= text.length()) {
                throw error("unexpected end of file inside an object (missing '}')");
            } else {
                throw error("unexpected " + describeHere() + ", expected ',' or '}'");
            }
        }
    }

    private Arr array(int depth) throws SyntaxError {
        int l = line;
        int col = column();
        pos++;
        List<Value> items = new ArrayList<>();
        while (true) {
            skipBlank();
            if (pos >= text.length()) {
                throw error("unexpected end of file inside an array (missing ']')");
            }
            if (text.charAt(pos) == ']') {
                pos++;
                return new Arr(Collections.unmodifiableList(items), l, col);
            }
            items.add(value(depth + 1));
            skipBlank();
            if (pos < text.length() && text.charAt(pos) == ',') {
                pos++;
            } else if (pos < text.length() && text.charAt(pos) == ']') {
                // closed on the next turn
            } else if (pos >= text.length()) {
                throw error("unexpected end of file inside an array (missing ']')");
            } else {
                throw error("unexpected " + describeHere() + ", expected ',' or ']'");
            }
        }
    }

    private String string() throws SyntaxError {
        int startLine = line;
        int startCol = column();
        pos++;
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw new SyntaxError(startLine, startCol, "unterminated string");
            }
            char c = text.charAt(pos);
            if (c == '"') {
                pos++;
                if (loneSurrogate(sb)) {
                    // no file name or other text holds one: a path would fail far from here
                    throw new SyntaxError(startLine, startCol, "a string with a \\u escape of half a character (a"
                            + " surrogate without its pair)");
                }
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("control character U+" + String.format("%04X", (int) c)
                        + " in a string (write it as an escape such as \\n)");
            }
            if (c != '\\') {
                sb.append(c);
                pos++;
                continue;
            }
            if (pos + 1 >= text.length()) {
                throw new SyntaxError(startLine, startCol, "unterminated string");
            }
            char e = text.charAt(pos + 1);
            switch (e) {
                case '"' -> sb.append('"');
                case '\\' -> sb.append('\\');
                case '/' -> sb.append('/');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (pos + 6 > text.length()) {
                        throw error("incomplete \\u escape");
                    }
                    int cp = 0;
                    for (int k = pos + 2; k < pos + 6; k++) {
                        int d = Character.digit(text.charAt(k), 16);
                        if (d < 0) {
                            throw error("invalid \\u escape (expected four hex digits)");
                        }
                        cp = cp * 16 + d;
                    }
                    sb.append((char) cp);
                    pos += 4;
                }
                default -> throw error("invalid escape '\\" + (e < 0x20 || e == 0x7f
                        ? String.format("' followed by control character U+%04X", (int) e) + " in a string"
                        : e + "' in a string"));
            }
            pos += 2;
        }
    }

    /** Whether {@code b} holds a UTF-16 surrogate that is not half of a pair. */
    private static boolean loneSurrogate(CharSequence b) {
        for (int i = 0; i < b.length(); i++) {
            char c = b.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < b.length() && Character.isLowSurrogate(b.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private Num number() throws SyntaxError {
        int l = line;
        int col = column();
        int start = pos;
        if (text.charAt(pos) == '-') {
            pos++;
        }
        if (pos < text.length() && text.charAt(pos) == '0') {
            pos++;
        } else if (!digits()) {
            throw error("invalid number");
        }
        if (pos < text.length() && text.charAt(pos) == '.') {
            pos++;
            if (!digits()) {
                throw error("invalid number (expected digits after '.')");
            }
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            pos++;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            if (!digits()) {
                throw error("invalid number (expected digits in the exponent)");
            }
        }
        return new Num(text.substring(start, pos), l, col);
    }

    private boolean digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        return pos > start;
    }
}
