package agentsandbox.core.aftercheck;

import agentsandbox.core.git.GitConfigScan;
import agentsandbox.core.git.GitDirs;
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
import java.util.List;
import java.util.Map;

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
 * <pre>{@code
 * GitAftercheck check = GitAftercheck.before(workDir);
 * int status = execution.waitFor();
 * for (GitAftercheck.Finding f : check.after(Duration.ofSeconds(5))) { ... }
 * }</pre>
 */
public final class GitAftercheck {
    /** At most this many hooks per hooks directory are looked at. */
    private static final int MAX_HOOKS = 256;

    /**
     * One thing a later host git command would run.
     *
     * @param file    the file that holds it
     * @param setting the config key ({@code core.fsmonitor}), or {@code "hook"}, or a short
     *                description of what is wrong with the file
     * @param message one line saying what was found and how to get rid of it
     */
    public record Finding(Path file, String setting, String message) {}

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

    private final Path workDir;
    private final Map<Path, State> states = new HashMap<>();

    private GitAftercheck(Path workDir) {
        this.workDir = workDir;
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
        GitAftercheck c = new GitAftercheck(workDir);
        GitDirs dirs = GitDirs.reuse(found, workDir);
        for (Path p : dirs.watched) {
            if (p.getFileName().toString().equals("index")) {
                continue; // read again after the run in any case, for the gitlinks in it
            }
            State s = state(p);
            if (s != null) {
                c.states.put(p, s);
                if (s.directory() && p.getFileName().toString().equals("hooks")) {
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
                        List<Finding> found = scan();
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
                        + " nested repositories before you run git there"));
                return partial;
            }
            return List.copyOf(out);
        }
    }

    private List<Finding> scan() {
        List<Finding> out = new ArrayList<>();
        GitDirs dirs = GitDirs.fresh(workDir);
        for (Path p : dirs.watched) {
            State now = state(p);
            if (now == null || now.equals(states.get(p))) {
                continue;
            }
            String name = p.getFileName().toString();
            switch (name) {
                case "hooks" -> hooksDir(p, now, out);
                case "config", "config.worktree", ".gitmodules" -> config(p, now, out);
                default -> {
                    // .git files and indexes: what they point at is in the list in its own right
                }
            }
        }
        return out;
    }

    private void hooksDir(Path dir, State now, List<Finding> out) {
        if (!now.directory()) {
            out.add(new Finding(dir, "hooks", dir + " is not a plain directory (a link?); git may run what it"
                    + " points to: look at it, and delete it if you did not make it"));
            return;
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

    private static void config(Path file, State now, List<Finding> out) {
        if (!now.regular()) {
            out.add(new Finding(file, "not a file", file + " is not a regular file (a link?); git reads what it"
                    + " points to: look at it, and delete it if you did not make it"));
            return;
        }
        byte[] data = HostRead.bytes(file, GitDirs.MAX_SMALL);
        if (data == null) {
            out.add(new Finding(file, "unreadable", file + " changed and is too large or unreadable to check:"
                    + " look at it before you run git there"));
            return;
        }
        for (GitConfigScan.Setting s : GitConfigScan.running(data)) {
            String key = s.name();
            out.add(new Finding(file, key, file + " sets " + key + ", with which git runs a command: look at it"
                    + " before you run git there; to remove it: git config --file " + ShellQuote.quote(file.toString())
                    + " --unset-all " + ShellQuote.quote(key)));
        }
    }

    private static List<Path> hooks(Path dir) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (out.size() >= MAX_HOOKS) {
                    break;
                }
                // git never runs a *.sample: not worth a look (a fresh repository has only these)
                if (!e.getFileName().toString().endsWith(".sample")) {
                    out.add(e);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unreadable: nothing to list
        }
        out.sort(null);
        return out;
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
