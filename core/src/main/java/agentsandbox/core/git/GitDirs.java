// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import agentsandbox.core.host.HostRead;
import agentsandbox.core.rules.Resolver;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The git directories whose config and hooks the user's next git command in a working
 * directory will use, found where git looks, not by walking the tree: the repository
 * around the working directory (its git dir and, for a linked worktree, the shared
 * one), its submodules' git dirs under {@code modules/} (nested too), the worktrees'
 * {@code config.worktree}, and the repositories at the gitlinks of its index and the
 * paths of its {@code .gitmodules} (git status recurses into them), to a bounded depth.
 * Outside any repository: the repositories directly below the working directory.
 *
 * <p>As git does, a {@code commondir} file in any git dir is followed: git takes that
 * repository's config and hooks from the directory it names, whether or not git made it.
 * The files a config includes ({@code include.path}, {@code includeIf.*.path}) are
 * watched like the config itself, whether they exist yet or not.
 *
 * <p>Everything read here may have been written by a sandbox: reads are bounded
 * ({@link HostRead}), and counts and depths are capped. Each cap that is reached is kept
 * in {@link #limits}: beyond it, nothing was looked at.
 */
public final class GitDirs {
    /** Nested repositories are followed this many levels below the top one. */
    static final int MAX_DEPTH = 3;
    /** At most this many git dirs are looked at. */
    public static final int MAX_DIRS = 1024;
    /** An index larger than this is not read for gitlinks (.gitmodules still is). */
    static final int MAX_INDEX = 32 * 1024 * 1024;
    public static final int MAX_SMALL = 1024 * 1024;
    private static final int MAX_LIST = 1000;

    /** Git dirs, top repository first. */
    final Set<Path> dirs = new LinkedHashSet<>();
    /** Files whose content decides what git runs (config, config.worktree, hooks dirs, .gitmodules, .git files, indexes, commondir). */
    public final Set<Path> watched = new LinkedHashSet<>();
    /** The files of {@link #watched} that git reads as config: config, config.worktree and the files they include. */
    public final Set<Path> configs = new LinkedHashSet<>();
    /**
     * The files of {@link #configs} that git reads as a repository's config (not only as
     * included): git follows includes from these, counting its depth from them.
     */
    public final Set<Path> roots = new LinkedHashSet<>();
    /** Each bound that was reached, where and what: nothing beyond it was looked at. */
    public final List<GitLimit> limits = new ArrayList<>();
    /**
     * Common dirs named by a commondir that git did not make (see {@link GitLayout#isWorktreeOf}):
     * watched, since git obeys them, but never offered for protection ({@link #protectable}),
     * since a rule for them could open up whatever directory a planted file names.
     */
    private final Set<Path> forged = new LinkedHashSet<>();
    /** Git dirs not looked at because {@link #MAX_DIRS} were already. */
    private int refused;
    /** The home for {@code ~/} in includes; null when unknown. */
    private final Path home;
    /**
     * Where the git dirs of nested repositories belong: the top repository's work tree and
     * common dir (a submodule's under {@code modules/}). One a {@code .git} file names
     * elsewhere is watched, never offered for protection (see {@link #forged}): a read-only
     * rule for it would show a later sandbox a git dir it cannot otherwise see.
     */
    private final List<Path> homes = new ArrayList<>();

    private GitDirs(Path home) {
        this.home = home;
    }

    /** Whether only the first repository's own git dir is looked at ({@link #own}). */
    private boolean alone;

    /** Where it was found from. */
    private Path workDir;
    /** The state it depends on most when it was found (see {@link #state}). */
    private List<Object> seen;

    /**
     * {@code found} when it was found from {@code workDir} and the repository's index,
     * {@code .gitmodules}, {@code .git} and {@code modules/} look as they did then, else
     * {@link #find} again: one start finds them for the policy's rules and needs them again
     * for the snapshot before the run. Never for the check after the run, which must see
     * what is there ({@link #fresh}).
     */
    public static GitDirs reuse(GitDirs found, Path workDir) {
        if (found != null && workDir.equals(found.workDir) && found.seen != null
                && found.seen.equals(state(found))) {
            return found;
        }
        return find(workDir);
    }

    /** {@link #reuse(GitDirs, Path)}, where {@code found} must also have been found with {@code home}. */
    public static GitDirs reuse(GitDirs found, Path workDir, Path home) {
        if (found != null && java.util.Objects.equals(home, found.home) && workDir.equals(found.workDir)
                && found.seen != null && found.seen.equals(state(found))) {
            return found;
        }
        return find(workDir, GitLayout.discover(workDir), home);
    }

    private static List<Object> state(GitDirs g) {
        List<Object> out = new ArrayList<>();
        int n = 0;
        for (Path p : g.watched) {
            String name = p.getFileName().toString();
            if (name.equals("index") || name.equals(".gitmodules") || name.equals(".git")) {
                out.add(stat(p));
            }
            if (++n > 16) {
                break;
            }
        }
        for (Path d : g.dirs) {
            out.add(stat(d.resolve("modules")));
            break;
        }
        return out;
    }

    private static Object stat(Path p) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(p,
                    java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            Object key = a.fileKey(); // device and inode, compared as they are (no text made of them)
            return List.of(key == null ? "no key" : key, a.size(), a.lastModifiedTime());
        } catch (IOException e) {
            return "absent";
        }
    }

    public static GitDirs find(Path workDir) {
        return find(workDir, GitLayout.discover(workDir));
    }

    /** {@link #find} with the repository above {@code workDir} already found. */
    public static GitDirs find(Path workDir, Optional<GitLayout> layout) {
        return find(workDir, layout, null);
    }

    /** {@link #find(Path, Optional)}, with the user's home for {@code ~/} in includes. */
    public static GitDirs find(Path workDir, Optional<GitLayout> layout, Path home) {
        GitDirs g = findNow(workDir, layout, home);
        g.workDir = workDir;
        g.seen = state(g);
        return g;
    }

    /** {@link #find} for the check after a run: what is there now. */
    public static GitDirs fresh(Path workDir) {
        return fresh(workDir, null);
    }

    /** {@link #fresh(Path)}, with the user's home for {@code ~/} in includes. */
    public static GitDirs fresh(Path workDir, Path home) {
        return findNow(workDir, GitLayout.discover(workDir), home);
    }

    /**
     * Whether directory {@code dir} is a git dir itself, as git's discovery tells one where it
     * finds no {@code .git} (a bare repository, or one whose {@code core.worktree} names its
     * work tree): a {@code HEAD} file and {@code objects} and {@code refs} directories in it.
     */
    public static boolean isGitDirItself(Path dir) {
        return Files.isRegularFile(dir.resolve("HEAD")) && Files.isDirectory(dir.resolve("objects"))
                && Files.isDirectory(dir.resolve("refs"));
    }

    /**
     * {@link #own} of a directory that is a git dir itself ({@link #isGitDirItself}): its
     * config and the files it includes, its hooks, its commondir.
     */
    public static GitDirs ownGitDir(Path gitDir, Path home) {
        GitDirs g = new GitDirs(home);
        g.alone = true;
        Path dir = gitDir.toAbsolutePath().normalize();
        g.homes.add(dir);
        Path common = GitLayout.followedCommonDir(dir);
        if (!common.equals(dir)) {
            g.forged.add(common);
        }
        g.repo(null, dir, common, 0);
        return g;
    }

    /**
     * The git dir of the repository at {@code workDir} alone: its config and the files it
     * includes, its {@code config.worktree}, its hooks, its commondir, and those of the common
     * dir it leads to; none of the repositories it leads to (its submodules, the repositories
     * at its gitlinks, its linked worktrees). Where finding all of those takes long (a
     * sandbox can make thousands), the live watch looks at these first.
     */
    public static GitDirs own(Path workDir, Optional<GitLayout> layout, Path home) {
        return findNow(workDir, layout, home, true);
    }

    private static GitDirs findNow(Path workDir, Optional<GitLayout> layout, Path home) {
        return findNow(workDir, layout, home, false);
    }

    private static GitDirs findNow(Path workDir, Optional<GitLayout> layout, Path home, boolean alone) {
        GitDirs g = new GitDirs(home);
        g.alone = alone;
        Path work = workDir.toAbsolutePath().normalize();
        Optional<GitLayout> top = layout;
        // a repository created here would take over the user's next git command in this directory
        g.watched.add(work.resolve(".git"));
        if (top.isPresent()) {
            GitLayout t = top.get();
            g.homes.add(t.workTree() != null ? t.workTree() : work);
            g.homes.add(t.commonDir());
            // the shared dir git itself takes: a commondir planted in the git dir is obeyed too
            Path common = GitLayout.followedCommonDir(t.gitDir());
            if (!common.equals(t.commonDir())) {
                g.forged.add(common);
            }
            g.repo(t.workTree(), t.gitDir(), common, 0);
        } else {
            g.homes.add(work);
            g.childRepos(work);
        }
        if (g.refused > 0) {
            g.limit(new GitLimit(work, "leads to more than " + MAX_DIRS + " git dirs: " + g.refused
                    + " more, and what they lead to, were not looked at"));
        }
        return g;
    }

    /**
     * The paths of {@link #watched} that are a git dir's {@code config}, {@code config.worktree}
     * or {@code hooks}; never a file only included, nor anything a forged commondir leads to
     * (a read-only rule there could show what the policy hides).
     */
    public List<Path> protectable() {
        List<Path> out = new ArrayList<>();
        for (Path p : watched) {
            String name = p.getFileName().toString();
            boolean config = name.equals("config") || name.equals("config.worktree");
            // and a linked worktree's commondir: rewritten, it sends that worktree's git to a
            // config and hooks of the sandbox's (one made anew is the live watch's)
            boolean commondir = name.equals("commondir") && p.getParent() != null && p.getParent().getParent() != null
                    && p.getParent().getParent().getFileName() != null
                    && p.getParent().getParent().getFileName().toString().equals("worktrees");
            if ((config && roots.contains(p) || name.equals("hooks") || commondir) && !fromForged(p)
                    && Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * The directories right below {@code top} that hold a {@code .git} (a repository of
     * their own, tracked or not: where an IDE looks for repositories). Every entry is looked
     * at, however many there are: a sandbox that made thousands of entries before its
     * repository would otherwise hide it from the views and the live watch.
     */
    public static List<Path> reposBelow(Path top) {
        return reposBelow(top, false);
    }

    /**
     * {@link #reposBelow(Path)}, and with {@code itself} also the directories there that are a
     * git dir themselves ({@link #isGitDirItself}): git's discovery takes one as a repository
     * when it runs in it, or below it.
     */
    public static List<Path> reposBelow(Path top, boolean itself) {
        List<Path> out = new ArrayList<>();
        if (top == null) {
            return out;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(top)) {
            for (Path e : entries) {
                if (e.getFileName().toString().equals(".git")) {
                    continue;
                }
                if (Files.exists(e.resolve(".git"), LinkOption.NOFOLLOW_LINKS) || itself && isGitDirItself(e)) {
                    out.add(e);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing below it to look at
        }
        return out;
    }

    /**
     * Whether the repository led to more git dirs than are looked at ({@link #MAX_DIRS}): the
     * rest get no read-only config and hooks and no watch, so no run starts there.
     */
    public boolean tooMany() {
        return refused > 0;
    }

    /** The git dirs found, top repository first. */
    public Set<Path> gitDirs() {
        return java.util.Collections.unmodifiableSet(dirs);
    }

    /** Whether {@code dir} is a common dir only a planted {@code commondir} names. */
    boolean forged(Path dir) {
        return forged.contains(dir);
    }

    private boolean fromForged(Path p) {
        for (Path f : forged) {
            if (f.equals(p.getParent()) || p.startsWith(f.resolve("modules")) || p.startsWith(f.resolve("worktrees"))) {
                return true;
            }
        }
        return false;
    }

    private void childRepos(Path work) {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(work)) {
            int n = 0;
            for (Path e : entries) {
                if (++n > MAX_LIST) {
                    limits.add(new GitLimit(work, "holds more than " + MAX_LIST + " entries: the repositories"
                            + " among the rest were not looked at"));
                    break;
                }
                Path dotGit = e.resolve(".git");
                if (Files.exists(dotGit, LinkOption.NOFOLLOW_LINKS)) {
                    nested(e, 1);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing of it to protect
        }
    }

    private void repo(Path workTree, Path gitDir, Path commonDir, int depth) {
        if (dirs.contains(gitDir)) {
            return;
        }
        if (dirs.size() >= MAX_DIRS) {
            refused++;
            return;
        }
        dirs.add(gitDir);
        gitDirFiles(gitDir);
        if (!commonDir.equals(gitDir) && dirs.add(commonDir)) {
            gitDirFiles(commonDir);
        }
        if (alone) {
            return;
        }
        if (workTree != null) {
            // first, so that a submodule's git dir is reached with its work tree
            nestedRepos(workTree, gitDir, commonDir, depth);
        }
        modules(commonDir.resolve("modules"), depth, 0);
        worktrees(commonDir.resolve("worktrees"));
    }

    /** The repositories at the gitlinks of the index and the paths of .gitmodules. */
    private void nestedRepos(Path workTree, Path gitDir, Path commonDir, int depth) {
        watched.add(workTree.resolve(".git"));
        Path gitmodules = workTree.resolve(".gitmodules");
        watched.add(gitmodules);
        Set<String> paths = new LinkedHashSet<>();
        Path index = gitDir.resolve("index");
        Read read = gitlinks(index, sha256(commonDir) ? 32 : 20);
        if (read.tooLarge() >= 0) {
            limit(new GitLimit(index, "is " + read.tooLarge() + " bytes, more than " + MAX_INDEX
                    + ": its gitlinks (the repositories git status looks into) were not read"));
        }
        paths.addAll(read.gitlinks());
        if (read.extension() != null) {
            limit(new GitLimit(index, "is written with the index extension " + read.extension() + ", with which git"
                    + " may read other entries than agent-sandbox does: the repositories at its gitlinks may not all"
                    + " have been looked at"));
        }
        byte[] modules = HostRead.bytes(gitmodules, MAX_SMALL);
        if (modules != null) {
            for (GitConfigScan.Setting s : GitConfigFile.parse(modules).entries()) {
                if (s.section().equals("submodule") && s.key().equals("path") && s.value() != null) {
                    paths.add(s.value().strip());
                }
            }
        } else if (Files.exists(gitmodules, LinkOption.NOFOLLOW_LINKS)) {
            limit(new GitLimit(gitmodules, "is not a regular file of at most " + MAX_SMALL
                    + " bytes: the submodules it names were not looked at"));
        }
        for (String p : paths) {
            if (p.isEmpty() || p.startsWith("/")) {
                continue;
            }
            if (++nestedPaths > MAX_NESTED_PATHS) {
                // a look's cost is the sandbox's to choose otherwise (an index of 400 000 gitlinks)
                limit(new GitLimit(workTree, "names more than " + MAX_NESTED_PATHS + " gitlinks and submodule paths"
                        + " with the repositories it leads to: the rest were not looked at"));
                break;
            }
            Path nested;
            try {
                nested = workTree.resolve(p).normalize();
            } catch (java.nio.file.InvalidPathException e) {
                continue;
            }
            if (!nested.startsWith(workTree) || nested.equals(workTree)) {
                continue;
            }
            if (depth >= MAX_DEPTH) {
                if (Files.exists(nested.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
                    limit(new GitLimit(nested, "is a repository nested more than " + MAX_DEPTH
                            + " levels deep: it and what is below it were not looked at"));
                }
                continue;
            }
            nested(nested, depth + 1);
        }
    }

    /** At most this many gitlinks and submodule paths are followed from one repository and what it leads to. */
    public static final int MAX_NESTED_PATHS = 10_000;
    private int nestedPaths;

    /** Keeps {@code l} once. */
    private void limit(GitLimit l) {
        if (!limits.contains(l)) {
            limits.add(l);
        }
    }


    /**
     * An index read earlier in this process, and the file state it was read at.
     *
     * @param tooLarge  the index's size when it was too large to read, else -1
     * @param extension an extension with which git may read other entries than the gitlinks
     *                  were read from ({@link GitIndex#entryReadingExtension}), or null
     */
    private record Read(Object state, List<String> gitlinks, long tooLarge, String extension) {}

    private static final Read NONE = new Read(null, List.of(), -1, null);

    /** One start looks several times (policy, its comparison, the snapshot): the index is read once. */
    private static final java.util.Map<Path, Read> INDEXES = new java.util.concurrent.ConcurrentHashMap<>();

    /** Every gitlink of the index (the file's size is the bound), or its size when it is too large. */
    private static Read gitlinks(Path index, int hash) {
        if (!Files.exists(index, LinkOption.NOFOLLOW_LINKS)) {
            return NONE;
        }
        java.util.Map<String, Object> state;
        try {
            // the change time too: a sandbox can set the modification time back, not that one
            state = Files.readAttributes(index, "unix:ino,dev,size,ctime,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return NONE;
        }
        Read cached = INDEXES.get(index);
        if (cached != null && cached.state().equals(state)) {
            return cached;
        }
        long size = (Long) state.get("size");
        Read read;
        if (size > MAX_INDEX) {
            read = new Read(state, List.of(), size, null);
        } else {
            byte[] bytes = HostRead.bytes(index, MAX_INDEX);
            read = new Read(state, List.copyOf(GitIndex.gitlinks(bytes, Integer.MAX_VALUE, hash)), -1,
                    GitIndex.entryReadingExtension(bytes));
        }
        if (INDEXES.size() < MAX_DIRS) {
            INDEXES.put(index, read);
        }
        return read;
    }

    /**
     * Whether the repository of common dir {@code commonDir} names its objects by SHA-256
     * ({@code extensions.objectFormat}, read as git reads its config): its index's entries are
     * longer.
     */
    private static boolean sha256(Path commonDir) {
        byte[] config = HostRead.bytes(commonDir.resolve("config"), MAX_SMALL);
        if (config == null || !new String(config, java.nio.charset.StandardCharsets.ISO_8859_1)
                .toLowerCase(java.util.Locale.ROOT).contains("objectformat")) {
            return false; // most never say it: parsed only where it may be said
        }
        for (GitConfigScan.Setting s : GitConfigFile.parse(config).entries()) {
            if (s.section().equalsIgnoreCase("extensions") && s.subsection() == null
                    && s.key().equalsIgnoreCase("objectformat") && "sha256".equalsIgnoreCase(s.value())) {
                return true;
            }
        }
        return false;
    }

    /** The repository whose {@code .git} is in {@code workTree}, if it is one. */
    private void nested(Path workTree, int depth) {
        Path dotGit = workTree.resolve(".git");
        watched.add(dotGit);
        Path gitDir = dotGit;
        if (Files.isRegularFile(dotGit, LinkOption.NOFOLLOW_LINKS)) {
            byte[] text = HostRead.bytes(dotGit, MAX_SMALL); // git's own bound for a .git file
            String target = GitLayout.gitfileTarget(text == null ? "" : new String(text, StandardCharsets.UTF_8));
            if (target == null) {
                return;
            }
            gitDir = workTree.resolve(target).normalize();
            boolean belongs = false;
            for (Path h : homes) {
                belongs |= gitDir.startsWith(h);
            }
            if (!belongs) {
                forged.add(gitDir);
            }
        } else if (!Resolver.isRealDirectory(dotGit)) {
            return;
        }
        if (!Files.isDirectory(gitDir) || !Files.isRegularFile(gitDir.resolve("HEAD"))) {
            return; // not a git dir: a .git file may name any directory
        }
        // git follows a commondir in any git dir, made by git or not
        Path common = GitLayout.followedCommonDir(gitDir);
        if (!common.equals(gitDir) && (forged.contains(gitDir) || !GitLayout.isWorktreeOf(workTree, gitDir, common))) {
            forged.add(common);
        }
        repo(workTree, gitDir, common, depth);
    }

    private void gitDirFiles(Path gitDir) {
        config(gitDir.resolve("config"));
        config(gitDir.resolve("config.worktree"));
        watched.add(gitDir.resolve("hooks"));
        watched.add(gitDir.resolve("index"));
        watched.add(gitDir.resolve("commondir"));
    }

    /** A config file and, followed as git follows them, the files it includes. */
    private void config(Path file) {
        watched.add(file);
        configs.add(file);
        roots.add(file);
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        GitConfigScan.Scan scan = GitConfigScan.scan(file, home);
        for (Path p : scan.included()) {
            watched.add(p);
            configs.add(p);
        }
        for (GitLimit l : scan.limits()) {
            limit(l);
        }
    }

    /** Submodules' git dirs: {@code modules/NAME}, where a name may hold slashes, and their own modules. */
    private void modules(Path dir, int depth, int level) {
        if (!Resolver.isRealDirectory(dir)) {
            return;
        }
        if (level > 8) {
            limit(new GitLimit(dir, "is nested more than 8 levels below modules/: the submodule git dirs"
                    + " below it were not looked at"));
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            int n = 0;
            for (Path e : entries) {
                if (++n > MAX_LIST) {
                    limit(new GitLimit(dir, "holds more than " + MAX_LIST + " entries: the submodule git dirs"
                            + " among the rest were not looked at"));
                    break;
                }
                if (!Resolver.isRealDirectory(e)) {
                    continue;
                }
                if (Files.isRegularFile(e.resolve("HEAD"), LinkOption.NOFOLLOW_LINKS)) {
                    // its work tree is reached through the gitlinks; here only its own files
                    repo(null, e, e, depth + 1);
                } else {
                    modules(e, depth, level + 1);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing more to find here
        }
    }

    private void worktrees(Path dir) {
        if (!Resolver.isRealDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            int n = 0;
            for (Path e : entries) {
                if (++n > MAX_LIST) {
                    limit(new GitLimit(dir, "holds more than " + MAX_LIST + " worktrees: the rest were not looked at"));
                    break;
                }
                config(e.resolve("config.worktree"));
                // the worktree's git takes config and hooks from where this file says
                watched.add(e.resolve("commondir"));
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing more to find here
        }
    }
}
