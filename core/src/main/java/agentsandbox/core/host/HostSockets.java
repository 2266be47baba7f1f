// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.rules.Resolver;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The host session's sockets and the variables that invite a sandbox to them.
 *
 * <p>A Unix socket file can be connected to wherever it is readable: a read-only bind
 * does not stop {@code connect()}. Most session sockets are out of reach already: those
 * in {@code $XDG_RUNTIME_DIR} (D-Bus, Wayland, gpg-agent, PipeWire, systemd, editors) are
 * under {@code /run}, which every sandbox gets fresh, and those in the host's {@code /tmp}
 * (tmux, X11, ssh-agent, D-Bus without systemd) are behind the sandbox's private
 * {@code /tmp}. What is left is found here:
 * <ul>
 * <li>every socket a variable of the caller points at ({@code SSH_AUTH_SOCK},
 *     {@code DBUS_SESSION_BUS_ADDRESS=unix:path=…}, {@code TMUX}'s first field, and any
 *     variable whose value is the path of a socket), and the variable itself;</li>
 * <li>well-known session directories outside {@code /run} and {@code /tmp}: tmux's
 *     {@code $TMUX_TMPDIR}, screen's, the Emacs server's, Jupyter's runtime files, and
 *     the X authority file;</li>
 * <li>with the host's temp dir shared, the sockets in it at any depth (bounded), and the
 *     directories directly in it that hold sockets.</li>
 * </ul>
 * Each becomes unreachable inside (a socket or file: {@code /dev/null} or the empty file
 * over it; a directory: empty), and the variables are not passed on, unless an opt-in
 * grants that one socket.
 */
public final class HostSockets {
    private HostSockets() {}

    /** Variables that only point at host session services; the command never gets them. */
    static final List<String> SESSION_VARIABLES = List.of(
            "TMUX", "TMUX_PANE", "STY", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
            "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "SWAYSOCK", "I3SOCK", "NIRI_SOCKET",
            "HYPRLAND_INSTANCE_SIGNATURE", "NVIM", "NVIM_LISTEN_ADDRESS", "VSCODE_IPC_HOOK_CLI",
            "VSCODE_GIT_IPC_HANDLE", "KITTY_LISTEN_ON", "WEZTERM_UNIX_SOCKET", "ALACRITTY_SOCKET",
            "ZELLIJ_SESSION_NAME", "PULSE_SERVER");

    /** At most this many entries of a shared temp dir are looked at (and this many of each directory in it). */
    private static final int SCAN_LIMIT = 4096;
    private static final int SCAN_DIR_LIMIT = 64;
    private static final int S_IFMT = 0170000;
    private static final int S_IFSOCK = 0140000;

    /**
     * What to hide and which variables to drop.
     *
     * @param sockets     socket (or credential) files to make unreachable
     * @param directories directories to show empty
     * @param dropped     variables not passed on
     * @param notes       one line per decision, for {@code --debug}
     */
    public record Found(List<Path> sockets, List<Path> directories, List<String> dropped, List<String> notes) {}

    /**
     * @param env      the caller's environment
     * @param keep     variables an opt-in keeps (with their sockets)
     * @param sharedTmp the host temp dir when the sandbox shares it, else null
     */
    public static Found find(Environment env, Set<String> keep, Path sharedTmp) {
        Set<Path> sockets = new LinkedHashSet<>();
        Set<Path> dirs = new LinkedHashSet<>();
        List<String> dropped = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (Map.Entry<String, String> e : new java.util.TreeMap<>(env.hostEnv()).entrySet()) {
            String name = e.getKey();
            if (keep.contains(name) || name.equals("DOCKER_HOST")) {
                // DOCKER_HOST: the Docker rules decide about its socket, and keep the variable
                continue;
            }
            Path socket = socketNamedBy(name, e.getValue());
            boolean session = SESSION_VARIABLES.contains(name);
            if (socket != null) {
                sockets.add(socket);
            }
            if (session || socket != null) {
                dropped.add(name);
                notes.add("host services: " + name + " not passed on" + (socket == null ? "" : " (socket " + socket
                        + " hidden)"));
            }
        }
        Path home = env.home();
        String tmuxTmp = env.env("TMUX_TMPDIR").orElse("");
        if (tmuxTmp.startsWith("/")) {
            addDir(dirs, Path.of(tmuxTmp).resolve("tmux-" + env.uid()));
        }
        String screenDir = env.env("SCREENDIR").orElse("");
        if (screenDir.startsWith("/")) {
            addDir(dirs, Path.of(screenDir));
        }
        if (home != null) {
            addDir(dirs, home.resolve(".screen"));
            addDir(dirs, home.resolve(".emacs.d/server"));
            addDir(dirs, home.resolve(".config/emacs/server"));
            addDir(dirs, home.resolve(".local/share/jupyter/runtime"));
            Path xauth = home.resolve(".Xauthority");
            if (Files.isRegularFile(xauth, LinkOption.NOFOLLOW_LINKS)) {
                sockets.add(xauth);
            }
        }
        String xauthority = env.env("XAUTHORITY").orElse("");
        if (xauthority.startsWith("/") && Files.isRegularFile(Path.of(xauthority))) {
            sockets.add(Path.of(xauthority));
        }
        if (sharedTmp != null) {
            scanShared(sharedTmp, env.uid(), sockets, dirs);
        }
        for (Path d : dirs) {
            notes.add("host services: " + d + " shown empty (session sockets)");
        }
        return new Found(List.copyOf(sockets), List.copyOf(dirs), dropped, notes);
    }

    /** The socket a variable's value names, or null: a path, {@code unix:path=…}, {@code unix://…}, TMUX's first field. */
    public static Path socketNamedBy(String name, String value) {
        String v = value;
        if (name.equals("TMUX")) {
            int comma = v.indexOf(',');
            v = comma < 0 ? v : v.substring(0, comma);
        }
        if (v.startsWith("unix:path=")) {
            v = v.substring("unix:path=".length());
            int end = v.indexOf(',');
            v = end < 0 ? v : v.substring(0, end);
        } else if (v.startsWith("unix://")) {
            v = v.substring("unix://".length());
        }
        if (!v.startsWith("/") || v.length() > 4096 || v.indexOf('\n') >= 0 || v.indexOf(':') >= 0) {
            return null;
        }
        Path p;
        try {
            p = Path.of(v).normalize();
        } catch (RuntimeException e) {
            return null;
        }
        return isSocket(p) ? p : null;
    }

    static boolean isSocket(Path p) {
        try {
            // most variables that hold a path name a directory or a file, or nothing: told
            // without the exception of a missing path or the attribute map (each dear in the
            // interpreter, for every such variable at every start)
            if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS) || !Files.readAttributes(p,
                    java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).isOther()) {
                return false;
            }
            Object mode = Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return mode instanceof Integer m && (m & S_IFMT) == S_IFSOCK;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void addDir(Set<Path> dirs, Path dir) {
        if (Resolver.isRealDirectory(dir)) {
            dirs.add(dir);
        }
    }

    /**
     * The sockets directly in the shared temp dir, and its directories that hold sockets
     * (tmux-UID, ssh-XXXX, .X11-unix, dbus-XXXX, emacsUID, …), shown empty; below the
     * other directories, every socket at any depth (/tmp/a/b/sock), covered one by one.
     * Bounded: at most SCAN_LIMIT entries in all, SCAN_DEPTH directories deep.
     */
    private static void scanShared(Path tmp, int uid, Set<Path> sockets, Set<Path> dirs) {
        int[] seen = {0};
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmp)) {
            for (Path e : entries) {
                if (++seen[0] > SCAN_LIMIT) {
                    break;
                }
                if (isSocket(e)) {
                    sockets.add(e);
                } else if (Resolver.isRealDirectory(e)) {
                    if (holdsSocket(e)) {
                        dirs.add(e);
                    } else {
                        deepSockets(e, 2, seen, sockets);
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // an unreadable temp dir shows nothing inside either
        }
    }

    /** How deep below the shared temp dir sockets are looked for. */
    private static final int SCAN_DEPTH = 8;

    private static void deepSockets(Path dir, int depth, int[] seen, Set<Path> sockets) {
        if (depth > SCAN_DEPTH) {
            return;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (++seen[0] > SCAN_LIMIT) {
                    return;
                }
                if (isSocket(e)) {
                    sockets.add(e);
                } else if (Resolver.isRealDirectory(e)) {
                    deepSockets(e, depth + 1, seen, sockets);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not ours to read: not reachable from inside either
        }
    }

    private static boolean holdsSocket(Path dir) {
        int seen = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (++seen > SCAN_DIR_LIMIT) {
                    return false;
                }
                if (isSocket(e)) {
                    return true;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not ours to read: not reachable from inside either
        }
        return false;
    }
}
