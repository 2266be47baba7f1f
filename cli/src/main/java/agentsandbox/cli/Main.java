// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;
import agentsandbox.core.run.Execution;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;

/** Entry point: collects the process's arguments, environment, streams and signals. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        int status = cli(out, err).run(List.of(args), SystemEnvironment.read());
        out.flush();
        err.flush();
        report(status);
        // halt, not exit: there are no shutdown hooks to run, and a background thread
        // still starting the git guard must not hold the exit up
        Runtime.getRuntime().halt(status);
    }

    /**
     * Hands the status to the launcher, which then stops this JVM (its own exit would
     * only cost time) and ends with the status (see launcher/src/run_jvm.c); without the
     * launcher's descriptor, nothing to do.
     */
    private static void report(int status) {
        // one write: the launcher reads both bytes at once
        tellLauncher(Execution.starterStillRemoving()
                ? new byte[] {(byte) status, (byte) Environment.STATUS_STARTER_REMOVING}
                : new byte[] {(byte) status});
    }

    private static boolean ready;

    /**
     * Tells the launcher, once, that SIGINT, SIGTERM and SIGHUP are handled from now on
     * ({@link Environment#STATUS_READY}).
     */
    static synchronized void ready() {
        if (!ready) {
            ready = true;
            tellLauncher(new byte[] {(byte) Environment.STATUS_READY});
        }
    }

    /**
     * The launcher's status pipe, opened at the first word and never closed: the launcher
     * stops this JVM once it has the status (closing would also load, at every start, a
     * class of the JDK that no training run needs).
     */
    private static FileOutputStream launcher;

    /** Writes to the launcher's status pipe; without the launcher's descriptor, nothing to do. */
    private static synchronized void tellLauncher(byte[] bytes) {
        String fd = System.getProperty(Environment.STATUS_PROPERTY);
        if (fd == null || fd.isEmpty() || fd.length() > 9) {
            return;
        }
        for (int i = 0; i < fd.length(); i++) {
            if (fd.charAt(i) < '0' || fd.charAt(i) > '9') {
                return;
            }
        }
        try {
            if (launcher == null) {
                launcher = new FileOutputStream("/proc/self/fd/" + fd);
            }
            launcher.write(bytes);
        } catch (IOException e) {
            // the launcher is gone (then so is this JVM in a moment), or there is no /proc:
            // the launcher then takes the status from the JVM's end
        }
    }

    /** The command line wired to real signals (also what the startup cache is trained on). */
    static Cli cli(PrintStream out, PrintStream err) {
        return new Cli(out, err, Signals.ON_INTERRUPT);
    }
}
