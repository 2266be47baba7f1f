package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.aftercheck.GitAftercheck;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.Plan;
import agentsandbox.core.host.Preflight;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;
import agentsandbox.core.aftercheck.StateWatch;
import agentsandbox.core.guard.Wrappers;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What a run needs besides its plan, made on a second thread while the plan is made on
 * the first: the machine's check ({@link Preflight}), the run directory ({@link RunDir}),
 * the watched state before the run ({@link StateWatch}), the git metadata before the run
 * ({@link GitAftercheck}), and the socket classes the git guard and the proxy open once
 * bwrap runs. None of it depends on the plan, and all of it is interpreted file work a
 * start would otherwise wait for one step after another.
 *
 * <pre>{@code
 * try (Preparation prepared = Preparation.start(env)) {
 *     Plan plan = Sandbox.plan(policy, env, command, false, prepared);
 *     Execution run = Sandbox.start(plan, env, prepared);
 *     ...
 * }
 * }</pre>
 *
 * {@link #close()} removes the run directory when no run took it (the plan failed, or
 * the caller gave up), after the second thread is done, so nothing it made is left.
 */
public final class Preparation implements AutoCloseable {
    private final Environment env;
    private final Path runDir;
    private final Thread thread;
    private RunDir run;
    private StateWatch state;
    private GitAftercheck git;
    private RuntimeException failure;
    /** Whether the second thread has published the run directory (or why there is none). */
    private boolean prepared;
    private RuntimeException snapshotFailure;
    /** Whether it has published the state before the run too (it then only warms up sockets). */
    private boolean snapshotted;
    private List<Path> gitLocations;
    private Optional<GitLayout> gitLayout;
    /** Whether it has looked for the repository (see {@link #gitLayout()}). */
    private boolean discovered;
    /** Whether it has looked up git (see {@link #gitLocations()}). */
    private boolean located;
    private boolean taken;
    private boolean closed;

    private Preparation(Environment env, Path runDir) {
        this.env = env;
        this.runDir = runDir;
        this.thread = new Thread(new Runnable() {
            @Override
            public void run() {
                prepare();
            }
        }, "agent-sandbox-preparation");
        thread.setDaemon(true);
    }

    /** Starts preparing a run in {@code env}; its plan must use {@link #runDir()}. */
    public static Preparation start(Environment env) {
        Preparation p = new Preparation(env, RunLayout.newPath(RunLayout.stateDir(env), RunLayout.randomName()));
        // the plan's @git rules need them too: found once, here, while the plan is begun
        GitDirs.announce(env.workDir());
        try {
            p.thread.start();
        } catch (RuntimeException | Error e) {
            GitDirs.withdraw(env.workDir());
            throw e;
        }
        return p;
    }

    /** The run directory this preparation creates: where the plan puts the run's files. */
    public Path runDir() {
        return runDir;
    }

    private void prepare() {
        // in the order the first thread needs them: the git dirs and git early in the plan,
        // the run directory at its end, the state before the run only before bwrap starts
        findGitDirs();
        locateGit();
        RunDir made = null;
        RuntimeException failed = null;
        try {
            Preflight.checkCanRun(env); // as root or without bwrap, nothing is created
            made = RunDir.create(runDir, RunLayout.socketsDir(RunLayout.socketsBase(env), runDir), env.uid());
        } catch (RuntimeException e) {
            failed = e;
        }
        synchronized (this) {
            run = made;
            failure = failed;
            prepared = true;
            notifyAll();
        }
        StateWatch watched = null;
        GitAftercheck checked = null;
        if (failed == null) {
            try {
                watched = StateWatch.before(env);
                checked = GitAftercheck.before(env.workDir());
            } catch (RuntimeException e) {
                failed = e;
            }
        }
        synchronized (this) {
            state = watched;
            git = checked;
            snapshotFailure = failed;
            snapshotted = true;
            notifyAll();
        }
        if (failed == null) {
            Launch.openSocketClasses();
        }
    }

    /** Where git is, for the plan's wrapper (see {@link Wrappers#PREPARED}); null when not found out. */
    private void locateGit() {
        List<Path> found = null;
        try {
            found = Wrappers.locations(Wrappers.PREPARED, env);
        } catch (RuntimeException e) {
            // the plan looks again, and meets the same
        } finally {
            synchronized (this) {
                gitLocations = found;
                located = true;
                notifyAll();
            }
        }
    }

    /**
     * {@link Wrappers#locations} of git in this environment, as the second thread found
     * them while the plan was begun (waiting for it when it is not done yet).
     */
    public List<Path> gitLocations() {
        List<Path> found;
        synchronized (this) {
            awaitLookup(false);
            found = gitLocations;
        }
        return found != null ? found : Wrappers.locations(Wrappers.PREPARED, env);
    }

    /**
     * Waits until the second thread has looked for the repository ({@code repository}) or
     * for git; a thread that died leaves the lookup to the plan.
     */
    private synchronized void awaitLookup(boolean repository) {
        boolean interrupted = false;
        while (!(repository ? discovered : located) && thread.isAlive()) {
            try {
                wait(10);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The git dirs {@link #start} announced, found (never throws: the plan finds them itself then). */
    private void findGitDirs() {
        Optional<GitLayout> layout = null;
        try {
            layout = GitLayout.discover(env.workDir());
        } catch (RuntimeException e) {
            // the plan's own search meets the same and says so
        } finally {
            synchronized (this) {
                gitLayout = layout;
                discovered = true;
                notifyAll();
            }
        }
        if (layout == null) {
            GitDirs.withdraw(env.workDir()); // the search failed: the plan's own meets the same and says so
            return;
        }
        try {
            GitDirs.find(env.workDir(), layout);
        } catch (RuntimeException e) {
            // the plan's own search meets the same and says so
        }
    }

    /**
     * The repository above the working directory ({@link GitLayout#discover}), as the second
     * thread found it first thing (waiting for it when it is not done yet): the plan's git
     * presets need the same, and one look is enough before the sandbox runs.
     */
    public Optional<GitLayout> gitLayout() {
        Optional<GitLayout> found;
        synchronized (this) {
            awaitLookup(true);
            found = gitLayout;
        }
        return found != null ? found : GitLayout.discover(env.workDir());
    }

    /** Waits until the second thread has published the run directory (local file work: never long). */
    private synchronized void awaitPrepared() {
        awaitUntil(false);
    }

    /** Waits until the second thread has also taken the state before the run. */
    private synchronized void awaitSnapshots() {
        awaitUntil(true);
    }

    private synchronized void awaitUntil(boolean snapshots) {
        boolean interrupted = false;
        while (snapshots ? !snapshotted : !prepared) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Waits for the second thread to end. */
    private void join() {
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The prepared run directory, for the run of {@code plan}, now the caller's to close;
     * once.
     *
     * @throws SandboxException what the preparation failed with (no bwrap, root, a run
     *                          directory that cannot be made)
     */
    public RunDir take(Plan plan) {
        if (!plan.runtimeDir().equals(runDir)) {
            throw new IllegalArgumentException("the plan was not made for this preparation: " + plan.runtimeDir());
        }
        awaitPrepared();
        synchronized (this) {
            if (taken || closed) {
                throw new IllegalStateException("the prepared run directory was already used");
            }
            if (failure != null) {
                throw failure;
            }
            taken = true;
            return run;
        }
    }

    /**
     * The watched state before the run (after {@link #take}), once the second thread has
     * taken it and the git metadata's: what bwrap's start must wait for, so that nothing a
     * sandbox does can come before them.
     *
     * @throws SandboxException what taking them failed with
     */
    public StateWatch state() {
        awaitSnapshots();
        synchronized (this) {
            if (snapshotFailure != null) {
                throw snapshotFailure;
            }
            return state;
        }
    }

    /** The git metadata before the run, for the check after it (after {@link Sandbox#start}). */
    public GitAftercheck gitBefore() {
        awaitSnapshots();
        synchronized (this) {
            if (git == null) {
                throw new IllegalStateException("nothing was prepared: "
                        + (failure != null ? failure : snapshotFailure));
            }
            return git;
        }
    }

    /** Waits for the second thread; removes the run directory when no run took it. Idempotent. */
    @Override
    public void close() {
        join();
        RunDir left;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            left = taken ? null : run;
        }
        if (left != null) {
            left.close();
        }
    }
}
