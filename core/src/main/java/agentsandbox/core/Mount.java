package agentsandbox.core;

import java.nio.file.Path;
import java.util.List;

/**
 * One policy mount of the plan: the final access level of a path and the rule that
 * decided it.
 *
 * @param kind   how bwrap realises it
 * @param source the host path (or the empty file standing in for a hidden file)
 * @param target the path inside the sandbox
 * @param access the resulting access level
 * @param origin the rule that decided it
 */
public record Mount(Kind kind, Path source, Path target, Access access, Origin origin) {

    /** How a mount is made. */
    public enum Kind {
        /** {@code --ro-bind-try SRC DEST}. */
        READ_ONLY,
        /** {@code --bind-try SRC DEST}. */
        READ_WRITE,
        /** {@code --tmpfs DEST}: an excluded directory appears empty. */
        EMPTY_DIR,
        /** {@code --ro-bind EMPTY DEST}: an excluded file, unreadable (mode 000). */
        UNREADABLE_FILE,
        /** {@code --ro-bind /dev/null DEST}: a socket made unreachable. */
        NULL_DEVICE
    }

    /** The bwrap arguments for this mount. */
    public List<String> args() {
        return switch (kind) {
            case READ_ONLY -> List.of("--ro-bind-try", source.toString(), target.toString());
            case READ_WRITE -> List.of("--bind-try", source.toString(), target.toString());
            case EMPTY_DIR -> List.of("--tmpfs", target.toString());
            case UNREADABLE_FILE -> List.of("--ro-bind", source.toString(), target.toString());
            case NULL_DEVICE -> List.of("--ro-bind", "/dev/null", target.toString());
        };
    }
}
