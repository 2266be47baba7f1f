// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.security.SecureRandom;

/**
 * The check of {@link GitAftercheck}, made while the sandbox runs, every
 * {@link #INTERVAL_MILLIS} (less often where one look takes long: {@link #pause}): a file
 * in a git dir with which the host's git would run a command (a config that sets
 * {@code core.fsmonitor} or a pager, a hook, a {@code commondir}) that the sandbox created
 * or changed is moved aside the moment it is seen, not at the end: an IDE runs
 * {@code git status} every few seconds, and agents run for hours. It looks where
 * {@link GitDirs} looks (the repository, its submodules, the repositories at its gitlinks;
 * where git's config and hooks are read-only inside, the new files beside them: a
 * {@code commondir}, a {@code config.worktree}, a submodule's git dir), and at the
 * repositories a sandbox creates directly below the project's top or the working directory
 * (where an IDE looks for repositories of their own), every entry there.
 *
 * <p>Only a file that did not exist when the run began, in the project's tree, is moved: one
 * that did is read-only inside (the {@code @git} preset), so a change to it is the user's own
 * on the host, and the check after the run names it. A file moved aside keeps its content under {@code NAME.agent-sandbox-<time>-<random>}
 * beside it (no hook of git's has such a name); one line each says so after the run. Files
 * outside git dirs (a {@code .gitmodules}, a config file an include names) are the project's
 * content: they are never moved, and the check after the run names them.
 */
public final class GitLiveWatch {
    /** How often the git dirs are looked at while the sandbox runs. */
    public static final long INTERVAL_MILLIS = 200;
    /** The infix of a name a file is moved aside to. */
    static final String ASIDE = ".agent-sandbox-";

    private final GitAftercheck check;
    private final Set<String> lines = new LinkedHashSet<>();
    private final Thread thread;
    private boolean stopped; // under this

    private GitLiveWatch(GitAftercheck check, List<Path> nestedViews) {
        this.check = check;
        this.nestedViews = List.copyOf(nestedViews);
        this.thread = new Thread(new Runnable() {
            @Override
            public void run() {
                watch();
            }
        }, "agent-sandbox git watch");
        thread.setDaemon(true);
    }

    /** Starts watching what {@code check} took a snapshot of. */
    public static GitLiveWatch start(GitAftercheck check) {
        return start(check, List.of());
    }

    /**
     * Starts watching what {@code check} took a snapshot of, and the git dirs of the
     * repositories nested in the project that the run sees through views of their own
     * ({@code nestedViews}, their host git dirs).
     */
    public static GitLiveWatch start(GitAftercheck check, List<Path> nestedViews) {
        GitLiveWatch w = new GitLiveWatch(check, nestedViews);
        w.thread.start();
        return w;
    }

    /** How long {@link #stop} waits for the last look. */
    static final long LAST_LOOK_MILLIS = 30_000;

    /**
     * Stops the watch (after one last look, waited for at most {@link #LAST_LOOK_MILLIS}) and
     * returns what it moved aside, one line each.
     */
    public List<String> stop() {
        synchronized (this) {
            stopped = true;
            notifyAll();
        }
        long end = System.nanoTime() + LAST_LOOK_MILLIS * 1_000_000;
        boolean interrupted = false;
        while (thread.isAlive() && System.nanoTime() - end < 0) {
            try {
                thread.join(Math.max(1, (end - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        synchronized (this) {
            if (thread.isAlive()) {
                unsettled.add(new GitAftercheck.Finding(check.top, "timeout", "the live watch of the git dirs in "
                        + check.top + " did not end its last look in " + LAST_LOOK_MILLIS / 1000 + " s: what the sandbox"
                        + " planted in the repositories there may still be in place; look at their .git/config and"
                        + " hooks before you run git there: agent-sandbox does not start again until you have", true));
            }
            return new ArrayList<>(lines);
        }
    }

    /**
     * What the watch could not look at in a repository the sandbox made or changed this run
     * (a bound reached, a last look that did not end): the next run waits for the user.
     */
    public synchronized List<GitAftercheck.Finding> unsettled() {
        return new ArrayList<>(unsettled);
    }

    private final List<GitAftercheck.Finding> unsettled = new ArrayList<>(); // under this

    /**
     * The repositories right below the project that the sandbox made, or put in another's
     * place, as the last look found them ({@link agentsandbox.core.git.MadeRepositories}).
     */
    public synchronized List<Path> madeBelow() {
        return List.copyOf(madeBelow);
    }

    private List<Path> madeBelow = List.of(); // under this

    private void watch() {
        try {
            // the first listing of the work tree, begun before the sandbox started (waited for
            // here): later looks take only what the kernel says was made meanwhile
            if (tree() != null) {
                tree.look();
            }
            if (tree != null && tree.told()) {
                listen(); // what the sandbox makes from now on wakes the first look at once
            }
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            // the looks list it again
        }
        boolean last = false;
        long took = 0;
        long ended = System.nanoTime();
        while (!last) {
            synchronized (this) {
                try {
                    // the pause, cut short by the kernel's word that something changed where the
                    // repositories are (a repository renamed into place whole): then the next look
                    // comes at once, but never sooner after the last than four times what that one
                    // took, so that events keep the watch at a fifth of a core at most; after a
                    // look of more than half a second (what a sandbox made large, read once:
                    // the next look reads only what changed since), as long as it took
                    long until = ended + pause(took) * 1_000_000;
                    while (!stopped && !changed && until - System.nanoTime() > 0) {
                        wait(Math.max(1, (until - System.nanoTime()) / 1_000_000));
                    }
                    long earliest = ended + Math.max(Math.min(4 * took, Math.max(took, 500)), 1) * 1_000_000;
                    while (!stopped && earliest - System.nanoTime() > 0) {
                        wait(Math.max(1, (earliest - System.nanoTime()) / 1_000_000));
                    }
                } catch (InterruptedException e) {
                    return;
                }
                last = stopped;
                changed = false;
            }
            lastLook = last;
            long began = System.nanoTime();
            try {
                look();
            } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
                // the next look tries again; the check after the run looks again, and says what it cannot
            }
            ended = System.nanoTime();
            took = (ended - began) / 1_000_000;
            if (!last) {
                listen();
            }
        }
        closeEvents();
    }

    /** At most this many directories are watched for events (the project's top, new repositories and their git dirs). */
    static final int MAX_LISTENED = 256;

    /**
     * The kernel's word (inotify, through the JDK's watch service) that an entry was made,
     * renamed into place or written in the project's top directory or in a repository the
     * sandbox made there, or its git dir: the watch looks at once instead of at the end of
     * its pause. Set up after the first look, off the run's start; where it cannot be had,
     * the watch looks as often as before.
     */
    private java.nio.file.WatchService events; // the watch thread's, but closed by it alone
    private boolean changed; // under this
    private final Set<Path> listened = new java.util.HashSet<>(); // the watch thread's

    private void listen() {
        if (tree != null && tree.told()) {
            if (!treeHeard) {
                // the kernel tells of every directory of the work tree: no watch service besides
                treeHeard = true;
                final TreeGitDirs heard = tree;
                Thread listener = new Thread(new Runnable() {
                    @Override
                    public void run() {
                        while (heard.told()) {
                            if (heard.await(1000)) {
                                synchronized (GitLiveWatch.this) {
                                    changed = true;
                                    GitLiveWatch.this.notifyAll();
                                }
                            }
                        }
                    }
                }, "agent-sandbox git watch events");
                listener.setDaemon(true);
                listener.start();
            }
            return;
        }
        if (events == null) {
            try {
                events = java.nio.file.FileSystems.getDefault().newWatchService();
            } catch (IOException | RuntimeException e) {
                return; // no inotify left: the pauses alone
            }
            final java.nio.file.WatchService service = events;
            Thread listener = new Thread(new Runnable() {
                @Override
                public void run() {
                    hear(service);
                }
            }, "agent-sandbox git watch events");
            listener.setDaemon(true);
            listener.start();
        }
        List<Path> dirs = new ArrayList<>();
        dirs.add(check.top);
        for (Path repo : madeBelow()) {
            dirs.add(repo);
            dirs.add(repo.resolve(".git"));
        }
        for (Path d : dirs) {
            if (listened.size() >= MAX_LISTENED || listened.contains(d)
                    || !Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            try {
                d.register(events, java.nio.file.StandardWatchEventKinds.ENTRY_CREATE,
                        java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY);
                listened.add(d);
            } catch (IOException | RuntimeException e) {
                // gone meanwhile, or no watch left: the pauses look there
            }
        }
    }

    private void hear(java.nio.file.WatchService service) {
        while (true) {
            java.nio.file.WatchKey key;
            try {
                key = service.take();
            } catch (InterruptedException | java.nio.file.ClosedWatchServiceException e) {
                return;
            }
            key.pollEvents();
            key.reset();
            synchronized (this) {
                changed = true;
                notifyAll();
            }
        }
    }

    private void closeEvents() {
        if (tree != null) {
            tree.closeWatch();
        }
        if (events != null) {
            try {
                events.close();
            } catch (IOException e) {
                // its thread ends all the same
            }
        }
    }

    /** Whether the kernel's word on the work tree is waited for by a thread of its own (the watch thread's). */
    private boolean treeHeard;
    /** Whether the look under way is the last (the watch thread's). */
    private boolean lastLook;
    /** The git dirs anywhere in the work tree (the watch thread's; made at its first look). */
    private TreeGitDirs tree;

    /** The listing of the work tree ({@link GitAftercheck#tree}); null outside a repository. */
    private TreeGitDirs tree() {
        if (tree == null) {
            tree = check.tree;
        }
        return tree;
    }

    /**
     * The git dirs anywhere deeper in the work tree ({@link TreeGitDirs}) that no other part of
     * the look took: a repository the sandbox made or cloned in {@code src/vendor/x}, a
     * directory it made into a git dir itself ({@code HEAD}, {@code objects/} and {@code refs/}
     * in {@code src/}), an untracked repository that was there. Git's discovery takes one for
     * the repository of any directory below it where you, your IDE or your editor run git, so
     * what changed in it this run (a config that sets a command, a hook, a commondir) goes
     * aside, as in a repository right below the project; what was there before the run stays.
     */
    private void lookDeeper(List<Path> below, Map<Path, String> moved) {
        // the project's own git dirs and those they lead to are not listed (TreeGitDirs); the
        // repositories right below are the first pass's
        Set<Path> known = new java.util.HashSet<>();
        for (Path r : below) {
            known.add(r);
            known.add(r.resolve(".git"));
        }
        if (tree() == null) {
            return;
        }
        List<Path> heads;
        try {
            heads = tree.look();
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            if (lastLook) {
                GitAftercheck.Finding f = new GitAftercheck.Finding(check.top, "limit", "agent-sandbox could not"
                        + " look for git dirs a sandbox made in the work tree of " + check.top + " (" + e + "): look"
                        + " for a .git, or a HEAD, below it before you run git deeper in it: agent-sandbox does not"
                        + " start again until you have", true);
                synchronized (this) {
                    unsettled.add(f);
                    lines.add(f.message());
                }
            }
            return;
        }
        for (Path dir : heads) {
            if (known.contains(dir)) {
                continue;
            }
            Object seen = changesThisRun(dir);
            if (seen == null || seen.equals(scannedAs.get(dir))) {
                continue; // nothing changed this run, or nothing since it was looked at
            }
            scannedAs.put(dir, seen);
            try {
                GitDirs own = GitDirs.ownGitDir(dir, check.home);
                // one the sandbox made or changed this run: a bound reached in it refuses the next run
                boolean made = GitAftercheck.changedAfter(dir, started - 1000);
                moveAsideIn(own, Set.of(), made ? Set.of(own) : Set.of(), moved);
            } catch (RuntimeException e) {
                // one git dir the look cannot read stops no other
            }
        }
        String bound = tree.bound();
        Object owner = ownerOf(check.top);
        for (Path u : tree.unlisted()) {
            // a directory of yours that the sandbox took your read bit from: what it hides was not looked at
            if (lastLook && owner != null && owner.equals(ownerOf(u))
                    && GitAftercheck.changedAfter(u, started - 1000)) {
                GitAftercheck.Finding f = new GitAftercheck.Finding(u, "limit", u + " was made unreadable while"
                        + " the sandbox ran, so agent-sandbox could not look for git dirs it made there: look below it"
                        + " (chmod u+r) before you run git in it: agent-sandbox does not start again until you have",
                        true);
                synchronized (this) {
                    if (unsettled.size() < 100) {
                        unsettled.add(f);
                        lines.add(f.message());
                    }
                }
            }
        }
        if (bound != null) {
            synchronized (this) {
                lines.add(bound);
            }
        }
    }

    /** Each deeper git dir's entries as last looked at ({@link #changesThisRun}; only the watch's thread). */
    private final Map<Path, Object> scannedAs = new HashMap<>();

    /**
     * Null when nothing in git dir {@code dir} that the look would move aside changed this run
     * (the directory's entries and each of them: its config, a file the config includes
     * there, its commondir, its hooks directory; and each hook; a linked worktree's own files
     * are a git dir of their own, with a HEAD); otherwise what they are now (names and change
     * times): a git dir looked at already as it is is not read again, so a sandbox that makes
     * large configs does not make every look read them.
     */
    private Object changesThisRun(Path dir) {
        long since = started - 1000;
        List<Object> seen = new ArrayList<>();
        boolean changed = false;
        for (Path listed : List.of(dir, dir.resolve("hooks"))) {
            if (listed != dir && !Files.isDirectory(listed, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            long at = GitAftercheck.changedAt(listed);
            seen.add(at);
            changed |= at >= since;
            try (java.nio.file.DirectoryStream<Path> entries = Files.newDirectoryStream(listed)) {
                for (Path entry : entries) {
                    long entryAt = GitAftercheck.changedAt(entry);
                    seen.add(entry.getFileName().toString());
                    seen.add(entryAt);
                    changed |= entryAt >= since;
                }
            } catch (IOException | RuntimeException e) {
                return List.of("unreadable", System.nanoTime()); // looked at every time
            }
        }
        return changed ? seen : null;
    }

    private static Object ownerOf(Path p) {
        try {
            return Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The longest pause between two looks, however long a look took. */
    static final long MAX_PAUSE_MILLIS = 5_000;

    /**
     * How long the watch waits after a look that took {@code tookMillis}: {@link #INTERVAL_MILLIS},
     * or longer where one look takes long (thousands of entries right below the project, many
     * nested repositories), so that the watch takes no more than a tenth of one core; but never
     * more than {@link #MAX_PAUSE_MILLIS}: a sandbox that makes every look slow gets looked at
     * again 5 s after each look, whatever that costs. Every look looks at everything; only how
     * often it looks gives way.
     */
    static long pause(long tookMillis) {
        return Math.min(MAX_PAUSE_MILLIS, Math.max(INTERVAL_MILLIS, 9 * tookMillis));
    }

    /** One look: what changed is moved aside. */
    void look() {
        readThisLook[0] = MAX_READ_PER_LOOK;
        List<GitDirs> found = new ArrayList<>();
        Set<GitDirs> swapped = new java.util.HashSet<>();
        Set<GitDirs> touched = new java.util.HashSet<>();
        made.clear();
        List<Path> madeHere = new ArrayList<>();
        Set<Path> others = new LinkedHashSet<>();
        List<Path> below = childRepos(check.top);
        Map<Path, String> moved = new HashMap<>();
        // First the git dirs of the repositories right below the project alone (where you and
        // your IDE run git): finding everything they lead to takes as long as a sandbox makes
        // it (thousands of gitlinks in each of hundreds of new repositories), and a config
        // planted right there must not wait for that.
        for (Path repo : below) {
            try {
                Object was = check.reposBefore.get(repo);
                if (!Files.exists(repo.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
                    // a directory that is a git dir itself (no .git): git run in it, or below it,
                    // takes its config; whatever changed there this run goes aside
                    GitDirs own = GitDirs.ownGitDir(repo, check.home);
                    moveAsideIn(own, Set.of(own), Set.of(), moved);
                    continue;
                }
                if (was == null || !was.equals(GitAftercheck.identity(repo))) {
                    Optional<GitLayout> layout = GitLayout.discover(repo);
                    if (!theProjects(repo, layout)) {
                        GitDirs own = GitDirs.own(repo, layout, check.home);
                        moveAsideIn(own, was != null ? Set.of(own) : Set.of(), Set.of(), moved);
                    }
                }
            } catch (RuntimeException e) {
                // one repository the look cannot read stops no other
            }
        }
        // Then every other git dir of the work tree (what the kernel said was made there), before
        // the slow part: a plant in a repository nested in a new one right below goes aside as
        // quickly as one right below.
        lookDeeper(below, moved);
        try {
            found.add(GitDirs.fresh(check.workDir, check.home));
        } catch (RuntimeException e) {
            // the project's own git dirs unreadable now: the repositories below are looked at all the same
        }
        for (Path repo : below) {
            if (!Files.exists(repo.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
                // moved aside just now (a .git file that led out of the project): no repository
                // here any more, and finding one from here would find the project's own
                continue;
            }
            try {
                Optional<GitLayout> layout = GitLayout.discover(repo);
                if (theProjects(repo, layout)) {
                    continue;
                }
                Object was = check.reposBefore.get(repo);
                if (was == null || !was.equals(GitAftercheck.identity(repo))) {
                    madeHere.add(repo);
                    // found again only when what it is found from changed (a sandbox can make
                    // finding a repository's git dirs slow; it need not be done at every look)
                    GitDirs dirs = dirsOf(repo, layout);
                    found.add(dirs);
                    made.add(dirs);
                    if (was != null) {
                        // a repository that was there, now another one at its path (its directory
                        // renamed away, a link or a new .git put in its place): what its files hold
                        // now is the sandbox's, whatever the path held before
                        swapped.add(dirs);
                    }
                } else {
                    others.add(repo);
                }
            } catch (RuntimeException e) {
                // one repository the look cannot read (a .git file naming no path) stops no other
            }
        }
        synchronized (this) {
            madeBelow = madeHere;
        }
        for (Path view : nestedViews) {
            if (view.getParent() != null) {
                others.add(view.getParent());
            }
        }
        for (Path repo : others) {
            // The same repository as before, whose git dir this run cannot write (a view, or
            // read-only) or can (a git dir a .git file names elsewhere in the project, the
            // git dir of one of its submodules). A file there with which git runs a command
            // that changed this run is no user's edit to trust: the sandbox wrote it, or
            // another sandbox running beside this one did while this one had moved the
            // repository into a directory that one writes without a view. It goes aside.
            try {
                GitDirs dirs = dirsOf(repo);
                if (changedThisRun(dirs)) {
                    found.add(dirs);
                    touched.add(dirs);
                }
            } catch (RuntimeException e) {
                // one repository the look cannot read stops no other
            }
        }
        for (GitDirs dirs : found) {
            try {
                moveAsideIn(dirs, swapped, touched, moved);
            } catch (RuntimeException e) {
                // one repository the look cannot read stops no other
            }
        }
    }

    /**
     * Whether git run in {@code repo}, a directory right below the project with a {@code .git}
     * that is no repository of its own (one without HEAD), finds the project's ({@code layout},
     * what {@link GitLayout#discover} found from there): then the project's own git dirs are
     * not looked at as that directory's.
     */
    private static boolean theProjects(Path repo, Optional<GitLayout> layout) {
        return layout.isPresent() && !repo.equals(layout.get().workTree());
    }

    /** Moves aside what the sandbox planted in {@code dirs} this run (see {@link #look}). */
    private void moveAsideIn(GitDirs dirs, Set<GitDirs> swapped, Set<GitDirs> touched, Map<Path, String> moved) {
        boolean outside = false;
        // What one look reads of configs is bounded (the interpreter reads some 2 MiB a second):
        // past the bound, a config that changed this run goes aside unread, so that a sandbox
        // that writes large configs cannot keep the watch from a plant beside them.
        long size = 0;
        List<Path> configs = new ArrayList<>();
        for (Path p : dirs.watched) {
            String name = p.getFileName() == null ? "" : p.getFileName().toString();
            if ((name.equals("config") || name.equals("config.worktree"))
                    && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && p.startsWith(check.top)) {
                configs.add(p);
                size += sizeOf(p);
            }
        }
        if (readThisLook[0] < size) {
            boolean ofTheSandbox = swapped.contains(dirs) || touched.contains(dirs);
            for (Path p : configs) {
                if ((ofTheSandbox || !check.existedBefore(p)) && GitAftercheck.changedAfter(p, started - 1000)
                        && inGitDir(p, dirs) && linkOnTheWay(check.top, p) == null) {
                    moveAside(new GitAftercheck.Finding(p, "unread", p + " was not read: the sandbox wrote more"
                            + " config than the live watch reads in one look (" + MAX_READ_PER_LOOK / 1024
                            + " KiB), so what it makes git run is not known", false), moved);
                }
            }
        }
        readThisLook[0] = Math.max(0, readThisLook[0] - size);
        for (GitAftercheck.Finding f : check.scan(dirs, readThisLook)) {
            // a file too large to read whole (a config padded past the check's bound) that
            // changed this run goes aside like one that says what it does
            boolean movable = !f.refusesNextRun()
                    || (f.setting().equals("limit") && Files.isRegularFile(f.file(), LinkOption.NOFOLLOW_LINKS));
            boolean ofTheSandbox = swapped.contains(dirs) || touched.contains(dirs) || !check.existedBefore(f.file());
            if (movable && ofTheSandbox && f.file().startsWith(check.top) && inGitDir(f.file(), dirs)) {
                Path link = linkOnTheWay(check.top, f.file());
                if (link == null) {
                    // only what changed this run: what a file held before it (the user's own
                    // setting, in a git dir the snapshot did not take) stays, however the
                    // sandbox touched the repository
                    if (GitAftercheck.changedAfter(f.file(), started - 1000)) {
                        moveAside(f, moved);
                    }
                } else if (madeSinceStart(link)) {
                    // never a rename through a link (it would move the file it leads to, the user's
                    // own hook or another repository's config): the link the sandbox made goes aside
                    moveAside(new GitAftercheck.Finding(link, "link", link + " is a link the sandbox made, by"
                            + " which git reaches " + f.file().getFileName() + " elsewhere ("
                            + readLink(link) + ")", false), moved);
                } else {
                    // A link of the user's own (a repository right below the project that is a link
                    // to another of its directories, a .git that links to a git dir elsewhere in
                    // it): the file it leads to is judged at its own place, when that is in the
                    // project and reached through no link, and moved there; the link stays.
                    // (never a file of the project's own git dir the snapshot took: only you
                    // change that one, inside it is read-only or a view)
                    Path real = realIn(f.file());
                    if (real != null && !check.existedBefore(real)
                            && GitAftercheck.changedAfter(real, started - 1000)) {
                        moveAside(new GitAftercheck.Finding(real, f.setting(), f.message().replace(
                                f.file().toString(), real.toString()), f.refusesNextRun()), moved);
                    }
                }
            } else if (!f.refusesNextRun() && !f.file().startsWith(check.top)) {
                outside = true;
            } else if (f.refusesNextRun() && !movable && (made.contains(dirs) || touched.contains(dirs))) {
                // a bound reached in a repository the sandbox made or changed (thousands of git dirs,
                // gitlinks deeper than the check follows, includes without end): what lies beyond
                // it was not looked at, so the next run waits for the user
                synchronized (this) {
                    if (unsettled.size() < 100) {
                        unsettled.add(f);
                    }
                    lines.add(f.message());
                }
            }
        }
        if (outside) {
            // A setting that runs a command, in a git dir outside the project (one the sandbox
            // could fill beforehand, such as its own layer of ~/.cache), that git now reaches
            // from the project: the project's .git file that the sandbox pointed there this
            // run goes aside, and git there no longer leaves the project.
            for (Path p : dirs.watched) {
                if (p.getFileName() != null && p.getFileName().toString().equals(".git") && p.startsWith(check.top)
                        && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && check.changedSince(p)) {
                    moveAside(new GitAftercheck.Finding(p, "gitdir", p + " was pointed this run at a git dir"
                            + " outside the project whose settings make git run a command", false), moved);
                }
            }
        }
    }

    /** The repositories of the current look that are new or another one at their path (only the watch's thread). */
    private final Set<GitDirs> made = new java.util.HashSet<>();

    /** The host git dirs of the repositories nested in the project that the run sees through views. */
    private final List<Path> nestedViews;
    /** Each repository's git dirs as last found ({@link #dirsOf}), and what they were found from (only the watch's thread). */
    private final Map<Path, GitDirs> foundDirs = new HashMap<>();
    private final Map<Path, Object> foundFrom = new HashMap<>();

    /**
     * The git dirs of repository {@code repo}, found again only when what they are found
     * from changed since (its {@code .git}, {@code .gitmodules}, index, {@code modules} and
     * {@code worktrees}): a submodule added to it this run is looked at as well.
     */
    private GitDirs dirsOf(Path repo) {
        return dirsOf(repo, GitLayout.discover(repo));
    }

    /** {@link #dirsOf(Path)} with the repository found from {@code repo} already. */
    private GitDirs dirsOf(Path repo, Optional<GitLayout> layout) {
        List<Object> from = new ArrayList<>();
        from.add(GitAftercheck.stateOf(repo.resolve(".git")));
        from.add(GitAftercheck.stateOf(repo.resolve(".gitmodules")));
        if (layout.isPresent()) {
            Path gitDir = layout.get().gitDir();
            Path common = layout.get().commonDir();
            for (Path p : List.of(gitDir, gitDir.resolve("index"), gitDir.resolve("modules"), common,
                    common.resolve("worktrees"), common.resolve("config"))) {
                from.add(p.toString());
                from.add(GitAftercheck.stateOf(p));
            }
        }
        GitDirs dirs = foundDirs.get(repo);
        if (dirs == null || !from.equals(foundFrom.get(repo))) {
            dirs = GitDirs.find(repo, layout, check.home);
            foundDirs.put(repo, dirs);
            foundFrom.put(repo, from);
        }
        return dirs;
    }

    /** Whether a file {@code dirs} watches (a config, a commondir, a hooks dir or a hook in it) changed this run. */
    private boolean changedThisRun(GitDirs dirs) {
        long since = started - 1000;
        for (Path p : dirs.watched) {
            if (GitAftercheck.changedAfter(p, since)) {
                return true;
            }
            if (p.getFileName() != null && p.getFileName().toString().equals("hooks")
                    && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                try (java.nio.file.DirectoryStream<Path> hooks = Files.newDirectoryStream(p)) {
                    for (Path hook : hooks) {
                        if (GitAftercheck.changedAfter(hook, since)) {
                            return true;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // unreadable: the check after the run says so
                }
            }
        }
        return false;
    }

    /** When the watch began: a link changed since then is the sandbox's. */
    private final long started = System.currentTimeMillis();

    /** The first symbolic link on the way from {@code top} (not included) to {@code file}'s directory, or null. */
    static Path linkOnTheWay(Path top, Path file) {
        Path dir = file.getParent();
        if (dir == null || !dir.startsWith(top)) {
            return null;
        }
        Path p = top;
        for (Path part : top.relativize(dir)) {
            p = p.resolve(part);
            if (Files.isSymbolicLink(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * Where {@code file} really is, when that is below {@link GitAftercheck#top} with no link on
     * the way from it; null otherwise (outside the project, where the sandbox writes nothing
     * that is not granted, or gone).
     */
    private Path realIn(Path file) {
        try {
            Path top = check.top.toRealPath();
            // the directories resolved, the file itself not: a config or hook that is a link is a finding of its own
            Path real = file.getParent().toRealPath().resolve(file.getFileName());
            return real.startsWith(top) && !real.equals(top) && linkOnTheWay(top, real) == null
                    ? check.top.resolve(top.relativize(real)) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Whether link {@code p} was made or changed since the watch began (its change time, which no process sets back). */
    private boolean madeSinceStart(Path p) {
        return GitAftercheck.changedAfter(p, started - 1000);
    }

    private static String readLink(Path p) {
        try {
            return Files.readSymbolicLink(p).toString();
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /** Whether {@code file} is a git dir's own file or hook (never the project's content). */
    private static boolean inGitDir(Path file, GitDirs dirs) {
        Path parent = file.getParent();
        if (parent == null) {
            return false;
        }
        Set<Path> gitDirs = dirs.gitDirs();
        Path above = parent.getParent();
        String name = parent.getFileName() == null ? "" : parent.getFileName().toString();
        // a git dir's own file, a hook, or a linked worktree's own file (its config.worktree,
        // its commondir) in worktrees/NAME of a git dir
        return gitDirs.contains(parent) || (name.equals("hooks") && gitDirs.contains(above))
                || (above != null && above.getFileName() != null && above.getFileName().toString().equals("worktrees")
                        && gitDirs.contains(above.getParent()));
    }

    /**
     * Moves the file of {@code f} aside (once: a config may set several things) and keeps a
     * line that says what it held, as the check after the run says it, and where it went.
     */
    private void moveAside(GitAftercheck.Finding f, Map<Path, String> moved) {
        Path p = f.file();
        String what = f.setting().equals("hook") ? p + " is a new git hook that git runs on its event"
                : f.setting().equals("commondir") ? p + " is a new commondir, which sends git to another config and"
                        + " hooks"
                : f.setting().equals("not a file") ? p + " is a new config that is not a regular file (a link?)"
                : f.setting().equals("limit") ? p + " could not be read whole (too large, or written while it was"
                        + " read), so what it makes git run is not known"
                : f.setting().equals("gitdir") || f.setting().equals("link") || f.setting().equals("unread")
                        ? f.message()
                : p + " sets " + f.setting() + ", with which git runs a command";
        String aside = moved.get(p);
        String when = "at once";
        if (aside == null) {
            long written = GitAftercheck.changedAt(p);
            try {
                // a directory made read-only by the sandbox gets its owner's write bit back first
                aside = moveAsideBelow(check.top, p).toString();
                long after = written < 0 ? 0 : System.currentTimeMillis() - written;
                if (after > SLOW_MILLIS) {
                    // the looks were slow (a sandbox can make them so): said as it was
                    when = (after / 1000) + " s after it was written";
                }
            } catch (IOException | RuntimeException e) {
                if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                    return; // gone meanwhile
                }
                aside = "";
                GitAftercheck.Finding left = new GitAftercheck.Finding(p, "limit", what + "; the sandbox made it"
                        + " while it ran and it could not be moved aside (" + e.getMessage() + "): delete it before you"
                        + " run git there: agent-sandbox does not start again until you have", true);
                synchronized (this) {
                    lines.add(left.message());
                    if (unsettled.size() < 100 && unsettled.stream().noneMatch(u -> u.file().equals(p))) {
                        unsettled.add(left);
                    }
                }
            }
            moved.put(p, aside);
        }
        if (!aside.isEmpty()) {
            synchronized (this) {
                lines.add(what + "; the sandbox made it while it ran: moved aside " + when + ", to " + aside
                        + "; look at it before you put it back");
            }
        }
    }

    /** At most this many bytes of configs are read in one look ({@link #moveAsideIn}). */
    static final long MAX_READ_PER_LOOK = 256 * 1024;
    /** What the look under way may still read of configs and the files they include (the watch thread's). */
    private final long[] readThisLook = {MAX_READ_PER_LOOK};

    private static long sizeOf(Path p) {
        try {
            return Files.size(p);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Past this long between a plant's writing and its move, the line says how long it was. */
    static final long SLOW_MILLIS = 3_000;



    /**
     * Moves {@code p} (below {@code top}) aside as {@link StateWatch#moveAsideRestoringWrite}
     * does, through no link: each directory on the way is opened without following one (a
     * sandbox may swap one for a link between a look and the rename), and the rename is made
     * in the directory so opened.
     */
    static Path moveAsideBelow(Path top, Path p) throws IOException {
        Path dir = p.getParent();
        if (dir == null || !dir.startsWith(top)) {
            throw new IOException("not below " + top);
        }
        java.nio.file.DirectoryStream<Path> opened = Files.newDirectoryStream(top);
        try {
            if (!(opened instanceof java.nio.file.SecureDirectoryStream<Path> at)) {
                throw new IOException("no way here to open directories without following links");
            }
            Path reached = top;
            for (Path part : top.relativize(dir)) {
                if (part.toString().isEmpty()) {
                    continue;
                }
                java.nio.file.SecureDirectoryStream<Path> next;
                try {
                    next = at.newDirectoryStream(part, LinkOption.NOFOLLOW_LINKS);
                } catch (java.nio.file.AccessDeniedException e) {
                    // a directory on the way that the sandbox took its owner's read or search bit
                    // from (to keep the look out): the owner's bits back first. By its path: the
                    // JDK opens a directory to change its mode through a directory stream, which
                    // the missing bits refuse. Only a directory (a link put there meanwhile, the
                    // open below refuses), and only its owner's bits, on a file of that owner.
                    Path shut = reached.resolve(part);
                    java.nio.file.attribute.PosixFileAttributes a = Files.readAttributes(shut,
                            java.nio.file.attribute.PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    if (!a.isDirectory()) {
                        throw e;
                    }
                    java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = a.permissions();
                    perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_READ);
                    perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
                    perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE);
                    Files.setPosixFilePermissions(shut, perms);
                    next = at.newDirectoryStream(part, LinkOption.NOFOLLOW_LINKS);
                }
                reached = reached.resolve(part);
                opened.close();
                opened = next;
                at = next;
            }
            Path name = p.getFileName();
            SecureRandom random = new SecureRandom();
            for (int i = 0; i < 8; i++) {
                Path aside = Path.of(name + ASIDE + System.currentTimeMillis() + "-"
                        + Long.toHexString(random.nextLong() & Long.MAX_VALUE));
                try {
                    try {
                        at.move(name, at, aside);
                    } catch (java.nio.file.AccessDeniedException e) {
                        // a directory the sandbox took its owner's write or search bit from: back first
                        java.nio.file.attribute.PosixFileAttributeView view = at.getFileAttributeView(
                                java.nio.file.attribute.PosixFileAttributeView.class);
                        java.util.Set<java.nio.file.attribute.PosixFilePermission> perms =
                                view.readAttributes().permissions();
                        perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
                        perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE);
                        view.setPermissions(perms);
                        at.move(name, at, aside);
                    }
                    return dir.resolve(aside);
                } catch (java.nio.file.FileAlreadyExistsException e) {
                    // another name
                }
            }
            throw new IOException("no free name beside " + p);
        } finally {
            opened.close();
        }
    }

    /** The directories right below {@code top} that hold a {@code .git} ({@link GitDirs#reposBelow}). */
    static List<Path> childRepos(Path top) {
        return GitDirs.reposBelow(top, true);
    }
}
