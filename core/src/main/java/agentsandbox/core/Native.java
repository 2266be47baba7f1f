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

    /**
     * Registered by the tool's JVM starter: a descriptor of the directory at {@code path}
     * (NUL-free bytes), opened as a path only and never through a symbolic link on the way
     * (openat2 with RESOLVE_NO_SYMLINKS), closed on exec; the negated errno when it cannot be.
     */
    private static native int openDirectory(byte[] path);

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
