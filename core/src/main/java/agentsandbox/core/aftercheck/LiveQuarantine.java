// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.run.ToolHomes;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * In the fallback (no copy-on-write views of the home): the watched settings files of the
 * granted caches ({@link ToolHomes.Watched}) moved aside the moment a sandbox creates or
 * replaces one, not only when the run ends, so that a host tool run meanwhile (a
 * {@code cargo build} in another terminal) never obeys it. The kernel tells (inotify, one
 * instance per run, through the JDK's watch service); the after-run check stays as the
 * last word.
 */
public final class LiveQuarantine implements AutoCloseable {
    private final WatchService watch;
    private final ToolHomes.Setup setup;
    private final Path stateDir;
    private final List<String> moved = new ArrayList<>();
    private final Thread thread;

    private LiveQuarantine(WatchService watch, ToolHomes.Setup setup, Path stateDir) {
        this.watch = watch;
        this.setup = setup;
        this.stateDir = stateDir;
        // a class of its own, not a lambda: no lambda on a run's start path (docs/startup.md)
        this.thread = new Thread("agent-sandbox live quarantine") {
            @Override
            public void run() {
                watchLoop();
            }
        };
        this.thread.setDaemon(true);
    }

    /** Starts watching the directories of {@code setup}'s watched files; null when there is nothing to watch. */
    public static LiveQuarantine start(ToolHomes.Setup setup, Path stateDir) {
        Set<Path> dirs = new LinkedHashSet<>();
        for (ToolHomes.Watched w : setup.watched()) {
            dirs.add(w.directory());
        }
        if (dirs.isEmpty()) {
            return null;
        }
        try {
            WatchService ws = FileSystems.getDefault().newWatchService();
            for (Path d : dirs) {
                try {
                    d.register(ws, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
                } catch (IOException e) {
                    // a directory that does not exist yet: the check after the run covers it
                }
            }
            LiveQuarantine q = new LiveQuarantine(ws, setup, stateDir);
            q.thread.start();
            return q;
        } catch (IOException e) {
            return null; // no inotify instance left: the check after the run still moves them aside
        }
    }

    private void watchLoop() {
        try {
            while (true) {
                WatchKey key = watch.take();
                key.pollEvents();
                key.reset();
                List<String> lines = Quarantine.moveAside(setup, stateDir);
                synchronized (moved) {
                    moved.addAll(lines);
                }
            }
        } catch (ClosedWatchServiceException | InterruptedException e) {
            // the run ended
        }
    }

    /** Stops watching; what was moved aside meanwhile, one line each, for the user. */
    public List<String> stop() {
        close();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (moved) {
            return List.copyOf(moved);
        }
    }

    @Override
    public void close() {
        try {
            watch.close();
        } catch (IOException e) {
            // closed
        }
    }
}
