// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

/**
 * A value that one thread publishes once, or the failure that stands in for it, and that
 * other threads wait for: a future without an executor. The JDK's CompletableFuture would
 * bring the fork-join pool's classes onto every run's path for nothing this needs.
 */
final class Published<T> {
    private T value;
    private RuntimeException failure;
    private boolean done;

    /** Publishes {@code v}, unless something was published already. */
    synchronized void set(T v) {
        if (!done) {
            value = v;
            done = true;
            notifyAll();
        }
    }

    /** Publishes the failure that {@link #get} throws, unless something was published already. */
    synchronized void fail(RuntimeException e) {
        if (!done) {
            failure = e;
            done = true;
            notifyAll();
        }
    }

    /** Waits until something is published: the value, or the failure thrown. */
    synchronized T get() {
        boolean interrupted = false;
        while (!done) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw failure;
        }
        return value;
    }

    /** The value when it was published without a failure; null otherwise (never waits). */
    synchronized T now() {
        return done && failure == null ? value : null;
    }
}
