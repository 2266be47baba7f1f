package agentsandbox.core;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The per-run runtime directories ({@code $TMPDIR/agent-sandbox-<16 hex digits>}) and
 * what is left of them when agent-sandbox was killed (SIGKILL gives it no chance to
 * clean up): every run records its owner in the directory, and the next run removes
 * the directories whose owner is gone.
 *
 * <p>The owner is a process: its pid, its start time (field 22 of
 * {@code /proc/<pid>/stat}, so a reused pid does not pass for the owner) and its pid
 * namespace (a pid means nothing in another namespace, so such directories are left
 * alone, as in a nested sandbox that sees the host's temp dir).
 *
 * <p>Removal is careful, since the temp dir is shared and, inside a sandbox, writable by
 * the sandboxed command: only directories of the current uid, named exactly like a
 * runtime directory, holding nothing but what a run puts there; never through a
 * symbolic link (every step is relative to an opened directory and refuses links).
 * Anything unexpected is left as it is. Best effort: a failure never stops a run.
 */
final class RuntimeDirs {
    private RuntimeDirs() {}

    static final String PREFIX = "agent-sandbox-";
    /** The file that names the owning process. */
    static final String OWNER = "owner";
    static final String HIDDEN = "hidden";
    /** The command's words, when they are too many for bwrap's command line. */
    static final String COMMAND = "command";
    static final String GUARD = "guard";
    static final String SOCKET = "socket";
    private static final int HEX_DIGITS = 16;

    /**
     * The owning process of a runtime directory.
     *
     * @param pid   the process id
     * @param start its start time in clock ticks after boot ({@code /proc/<pid>/stat} field 22)
     * @param pidNs its pid namespace, as {@code /proc/<pid>/ns/pid} reads ({@code pid:[4026531836]})
     */
    record Owner(long pid, long start, String pidNs) {

        /** One line: {@code pid start namespace}. */
        String format() {
            return pid + " " + start + " " + pidNs + "\n";
        }

        /** The owner a {@link #format()} line names, or null when the text is not one. */
        static Owner parse(String text) {
            String line = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
            int a = line.indexOf(' ');
            int b = a < 0 ? -1 : line.indexOf(' ', a + 1);
            if (b < 0 || line.indexOf(' ', b + 1) >= 0 || line.indexOf('\n') >= 0) {
                return null;
            }
            long pid = number(line.substring(0, a));
            long start = number(line.substring(a + 1, b));
            String ns = line.substring(b + 1);
            return pid <= 0 || start < 0 || ns.isEmpty() ? null : new Owner(pid, start, ns);
        }

        /** This process, or null when /proc cannot tell. */
        static Owner current() {
            Owner c = current;
            if (c == null) {
                c = read(Path.of("/proc"), ProcessHandle.current().pid());
                current = c;
            }
            return c;
        }

        private static volatile Owner current;

        /** The process {@code pid} as {@code proc} shows it, or null when there is none. */
        static Owner read(Path proc, long pid) {
            Path dir = proc.resolve(Long.toString(pid));
            long start = startTime(dir.resolve("stat"));
            if (start < 0) {
                return null;
            }
            try {
                return new Owner(pid, start, Files.readSymbolicLink(dir.resolve("ns/pid")).toString());
            } catch (IOException | UnsupportedOperationException e) {
                return null;
            }
        }

        /**
         * True when this owner certainly no longer runs: its namespace is ours (so its
         * pid is comparable) and no process with its pid and start time exists.
         */
        boolean gone(Owner self, Path proc) {
            if (self == null || !pidNs.equals(self.pidNs())) {
                return false;
            }
            Path dir = proc.resolve(Long.toString(pid));
            String[] fields = statFields(dir.resolve("stat"));
            if (fields == null) {
                // no such process; or one whose stat cannot be read, which may be the owner
                return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
            }
            // a zombie (Z) or dead (X) owner uses nothing any more; another start time is another process
            return fields[0].equals("Z") || fields[0].equals("X") || number(fields[22 - 3]) != start;
        }
    }

    /** Field 22 (starttime) of a {@code /proc/<pid>/stat} file, or -1 when it cannot be read. */
    static long startTime(Path stat) {
        String[] fields = statFields(stat);
        return fields == null ? -1 : number(fields[22 - 3]);
    }

    /**
     * The fields of a {@code /proc/<pid>/stat} file from field 3 (state) on, or null.
     * The command name (field 2) may hold spaces and parentheses: fields are counted
     * from the last ')'.
     */
    private static String[] statFields(Path stat) {
        String text;
        try {
            text = Files.readString(stat, StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        int close = text.lastIndexOf(')');
        if (close < 0) {
            return null;
        }
        String[] fields = new String[22 - 2];
        int n = 0;
        int i = close + 1;
        while (n < fields.length && i < text.length()) {
            while (i < text.length() && text.charAt(i) == ' ') {
                i++;
            }
            int end = i;
            while (end < text.length() && text.charAt(end) != ' ' && text.charAt(end) != '\n') {
                end++;
            }
            if (end == i) {
                return null;
            }
            fields[n++] = text.substring(i, end);
            i = end;
        }
        return n == fields.length ? fields : null;
    }

    /** A non-negative decimal number, or -1 (no regex on the start path). */
    private static long number(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return -1;
        }
        long v = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** True for {@code agent-sandbox-} followed by exactly 16 lower-case hex digits. */
    static boolean isRuntimeName(String name) {
        if (name.length() != PREFIX.length() + HEX_DIGITS || !name.startsWith(PREFIX)) {
            return false;
        }
        for (int i = PREFIX.length(); i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /** Records this process as the owner of a freshly created runtime directory. */
    static void writeOwner(Path runtimeDir) throws IOException {
        Owner self = Owner.current();
        if (self == null) {
            return; // without /proc nothing can tell later whether the owner lives: never removed by others
        }
        try (SeekableByteChannel ch = Files.newByteChannel(runtimeDir.resolve(OWNER),
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ByteBuffer b = ByteBuffer.wrap(self.format().getBytes(StandardCharsets.US_ASCII));
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
    }

    /**
     * Removes the runtime directories in {@code tempDir} that belong to {@code uid} and
     * whose owner is gone; {@code keep} (a directory name) is never touched.
     *
     * @return how many were removed
     */
    static int removeStale(Path tempDir, int uid, String keep) {
        return removeStale(tempDir, uid, keep, Owner.current(), Path.of("/proc"));
    }

    static int removeStale(Path tempDir, int uid, String keep, Owner self, Path proc) {
        if (self == null) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tempDir)) {
            if (!(entries instanceof SecureDirectoryStream<Path> temp)) {
                return 0; // no openat(2): no way to remove without racing against links
            }
            for (Path entry : temp) {
                String name = entry.getFileName().toString();
                if (!isRuntimeName(name) || name.equals(keep)) {
                    continue;
                }
                try {
                    if (removeIfStale(temp, tempDir.resolve(name), uid, self, proc)) {
                        removed++;
                    }
                } catch (IOException | RuntimeException e) {
                    // another run removed it meanwhile, or it is not what it seemed: leave it
                }
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable temp dir: the run itself reports what matters
        }
        return removed;
    }

    private static boolean removeIfStale(SecureDirectoryStream<Path> temp, Path dir, int uid, Owner self, Path proc)
            throws IOException {
        Path name = dir.getFileName();
        BasicFileAttributes attrs = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attrs.isDirectory() || !Integer.valueOf(uid).equals(
                Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS))) {
            return false;
        }
        // From here on every step is relative to the opened directory and refuses links;
        // the sticky temp dir keeps others from renaming our entry away meanwhile.
        try (SecureDirectoryStream<Path> run = temp.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            Owner owner = readOwner(run);
            if (owner == null || !owner.gone(self, proc) || !expectedLayout(run)) {
                return false;
            }
            if (isDirectory(run, Path.of(GUARD))) {
                try (SecureDirectoryStream<Path> guard = run.newDirectoryStream(Path.of(GUARD),
                        LinkOption.NOFOLLOW_LINKS)) {
                    deleteIfPresent(guard, Path.of(SOCKET));
                }
                run.deleteDirectory(Path.of(GUARD));
            }
            deleteIfPresent(run, Path.of(HIDDEN));
            deleteIfPresent(run, Path.of(COMMAND));
            run.deleteFile(Path.of(OWNER));
        }
        temp.deleteDirectory(name);
        return true;
    }

    /** The owner recorded in an opened runtime directory, or null. */
    private static Owner readOwner(SecureDirectoryStream<Path> run) throws IOException {
        BasicFileAttributes attrs = run.getFileAttributeView(Path.of(OWNER), BasicFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS).readAttributes();
        if (!attrs.isRegularFile() || attrs.size() > 200) {
            return null;
        }
        try (SeekableByteChannel ch = run.newByteChannel(Path.of(OWNER),
                Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
            ByteBuffer b = ByteBuffer.allocate(256);
            while (ch.read(b) > 0 && b.hasRemaining()) {
                // read it all
            }
            return Owner.parse(new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII));
        }
    }

    /**
     * Nothing but what a run puts there: {@code owner}, {@code hidden}, {@code command} (files) and
     * {@code guard/} holding at most its {@code socket}.
     */
    private static boolean expectedLayout(SecureDirectoryStream<Path> run) throws IOException {
        for (Path entry : run) {
            String n = entry.getFileName().toString();
            boolean ok = switch (n) {
                case OWNER, HIDDEN, COMMAND -> isRegularFile(run, Path.of(n));
                case GUARD -> isDirectory(run, Path.of(n)) && guardLayout(run);
                default -> false;
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static boolean guardLayout(SecureDirectoryStream<Path> run) throws IOException {
        try (SecureDirectoryStream<Path> guard = run.newDirectoryStream(Path.of(GUARD), LinkOption.NOFOLLOW_LINKS)) {
            for (Path entry : guard) {
                if (!entry.getFileName().toString().equals(SOCKET)
                        || attributes(guard, Path.of(SOCKET)).isDirectory()) {
                    return false;
                }
            }
        }
        return true;
    }

    private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
    }

    private static boolean isRegularFile(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return attributes(dir, name).isRegularFile();
    }

    private static boolean isDirectory(SecureDirectoryStream<Path> dir, Path name) {
        try {
            return attributes(dir, name).isDirectory();
        } catch (IOException e) {
            return false;
        }
    }

    private static void deleteIfPresent(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        try {
            dir.deleteFile(name);
        } catch (java.nio.file.NoSuchFileException e) {
            // not there: fine
        }
    }
}
