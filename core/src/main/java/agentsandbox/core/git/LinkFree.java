// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;

/**
 * Directories of the host's git dir opened without following a link: what the apply
 * writes there (a ref's lock and reflog, an object) is written relative to them, so a
 * directory of the git dir that a concurrent process swapped for a link leads no write
 * elsewhere.
 */
final class LinkFree {
    private LinkFree() {}

    /**
     * Directory {@code rel} below {@code root}, made where missing, each directory on the way
     * opened without following a link (one there fails it). A directory made here through a
     * path a concurrent process changed is made elsewhere at worst, and empty: nothing is
     * written but in the directories so opened.
     */
    static SecureDirectoryStream<Path> open(Path root, String rel) throws IOException {
        DirectoryStream<Path> top = Files.newDirectoryStream(root);
        if (!(top instanceof SecureDirectoryStream<Path> at)) {
            top.close();
            throw new IOException("no way here to open directories without following links");
        }
        SecureDirectoryStream<Path> current = at;
        String done = "";
        try {
            for (String part : rel.split("/")) {
                if (part.isEmpty()) {
                    continue;
                }
                SecureDirectoryStream<Path> next;
                try {
                    next = current.newDirectoryStream(Path.of(part), LinkOption.NOFOLLOW_LINKS);
                } catch (java.nio.file.NoSuchFileException missing) {
                    try {
                        Files.createDirectory(root.resolve(done + part));
                    } catch (java.nio.file.FileAlreadyExistsException made) {
                        // made meanwhile: opened below like any other
                    }
                    next = current.newDirectoryStream(Path.of(part), LinkOption.NOFOLLOW_LINKS);
                }
                current.close();
                current = next;
                done = done + part + "/";
            }
            return current;
        } catch (IOException | RuntimeException e) {
            current.close();
            throw e;
        }
    }

    /**
     * Writes {@code bytes} as file {@code name} of directory {@code rel} below {@code root}
     * (made where missing), each directory on the way opened without following a link, as
     * {@link #open} and {@link #replace(SecureDirectoryStream, String, byte[], Path,
     * java.nio.file.attribute.FileAttribute...)} do: by the tool's native method where it has
     * one, at a fraction of the cost, with {@code mode} (0444 for an object, 0666 for the index)
     * less the umask.
     */
    static void replace(Path root, String rel, String prefix, byte[] bytes, String name, int mode) throws IOException {
        if (agentsandbox.core.Native.replaceFile(root, rel, tempName(prefix), name, bytes, mode)) {
            return;
        }
        try (SecureDirectoryStream<Path> dir = open(root, rel)) {
            if (mode == 0666) {
                replace(dir, prefix, bytes, Path.of(name));
            } else {
                replace(dir, prefix, bytes, Path.of(name), java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                        java.nio.file.attribute.PosixFilePermissions.fromString(permissions(mode))));
            }
        }
    }

    /** {@code mode}'s permission bits as {@code rwxr-x---} reads them. */
    private static String permissions(int mode) {
        StringBuilder b = new StringBuilder(9);
        String letters = "rwx";
        for (int bit = 8; bit >= 0; bit--) {
            b.append((mode & (1 << bit)) != 0 ? letters.charAt(2 - bit % 3) : '-');
        }
        return b.toString();
    }

    /** A new file's name of this moment: {@code prefix}, the clock, a random number. */
    private static String tempName(String prefix) {
        return prefix + Long.toHexString(System.nanoTime()) + "_" + Long.toHexString(Double.doubleToLongBits(Math.random()));
    }

    /**
     * Writes {@code bytes} to a new file of {@code dir} (created with {@code attributes}, else
     * with what the umask leaves of 0666) and renames it to {@code name}, replacing what is
     * there: readers see the old file or the new one whole. The new file's name starts with
     * {@code prefix} and ends in a number of this moment's, not in a temporary-file helper's
     * random name, whose set-up costs an interpreted run milliseconds.
     */
    static void replace(SecureDirectoryStream<Path> dir, String prefix, byte[] bytes, Path name,
            java.nio.file.attribute.FileAttribute<?>... attributes) throws IOException {
        Path temp = Path.of(tempName(prefix));
        boolean moved = false;
        try {
            try (java.nio.channels.SeekableByteChannel c = dir.newByteChannel(temp, java.util.Set.of(
                    java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS), attributes)) {
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    c.write(b);
                }
            }
            dir.move(temp, dir, name);
            moved = true;
        } finally {
            if (!moved) {
                try {
                    dir.deleteFile(temp);
                } catch (java.nio.file.NoSuchFileException gone) {
                    // not made
                }
            }
        }
    }
}
