// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * Removal of a directory tree that never follows a symbolic link: every step is relative
 * to an opened directory and refuses links, so what a sandbox left in its {@code /tmp}
 * (links to the home, say) is unlinked, never followed. The launcher's starter removes the
 * same way in native code (launcher/src/remove_tree.c); both are tested on the same cases.
 */
public final class SafeRemoval {
    private SafeRemoval() {}
    /**
     * A removal moves directories this deep up to the top of the tree it removes and goes on
     * from there, so that it holds at most this many open directories (REMOVE_MAX_DEPTH in
     * guard.h).
     */
    public static final int MAX_DEPTH = 256;

    /** Removes {@code parent/name} and everything below it without following links; best effort. */
    public static boolean removeTree(Path parent, Path name) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent)) {
            if (!(ds instanceof SecureDirectoryStream<Path> sds)) {
                return false; // no openat(2): never remove by path names a link could redirect
            }
            removeEntry(sds, name, 0);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    static void removeEntry(SecureDirectoryStream<Path> parent, Path name, int depth) throws IOException {
        removeEntry(null, parent, name, depth);
    }

    /** The names deep directories move to (see {@link #removeEntry}), one new one each. */
    private static final java.util.concurrent.atomic.AtomicLong MOVED = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Removes {@code parent/name} and everything below it, never following a link. A
     * directory {@link #MAX_DEPTH} below the tree's top directory ({@code top}, null for the
     * top itself) moves up into it under a name of its own, and a later pass over the top
     * removes it: a removal holds at most {@link #MAX_DEPTH} open directories, however deep
     * the tree a sandbox left in its {@code /tmp} (the starter's remove_entry does the same).
     */
    private static void removeEntry(SecureDirectoryStream<Path> top, SecureDirectoryStream<Path> parent, Path name,
            int depth) throws IOException {
        BasicFileAttributes a;
        try {
            a = parent.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .readAttributes();
        } catch (NoSuchFileException e) {
            return;
        }
        if (!a.isDirectory()) {
            parent.deleteFile(name);
            return;
        }
        if (depth >= MAX_DEPTH && top != null) {
            Path moved;
            do { // a name not taken (an earlier removal cut short may have left some)
                moved = Path.of(".deep." + MOVED.getAndIncrement());
            } while (exists(top, moved));
            parent.move(name, top, moved);
            return;
        }
        // a directory the sandbox made unwritable or unsearchable: its owner may open it up again
        PosixFileAttributeView perms = parent.getFileAttributeView(name, PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS);
        try {
            perms.setPermissions(PosixFilePermissions.fromString("rwx------"));
        } catch (IOException | RuntimeException e) {
            // not ours, or already fine: removal says what is possible
        }
        try (SecureDirectoryStream<Path> child = parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            // a run directory's owner record last, once all else is gone: a removal cut short
            // leaves a directory whose owner the next run's sweep can still tell is gone; the
            // top directory is read again until it is empty, as deep directories move up into it
            Path owner = Path.of(RunLayout.OWNER);
            boolean record = false;
            List<Path> entries = names(child);
            while (true) {
                record |= depth == 0 && entries.remove(owner);
                for (Path e : entries) {
                    removeEntry(depth == 0 ? child : top, child, e, depth + 1);
                }
                if (depth > 0 || entries.isEmpty()) {
                    break;
                }
                // a stream is listed once: the directory again, through a stream of its own
                try (SecureDirectoryStream<Path> again = child.newDirectoryStream(Path.of("."),
                        LinkOption.NOFOLLOW_LINKS)) {
                    entries = names(again);
                }
            }
            if (record) {
                removeEntry(child, child, owner, depth + 1);
            }
        }
        parent.deleteDirectory(name);
    }

    private static List<Path> names(SecureDirectoryStream<Path> dir) {
        List<Path> out = new java.util.ArrayList<>();
        for (Path e : dir) {
            out.add(e.getFileName());
        }
        return out;
    }

    private static boolean exists(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        try {
            dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }
}
