// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.aftercheck.LiveQuarantine;
import agentsandbox.core.homes.LayerMerge;

import agentsandbox.core.Environment;
import agentsandbox.core.guard.GuardServer;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.host.NetworkProxy;
import agentsandbox.core.Plan;
import agentsandbox.core.host.Preflight;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;
import agentsandbox.core.aftercheck.GitAftercheck;
import agentsandbox.core.aftercheck.GitLiveWatch;
import agentsandbox.core.aftercheck.Quarantine;
import agentsandbox.core.git.GitApply;
import agentsandbox.core.git.LiveApply;
import agentsandbox.core.aftercheck.StateWatch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A running sandbox. {@link #waitFor()} returns the command's exit status, stops the
 * host-side servers (git guard, network proxy) and removes the run directory (with the
 * private {@code /tmp}), whatever happened. A caller with its own work after the run
 * calls {@link #waitForEnd()} and then {@link #close()} instead: the run directory is
 * removed (by the launcher's starter, in native code) while that work runs.
 * {@link #terminate()} is what the caller does on SIGINT/SIGTERM: the first call sends
 * SIGTERM to bwrap and SIGKILL after a grace period; a second call kills at once.
 */
public final class Execution implements AutoCloseable {
    /** How long bwrap gets to end after SIGTERM before it is killed. */
    public static final long GRACE_MILLIS = 10_000;
    /** How long the end of a run waits for the check of the git metadata. */
    public static final java.time.Duration GIT_CHECK_LIMIT = java.time.Duration.ofSeconds(5);

    private final Bwrap bwrap;
    private final Plan plan;
    private final RunDir run;
    private final GuardServer guard;
    private final NetworkProxy proxy;
    /** Another host-side server of the run (the ssh-agent relay), closed with the proxy; or null. */
    private volatile AutoCloseable also;
    private final java.nio.channels.FileChannel setupLog;
    private final Path procSys;
    private final StateWatch state;
    private final int uid;
    /** The check of the git metadata after the run, let go when bwrap has ended; null for none. */
    private final GitAftercheck.Running gitCheck;
    /** The same check while the sandbox runs, moving aside what git would run ({@link GitLiveWatch}); null for none. */
    private final GitLiveWatch gitWatch;
    private boolean gitWatched; // under this
    private List<String> changed;
    /** What the host applies from the git views once bwrap has ended, before the layers go. */
    private final LiveApply gitApplies;
    private boolean gitApplied; // under this
    private final List<String> applied = new java.util.ArrayList<>();
    /** The store of the home's layers, when the run has views of the home; else null. */
    private final Path homeLayers;
    private boolean homesMerged; // under this
    /** In the fallback: the watched settings files moved aside as soon as they appear; else null. */
    private final LiveQuarantine liveQuarantine;
    private final Object sweeping = new Object();
    private boolean swept; // under sweeping
    /** Whether {@link #closeAtExit()} was called. */
    private volatile boolean atExit;
    private volatile boolean terminated;
    private List<String> bwrapMessages = List.of();

    /**
     * @param setupLog the file bwrap's messages go to until the command starts (see below),
     *                 opened before bwrap started, so that it is that file that is read even
     *                 if a sandbox renames a directory above it; or {@code null} when bwrap
     *                 writes to the caller's stderr directly (the library without the launcher)
     */
    /** The DNS filter's record of refused names (see {@link RunLayout#netRefused}), or null. */
    private volatile java.nio.channels.FileChannel netRefused;
    private List<String> netRefusedLines = List.of();

    /**
     * Reads, once the sandbox has ended, the DNS filter's refusals from {@code channel} (when
     * not null), opened on the run's file before bwrap started.
     */
    public void readsNetworkRefusals(java.nio.channels.FileChannel channel) {
        netRefused = channel;
    }

    /**
     * The destinations the network's allow-list refused, {@code DESTINATION<tab>WHY} each,
     * from the proxy or the DNS filter (host side both), bounded; after the run.
     */
    public synchronized List<String> networkRefusals() {
        List<String> out = new java.util.ArrayList<>(proxy == null ? List.of() : proxy.refusals());
        out.addAll(netRefusedLines);
        return out;
    }

    /** How many destinations the allow-list refused (the proxy's counted beyond what it keeps). */
    public synchronized int networkRefusedCount() {
        return (proxy == null ? 0 : proxy.refusedCount()) + netRefusedLines.size();
    }

    /** Reads the filter's file: its lines, at most {@link NetworkProxy#MAX_REFUSALS}. */
    private void readNetRefused() {
        java.nio.channels.FileChannel ch = netRefused;
        if (ch == null) {
            return;
        }
        netRefused = null;
        try (ch) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(256 * 1024);
            while (b.hasRemaining() && ch.read(b, b.position()) > 0) {
                // read until the bound or the end
            }
            String text = new String(b.array(), 0, b.position(), java.nio.charset.StandardCharsets.UTF_8);
            List<String> lines = new java.util.ArrayList<>();
            for (String l : text.split("\n")) {
                if (!l.isEmpty() && lines.size() < NetworkProxy.MAX_REFUSALS) {
                    lines.add(l);
                }
            }
            synchronized (this) {
                netRefusedLines = List.copyOf(lines);
            }
        } catch (java.io.IOException e) {
            // no record: the run's refusals are not logged, the run is not changed
        }
    }

    /** Closes server (when not null) at the run's end, with the network proxy. */
    public void closesAlso(AutoCloseable server) {
        also = server;
    }

    public Execution(Bwrap bwrap, Plan plan, RunDir run, GuardServer guard, NetworkProxy proxy,
            java.nio.channels.FileChannel setupLog, Path procSys, StateWatch state, int uid, GitAftercheck git,
            List<GitApply> gitApplies, Path homeLayers) {
        this.homeLayers = homeLayers;
        this.liveQuarantine = homeLayers == null
                ? LiveQuarantine.start(plan.homeSetup(), plan.runtimeDir().getParent().getParent()) : null;
        this.gitApplies = new LiveApply(gitApplies);
        this.gitApplies.start();
        if (guard != null && !gitApplies.isEmpty()) {
            final LiveApply live = this.gitApplies;
            guard.onAllowed(new Runnable() {
                @Override
                public void run() {
                    live.nudge(); // a commit inside reaches the host's branch right after it
                }
            });
        }
        this.gitCheck = git == null ? null : git.ready();
        // with the git presets off, the user left the git dirs to the sandbox
        // and the host git dirs of the nested repositories this run sees through views (the
        // first view is the project's own)
        this.gitWatch = git == null || !plan.gitPresets() ? null : GitLiveWatch.start(git,
                plan.gitViews().size() > 1 ? plan.gitViews().subList(1, plan.gitViews().size()) : List.of());
        if (gitWatch == null && git != null) {
            git.unwatched();
        }
        this.state = state;
        this.uid = uid;
        this.bwrap = bwrap;
        this.plan = plan;
        this.run = run;
        this.guard = guard;
        this.proxy = proxy;
        this.setupLog = setupLog;
        this.procSys = procSys;
    }

    /**
     * What bwrap said on a run whose command did start (normally nothing): shown once,
     * after the run, by the caller. A failed setup is the {@link SandboxException} of
     * {@link #waitFor()} instead.
     */
    public List<String> bwrapMessages() {
        return bwrapMessages;
    }

    /**
     * After the run: what the host found changed that a later run would obey (see
     * {@link StateWatch}, and the watched settings files of {@link Quarantine}),
     * each moved aside; one line each, for the user.
     */
    public synchronized List<String> afterRun() {
        if (changed == null) {
            List<String> out = new java.util.ArrayList<>(state == null ? List.of() : state.after());
            if (liveQuarantine != null) {
                out.addAll(liveQuarantine.stop());
            }
            out.addAll(Quarantine.moveAside(plan.homeSetup(), plan.runtimeDir().getParent().getParent()));
            changed = List.copyOf(out);
        }
        return changed;
    }

    /**
     * After the run ({@link #waitFor()} or {@link #waitForEnd()}): everything the host's
     * checks found, one line each for the user: what the run left in the git metadata that
     * a later git command would run ({@link GitAftercheck}), then what {@link #afterRun()}
     * moved aside. Waits for the git check at most {@link #GIT_CHECK_LIMIT}.
     */
    public List<String> findings() {
        List<String> out = new java.util.ArrayList<>(applied);
        if (gitCheck != null) {
            for (GitAftercheck.Finding f : gitCheck.findings(GIT_CHECK_LIMIT)) {
                out.add(f.message());
                if (f.refusesNextRun()) { // what the check could not look at: the next run waits for the user
                    Unsettled.record(plan.runtimeDir().getParent().getParent(), f.file(), ToolHomes.identity(f.file()),
                            f.message());
                }
            }
        }
        out.addAll(afterRun());
        return out;
    }

    /** Stops the live watch of the git dirs, once, keeping what it moved aside. Under this. */
    private void stopGitWatch() {
        if (gitWatch != null && !gitWatched) {
            gitWatched = true;
            applied.addAll(gitWatch.stop());
            // the repositories right below it made come after the user's in the next runs' views
            agentsandbox.core.git.MadeRepositories.record(plan.runtimeDir().getParent().getParent(),
                    gitWatch.madeBelow());
            for (GitAftercheck.Finding f : gitWatch.unsettled()) {
                // what the watch could not look at: the next run waits for the user
                Unsettled.record(plan.runtimeDir().getParent().getParent(), f.file(), ToolHomes.identity(f.file()),
                        f.message());
            }
        }
    }

    /**
     * The git commands the run's guard refused, each {@code COMMAND<tab>WHY} (at most
     * {@link GuardServer#MAX_RECORDED}), for the denial log.
     */
    public List<String> gitRefusals() {
        return guard == null ? List.of() : guard.refusals();
    }

    /** How many git commands the run's guard refused. */
    public int gitRefusalCount() {
        return guard == null ? 0 : guard.refusedCount();
    }

    /**
     * The calls of blocked commands the sandbox reported to the run's guard, each
     * {@code NAME<tab>COMMAND LINE} (at most {@link GuardServer#MAX_RECORDED}), for the denial
     * log: the sandbox's word, kept only for commands the run blocks.
     */
    public List<String> blockedCommandReports() {
        return guard == null ? List.of() : guard.reportedBlocked();
    }

    /** How many calls of blocked commands the sandbox reported. */
    public int blockedCommandReportCount() {
        return guard == null ? 0 : guard.reportedCount();
    }

    /** True once {@link #terminate()} was called. */
    public boolean terminated() {
        return terminated;
    }

    /** The bwrap process id. */
    public long pid() {
        return bwrap.pid();
    }

    /**
     * Waits for the sandbox to end and cleans up.
     *
     * @return the command's exit status (128 + signal number when it was killed by a signal)
     * @throws SandboxException when bwrap itself could not create the sandbox
     */
    public int waitFor() {
        try {
            return waitForEnd();
        } finally {
            close();
        }
    }

    /**
     * Removes the run directory, once the removal that {@link #waitForEnd()} started is
     * done (or at once, and then bwrap with it: call this after bwrap has ended), and waits
     * until the git guard has closed its socket. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (!gitApplied) { // bwrap's end was not waited for: the layers still hold what to apply
                gitApplied = true;
                applied.addAll(gitApplies.finish());
            }
            stopGitWatch();
            mergeHomes();
        }
        if (gitCheck != null) {
            gitCheck.cancel(); // a check never let go (bwrap could not set the sandbox up) ends
        }
        if (liveQuarantine != null) {
            liveQuarantine.close();
        }
        sweep();
        java.nio.channels.FileChannel refused = netRefused;
        if (refused != null) {
            netRefused = null;
            try {
                refused.close(); // a run that never got to its end has no refusals to read
            } catch (java.io.IOException e) {
                // nothing more to do with it
            }
        }
        run.close();
        if (guard != null && !atExit) {
            guard.close();
        }
    }

    /**
     * {@link #close()} as the last step of a process that ends right after it (the command
     * line tool): the run directory's removal, when the launcher's starter does it, is not
     * waited for here but by the launcher, after this JVM has gone (see
     * {@link RunDir#closeAtExit()}). Idempotent, and {@link #close()} after it does nothing more.
     */
    public void closeAtExit() {
        sweep();
        run.closeAtExit();
        // the git guard was stopped at bwrap's end (its thread closes the socket by itself):
        // nothing is served any more, and the process ends next, so it is not waited for
        atExit = true;
    }

    /**
     * Whether a {@link #closeAtExit()} in this JVM left the removal of its run directory
     * to the launcher's starter, which the launcher must then wait for
     * ({@link Environment#STATUS_STARTER_REMOVING}).
     */
    public static boolean starterStillRemoving() {
        return RunDir.leftToStarter;
    }

    /** The sandbox's changes of the home's views into the user's layers, once, after bwrap has ended. */
    private void mergeHomes() {
        if (homeLayers != null && !homesMerged) {
            homesMerged = true;
            for (String failure : LayerMerge.mergeRuns(homeLayers, List.of(run.path().getFileName().toString()))) {
                applied.add("home: " + failure);
            }
        }
    }

    /**
     * Removes, once, what runs killed outright left (see {@link RunDir#removeStaleBeside});
     * {@link #close()} and {@link #closeAtExit()} do it when nobody did before. The command
     * line tool calls it once bwrap has been started and the servers listen: the JVM has
     * nothing else to do until bwrap ends, and bwrap's set-up leaves a core idle.
     */
    public void sweep() {
        synchronized (sweeping) { // not this object's lock: terminate() must not wait for a sweep
            if (!swept) {
                swept = true;
                run.removeStaleBeside(uid);
                if (homeLayers != null) {
                    // the home changes of runs that ended without merging them (killed outright)
                    LayerMerge.mergeRuns(homeLayers, LayerMerge.ended(homeLayers, run.path()));
                }
            }
        }
    }


    /**
     * Waits for the sandbox to end, stops the host-side servers and starts removing the
     * run directory; {@link #close()} finishes that.
     *
     * @return the command's exit status (128 + signal number when it was killed by a signal)
     * @throws SandboxException when bwrap itself could not create the sandbox
     */
    public int waitForEnd() {
        return waitForEnd(null);
    }

    /**
     * {@link #waitForEnd()}, running {@code atEnd} (when not null) as soon as bwrap has
     * ended, before the servers are stopped: work of the caller's own that then runs
     * beside the cleanup (the CLI starts its check of the git metadata there).
     */
    public int waitForEnd(Runnable atEnd) {
        int status;
        String log = null;
        try {
            try {
                status = waitUninterruptibly();
                synchronized (this) {
                    gitApplied = true;
                    applied.addAll(gitApplies.finish()); // from the layers, which go with the run directory next
                    stopGitWatch(); // before the check after the run looks
                    mergeHomes();
                }
            } finally {
                // first: the starter removes the run directory while the rest below runs (the
                // setup log is read through the channel opened before bwrap started)
                run.startClosing(bwrap);
            }
            if (gitCheck != null) {
                gitCheck.go(); // beside the cleanup below
            }
            if (atEnd != null) {
                atEnd.run();
            }
            log = setupLog == null ? null : readSetupLog(setupLog);
            readNetRefused();
        } finally {
            if (guard != null) {
                guard.stop(); // close() below waits for it, usually long done by then
            }
            if (proxy != null) {
                proxy.close();
            }
            AutoCloseable other = also;
            if (other != null) {
                try {
                    other.close();
                } catch (Exception e) {
                    // the run's directory, which holds its socket, goes anyway
                }
            }
        }
        if (log != null) {
            // With the launcher, bwrap's messages go to the setup log until the sandbox's
            // first program marks the command's start and gives it the caller's stderr
            // (the launcher's bwrap_start.c): no mark, a failure status and a message mean bwrap
            // could not set the sandbox up, and its words become one line of ours.
            int mark = log.indexOf(Launch.STARTED_MARK + "\n");
            String before = mark < 0 ? log : log.substring(0, mark);
            String after = mark < 0 ? "" : log.substring(mark + Launch.STARTED_MARK.length() + 1);
            if (mark < 0 && status != 0 && !terminated && !before.isBlank()) {
                throw setupFailure(before);
            }
            List<String> messages = new java.util.ArrayList<>();
            for (String l : (before + after).split("\n")) {
                if (!l.isBlank()) {
                    messages.add(l);
                }
            }
            bwrapMessages = List.copyOf(messages);
            return status;
        }
        if (status == 1 && !terminated && plan.bwrap() != null) {
            // bwrap reports its own failures with status 1, like many commands do: only
            // when a minimal sandbox cannot start either is it bwrap's failure.
            SandboxException why = Preflight.explainFailure(plan.bwrap(), Path.of("/proc/sys"));
            if (why != null) {
                throw why;
            }
        }
        return status;
    }

    /** The reason bwrap gave for a failed setup, as one exception. */
    private SandboxException setupFailure(String messages) {
        // a machine that cannot run any sandbox (user namespaces, AppArmor) has a fix of its own
        SandboxException machine = plan.bwrap() == null ? null : Preflight.explainFailure(plan.bwrap(), procSys);
        if (machine != null) {
            return machine;
        }
        for (String line : messages.split("\n")) {
            // the sandbox's first program found a mount that is not what was checked
            // (MountChecks): its own words, not bwrap's
            if (line.startsWith("agent-sandbox: ") && line.contains(MountChecks.CHANGED)) {
                return new SandboxException(line.substring("agent-sandbox: ".length()).strip());
            }
        }
        StringBuilder said = new StringBuilder();
        for (String line : messages.split("\n")) {
            String l = line.strip();
            for (String prefix : List.of("bwrap: ", "agent-sandbox: ")) {
                if (l.startsWith(prefix)) {
                    l = l.substring(prefix.length());
                }
            }
            if (!l.isEmpty()) {
                said.append(said.isEmpty() ? "" : "; ").append(l);
            }
        }
        return new SandboxException("bwrap could not set up the sandbox: " + said,
                "run with --debug to see every mount and the rule behind it");
    }

    /** The setup log, at most 64 KiB of it, through the channel opened when it was made. */
    private static String readSetupLog(java.nio.channels.FileChannel log) {
        try (log) {
            java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(64 * 1024);
            while (buffer.hasRemaining() && log.read(buffer, buffer.position()) > 0) {
                // reads on until the buffer is full or the file ends
            }
            return new String(buffer.array(), 0, buffer.position(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private int waitUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return bwrap.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** SIGTERM to bwrap, SIGKILL after the grace period; a second call kills at once. */
    public synchronized void terminate() {
        if (terminated) {
            bwrap.kill();
            return;
        }
        terminated = true;
        bwrap.terminate();
        Thread killer = new Thread(() -> {
            try {
                if (!bwrap.waitFor(GRACE_MILLIS)) {
                    bwrap.kill();
                }
            } catch (InterruptedException e) {
                bwrap.kill();
            }
        }, "agent-sandbox-grace");
        killer.setDaemon(true);
        killer.start();
    }

    public static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // best effort: a leftover empty file in a private temp dir harms nothing
        }
    }
}
