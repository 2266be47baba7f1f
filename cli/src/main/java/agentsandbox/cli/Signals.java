package agentsandbox.cli;

import sun.misc.Signal;

/**
 * SIGINT, SIGTERM and SIGHUP handling for a running sandbox: each ends the run the same
 * way (bwrap is stopped, the run's directories are removed, exit status 130). A hangup
 * (the terminal closed, or a process sending SIGHUP) would otherwise end the JVM at once
 * and leave the run's directories to the next run's sweep. A signal the caller ignores
 * (SIGHUP under nohup) stays ignored: the JVM installs no handler for it.
 */
final class Signals {
    private Signals() {}

    /**
     * Runs {@code action} on every SIGINT, SIGTERM or SIGHUP from now on, and tells the
     * launcher so: until then it ends the tool itself on such a signal a process sends it
     * (the JVM's own handling, early in its start, would print Java's words and exit 143).
     */
    static void onInterrupt(Runnable action) {
        Signal.handle(new Signal("INT"), s -> action.run());
        Signal.handle(new Signal("TERM"), s -> action.run());
        Signal.handle(new Signal("HUP"), s -> action.run());
        Main.ready();
    }
}
