package agentsandbox.core;

import java.util.concurrent.TimeUnit;

/**
 * The bwrap process of a run, started by this JVM ({@link #of(Process)}) or by the
 * launcher's starter ({@link BwrapStarter}).
 */
interface Bwrap {
    /** bwrap's process id. */
    long pid();

    /**
     * Waits for bwrap to end.
     *
     * @return its exit status, 128 + the signal's number when a signal ended it
     */
    int waitFor() throws InterruptedException;

    /** Waits at most {@code millis} for bwrap to end; true when it has. */
    boolean waitFor(long millis) throws InterruptedException;

    /** Asks bwrap to end (SIGTERM). */
    void terminate();

    /** Ends bwrap now (SIGKILL). */
    void kill();

    /** bwrap as a child of this JVM. */
    static Bwrap of(Process process) {
        return new Bwrap() {
            @Override
            public long pid() {
                return process.pid();
            }

            @Override
            public int waitFor() throws InterruptedException {
                return process.waitFor();
            }

            @Override
            public boolean waitFor(long millis) throws InterruptedException {
                return process.waitFor(millis, TimeUnit.MILLISECONDS);
            }

            @Override
            public void terminate() {
                process.destroy();
            }

            @Override
            public void kill() {
                process.destroyForcibly();
            }
        };
    }
}
