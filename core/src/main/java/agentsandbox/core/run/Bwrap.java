// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The bwrap process of a run, started by this JVM ({@link #of(Process)}) or by the
 * launcher's starter ({@link BwrapStarter}).
 */
public interface Bwrap {
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

    /**
     * After bwrap has ended ({@link #waitFor()} returned): asks its starter to remove these
     * directories and all in them, never following a link (as {@link SafeRemoval#removeTree}
     * does, in native code, which costs a run a fraction of what the interpreted JVM's
     * file API costs), and returns at once: the removal runs while the caller does its
     * own checks after the run. False when there is no starter to ask.
     */
    default boolean requestRemoval(List<Path> trees) {
        return false;
    }

    /**
     * Waits for the removal {@link #requestRemoval} asked for. False when there was none
     * or the starter did not remove everything: the caller removes what is left.
     */
    default boolean removed() {
        return false;
    }

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
