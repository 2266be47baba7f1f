// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.text;

import agentsandbox.core.run.StartedTools;

import java.util.ArrayList;
import java.util.List;

/** A shell script's words and operators, as far as telling which commands it starts needs. */
public final class ShellWords {
    private ShellWords() {}

    /**
     * A shell script's words and operators as {@link StartedTools#scriptWords} reads them: split at
     * ASCII whitespace (dropped), after {@code ; & | ( ` {} and before {@code ; & | ) ` }}
     * (so {@code ;}, {@code &}, {@code |} and {@code `} stand alone), a line break read as
     * {@code ;}; empty pieces left out.
     */
    public static List<String> scriptTokens(String script) {
        List<String> out = new ArrayList<>();
        int start = 0;
        int n = script.length();
        for (int i = 0; i < n; i++) {
            char c = script.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r') {
                addToken(out, script, start, i);
                if (c == '\n') {
                    out.add(";");
                }
                start = i + 1;
            } else if (c == ';' || c == '&' || c == '|' || c == '`') {
                addToken(out, script, start, i);
                out.add(String.valueOf(c));
                start = i + 1;
            } else if (c == ')' || c == '}') {
                addToken(out, script, start, i);
                start = i;
            } else if (c == '(' || c == '{') {
                addToken(out, script, start, i + 1);
                start = i + 1;
            }
        }
        addToken(out, script, start, n);
        return out;
    }

    private static void addToken(List<String> out, String script, int from, int to) {
        if (from < to) {
            out.add(script.substring(from, to));
        }
    }

    /** {@code t} without the quotes it starts and ends with. */
    public static String unquoted(String t) {
        int from = 0;
        int to = t.length();
        while (from < to && (t.charAt(from) == '"' || t.charAt(from) == '\'')) {
            from++;
        }
        while (to > from && (t.charAt(to - 1) == '"' || t.charAt(to - 1) == '\'')) {
            to--;
        }
        return t.substring(from, to);
    }
}
