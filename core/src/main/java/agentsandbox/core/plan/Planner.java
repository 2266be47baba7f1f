// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Specificity;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Orders the winning rules into mounts, shallow to deep, so a deeper rule overlays a
 * shallower one. A mount that would change nothing (a read-only path under a read-only
 * mount with nothing in between, read-write under read-write, hidden under hidden) is
 * left out: every bind costs bwrap time, and the result is the same.
 */
public final class Planner {
    private Planner() {}

    /** Shallow to deep; equal depths by path, so the order is deterministic. */
    public static final Comparator<Path> DEPTH_ORDER = new Comparator<>() {
        @Override
        public int compare(Path a, Path b) {
            int depth = Integer.compare(a.getNameCount(), b.getNameCount());
            return depth != 0 ? depth : a.toString().compareTo(b.toString());
        }
    };

    /** Paths whose content inside the sandbox is not the host's (fresh mounts). */
    private static final List<Path> FRESH = List.of(Path.of("/dev"), Path.of("/proc"), Path.of("/run"));

    /**
     * @param decisions  one per path
     * @param hiddenFile the empty mode-000 file bound over excluded files
     * @param notes      receives one line per path: its level and the deciding rule
     * @param detail     whether to write those lines (for --debug; thousands of matches
     *                   make thousands of lines nobody reads otherwise)
     */
    public static List<Mount> plan(List<Specificity.Decision> decisions, Path hiddenFile, List<String> notes,
            boolean detail) {
        List<Specificity.Decision> sorted = new ArrayList<>(decisions);
        sorted.sort(new Comparator<Specificity.Decision>() {
            @Override
            public int compare(Specificity.Decision a, Specificity.Decision b) {
                return DEPTH_ORDER.compare(a.path(), b.path());
            }
        });
        List<Mount> mounts = new ArrayList<>();
        java.util.Map<Path, Specificity.Decision> done = new java.util.HashMap<>();
        // Shallow to deep, siblings next to each other: every path in one directory has the
        // same nearest ancestor, looked up once (nothing shallower is decided meanwhile).
        Path lastDir = null;
        Specificity.Decision lastDirAncestor = null;
        for (Specificity.Decision d : sorted) {
            Candidate w = d.winner();
            Path dir = w.path().getParent();
            Specificity.Decision parent;
            if (dir != null && dir.equals(lastDir)) {
                parent = lastDirAncestor;
            } else {
                parent = nearestAncestor(done, w.path());
                lastDir = dir;
                lastDirAncestor = parent;
            }
            if (redundant(w, parent)) {
                if (detail) {
                    notes.add(pad(w.access().word()) + w.path() + "  <- " + describe(w) + overrides(d)
                            + "; unchanged, already " + w.access().word() + " via "
                            + (parent == null ? "/" : parent.path()));
                }
            } else {
                Mount m = mountFor(w, hiddenFile);
                mounts.add(m);
                if (detail) {
                    notes.add(pad(w.access().word()) + w.path() + "  <- " + describe(w) + overrides(d));
                }
            }
            done.put(d.path(), d);
        }
        return mounts;
    }

    /** The decision of the deepest proper ancestor of {@code p}: a walk up, linear in the depth. */
    private static Specificity.Decision nearestAncestor(java.util.Map<Path, Specificity.Decision> done, Path p) {
        for (Path up = p.getParent(); up != null; up = up.getParent()) {
            Specificity.Decision d = done.get(up);
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    private static boolean redundant(Candidate w, Specificity.Decision parent) {
        // the cheap reasons first: a plan may decide tens of thousands of paths
        if (parent == null ? w.access() != Access.RO : parent.winner().access() != w.access()) {
            return false;
        }
        if (w.source() != w.path() && !w.source().equals(w.path())) {
            return false;
        }
        for (Path f : FRESH) {
            // In a fresh file system nothing of the host shows unless bound there: a rule
            // is never a no-op because of one above that file system (such as "ro /").
            if (w.path().startsWith(f) && (parent == null || !parent.path().startsWith(f))) {
                return false;
            }
        }
        if (parent == null) {
            // Under the read-only root: only a read-only rule on host content is a no-op.
            // (also "ro /" itself: the root is mounted read-only first, and binding it again
            // would cover the sandbox's own /dev, /proc and /run with the host's)
            return w.access() == Access.RO;
        }
        Candidate p = parent.winner();
        if (p.access() != w.access()) {
            return false;
        }
        // Under a hidden directory, hidden stays hidden; under a bind, the same host
        // content shows through only when the bind shows the host path itself.
        return w.access() == Access.EXCLUDE || p.source() == p.path() || p.source().equals(p.path());
    }

    private static Mount mountFor(Candidate w, Path hiddenFile) {
        return switch (w.access()) {
            case RO -> new Mount(Mount.Kind.READ_ONLY, w.source(), w.path(), Access.RO, w.origin());
            case RW -> new Mount(Mount.Kind.READ_WRITE, w.source(), w.path(), Access.RW, w.origin());
            case EXCLUDE -> (w.directory() != null ? w.directory() : Files.isDirectory(w.path()))
                    ? new Mount(Mount.Kind.EMPTY_DIR, w.path(), w.path(), Access.EXCLUDE, w.origin())
                    : new Mount(Mount.Kind.UNREADABLE_FILE, hiddenFile, w.path(), Access.EXCLUDE, w.origin());
        };
    }

    private static String describe(Candidate c) {
        String s = c.origin().toString();
        if (c.origin().layer() != Layer.PRESET) {
            s += " (" + c.access().word() + " " + c.rule() + (c.exact() ? "" : ", glob") + ")";
        }
        return s;
    }

    private static String overrides(Specificity.Decision d) {
        if (d.overridden().isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("; overrides ");
        for (int i = 0; i < d.overridden().size(); i++) {
            Candidate c = d.overridden().get(i);
            sb.append(i == 0 ? "" : ", ").append(c.access().word()).append(" from ").append(describe(c));
        }
        return sb.toString();
    }

    /** An access word padded to the width of the longest ({@code exclude}) plus one space. */
    public static String pad(String word) {
        return word.length() >= 8 ? word + " " : word + " ".repeat(8 - word.length());
    }
}
