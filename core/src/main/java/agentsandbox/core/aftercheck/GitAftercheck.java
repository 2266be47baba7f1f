// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.git.GitConfigScan;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.git.GitLimit;
import agentsandbox.core.host.HostRead;
import agentsandbox.core.text.ShellQuote;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a sandbox left in git's metadata for the host to run later. A sandbox cannot
 * change the config and hooks that existed when it started (they are read-only inside),
 * but it can create new ones: a nested repository added to the index as a gitlink with
 * {@code core.fsmonitor} in its config, a submodule's git dir, a {@code .gitmodules}
 * with {@code update = !cmd}, a {@code .git} file pointing elsewhere. The user's next
 * plain {@code git status} on the host would run them.
 *
 * <p>{@link #before} takes a snapshot of where git will look (see {@link GitDirs}):
 * type, inode, size and times of each file, nothing read. {@link #after} looks again
 * and reads only what was created or changed, with bounded reads, within a time limit.
 *
 * <p>Every bound (a count, a size, a depth, the time) is a promise that the check cannot
 * keep beyond it: when the run made the check reach one, that is a finding of its own,
 * {@link Finding#refusesNextRun() refusing the next run} until the user has looked.
 *
 * <pre>{@code
 * GitAftercheck check = GitAftercheck.before(workDir);
 * int status = execution.waitFor();
 * for (GitAftercheck.Finding f : check.after(Duration.ofSeconds(5))) { ... }
 * }</pre>
 */
public final class GitAftercheck {
    /**
     * At most this many entries of a hooks directory are looked at besides the hooks git
     * knows ({@link #HOOK_NAMES}, always looked up by name): the first in name order.
     */
    static final int MAX_HOOKS = 256;

    /** Every hook git runs (githooks(5)): looked up by name, so no number of other files hides one. */
    static final List<String> HOOK_NAMES = List.of(
            "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
            "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge",
            "pre-push", "pre-receive", "update", "proc-receive", "post-receive", "post-update",
            "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate",
            "fsmonitor-watchman", "p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
            "p4-pre-submit", "post-index-change");

    /**
     * One thing a later host git command would run.
     *
     * @param file    the file that holds it
     * @param setting the config key ({@code core.fsmonitor}), or {@code "hook"}, or a short
     *                description of what is wrong with the file
     * @param message one line saying what was found and how to get rid of it
     * @param refusesNextRun whether a bound of the check was reached here: what is beyond
     *                       it was not looked at, and the next run refuses to start until
     *                       the user has (see {@code Unsettled})
     */
    public record Finding(Path file, String setting, String message, boolean refusesNextRun) {
        public Finding(Path file, String setting, String message) {
            this(file, setting, message, false);
        }

        /** A bound reached at {@code limit}. */
        static Finding limit(GitLimit limit) {
            return new Finding(limit.file(), "limit", "the check of the git metadata stopped early: "
                    + limit.describe() + "; look at it before you run git there (git may run what was not checked):"
                    + " agent-sandbox does not start again until you have", true);
        }
    }

    /** inode, size, change and modification time, type; null fields for a missing file. */
    private record State(Object inode, long size, Object ctime, Object mtime, boolean regular, boolean directory) {
        // written out, not generated: docs/startup.md
        @Override
        public boolean equals(Object o) {
            return o instanceof State s && size == s.size && regular == s.regular && directory == s.directory
                    && java.util.Objects.equals(inode, s.inode) && java.util.Objects.equals(ctime, s.ctime)
                    && java.util.Objects.equals(mtime, s.mtime);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(inode, size, ctime, mtime);
        }
    }

    final Path workDir;
    final Path home;
    private final Map<Path, State> states = new HashMap<>();
    /** Where the live watch looks for repositories a sandbox creates, and those already there. */
    Path top;
    /**
     * The repositories right below {@link #top} before the run, each with its identity
     * ({@link #identity}): one whose path now leads elsewhere (its directory renamed away and
     * a link or another directory put in its place) is looked at as a new one.
     */
    final Map<Path, Object> reposBefore = new HashMap<>();
    /** The repository git finds from {@code workDir}; none where there is none, or it cannot be read. */
    private static Optional<GitLayout> layoutAround(Path workDir) {
        try {
            return GitLayout.discover(workDir.toAbsolutePath().normalize());
        } catch (RuntimeException e) {
            return Optional.empty(); // no repository to speak of: the working directory
        }
    }

    /** The git dirs anywhere in the work tree, for the live watch ({@link TreeGitDirs}); null outside a repository. */
    TreeGitDirs tree;

    /** Ends the listing of the work tree of a run that has no live watch (the git presets off). */
    public void unwatched() {
        if (tree != null) {
            tree.closeWatch();
        }
    }

    /** The bounds already reached before the run: not the run's doing. */
    private final Set<GitLimit> limitsBefore = new HashSet<>();

    private GitAftercheck(Path workDir, Path home) {
        this.workDir = workDir;
        this.home = home;
    }

    /** The snapshot before the sandbox starts. */
    public static GitAftercheck before(Path workDir) {
        return before(workDir, null);
    }

    /**
     * The snapshot before the sandbox starts, with the git dirs {@code found} a moment ago
     * (for the plan's {@code @git} rules) when they still hold; null to find them now.
     */
    public static GitAftercheck before(Path workDir, GitDirs found) {
        return before(workDir, found, null);
    }

    /**
     * {@link #before(Path, GitDirs)}, with the user's home, from which git reads the
     * {@code ~/} files a config includes.
     */
    public static GitAftercheck before(Path workDir, GitDirs found, Path home) {
        GitAftercheck c = new GitAftercheck(workDir, home);
        GitDirs dirs = GitDirs.reuse(found, workDir, home);
        // the repository around the working directory, found once: where the live watch looks
        // for new repositories (its work tree, else the working directory) and which git dirs
        // the listing of the work tree passes over (the project's own)
        Optional<GitLayout> layout = layoutAround(workDir);
        c.top = layout.isPresent() && layout.get().workTree() != null ? layout.get().workTree()
                : workDir.toAbsolutePath().normalize();
        for (Path repo : GitLiveWatch.childRepos(c.top)) {
            c.reposBefore.put(repo, identity(repo));
        }
        c.limitsBefore.addAll(dirs.limits);
        // the git dirs anywhere in the work tree, listed from now on, while the sandbox starts;
        // not the project's own (read-only or a view inside, with its submodules' in it), which
        // the looks take as such: every other, even one a .git file names, is a directory the
        // sandbox may write into
        List<Path> own = layout.isPresent() ? List.of(layout.get().gitDir(), layout.get().commonDir()) : List.of();
        if (!own.isEmpty()) {
            // outside a repository (a home directory, a scratch directory of any size) only the
            // repositories right below are looked at: the listing's cost grows with the tree
            c.tree = new TreeGitDirs(c.top, own);
            c.tree.startListing();
        }
        for (Path p : dirs.watched) {
            State s = state(p);
            if (s != null) {
                c.states.put(p, s);
                State dir = p.getParent() == null ? null : state(p.getParent());
                if (dir != null) {
                    c.dirInodes.put(p.getParent(), dir.inode());
                }
                if (s.directory() && p.getFileName().toString().equals("hooks")) {
                    c.dirInodes.put(p, s.inode());
                    for (Path hook : hooks(p)) {
                        State h = state(hook);
                        if (h != null) {
                            c.states.put(hook, h);
                        }
                    }
                }
            }
        }
        return c;
    }

    /**
     * What the run created or changed that git would run, one finding each. Stops after
     * {@code limit} (a file system that hangs must not hang the user's terminal) with a
     * finding that says the check did not finish.
     */
    public List<Finding> after(Duration limit) {
        return start().findings(limit);
    }

    /**
     * Starts the check after the run on a thread of its own, so that the caller can clean
     * up meanwhile; {@link Running#findings} waits for it.
     */
    public Running start() {
        Running r = ready();
        r.go();
        return r;
    }

    /**
     * The check after the run on a thread of its own, started now but waiting for
     * {@link Running#go()} (or {@link Running#findings}): a thread's start costs the end of
     * a run less made while the sandbox runs. {@link Running#cancel()} ends a check that
     * is not needed after all.
     */
    public Running ready() {
        return new Running();
    }

    /** The check after the run, under way or ready to go. */
    public final class Running {
        private final List<Finding> out = new ArrayList<>();
        private boolean going;
        private boolean cancelled;
        private boolean done;

        private Running() {
            Thread thread = new Thread(new Runnable() {
                @Override
                public void run() {
                    if (awaitGo()) {
                        List<Finding> found;
                        try {
                            found = scan();
                        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
                            // what cannot be read is said, and the next run waits for the user
                            found = List.of(new Finding(workDir, "unreadable", "the check of the git metadata in "
                                    + workDir + " could not read it (" + e.getClass().getSimpleName() + "); look at"
                                    + " .git/config, .git/hooks and nested repositories before you run git there:"
                                    + " agent-sandbox does not start again until you have", true));
                        }
                        finish(found);
                    }
                }
            }, "agent-sandbox git check");
            thread.setDaemon(true);
            thread.start();
        }

        /** Lets the check run (at once when it is ready). */
        public synchronized void go() {
            if (!cancelled) {
                going = true;
                notifyAll();
            }
        }

        /** Ends a check that has not been let go: it looks at nothing and finds nothing. */
        public synchronized void cancel() {
            if (!going) {
                cancelled = true;
                done = true;
                notifyAll();
            }
        }

        private synchronized boolean awaitGo() {
            while (!going && !cancelled) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    return false; // nobody interrupts this thread but to end it
                }
            }
            return going;
        }

        private synchronized void finish(List<Finding> found) {
            out.addAll(found);
            done = true;
            notifyAll();
        }

        /**
         * What the check found, letting it go if it has not been, waiting for it up to
         * {@code limit} from now (see {@link #after}).
         */
        public synchronized List<Finding> findings(Duration limit) {
            go();
            long end = System.nanoTime() + limit.toNanos();
            boolean interrupted = false;
            while (!done) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (!done) {
                List<Finding> partial = new ArrayList<>();
                partial.add(new Finding(workDir, "timeout", "the check of the git metadata in " + workDir
                        + " did not finish in " + limit.toSeconds() + " s; look at .git/config, .git/hooks and"
                        + " nested repositories before you run git there: agent-sandbox does not start again until"
                        + " you have", true));
                return partial;
            }
            return List.copyOf(out);
        }
    }

    private List<Finding> scan() {
        return scan(GitDirs.fresh(workDir, home));
    }

    /** Whether {@code p} is not as it was when the snapshot was taken (new, changed or gone). */
    boolean changedSince(Path p) {
        State now = state(p);
        return now == null ? states.containsKey(p) : !now.equals(states.get(p));
    }

    /**
     * Whether {@code p} existed when the snapshot was taken, and is still that file or in that
     * same directory (a git dir's config its user rewrote, say); not when the path now leads
     * into another directory (a directory on the way renamed away and another, the sandbox's,
     * put in its place).
     */
    boolean existedBefore(Path p) {
        State was = states.get(p);
        if (was == null) {
            return false;
        }
        State now = state(p);
        if (now == null || java.util.Objects.equals(now.inode(), was.inode())) {
            return true;
        }
        Object dirBefore = dirInodes.get(p.getParent());
        State dirNow = p.getParent() == null ? null : state(p.getParent());
        return dirBefore != null && dirNow != null && dirBefore.equals(dirNow.inode());
    }

    /** The inode of the directory of each watched file that existed, when the snapshot was taken. */
    private final Map<Path, Object> dirInodes = new HashMap<>();

    /** What changed since the snapshot among the files {@code dirs} watch, one finding each. */
    List<Finding> scan(GitDirs dirs) {
        return scanNow(dirs);
    }

    /**
     * {@link #scan(GitDirs)}, reading at most {@code budget[0]} bytes of the files configs
     * include, less what it read (the live watch's bound for one look).
     */
    List<Finding> scan(GitDirs dirs, long[] budget) {
        includeBudget = budget;
        try {
            return scanNow(dirs);
        } finally {
            includeBudget = null;
        }
    }

    /** What {@link #scan(GitDirs, long[])} may still read of included configs; null for no bound (the caller's thread). */
    private long[] includeBudget;

    private List<Finding> scanNow(GitDirs dirs) {
        List<Finding> out = new ArrayList<>();
        for (Path p : dirs.watched) {
            State now = state(p);
            if (now == null || now.equals(states.get(p))) {
                continue;
            }
            String name = p.getFileName().toString();
            if (dirs.configs.contains(p)) {
                // an included file's own includes were followed from the config that includes it, as git does
                config(p, now, dirs.roots.contains(p), out);
            } else if (name.equals(".gitmodules")) {
                config(p, now, false, out); // git follows no includes there
            } else if (name.equals("hooks")) {
                hooksDir(p, now, out);
            } else if (name.equals("commondir")) {
                out.add(new Finding(p, "commondir", p + " is a " + (states.containsKey(p) ? "changed" : "new")
                        + " commondir: git then takes that repository's config and hooks from the directory it names"
                        + " (" + GitLayout.followedCommonDir(p.getParent()) + "); look at it before you run git there,"
                        + " and delete it if you did not make it"));
            }
            // .git files and indexes: what they point at is in the list in its own right
        }
        for (GitLimit l : dirs.limits) {
            if (!limitsBefore.contains(l)) {
                out.add(Finding.limit(l));
            }
        }
        // a setting in an included file is found from the file and from what includes it: once
        Set<List<Object>> keys = new HashSet<>();
        List<Finding> unique = new ArrayList<>();
        for (Finding f : out) {
            if (keys.add(List.of(f.file(), f.setting(), f.refusesNextRun() ? f.message() : ""))) {
                unique.add(f);
            }
        }
        return unique;
    }

    private void hooksDir(Path dir, State now, List<Finding> out) {
        if (!now.directory()) {
            out.add(new Finding(dir, "hooks", dir + " is not a plain directory (a link?); git may run what it"
                    + " points to: look at it, and delete it if you did not make it"));
            return;
        }
        if (others(dir).total() > MAX_HOOKS) {
            out.add(Finding.limit(new GitLimit(dir, "holds more than " + MAX_HOOKS + " files besides the hooks git"
                    + " knows: only the first " + MAX_HOOKS + " by name were looked at")));
        }
        for (Path hook : hooks(dir)) {
            State h = state(hook);
            if (h == null || h.equals(states.get(hook))) {
                continue;
            }
            out.add(new Finding(hook, "hook", hook + " is a " + (states.containsKey(hook) ? "changed" : "new")
                    + " git hook that git runs on its event: look at it before you run git there, and delete it"
                    + " if you did not write it"));
        }
    }

    /**
     * The settings that run something in a config file the run created or changed, and in
     * the files it includes ({@code includes}: as git follows them).
     */
    private void config(Path file, State now, boolean includes, List<Finding> out) {
        if (!now.regular()) {
            out.add(new Finding(file, "not a file", file + " is not a regular file (a link?); git reads what it"
                    + " points to: look at it, and delete it if you did not make it"));
            return;
        }
        byte[] data = HostRead.bytes(file, GitDirs.MAX_SMALL);
        if (data == null) {
            out.add(new Finding(file, "unreadable", file + " changed and is too large (more than " + GitDirs.MAX_SMALL
                    + " bytes) or unreadable to check: look at it before you run git there: agent-sandbox does not"
                    + " start again until you have", true));
            return;
        }
        List<GitConfigScan.Found> found = new ArrayList<>();
        if (includes) {
            long[] budget = includeBudget;
            GitConfigScan.Scan scan = budget == null ? GitConfigScan.scan(file, home)
                    : GitConfigScan.scan(file, home, data.length + Math.max(0, budget[0]));
            if (budget != null) {
                budget[0] -= scan.bytesRead() - data.length; // the file itself was counted by the caller
            }
            found.addAll(scan.running());
            for (GitLimit l : scan.limits()) {
                out.add(Finding.limit(l));
            }
        } else {
            for (GitConfigScan.Setting s : GitConfigScan.running(data)) {
                found.add(new GitConfigScan.Found(file, s));
            }
        }
        for (GitConfigScan.Found f : found) {
            String key = f.setting().name();
            Path in = f.file();
            out.add(new Finding(in, key, in + " sets " + key + (in.equals(file) ? "" : " (included from " + file + ")")
                    + ", with which git runs a command: look at it before you run git there; to remove it: git config"
                    + " --file " + ShellQuote.quote(in.toString()) + " --unset-all " + ShellQuote.quote(key)));
        }
    }

    /**
     * The hooks of {@code dir} to look at: every hook git knows, looked up by name, then
     * the other files (never a {@code *.sample}, which git never runs) in name order, at
     * most {@link #MAX_HOOKS} of them.
     */
    private static List<Path> hooks(Path dir) {
        Set<Path> out = new TreeSet<>();
        for (String name : HOOK_NAMES) {
            Path hook = dir.resolve(name);
            if (Files.exists(hook, LinkOption.NOFOLLOW_LINKS)) {
                out.add(hook);
            }
        }
        out.addAll(others(dir).first());
        return List.copyOf(out);
    }

    /**
     * The files of a hooks dir that are neither a known hook nor a sample: the first
     * {@link #MAX_HOOKS} in name order, chosen from the whole listing (so the order the
     * directory lists them in hides none), and how many there are.
     */
    private record Others(List<Path> first, int total) {}

    private static Others others(Path dir) {
        // the largest of those kept on top, to be dropped when a smaller one comes
        java.util.PriorityQueue<Path> kept = new java.util.PriorityQueue<>(java.util.Comparator.reverseOrder());
        int total = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                String name = e.getFileName().toString();
                // git never runs a *.sample: not worth a look (a fresh repository has only these)
                // nor a hook agent-sandbox moved aside (GitLiveWatch): no hook git runs has that name
                if (name.endsWith(".sample") || HOOK_NAMES.contains(name) || name.contains(GitLiveWatch.ASIDE)) {
                    continue;
                }
                total++;
                kept.add(e);
                if (kept.size() > MAX_HOOKS) {
                    kept.poll();
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing to list
        }
        List<Path> first = new ArrayList<>(kept);
        first.sort(null);
        return new Others(first, total);
    }

    /**
     * What makes repository {@code repo} the one it was: whether its path is a link, its
     * directory's inode, and its {@code .git} (a directory's inode; a file's whole state,
     * since what it names may change in place).
     */
    /**
     * Whether {@code p} (not followed, if a link) changed at or after {@code millis} (epoch
     * milliseconds): its change time, which a rename, a write, a new or removed entry of a
     * directory, or a change of mode sets, and no process can set back.
     */
    static boolean changedAfter(Path p, long millis) {
        long changed = changedAt(p);
        return changed >= 0 && changed >= millis;
    }

    /** When {@code p} last changed (its change time, which no process sets back), in ms; -1 when it cannot be read. */
    static long changedAt(Path p) {
        try {
            return ((java.nio.file.attribute.FileTime) Files.getAttribute(p, "unix:ctime", LinkOption.NOFOLLOW_LINKS))
                    .toMillis();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** What {@link #state} says of {@code p} (inode, size, times, type), or "absent". */
    static Object stateOf(Path p) {
        State s = state(p);
        return s == null ? "absent" : s;
    }

    static Object identity(Path repo) {
        State dir = state(repo);
        State git = state(repo.resolve(".git"));
        Object gitIdentity = git == null ? "absent" : git.regular() ? git : git.inode();
        return List.of(Files.isSymbolicLink(repo), dir == null ? "absent" : dir.inode(), gitIdentity);
    }

    private static State state(Path p) {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return null; // most of the watched files do not exist: no exception for them
        }
        try {
            Map<String, Object> a = Files.readAttributes(p, "unix:ino,size,ctime,lastModifiedTime,mode",
                    LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) a.get("mode");
            int type = mode & 0170000;
            return new State(a.get("ino"), (Long) a.get("size"), a.get("ctime"), a.get("lastModifiedTime"),
                    type == 0100000, type == 0040000);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
