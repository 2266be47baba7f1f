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
}
