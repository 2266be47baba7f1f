// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The programs agent-sandbox itself runs on the host, outside any sandbox (bwrap, the network
 * stack, the host's git for the apply, gpgconf, mknod, diff), found on the caller's PATH only
 * in directories the user cannot write.
 *
 * <p>A sandbox writes only what the user can write (the project, a granted directory), and
 * what it writes stays when it ends. A program found where the user can write may be one a
 * sandbox put there, which the next run would start with the user's full rights: a project's
 * {@code .venv/bin} or {@code node_modules/.bin} on the PATH, {@code ~/.local/bin} under
 * {@code --rw ~}. So a program counts only when neither it nor any directory above it (links
 * resolved) belongs to the user or can be written by its group or by anyone (but for a sticky
 * directory such as {@code /tmp}, where only an entry's owner renames it): in practice the
 * system's directories, {@code /nix/store} and the like. The rule covers every directory any
 * run could have granted, whatever the current run grants. Root, which agent-sandbox refuses
 * to run as, owns the system's directories: for it only their mode counts.
 */
public final class HostPrograms {
    private HostPrograms() {}

    /** The PATH looked at when the caller has none. */
    public static final String DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

    /**
     * The program {@code name} in the first directory of {@code path} (a PATH's value; null:
     * {@link #DEFAULT_PATH}) where it is an executable file that no sandbox of user {@code uid}
     * can have written, as its real path; null when there is none.
     */
    public static Path find(String path, String name, int uid) {
        for (String dir : (path == null ? DEFAULT_PATH : path).split(":")) {
            if (!dir.startsWith("/")) {
                continue; // relative: it names another directory wherever the tool starts
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                Path real = trusted(p, uid);
                if (real != null) {
                    return real;
                }
            }
        }
        return null;
    }

    /**
     * The first place of {@code path} where {@code name} is an executable file that a sandbox
     * of user {@code uid} may have written (for the message that says why it is not run); null
     * when there is none.
     */
    public static Path untrusted(String path, String name, int uid) {
        for (String dir : (path == null ? DEFAULT_PATH : path).split(":")) {
            if (dir.startsWith("/")) {
                Path p = Path.of(dir, name);
                if (Files.isRegularFile(p) && Files.isExecutable(p) && trusted(p, uid) == null) {
                    return p;
                }
            }
        }
        return null;
    }

    /** The directories of {@code path} that no sandbox of user {@code uid} can have written, as a PATH. */
    public static String trustedPath(String path, int uid) {
        List<String> out = new ArrayList<>();
        for (String dir : (path == null ? DEFAULT_PATH : path).split(":")) {
            if (dir.startsWith("/") && Files.isDirectory(Path.of(dir)) && trusted(Path.of(dir), uid) != null) {
                out.add(dir);
            }
        }
        return String.join(":", out);
    }

    /** {@link #find} on the PATH of {@code env} (a host environment), for the user this process runs as. */
    public static Path find(Map<String, String> env, String name) {
        return find(env.get("PATH"), name, processUid());
    }

    /**
     * The real path of {@code p} when neither it nor a directory above it belongs to user
     * {@code uid} (unless that is root; a negative one: anyone but root) or can be written by
     * its group or others; null otherwise, or when it cannot be told.
     */
    static Path trusted(Path p, int uid) {
        try {
            Path real = p.toRealPath();
            for (Path at = real; at != null; at = at.getParent()) {
                Map<String, Object> a = Files.readAttributes(at, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
                int owner = (Integer) a.get("uid");
                int mode = (Integer) a.get("mode");
                // a directory others can write, unless sticky (like /tmp: there only an entry's
                // owner renames it, and the entry below was judged by its owner already)
                boolean sticky = (mode & 01000) != 0 && !at.equals(real);
                boolean others = (mode & 0022) != 0 && !sticky;
                // the user's: its owner (but for root, and for the overflow uid, which is also how a
                // user namespace shows root's files, as in a sandbox running agent-sandbox), or
                // writable by this very process
                boolean users = uid < 0 ? owner != 0
                        : (owner == uid && uid != 0 && uid != OVERFLOW_UID)
                                || (uid == processUid() && uid != 0 && !sticky && Files.isWritable(at));
                if (users || others) {
                    return null;
                }
            }
            return real;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The uid a user namespace shows for a file whose owner it does not map (root's files in a sandbox). */
    static final int OVERFLOW_UID = overflowUid();

    private static int overflowUid() {
        // read as a stream: Files.readAllBytes takes the size procfs reports, and gets one byte
        try (java.io.InputStream in = Files.newInputStream(Path.of("/proc/sys/kernel/overflowuid"))) {
            return Integer.parseInt(new String(in.readNBytes(32), java.nio.charset.StandardCharsets.US_ASCII).strip());
        } catch (IOException | RuntimeException e) {
            return 65534;
        }
    }

    private static volatile int processUid = -1;

    /** The user this process runs as: the owner of its own {@code /proc} directory. */
    public static int processUid() {
        int uid = processUid;
        if (uid < 0) {
            try {
                uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            } catch (IOException | RuntimeException e) {
                return -2; // not told: only root's directories count
            }
            processUid = uid;
        }
        return uid;
    }
}
