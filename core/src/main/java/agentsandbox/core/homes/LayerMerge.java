// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import agentsandbox.core.run.SafeRemoval;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.ArrayList;
import java.util.List;

/**
 * Merges what one sandbox changed in a view of the home (its overlay's upper dir) into the
 * user's layer of that directory, when the sandbox has ended.
 *
 * <p>Only renames: an entry of the run's upper dir replaces the layer's entry of the same
 * name (a directory that is not opaque merges into the layer's directory of the same name,
 * entry by entry). Whiteouts and opaque directories move as they are, so the layer hides
 * what the sandbox deleted. Nothing is copied and nothing in the host's directory is
 * touched. Two sandboxes that changed the same file: the one that ends later wins, whole
 * file for whole file. The run's upper dir and the layer are on one file system, below
 * {@link HomeLayers#root}, and no sandbox can reach either while this runs (the sandbox
 * has ended; the store is hidden in every sandbox).
 */
public final class LayerMerge {
    private LayerMerge() {}

    /** The overlay's mark of an opaque directory, in the user namespace of attributes. */
    static final String OPAQUE = "overlay.opaque";

    /** An open lock on the store: merges and the user's moves take turns. */
    public static FileLock lock(Path root) throws IOException {
        FileChannel ch = FileChannel.open(HomeLayers.lock(root), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            return ch.lock();
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Releases a {@link #lock} and closes its file. */
    public static void unlock(FileLock lock) {
        try {
            lock.release();
            lock.channel().close();
        } catch (IOException e) {
            // closing the file releases it in any case
        }
    }

    /**
     * The runs below {@link HomeLayers#runs} that have ended without their changes merged:
     * those whose run directory (beside {@code run}, this run's) is gone. A run's directory
     * goes only once its sandbox has ended.
     */
    public static List<String> ended(Path root, Path run) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(HomeLayers.runs(root))) {
            for (Path p : ds) {
                String name = p.getFileName().toString();
                if (!name.equals(run.getFileName().toString())
                        && !Files.exists(run.resolveSibling(name), LinkOption.NOFOLLOW_LINKS)) {
                    out.add(name);
                }
            }
        } catch (IOException e) {
            // none yet, or unreadable: the next run tries again
        }
        return out;
    }

    /**
     * Merges the changes of the sandbox runs {@code names} (their directories below
     * {@link HomeLayers#runs}) into the layers, and removes them.
     *
     * @return one line per failure, for the user; what could not be merged stays in the run's directory
     */
    public static List<String> mergeRuns(Path root, List<String> names) {
        List<String> failures = new ArrayList<>();
        if (names.isEmpty()) {
            return failures;
        }
        FileLock lock;
        try {
            lock = lock(root);
        } catch (IOException e) {
            failures.add("cannot lock " + HomeLayers.lock(root) + " (" + e.getMessage() + ")");
            return failures;
        }
        try {
            for (String name : names) {
                mergeRun(root, name, failures);
            }
        } finally {
            unlock(lock);
        }
        return failures;
    }

    private static void mergeRun(Path root, String name, List<String> failures) {
        Path run = HomeLayers.runs(root).resolve(name);
        List<Path> views;
        try (var s = Files.list(run)) {
            views = s.toList();
        } catch (NoSuchFileException e) {
            return; // merged meanwhile
        } catch (IOException e) {
            failures.add("cannot read " + run + " (" + e.getMessage() + ")");
            return;
        }
        boolean all = true;
        for (Path view : views) {
            String rel = HomeLayers.rel(view.getFileName().toString());
            Path upper = view.resolve("upper");
            if (rel == null) {
                continue;
            }
            try {
                if (Files.isDirectory(upper, LinkOption.NOFOLLOW_LINKS)) {
                    Path layer = HomeLayers.layer(root, rel);
                    if (!Files.isDirectory(HomeLayers.layers(root), LinkOption.NOFOLLOW_LINKS)) {
                        Files.createDirectory(HomeLayers.layers(root), PosixFilePermissions.asFileAttribute(
                                PosixFilePermissions.fromString("rwx------")));
                    }
                    if (!Files.exists(layer, LinkOption.NOFOLLOW_LINKS)) {
                        Files.createDirectory(layer, PosixFilePermissions.asFileAttribute(
                                PosixFilePermissions.fromString("rwx------")));
                    }
                    merge(upper, layer);
                }
            } catch (IOException | RuntimeException e) {
                all = false;
                failures.add("the sandbox's changes of ~/" + rel + " stay in " + upper + " (" + describe(e)
                        + "); free space or fix the cause, and the next run merges them");
            }
        }
        if (all) {
            remove(run);
        }
    }

    /** Moves every entry of {@code upper} into {@code layer}, as described above. */
    static void merge(Path upper, Path layer) throws IOException {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(upper)) {
            for (Path p : ds) {
                entries.add(p);
            }
        }
        for (Path from : entries) {
            Path to = layer.resolve(from.getFileName().toString());
            boolean directory = Files.isDirectory(from, LinkOption.NOFOLLOW_LINKS);
            boolean there = Files.exists(to, LinkOption.NOFOLLOW_LINKS);
            boolean thereDirectory = there && Files.isDirectory(to, LinkOption.NOFOLLOW_LINKS);
            if (directory && thereDirectory && !opaque(from)) {
                merge(from, to);
                Files.setPosixFilePermissions(to, Files.getPosixFilePermissions(from, LinkOption.NOFOLLOW_LINKS));
                Files.delete(from); // empty now: all of it moved
                continue;
            }
            if (thereDirectory) {
                remove(to);
            }
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    /** Removes {@code p} and what is below it, never following a link; best effort. */
    public static void remove(Path p) {
        SafeRemoval.removeTree(p.getParent(), p.getFileName());
    }

    /** Whether the overlay marked {@code dir} opaque (it hides the lower dirs' entries). */
    public static boolean opaque(Path dir) {
        try {
            UserDefinedFileAttributeView v = Files.getFileAttributeView(dir, UserDefinedFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (v == null || !v.list().contains(OPAQUE)) {
                return false;
            }
            ByteBuffer b = ByteBuffer.allocate(16);
            v.read(OPAQUE, b);
            b.flip();
            return "y".equals(StandardCharsets.US_ASCII.decode(b).toString());
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Whether {@code p} is an overlay whiteout: a character device 0/0. */
    public static boolean whiteout(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            long rdev = ((Number) Files.getAttribute(p, "unix:rdev", LinkOption.NOFOLLOW_LINKS)).longValue();
            return (mode & 0170000) == 0020000 && rdev == 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    static String describe(Exception e) {
        String m = e.getMessage();
        if (m != null && m.contains("No space left")) {
            return "the disk is full";
        }
        return e.getClass().getSimpleName().replace("Exception", "") + (m == null ? "" : ": " + m);
    }
}
