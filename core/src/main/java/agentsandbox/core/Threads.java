// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

/** Waiting for agent-sandbox's own helper threads. */
public final class Threads {
    private Threads() {}

    /**
     * Waits until {@code thread} has ended, whatever interrupts come meanwhile (the wait is
     * for work that must finish, as a merge or a last look); an interrupt is kept for the
     * caller.
     */
    public static void joinFully(Thread thread) {
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
