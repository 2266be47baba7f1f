// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * What the JDK cannot do, or does too slowly interpreted, done by the program that starts
 * the tool's JVM (launcher/src/jvm_start.c), which registers these native methods before
 * main runs. A JVM started otherwise (the runtime's {@code java}, a test) has none, and each
 * method here says what answers then.
 */
public final class Native {
    private Native() {}

    /** Whether the native methods answered (null before the first call). */
    private static volatile Boolean registered;

    /** Registered by the tool's JVM starter (NATIVE_CLASS in guard.h): launcher/src/sha1.c. */
    private static native byte[] sha1(byte[] data, int offset, int length);

    /** Registered by the tool's JVM starter: launcher/src/bytes.c. */
    private static native int firstDifference(byte[] a, int aFrom, byte[] b, int bFrom, int length);

    /**
     * Registered by the tool's JVM starter: a descriptor of the directory at {@code path}
     * (NUL-free bytes), opened as a path only and never through a symbolic link on the way
     * (openat2 with RESOLVE_NO_SYMLINKS), closed on exec; the negated errno when it cannot be.
     */
    private static native int openDirectory(byte[] path);

    /**
     * Registered by the tool's JVM starter (launcher/src/file_below.c): writes {@code data} to
     * the new file {@code temp} (with {@code mode}, less the umask) in directory {@code rel} of
     * {@code root}, every directory of {@code rel} opened through no link and made where
     * missing, and renames it to {@code name}; an IOException naming the file and the reason
     * when it cannot.
     */
    private static native void replaceFile(byte[] root, byte[] rel, byte[] temp, byte[] name, byte[] data, int mode)
            throws IOException;

    /**
     * Writes {@code data} whole as file {@code name} of directory {@code rel} (its parts
     * separated by '/'; empty for {@code root} itself) below {@code root}: under the name
     * {@code temp} first, then renamed over {@code name}, so readers see the old file or the
     * new one. Each directory of {@code rel} is opened without following a link (a link there
     * fails the write) and made where missing, in the directory so opened; the new file gets
     * {@code mode} less the umask. The host's apply writes objects and the index into the
     * host's git dir so; the JDK's directory streams take some ten times as long interpreted.
     * False without the native methods (the caller writes it the JDK's way).
     */
    public static boolean replaceFile(Path root, String rel, String temp, String name, byte[] data, int mode)
            throws IOException {
        if (registered == Boolean.FALSE) {
            return false;
        }
        try {
            replaceFile(root.toString().getBytes(StandardCharsets.UTF_8), rel.getBytes(StandardCharsets.UTF_8),
                    temp.getBytes(StandardCharsets.UTF_8), name.getBytes(StandardCharsets.UTF_8), data, mode);
            registered = Boolean.TRUE;
            return true;
        } catch (UnsatisfiedLinkError none) {
            registered = Boolean.FALSE;
            return false;
        }
    }

    /** Registered by the tool's JVM starter: a new inotify instance (non-blocking), or the negated errno. */
    private static native int watchOpen();

    /**
     * Registered by the tool's JVM starter (launcher/src/tree_watch.c): tree_watch_walk's result
     * as 4 bytes (big-endian), then its records.
     */
    private static native byte[] watchWalk(int inotify, byte[] root, byte[] start, byte[] skip, int max,
            int idleMillis);

    /** Registered by the tool's JVM starter: the inotify events waiting, in this machine's byte order; null on an error. */
    private static native byte[] watchRead(int inotify);

    /** Registered by the tool's JVM starter: 1 when events wait, 0 when none came in time, the negated errno. */
    private static native int watchWait(int inotify, int millis);

    /** Registered by the tool's JVM starter: closes a descriptor. */
    private static native void closeDescriptor(int fd);

    /** Registered by the tool's JVM starter (launcher/src/tree_watch.c): tree_watch_hold. */
    private static native int watchHold(int inotify);

    /**
     * A new inotify instance, whose events {@link #readWatch} reads without waiting; -1 without
     * the native methods (the caller lists directories the JDK's way), or the negated errno
     * when the kernel gives none (the limit of instances reached).
     */
    public static int openWatch() {
        if (registered == Boolean.FALSE) {
            return -1;
        }
        try {
            int fd = watchOpen();
            registered = Boolean.TRUE;
            return fd;
        } catch (UnsatisfiedLinkError none) {
            registered = Boolean.FALSE;
            return -1;
        }
    }

    /**
     * Lists directory {@code start} (relative to {@code root}; empty for it) and every directory
     * below it, through no link and never above {@code root}, past the relative paths of
     * {@code skip} (each ended by a NUL), at most {@code max}: where {@code inotify} is not -1
     * each gets a watch before it is listed. The result of tree_watch_walk (launcher/src/tree_watch.h)
     * as 4 bytes, then one record for each directory watched or holding an entry named
     * {@code HEAD}: its watch (4 bytes), its flags (1 byte), its relative path, a NUL. With
     * {@code idleMillis} above 0 the calling thread runs for that long only where a processor
     * has nothing else to do (a walk beside the run's start). Null without the native methods.
     */
    public static byte[] walkTree(int inotify, Path root, String start, byte[] skip, int max, int idleMillis) {
        if (registered == Boolean.FALSE) {
            return null;
        }
        try {
            byte[] answer = watchWalk(inotify, root.toString().getBytes(StandardCharsets.UTF_8),
                    start.getBytes(StandardCharsets.UTF_8), skip, max, idleMillis);
            registered = Boolean.TRUE;
            return answer;
        } catch (UnsatisfiedLinkError none) {
            registered = Boolean.FALSE;
            return null;
        }
    }

    /** The events waiting on {@code inotify} ({@link #openWatch}), none when none wait; null when it cannot be read. */
    public static byte[] readWatch(int inotify) {
        return watchRead(inotify);
    }

    /** Waits at most {@code millis} for events on {@code inotify}: whether some wait. */
    public static boolean awaitWatch(int inotify, int millis) {
        return watchWait(inotify, millis) > 0;
    }

    /**
     * Keeps {@code inotify} ({@link #openWatch}) open in a process of its own until this one has
     * ended (launcher/src/tree_watch.h's tree_watch_hold): the kernel frees an instance that
     * holds watches only after a grace period of some 10 to 16 ms, which the process that
     * closes it last waits for, and the run's end would wait for it too. Whether that process
     * was started.
     */
    public static boolean holdWatch(int inotify) {
        return watchHold(inotify) > 0;
    }

    /** Closes descriptor {@code fd} of {@link #openWatch}. */
    public static void closeWatch(int fd) {
        closeDescriptor(fd);
    }

    /**
     * Registered by the tool's JVM starter (launcher/src/spawn.c): runs the program of the
     * NUL-ended words {@code argv} with exactly the NUL-ended variables {@code env}, in
     * {@code dir}, stdin on /dev/null, and waits for it at most {@code timeoutMillis}; the
     * status as 4 bytes (big-endian), then its stdout and stderr together (at most 1 MiB), or
     * why it could not run.
     */
    private static native byte[] run(byte[] argv, byte[] env, byte[] dir, int timeoutMillis);

    /** How a program run by {@link #run(List, Map, Path, int)} ended. */
    public record Ran(int status, byte[] output) {
        /** The status of a program that could not be started; the output says why. */
        public static final int NOT_RUN = -1;
        /** The status of a program killed for not ending in time. */
        public static final int TIMED_OUT = -2;
    }

    /**
     * Runs {@code argv} (its first word a path, or a name looked up in the PATH of {@code env})
     * with exactly {@code env}, in {@code dir}, stdin on /dev/null, and waits for its end at
     * most {@code timeoutMillis}: its exit status (128 + the signal that ended it), its stdout
     * and stderr together. The JDK's process classes, which the tool's startup cache does not
     * hold, cost an interpreted JVM some 20 ms at their first use; this costs a spawn. Null
     * without the native methods (the caller runs it the JDK's way), or when a word or variable
     * holds a NUL.
     */
    public static Ran run(java.util.List<String> argv, java.util.Map<String, String> env, Path dir,
            int timeoutMillis) {
        if (registered == Boolean.FALSE) {
            return null;
        }
        java.io.ByteArrayOutputStream words = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream variables = new java.io.ByteArrayOutputStream();
        for (String w : argv) {
            if (!nulEnded(words, w)) {
                return null;
            }
        }
        for (java.util.Map.Entry<String, String> e : env.entrySet()) {
            if (!nulEnded(variables, e.getKey() + "=" + e.getValue())) {
                return null;
            }
        }
        byte[] answer;
        try {
            answer = run(words.toByteArray(), variables.toByteArray(), dir.toString().getBytes(StandardCharsets.UTF_8),
                    timeoutMillis);
            registered = Boolean.TRUE;
        } catch (UnsatisfiedLinkError none) {
            registered = Boolean.FALSE;
            return null;
        }
        int status = (answer[0] & 0xff) << 24 | (answer[1] & 0xff) << 16 | (answer[2] & 0xff) << 8 | answer[3] & 0xff;
        return new Ran(status, java.util.Arrays.copyOfRange(answer, 4, answer.length));
    }

    private static boolean nulEnded(java.io.ByteArrayOutputStream out, String text) {
        if (text.indexOf('\0') >= 0) {
            return false;
        }
        out.writeBytes(text.getBytes(StandardCharsets.UTF_8));
        out.write(0);
        return true;
    }

    /**
     * The SHA-1 of the first {@code length} bytes of {@code data}: git's object names and its
     * index's checksum, which the host's apply checks. The tool's JVM runs interpreted, where
     * the JDK's SHA-1 takes about half a second for the index of a repository of 20 000 files
     * and its first use sets up the JDK's security providers; without the native method the
     * JDK's digest answers.
     */
    public static byte[] sha1(byte[] data, int length) {
        if (registered != Boolean.FALSE) {
            try {
                byte[] digest = sha1(data, 0, length);
                registered = Boolean.TRUE;
                return digest;
            } catch (UnsatisfiedLinkError none) {
                registered = Boolean.FALSE;
            }
        }
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-1");
            digest.update(data, 0, length);
            return digest.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-1 in this runtime", e);
        }
    }

    /**
     * The offset (from {@code aFrom} and {@code bFrom}) of the first byte in which the
     * {@code length} bytes of {@code a} and of {@code b} there differ; -1 when none does, as
     * {@link java.util.Arrays#mismatch(byte[], int, int, byte[], int, int)} says it. The host's
     * apply compares the index a sandbox left with the host's; the tool's JVM runs interpreted,
     * where the JDK's comparison takes some 12 ns a byte (20 ms for the index of a repository
     * of 20 000 files). Without the native method the JDK's answers.
     */
    public static int mismatch(byte[] a, int aFrom, byte[] b, int bFrom, int length) {
        if (registered != Boolean.FALSE) {
            try {
                int at = firstDifference(a, aFrom, b, bFrom, length);
                registered = Boolean.TRUE;
                return at;
            } catch (UnsatisfiedLinkError none) {
                registered = Boolean.FALSE;
            }
        }
        return java.util.Arrays.mismatch(a, aFrom, aFrom + length, b, bFrom, bFrom + length);
    }

    /**
     * A name of directory {@code dir} that goes on naming it, for this process and the
     * processes it starts, whatever is renamed or replaced on the way to it afterwards:
     * {@code /proc/PID/fd/N} of a descriptor this process keeps open. Null without the
     * native methods (the caller then has only the path, and says what it does then).
     *
     * @throws IOException when the directory cannot be opened, or only through a symbolic link
     */
    public static Path pinned(Path dir) throws IOException {
        if (registered == Boolean.FALSE) {
            return null;
        }
        int fd;
        try {
            fd = openDirectory(dir.toString().getBytes(StandardCharsets.UTF_8));
            registered = Boolean.TRUE;
        } catch (UnsatisfiedLinkError none) {
            registered = Boolean.FALSE;
            return null;
        }
        if (fd < 0) {
            throw new IOException(fd == -40 || fd == -18 ? "a symbolic link on the way to it now"
                    : "it cannot be opened, error " + -fd);
        }
        // the pid as /proc names it (ProcessHandle would load and set up its own classes at every start)
        return Path.of("/proc").resolve(java.nio.file.Files.readSymbolicLink(Path.of("/proc/self"))).resolve("fd")
                .resolve(Integer.toString(fd));
    }

    /** Whether the native methods answered the last call (for the tests of the built image). */
    static boolean isNative() {
        return registered == Boolean.TRUE;
    }
}
