// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * The lower layer of a git view: a private copy, made when the run starts, of the host's git
 * dir without its object stores, which the view shows from the host's live directories.
 *
 * <p>Why not the host's git dir itself: overlayfs never looks again at a name it has looked
 * up in a lower layer. When git inside looks for {@code refs/heads/main.lock} in the moment a
 * git of the host's holds that lock (the user's commit, an IDE's fetch or {@code git status},
 * which takes {@code index.lock}, or the host's own apply of the sandbox's last commit), the
 * view keeps showing that lock after the host has removed it, and every later commit inside
 * fails with "File exists" (measured on 6.x kernels: a lower entry removed or renamed on
 * the host stays visible in the view, a lower entry created there stays invisible). A lower
 * layer nobody writes to cannot go stale, so refs, {@code packed-refs}, {@code HEAD}, the
 * index, the logs, config and hooks come from this copy: the sandbox sees the host's refs as
 * they were when it started, plus its own work, never a lock or a half-done update of the
 * host's. The host's later moves of a ref still win when the host applies
 * ({@link GitApply}).
 *
 * <p>The object stores ({@code objects}, and {@code lfs}, {@code annex}, of the git dir and of
 * every git dir below it, a submodule's under {@code modules/}) are too large to copy at each
 * start and are each an overlay of their own over the host's live directory. What lives there
 * is named by its content or by a random temporary name: a stale entry is an object that
 * exists with that very content, or one the sandbox's refs do not need. The locks that do live
 * there (a {@code commit-graph} or {@code multi-pack-index} being rewritten by a maintenance
 * of the host's) can make a {@code git gc} inside skip that file, never a commit fail.
 */
public final class GitSnapshot {
    private GitSnapshot() {}

    /** The directories of a git dir shown live from the host: content-addressed stores. */
    static final List<String> LIVE = List.of("objects", "lfs", "annex");

    /** At most this many bytes are copied into one snapshot; a larger git dir has no view. */
    public static final long MAX_BYTES = 256L << 20;

    /** At most this many files and directories are copied into one snapshot. */
    public static final int MAX_ENTRIES = 100_000;

    /**
     * Copies {@code gitDir} into {@code target} (a new directory): every directory, file and
     * link as it is (modes, times), but no lock file (a lock held on the host in that moment
     * would never go inside), no sample hook ({@link #sample}), no socket or device, and, of
     * each git dir in it (a directory with a {@code HEAD} file and an {@code objects}
     * directory), not its {@link #LIVE} directories, which are left empty (their views' mount
     * points). Returns the relative paths of those live directories, parents first.
     *
     * @throws IOException when it cannot be copied or exceeds {@link #MAX_BYTES} or
     *                     {@link #MAX_ENTRIES} (the message says which)
     */
    public static List<String> copy(Path gitDir, Path target) throws IOException {
        return copy(gitDir, target, MAX_BYTES);
    }

    /** {@link #copy(Path, Path)} with another limit of bytes. */
    static List<String> copy(Path gitDir, Path target, long maxBytes) throws IOException {
        Copy c = new Copy(maxBytes);
        Files.createDirectory(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        c.dir(gitDir, target, "");
        return c.live;
    }

    /**
     * Whether {@code name} in directory {@code rel} is one of the sample hooks {@code git init}
     * writes ({@code hooks/pre-commit.sample}): git never runs them, and they are most of the
     * files of a young git dir, each copied at every start and removed at every end.
     */
    static boolean sample(String rel, String name) {
        return name.endsWith(".sample") && (rel.equals("hooks") || rel.endsWith("/hooks"));
    }

    /**
     * A file or directory the user cannot read in the host's git dir (one a {@code sudo git}
     * left): present in the view and unreadable there too, as git would meet it on the host.
     */
    private static void unreadable(Path copy) throws IOException {
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("---------"));
    }

    private static final class Copy {
        final List<String> live = new ArrayList<>();
        final long maxBytes;
        long bytes;
        int entries;

        Copy(long maxBytes) {
            this.maxBytes = maxBytes;
        }

        void dir(Path from, Path to, String rel) throws IOException {
            boolean gitDir = Files.isRegularFile(from.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)
                    && Files.isDirectory(from.resolve("objects"), LinkOption.NOFOLLOW_LINKS);
            List<Path> children = new ArrayList<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(from)) {
                for (Path e : entries) {
                    children.add(e);
                }
            }
            // git reads the loose refs before packed-refs: copied in that order, a ref git of
            // the host's packs meanwhile is in one of the two copies
            for (int i = 0; i < children.size(); i++) {
                if (children.get(i).getFileName().toString().equals("packed-refs")) {
                    children.add(children.remove(i));
                    break;
                }
            }
            for (Path e : children) {
                String name = e.getFileName().toString();
                String childRel = rel.isEmpty() ? name : rel + "/" + name;
                if (++entries > MAX_ENTRIES) {
                    throw new IOException("more than " + MAX_ENTRIES + " files outside its objects");
                }
                BasicFileAttributes a;
                try {
                    a = Files.readAttributes(e, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException gone) {
                    continue; // removed by a git of the host's in the meantime
                }
                Path copy = to.resolve(name);
                if (a.isDirectory()) {
                    if (gitDir && LIVE.contains(name)) {
                        Files.createDirectory(copy);
                        live.add(childRel);
                        continue;
                    }
                    Files.copy(e, copy, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    try {
                        dir(e, copy, childRel);
                    } catch (NoSuchFileException gone) {
                        // removed meanwhile: empty in the view
                    } catch (AccessDeniedException denied) {
                        unreadable(copy);
                    }
                } else if (a.isSymbolicLink()) {
                    Files.createSymbolicLink(copy, Files.readSymbolicLink(e));
                } else if (a.isRegularFile() && !name.endsWith(".lock") && !sample(rel, name)) {
                    bytes += a.size();
                    if (bytes > maxBytes) {
                        throw new IOException("more than " + (maxBytes >> 20) + " MiB outside its objects");
                    }
                    try {
                        Files.copy(e, copy, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    } catch (NoSuchFileException gone) {
                        // removed meanwhile (a ref packed)
                    } catch (AccessDeniedException denied) {
                        Files.deleteIfExists(copy);
                        Files.createFile(copy);
                        unreadable(copy);
                    }
                }
            }
        }
    }
}
