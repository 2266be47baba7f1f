// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.text;

import java.util.List;

/** POSIX shell quoting, so a printed command line can be pasted into a shell. */
public final class ShellQuote {
    private ShellQuote() {}

    /**
     * Quotes one word; words made only of safe characters stay bare. A word with a line
     * break is written in ANSI-C quotes ({@code $'a\nb'}, which bash, zsh, ksh and
     * POSIX.1-2024 shells read), so that the line stays one line.
     */
    public static String quote(String word) {
        if (!word.isEmpty() && isSafe(word)) {
            return word;
        }
        if (word.indexOf('\n') >= 0 || word.indexOf('\r') >= 0) {
            return "$'" + word.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
                    + "'";
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /** Quotes and joins words with single spaces. */
    public static String join(List<String> words) {
        StringBuilder sb = new StringBuilder();
        for (String w : words) {
            if (!sb.isEmpty()) {
                sb.append(' ');
            }
            sb.append(quote(w));
        }
        return sb.toString();
    }

    private static boolean isSafe(String w) {
        for (int i = 0; i < w.length(); i++) {
            char c = w.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '/' || c == '.' || c == '_' || c == '-' || c == '+' || c == ':' || c == ',' || c == '@'
                    || c == '%' || c == '^';
            if (!ok) {
                return false;
            }
        }
        // '~' and '=' are left quoted: a leading ~ would expand, and = in the first word
        // would make an assignment.
        return true;
    }
}
