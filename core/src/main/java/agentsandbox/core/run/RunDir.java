package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.plan.Explanation;
import agentsandbox.core.host.HostRead;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
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
    public static final String OWNER = "owner";
    static final String HIDDEN = "hidden";
    static final String COMMAND = "command";
    static final String POLICY = "policy";
    /** The mounts the sandbox's first program checks ({@link MountChecks}), and their identities. */
    public static final String MOUNT_CHECKS = "mount-checks";
    public static final String MOUNT_IDENTITIES = "mounts";
    public static final String GUARD = "guard";
    public static final String NET = "net";
    public static final String SOCKET = "socket";
    /** Beside the network proxy's socket: the ports the sandbox's first program listens on. */
    public static final String LISTEN = "listen";
    static final String TMP = "tmp";
    /** bwrap's messages while it sets the sandbox up (see {@link Execution}). */
    static final String SETUP_LOG = "bwrap-setup.log";
    private static final int HEX_DIGITS = 16;
    /** The longest path a Unix socket can be bound at (sun_path less its terminating NUL). */
    public static final int MAX_SOCKET_PATH = 107;
    /**
     * A run directory without a (whole) owner record this long after its last change is
     * swept: its run was killed between making it and writing the record.
     */
    static final long OWNERLESS_MILLIS = 60_000;
    /**
     * A removal moves directories this deep up to the top of the tree it removes and goes on
     * from there, so that it holds at most this many open directories (REMOVE_MAX_DEPTH in
     * guard.h).
     */
    public static final int MAX_DEPTH = 256;

    private final Path dir;
    private final Path sockets;
    private boolean closed;
    /** The ended bwrap whose starter was asked to remove the directories (see {@link #startClosing}). */
    private Bwrap removing;

    private RunDir(Path dir, Path sockets) {
        this.dir = dir;
        this.sockets = sockets;
    }

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

    public static Path mountChecks(Path run) {
        return run.resolve(MOUNT_CHECKS);
    }

    public static Path mountIdentities(Path run) {
        return run.resolve(MOUNT_IDENTITIES);
    }

    public static Path guardSocket(Path sockets) {
        return sockets.resolve(GUARD).resolve(SOCKET);
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
            writeOwner(sockets);
            writeOwner(run);
            Files.createFile(hidden(run), PosixFilePermissions.asFileAttribute(Set.of()));
            Files.createDirectory(tmp(run), Private.DIR);
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
     * Owner-only, for the directories a run creates; in a class of its own, made when a run
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
            removeTree(sockets.getParent(), sockets.getFileName());
        }
        removeTree(dir.getParent(), dir.getFileName());
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
     * directories) whose owner is gone (see {@link #removeStale}).
     */
    void removeStaleBeside(int uid) {
        String keep = dir.getFileName().toString();
        removeStale(dir.getParent(), uid, keep);
        if (sockets != null) {
            removeStale(sockets.getParent(), uid, keep);
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

    /** Removes {@code parent/name} and everything below it without following links; best effort. */
    static boolean removeTree(Path parent, Path name) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent)) {
            if (!(ds instanceof SecureDirectoryStream<Path> sds)) {
                return false; // no openat(2): never remove by path names a link could redirect
            }
            removeEntry(sds, name, 0);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void removeEntry(SecureDirectoryStream<Path> parent, Path name, int depth) throws IOException {
        removeEntry(null, parent, name, depth);
    }

    /** The names deep directories move to (see {@link #removeEntry}), one new one each. */
    private static final java.util.concurrent.atomic.AtomicLong MOVED = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Removes {@code parent/name} and everything below it, never following a link. A
     * directory {@link #MAX_DEPTH} below the tree's top directory ({@code top}, null for the
     * top itself) moves up into it under a name of its own, and a later pass over the top
     * removes it: a removal holds at most {@link #MAX_DEPTH} open directories, however deep
     * the tree a sandbox left in its {@code /tmp} (the starter's remove_entry does the same).
     */
    private static void removeEntry(SecureDirectoryStream<Path> top, SecureDirectoryStream<Path> parent, Path name,
            int depth) throws IOException {
        BasicFileAttributes a;
        try {
            a = parent.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .readAttributes();
        } catch (NoSuchFileException e) {
            return;
        }
        if (!a.isDirectory()) {
            parent.deleteFile(name);
            return;
        }
        if (depth >= MAX_DEPTH && top != null) {
            Path moved;
            do { // a name not taken (an earlier removal cut short may have left some)
                moved = Path.of(".deep." + MOVED.getAndIncrement());
            } while (exists(top, moved));
            parent.move(name, top, moved);
            return;
        }
        // a directory the sandbox made unwritable or unsearchable: its owner may open it up again
        PosixFileAttributeView perms = parent.getFileAttributeView(name, PosixFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS);
        try {
            perms.setPermissions(PosixFilePermissions.fromString("rwx------"));
        } catch (IOException | RuntimeException e) {
            // not ours, or already fine: removal says what is possible
        }
        try (SecureDirectoryStream<Path> child = parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            // a run directory's owner record last, once all else is gone: a removal cut short
            // leaves a directory whose owner the next run's sweep can still tell is gone; the
            // top directory is read again until it is empty, as deep directories move up into it
            Path owner = Path.of(OWNER);
            boolean record = false;
            List<Path> entries = names(child);
            while (true) {
                record |= depth == 0 && entries.remove(owner);
                for (Path e : entries) {
                    removeEntry(depth == 0 ? child : top, child, e, depth + 1);
                }
                if (depth > 0 || entries.isEmpty()) {
                    break;
                }
                // a stream is listed once: the directory again, through a stream of its own
                try (SecureDirectoryStream<Path> again = child.newDirectoryStream(Path.of("."),
                        LinkOption.NOFOLLOW_LINKS)) {
                    entries = names(again);
                }
            }
            if (record) {
                removeEntry(child, child, owner, depth + 1);
            }
        }
        parent.deleteDirectory(name);
    }

    private static List<Path> names(SecureDirectoryStream<Path> dir) {
        List<Path> out = new java.util.ArrayList<>();
        for (Path e : dir) {
            out.add(e.getFileName());
        }
        return out;
    }

    private static boolean exists(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        try {
            dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
            return true;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    /**
     * The owning process of a run directory.
     *
     * @param pid   the process id
     * @param start its start time in clock ticks after boot ({@code /proc/<pid>/stat} field 22)
     * @param pidNs its pid namespace, as {@code /proc/<pid>/ns/pid} reads ({@code pid:[4026531836]})
     */
    record Owner(long pid, long start, String pidNs) {

        /** One line: {@code pid start namespace}. */
        String format() {
            return pid + " " + start + " " + pidNs + "\n";
        }

        /** The owner a {@link #format()} line names, or null when the text is not one. */
        static Owner parse(String text) {
            String line = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
            int a = line.indexOf(' ');
            int b = a < 0 ? -1 : line.indexOf(' ', a + 1);
            if (b < 0 || line.indexOf(' ', b + 1) >= 0 || line.indexOf('\n') >= 0) {
                return null;
            }
            long pid = number(line.substring(0, a));
            long start = number(line.substring(a + 1, b));
            String ns = line.substring(b + 1);
            return pid <= 0 || start < 0 || ns.isEmpty() ? null : new Owner(pid, start, ns);
        }

        /** This process, or null when /proc cannot tell. */
        static Owner current() {
            Owner c = current;
            if (c == null) {
                c = read(Path.of("/proc"), ownPid());
                current = c;
            }
            return c;
        }

        private static volatile Owner current;

        /**
         * This process's id, from {@code /proc/self}: {@code ProcessHandle.current()} would set
         * up the JDK's process reaper (a thread pool) on the way to every start.
         */
        private static long ownPid() {
            try {
                return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/self")).toString());
            } catch (IOException | NumberFormatException | UnsupportedOperationException e) {
                return ProcessHandle.current().pid();
            }
        }

        /** The process {@code pid} as {@code proc} shows it, or null when there is none. */
        static Owner read(Path proc, long pid) {
            Path dir = proc.resolve(Long.toString(pid));
            long start = startTime(dir.resolve("stat"));
            if (start < 0) {
                return null;
            }
            try {
                return new Owner(pid, start, Files.readSymbolicLink(dir.resolve("ns/pid")).toString());
            } catch (IOException | UnsupportedOperationException e) {
                return null;
            }
        }

        /**
         * True when this owner certainly no longer runs: its namespace is ours (so its
         * pid is comparable) and no process with its pid and start time exists.
         */
        boolean gone(Owner self, Path proc) {
            if (self == null || !pidNs.equals(self.pidNs())) {
                return false;
            }
            Path dir = proc.resolve(Long.toString(pid));
            String[] fields = statFields(dir.resolve("stat"));
            if (fields == null) {
                // no such process; or one whose stat cannot be read, which may be the owner
                return !Files.exists(dir, LinkOption.NOFOLLOW_LINKS);
            }
            // a zombie (Z) or dead (X) owner uses nothing any more; another start time is another process
            return fields[0].equals("Z") || fields[0].equals("X") || number(fields[22 - 3]) != start;
        }
    }

    /** Field 22 (starttime) of a {@code /proc/<pid>/stat} file, or -1 when it cannot be read. */
    static long startTime(Path stat) {
        String[] fields = statFields(stat);
        return fields == null ? -1 : number(fields[22 - 3]);
    }

    /**
     * The fields of a {@code /proc/<pid>/stat} file from field 3 (state) on, or null.
     * The command name (field 2) may hold spaces and parentheses: fields are counted
     * from the last ')'.
     */
    private static String[] statFields(Path stat) {
        String text = HostRead.kernelFile(stat, 4096);
        if (text == null) {
            return null;
        }
        int close = text.lastIndexOf(')');
        if (close < 0) {
            return null;
        }
        String[] fields = new String[22 - 2];
        int n = 0;
        int i = close + 1;
        while (n < fields.length && i < text.length()) {
            while (i < text.length() && text.charAt(i) == ' ') {
                i++;
            }
            int end = i;
            while (end < text.length() && text.charAt(end) != ' ' && text.charAt(end) != '\n') {
                end++;
            }
            if (end == i) {
                return null;
            }
            fields[n++] = text.substring(i, end);
            i = end;
        }
        return n == fields.length ? fields : null;
    }

    /** A non-negative decimal number, or -1. */
    private static long number(String s) {
        try {
            long v = Long.parseLong(s);
            return v >= 0 && s.charAt(0) != '+' ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
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

    /** Records this process as the owner of a freshly created run directory. */
    static void writeOwner(Path run) throws IOException {
        Owner self = Owner.current();
        if (self == null) {
            return; // without /proc nothing can tell later whether the owner lives: never removed by others
        }
        createFile(run.resolve(OWNER), "rw-------", self.format().getBytes(StandardCharsets.US_ASCII));
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

    /**
     * Removes the run directories in {@code runs} that belong to {@code uid} and whose
     * owner is gone; {@code keep} (a directory name) is never touched.
     *
     * @return how many were removed
     */
    static int removeStale(Path runs, int uid, String keep) {
        return removeStale(runs, uid, keep, Owner.current(), Path.of("/proc"));
    }

    static int removeStale(Path runs, int uid, String keep, Owner self, Path proc) {
        if (self == null) {
            return 0;
        }
        int removed = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(runs)) {
            if (!(entries instanceof SecureDirectoryStream<Path> all)) {
                return 0; // no openat(2): no way to remove without racing against links
            }
            for (Path entry : all) {
                String name = entry.getFileName().toString();
                if (!isRunName(name) || name.equals(keep)) {
                    continue;
                }
                try {
                    if (removeIfStale(all, Path.of(name), uid, self, proc)) {
                        removed++;
                    }
                } catch (IOException | RuntimeException e) {
                    // another run removed it meanwhile, or it is not what it seemed: leave it
                }
            }
        } catch (IOException | RuntimeException e) {
            // no runs directory yet, or an unreadable one: the run itself reports what matters
        }
        return removed;
    }

    private static boolean removeIfStale(SecureDirectoryStream<Path> all, Path name, int uid, Owner self, Path proc)
            throws IOException {
        // The runs directory is this user's own and owner-only (see ensurePrivateDir), and no
        // sandbox can see it: what is in it was made by runs of this user.
        BasicFileAttributes attrs = all.getFileAttributeView(name, BasicFileAttributeView.class,
                LinkOption.NOFOLLOW_LINKS).readAttributes();
        if (!attrs.isDirectory()) {
            return false;
        }
        try (SecureDirectoryStream<Path> run = all.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
            Owner recorded = readOwner(run);
            if (recorded == null) {
                // no owner record, or one cut short: a run writes it a moment after it makes
                // the directory, so one still without it long after its last change was left by
                // a run killed while it started (or while its removal began)
                if (attrs.lastModifiedTime().toMillis() > System.currentTimeMillis() - OWNERLESS_MILLIS) {
                    return false;
                }
            } else if (!recorded.gone(self, proc)) {
                return false;
            }
        }
        removeEntry(all, name, 0);
        return true;
    }

    /** The owner recorded in an opened run directory, or null when there is none (or no whole one). */
    private static Owner readOwner(SecureDirectoryStream<Path> run) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = run.getFileAttributeView(Path.of(OWNER), BasicFileAttributeView.class,
                    LinkOption.NOFOLLOW_LINKS).readAttributes();
        } catch (NoSuchFileException e) {
            return null;
        }
        if (!attrs.isRegularFile() || attrs.size() > 200) {
            return null;
        }
        try (SeekableByteChannel ch = run.newByteChannel(Path.of(OWNER),
                Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
            ByteBuffer b = ByteBuffer.allocate(256);
            while (ch.read(b) > 0 && b.hasRemaining()) {
                // read it all
            }
            return Owner.parse(new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII));
        }
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
