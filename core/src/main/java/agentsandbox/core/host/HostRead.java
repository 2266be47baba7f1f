// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Reads, on the host, files that a sandbox may have written: only regular files (a
 * FIFO would block the read forever, a device never end), never through a symlink at
 * the last component, and never more than a bound.
 */
public final class HostRead {
    private HostRead() {}

    /**
     * The text (ASCII) of a small file the kernel makes, such as {@code /proc/self/stat} or a
     * setting below {@code /proc/sys}: at most {@code max} bytes, or null when it is missing
     * or cannot be read. Read with a plain stream, and a missing file costs no exception:
     * a start reads a few of them, interpreted.
     */
    public static String kernelFile(Path p, int max) {
        if (!Files.exists(p)) {
            return null;
        }
        try (InputStream in = new java.io.FileInputStream(p.toString())) {
            return new String(in.readNBytes(max), java.nio.charset.StandardCharsets.US_ASCII);
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /**
     * The file's bytes, or null when it is not a regular file, cannot be read, or is
     * larger than {@code max} bytes.
     */
    /** The most one read asks for (the JDK's temporary direct buffer is this large at most). */
    private static final int SLICE = 64 * 1024;

    public static byte[] bytes(Path file, int max) {
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return null; // missing, a link, a FIFO…: and asked without an exception, which costs at every start
        }
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > max) {
                return null;
            }
            // O_NOFOLLOW: the name cannot have become a link to a FIFO since the check
            try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(file, StandardOpenOption.READ,
                    LinkOption.NOFOLLOW_LINKS)) {
                // the size it had a moment ago, read in slices straight into the array (a read
                // of the whole into a heap buffer goes through a direct buffer of the same size,
                // zeroed first: a git index of megabytes cost the start milliseconds), then one
                // byte more to notice that it grew
                byte[] data = new byte[(int) a.size()];
                int n = 0;
                while (n < data.length) {
                    int r = in.read(java.nio.ByteBuffer.wrap(data, n, Math.min(SLICE, data.length - n)));
                    if (r < 0) {
                        break;
                    }
                    n += r;
                }
                if (n < data.length) {
                    return java.util.Arrays.copyOf(data, n); // it shrank while read
                }
                if (in.read(java.nio.ByteBuffer.allocate(1)) > 0) {
                    return null; // it grew while read: something is writing it
                }
                return data;
            }
        } catch (IOException | SecurityException e) {
            return null;
        }
    }
}
