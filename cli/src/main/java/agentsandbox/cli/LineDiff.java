// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The lines that changed between two texts, for {@code agent-sandbox trust}: what a project
 * config gained and lost since it was trusted last. A plain longest-common-subsequence diff:
 * configs are small, and a pair of texts too long for it is reported as changed, whole.
 */
final class LineDiff {
    private LineDiff() {}

    /** Beyond this many lines on either side, no diff is made (the table would be too large). */
    static final int MAX_LINES = 2000;

    /**
     * The changed lines, each {@code "- old"} or {@code "+ new"}, in the order of the texts,
     * with a {@code "@@ line N"} marker before each run of changes; null when either text is
     * longer than {@link #MAX_LINES} lines.
     */
    static List<String> of(String before, String after) {
        String[] a = lines(before);
        String[] b = lines(after);
        if (a.length > MAX_LINES || b.length > MAX_LINES) {
            return null;
        }
        int[][] common = new int[a.length + 1][b.length + 1];
        for (int i = a.length - 1; i >= 0; i--) {
            for (int j = b.length - 1; j >= 0; j--) {
                common[i][j] = a[i].equals(b[j]) ? common[i + 1][j + 1] + 1
                        : Math.max(common[i + 1][j], common[i][j + 1]);
            }
        }
        List<String> out = new ArrayList<>();
        int i = 0;
        int j = 0;
        boolean inRun = false;
        while (i < a.length || j < b.length) {
            if (i < a.length && j < b.length && a[i].equals(b[j])) {
                i++;
                j++;
                inRun = false;
                continue;
            }
            if (!inRun) {
                out.add("@@ line " + (j + 1));
                inRun = true;
            }
            if (i < a.length && (j == b.length || common[i + 1][j] >= common[i][j + 1])) {
                out.add("- " + a[i++]);
            } else {
                out.add("+ " + b[j++]);
            }
        }
        return out;
    }

    private static String[] lines(String text) {
        if (text.isEmpty()) {
            return new String[0];
        }
        String t = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
        return t.split("\n", -1);
    }
}
