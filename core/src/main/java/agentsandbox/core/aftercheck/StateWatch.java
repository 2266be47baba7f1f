// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.Environment;
import agentsandbox.core.run.RunLayout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Watches the two directories later runs trust, agent-sandbox's state (its trust store)
 * and the global config's, across a run.
 *
 * <p>Every sandbox sees both as read-only or empty, but a run whose rules make a parent
 * writable ({@code --rw ~}) can rename that parent: the mount over the directory moves
 * with it, and a directory of the sandbox's own making takes its place, with a forged
 * trust record or a looser global config in it that the next run would obey. So the host
 * notes both directories (device and inode) before the run, and after it moves a
 * replaced or newly made one aside, under a name no sandbox can guess, and says so.
 */
public final class StateWatch {
    private final List<Path> dirs;
    private final List<String> before;

    private StateWatch(List<Path> dirs, List<String> before) {
        this.dirs = dirs;
        this.before = before;
    }

    /** Notes the directories as they are now. */
    public static StateWatch before(Environment env) {
        List<Path> dirs = new ArrayList<>();
        dirs.add(RunLayout.stateDir(env));
        Path global = globalConfigDir(env);
        if (global != null) {
            dirs.add(global);
        }
        List<String> ids = new ArrayList<>();
        for (Path d : dirs) {
            ids.add(identity(d));
        }
        return new StateWatch(dirs, ids);
    }

    /** The global config's directory ({@code $XDG_CONFIG_HOME/agent-sandbox}, else in the home), or null. */
    public static Path globalConfigDir(Environment env) {
        String xdg = env.env("XDG_CONFIG_HOME").orElse("");
        if (xdg.startsWith("/")) {
            // as the config reader and the trust store name it, not normalized: "link/.." leads
            // where the kernel says, and what is protected must be what is read
            return Path.of(xdg, "agent-sandbox");
        }
        return env.home() == null ? null : env.home().resolve(".config").resolve("agent-sandbox");
    }

    /**
     * Moves aside each watched directory that is not the one noted before the run.
     *
     * @return one line per directory moved (or that could not be), for the user
     */
    public List<String> after() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < dirs.size(); i++) {
            Path d = dirs.get(i);
            String now = identity(d);
            if (now.isEmpty() || now.equals(before.get(i))) {
                continue;
            }
            String what = i == 0 ? "agent-sandbox's state directory (its trust store)" : "the global config directory";
            try {
                Path aside = moveAside(d, ".replaced-");
                out.add(what + " " + d + (before.get(i).isEmpty() ? " was made" : " was replaced")
                        + " while the sandbox ran (a sandbox whose rules make a directory above it writable can do"
                        + " that): moved to " + aside + ", so later runs do not obey it; check it");
            } catch (IOException e) {
                out.add(what + " " + d + " was replaced while the sandbox ran, and could not be moved aside ("
                        + e.getMessage() + "): check it before the next run");
            }
        }
        return out;
    }

    /**
     * Renames {@code p} beside itself as {@code NAME<infix><time>-<random>}, a name no
     * sandbox can guess in advance, trying again on a taken name (a sandbox that fills the
     * directory with likely names must not keep its file in place). Never follows a link.
     */
    public static Path moveAside(Path p, String infix) throws IOException {
        SecureRandom random = new SecureRandom();
        IOException last = null;
        for (int i = 0; i < 8; i++) {
            Path aside = p.resolveSibling(p.getFileName() + infix + System.currentTimeMillis() + "-"
                    + Long.toHexString(random.nextLong() & Long.MAX_VALUE));
            try {
                Files.move(p, aside, LinkOption.NOFOLLOW_LINKS);
                return aside;
            } catch (java.nio.file.FileAlreadyExistsException e) {
                last = e;
            }
        }
        throw last;
    }

    /**
     * {@link #moveAside}, and where {@code p}'s directory lost its owner's write or search bit
     * (a sandbox can take them away from a directory it may write, so that a rename fails),
     * puts them back first, with the {@code .agent-sandbox-} infix.
     */
    public static Path moveAsideRestoringWrite(Path p) throws IOException {
        try {
            return moveAside(p, ".agent-sandbox-");
        } catch (java.nio.file.AccessDeniedException e) {
            java.nio.file.attribute.PosixFileAttributeView view = Files.getFileAttributeView(p.getParent(),
                    java.nio.file.attribute.PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
            java.util.Set<java.nio.file.attribute.PosixFilePermission> perms = view.readAttributes().permissions();
            perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_WRITE);
            perms.add(java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE);
            view.setPermissions(perms);
            return moveAside(p, ".agent-sandbox-");
        }
    }

    /** Device and inode, not following a link; empty when absent. */
    private static String identity(Path p) {
        try {
            Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino", LinkOption.NOFOLLOW_LINKS);
            return a.get("dev") + ":" + a.get("ino");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "";
        }
    }
}
