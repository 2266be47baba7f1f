// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.plan.Explanation;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Set;

/**
 * The host directory of one run, and its single owner: created by {@link #create}, closed
 * (removed with everything in it) by the {@link Execution} that outlives the start.
 *
 * <p>Where: {@code <state>/run/<16 hex digits>/}, where {@code <state>} is
 * {@code $XDG_STATE_HOME/agent-sandbox} ({@code ~/.local/state/agent-sandbox}; without a
 * home, {@code <temp dir>/agent-sandbox-state-<uid>}). Every sandbox of every run has an empty
 * file system over {@code <state>} (see {@link Sandbox}), so no sandbox can see, let
 * alone change, any run's directory, its own included: what the host side keeps there
 * (the stand-in for excluded files, a spilled command, the git guard's and the network
 * proxy's sockets, the private {@code /tmp}) reaches a sandbox only through the binds its
 * own plan makes. What it holds:
 *
 * <pre>
 *   owner     the process that runs it (pid, start time, pid namespace)
 *   hidden    the empty mode-000 file bound over excluded files
 *   command   the command's words, when they are too many for bwrap's command line
 *   policy    what the sandbox shows at each path and why ({@link Explanation}), for explain inside
 *   tmp/      the sandbox's private /tmp
 * </pre>
 *
 * <p>The sockets (the git guard's in {@code guard/}, the network proxy's in {@code net/})
 * are in a second directory of the same name under a short base, so that their paths
 * fit a Unix socket address whatever the home's length: {@code $XDG_RUNTIME_DIR/agent-sandbox}
 * when the session has one of the user's own (under {@code /run}, which every sandbox gets
 * fresh), else {@code /tmp/agent-sandbox-<uid>} (owner-only; the sandbox's {@code /tmp}
 * is private, and with a shared one it is hidden like the state directory).
 *
 * <p>Runs killed outright (SIGKILL) leave their directory behind; the next run removes
 * the directories whose owner is gone. Removal never follows a symbolic link: every step
 * is relative to an opened directory and refuses links, so what a sandbox left in its
 * {@code /tmp} (links to the home, say) is unlinked, never followed.
 */
public final class RunDir implements AutoCloseable {
    private final Path dir;
    private final Path sockets;
    private boolean closed;
    /** The ended bwrap whose starter was asked to remove the directories (see {@link #startClosing}). */
    private Bwrap removing;

    private RunDir(Path dir, Path sockets) {
        this.dir = dir;
        this.sockets = sockets;
    }

    /** The directory of this run. */
    public Path path() {
        return dir;
    }

    /**
     * Creates the run directory and what every run has in it ({@code owner}, {@code hidden},
     * {@code tmp/}), and the state directories above it when missing (owner-only).
     *
     * @throws SandboxException when it cannot, or when the state directory is not this user's own
     */
    public static RunDir create(Path run, Path sockets, int uid) {
        Path runs = run.getParent();
        Path state = runs.getParent();
        try {
            ensurePrivateDir(state, uid);
            ensurePrivateDir(runs, uid);
            Files.createDirectory(run, Private.DIR);
        } catch (FileAlreadyExistsException e) {
            throw new SandboxException("run directory " + run + " already exists", "plans are for one run; make a new plan");
        } catch (IOException e) {
            throw new SandboxException("cannot create agent-sandbox's run directory " + run + ": " + describe(e),
                    "check that " + state + " can be created and written by you (or set XDG_STATE_HOME)", e);
        }
        RunDir created = new RunDir(run, null);
        try {
            ensurePrivateDir(sockets.getParent(), uid);
            Files.createDirectory(sockets, Private.DIR);
            created = new RunDir(run, sockets);
            StaleRuns.writeOwner(sockets);
            StaleRuns.writeOwner(run);
            Files.createFile(RunLayout.hidden(run), PosixFilePermissions.asFileAttribute(Set.of()));
            Files.createDirectory(RunLayout.tmp(run), Private.DIR);
        } catch (IOException | SandboxException e) {
            created.close();
            if (e instanceof SandboxException se) {
                throw se;
            }
            throw new SandboxException("cannot set up the run directory " + run + ": " + describe((IOException) e),
                    null, e);
        }
        return created;
    }

    /** Creates an owner-only subdirectory of the sockets' directory ({@code guard}, {@code net}). */
    /** Creates {@code dir}, owner-only (a directory of a run's). */
    static Path privateDir(Path dir) throws IOException {
        return Files.createDirectory(dir, Private.DIR);
    }

    /**
     * Makes {@code dir} owner-only when it is missing; one that a concurrent run made
     * meanwhile is taken as it is, anything else there refused.
     *
     * @return whether this call made it
     */
    static boolean privateDirIfMissing(Path dir) throws IOException {
        try {
            Files.createDirectory(dir, Private.DIR);
            return true;
        } catch (FileAlreadyExistsException e) {
            if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
            throw e;
        }
    }

    public Path socketDir(String name) throws IOException {
        return Files.createDirectory(sockets.resolve(name), Private.DIR);
    }

    private static String describe(IOException e) {
        String m = e.getMessage();
        return e instanceof java.nio.file.AccessDeniedException ? "permission denied"
                : m == null ? e.getClass().getSimpleName() : m;
    }

    /**
     * Creates {@code dir} (and its parents) when missing; refuses one that is a symbolic
     * link or belongs to another user, and makes it owner-only.
     */
    static void ensurePrivateDir(Path dir, int uid) throws IOException {
        // one lstat for what is there (every run passes here three times)
        java.util.Map<String, Object> a;
        try {
            a = Files.readAttributes(dir, "unix:uid,mode,isDirectory,isSymbolicLink", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            Files.createDirectories(dir.getParent());
            try {
                Files.createDirectory(dir, Private.DIR);
            } catch (FileAlreadyExistsException made) {
                // made meanwhile by a concurrent run: checked below like any existing one
            }
            a = Files.readAttributes(dir, "unix:uid,mode,isDirectory,isSymbolicLink", LinkOption.NOFOLLOW_LINKS);
        }
        Object owner = a.get("uid");
        boolean directory = Boolean.TRUE.equals(a.get("isDirectory"));
        if (!directory || !Integer.valueOf(uid).equals(owner)) {
            throw new SandboxException(dir + " is not a directory of your own ("
                    + (Boolean.TRUE.equals(a.get("isSymbolicLink")) ? "a symbolic link"
                    : directory ? "owned by uid " + owner : "not a directory") + ")",
                    "remove it, or set XDG_STATE_HOME to a directory of your own");
        }
        if (!(a.get("mode") instanceof Integer mode) || (mode & 07777) != 0700) {
            Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setPermissions(PosixFilePermissions.fromString("rwx------"));
        }
    }

    /**
     * StaleRuns.Owner-only, for the directories a run creates; in a class of its own, made when a run
     * directory is created (on the second thread of {@link Preparation}), not when the
     * first thread only names it.
     */
    private static final class Private {
        static final java.nio.file.attribute.FileAttribute<Set<java.nio.file.attribute.PosixFilePermission>>
                DIR = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
    }

    /** Removes the run directory and everything in it, never following a link. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (removing != null && removing.removed()) {
            return;
        }
        if (sockets != null) {
            SafeRemoval.removeTree(sockets.getParent(), sockets.getFileName());
        }
        SafeRemoval.removeTree(dir.getParent(), dir.getFileName());
    }

    /**
     * {@link #close()} for a process about to end: when the launcher's starter is removing
     * the directories ({@link #startClosing}), it finishes that after this JVM has gone, and
     * the launcher ends only once the starter has (see launcher/src/run_jvm.c), so there is
     * nothing to wait for here; what the starter cannot remove is left to the next run's
     * sweep. Without such a removal, as {@link #close()}.
     */
    synchronized void closeAtExit() {
        if (!closed && removing != null) {
            closed = true;
            leftToStarter = true;
            return;
        }
        close();
    }

    /** Whether a {@link #closeAtExit()} of this JVM left a removal to the starter. */
    static volatile boolean leftToStarter;

    /**
     * Removes the directories of the runs of {@code uid} beside this one (run and sockets
     * directories) whose owner is gone (see {@link StaleRuns#removeStale}).
     */
    void removeStaleBeside(int uid) {
        String keep = dir.getFileName().toString();
        StaleRuns.removeStale(dir.getParent(), uid, keep);
        if (sockets != null) {
            StaleRuns.removeStale(sockets.getParent(), uid, keep);
        }
    }

    /**
     * The first half of {@link #close()} after bwrap's end: its starter starts removing the
     * directories when it can ({@link Bwrap#requestRemoval}); {@link #close()} waits for
     * it and removes what is left.
     */
    synchronized void startClosing(Bwrap ended) {
        if (closed || removing != null) {
            return;
        }
        if (ended.requestRemoval(sockets == null ? List.of(dir) : List.of(sockets, dir))) {
            removing = ended;
        }
    }

    /**
     * A new file of the run (never one that exists, never through a link) with these
     * permissions and bytes, written through the descriptor that created it.
     */
    public static void createFile(Path file, String permissions, byte[] bytes) throws IOException {
        try (SeekableByteChannel ch = Files.newByteChannel(file,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(permissions)))) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b);
            }
        }
    }
}
