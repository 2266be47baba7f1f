// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;

/**
 * The host's answer to "does a new commit add a gitlink?" for the usual case, without
 * starting its git: a line of new commits, each with one parent, down to a commit a ref of
 * the host's points at. The commits walked then include every commit git's own walk
 * ({@code git log tip --not --glob=refs/*}) takes, and each is compared with its parent as
 * git compares them ({@code --diff-filter=AT}, recursively): where no tree of these has a
 * gitlink its parent lacks at the same path, git finds none either. Anything else (a merge,
 * a root commit, a longer line, an object this reader cannot read, a tree git would read
 * otherwise, or a gitlink found) is left to the host's git, whose answer is then exact.
 */
final class AddedGitlinks {
    /** At most this many commits are walked. */
    static final int MAX_COMMITS = 64;
    /** At most this many trees are read. */
    static final int MAX_TREES = 4_000;

    private static final String TREE = "40000";
    private static final String GITLINK = "160000";
    private static final Set<String> MODES = Set.of(TREE, "100644", "100755", "120000", GITLINK);

    private final HostObjects objects;
    private final int idLength;
    private int treesRead;

    AddedGitlinks(HostObjects objects, boolean sha256) {
        this.objects = objects;
        this.idLength = sha256 ? 32 : 20;
    }

    /**
     * True when no commit from {@code tip} down to one of {@code stops} (the values of refs
     * the host has now) adds a gitlink; false when this walk cannot tell, or found one.
     */
    boolean noneAdded(String tip, Set<String> stops) {
        String id = tip;
        for (int i = 0; i < MAX_COMMITS; i++) {
            if (stops.contains(id)) {
                return true;
            }
            String[] commit = commit(id);
            if (commit == null || commit.length != 2) {
                return false; // not readable, a root commit or a merge: git walks it
            }
            String[] parent = commit(commit[1]);
            if (parent == null || !noneAdded(commit[0], parent[0])) {
                return false;
            }
            id = commit[1];
        }
        return false;
    }

    /** A commit's tree, then its parents; null when it is not readable here as one. */
    private String[] commit(String id) {
        HostObjects.Loaded o = objects.read(id);
        if (o == null || !o.type().equals("commit")) {
            return null;
        }
        String text = new String(o.content(), 0, Math.min(o.content().length, 64 * 1024), StandardCharsets.ISO_8859_1);
        java.util.List<String> out = new java.util.ArrayList<>();
        int start = 0;
        while (true) {
            int end = text.indexOf('\n', start);
            if (end < 0) {
                return null;
            }
            String line = text.substring(start, end);
            String want = out.isEmpty() ? "tree " : "parent ";
            if (!line.startsWith(want)) {
                break;
            }
            String value = line.substring(want.length());
            if (!ObjectIds.isObjectId(value) || value.length() != idLength * 2) {
                return null;
            }
            out.add(value);
            start = end + 1;
        }
        return out.isEmpty() ? null : out.toArray(new String[0]);
    }

    /** Whether tree {@code now} has no gitlink that tree {@code was} (null: none) lacks at the same path. */
    private boolean noneAdded(String now, String was) {
        if (now.equals(was)) {
            return true;
        }
        Map<String, String[]> after = entries(now);
        Map<String, String[]> before = was == null ? Map.of() : entries(was);
        if (after == null || before == null) {
            return false;
        }
        for (Map.Entry<String, String[]> e : after.entrySet()) {
            String mode = e.getValue()[0];
            String[] old = before.get(e.getKey());
            if (mode.equals(GITLINK)) {
                if (old == null || !old[0].equals(GITLINK)) {
                    return false;
                }
            } else if (mode.equals(TREE)
                    && !noneAdded(e.getValue()[1], old != null && old[0].equals(TREE) ? old[1] : null)) {
                return false;
            }
        }
        return true;
    }

    /**
     * A tree's entries by name, each its mode and object id; null when it is not readable
     * here, or not a tree as git writes one (a mode of another spelling, a name twice or out
     * of git's order), which git might read otherwise.
     */
    private Map<String, String[]> entries(String id) {
        if (++treesRead > MAX_TREES) {
            return null;
        }
        HostObjects.Loaded o = objects.read(id);
        if (o == null || !o.type().equals("tree")) {
            return null;
        }
        byte[] b = o.content();
        Map<String, String[]> out = new HashMap<>();
        byte[] last = null;
        boolean lastTree = false;
        int i = 0;
        while (i < b.length) {
            int space = HostObjects.indexOf(b, (byte) ' ', i, b.length);
            if (space < 0) {
                return null;
            }
            int nul = HostObjects.indexOf(b, (byte) 0, space + 1, b.length);
            if (nul < 0 || nul == space + 1 || nul + 1 + idLength > b.length) {
                return null;
            }
            String mode = new String(b, i, space - i, StandardCharsets.US_ASCII);
            byte[] name = java.util.Arrays.copyOfRange(b, space + 1, nul);
            if (!MODES.contains(mode) || HostObjects.indexOf(name, (byte) '/', 0, name.length) >= 0) {
                return null;
            }
            boolean tree = mode.equals(TREE);
            if (last != null && compare(last, lastTree, name, tree) >= 0) {
                return null;
            }
            String key = new String(name, StandardCharsets.ISO_8859_1);
            String value = HexFormat.of().formatHex(b, nul + 1, nul + 1 + idLength);
            if (out.put(key, new String[] {mode, value}) != null) {
                return null;
            }
            last = name;
            lastTree = tree;
            i = nul + 1 + idLength;
        }
        return out;
    }

    /** Git's order of tree entries: by name, a tree's name as if it ended in '/'. */
    private static int compare(byte[] a, boolean aTree, byte[] b, boolean bTree) {
        int n = Math.min(a.length, b.length);
        for (int i = 0; i < n; i++) {
            int x = a[i] & 0xff;
            int y = b[i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        int x = a.length > n ? a[n] & 0xff : aTree ? '/' : 0;
        int y = b.length > n ? b[n] & 0xff : bTree ? '/' : 0;
        return x - y;
    }
}
