// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.PresetPath;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Where the git repository around a working directory keeps its files, found the way
 * git finds it: from the directory upwards to the first {@code .git} directory or
 * {@code .git} file ({@code gitdir: …}, as in linked worktrees and submodules).
 *
 * @param workTree       the directory that holds {@code .git}
 * @param gitDir         the repository's own git dir ({@code .git}, or the worktree's
 *                       private dir under the main repository's {@code worktrees/})
 * @param commonDir      the git dir shared by all worktrees (hooks, config, objects, refs)
 * @param linkedWorktree whether {@code .git} is a file pointing at a worktree git dir
 *                       with a {@code commondir} of its own
 * @param currentBranch  the branch HEAD points to, empty when HEAD is detached
 */
public record GitLayout(Path workTree, Path gitDir, Path commonDir, boolean linkedWorktree,
        Optional<String> currentBranch) {

    private static final String BRANCH_PREFIX = "ref: refs/heads/";

    /** The repository around {@code workDir}, or empty when there is none. */
    public static Optional<GitLayout> discover(Path workDir) {
        for (Path dir = workDir.toAbsolutePath().normalize(); dir != null; dir = dir.getParent()) {
            Path dotGit = dir.resolve(".git");
            if (Files.isDirectory(dotGit)) {
                if (Files.isRegularFile(dotGit.resolve("HEAD"))) {
                    return Optional.of(layout(dir, dotGit));
                }
            } else if (Files.isRegularFile(dotGit)) {
                Optional<Path> target = gitdirFile(dotGit);
                if (target.isPresent() && Files.isRegularFile(target.get().resolve("HEAD"))) {
                    return Optional.of(layout(dir, target.get()));
                }
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> gitdirFile(Path dotGit) {
        String target = gitfileTarget(read(dotGit));
        return target == null ? Optional.empty() : Optional.of(dotGit.getParent().resolve(target).normalize());
    }

    /**
     * The path a {@code .git} file's content {@code text} names, read as git reads it
     * ({@code read_gitfile_gently}): after exactly {@code "gitdir: "}, with only the line
     * ends at its end taken off (a space there is part of the name), up to a NUL byte (git
     * takes it as a C string); null when git takes it for no {@code .git} file.
     */
    public static String gitfileTarget(String text) {
        if (!text.startsWith("gitdir: ")) {
            return null;
        }
        String target = pathText(text.substring("gitdir: ".length()));
        return target.isEmpty() ? null : target;
    }

    /** A path in a file of git's ({@code commondir}, a {@code .git} file's rest): its line ends off, up to a NUL. */
    static String pathText(String text) {
        int end = text.length();
        while (end > 0 && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
            end--;
        }
        int nul = text.indexOf('\0');
        return text.substring(0, nul >= 0 && nul < end ? nul : end);
    }

    private static GitLayout layout(Path workTree, Path gitDir) {
        Path commonDir = gitDir;
        boolean linked = false;
        Path commondirFile = gitDir.resolve("commondir");
        if (Files.isRegularFile(commondirFile)) {
            String target = pathText(read(commondirFile));
            if (!target.isEmpty()) {
                commonDir = gitDir.resolve(target).normalize();
                linked = !commonDir.equals(gitDir);
            }
        }
        if (linked && !isWorktreeOf(workTree, gitDir, commonDir)) {
            // .git and commondir are files a sandbox can write: a shared git dir is believed
            // only where git itself made it, or an earlier run could name any directory here
            // and have the next one make it writable
            commonDir = gitDir;
            linked = false;
        }
        String head = read(gitDir.resolve("HEAD")).strip();
        Optional<String> branch = head.startsWith(BRANCH_PREFIX)
                ? Optional.of(head.substring(BRANCH_PREFIX.length()))
                : Optional.empty();
        return new GitLayout(workTree, gitDir, commonDir, linked, branch);
    }

    /**
     * Whether {@code gitDir} is a linked worktree's git dir that git made in the shared git
     * dir {@code commonDir}: {@code commonDir} is a repository (HEAD, objects, refs),
     * {@code gitDir} is {@code commonDir/worktrees/NAME}, and its {@code gitdir} file points
     * back at this worktree's {@code .git}. A sandbox can forge the worktree's files, not
     * those inside a repository outside its reach.
     */
    static boolean isWorktreeOf(Path workTree, Path gitDir, Path commonDir) {
        if (!isRepository(commonDir)) {
            return false;
        }
        Path realGitDir = Resolver.realPath(gitDir);
        Path realCommon = Resolver.realPath(commonDir);
        if (realGitDir == null || realCommon == null || realGitDir.getParent() == null
                || !realGitDir.getParent().equals(realCommon.resolve("worktrees"))) {
            return false;
        }
        // read as git reads it (up to a NUL, line ends off): a path no file system takes is no worktree
        String back = pathText(read(gitDir.resolve("gitdir"))).strip();
        Path dotGit = workTree.resolve(".git");
        Path realWorkTree = Resolver.realPath(workTree);
        if (back.isEmpty() || realWorkTree == null || !Files.isRegularFile(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            return false; // a .git that is a link may be another worktree's, borrowed
        }
        try {
            Path pointed = Resolver.realPath(gitDir.resolve(back).normalize());
            return pointed != null && pointed.equals(realWorkTree.resolve(".git"));
        } catch (java.nio.file.InvalidPathException e) {
            return false;
        }
    }

    /**
     * The common dir git takes for {@code gitDir}, as git's {@code get_common_dir_noenv}
     * finds it: when {@code gitDir/commondir} exists, whoever made it, its text without the
     * line ends at its end, relative to {@code gitDir} unless absolute; else {@code gitDir}.
     * git then reads that directory's config and runs its hooks. A commondir that cannot
     * be read here (too large, not a regular file) counts as none: the check after a run
     * reports every commondir a run created or changed in any case.
     */
    public static Path followedCommonDir(Path gitDir) {
        Path file = gitDir.resolve("commondir");
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return gitDir;
        }
        Path real = Files.isSymbolicLink(file) ? Resolver.realPath(file) : file; // git follows a link here
        byte[] data = real == null ? null : agentsandbox.core.host.HostRead.bytes(real, MAX_READ);
        if (data == null) {
            return gitDir;
        }
        int end = 0;
        while (end < data.length && data[end] != 0) {
            end++; // git reads it as a C string
        }
        while (end > 0 && (data[end - 1] == '\n' || data[end - 1] == '\r')) {
            end--;
        }
        if (end == 0) {
            return gitDir; // git refuses an empty one
        }
        try {
            return gitDir.resolve(new String(data, 0, end, StandardCharsets.UTF_8)).normalize();
        } catch (java.nio.file.InvalidPathException e) {
            return gitDir;
        }
    }

    /** A repository's git dir: HEAD, objects and refs. */
    static boolean isRepository(Path dir) {
        return Files.isRegularFile(dir.resolve("HEAD")) && Files.isDirectory(dir.resolve("objects"))
                && Files.isDirectory(dir.resolve("refs"));
    }

    /** Git's own limit for a {@code .git} file is 1 MiB; HEAD and commondir are one line. */
    static final int MAX_READ = 64 * 1024;

    /**
     * A small file of a repository a sandbox may have written: only a regular file (never
     * a FIFO or a device, which could block), at most {@link #MAX_READ} bytes; anything
     * else reads as empty, as if it were not there.
     */
    private static String read(Path file) {
        if (!Files.isRegularFile(file)) {
            return "";
        }
        try (var in = new java.io.FileInputStream(file.toString())) { // fewer layers than NIO's stream
            byte[] bytes = in.readNBytes(MAX_READ + 1);
            return bytes.length > MAX_READ ? "" : new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /**
     * What {@code @git} protects: the shared hooks and config read-only; in a linked
     * worktree also the shared git dir and the worktree's own git dir writable, since a
     * commit there writes objects, refs and lock files outside the working directory.
     * Writable entries come first; the read-only ones are deeper and win.
     */
    public List<PresetPath> gitPaths() {
        List<PresetPath> out = new ArrayList<>();
        if (linkedWorktree) {
            out.add(new PresetPath(commonDir, Access.RW));
            out.add(new PresetPath(gitDir, Access.RW));
        }
        out.add(new PresetPath(commonDir.resolve("hooks"), Access.RO));
        out.add(new PresetPath(commonDir.resolve("config"), Access.RO));
        return out;
    }

    /**
     * The files below {@code dir} (branch names hold slashes) that are regular files or
     * links to one; a link to a directory is not entered. Plain listings: the stream
     * library's walk would be set up at the start of every run with this preset.
     */
    private static void branchRefs(Path dir, List<Path> out) throws IOException {
        try (java.nio.file.DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (Files.isDirectory(e, LinkOption.NOFOLLOW_LINKS)) {
                    branchRefs(e, out);
                } else if (Files.isRegularFile(e)) {
                    out.add(e);
                }
            }
        }
    }

    /**
     * What {@code @git-strict} adds: every loose branch ref except the current branch,
     * {@code refs/tags} and {@code packed-refs} read-only. {@code refs/heads} itself stays
     * writable so the current branch can move. With a detached HEAD every branch is protected.
     */
    public List<PresetPath> strictPaths() {
        List<PresetPath> out = new ArrayList<>();
        Path heads = commonDir.resolve("refs").resolve("heads");
        if (Files.isDirectory(heads)) {
            List<Path> refs = new ArrayList<>();
            try {
                branchRefs(heads, refs);
            } catch (IOException e) {
                throw new SandboxException("cannot list the branches under " + heads + ": " + e.getMessage(),
                        "@git-strict needs to read refs/heads; check its permissions");
            }
            refs.sort(null);
            for (Path ref : refs) {
                String name = heads.relativize(ref).toString();
                if (currentBranch.isEmpty() || !currentBranch.get().equals(name)) {
                    out.add(new PresetPath(ref, Access.RO));
                }
            }
        }
        out.add(new PresetPath(commonDir.resolve("refs").resolve("tags"), Access.RO));
        out.add(new PresetPath(commonDir.resolve("packed-refs"), Access.RO));
        return out;
    }
}
