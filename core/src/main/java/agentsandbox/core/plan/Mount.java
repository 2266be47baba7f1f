// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Origin;

import java.nio.file.Path;
import java.util.List;

/**
 * One mount of the plan, policy or not: what appears at a path inside the sandbox, which
 * host file (the view) it shows, with which access, and why. The plan is one ordered list
 * of these, rendered to bwrap's arguments in one place ({@link #args()}).
 *
 * @param kind   how bwrap realises it
 * @param source the host path it shows (the empty file standing in for a hidden file; a
 *               symbolic link's text), or {@code null} for fresh file systems
 * @param target the path inside the sandbox
 * @param access the resulting access level
 * @param origin the rule or mechanism that decided it
 */
public record Mount(Kind kind, Path source, Path target, Access access, Origin origin, long size) {

    /** A mount without a size (every kind but {@link Kind#BOUNDED_TMP}). */
    public Mount(Kind kind, Path source, Path target, Access access, Origin origin) {
        this(kind, source, target, access, origin, 0);
    }

    /** How a mount is made. */
    public enum Kind {
        /** {@code --ro-bind / /}: the host root, read-only. */
        ROOT,
        /** {@code --dev /dev}: a fresh device directory. */
        DEVICES,
        /** {@code --proc /proc}: the sandbox's own processes. */
        PROCESSES,
        /** {@code --tmpfs DEST}: a fresh, empty, writable file system. */
        FRESH_DIR,
        /**
         * {@code --ro-bind-try SRC DEST}; {@code --ro-bind} when the source is another path
         * than the target (a view this run creates must exist).
         */
        READ_ONLY,
        /** {@code --bind-try SRC DEST}; {@code --bind} when the source is another path than the target. */
        READ_WRITE,
        /** {@code --tmpfs DEST}: an excluded directory appears empty. */
        EMPTY_DIR,
        /** {@code --ro-bind EMPTY DEST}: an excluded file, unreadable (mode 000). */
        UNREADABLE_FILE,
        /** {@code --ro-bind /dev/null DEST}: a socket or file made unreachable. */
        NULL_DEVICE,
        /** {@code --symlink TEXT DEST}. */
        SYMLINK,
        /** {@code --perms 0111 --dir DEST}: a directory that can be searched, not listed. */
        SEARCH_ONLY_DIR,
        /** {@code --remount-ro DEST}: what was mounted at DEST becomes read-only. */
        REMOUNT_READ_ONLY,
        /** {@code --perms 0700 --tmpfs DEST}: a fresh, empty, writable file system only its owner enters. */
        PRIVATE_DIR,
        /** {@code --size SIZE --tmpfs DEST}: the private /tmp, a fresh file system in memory of at most SIZE bytes. */
        BOUNDED_TMP
    }

    public static Mount of(Kind kind, Path source, Path target, Access access, Origin origin) {
        return new Mount(kind, source, target, access, origin);
    }

    /** Whether this mount shows a host path at another path: a second view of it. */
    public boolean isView() {
        return source != null && (kind == Kind.READ_ONLY || kind == Kind.READ_WRITE) && source != target
                && !source.equals(target);
    }

    /** The bwrap arguments for a list of mounts, in order. */
    public static List<String> render(List<Mount> mounts) {
        List<String> out = new java.util.ArrayList<>();
        for (Mount m : mounts) {
            out.addAll(m.args());
        }
        return out;
    }

    /** The bwrap arguments for this mount. */
    public List<String> args() {
        String t = target.toString();
        return switch (kind) {
            case ROOT -> List.of("--ro-bind", "/", "/");
            case DEVICES -> List.of("--dev", t);
            case PROCESSES -> List.of("--proc", t);
            case FRESH_DIR, EMPTY_DIR -> List.of("--tmpfs", t);
            case READ_ONLY -> List.of(isView() ? "--ro-bind" : "--ro-bind-try", source.toString(), t);
            case READ_WRITE -> List.of(isView() ? "--bind" : "--bind-try", source.toString(), t);
            case UNREADABLE_FILE -> List.of("--ro-bind", source.toString(), t);
            case NULL_DEVICE -> List.of("--ro-bind", "/dev/null", t);
            case SYMLINK -> List.of("--symlink", source.toString(), t);
            case SEARCH_ONLY_DIR -> List.of("--perms", "0111", "--dir", t);
            case REMOUNT_READ_ONLY -> List.of("--remount-ro", t);
            case PRIVATE_DIR -> List.of("--perms", "0700", "--tmpfs", t);
            case BOUNDED_TMP -> List.of("--size", Long.toString(size), "--tmpfs", t);
        };
    }
}
