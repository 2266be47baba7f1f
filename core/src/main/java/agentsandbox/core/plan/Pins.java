// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.run.OwnState;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.Sandbox;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Pinned directories: a protected path's parents that a sandbox could rename.
 *
 * <p>A read-only or hidden path below a writable directory keeps its content, but the
 * names around it are the sandbox's: it could rename a directory on the way (the mount
 * moves along with it) and put one of its own making in its place, with its own files
 * at the protected names, which the host's tools then read ({@code ~/.sbt/1.0/plugins},
 * Bun's global packages in {@code ~/.bun/install/global}), or which later runs obey
 * (agent-sandbox's own state and global config, {@link OwnState}). So each directory on
 * the way whose parent the sandbox can write is made a mount point of its own, with the
 * access it has anyway: the kernel refuses to rename or remove a mount point
 * ({@code EBUSY}), so the path keeps leading to the host's directories for as long as the
 * sandbox runs, and nothing needs to be checked or moved aside afterwards.
 *
 * <p>This holds for agent-sandbox's own directories and for every protected path outside
 * the working directory. Inside the working directory, renaming directories is the
 * project's everyday work (a package that holds a lint config), and the project is
 * writable anyway: there a protected path keeps its content, not its name (the README's
 * threat model).
 */
public final class Pins {
    private Pins() {}

    /** The origin of a pinned directory's mount. */
    public static final Origin PINNED = new Origin(Layer.PRESET,
            "pinned: a directory on the way to a protected path, which no sandbox may rename");

    /**
     * Pins the directories on the way to agent-sandbox's own directories (at every path the
     * sandbox sees them by) and to every read-only or hidden mount among
     * {@code mounts[from, to)} outside {@code workDir}: inserts their mounts right after the
     * mount each would otherwise be part of (before anything deeper is mounted).
     *
     * @return how many mounts were inserted at or before index {@code to}, so that the
     *         caller can move that index
     */
    public static int pin(List<Mount> mounts, int from, int to, Environment env, Path workDir) {
        Set<Path> protectedPaths = new LinkedHashSet<>();
        for (Path dir : OwnState.directories(env)) {
            Path real = Resolver.realPath(dir);
            if (real != null) {
                protectedPaths.addAll(Views.of(real, mounts));
            }
        }
        for (int i = from; i < to; i++) {
            Mount m = mounts.get(i);
            if (m.access() != Access.RW && (workDir == null || !m.target().startsWith(workDir))) {
                protectedPaths.add(m.target());
            }
        }
        Set<Path> ancestors = new LinkedHashSet<>();
        for (Path p : protectedPaths) {
            for (int i = 1; i < p.getNameCount(); i++) {
                ancestors.add(p.getRoot().resolve(p.subpath(0, i)));
            }
        }
        List<Path> shallowFirst = new ArrayList<>(ancestors);
        shallowFirst.sort(Planner.DEPTH_ORDER);
        int inserted = 0;
        for (Path a : shallowFirst) {
            int at = insertPin(mounts, a);
            if (at >= 0 && at <= to + inserted) {
                inserted++;
            }
        }
        return inserted;
    }

    /** Inserts a pin at {@code a} when its parent is a writable host directory; its index, or -1. */
    private static int insertPin(List<Mount> mounts, Path a) {
        int covering = showing(a, mounts);
        if (covering < 0 || mounts.get(covering).kind() != Mount.Kind.READ_WRITE
                || mounts.get(covering).target().equals(a)) {
            return -1; // a mount point already, or a read-only or fresh parent: nothing to rename there
        }
        Mount m = mounts.get(covering);
        Path source = m.source().resolve(m.target().relativize(a).toString());
        if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
            return -1;
        }
        mounts.add(covering + 1, Mount.of(Mount.Kind.READ_WRITE, source, a, Access.RW, PINNED));
        return covering + 1;
    }

    /** The index of the mount whose content is seen at {@code p} (the deepest at or above it, then the last); -1 for none. */
    private static int showing(Path p, List<Mount> mounts) {
        int shows = -1;
        for (int i = 0; i < mounts.size(); i++) {
            Mount m = mounts.get(i);
            if (p.startsWith(m.target()) && m.kind() != Mount.Kind.REMOUNT_READ_ONLY
                    && (shows < 0 || m.target().getNameCount() >= mounts.get(shows).target().getNameCount())) {
                shows = i;
            }
        }
        return shows;
    }

    /** Whether the mount that shows {@code p} inside is a writable host directory. */
    public static boolean writable(Path p, List<Mount> mounts) {
        int shows = showing(p, mounts);
        return shows >= 0 && mounts.get(shows).kind() == Mount.Kind.READ_WRITE;
    }
}
