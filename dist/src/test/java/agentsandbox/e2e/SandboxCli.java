// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import agentsandbox.core.Sandbox;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the packaged agent-sandbox (the app image that {@code mvn package} assembles)
 * the way a user does: as an unprivileged user, under real bwrap, in a fresh world
 * per test.
 *
 * <pre>{@code
 * @RegisterExtension final SandboxCli sandbox = new SandboxCli();
 *
 * @Test void Root_Filesystem_Is_Read_Only() {
 *     sandbox.run("--", "sh", "-c", "echo hi > /usr/x").fails().stderrContains("Read-only file system");
 * }
 * }</pre>
 *
 * <p>Besides {@code run}: {@code command(...).runInTerminal()} runs under a
 * pseudo-terminal, and {@code command(...).start()} starts agent-sandbox in the
 * background, to be signalled and waited for.
 *
 * <p>The world is a temp directory holding {@code home/} (HOME), {@code project/}
 * (the working directory, which tests fill) and {@code tmp/} (TMPDIR), all owned by
 * the test user. Commands get a controlled environment: HOME, TMPDIR,
 * PATH=/usr/local/bin:/usr/bin:/bin, LANG=C.UTF-8, USER, LOGNAME and nothing else
 * unless a test adds it.
 *
 * <p>agent-sandbox refuses to run as root, and CI runs as root. So when the tests run
 * as root, every command goes through {@code setpriv} to the user named by
 * {@code AGENT_SANDBOX_TEST_UID} (default 65534, nobody), and the image is first copied
 * to a world-readable temp directory, because the build tree may sit below a directory
 * that user cannot enter. Missing bwrap or setpriv fails the tests; it never skips them.
 */
public final class SandboxCli implements BeforeEachCallback, AfterEachCallback {

    /** A command that runs longer than this is killed, with everything it started, and the test fails. */
    public static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** PATH given to every command. */
    public static final String PATH = "/usr/local/bin:/usr/bin:/bin";

    private static final int DEFAULT_TEST_UID = 65534;
    private static final Set<PosixFilePermission> WORLD_READABLE_DIR = PosixFilePermissions.fromString("rwxr-xr-x");

    private static final Set<PosixFilePermission> OWNER_ALL = EnumSet.of(
            PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private Path world;
    private final AtomicInteger runs = new AtomicInteger();
    private final List<Started> started = new ArrayList<>();

    // ------------------------------------------------------------------ lifecycle

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        Host host = host();
        world = Files.createTempDirectory(host.tempBase(), "agent-sandbox-e2e-").toRealPath();
        Files.setPosixFilePermissions(world, WORLD_READABLE_DIR);
        Files.createDirectory(world.resolve(".io"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        for (String dir : List.of("home", "project", "tmp")) {
            Path created = Files.createDirectory(world.resolve(dir));
            Files.setPosixFilePermissions(created, WORLD_READABLE_DIR);
            chown(created);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws IOException {
        started.forEach(Started::kill);
        started.clear();
        if (world != null) {
            deleteTree(world);
            world = null;
        }
    }

    // ------------------------------------------------------------------ the world

    /** The per-test temp directory that holds home/, project/ and tmp/. */
    public Path world() {
        return requireWorld();
    }

    /** The working directory of every command, unless a run says otherwise. */
    public Path project() {
        return requireWorld().resolve("project");
    }

    public Path project(String relative) {
        return project().resolve(relative);
    }

    /** HOME of every command. */
    public Path home() {
        return requireWorld().resolve("home");
    }

    public Path home(String relative) {
        return home().resolve(relative);
    }

    /** TMPDIR of every command. */
    public Path tmp() {
        return requireWorld().resolve("tmp");
    }

    /**
     * The agent-sandbox-* entries in the world's tmp/: the per-run runtime directories,
     * which must not outlive a run.
     */
    public List<Path> runtimeDirsInTmp() {
        Path runs = home(".local/state/agent-sandbox/run");
        if (!Files.isDirectory(runs)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(runs)) {
            return entries.sorted().toList();
        } catch (IOException e) {
            throw new AssertionError("cannot list " + runs + ": " + e.getMessage(), e);
        }
    }

    /** The environment every command gets unless a run changes it (see the class comment). */
    public Map<String, String> environment() {
        return Collections.unmodifiableMap(baseEnvironment());
    }

    /** The uid the commands run as (the test user). */
    public int uid() {
        return host().uid();
    }

    /** True when the test JVM itself runs as root (commands then go through setpriv). */
    public boolean testsRunAsRoot() {
        return host().root();
    }

    /** The app image that runs: its {@code bin/agent-sandbox}, {@code lib/}, {@code runtime}. */
    public Path image() {
        return host().image();
    }

    /** The launcher of the image. */
    public Path launcher() {
        return host().image().resolve("bin/agent-sandbox");
    }

    /** Writes a file in the project (parents created), owned by the test user. */
    public Path write(String projectRelative, String content) {
        return write(project(projectRelative), content);
    }

    /** Writes a file anywhere in the world (parents created), owned by the test user. */
    public Path write(Path file, String content) {
        try {
            mkdirs(file.getParent());
            Files.writeString(file, content, StandardCharsets.UTF_8);
            chown(file);
            return file;
        } catch (IOException e) {
            throw new AssertionError("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    /** Creates a directory in the project (and its parents), owned by the test user. */
    public Path mkdirs(String projectRelative) {
        return mkdirs(project(projectRelative));
    }

    /** Creates a directory (and its parents) in the world, each new one owned by the test user. */
    public Path mkdirs(Path dir) {
        try {
            List<Path> missing = new ArrayList<>();
            for (Path p = dir; p != null && !Files.exists(p, LinkOption.NOFOLLOW_LINKS); p = p.getParent()) {
                missing.add(p);
            }
            Collections.reverse(missing);
            for (Path p : missing) {
                Files.createDirectory(p);
                chown(p);
            }
            return dir;
        } catch (IOException e) {
            throw new AssertionError("cannot create " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Creates a symbolic link (parents created), owned by the test user. */
    public Path symlink(Path link, String target) {
        try {
            mkdirs(link.getParent());
            Files.createSymbolicLink(link, Path.of(target));
            chown(link);
            return link;
        } catch (IOException e) {
            throw new AssertionError("cannot create symlink " + link + ": " + e.getMessage(), e);
        }
    }

    /** Reads a file as the test JVM sees it (the host side of the sandbox). */
    public String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * A stand-in for a program agent-sandbox itself runs on the host (bwrap): a file {@code name}
     * of {@code content} and {@code mode}, in a new directory {@code dir} of the world that
     * belongs to root, as the system's own directories do. The tool takes such programs only
     * from directories its user cannot write (a sandbox could have put one anywhere else), so
     * the test JVM must run as root to make one.
     */
    public Path systemProgram(String dir, String name, String content, String mode) {
        if (!host().root()) {
            throw new AssertionError("a stand-in for a program the tool runs on the host needs a test JVM that runs as"
                    + " root: the tool takes those only from directories its user cannot write");
        }
        try {
            Path bin = Files.createDirectories(world().resolve(dir));
            Files.setPosixFilePermissions(bin, WORLD_READABLE_DIR);
            Path file = bin.resolve(name);
            Files.writeString(file, content, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            return file;
        } catch (IOException e) {
            throw new AssertionError("cannot write " + dir + "/" + name + ": " + e.getMessage(), e);
        }
    }

    /** Gives a path, and everything below it, to the test user (after the test JVM created files there). */
    public void chown(Path path) {
        Host host = host();
        if (!host.root()) {
            return; // files the test JVM creates already belong to the test user
        }
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path p : (Iterable<Path>) paths::iterator) {
                Files.setAttribute(p, "unix:uid", host.uid(), LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(p, "unix:gid", host.gid(), LinkOption.NOFOLLOW_LINKS);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot chown " + path + " to " + host.uid() + ": " + e.getMessage(), e);
        }
    }

    /** Gives home/, project/ and tmp/ back to the test user, whole. */
    public void chownAll() {
        chown(home());
        chown(project());
        chown(tmp());
    }

    /** Copies the image (keeping its runtime symlink) to {@code target}, readable by the test user. */
    public Path copyImage(Path target) {
        try {
            mkdirs(target.getParent());
            copyTree(image(), target);
            makeWorldReadable(target);
            return target;
        } catch (IOException e) {
            throw new AssertionError("cannot copy the image to " + target + ": " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ running

    /** Runs {@code agent-sandbox args...} in the project as the test user. */
    public Result run(String... args) {
        return command(args).run();
    }

    /** Runs {@code agent-sandbox args...} with extra environment variables. */
    public Result run(Map<String, String> env, String... args) {
        return command(args).env(env).run();
    }

    /** An {@code agent-sandbox args...} run to adjust (environment, stdin, working directory…) before {@link Invocation#run()}. */
    public Invocation command(String... args) {
        requireWorld();
        return new Invocation(List.of(args));
    }

    /** Runs {@code git args...} on the host side, in the project, as the test user; it must succeed. */
    public Result git(String... args) {
        List<String> command = new ArrayList<>(List.of("git",
                "-c", "user.name=Agent Sandbox Test", "-c", "user.email=test@agent-sandbox.invalid",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"));
        command.addAll(List.of(args));
        return execute(asTestUser(command), baseEnvironment(), project(), null).succeeds();
    }

    /** Runs any host program in the project as the test user (not through agent-sandbox). */
    public Result runOnHost(String... command) {
        return execute(asTestUser(List.of(command)), baseEnvironment(), project(), null);
    }

    /**
     * Starts a host program in the background, in the project, as the test user (not
     * through agent-sandbox), with the base environment plus {@code env}; it is killed,
     * with what it started, when the test ends.
     */
    public Started startOnHost(Map<String, String> env, String... command) {
        Map<String, String> all = new LinkedHashMap<>(baseEnvironment());
        all.putAll(env);
        Path io = requireWorld().resolve(".io");
        int n = runs.incrementAndGet();
        List<String> full = asTestUser(List.of(command));
        try {
            Path out = io.resolve("stdout-" + n);
            Path err = io.resolve("stderr-" + n);
            Started process = new Started(full, Processes.start(full, all, project(), new File("/dev/null"), out, err),
                    out, err);
            started.add(process);
            return process;
        } catch (IOException e) {
            throw new AssertionError("cannot start " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /** Runs a host program (not through agent-sandbox) as the test user with extra environment variables. */
    public Result runOnHost(Map<String, String> env, String... command) {
        Map<String, String> all = new LinkedHashMap<>(baseEnvironment());
        all.putAll(env);
        return execute(asTestUser(List.of(command)), all, project(), null);
    }

    // ------------------------------------------------------------------ write probes

    /** The line a write probe appends to a file. */
    public static final String PROBE_LINE = "write-probe";

    /** The file a write probe creates in a directory. */
    public static final String PROBE_FILE = ".write-probe";

    private static final String PROBE_SCRIPT = """
            for p do
              case $p in '~') t=$HOME ;; '~/'*) t=$HOME/${p#??} ;; *) t=$p ;; esac
              if [ -d "$t" ]; then t=$t/.write-probe; fi
              if err=$( { echo write-probe >> "$t"; } 2>&1 ); then echo "$p: writable"; else echo "$p: ${err##*: }"; fi
            done
            """;

    /**
     * An agent-sandbox run (with {@code flags} before {@code --}) that tries to write to each
     * path: absolute, relative to the working directory, or {@code ~/…}. It appends
     * {@value #PROBE_LINE} to a file, or creates {@value #PROBE_FILE} in a directory, and
     * prints one line per path: {@code PATH: writable}, or {@code PATH: } and the error, such
     * as {@code docs: Read-only file system}. Check the host side with {@link #probeLanded}.
     */
    public Invocation writeProbe(List<String> flags, String... paths) {
        List<String> args = new ArrayList<>(flags);
        args.addAll(List.of("--", "sh", "-c", PROBE_SCRIPT, "write-probe"));
        args.addAll(List.of(paths));
        return command(args.toArray(String[]::new));
    }

    private static final String ATTEMPT_SCRIPT = """
            for c do
              if out=$(sh -c "$c" 2>&1); then echo "$c: ok"
              else last=$(printf '%s\\n' "$out" | tail -n 1); echo "$c: ${last##*: }"; fi
            done
            """;

    /**
     * An agent-sandbox run (with {@code flags} before {@code --}) that runs each shell
     * command in turn, whatever the others did, and prints one line per command:
     * {@code COMMAND: ok}, or {@code COMMAND: } and the end of the last line of its error
     * (what follows its last {@code ": "}), such as {@code rm kept: Read-only file system}.
     */
    public Invocation attempts(List<String> flags, String... shellCommands) {
        List<String> args = new ArrayList<>(flags);
        args.addAll(List.of("--", "sh", "-c", ATTEMPT_SCRIPT, "attempts"));
        args.addAll(List.of(shellCommands));
        return command(args.toArray(String[]::new));
    }

    /** Whether a write probe reached this host path: the probe line in the file, or the probe file in the directory. */
    public boolean probeLanded(Path hostPath) {
        Path written = Files.isDirectory(hostPath) ? hostPath.resolve(PROBE_FILE) : hostPath;
        return Files.isRegularFile(written) && read(written).contains(PROBE_LINE);
    }

    /** One run of agent-sandbox, configured fluently. */
    public final class Invocation {
        private final List<String> args;
        private final Map<String, String> env = new LinkedHashMap<>(baseEnvironment());
        private Path executable = launcher();
        private Path cwd = project();
        private String stdin;
        private boolean asTestUser = true;

        private Invocation(List<String> args) {
            this.args = args;
        }

        /** Sets (or, with null, removes) an environment variable. */
        public Invocation env(String name, String value) {
            if (value == null) {
                env.remove(name);
            } else {
                env.put(name, value);
            }
            return this;
        }

        public Invocation env(Map<String, String> variables) {
            variables.forEach(this::env);
            return this;
        }

        /** Text fed to stdin (otherwise stdin is /dev/null). */
        public Invocation stdin(String text) {
            this.stdin = text;
            return this;
        }

        /** Working directory: absolute, or relative to the project. */
        public Invocation cwd(Path dir) {
            this.cwd = project().resolve(dir);
            return this;
        }

        public Invocation cwd(String dir) {
            return cwd(Path.of(dir));
        }

        /** Starts agent-sandbox through another path: a symlink to the launcher, or a copy of the image. */
        public Invocation executable(Path launcherPath) {
            this.executable = launcherPath;
            return this;
        }

        /** Runs as the test JVM's own user, without setpriv: as root, that is root. */
        public Invocation asInvokingUser() {
            this.asTestUser = false;
            return this;
        }

        public Result run() {
            List<String> command = new ArrayList<>();
            command.add(executable.toString());
            command.addAll(args);
            return execute(asTestUser ? asTestUser(command) : command, env, cwd, stdin);
        }

        /**
         * Runs under a pseudo-terminal, through util-linux {@code script}: the command's
         * stdin, stdout and stderr are a TTY. Stdin text is typed into the terminal, so the
         * terminal echoes it into stdout. stdout holds what the terminal showed (stdout and
         * stderr together), with the terminal's CRLF line ends turned into LF; the exit
         * status is the command's.
         */
        public Result runInTerminal() {
            Path script = find("script", PATH + ":" + System.getenv().getOrDefault("PATH", ""))
                    .orElseThrow(() -> new AssertionError("script not found: the terminal tests run agent-sandbox"
                            + " under a pseudo-terminal with util-linux script (apt-get install util-linux)"));
            List<String> line = new ArrayList<>();
            line.add(executable.toString());
            line.addAll(args);
            String shellLine = line.stream().map(Result::quote).collect(Collectors.joining(" "));
            List<String> command = List.of(script.toString(), "--quiet", "--return", "--command", shellLine,
                    "/dev/null");
            Result raw = execute(asTestUser ? asTestUser(command) : command, env, cwd, stdin);
            return new Result(raw.command(), raw.exitCode(), raw.stdout().replace("\r\n", "\n"), raw.stderr());
        }

        /**
         * Starts agent-sandbox in the background and returns at once. The process that starts
         * is agent-sandbox itself (the launcher replaces itself with the JVM), so signals sent
         * to {@link Started#pid()} reach it. SIGINT and SIGTERM are reset to their default
         * action first: a test JVM started from a background shell job inherits SIGINT
         * ignored, and a process that starts with a signal ignored never sees it. Whatever
         * is still running when the test ends is killed.
         */
        public Started start() {
            Path envProgram = find("env", PATH).orElseThrow(() -> new AssertionError("env not found on " + PATH));
            List<String> command = new ArrayList<>(List.of(envProgram.toString(), "--default-signal=INT,TERM",
                    executable.toString()));
            command.addAll(args);
            Path io = requireWorld().resolve(".io");
            int n = runs.incrementAndGet();
            try {
                Path out = io.resolve("stdout-" + n);
                Path err = io.resolve("stderr-" + n);
                List<String> full = asTestUser ? asTestUser(command) : command;
                Started process = new Started(full, Processes.start(full, env, cwd, stdinFile(n, stdin), out, err),
                        out, err);
                started.add(process);
                return process;
            } catch (IOException e) {
                throw new AssertionError("cannot start " + String.join(" ", command) + ": " + e.getMessage(), e);
            }
        }
    }

    /** agent-sandbox running in the background (see {@link Invocation#start()}). */
    /**
     * pid and command line ({@code PID: COMMAND LINE}) of every host process, this JVM
     * aside, whose command line contains the marker; read from /proc.
     */
    public static List<String> hostProcessesWith(String marker) {
        List<String> found = new ArrayList<>();
        String self = Long.toString(ProcessHandle.current().pid());
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : (Iterable<Path>) procs::iterator) {
                String name = proc.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit) || name.equals(self)) {
                    continue;
                }
                String cmdline;
                try {
                    cmdline = new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ');
                } catch (IOException e) {
                    continue; // ended meanwhile
                }
                if (cmdline.contains(marker)) {
                    found.add(name + ": " + cmdline.strip());
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc: " + e.getMessage(), e);
        }
        return found;
    }

    /** Waits up to {@code within} for every host process with the marker in its command line to be gone. */
    public static void awaitNoHostProcessWith(String marker, Duration within, String when) {
        long deadline = System.nanoTime() + within.toNanos();
        List<String> left = hostProcessesWith(marker);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            left = hostProcessesWith(marker);
        }
        org.assertj.core.api.Assertions.assertThat(left)
                .as("host processes with %s in their command line %s", marker, when).isEmpty();
    }

    public static final class Started {
        private final List<String> command;
        private final Process process;
        private final Path stdout;
        private final Path stderr;

        private Started(List<String> command, Process process, Path stdout, Path stderr) {
            this.command = List.copyOf(command);
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        /** The process id of agent-sandbox (the JVM the launcher became). */
        public long pid() {
            return process.pid();
        }

        public boolean isAlive() {
            return process.isAlive();
        }

        /**
         * Waits until {@code ready} exists (the command creates it once it runs): a clear
         * failure when agent-sandbox ends first or the timeout passes.
         */
        public Started awaitFile(Path ready, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!Files.exists(ready)) {
                if (!isAlive()) {
                    throw new AssertionError("agent-sandbox ended before the command was ready:\n"
                            + waitFor(Duration.ofSeconds(1)));
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the command did not start within " + timeout.toSeconds() + " s");
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted", e);
                }
            }
            return this;
        }

        /** Sends a signal by name ({@code TERM}, {@code INT}, …) to agent-sandbox alone, not to its children. */
        public Started signal(String name) {
            try {
                Process kill = new ProcessBuilder("sh", "-c", "kill -s \"$0\" \"$1\"", name, Long.toString(pid()))
                        .redirectErrorStream(true).start();
                String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (kill.waitFor() != 0) {
                    throw new AssertionError("kill -s " + name + " " + pid() + " failed: " + output.strip());
                }
                return this;
            } catch (IOException e) {
                throw new AssertionError("cannot send SIG" + name + " to " + pid() + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while sending SIG" + name, e);
            }
        }

        /** Waits for agent-sandbox to end; on timeout, kills it with everything it started and fails. */
        public Result waitFor(Duration timeout) {
            try {
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    kill();
                    throw new AssertionError("still running after " + timeout.toMillis() + " ms, killed:\n"
                            + result(-1));
                }
                return result(process.exitValue());
            } catch (InterruptedException e) {
                kill();
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + String.join(" ", command), e);
            }
        }

        private Result result(int status) {
            try {
                return new Result(command, status, Processes.text(stdout), Processes.text(stderr));
            } catch (IOException e) {
                throw new AssertionError("cannot read the output of " + String.join(" ", command), e);
            }
        }

        private void kill() {
            if (process.isAlive()) {
                Processes.killTree(process);
            }
        }
    }

    /**
     * From now on in this test, agent-sandbox runs without the git dir's copy-on-write view
     * (AGENT_SANDBOX_GIT_VIEW=off): the fallback, which protects the git dir path by path,
     * for the tests of that protection.
     */
    public void gitDirPathByPath() {
        gitViewOff = true;
    }

    private boolean gitViewOff;

    /**
     * From now on in this test, agent-sandbox runs without copy-on-write views of the home
     * (AGENT_SANDBOX_HOME_VIEW=off): the fallback, in which what @caches and @agents grant is
     * the host's, writable, with code and settings protected path by path. Also for a pasted
     * {@code --dry-run} line, which has no layers made for it.
     */
    public void homesFallback() {
        homeViewOff = true;
    }

    private boolean homeViewOff;

    /**
     * A shell command that makes what a real run creates for the git dir's copy-on-write view
     * in {@code runDir} (the layer's lower, upper and work dirs, where the first program copies
     * the git dir and mounts the view, and the record of what it mounts), for a pasted
     * {@code --dry-run} line; harmless for a line without a view.
     */
    public String gitViewFiles(String runDir) {
        Path gitDir;
        try {
            gitDir = project().resolve(".git").toRealPath();
        } catch (IOException e) {
            gitDir = project().resolve(".git");
        }
        String layer = runDir + "/git-layers/0";
        String inside = "/run/agent-sandbox-git/0";
        return "mkdir -p -m 700 " + layer + "/lower " + layer + "/upper " + layer + "/work"
                + " && printf '%s\\0%s\\0g\\0%s\\0%s\\0%s\\0%s\\0%s\\0' \"$(id -u)\" \"$(id -g)\" '"
                + gitDir + "' " + inside + "/lower " + inside + "/upper " + inside + "/work \"$(stat -c %d:%i '"
                + gitDir + "' 2>/dev/null)\" > " + runDir + "/git-views";
    }

    private Map<String, String> baseEnvironment() {
        Host host = host();
        Map<String, String> env = new LinkedHashMap<>();
        if (gitViewOff) {
            env.put("AGENT_SANDBOX_GIT_VIEW", "off");
        }
        if (homeViewOff) {
            env.put("AGENT_SANDBOX_HOME_VIEW", "off");
        }
        env.put("HOME", home().toString());
        env.put("TMPDIR", tmp().toString());
        env.put("PATH", PATH);
        env.put("LANG", "C.UTF-8");
        env.put("USER", host.userName());
        env.put("LOGNAME", host.userName());
        return env;
    }

    private List<String> asTestUser(List<String> command) {
        return host().asTestUser(command);
    }

    private Result execute(List<String> command, Map<String, String> env, Path cwd, String stdin) {
        Path io = requireWorld().resolve(".io");
        int n = runs.incrementAndGet();
        try {
            Path out = io.resolve("stdout-" + n);
            Path err = io.resolve("stderr-" + n);
            return Processes.run(command, env, cwd, stdinFile(n, stdin), out, err);
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    /** The file that feeds stdin to run {@code n}: the text, or /dev/null when there is none. */
    private File stdinFile(int n, String stdin) throws IOException {
        if (stdin == null) {
            return new File("/dev/null");
        }
        Path input = requireWorld().resolve(".io").resolve("stdin-" + n);
        Files.writeString(input, stdin, StandardCharsets.UTF_8);
        return input.toFile();
    }

    private Path requireWorld() {
        if (world == null) {
            throw new IllegalStateException(
                    "no test world: register SandboxCli with @RegisterExtension on an instance field");
        }
        return world;
    }

    // ------------------------------------------------------------------ the host, once per JVM

    /** What the whole test JVM shares: who runs the commands, through what, and which image. */
    private record Host(boolean root, int uid, int gid, String userName, Path setpriv, Path bwrap, Path image,
            Path tempBase) {

        /** The command run as the test user: through setpriv when the test JVM is root, as is otherwise. */
        List<String> asTestUser(List<String> command) {
            if (!root) {
                return command;
            }
            List<String> wrapped = new ArrayList<>(List.of(setpriv.toString(),
                    "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--"));
            wrapped.addAll(command);
            return wrapped;
        }
    }

    private static Host host;
    private static String hostFailure;

    private static synchronized Host host() {
        if (host == null && hostFailure == null) {
            try {
                host = prepareHost();
            } catch (AssertionError e) {
                hostFailure = e.getMessage();
            } catch (IOException | RuntimeException e) {
                hostFailure = "cannot prepare the end-to-end tests: " + e;
            }
        }
        if (hostFailure != null) {
            throw new AssertionError(hostFailure);
        }
        return host;
    }

    private static Host prepareHost() throws IOException {
        String property = System.getProperty("agentsandbox.image");
        if (property == null || property.isBlank()) {
            throw new AssertionError("system property agentsandbox.image is not set: "
                    + "run the end-to-end tests through Maven (./test.sh, or mvn verify)");
        }
        Path built = Path.of(property).toAbsolutePath();
        if (!Files.isExecutable(built.resolve("bin/agent-sandbox"))) {
            throw new AssertionError("no app image at " + built + " (bin/agent-sandbox is missing): build it with mvn package");
        }
        Path bwrap = find("bwrap", PATH).orElseThrow(() -> new AssertionError("bwrap not found on " + PATH
                + ": the end-to-end tests need bubblewrap (apt-get install bubblewrap)"));
        Path tempBase = tempBase();

        int self = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        Host prepared;
        if (self != 0) {
            int gid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:gid");
            prepared = new Host(false, self, gid, userName(self), null, bwrap, built, tempBase);
        } else {
            String searchPath = PATH + ":" + System.getenv().getOrDefault("PATH", "");
            Path setpriv = find("setpriv", searchPath).orElseThrow(() -> new AssertionError("setpriv not found"
                    + ": as root, the end-to-end tests run agent-sandbox as an unprivileged user through setpriv"
                    + " (apt-get install util-linux)"));
            int uid = testUid();
            requireReachableByOthers(tempBase, uid);
            Path copyBase = Files.createTempDirectory(tempBase, "agent-sandbox-image-").toRealPath();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    deleteTree(copyBase);
                } catch (IOException e) {
                    System.err.println("could not remove " + copyBase + ": " + e.getMessage());
                }
            }));
            Files.setPosixFilePermissions(copyBase, WORLD_READABLE_DIR);
            Path image = copyBase.resolve("agent-sandbox");
            copyTree(built, image);
            makeWorldReadable(image);
            prepared = new Host(true, uid, uid, userName(uid), setpriv, bwrap, image, tempBase);
        }
        probe(prepared);
        return prepared;
    }

    /** Checks up front what every test needs, so that a broken machine gives one clear failure. */
    private static void probe(Host host) throws IOException {
        Path dir = Files.createTempDirectory(host.tempBase(), "agent-sandbox-probe-");
        try {
            Files.setPosixFilePermissions(dir, WORLD_READABLE_DIR);
            Map<String, String> env = Map.of("PATH", PATH, "LANG", "C.UTF-8");
            List<String> bwrap = host.asTestUser(List.of(host.bwrap().toString(), "--unshare-all",
                    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"));
            Result sandbox = Processes.run(bwrap, env, dir, new File("/dev/null"),
                    dir.resolve("bwrap.out"), dir.resolve("bwrap.err"));
            if (sandbox.exitCode() != 0) {
                throw new AssertionError("bwrap cannot create a sandbox as uid " + host.uid()
                        + " (are unprivileged user namespaces enabled?): " + sandbox.stderr().strip());
            }

            List<String> launcher = host.asTestUser(List.of(host.image().resolve("bin/agent-sandbox").toString(), "check"));
            Result check = Processes.run(launcher, env, dir, new File("/dev/null"),
                    dir.resolve("check.out"), dir.resolve("check.err"));
            if (!check.stdout().equals("outside sandbox\n")) {
                throw new AssertionError("the launcher of " + host.image() + " does not work as uid " + host.uid()
                        + ": `agent-sandbox check` gave status " + check.exitCode() + ", "
                        + (check.stdout() + check.stderr()).strip());
            }
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Where worlds and the image copy go: {@code agentsandbox.e2e.tmp} if set, else
     * /var/tmp, else java.io.tmpdir. Not /tmp by preference: the sandbox mounts the
     * world's tmp/ over /tmp, and a project below /tmp would then be mounted inside
     * that mount, which is not how users' projects usually sit.
     */
    private static Path tempBase() throws IOException {
        String chosen = System.getProperty("agentsandbox.e2e.tmp");
        if (chosen != null && !chosen.isBlank()) {
            Path dir = Path.of(chosen);
            if (!Files.isDirectory(dir) || !Files.isWritable(dir)) {
                throw new AssertionError("agentsandbox.e2e.tmp=" + chosen + " is not a writable directory");
            }
            return dir.toRealPath();
        }
        Path varTmp = Path.of("/var/tmp");
        if (Files.isDirectory(varTmp) && Files.isWritable(varTmp)) {
            return varTmp.toRealPath();
        }
        return Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
    }

    private static int testUid() {
        String value = System.getenv("AGENT_SANDBOX_TEST_UID");
        if (value == null || value.isBlank()) {
            return DEFAULT_TEST_UID;
        }
        try {
            int uid = Integer.parseInt(value.strip());
            if (uid > 0) {
                return uid;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new AssertionError("AGENT_SANDBOX_TEST_UID must be the number of an unprivileged user, not '" + value + "'");
    }

    /** The login name of a uid from /etc/passwd, else a made-up one. */
    private static String userName(int uid) {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
                String[] fields = line.split(":", -1);
                if (fields.length > 2 && fields[2].equals(Integer.toString(uid))) {
                    return fields[0];
                }
            }
        } catch (IOException e) {
            // no passwd file: fall through
        }
        return "user" + uid;
    }

    /** An executable in one of the directories of a PATH-style list. */
    private static Optional<Path> find(String program, String searchPath) {
        for (String dir : searchPath.split(":")) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    /** The test user must be able to enter the temp base: every directory on the way must be searchable by others. */
    private static void requireReachableByOthers(Path dir, int uid) throws IOException {
        for (Path p = dir; p != null; p = p.getParent()) {
            if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                throw new AssertionError("the temp directory " + dir + " is not reachable by uid " + uid + " ("
                        + p + " is not searchable by others): choose another with -Dagentsandbox.e2e.tmp=DIR");
            }
        }
    }

    // ------------------------------------------------------------------ files

    /** Copies a tree; symbolic links are copied as links, never followed. */
    private static void copyTree(Path source, Path target) throws IOException {
        Files.walkFileTree(source, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.createDirectory(target.resolve(source.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path to = target.resolve(source.relativize(file).toString());
                if (attrs.isSymbolicLink()) {
                    Files.createSymbolicLink(to, Files.readSymbolicLink(file));
                } else {
                    Files.copy(file, to, StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** a+rX on a tree, links untouched. */
    private static void makeWorldReadable(Path root) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.setPosixFilePermissions(dir, WORLD_READABLE_DIR);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isSymbolicLink()) {
                    return FileVisitResult.CONTINUE;
                }
                Set<PosixFilePermission> perms = EnumSet.copyOf(Files.getPosixFilePermissions(file));
                perms.addAll(List.of(PosixFilePermission.OWNER_READ, PosixFilePermission.GROUP_READ,
                        PosixFilePermission.OTHERS_READ));
                if (perms.contains(PosixFilePermission.OWNER_EXECUTE)) {
                    perms.addAll(List.of(PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_EXECUTE));
                }
                Files.setPosixFilePermissions(file, perms);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Deletes a tree without following symbolic links. Directories the sandboxed
     * command made unreadable or unwritable are opened up first (needed when not root).
     */
    private static void deleteTree(Path path) throws IOException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return;
        }
        if (attrs.isDirectory()) {
            Set<PosixFilePermission> perms = EnumSet.copyOf(Files.getPosixFilePermissions(path));
            if (perms.addAll(OWNER_ALL)) {
                Files.setPosixFilePermissions(path, perms);
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(path)) {
                for (Path entry : entries) {
                    deleteTree(entry);
                }
            }
        }
        Files.delete(path);
    }

    // ------------------------------------------------------------------ processes

    /** Starts a process with files for its stdio, waits with a hard timeout, and kills the whole tree on timeout. */
    private static final class Processes {
        private Processes() {}

        static Result run(List<String> command, Map<String, String> env, Path cwd, File stdin, Path stdout, Path stderr)
                throws IOException {
            Process process = start(command, env, cwd, stdin, stdout, stderr);
            boolean finished;
            try {
                finished = process.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                killTree(process);
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while running " + String.join(" ", command), e);
            }
            if (!finished) {
                killTree(process);
                Result partial = new Result(command, -1, text(stdout), text(stderr));
                throw new AssertionError("timed out after " + TIMEOUT.toSeconds() + " s and killed:\n" + partial);
            }
            return new Result(command, process.exitValue(), text(stdout), text(stderr));
        }

        static Process start(List<String> command, Map<String, String> env, Path cwd, File stdin, Path stdout,
                Path stderr) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(cwd.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(stdin))
                    .redirectOutput(stdout.toFile())
                    .redirectError(stderr.toFile());
            builder.environment().clear();
            builder.environment().putAll(env);
            return builder.start();
        }

        static void killTree(Process process) {
            List<ProcessHandle> descendants = process.descendants().toList();
            process.destroyForcibly();
            descendants.forEach(ProcessHandle::destroyForcibly);
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Output as text; bytes that are not UTF-8 become U+FFFD rather than an exception. */
        static String text(Path file) throws IOException {
            return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        }
    }
}
