// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.host.HostRead;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;

/**
 * The owner record of a run directory (the process that runs it), and the sweep that
 * removes the directories of runs whose owner is gone (killed outright, say).
 */
public final class StaleRuns {
    private StaleRuns() {}
    /**
     * A run directory without a (whole) owner record this long after its last change is
     * swept: its run was killed between making it and writing the record.
     */
    static final long OWNERLESS_MILLIS = 60_000;

    /**
     * The owning process of a run directory.
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
                c = read(Path.of("/proc"), ownPid());
                current = c;
            }
            return c;
        }

        private static volatile Owner current;

        /**
         * This process's id, from {@code /proc/self}: {@code ProcessHandle.current()} would set
         * up the JDK's process reaper (a thread pool) on the way to every start.
         */
        private static long ownPid() {
            try {
                return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/self")).toString());
            } catch (IOException | NumberFormatException | UnsupportedOperationException e) {
                return ProcessHandle.current().pid();
            }
        }

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
        String text = HostRead.kernelFile(stat, 4096);
        if (text == null) {
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

    /** A non-negative decimal number, or -1. */
    private static long number(String s) {
        try {
            long v = Long.parseLong(s);
            return v >= 0 && s.charAt(0) != '+' ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Records this process as the owner of a freshly created run directory. */
    static void writeOwner(Path run) throws IOException {
        Owner self = Owner.current();
        if (self == null) {
            return; // without /proc nothing can tell later whether the owner lives: never removed by others
        }
        RunDir.createFile(run.resolve(RunLayout.OWNER), "rw-------", self.format().getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Removes the run directories in {@code runs} that belong to {@code uid} and whose
     * owner is gone; {@code keep} (a directory name) is never touched.
     *
     * @return how many were removed
     */
    static int removeStale(Path runs, int uid, String keep) {
        return removeStale(runs, uid, keep, Owner.current(), Path.of("/proc"));
    }

    static int removeStale(Path runs, int uid, String keep, Owner self, Path proc) {
        if (self == null) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(runs)) {
            if (!(entries instanceof SecureDirectoryStream<Path> all)) {
                return 0; // no openat(2): no way to remove without racing against links
            }
            for (Path entry : all) {
                String name = entry.getFileName().toString();
                if (!RunLayout.isRunName(name) || name.equals(keep)) {
                    continue;
                }
                try {
                    if (removeIfStale(all, Path.of(name), uid, self, proc)) {
                        removed++;
                    }
                } catch (IOException | RuntimeException e) {
                    // another run removed it meanwhile, or it is not what it seemed: leave it
                }
            }
        } catch (IOException | RuntimeException e) {
            // no runs directory yet, or an unreadable one: the run itself reports what matters
        }
        return removed;
    }

    private static boolean removeIfStale(SecureDirectoryStream<Path> all, Path name, int uid, Owner self, Path proc)
            throws IOException {
        // The runs directory is this user's own and owner-only (see ensurePrivateDir), and no
        // sandbox can see it: what is in it was made by runs of this user.
        BasicFileAttributes attrs = all.getFileAttributeView(name, BasicFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS).readAttributes();
        if (!attrs.isDirectory()) {
            return false;
        }
        try (SecureDirectoryStream<Path> run = all.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            Owner recorded = readOwner(run);
            if (recorded == null) {
                // no owner record, or one cut short: a run writes it a moment after it makes
                // the directory, so one still without it long after its last change was left by
                // a run killed while it started (or while its removal began)
                if (attrs.lastModifiedTime().toMillis() > System.currentTimeMillis() - OWNERLESS_MILLIS) {
                    return false;
                }
            } else if (!recorded.gone(self, proc)) {
                return false;
            }
        }
        SafeRemoval.removeEntry(all, name, 0);
        return true;
    }

    /** The owner recorded in an opened run directory, or null when there is none (or no whole one). */
    private static Owner readOwner(SecureDirectoryStream<Path> run) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = run.getFileAttributeView(Path.of(RunLayout.OWNER), BasicFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS).readAttributes();
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!attrs.isRegularFile() || attrs.size() > 200) {
            return null;
        }
        try (SeekableByteChannel ch = run.newByteChannel(Path.of(RunLayout.OWNER),
                Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
            ByteBuffer b = ByteBuffer.allocate(256);
            while (ch.read(b) > 0 && b.hasRemaining()) {
                // read it all
            }
            return Owner.parse(new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII));
        }
    }
}
