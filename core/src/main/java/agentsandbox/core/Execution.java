package agentsandbox.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A running sandbox. {@link #waitFor()} returns the command's exit status, stops the
 * host-side servers (git guard, network proxy) and removes the run directory (with the
 * private {@code /tmp}), whatever happened. {@link #terminate()} is what the
 * caller does on SIGINT/SIGTERM: the first call sends SIGTERM to bwrap and SIGKILL after
 * a grace period; a second call kills at once.
 */
public final class Execution {
    /** How long bwrap gets to end after SIGTERM before it is killed. */
    public static final long GRACE_MILLIS = 10_000;

    private final Process process;
    private final Plan plan;
    private final RunDir run;
    private final GuardServer guard;
    private final NetworkProxy proxy;
    private volatile boolean terminated;

    Execution(Process process, Plan plan, RunDir run, GuardServer guard, NetworkProxy proxy) {
        this.process = process;
        this.plan = plan;
        this.run = run;
        this.guard = guard;
        this.proxy = proxy;
    }

    /** True once {@link #terminate()} was called. */
    public boolean terminated() {
        return terminated;
    }

    /** The bwrap process id. */
    public long pid() {
        return process.pid();
    }

    /**
     * Waits for the sandbox to end and cleans up.
     *
     * @return the command's exit status (128 + signal number when it was killed by a signal)
     * @throws SandboxException when bwrap itself could not create the sandbox
     */
    public int waitFor() {
        int status;
        try {
            status = waitUninterruptibly();
        } finally {
            if (guard != null) {
                guard.close();
            }
            if (proxy != null) {
                proxy.close();
            }
            run.close();
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

    private int waitUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return process.waitFor();
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
            process.destroyForcibly();
            return;
        }
        terminated = true;
        process.destroy();
        Thread killer = new Thread(() -> {
            try {
                if (!process.waitFor(GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
            }
        }, "agent-sandbox-grace");
        killer.setDaemon(true);
        killer.start();
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // best effort: a leftover empty file in a private temp dir harms nothing
        }
    }
}
