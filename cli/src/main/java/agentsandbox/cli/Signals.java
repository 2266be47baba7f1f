package agentsandbox.cli;

import sun.misc.Signal;

/** SIGINT and SIGTERM handling for a running sandbox. */
final class Signals {
    private Signals() {}

    /** Runs {@code action} on every SIGINT or SIGTERM from now on. */
    static void onInterrupt(Runnable action) {
        Signal.handle(new Signal("INT"), s -> action.run());
        Signal.handle(new Signal("TERM"), s -> action.run());
    }
}
