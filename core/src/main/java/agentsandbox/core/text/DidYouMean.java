// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.text;

import java.util.Collection;

/**
 * The known name a mistyped one most likely meant: a flag, a config key, a preset. A
 * name that starts one known name and no other ({@code --netw}) means that one; else the
 * nearest by edit distance (insertions, deletions, substitutions, and swaps of two
 * neighbouring characters, as typing goes wrong), if it is near enough to be a typo and
 * no other name is as near.
 */
public final class DidYouMean {
    private DidYouMean() {}

    /**
     * @return the known name meant, or {@code null} when none is likely
     */
    public static String closest(String typed, Collection<String> known) {
        if (typed.isEmpty()) {
            return null;
        }
        String prefixOf = null;
        int prefixes = 0;
        for (String k : known) {
            if (k.startsWith(typed) && !k.equals(typed)) {
                prefixOf = k;
                prefixes++;
            }
        }
        if (prefixes == 1 && typed.length() >= 3) {
            return prefixOf;
        }
        // a typo of a short name changes a large part of it: allow 1 edit up to 4
        // characters, 2 beyond (so '-x' suggests nothing, '--netwrok' suggests --network)
        int limit = typed.length() <= 4 ? 1 : 2;
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        boolean tie = false;
        for (String k : known) {
            int d = distance(typed, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
                tie = false;
            } else if (d == bestDistance && !k.equals(best)) {
                tie = true;
            }
        }
        return bestDistance <= limit && bestDistance > 0 && !tie ? best : null;
    }

    /** Optimal string alignment distance: Levenshtein plus swaps of neighbours. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                int v = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    v = Math.min(v, d[i - 2][j - 2] + 1);
                }
                d[i][j] = v;
            }
        }
        return d[a.length()][b.length()];
    }
}
