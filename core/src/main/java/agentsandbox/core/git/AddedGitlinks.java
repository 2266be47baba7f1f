// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Set;

/**
 * The host's answer to "does a new commit add a gitlink?" for the usual case, without
 * starting its git: a line of new commits, each with one parent, down to a commit a ref of
 * the host's points at. The commits walked then include every commit git's own walk
 * ({@code git log tip --not --glob=refs/*}) takes, and each is compared with its parent as
 * git compares them ({@code --diff-filter=AT}, recursively): where no tree of these has a
 * gitlink its parent lacks at the same path, git finds none either; nor does any of them
 * bring a directory shaped as a git dir ({@link #gitDirShaped}). Anything else (a merge,
 * a root commit, a longer line, an object this reader cannot read, a tree git would read
 * otherwise, or a gitlink found) is left to the host's git, whose answer is then exact.
 */
final class AddedGitlinks {
    /** At most this many commits are walked. */
    static final int MAX_COMMITS = 64;
    /** At most this many trees are read. */
    static final int MAX_TREES = 4_000;

    private final HostObjects objects;
    private final int idLength;
    private int treesRead;
    /**
     * Where a new tree is a git dir's shape (a {@code HEAD}, with {@code objects/} and
     * {@code refs/} or a {@code commondir}): git's discovery takes such a directory, once
     * checked out, for a repository of its own, whose config runs what it says; "" for the
     * top. Null when none was found.
     */
    String gitDirShaped;

    AddedGitlinks(HostObjects objects, boolean sha256) {
        this(objects, sha256, null);
    }

    /**
     * With {@code workTree} (null: none known), a new tree at a path where the work tree holds
     * a git dir (a directory with a {@code HEAD}: a bare repository a sandbox left there
     * untracked) counts as a git dir's shape too: checked out, its files (a config, a hook)
     * would be written into that git dir.
     */
    AddedGitlinks(HostObjects objects, boolean sha256, java.nio.file.Path workTree) {
        this.objects = objects;
        this.idLength = sha256 ? 32 : 20;
        this.workTree = workTree;
    }

    private final java.nio.file.Path workTree;

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
            if (parent == null || !noneAdded(commit[0], parent[0], "")) {
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

    /**
     * Whether tree {@code now} has no gitlink that tree {@code was} (null: none) lacks at the
     * same path. The trees are read in place: only their subtrees and gitlinks are looked up
     * in the other tree, and an entry whose object is the same there is passed over.
     */
    private boolean noneAdded(String now, String was, String path) {
        if (now.equals(was)) {
            return true;
        }
        Tree after = tree(now);
        Tree before = was == null ? Tree.EMPTY : tree(was);
        if (after == null || before == null) {
            return false;
        }
        if (after.gitDirShaped() || workTree != null && java.nio.file.Files.exists(
                (path.isEmpty() ? workTree : workTree.resolve(path)).resolve("HEAD"),
                java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            gitDirShaped = path;
            return false;
        }
        for (int k = 0; k < after.count; k++) {
            int kind = after.kind[k];
            if (kind == GITLINK) {
                int old = before.find(after.bytes, after.name[k], after.nameEnd[k], false);
                if (old < 0 || before.kind[old] != GITLINK) {
                    return false;
                }
            } else if (kind == TREE) {
                int old = before.find(after.bytes, after.name[k], after.nameEnd[k], true);
                if (old >= 0 && java.util.Arrays.equals(after.bytes, after.id(k), after.id(k) + idLength,
                        before.bytes, before.id(old), before.id(old) + idLength)) {
                    continue; // the same subtree: nothing in it is new
                }
                String sub = HexFormat.of().formatHex(after.bytes, after.id(k), after.id(k) + idLength);
                String oldSub = old < 0 ? null : HexFormat.of().formatHex(before.bytes, before.id(old),
                        before.id(old) + idLength);
                String name = new String(after.bytes, after.name[k], after.nameEnd[k] - after.name[k],
                        StandardCharsets.UTF_8);
                if (!noneAdded(sub, oldSub, path.isEmpty() ? name : path + "/" + name)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** An entry's kind in a {@link Tree}: a subtree, a gitlink, or anything else git allows there. */
    private static final int TREE = 1;
    private static final int GITLINK = 2;
    private static final int OTHER = 3;

    /**
     * A tree's entries where they are in its content: each entry's kind and where its name
     * starts and ends (its object's name follows the NUL after it). Entries are in git's order,
     * which {@link #find} searches.
     */
    private static final class Tree {
        static final Tree EMPTY = new Tree(new byte[0], 0);

        final byte[] bytes;
        int count;
        int[] kind;
        int[] name;
        int[] nameEnd;

        Tree(byte[] bytes, int capacity) {
            this.bytes = bytes;
            this.kind = new int[capacity];
            this.name = new int[capacity];
            this.nameEnd = new int[capacity];
        }

        void add(int entryKind, int from, int to) {
            if (count == kind.length) {
                int n = Math.max(8, count * 2);
                kind = java.util.Arrays.copyOf(kind, n);
                name = java.util.Arrays.copyOf(name, n);
                nameEnd = java.util.Arrays.copyOf(nameEnd, n);
            }
            kind[count] = entryKind;
            name[count] = from;
            nameEnd[count] = to;
            count++;
        }

        /** Whether git would take this tree, checked out, for a git dir: see {@link AddedGitlinks#gitDirShaped}. */
        boolean gitDirShaped() {
            // git takes objects and refs of any kind that leads to a directory (a link too)
            boolean head = has("HEAD", false);
            return head && ((has("objects", true) || has("objects", false)) && (has("refs", true) || has("refs", false))
                    || has("commondir", false));
        }

        private boolean has(String entry, boolean tree) {
            byte[] b = entry.getBytes(StandardCharsets.US_ASCII);
            return find(b, 0, b.length, tree) >= 0;
        }

        /** Where entry {@code k}'s object name starts. */
        int id(int k) {
            return nameEnd[k] + 1;
        }

        /**
         * The entry named as {@code b} from {@code from} to {@code to}, a subtree ({@code tree})
         * or not, found in git's order; -1 when there is none.
         */
        int find(byte[] b, int from, int to, boolean tree) {
            int low = 0;
            int high = count - 1;
            while (low <= high) {
                int mid = (low + high) >>> 1;
                int c = compare(bytes, name[mid], nameEnd[mid], kind[mid] == TREE, b, from, to, tree);
                if (c < 0) {
                    low = mid + 1;
                } else if (c > 0) {
                    high = mid - 1;
                } else {
                    return mid;
                }
            }
            return -1;
        }
    }

    /**
     * Tree {@code id}'s entries; null when it is not readable here, or not a tree as git
     * writes one (a mode of another spelling, a name twice or out of git's order), which git
     * might read otherwise.
     */
    private Tree tree(String id) {
        if (++treesRead > MAX_TREES) {
            return null;
        }
        HostObjects.Loaded o = objects.read(id);
        if (o == null || !o.type().equals("tree")) {
            return null;
        }
        byte[] b = o.content();
        Tree t = new Tree(b, 16);
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
            int kind = kind(b, i, space);
            if (kind == 0 || HostObjects.indexOf(b, (byte) '/', space + 1, nul) >= 0) {
                return null;
            }
            int last = t.count - 1;
            if (last >= 0 && compare(b, t.name[last], t.nameEnd[last], t.kind[last] == TREE, b, space + 1, nul,
                    kind == TREE) >= 0) {
                return null;
            }
            t.add(kind, space + 1, nul);
            i = nul + 1 + idLength;
        }
        // a name twice, once as a subtree and once not, is in order both times: looked for apart
        for (int k = 0; k < t.count; k++) {
            if (t.kind[k] == TREE && t.find(b, t.name[k], t.nameEnd[k], false) >= 0) {
                return null;
            }
        }
        return t;
    }

    /** The kind of the mode from {@code from} to {@code to} of {@code b}; 0 for none git writes. */
    private static int kind(byte[] b, int from, int to) {
        int length = to - from;
        if (length == 5) {
            return b[from] == '4' && b[from + 1] == '0' && b[from + 2] == '0' && b[from + 3] == '0'
                    && b[from + 4] == '0' ? TREE : 0;
        }
        if (length != 6) {
            return 0;
        }
        for (String mode : FILE_MODES) {
            if (same(b, from, mode)) {
                return mode.equals("160000") ? GITLINK : OTHER;
            }
        }
        return 0;
    }

    private static final String[] FILE_MODES = {"100644", "100755", "120000", "160000"};

    private static boolean same(byte[] b, int from, String ascii) {
        for (int i = 0; i < ascii.length(); i++) {
            if (b[from + i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Git's order of tree entries: by name, a tree's name as if it ended in '/'. */
    private static int compare(byte[] a, int aFrom, int aTo, boolean aTree, byte[] b, int bFrom, int bTo,
            boolean bTree) {
        int aLength = aTo - aFrom;
        int bLength = bTo - bFrom;
        int n = Math.min(aLength, bLength);
        for (int i = 0; i < n; i++) {
            int x = a[aFrom + i] & 0xff;
            int y = b[bFrom + i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        int x = aLength > n ? a[aFrom + n] & 0xff : aTree ? '/' : 0;
        int y = bLength > n ? b[bFrom + n] & 0xff : bTree ? '/' : 0;
        return x - y;
    }
}
