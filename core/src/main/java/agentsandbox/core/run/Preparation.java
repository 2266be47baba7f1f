// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.aftercheck.GitAftercheck;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.Plan;
import agentsandbox.core.host.Preflight;
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
 * start would otherwise wait for one step after another. Each result is {@link Published}
 * on its own, in the order the plan needs them: the repository and its git dirs, where git
 * is, the run directory, the state before the run.
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
    /** The repository above the working directory; null when looking failed (the plan looks itself). */
    private final Published<Optional<GitLayout>> layout = new Published<>();
    /** Every git dir git uses from the working directory; null when finding them failed. */
    private final Published<GitDirs> gitDirs = new Published<>();
    /** Where git is, for the plan's wrapper; null when not found out. */
    private final Published<List<Path>> gitLocations = new Published<>();
    /** The run directory, or what stopped it (no bwrap, root, a directory that cannot be made). */
    private final Published<RunDir> run = new Published<>();
    /** The watched state before the run, or what stopped it (then the git metadata's fails too). */
    private final Published<StateWatch> state = new Published<>();
    /** The git metadata before the run. */
    private final Published<GitAftercheck> gitBefore = new Published<>();
    private boolean taken; // under this
    private boolean closed; // under this

    private Preparation(Environment env, Path runDir) {
        this.env = env;
        this.runDir = runDir;
        this.thread = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    prepare();
                } finally {
                    // whatever ended the thread, nothing waits for ever: what is missing is
                    // looked up by the plan itself, or stops the run
                    RuntimeException ended = new SandboxException("the run's preparation ended unexpectedly");
                    layout.set(null);
                    gitDirs.set(null);
                    gitLocations.set(null);
                    run.fail(ended);
                    state.fail(ended);
                    gitBefore.fail(ended);
                }
            }
        }, "agent-sandbox-preparation");
        thread.setDaemon(true);
    }

    /** Starts preparing a run in {@code env}; its plan must use {@link #runDir()}. */
    public static Preparation start(Environment env) {
        Preparation p = new Preparation(env, RunLayout.newPath(RunLayout.stateDir(env), RunLayout.randomName()));
        p.thread.start();
        return p;
    }

    /** The run directory this preparation creates: where the plan puts the run's files. */
    public Path runDir() {
        return runDir;
    }

    /**
     * Has the launcher's starter start the run's network stack now ({@code stack}, with the
     * allow-list {@code allowHosts}, empty for none), while the plan goes on: bwrap finds it
     * ready, or nearly. Without a starter, nothing: the launcher that starts bwrap starts it.
     */
    public void startNetwork(Path stack, List<String> allowHosts) {
        if (env.installation() != null) {
            BwrapStarter.startNetwork(env.installation().starter(), stack, allowHosts);
        }
    }

    private void prepare() {
        // in the order the first thread needs them: the git dirs and git early in the plan,
        // the run directory at its end, the state before the run only before bwrap starts
        findGitDirs();
        locateGit();
        try {
            Preflight.checkCanRun(env); // as root or without bwrap, nothing is created
            run.set(RunDir.create(runDir, RunLayout.socketsDir(RunLayout.socketsBase(env), runDir), env.uid()));
        } catch (RuntimeException e) {
            run.fail(e);
            state.fail(e);
            gitBefore.fail(e);
            return;
        }
        try {
            state.set(StateWatch.before(env));
            // the git dirs found a moment ago, unless the repository changed since
            gitBefore.set(GitAftercheck.before(env.workDir(), gitDirs.now(), env.home()));
        } catch (RuntimeException e) {
            state.fail(e);
            gitBefore.fail(e);
            return;
        }
        Launch.openSocketClasses();
    }

    /** The repository and its git dirs (never fails: the plan looks itself then, and meets the same). */
    private void findGitDirs() {
        Optional<GitLayout> found = null;
        try {
            found = GitLayout.discover(env.workDir());
        } catch (RuntimeException e) {
            // the plan's own search meets the same and says so
        }
        layout.set(found);
        GitDirs dirs = null;
        if (found != null) {
            try {
                dirs = GitDirs.find(env.workDir(), found, env.home());
            } catch (RuntimeException e) {
                // the plan's own search meets the same and says so
            }
        }
        gitDirs.set(dirs);
    }

    /** Where git is, for the plan's wrapper (see {@link Wrappers#PREPARED}). */
    private void locateGit() {
        List<Path> found = null;
        try {
            found = Wrappers.locations(Wrappers.PREPARED, env);
        } catch (RuntimeException e) {
            // the plan looks again, and meets the same
        }
        gitLocations.set(found);
    }

    /**
     * {@link Wrappers#locations} of git in this environment, as the second thread found
     * them while the plan was begun (waiting for it when it is not done yet).
     */
    public List<Path> gitLocations() {
        List<Path> found = gitLocations.get();
        return found != null ? found : Wrappers.locations(Wrappers.PREPARED, env);
    }

    /**
     * The repository above the working directory ({@link GitLayout#discover}), as the second
     * thread found it first thing (waiting for it when it is not done yet): the plan's git
     * presets need the same, and one look is enough before the sandbox runs.
     */
    public Optional<GitLayout> gitLayout() {
        Optional<GitLayout> found = layout.get();
        return found != null ? found : GitLayout.discover(env.workDir());
    }

    /**
     * The git dirs the second thread found (waiting for it when it is not done yet), for the
     * plan's {@code @git} rules; null when it could not find them (the plan finds them itself).
     */
    public GitDirs gitDirs() {
        return gitDirs.get();
    }

    /** Waits for the second thread to end. */
    private void join() {
        agentsandbox.core.Threads.joinFully(thread);
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
        RunDir made = run.get();
        synchronized (this) {
            if (taken || closed) {
                throw new IllegalStateException("the prepared run directory was already used");
            }
            taken = true;
            return made;
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
        StateWatch s = state.get();
        gitBefore.get();
        return s;
    }

    /** The git metadata before the run, for the check after it (after {@link #state}). */
    public GitAftercheck gitBefore() {
        return gitBefore.get();
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
            left = taken ? null : run.now();
        }
        if (left != null) {
            left.close();
        }
    }
}
