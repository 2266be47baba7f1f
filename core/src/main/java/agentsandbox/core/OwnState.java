package agentsandbox.core;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * What agent-sandbox itself obeys on the host, and how no sandbox can forge it: its state
 * directory (the trust store, every run's directory), the global config's directory and
 * the directory of its runs' sockets.
 *
 * <p>Every sandbox sees them read-only or empty. That alone is not enough where a rule
 * makes a directory above one writable ({@code --rw ~}): a sandbox could rename that
 * directory (the mount moves along with it) and put one of its own making in its place,
 * which the next run, or one started meanwhile, would read. So every directory on the
 * way to them whose parent the sandbox can write is made a mount point of its own
 * ("pinned", same access): the kernel refuses to rename or remove a mount point
 * ({@code EBUSY}), so the path keeps leading to the user's directories for as long as
 * any sandbox runs, and nothing needs to be checked or moved aside afterwards. A symbolic
 * link on the way cannot be pinned (nothing can be mounted on a link): where one sits in
 * a directory the sandbox could write, the run is refused. The global config's
 * directory is created, owner-only, before the first run, so that no sandbox can be the
 * one to create it.
 */
final class OwnState {
    private OwnState() {}

    /** The origin of a pinned directory's mount. */
    static final Origin PINNED = new Origin(Layer.PRESET,
            "pinned: a directory on the way to agent-sandbox's own state, which no sandbox may rename");

    /** The directories later runs obey, as the host finds them (not resolved). */
    static List<Path> directories(Environment env) {
        List<Path> out = new ArrayList<>();
        out.add(RunDir.stateDir(env));
        Path global = StateWatch.globalConfigDir(env);
        if (global != null) {
            out.add(global);
        }
        out.add(RunDir.socketsBase(env));
        return out;
    }

    /** Creates the global config's directory, owner-only, when it is missing (outside any sandbox). */
    static void create(Environment env) {
        Path global = StateWatch.globalConfigDir(env);
        if (global == null || Files.exists(global, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                || env.home() == null || !Files.isDirectory(env.home())) {
            return;
        }
        try {
            for (Path p : missingFrom(global)) {
                try {
                    Files.createDirectory(p, PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException e) {
                    // made meanwhile by another run: as good
                }
            }
        } catch (IOException e) {
            // the same rights as a sandbox of this user: what this cannot create, no sandbox can
        }
    }

    private static List<Path> missingFrom(Path dir) {
        List<Path> missing = new ArrayList<>();
        for (Path p = dir; p != null && !Files.exists(p); p = p.getParent()) {
            missing.add(0, p);
        }
        return missing;
    }

    /**
     * Pins the directories on the way to each of agent-sandbox's own directories, at every
     * path the sandbox sees it by: inserts their mounts into {@code mounts} right after the
     * mount each would otherwise be part of (before anything deeper is mounted).
     *
     * @return how many mounts were inserted at or before {@code policyTo} (the end of the
     *         policy's mounts), so that the caller can move that index
     * @throws SandboxException where a symbolic link on the way sits in a writable directory
     */
    static int pin(List<Mount> mounts, int policyTo, Environment env) {
        int inserted = 0;
        for (Path dir : directories(env)) {
            refuseLinks(dir, mounts);
            Path real = Resolver.realPath(dir);
            if (real == null) {
                continue;
            }
            for (Path inside : Sandbox.views(real, mounts)) {
                for (int i = 1; i < inside.getNameCount(); i++) {
                    Path a = inside.getRoot().resolve(inside.subpath(0, i));
                    int at = insertPin(mounts, a);
                    if (at >= 0 && at <= policyTo + inserted) {
                        inserted++;
                    }
                }
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
        if (!Files.isDirectory(source, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
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

    /** Refuses a symbolic link on the way to {@code dir} that sits in a directory the sandbox can write. */
    private static void refuseLinks(Path dir, List<Mount> mounts) {
        for (int i = 1; i <= dir.getNameCount(); i++) {
            Path p = dir.getRoot().resolve(dir.subpath(0, i));
            if (!Files.isSymbolicLink(p)) {
                continue;
            }
            Path parent = Resolver.realPath(p.getParent());
            if (parent != null && writable(parent, mounts)) {
                throw new SandboxException(p + " is a symbolic link in a directory this sandbox can write, and"
                        + " agent-sandbox's own " + dir + " lies behind it: a sandbox could point it elsewhere, and"
                        + " later runs would obey what it put there",
                        "grant a narrower path than " + parent + ", or replace the link " + p
                                + " by the directory it points to");
            }
        }
    }

    /** Whether the mount that shows {@code p} inside is a writable host directory. */
    private static boolean writable(Path p, List<Mount> mounts) {
        int shows = showing(p, mounts);
        return shows >= 0 && mounts.get(shows).kind() == Mount.Kind.READ_WRITE;
    }
}
