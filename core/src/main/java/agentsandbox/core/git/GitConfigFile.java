// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A git config file read exactly as git reads it, byte by byte (git's {@code config.c},
 * {@code git_parse_source} and the functions it calls):
 *
 * <ul>
 * <li>a UTF-8 byte order mark at the very start is skipped;</li>
 * <li>CR LF counts as LF; white space is space, tab, LF and a lone CR (git's own
 *     {@code isspace}: not vertical tab or form feed);</li>
 * <li>outside values, white space is skipped and {@code #} or {@code ;} starts a comment
 *     to the end of the line;</li>
 * <li>{@code [name]} opens a section: letters, digits, {@code -} and {@code .}, lowered
 *     ({@code [section.Sub]}, the deprecated form, is {@code section.sub});
 *     {@code [name "sub"]} keeps the subsection's case, where {@code \} takes the next
 *     character as it is; the closing {@code "} must be followed by {@code ]} at once;</li>
 * <li>a key starts with a letter, goes on with letters, digits and {@code -}, lowered, and
 *     may follow a section header on the same line; a key without {@code =} has no value
 *     (boolean true);</li>
 * <li>a value: leading and trailing white space dropped, inner white space kept, {@code "}
 *     toggles quoting (inside, white space and {@code #}/{@code ;} are kept), {@code #} or
 *     {@code ;} outside quotes ends it, {@code \} escapes {@code \ " n t b} and joins the
 *     next line when it ends one; any other escape, or a line that ends inside quotes, is
 *     an error.</li>
 * </ul>
 *
 * <p>At the first error git stops: the entries before it reach the caller (and
 * {@code git config --list} prints them), the rest of the file is never read. So here:
 * {@link #entries()} are those before the error, and {@link #complete()} is false.
 *
 * @param entries the settings in file order, each named as git names it
 * @param complete false when git stops at an error in the file
 */
public record GitConfigFile(List<GitConfigScan.Setting> entries, boolean complete) {

    /** git's UTF-8 byte order mark, skipped at the start of a file. */
    private static final byte[] BOM = {(byte) 0xef, (byte) 0xbb, (byte) 0xbf};

    /** Parses {@code data} as git parses a config file. */
    public static GitConfigFile parse(byte[] data) {
        return new Reader(data == null ? new byte[0] : data).file();
    }

    /** One pass over the bytes, with git's look-ahead of one character. */
    private static final class Reader {
        private final byte[] d;
        private int pos;
        private boolean eof;
        private final List<GitConfigScan.Setting> out = new ArrayList<>();
        /** The value being read, as bytes. */
        private byte[] value = new byte[64];
        private int length;

        Reader(byte[] d) {
            this.d = d;
            if (d.length >= 3 && Arrays.equals(d, 0, 3, BOM, 0, 3)) {
                pos = 3; // a byte that starts a partial mark is not a letter: the file is refused below
            }
        }

        /** git's get_next_char: CR LF is LF, and the end of the file reads as LF for ever. */
        private int next() {
            if (pos >= d.length) {
                eof = true;
                return '\n';
            }
            int c = d[pos++] & 0xff;
            if (c == '\r' && pos < d.length && d[pos] == '\n') {
                pos++;
                c = '\n';
            }
            return c;
        }

        GitConfigFile file() {
            String stem = "";
            boolean comment = false;
            for (;;) {
                int c = next();
                if (c == '\n') {
                    if (eof) {
                        return done(true);
                    }
                    comment = false;
                } else if (comment || isSpace(c)) {
                    continue;
                } else if (c == '#' || c == ';') {
                    comment = true;
                } else if (c == '[') {
                    stem = section();
                    if (stem == null || stem.isEmpty()) {
                        return done(false);
                    }
                } else if (!isAlpha(c) || !entry(stem, c)) {
                    return done(false);
                }
            }
        }

        private GitConfigFile done(boolean complete) {
            return new GitConfigFile(List.copyOf(out), complete);
        }

        /** git's get_base_var: the section name, with {@code .sub} if it has one; null for an error. */
        private String section() {
            StringBuilder name = new StringBuilder();
            for (;;) {
                int c = next();
                if (eof) {
                    return null;
                }
                if (c == ']') {
                    return name.toString();
                }
                if (isSpace(c)) {
                    return subsection(name, c);
                }
                if (!isKeyChar(c) && c != '.') {
                    return null;
                }
                name.append(lower(c));
            }
        }

        /** git's get_extended_base_var: {@code "sub"]} after white space. */
        private String subsection(StringBuilder name, int c) {
            do {
                if (c == '\n') {
                    return null;
                }
                c = next();
            } while (isSpace(c));
            if (c != '"') {
                return null;
            }
            length = 0;
            for (;;) {
                c = next();
                if (c == '\n') {
                    return null;
                }
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    c = next();
                    if (c == '\n') {
                        return null;
                    }
                }
                add(c);
            }
            if (next() != ']') {
                return null;
            }
            return name.append('.').append(new String(value, 0, length, StandardCharsets.UTF_8)).toString();
        }

        /** git's get_value: a key that starts with {@code first}, then nothing or {@code = value}. */
        private boolean entry(String stem, int first) {
            StringBuilder key = new StringBuilder().append(lower(first));
            int c;
            for (;;) {
                c = next();
                if (eof || !isKeyChar(c)) {
                    break;
                }
                key.append(lower(c));
            }
            while (c == ' ' || c == '\t') {
                c = next();
            }
            String v = null;
            if (c != '\n') {
                if (c != '=') {
                    return false;
                }
                v = value();
                if (v == null) {
                    return false;
                }
            }
            out.add(GitConfigScan.Setting.of(stem.isEmpty() ? key.toString() : stem + "." + key, v));
            return true;
        }

        /** git's parse_value; null for an error. */
        private String value() {
            boolean quote = false;
            boolean comment = false;
            int trim = 0;
            length = 0;
            for (;;) {
                int c = next();
                if (c == '\n') {
                    if (quote) {
                        return null;
                    }
                    if (trim != 0) {
                        length = trim;
                    }
                    return new String(value, 0, length, StandardCharsets.UTF_8);
                }
                if (comment) {
                    continue;
                }
                if (isSpace(c) && !quote) {
                    if (trim == 0) {
                        trim = length;
                    }
                    if (length != 0) {
                        add(c);
                    }
                    continue;
                }
                if (!quote && (c == ';' || c == '#')) {
                    comment = true;
                    continue;
                }
                trim = 0;
                if (c == '\\') {
                    c = next();
                    switch (c) {
                        case '\n' -> {
                            continue; // the line goes on on the next one
                        }
                        case 't' -> c = '\t';
                        case 'b' -> c = '\b';
                        case 'n' -> c = '\n';
                        case '\\', '"' -> {
                            // themselves
                        }
                        default -> {
                            return null;
                        }
                    }
                    add(c);
                } else if (c == '"') {
                    quote = !quote;
                } else {
                    add(c);
                }
            }
        }

        private void add(int c) {
            if (length == value.length) {
                value = Arrays.copyOf(value, length * 2);
            }
            value[length++] = (byte) c;
        }
    }

    /** git's own isspace ({@code ctype.c}): space, tab, LF and CR; not VT or FF, unlike C's. */
    private static boolean isSpace(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    private static boolean isAlpha(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z';
    }

    /** git's iskeychar: ASCII letters, digits and {@code -}. */
    private static boolean isKeyChar(int c) {
        return isAlpha(c) || c >= '0' && c <= '9' || c == '-';
    }

    private static char lower(int c) {
        return (char) (c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
    }
}
