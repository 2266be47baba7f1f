// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The git views applied while the sandbox runs, not only at its end: every {@link #INTERVAL_MILLIS}
 * the layers are looked at, and one whose refs, HEAD or index moved is applied, so the
 * user sees the sandbox's commits on the host's branches as they are made. Git writes a
 * commit's objects before the ref that points at it, so a ref taken in passing never points
 * at an object the host lacks (and one that would is not taken, see {@link GitApply}).
 * After each git command the guard lets run ({@link #nudge()}) the layers are looked at
 * more often for a while. The host's ref updates take their locks in the host's git dir,
 * which the view never shows (launcher/src/git_snapshot.c): applies as often as these cannot make
 * the sandbox's git meet a lock of the host's.
 * {@link #finish()} stops the watch and applies once more, last.
 */
public final class LiveApply {
    /** How often the layers are looked at while the sandbox runs. */
    public static final long INTERVAL_MILLIS = 2_000;
    /** How often after a git command the guard let run ({@link #nudge()}), for {@link #NUDGED_MILLIS}. */
    public static final long NUDGED_INTERVAL_MILLIS = 100;
    /** How long the layers are looked at more often after a git command starts: most end sooner. */
    public static final long NUDGED_MILLIS = 20_000;

    private final List<GitApply> views;
    private final String[] seen;
    private final Set<String> lines = new LinkedHashSet<>();
    private final Thread thread;
    private boolean stopped; // under this
    /** Until when (System.nanoTime) the layers are looked at every {@link #NUDGED_INTERVAL_MILLIS}. */
    private long nudgedUntil; // under this
    private boolean nudged; // under this

    public LiveApply(List<GitApply> views) {
        this.views = List.copyOf(views);
        this.seen = new String[views.size()];
        this.thread = new Thread(new Runnable() {
            @Override
            public void run() {
                watch();
            }
        }, "agent-sandbox git apply");
        thread.setDaemon(true);
    }

    /** Starts the watch (nothing to do without views). */
    public void start() {
        if (!views.isEmpty()) {
            thread.start();
        }
    }

    private void watch() {
        while (awaitTick()) {
            applyChanged();
        }
    }

    /**
     * A git command the guard let run has started: its work is applied as soon as the layer
     * shows it (the layer is looked at every {@link #NUDGED_INTERVAL_MILLIS} for a while),
     * so host tools see a commit made inside within a fraction of a second.
     */
    public synchronized void nudge() {
        nudgedUntil = System.nanoTime() + NUDGED_MILLIS * 1_000_000;
        nudged = true;
        notifyAll();
    }

    private synchronized boolean awaitTick() {
        if (!stopped) {
            try {
                boolean fast = nudged && System.nanoTime() - nudgedUntil < 0;
                nudged = fast;
                wait(fast ? NUDGED_INTERVAL_MILLIS : INTERVAL_MILLIS);
            } catch (InterruptedException e) {
                return false;
            }
        }
        return !stopped;
    }

    private void applyChanged() {
        for (int i = 0; i < views.size(); i++) {
            String now = views.get(i).progress();
            if (!now.equals(seen[i])) {
                GitApply v = views.get(i);
                List<String> said = v.apply(false);
                // what applied whole without a word at this state needs no second apply at the end
                seen[i] = said.isEmpty() && !v.incomplete() ? now : null;
                synchronized (this) {
                    lines.addAll(said);
                }
            }
        }
    }

    /**
     * Stops the watch, applies what is left, and returns every line the applies said
     * (each once). Call once bwrap has ended, before the layers go.
     */
    public List<String> finish() {
        synchronized (this) {
            stopped = true;
            notifyAll();
        }
        agentsandbox.core.Threads.joinFully(thread);
        for (int i = 0; i < views.size(); i++) {
            // the watch has ended: nothing else reads seen[]. A view whose refs, HEAD and index
            // are as they were when it last applied cleanly has nothing new for the host (objects
            // no ref of the sandbox's points at are never needed)
            GitApply v = views.get(i);
            if (seen[i] != null && seen[i].equals(v.progress())) {
                continue;
            }
            List<String> said = v.apply();
            synchronized (this) {
                lines.addAll(said);
            }
        }
        synchronized (this) {
            return new ArrayList<>(lines);
        }
    }
}
