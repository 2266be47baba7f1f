// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import java.util.List;

/**
 * JSON text for the outputs scripts read ({@code --json}): strings quoted as RFC 8259 says,
 * with every control character escaped, and arrays of strings. The shapes themselves are
 * documented in docs/json.md; each object carries {@code "version"}.
 */
final class Json {
    private Json() {}

    /** The version of every {@code --json} shape; raised when a field changes meaning or goes. */
    static final int VERSION = 1;

    static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029') {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    static String array(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            b.append(i == 0 ? "" : ",").append(quote(items.get(i)));
        }
        return b.append(']').toString();
    }
}
