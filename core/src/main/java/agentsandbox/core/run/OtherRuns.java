// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;

/**
 * The other runs of this user that still run, and the git dirs they can write without a
 * view of their own: a git dir below one of their read-write mounts (their record of what the
 * first program checks, {@link RunLayout#MOUNT_CHECKS}) that is not among their views
 * ({@link RunLayout#GIT_VIEWS}). A run that made a repository in its work tree, or one without
 * views, writes that git dir directly, and could swap a directory in it for a link while
 * another run's host side writes there. So a git dir such a run can write gets no view (and
 * no apply) in another run, and an apply finds out again before it writes.
 *
 * <p>What cannot be told counts as able to write: a run starting now, without its records
 * yet, or a record that does not read.
 */
public final class OtherRuns {
    /** The runs read: each its owner's pid, its read-write mounts' sources, its views (path and identity). */
    private record Run(long pid, List<Path> writable, List<String> views) {}

    private final List<Run> runs;

    private OtherRuns(List<Run> runs) {
        this.runs = runs;
    }

    /** None: a run that cannot look (no state dir). */
    public static final OtherRuns NONE = new OtherRuns(List.of());

    /** The runs in {@code runs} (the user's runs dir) but {@code self} that run now. */
    public static OtherRuns now(Path runs, String self) {
        StaleRuns.Owner me = StaleRuns.Owner.current();
        Path proc = Path.of("/proc");
        List<Run> found = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(runs)) {
            for (Path run : entries) {
                String name = run.getFileName().toString();
                if (!RunLayout.isRunName(name) || name.equals(self)) {
                    continue;
                }
                Run r = read(run, me, proc);
                if (r != null) {
                    found.add(r);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no runs dir yet: no other run
        }
        return new OtherRuns(List.copyOf(found));
    }

    /** The run in directory {@code run}, or null when it has ended. */
    private static Run read(Path run, StaleRuns.Owner me, Path proc) {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(run, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
        if (!attrs.isDirectory()) {
            return null;
        }
        byte[] owner = read(run.resolve(RunLayout.OWNER), 200);
        StaleRuns.Owner o = owner == null ? null
                : StaleRuns.Owner.parse(new String(owner, StandardCharsets.US_ASCII));
        if (o == null) {
            // a run writes its owner a moment after it makes its directory: one without it for
            // long was killed while it started, and the sweep removes it
            return attrs.lastModifiedTime().toMillis() > System.currentTimeMillis() - StaleRuns.OWNERLESS_MILLIS
                    ? new Run(0, null, List.of()) : null;
        }
        if (o.gone(me, proc)) {
            return null;
        }
        byte[] checks = read(run.resolve(RunLayout.MOUNT_CHECKS), 16 << 20);
        byte[] views = read(run.resolve(RunLayout.GIT_VIEWS), 16 << 20);
        return new Run(o.pid(), checks == null ? null : writable(checks), views == null ? List.of() : views(views));
    }

    private static byte[] read(Path file, int max) {
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) || Files.size(file) > max) {
                return null;
            }
            return Files.readAllBytes(file);
        } catch (IOException e) {
            return null;
        }
    }

    private static List<String> fields(byte[] bytes) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                out.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        return out;
    }

    /** The sources of the read-write mounts of a mount-checks record (three fields per mount); null when it does not read. */
    private static List<Path> writable(byte[] checks) {
        List<String> f = fields(checks);
        if (f.size() % 3 != 0) {
            return null;
        }
        List<Path> out = new ArrayList<>();
        for (int i = 0; i < f.size(); i += 3) {
            if (f.get(i).equals(String.valueOf(agentsandbox.core.plan.MountChecks.BIND))) {
                out.add(Path.of(f.get(i + 1)));
            }
        }
        return out;
    }

    /** Each git view of a views record as {@code path NUL dev:ino}: after the owner's ids, six fields a git dir, four a home's. */
    private static List<String> views(byte[] record) {
        List<String> f = fields(record);
        List<String> out = new ArrayList<>();
        int i = 2;
        while (i < f.size()) {
            String kind = f.get(i);
            if (kind.equals(String.valueOf(agentsandbox.core.git.GitViews.KIND)) && i + 5 < f.size()) {
                out.add(f.get(i + 1) + "\0" + f.get(i + 5));
                i += 6;
            } else if (kind.equals(String.valueOf(agentsandbox.core.homes.HomeViews.KIND))) {
                i += 4;
            } else {
                return List.of(); // not read whole: as if it had no view
            }
        }
        return out;
    }

    /**
     * A run of these that can write {@code gitDir} (a real path) without a view of it, as words
     * for the user ("pid 1234"); null when none can. A run whose records cannot be read yet
     * (one starting at this moment) counts.
     */
    public String writerOf(Path gitDir) {
        return writerOf(gitDir, true);
    }

    /** Whether every run of these could be read (none is starting at this moment). */
    public boolean settled() {
        for (Run r : runs) {
            if (r.writable() == null) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link #writerOf(Path)}; a run whose records cannot be read yet counts only with
     * {@code unreadWrites}. A run deciding its views leaves such runs out: one that then
     * writes the git dir without a view stops its applies (they look with it counted), where
     * counting it would give up the view for a run that will have one.
     */
    public String writerOf(Path gitDir, boolean unreadWrites) {
        if (runs.isEmpty()) {
            return null;
        }
        String identity;
        try {
            identity = Files.getAttribute(gitDir, "unix:dev", LinkOption.NOFOLLOW_LINKS) + ":"
                    + Files.getAttribute(gitDir, "unix:ino", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | RuntimeException e) {
            identity = "";
        }
        for (Run r : runs) {
            if (r.writable() == null) {
                if (unreadWrites) {
                    return r.pid() > 0 ? "pid " + r.pid() : "one starting now";
                }
                continue;
            }
            boolean below = false;
            for (Path w : r.writable()) {
                below |= gitDir.startsWith(w) || w.startsWith(gitDir); // the git dir, or a part of it
            }
            if (below && !r.views().contains(gitDir + "\0" + identity)) {
                return "pid " + r.pid();
            }
        }
        return null;
    }
}
