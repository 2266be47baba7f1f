// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.plan.MountChecks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Where a run's files are on the host: agent-sandbox's state directory, every run's
 * directory under it and what each holds, and the short base of the runs' sockets (see
 * {@link RunDir} for what each is for).
 */
public final class RunLayout {
    private RunLayout() {}

    public static final String OWNER = "owner";
    static final String HIDDEN = "hidden";
    static final String COMMAND = "command";
    static final String POLICY = "policy";
    /** The mounts the sandbox's first program checks ({@link MountChecks}), and their identities. */
    public static final String MOUNT_CHECKS = "mount-checks";
    public static final String MOUNT_IDENTITIES = "mounts";
    /** The layers of the git dirs' copy-on-write views, one directory each ({@code 0/upper}, {@code 0/work}). */
    public static final String GIT_LAYERS = "git-layers";
    /** What the sandbox's first program mounts as those views (RUNTIME_GIT_VIEWS in guard.h). */
    public static final String GIT_VIEWS = "git-views";
    public static final String GUARD = "guard";
    public static final String NET = "net";
    public static final String SOCKET = "socket";
    /** The ssh-agent relay's socket in the sockets directory (see SshAgentRelay). */
    public static final String SSH_AGENT = "ssh-agent";
    /** Beside the network proxy's socket: the ports the sandbox's first program listens on. */
    public static final String LISTEN = "listen";
    static final String TMP = "tmp";
    /** bwrap's messages while it sets the sandbox up (see {@link Execution}). */
    static final String SETUP_LOG = "bwrap-setup.log";
    private static final int HEX_DIGITS = 16;
    /** The longest path a Unix socket can be bound at (sun_path less its terminating NUL). */
    public static final int MAX_SOCKET_PATH = 107;

    /** The short base for the sockets' directories (not created). */
    public static Path socketsBase(Environment env) {
        String xdg = env.env("XDG_RUNTIME_DIR").orElse("");
        if (xdg.startsWith("/") && xdg.length() < 48) {
            Path dir = Path.of(xdg).normalize();
            try {
                Object owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
                if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) && Integer.valueOf(env.uid()).equals(owner)) {
                    return dir.resolve("agent-sandbox");
                }
            } catch (IOException | RuntimeException e) {
                // not usable: the fallback below
            }
        }
        return Path.of("/tmp/agent-sandbox-" + env.uid());
    }

    /** The directory of a run's sockets: the run's name under the sockets' base. */
    public static Path socketsDir(Path socketsBase, Path run) {
        return socketsBase.resolve(run.getFileName().toString());
    }

    /** agent-sandbox's own state directory for this environment (not created). */
    public static Path stateDir(Environment env) {
        String xdg = env.env("XDG_STATE_HOME").orElse("");
        if (xdg.startsWith("/")) {
            // as the config reader and the trust store name it, not normalized: "link/.." leads
            // where the kernel says, and what is protected must be what is read
            return Path.of(xdg, "agent-sandbox");
        }
        if (env.home() != null && Files.isDirectory(env.home())) {
            return env.home().resolve(".local/state/agent-sandbox");
        }
        // no home (only without @base): a private directory of this user in the temp dir
        return env.tempDir().resolve("agent-sandbox-state-" + env.uid());
    }

    /** Where the run directories are. */
    public static Path runsDir(Path stateDir) {
        return stateDir.resolve("run");
    }

    /** The path a new run directory would have (nothing is created). */
    public static Path newPath(Path stateDir, byte[] random) {
        // a plain loop: HexFormat costs an interpreted start more than this
        char[] hex = new char[random.length * 2];
        for (int i = 0; i < random.length; i++) {
            hex[2 * i] = HEX.charAt((random[i] >> 4) & 0xf);
            hex[2 * i + 1] = HEX.charAt(random[i] & 0xf);
        }
        return runsDir(stateDir).resolve(new String(hex));
    }

    private static final String HEX = "0123456789abcdef";

    public static Path hidden(Path run) {
        return run.resolve(HIDDEN);
    }

    public static Path command(Path run) {
        return run.resolve(COMMAND);
    }

    public static Path policy(Path run) {
        return run.resolve(POLICY);
    }

    /** The sandbox's /etc/resolv.conf when the network stack's resolver replaces the host's. */
    public static Path resolvConf(Path run) {
        return run.resolve("resolv.conf");
    }

    /**
     * The DNS filter's record of the names it refused (stack with an allow-list): written by
     * the launcher's filter on the host side, read for the denial log; never inside a sandbox.
     */
    public static Path netRefused(Path run) {
        return run.resolve("net-refused");
    }

    public static Path mountChecks(Path run) {
        return run.resolve(MOUNT_CHECKS);
    }

    public static Path gitLayers(Path run) {
        return run.resolve(GIT_LAYERS);
    }

    public static Path gitViews(Path run) {
        return run.resolve(GIT_VIEWS);
    }

    public static Path mountIdentities(Path run) {
        return run.resolve(MOUNT_IDENTITIES);
    }

    public static Path guardSocket(Path sockets) {
        return sockets.resolve(GUARD).resolve(SOCKET);
    }

    public static Path sshAgentSocket(Path sockets) {
        return sockets.resolve(SSH_AGENT);
    }

    public static Path netSocket(Path sockets) {
        return sockets.resolve(NET).resolve(SOCKET);
    }

    public static Path setupLog(Path run) {
        return run.resolve(SETUP_LOG);
    }

    public static Path tmp(Path run) {
        return run.resolve(TMP);
    }

    /** True for exactly 16 lower-case hex digits: the name of a run directory. */
    static boolean isRunName(String name) {
        if (name.length() != HEX_DIGITS) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /**
     * Eight random bytes for the per-run directory name. Read straight from the kernel:
     * {@code SecureRandom} would load the security provider framework on every start.
     * The name only needs to be unlikely to collide; the directory is created
     * exclusively, so a guessed name cannot be pre-planted.
     */
    public static byte[] randomName() {
        byte[] b = new byte[8];
        // a plain stream: the file system provider's channel costs a start more, interpreted
        try (java.io.InputStream in = new java.io.FileInputStream("/dev/urandom")) {
            if (in.readNBytes(b, 0, b.length) == b.length) {
                return b;
            }
        } catch (java.io.IOException e) {
            // fall through to a time- and pid-based name
        }
        long v = System.nanoTime() ^ (ProcessHandle.current().pid() << 32);
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (v >>> (8 * i));
        }
        return b;
    }
}
