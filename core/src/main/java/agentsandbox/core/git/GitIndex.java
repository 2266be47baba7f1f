// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The gitlinks (submodule entries, mode 160000) of a git index file: the paths where
 * git looks into another repository when it runs in this one ({@code git status}
 * recurses into each). Versions 2, 3 and 4 of the index format; anything else, or a
 * damaged file, gives what was read up to the damage.
 */
public final class GitIndex {
    private GitIndex() {}

    /** Entry mode of a gitlink. */
    private static final int GITLINK = 0160000;
    private static final int MODE_TYPE = 0170000;

    /**
     * @param data  the index file's content
     * @param limit at most this many gitlinks are returned
     */
    public static List<String> gitlinks(byte[] data, int limit) {
        return gitlinks(data, limit, 20);
    }

    /** {@link #gitlinks(byte[], int)} of a repository whose object names are {@code hash} bytes. */
    public static List<String> gitlinks(byte[] data, int limit, int hash) {
        int header = 40 + hash + 2; // stat data and mode, the object's name, the flags
        List<String> out = new ArrayList<>();
        if (data == null || data.length < 12 || data[0] != 'D' || data[1] != 'I' || data[2] != 'R' || data[3] != 'C') {
            return out;
        }
        int version = int32(data, 4);
        long count = int32(data, 8) & 0xffffffffL;
        if (version < 2 || version > 4) {
            return out;
        }
        if (version != 4) {
            return gitlinks23(data, count, limit, header, out);
        }
        int pos = 12;
        byte[] previous = new byte[0];
        for (long n = 0; n < count && out.size() < limit; n++) {
            int start = pos;
            if (pos + header > data.length) {
                return out;
            }
            int mode = int32(data, pos + 24);
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            pos += header;
            if ((flags & 0x4000) != 0) {
                pos += 2; // extended flags (version 3 and later)
            }
            byte[] name;
            if (version == 4) {
                int[] varint = varint(data, pos);
                if (varint == null) {
                    return out;
                }
                int strip = varint[0];
                pos = varint[1];
                if (strip > previous.length) {
                    return out;
                }
                int keep = previous.length - strip;
                int end = v4NameEnd(data, pos, keep, flags);
                if (end < 0) {
                    return out;
                }
                name = new byte[keep + (end - pos)];
                System.arraycopy(previous, 0, name, 0, keep);
                System.arraycopy(data, pos, name, keep, end - pos);
                pos = end + 1;
            } else {
                // the name's length is in the flags unless it is 0xfff or more: no byte-by-byte search
                int length12 = flags & 0xfff;
                int end = length12 < 0xfff ? pos + length12 : nul(data, pos);
                if (end < 0 || end >= data.length) {
                    return out;
                }
                if ((mode & MODE_TYPE) != GITLINK) {
                    pos = start + ((end - start + 1 + 7) & ~7);
                    continue;
                }
                name = java.util.Arrays.copyOfRange(data, pos, end);
                // entries are padded with NULs to a multiple of eight bytes
                int length = end - start + 1;
                pos = start + ((length + 7) & ~7);
            }
            previous = name;
            if ((mode & MODE_TYPE) == GITLINK) {
                out.add(new String(name, StandardCharsets.UTF_8));
            }
        }
        return out;
    }

    /**
     * Versions 2 and 3: every entry is looked at, in the interpreter, for its type alone
     * (a large repository's index holds hundreds of thousands), so the loop does no more
     * than step from entry to entry. An entry: 62 bytes of stat data, hash and flags (74
     * with SHA-256; two more with extended flags), the name, NULs up to a multiple of eight;
     * the type is the top four bits of the mode's third byte.
     */
    private static List<String> gitlinks23(byte[] data, long count, int limit, int header, List<String> out) {
        if (limit <= 0) {
            return out;
        }
        int length = data.length;
        int pos = 12;
        for (long n = 0; n < count; n++) {
            if (pos + header > length) {
                return out;
            }
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            int name = (flags & 0x4000) != 0 ? pos + header + 2 : pos + header;
            int length12 = flags & 0xfff;
            // the name's length is in the flags unless it is 0xfff or more: no byte-by-byte search
            int end = length12 < 0xfff ? name + length12 : nul(data, name);
            if (end < 0 || end >= length) {
                return out;
            }
            if ((data[pos + 26] & 0xf0) == 0xe0) { // mode 160000
                out.add(new String(data, name, end - name, StandardCharsets.UTF_8));
                if (out.size() >= limit) {
                    return out;
                }
            }
            pos += (end - pos + 1 + 7) & ~7;
        }
        return out;
    }

    /**
     * The paths of the entries marked assume-unchanged or skip-worktree (as {@link #check}
     * finds them), stepping from entry to entry without looking at the names of the others:
     * the host's own index, which is not judged.
     */
    public static java.util.Set<String> hidden(byte[] data, int hash) {
        java.util.Set<String> out = new java.util.LinkedHashSet<>();
        if (data == null || data.length < 12 || data[0] != 'D' || data[1] != 'I' || data[2] != 'R' || data[3] != 'C') {
            return out;
        }
        int version = int32(data, 4);
        if (version == 4) {
            return check(data, List.of(), hash).hidden();
        }
        if (version < 2 || version > 3) {
            return out;
        }
        long count = int32(data, 8) & 0xffffffffL;
        int header = 40 + hash + 2;
        int pos = 12;
        for (long n = 0; n < count; n++) {
            if (pos + header > data.length) {
                return out;
            }
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            boolean extended = (flags & 0x4000) != 0;
            int name = extended ? pos + header + 2 : pos + header;
            int length12 = flags & 0xfff;
            int end = length12 < 0xfff ? name + length12 : nul(data, name);
            if (end < 0 || end >= data.length) {
                return out;
            }
            if ((flags & 0x8000) != 0 || (extended && (data[pos + header] & 0x40) != 0)) {
                out.add(new String(data, name, end - name, StandardCharsets.UTF_8));
            }
            pos += (end - pos + 1 + 7) & ~7;
        }
        return out;
    }

    /** The extensions an index the host takes may have (see {@link #refusal}). */
    private static final java.util.Set<String> TAKEN = java.util.Set.of("TREE", "REUC", "UNTR", "FSMN");

    /**
     * Why the host does not take this index though its checksum matches, or null. Its
     * entries must read to their end and its extensions fit one after the other up to the
     * checksum ({@code hash} bytes), and each extension be one of {@link #TAKEN}: those
     * that only cache what the entries say (TREE, UNTR, FSMN) or keep what a merge resolved
     * (REUC). Any other is refused, known or not: IEOT (with EOIE), whose offsets let git's
     * threads read entries from anywhere, such as inside a name; {@code link}, which takes
     * entries from a shared index file and replaces them; {@code sdir}, whose directory
     * entries git expands; and whatever a later git adds. git writes those only where
     * index.threads, core.splitIndex or a sparse index ask for it.
     */
    public static String refusal(byte[] data, int hash) {
        int pos = entriesEnd(data, hash);
        if (pos < 0) {
            return "not readable to its end";
        }
        int stop = data.length - hash;
        while (pos < stop) {
            if (pos + 8 > stop) {
                return "not readable to its end";
            }
            String signature = new String(data, pos, 4, StandardCharsets.ISO_8859_1);
            long size = int32(data, pos + 4) & 0xffffffffL;
            if (pos + 8 + size > stop) {
                return "not readable to its end";
            }
            if (!TAKEN.contains(signature)) {
                return "written with an extension the host does not take (" + printable(signature)
                        + "; git writes such only for index.threads, core.splitIndex or a sparse index)";
            }
            pos += 8 + (int) size;
        }
        return pos == stop ? null : "not readable to its end";
    }

    /**
     * What {@link #check} found in an index's entries.
     *
     * @param refusedPath the first path git itself would never put in an index, or null
     * @param hidden      the paths of the entries marked assume-unchanged or skip-worktree
     *                    (git status and git diff then never look at the file)
     * @param overRepository  the first entry that is no gitlink and lies at or below one of
     *                        the repositories {@link #check(byte[], List)} was given (the user's
     *                        next {@code git checkout -- .} would replace the repository), or null
     * @param gitlinks    the paths of the gitlinks read, as {@link #gitlinks} reads them (all of
     *                    them, unless a refused path stopped the reading)
     * @param heads       the paths of the entries named {@code HEAD} (in any directory): a file
     *                    by which git's discovery takes its directory, once checked out, for a
     *                    git dir
     * @param controls    the paths of the entries that would be a git dir's own file if their
     *                    directory were one: named {@code config}, {@code config.worktree} or
     *                    {@code commondir}, or in a directory named {@code hooks}
     */
    public record Entries(String refusedPath, java.util.Set<String> hidden, String overRepository,
            List<String> gitlinks, List<String> heads, List<String> controls) {
        /** What was found, with no gitlink among the entries. */
        public Entries(String refusedPath, java.util.Set<String> hidden, String overRepository) {
            this(refusedPath, hidden, overRepository, List.of(), List.of(), List.of());
        }
    }

    /** Whether the name from {@code from} up to {@code to} of {@code data} is a git dir's own file there ({@link Entries#controls}). */
    private static boolean namedControl(byte[] data, int from, int to) {
        int slash = to - 1;
        while (slash >= from && data[slash] != '/') {
            slash--;
        }
        int start = slash + 1;
        if (endsWith(data, start, to, "config") && to - start == 6 || endsWith(data, start, to, "commondir")
                && to - start == 9 || endsWith(data, start, to, "config.worktree") && to - start == 15) {
            return true;
        }
        if (slash < from) {
            return false; // at the top: in no directory
        }
        // in a directory named hooks
        int parent = slash - 1;
        while (parent >= from && data[parent] != '/') {
            parent--;
        }
        parent++;
        return slash - parent == 5 && endsWith(data, parent, slash, "hooks");
    }

    private static boolean endsWith(byte[] data, int from, int to, String ascii) {
        int n = ascii.length();
        if (to - from < n) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (data[to - n + i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Whether the name from {@code from} up to {@code to} of {@code data} is {@code HEAD} or ends in {@code /HEAD}. */
    private static boolean namedHead(byte[] data, int from, int to) {
        int n = to - from;
        return n >= 4 && data[to - 4] == 'H' && data[to - 3] == 'E' && data[to - 2] == 'A' && data[to - 1] == 'D'
                && (n == 4 || data[to - 5] == '/');
    }

    /**
     * The entries of {@code data}, looked at for what the host cannot take from a sandbox:
     * a path git itself would never put in an index (its {@code verify_path}, with the NTFS
     * and HFS+ protections git applies by default: empty, absolute, with an empty, {@code .}
     * or {@code ..} component, a backslash, a component git reads as {@code .git} such as
     * {@code .GIT}, {@code .git.}, {@code git~1}, {@code .g\u200cit},
     * {@code .git::$INDEX_ALLOCATION}, or a name whose length in its entry is not what a C
     * string reads there: a NUL inside, or none right after), which the user's next {@code git checkout -- .} would write into the git dir (a hook) or outside
     * the work tree; and the entries marked so that {@code git status} ignores their file.
     * Only the first refused path is named; an index that does not read gives nothing.
     */
    public static Entries check(byte[] data) {
        return check(data, List.of(), 20);
    }

    /** {@link #check(byte[])}, with the paths of nested repositories that no entry may replace. */
    public static Entries check(byte[] data, List<String> repositories) {
        return check(data, repositories, 20);
    }

    /** {@link #check(byte[], List)} of a repository whose object names are {@code hash} bytes. */
    public static Entries check(byte[] data, List<String> repositories, int hash) {
        int header = 40 + hash + 2;
        java.util.Set<String> hidden = new java.util.LinkedHashSet<>();
        String over = null;
        byte[][] repos = new byte[repositories.size()][];
        for (int i = 0; i < repos.length; i++) {
            repos[i] = repositories.get(i).getBytes(StandardCharsets.UTF_8);
        }
        if (data == null || data.length < 12 || data[0] != 'D' || data[1] != 'I' || data[2] != 'R' || data[3] != 'C') {
            return new Entries(null, hidden, null);
        }
        int version = int32(data, 4);
        long count = int32(data, 8) & 0xffffffffL;
        if (version < 2 || version > 4) {
            return new Entries(null, hidden, null);
        }
        List<String> links = new ArrayList<>();
        List<String> heads = new ArrayList<>();
        List<String> controls = new ArrayList<>();
        int pos = 12;
        byte[] previous = new byte[0];
        for (long n = 0; n < count; n++) {
            int start = pos;
            if (pos + header > data.length) {
                break;
            }
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            boolean gitlink = (data[pos + 26] & 0xf0) == 0xe0; // mode 160000
            boolean extended = (flags & 0x4000) != 0;
            // assume-valid in the flags; skip-worktree in the extended flags
            boolean hides = (flags & 0x8000) != 0
                    || (extended && pos + header + 1 < data.length && (data[pos + header] & 0x40) != 0);
            pos += extended ? header + 2 : header;
            String refused = null;
            String name = null;
            if (version == 4) {
                int[] varint = varint(data, pos);
                if (varint == null || varint[0] > previous.length) {
                    break;
                }
                int keep = previous.length - varint[0];
                int end = v4NameEnd(data, varint[1], keep, flags);
                if (end < 0) {
                    break;
                }
                byte[] bytes = new byte[keep + (end - varint[1])];
                System.arraycopy(previous, 0, bytes, 0, keep);
                System.arraycopy(data, varint[1], bytes, keep, end - varint[1]);
                boolean alike = nameReadsAlike(data, varint[1], end);
                pos = end + 1;
                previous = bytes;
                if (!alike || !gitWouldWrite(bytes, 0, bytes.length)) {
                    refused = new String(bytes, StandardCharsets.UTF_8).replace('\0', '?');
                } else if (hides) {
                    name = new String(bytes, StandardCharsets.UTF_8);
                }
                if (gitlink && refused == null) {
                    links.add(new String(bytes, StandardCharsets.UTF_8));
                }
                if (refused == null && namedHead(bytes, 0, bytes.length)) {
                    heads.add(new String(bytes, StandardCharsets.UTF_8));
                }
                if (refused == null && namedControl(bytes, 0, bytes.length)) {
                    controls.add(new String(bytes, StandardCharsets.UTF_8));
                }
                if (over == null && !gitlink && under(bytes, 0, bytes.length, repos)) {
                    over = new String(bytes, StandardCharsets.UTF_8);
                }
            } else {
                // the name in place, not copied: a large repository's index holds hundreds of
                // thousands, each looked at in the interpreter
                int length12 = flags & 0xfff;
                int end = length12 < 0xfff ? pos + length12 : nul(data, pos);
                if (end < 0 || end >= data.length) {
                    break;
                }
                // git takes the name's length from the flags, and code of git's that reads it as
                // a C string stops at its first NUL: the two must agree
                if (!nameReadsAlike(data, pos, end) || !gitWouldWrite(data, pos, end)) {
                    refused = new String(data, pos, end - pos, StandardCharsets.UTF_8).replace('\0', '?');
                } else if (hides) {
                    name = new String(data, pos, end - pos, StandardCharsets.UTF_8);
                }
                if (gitlink && refused == null) {
                    links.add(new String(data, pos, end - pos, StandardCharsets.UTF_8));
                }
                if (refused == null && namedHead(data, pos, end)) {
                    heads.add(new String(data, pos, end - pos, StandardCharsets.UTF_8));
                }
                if (refused == null && namedControl(data, pos, end)) {
                    controls.add(new String(data, pos, end - pos, StandardCharsets.UTF_8));
                }
                if (over == null && !gitlink && under(data, pos, end, repos)) {
                    over = new String(data, pos, end - pos, StandardCharsets.UTF_8);
                }
                pos = start + ((end - start + 1 + 7) & ~7);
            }
            if (refused != null) {
                return new Entries(refused, hidden, over, links, heads, controls);
            }
            if (name != null) {
                hidden.add(name);
            }
        }
        return new Entries(null, hidden, over, links, heads, controls);
    }

    /**
     * Whether the name {@code from} up to {@code to} of {@code data} is one of {@code dirs},
     * lies below one, or is a directory above one: a file or link there would make git's
     * checkout remove the directory that holds the repository.
     */
    private static boolean under(byte[] data, int from, int to, byte[][] dirs) {
        int length = to - from;
        for (byte[] dir : dirs) {
            int n = dir.length;
            if (length >= n && java.util.Arrays.equals(data, from, from + n, dir, 0, n)
                    && (length == n || data[from + n] == '/')) {
                return true;
            }
            if (length < n && java.util.Arrays.equals(data, from, to, dir, 0, length) && dir[length] == '/') {
                return true;
            }
        }
        return false;
    }

    /** Whether git's {@code verify_path} takes {@code path} (see {@link #check}). */
    static boolean gitWouldWrite(byte[] path) {
        return gitWouldWrite(path, 0, path.length);
    }

    /** {@link #gitWouldWrite(byte[])} for the bytes {@code from} up to {@code to} of {@code data}. */
    static boolean gitWouldWrite(byte[] data, int from, int to) {
        if (to == from || data[from] == '/' || data[to - 1] == '/') {
            return false;
        }
        int start = from;
        for (int i = from; i <= to; i++) {
            byte b = i == to ? (byte) '/' : data[i];
            if (b == '/') {
                int length = i - start;
                byte first = data[start];
                // only a component that starts with '.', 'g' or a byte beyond ASCII (one of what
                // HFS+ ignores) can be one git reads as .git
                if (length == 0 || first == '.' || first == 'g' || first == 'G' || first < 0) {
                    if (!componentGitWouldWrite(new String(data, start, length, StandardCharsets.UTF_8))) {
                        return false;
                    }
                }
                start = i + 1;
            } else if (b == '\\') {
                return false;
            }
        }
        return true;
    }

    private static boolean componentGitWouldWrite(String c) {
        if (c.isEmpty() || c.equals(".") || c.equals("..")) {
            return false;
        }
        // what HFS+ ignores in a name, then what NTFS ignores: an alternate stream, trailing dots and spaces
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < c.length(); i++) {
            char ch = c.charAt(i);
            boolean ignorable = (ch >= '\u200c' && ch <= '\u200f') || (ch >= '\u202a' && ch <= '\u202e')
                    || (ch >= '\u206a' && ch <= '\u206f') || ch == '\ufeff';
            if (!ignorable) {
                b.append(Character.toLowerCase(ch));
            }
        }
        String name = b.toString();
        int colon = name.indexOf(':');
        if (colon >= 0) {
            name = name.substring(0, colon);
        }
        int end = name.length();
        while (end > 0 && (name.charAt(end - 1) == ' ' || name.charAt(end - 1) == '.')) {
            end--;
        }
        name = name.substring(0, end);
        return !name.equals(".git") && !name.equals("git~1");
    }

    /**
     * The extensions the host drops from an index it takes: caches git rebuilds from the
     * entries when it needs them, which nothing checks against the entries here. A cache-tree
     * (TREE) that names a tree other than the entries make would be what the user's next
     * {@code git commit} records for the directories it did not touch; an untracked cache
     * (UNTR) could hide files from {@code git status}.
     */
    private static final java.util.Set<String> DROPPED = java.util.Set.of("TREE", "UNTR");

    /**
     * {@code data} (an index {@link #refusal} took, whose checksum of {@code hash} bytes was
     * checked) without its {@link #DROPPED} extensions, with a new checksum; {@code data}
     * itself when it has none of them.
     */
    public static byte[] withoutCaches(byte[] data, int hash) {
        int end = entriesEnd(data, hash);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(data.length);
        out.write(data, 0, end);
        boolean dropped = false;
        int pos = end;
        int stop = data.length - hash;
        while (pos + 8 <= stop) {
            long size = int32(data, pos + 4) & 0xffffffffL;
            int next = (int) Math.min(stop, pos + 8 + size);
            if (DROPPED.contains(new String(data, pos, 4, StandardCharsets.ISO_8859_1))) {
                dropped = true;
            } else {
                out.write(data, pos, next - pos);
            }
            pos = next;
        }
        if (!dropped) {
            return data;
        }
        byte[] body = out.toByteArray();
        byte[] sum;
        if (hash == 20) {
            sum = agentsandbox.core.Native.sha1(body, body.length);
        } else {
            try {
                sum = java.security.MessageDigest.getInstance("SHA-256").digest(body);
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException("no SHA-256 in this runtime", e);
            }
        }
        byte[] whole = java.util.Arrays.copyOf(body, body.length + sum.length);
        System.arraycopy(sum, 0, whole, body.length, sum.length);
        return whole;
    }

    /**
     * {@code data} (an index of {@code hash}-byte object names, its caches dropped) with the
     * stat data of every entry that {@code host} (the index it replaces; null for none) has
     * not in the very same form (name, stat data, mode, object, flags) set to nothing, as git
     * leaves an entry after {@code read-tree}: git then compares such a file's content with
     * the entry's object before it calls the file unchanged, and refreshes the stat data
     * itself. So stat data a sandbox wrote (its file's own, beside the old object) cannot make
     * {@code git status}, {@code git diff} or {@code git commit -a} overlook a change; an entry
     * the sandbox staged costs the user's next git one read of the file. The data itself when
     * no entry changes; null when the entries do not read.
     */
    public static byte[] withStatOnlyWhereKnown(byte[] data, byte[] host, int hash) {
        Entry mine = new Entry(data, hash);
        Entry theirs = new Entry(host, hash);
        boolean theirsHas = theirs.next();
        int compared = 40 + hash + 2; // stat data, mode, object, flags
        byte[] out = null;
        while (mine.next()) {
            while (theirsHas && java.util.Arrays.compareUnsigned(theirs.name, mine.name) < 0) {
                theirsHas = theirs.next();
            }
            boolean known = theirsHas && java.util.Arrays.equals(theirs.name, mine.name)
                    && java.util.Arrays.equals(host, theirs.start, theirs.start + compared, data, mine.start,
                            mine.start + compared);
            if (!known) {
                if (out == null) {
                    out = data.clone();
                }
                // ctime, mtime, dev, ino; then, after the mode, uid, gid and size
                java.util.Arrays.fill(out, mine.start, mine.start + 24, (byte) 0);
                java.util.Arrays.fill(out, mine.start + 28, mine.start + 40, (byte) 0);
            }
        }
        if (mine.failed || data.length < hash) {
            return null;
        }
        if (out == null) {
            return data;
        }
        byte[] sum = checksum(out, out.length - hash, hash);
        System.arraycopy(sum, 0, out, out.length - hash, hash);
        return out;
    }

    /** The checksum git writes after {@code length} bytes of {@code data}: SHA-1, or SHA-256. */
    private static byte[] checksum(byte[] data, int length, int hash) {
        if (hash == 20) {
            return agentsandbox.core.Native.sha1(data, length);
        }
        try {
            java.security.MessageDigest digest = java.security.MessageDigest.getInstance("SHA-256");
            digest.update(data, 0, length);
            return digest.digest();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this runtime", e);
        }
    }

    /** The entries of an index, one after the other, as git reads them; names whole, as bytes. */
    private static final class Entry {
        private final byte[] data;
        private final int hash;
        private final int version;
        private final long count;
        private long n;
        private int pos = 12;
        private byte[] previous = new byte[0];
        /** Where this entry starts. */
        int start;
        /** This entry's name. */
        byte[] name;
        /** Whether the entries stopped reading before their count. */
        boolean failed;

        Entry(byte[] data, int hash) {
            this.data = data;
            this.hash = hash;
            boolean index = data != null && data.length >= 12 && data[0] == 'D' && data[1] == 'I' && data[2] == 'R'
                    && data[3] == 'C';
            this.version = index ? int32(data, 4) : 0;
            this.count = index && version >= 2 && version <= 4 ? int32(data, 8) & 0xffffffffL : 0;
            this.failed = data != null && count == 0 && !(index && version >= 2 && version <= 4);
        }

        /** Steps to the next entry; false at the end, or where the entries do not read. */
        boolean next() {
            if (n >= count || failed) {
                return false;
            }
            start = pos;
            int header = 40 + hash + 2;
            if (pos + header > data.length) {
                failed = true;
                return false;
            }
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            pos += (flags & 0x4000) != 0 ? header + 2 : header;
            int end;
            if (version == 4) {
                int[] varint = varint(data, pos);
                if (varint == null || varint[0] > previous.length) {
                    failed = true;
                    return false;
                }
                int keep = previous.length - varint[0];
                end = v4NameEnd(data, varint[1], keep, flags);
                if (end < 0) {
                    failed = true;
                    return false;
                }
                name = new byte[keep + (end - varint[1])];
                System.arraycopy(previous, 0, name, 0, keep);
                System.arraycopy(data, varint[1], name, keep, end - varint[1]);
                pos = end + 1;
            } else {
                int length12 = flags & 0xfff;
                end = length12 < 0xfff ? pos + length12 : nul(data, pos);
                if (end < 0 || end >= data.length) {
                    failed = true;
                    return false;
                }
                name = java.util.Arrays.copyOfRange(data, pos, end);
                pos = start + ((end - start + 1 + 7) & ~7);
            }
            previous = name;
            n++;
            return true;
        }
    }

    /** A signature as one printable word: anything but a letter is {@code ?}. */
    private static String printable(String signature) {
        StringBuilder b = new StringBuilder();
        for (char c : signature.toCharArray()) {
            b.append(Character.isLetter(c) && c < 128 ? c : '?');
        }
        return b.toString();
    }

    /**
     * The extensions with which git reads other entries than one after the other, as
     * {@link #gitlinks} reads them: EOIE with IEOT, whose offsets git's threads follow (git
     * finds EOIE at a fixed place before the checksum, not in the sequence), {@code link},
     * which takes entries from a shared index, and {@code sdir}, whose directory entries
     * stand for what is below them.
     */
    private static final java.util.Set<String> ENTRY_READING = java.util.Set.of("EOIE", "IEOT", "link", "sdir");

    /**
     * The first extension of {@code data} with which git may read other entries (and so
     * other gitlinks) than {@link #gitlinks} reads ({@link #ENTRY_READING}); null when it has
     * none, or when its entries do not read at all (git refuses such an index).
     */
    public static String entryReadingExtension(byte[] data) {
        int pos = entriesEnd(data);
        if (pos < 0) {
            return null;
        }
        // EOIE, where git looks for it: its header 32 bytes (4 offset, 20 or 32 hash) before a
        // SHA-1 or SHA-256 checksum
        for (int[] sizes : new int[][] {{20, 20}, {32, 32}}) {
            int at = data.length - sizes[0] - 8 - 4 - sizes[1];
            if (at >= pos && data[at] == 'E' && data[at + 1] == 'O' && data[at + 2] == 'I' && data[at + 3] == 'E') {
                return "EOIE";
            }
        }
        while (pos + 8 <= data.length - 20) {
            String signature = new String(data, pos, 4, StandardCharsets.ISO_8859_1);
            if (ENTRY_READING.contains(signature)) {
                return signature;
            }
            long size = int32(data, pos + 4) & 0xffffffffL;
            if (pos + 8 + size > data.length - 20) {
                break;
            }
            pos += 8 + (int) size;
        }
        return null;
    }

    /** Where the entries end (the first extension, or the checksum); -1 when they do not read. */
    static int entriesEnd(byte[] data) {
        return entriesEnd(data, 20);
    }

    /**
     * {@link #entriesEnd(byte[])} of a repository whose object names are {@code hash} bytes.
     * The host's apply asks it several times of one index (is it the host's, its extensions,
     * its caches), each a walk over every entry in the interpreter: the answers for the last
     * two arrays asked about are kept (the arrays are never changed where it matters: an entry's
     * stat data is, never its length).
     */
    static int entriesEnd(byte[] data, int hash) {
        synchronized (END_LOCK) {
            for (int i = 0; i < endOf.length; i++) {
                if (endOf[i] == data && endHash[i] == hash && data != null) {
                    return endAt[i];
                }
            }
        }
        int end = walkToEntriesEnd(data, hash);
        synchronized (END_LOCK) {
            endOf[1] = endOf[0];
            endHash[1] = endHash[0];
            endAt[1] = endAt[0];
            endOf[0] = data;
            endHash[0] = hash;
            endAt[0] = end;
        }
        return end;
    }

    private static final Object END_LOCK = new Object();
    private static final byte[][] endOf = new byte[2][]; // under END_LOCK
    private static final int[] endHash = new int[2]; // under END_LOCK
    private static final int[] endAt = new int[2]; // under END_LOCK

    private static int walkToEntriesEnd(byte[] data, int hash) {
        int header = 40 + hash + 2;
        if (data == null || data.length < 12 || data[0] != 'D' || data[1] != 'I' || data[2] != 'R' || data[3] != 'C') {
            return -1;
        }
        int version = int32(data, 4);
        long count = int32(data, 8) & 0xffffffffL;
        if (version < 2 || version > 4) {
            return -1;
        }
        int pos = 12;
        int previousLength = 0;
        for (long n = 0; n < count; n++) {
            int start = pos;
            if (pos + header > data.length) {
                return -1;
            }
            int flags = ((data[pos + header - 2] & 0xff) << 8) | (data[pos + header - 1] & 0xff);
            pos += (flags & 0x4000) != 0 ? header + 2 : header;
            if (version == 4) {
                int[] varint = varint(data, pos);
                if (varint == null || varint[0] > previousLength) {
                    return -1;
                }
                int keep = previousLength - varint[0];
                int end = v4NameEnd(data, varint[1], keep, flags);
                if (end < 0) {
                    return -1;
                }
                previousLength = keep + (end - varint[1]);
                pos = end + 1;
            } else {
                int length12 = flags & 0xfff;
                int end = length12 < 0xfff ? pos + length12 : nul(data, pos);
                if (end < 0 || end >= data.length) {
                    return -1;
                }
                pos = start + ((end - start + 1 + 7) & ~7);
            }
        }
        return pos;
    }

    /**
     * Where the name of a version 4 entry ends as git's {@code create_from_disk} reads it: its
     * suffix starts at {@code from} after the {@code keep} bytes it takes from the previous
     * name, and its length (suffix and kept bytes) is the entry's 12-bit length unless that is
     * 0xfff, when the suffix runs to its NUL. Git copies the byte at the end as the name's
     * terminator and goes on after it, whatever it holds; -1 when the data ends first.
     */
    private static int v4NameEnd(byte[] data, int from, int keep, int flags) {
        int length12 = flags & 0xfff;
        if (length12 == 0xfff) {
            return nul(data, from);
        }
        int end = from + length12 - keep;
        return length12 < keep || end >= data.length ? -1 : end;
    }

    /**
     * Whether the bytes from {@code from} up to {@code end} are the name git reads there and a
     * C string reads the same: no NUL inside, and a NUL at the end (git takes the length from
     * the entry, code that reads the name as a string stops at its first NUL).
     */
    private static boolean nameReadsAlike(byte[] data, int from, int end) {
        return nul(data, from) == end;
    }

    private static int int32(byte[] d, int p) {
        return ((d[p] & 0xff) << 24) | ((d[p + 1] & 0xff) << 16) | ((d[p + 2] & 0xff) << 8) | (d[p + 3] & 0xff);
    }

    private static int nul(byte[] d, int from) {
        for (int i = from; i < d.length; i++) {
            if (d[i] == 0) {
                return i;
            }
        }
        return -1;
    }

    /** git's offset varint: value and the position after it, or null. */
    private static int[] varint(byte[] d, int p) {
        if (p >= d.length) {
            return null;
        }
        int c = d[p++] & 0xff;
        long value = c & 0x7f;
        while ((c & 0x80) != 0) {
            if (p >= d.length || value > Integer.MAX_VALUE >> 7) {
                return null;
            }
            value += 1;
            c = d[p++] & 0xff;
            value = (value << 7) + (c & 0x7f);
        }
        return value > Integer.MAX_VALUE ? null : new int[] {(int) value, p};
    }
}
