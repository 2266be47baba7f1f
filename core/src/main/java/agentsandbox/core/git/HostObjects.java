// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * Commits and trees of the host's git dir, read without starting the host's git: a loose
 * object, or one in a pack found through the pack's index (version 2), deltas applied. A
 * reader that cannot tell (an object elsewhere, through {@code objects/info/alternates} say,
 * an index of another version, a delta chain or object beyond the limits, anything odd)
 * answers null, and its caller asks the host's git instead; so the answers it gives are the
 * objects git reads, never a guess: each object read is hashed and compared with its name.
 */
final class HostObjects {
    /** An object larger than this is left to git. */
    static final int MAX_SIZE = 32 << 20;
    /** A delta chain longer than this is left to git (git's own packs go to 50, or 250 with --aggressive). */
    static final int MAX_CHAIN = 1_000;
    /** At most this many packs are looked in. */
    static final int MAX_PACKS = 256;
    /** One object's read inflates at most this many bytes, its delta bases' included. */
    static final long MAX_WORK = 4L * MAX_SIZE;
    /** All reads of one reader inflate at most this many bytes: then it answers null. */
    static final long MAX_TOTAL = 16L * MAX_SIZE;

    private static final int COMMIT = 1;
    private static final int TREE = 2;
    private static final int BLOB = 3;
    private static final int TAG = 4;
    private static final int OFS_DELTA = 6;
    private static final int REF_DELTA = 7;

    /** An object's type and content. */
    record Loaded(String type, byte[] content) {}

    private final Path objects;
    private final int idLength;
    private List<Pack> packs; // read on first use
    private final Inflater inflater = new Inflater();
    /** What the read under way has inflated so far ({@link #MAX_WORK}), and all reads ({@link #MAX_TOTAL}). */
    private long work;
    private long total;

    HostObjects(Path gitDir, boolean sha256) {
        this(gitDir, sha256, MAX_WORK);
    }

    /** With another bound on one read's work than {@link #MAX_WORK}: for tests. */
    HostObjects(Path gitDir, boolean sha256, long maxWork) {
        this.objects = gitDir.resolve("objects");
        this.idLength = sha256 ? 32 : 20;
        this.maxWork = maxWork;
    }

    private final long maxWork;

    /** Object {@code id}, or null when this reader cannot tell (see the class). */
    Loaded read(String id) {
        if (!ObjectIds.isObjectId(id) || id.length() != idLength * 2) {
            return null;
        }
        work = 0;
        try {
            Loaded o = loose(id);
            if (o == null) {
                o = packed(HexFormat.of().parseHex(id), 0);
            }
            return o != null && named(o, id) ? o : null;
        } catch (IOException | java.security.NoSuchAlgorithmException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Whether {@code o} hashes to {@code id}: what this reader gives is the object of that
     * name, or nothing, whatever a damaged pack or a reading of its own made of the bytes.
     */
    private boolean named(Loaded o, String id) throws java.security.NoSuchAlgorithmException {
        byte[] header = (o.type() + " " + o.content().length + "\0").getBytes(StandardCharsets.US_ASCII);
        byte[] whole = java.util.Arrays.copyOf(header, header.length + o.content().length);
        System.arraycopy(o.content(), 0, whole, header.length, o.content().length);
        byte[] sum = idLength == 20 ? agentsandbox.core.Native.sha1(whole, whole.length)
                : java.security.MessageDigest.getInstance("SHA-256").digest(whole);
        return HexFormat.of().formatHex(sum).equals(id);
    }

    // ------------------------------------------------------------------ loose objects

    private Loaded loose(String id) throws IOException {
        Path file = objects.resolve(id.substring(0, 2)).resolve(id.substring(2));
        byte[] deflated;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            deflated = in.readNBytes(MAX_SIZE);
        } catch (java.nio.file.NoSuchFileException e) {
            return null;
        }
        // a loose object git cannot read is an error in git, not a reason to look in the packs
        spend(deflated.length);
        byte[] bytes = inflate(inflater, deflated, 0, deflated.length, MAX_SIZE + 64);
        if (bytes == null) {
            throw new IOException("a loose object not readable here");
        }
        int space = indexOf(bytes, (byte) ' ', 0, bytes.length);
        int nul = indexOf(bytes, (byte) 0, 0, bytes.length);
        if (space <= 0 || nul < space) {
            throw new IOException("a loose object without a header");
        }
        String type = new String(bytes, 0, space, StandardCharsets.US_ASCII);
        long size;
        try {
            size = Long.parseLong(new String(bytes, space + 1, nul - space - 1, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            throw new IOException("a loose object without a size");
        }
        if (size != bytes.length - nul - 1 || typeNumber(type) == 0) {
            throw new IOException("a loose object of another size or type");
        }
        return new Loaded(type, java.util.Arrays.copyOfRange(bytes, nul + 1, bytes.length));
    }

    /** Counts {@code bytes} more of the read under way: a planted pack's chain of large deltas ends here. */
    private void spend(long bytes) throws IOException {
        work += bytes;
        total += bytes;
        if (work > maxWork || total > MAX_TOTAL) {
            throw new IOException("more to inflate than one object may take");
        }
    }

    /** All of a zlib stream's bytes, at most {@code max}; null when it is cut short, longer or corrupt. */
    private static byte[] inflate(Inflater inflater, byte[] input, int offset, int length, int max) {
        inflater.reset();
        try {
            inflater.setInput(input, offset, length);
            byte[] out = new byte[Math.min(max, Math.max(64, length * 4))];
            int n = 0;
            while (!inflater.finished()) {
                if (n == out.length) {
                    if (out.length >= max) {
                        return null;
                    }
                    out = java.util.Arrays.copyOf(out, (int) Math.min(max, out.length * 2L));
                }
                int got = inflater.inflate(out, n, out.length - n);
                if (got == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    return null;
                }
                n += got;
            }
            return java.util.Arrays.copyOf(out, n);
        } catch (DataFormatException e) {
            return null;
        }
    }

    // ------------------------------------------------------------------ packs

    /** A pack: its index's fan-out table and object count, and both files, read where asked. */
    private record Pack(FileChannel index, int[] fanout, FileChannel data) {}

    private List<Pack> packs() throws IOException {
        if (packs != null) {
            return packs;
        }
        packs = new ArrayList<>();
        Path dir = objects.resolve("pack");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return packs;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path idx : entries) {
                String name = idx.getFileName().toString();
                if (!name.startsWith("pack-") || !name.endsWith(".idx")) {
                    continue;
                }
                if (packs.size() >= MAX_PACKS) {
                    throw new IOException("more packs than are looked in");
                }
                Path pack = dir.resolve(name.substring(0, name.length() - ".idx".length()) + ".pack");
                if (!Files.isRegularFile(idx, LinkOption.NOFOLLOW_LINKS)
                        || !Files.isRegularFile(pack, LinkOption.NOFOLLOW_LINKS)) {
                    continue; // an index git is still writing, say: git skips it too
                }
                FileChannel index = FileChannel.open(idx, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
                packs.add(new Pack(index, fanout(index), FileChannel.open(pack, StandardOpenOption.READ,
                        LinkOption.NOFOLLOW_LINKS)));
            }
        }
        return packs;
    }

    /** A version 2 index's fan-out table: a magic number, the version, 256 counts. */
    private int[] fanout(FileChannel index) throws IOException {
        ByteBuffer head = read(index, 0, 8 + 256 * 4);
        if (head.getInt(0) != 0xff744f63 || head.getInt(4) != 2) {
            throw new IOException("a pack index of another version");
        }
        int[] fanout = new int[256];
        for (int i = 0; i < 256; i++) {
            fanout[i] = head.getInt(8 + i * 4);
        }
        long count = fanout[255] & 0xffffffffL;
        if (index.size() < 8 + 256 * 4 + count * (idLength + 8)) {
            throw new IOException("a pack index cut short");
        }
        return fanout;
    }

    /** Exactly {@code length} bytes of {@code c} at {@code position}. */
    private static ByteBuffer read(FileChannel c, long position, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length);
        while (b.hasRemaining()) {
            if (c.read(b, position + b.position()) < 0) {
                throw new IOException("a file cut short");
            }
        }
        return b;
    }

    /** Closes the packs read. */
    void close() {
        if (packs != null) {
            for (Pack p : packs) {
                try {
                    p.index().close();
                    p.data().close();
                } catch (IOException e) {
                    // read only
                }
            }
        }
        inflater.end();
    }

    private Loaded packed(byte[] id, int depth) throws IOException {
        for (Pack p : packs()) {
            long offset = find(p, id);
            if (offset >= 0) {
                return at(p, offset, depth);
            }
        }
        return null;
    }

    /** Where {@code id} is in pack {@code p}, or -1. */
    private long find(Pack p, byte[] id) throws IOException {
        int first = id[0] & 0xff;
        long count = p.fanout()[255] & 0xffffffffL;
        long lo = first == 0 ? 0 : p.fanout()[first - 1] & 0xffffffffL;
        long hi = p.fanout()[first] & 0xffffffffL;
        long names = 8 + 256 * 4;
        byte[] name = new byte[idLength];
        while (lo < hi) {
            long mid = (lo + hi) >>> 1;
            read(p.index(), names + mid * idLength, idLength).get(0, name);
            int c = java.util.Arrays.compareUnsigned(name, id);
            if (c == 0) {
                long offsets = names + count * idLength + count * 4;
                int small = read(p.index(), offsets + mid * 4, 4).getInt(0);
                if (small >= 0) {
                    return small;
                }
                return read(p.index(), offsets + count * 4 + (small & 0x7fffffffL) * 8, 8).getLong(0);
            } else if (c < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return -1;
    }

    /** The object at {@code offset} of pack {@code p}, its deltas applied. */
    private Loaded at(Pack p, long offset, int depth) throws IOException {
        if (depth > MAX_CHAIN) {
            return null;
        }
        // the entry's header: a type and a size, then a delta's base, then zlib data
        ByteBuffer head = ByteBuffer.allocate(16 + idLength);
        int got = p.data().read(head, offset);
        if (got < 2) {
            return null;
        }
        int at = 0;
        int c = head.get(at++) & 0xff;
        int type = (c >> 4) & 7;
        long size = c & 15;
        int shift = 4;
        while ((c & 0x80) != 0) {
            if (at >= got || shift > 35) {
                return null;
            }
            c = head.get(at++) & 0xff;
            size += (long) (c & 0x7f) << shift;
            shift += 7;
        }
        if (size > MAX_SIZE) {
            return null;
        }
        Loaded base = null;
        if (type == OFS_DELTA) {
            if (at >= got) {
                return null;
            }
            c = head.get(at++) & 0xff;
            long back = c & 0x7f;
            while ((c & 0x80) != 0) {
                if (at >= got || back > (1L << 48)) {
                    return null;
                }
                c = head.get(at++) & 0xff;
                back = ((back + 1) << 7) | (c & 0x7f);
            }
            if (back <= 0 || back > offset) {
                return null;
            }
            base = at(p, offset - back, depth + 1);
        } else if (type == REF_DELTA) {
            if (at + idLength > got) {
                return null;
            }
            byte[] baseId = new byte[idLength];
            head.get(at, baseId);
            at += idLength;
            base = packed(baseId, depth + 1);
            if (base == null) {
                base = loose(HexFormat.of().formatHex(baseId));
            }
        } else if (type < COMMIT || type > TAG) {
            return null;
        }
        if ((type == OFS_DELTA || type == REF_DELTA) && base == null) {
            return null;
        }
        spend(size);
        byte[] data = inflatePacked(p, offset + at, (int) size);
        if (data == null) {
            return null;
        }
        if (base == null) {
            return new Loaded(typeName(type), data);
        }
        byte[] patched = patch(base.content(), data);
        return patched == null ? null : new Loaded(base.type(), patched);
    }

    /** The {@code size} bytes of the zlib stream at {@code offset} of a pack; null when it is not that. */
    private byte[] inflatePacked(Pack p, long offset, int size) throws IOException {
        inflater.reset();
        try {
            byte[] out = new byte[size];
            int n = 0;
            ByteBuffer in = ByteBuffer.allocate(Math.max(256, Math.min(size + 64, 1 << 16)));
            long position = offset;
            byte[] one = new byte[1];
            // each turn reads input, or writes output, or ends: a stream that does neither is refused
            for (int turns = 0; !inflater.finished(); turns++) {
                if (turns > size + (1 << 20)) {
                    return null;
                }
                if (inflater.needsInput()) {
                    in.clear();
                    int read = p.data().read(in, position);
                    if (read <= 0) {
                        return null;
                    }
                    position += read;
                    inflater.setInput(in.array(), 0, read);
                }
                if (n < out.length) {
                    n += inflater.inflate(out, n, out.length - n);
                } else if (inflater.inflate(one) > 0) {
                    return null; // more than the entry's header said
                }
                if (inflater.needsDictionary()) {
                    return null;
                }
            }
            return n == size ? out : null;
        } catch (DataFormatException e) {
            return null;
        }
    }

    /** {@code base} with git's delta {@code delta} applied; null when the delta does not fit it. */
    static byte[] patch(byte[] base, byte[] delta) {
        int[] at = {0};
        long baseSize = varint(delta, at);
        long size = varint(delta, at);
        if (baseSize != base.length || size < 0 || size > MAX_SIZE) {
            return null;
        }
        byte[] out = new byte[(int) size];
        int n = 0;
        int i = at[0];
        while (i < delta.length) {
            int cmd = delta[i++] & 0xff;
            if ((cmd & 0x80) != 0) {
                long from = 0;
                long length = 0;
                for (int b = 0; b < 4; b++) {
                    if ((cmd & (1 << b)) != 0) {
                        if (i >= delta.length) {
                            return null;
                        }
                        from |= (long) (delta[i++] & 0xff) << (8 * b);
                    }
                }
                for (int b = 0; b < 3; b++) {
                    if ((cmd & (0x10 << b)) != 0) {
                        if (i >= delta.length) {
                            return null;
                        }
                        length |= (long) (delta[i++] & 0xff) << (8 * b);
                    }
                }
                if (length == 0) {
                    length = 0x10000;
                }
                if (from + length > base.length || n + length > out.length) {
                    return null;
                }
                System.arraycopy(base, (int) from, out, n, (int) length);
                n += (int) length;
            } else if (cmd != 0) {
                if (i + cmd > delta.length || n + cmd > out.length) {
                    return null;
                }
                System.arraycopy(delta, i, out, n, cmd);
                i += cmd;
                n += cmd;
            } else {
                return null; // reserved
            }
        }
        return n == out.length ? out : null;
    }

    private static long varint(byte[] b, int[] at) {
        long value = 0;
        int shift = 0;
        while (true) {
            if (at[0] >= b.length || shift > 56) {
                return -1;
            }
            int c = b[at[0]++] & 0xff;
            value |= (long) (c & 0x7f) << shift;
            shift += 7;
            if ((c & 0x80) == 0) {
                return value;
            }
        }
    }

    private static String typeName(int type) {
        return switch (type) {
            case COMMIT -> "commit";
            case TREE -> "tree";
            case BLOB -> "blob";
            default -> "tag";
        };
    }

    private static int typeNumber(String type) {
        return switch (type) {
            case "commit" -> COMMIT;
            case "tree" -> TREE;
            case "blob" -> BLOB;
            case "tag" -> TAG;
            default -> 0;
        };
    }

    static int indexOf(byte[] bytes, byte b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
