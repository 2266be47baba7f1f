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
     * Writes {@code bytes} to a new file of {@code dir} (created with {@code attributes}, else
     * with what the umask leaves of 0666) and renames it to {@code name}, replacing what is
     * there: readers see the old file or the new one whole. The new file's name starts with
     * {@code prefix} and ends in a number of this moment's, not in a temporary-file helper's
     * random name, whose set-up costs an interpreted run milliseconds.
     */
    static void replace(SecureDirectoryStream<Path> dir, String prefix, byte[] bytes, Path name,
            java.nio.file.attribute.FileAttribute<?>... attributes) throws IOException {
        Path temp = Path.of(prefix + Long.toHexString(System.nanoTime()) + "_"
                + Long.toHexString(Double.doubleToLongBits(Math.random())));
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
