// SPDX-License-Identifier: Apache-2.0
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
        Handler handler = new Handler(action);
        Signal.handle(new Signal("INT"), handler);
        Signal.handle(new Signal("TERM"), handler);
        Signal.handle(new Signal("HUP"), handler);
        Main.ready();
    }

    /** Runs the action on a signal. */
    private static final class Handler implements sun.misc.SignalHandler {
        private final Runnable action;

        Handler(Runnable action) {
            this.action = action;
        }

        @Override
        public void handle(Signal signal) {
            action.run();
        }
    }

    /** {@link #onInterrupt} as the command line takes it. */
    static final java.util.function.Consumer<Runnable> ON_INTERRUPT = new java.util.function.Consumer<Runnable>() {
        @Override
        public void accept(Runnable action) {
            onInterrupt(action);
        }
    };
}
