package agentsandbox.core;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The engine: turns a {@link Policy} into a {@link Plan} (nothing is created), and
 * starts a plan under bwrap. The CLI is one client of this class.
 *
 * <pre>{@code
 * Plan plan = Sandbox.plan(policy, env, List.of("make", "test"));
 * int status = Sandbox.start(plan).waitFor();
 * }</pre>
 */
public final class Sandbox {
    private Sandbox() {}

    /** The sandbox's own runtime directory; also the marker that says "inside". */
    public static final Path RUNTIME = Resolver.RESERVED;
    /** The entry point present in every sandbox. */
    public static final Path ENTRY_POINT = RUNTIME.resolve("agent-sandbox");
    /** Where the application directory is mounted inside. */
    public static final Path APP = RUNTIME.resolve("app");
    /**
     * The sandbox's first program: the launcher, started under this name in place of the
     * command, installs a seccomp filter that refuses the TIOCSTI and TIOCLINUX ioctls
     * (pushing input into the caller's terminal, which the caller's shell would run
     * after the sandbox ends) and then execs the command, same pid and arguments.
     */
    public static final Path COMMAND_START = RUNTIME.resolve("exec");
    /**
     * Where the command is, one NUL-terminated word after another, when it has more
     * arguments than bwrap's command line takes; {@link #COMMAND_START} started without
     * a command reads it from there.
     */
    public static final Path SPILLED_COMMAND = RUNTIME.resolve("command");
    /** bwrap refuses a command line with more arguments than this, its own and the command's together. */
    static final int BWRAP_MAX_ARGS = 9000;


    /** True when this process runs inside an agent-sandbox sandbox. */
    public static boolean isInside() {
        return Files.exists(ENTRY_POINT, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Resolves the policy for this environment and command. Creates nothing.
     *
     * @throws SandboxException for an unusable policy or environment
     */
    public static Plan plan(Policy policy, Environment env, List<String> command) {
        if (command.isEmpty()) {
            throw new SandboxException("no command given");
        }
        List<String> notes = new ArrayList<>();
        java.util.Set<String> active;
        try {
            active = PresetExpander.activeLeaves(policy.layers());
        } catch (IllegalArgumentException e) {
            throw new SandboxException(e.getMessage());
        }
        notes.add("presets: " + (active.isEmpty() ? "none" : String.join(", ", active)));
        boolean base = active.contains("@base");
        if (base && (env.home() == null || !Files.isDirectory(env.home()))) {
            throw new SandboxException("home directory " + (env.home() == null ? "(unset)" : env.home())
                    + " does not exist, and preset @base makes it read-only",
                    "set HOME to an existing directory, or turn @base off with \"presets\": [\"!@base\"]");
        }
        if (!Files.isDirectory(env.workDir())) {
            throw new SandboxException("working directory " + env.workDir() + " does not exist");
        }
        Optional<GitLayout> git = Optional.empty();
        if (active.contains("@git") || active.contains("@git-strict")) {
            git = GitLayout.discover(env.workDir());
            notes.add(git.map(g -> "git: repository " + g.gitDir()
                            + (g.linkedWorktree() ? " (linked worktree of " + g.commonDir() + ")" : "")
                            + ", branch " + g.currentBranch().orElse("(detached HEAD)"))
                    .orElse("git: no repository above " + env.workDir() + "; git presets add nothing"));
        }

        List<Rule> rules = new ArrayList<>(PresetExpander.rules(active, env, git));
        for (PolicyLayer layer : policy.layers()) {
            Origin o = layer.origin();
            layer.ro().forEach(p -> rules.add(Rule.pattern(p, Access.RO, o)));
            layer.rw().forEach(p -> rules.add(Rule.pattern(p, Access.RW, o)));
            layer.exclude().forEach(p -> rules.add(Rule.pattern(p, Access.EXCLUDE, o)));
        }
        List<Candidate> candidates = new Resolver(env, notes).resolve(rules);
        List<Specificity.Decision> decisions = Specificity.decide(candidates);
        checkWorkDirNotExcluded(env.workDir(), decisions);

        Path runtimeDir = env.tempDir().resolve(RuntimeDirs.PREFIX + HexFormat.of().formatHex(randomBytes()));
        Path hiddenFile = runtimeDir.resolve(RuntimeDirs.HIDDEN);
        List<String> mountNotes = new ArrayList<>();
        List<Mount> mounts = new ArrayList<>(Planner.plan(decisions, hiddenFile, mountNotes));
        mounts.addAll(configProtection(policy, env, decisions, mountNotes));

        boolean nested = isInside();
        List<String> wrapperNotes = new ArrayList<>();
        List<Wrappers.Wrapper> wrappers = Wrappers.discover(policy, env, nested ? RUNTIME : null, wrapperNotes);
        boolean guard = wrappers.stream().anyMatch(Wrappers.Wrapper::needsGuard);
        Path guardSocket = guard ? runtimeDir.resolve(RuntimeDirs.GUARD).resolve(RuntimeDirs.SOCKET) : null;

        Path bwrap = Preflight.findBwrap(env);
        List<String> argv = new ArrayList<>();
        argv.add(bwrap == null ? "bwrap" : bwrap.toString());
        argv.add("--die-with-parent");
        argv.add("--unshare-all");
        boolean network = policy.network();
        if (network) {
            argv.add("--share-net");
        }
        if (env.installation() == null) {
            // No launcher to seal the terminal with (see COMMAND_START): a session of
            // its own keeps the command from pushing input into the caller's terminal.
            argv.add("--new-session");
        }
        argv.addAll(List.of("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run"));
        resolvConfDir().ifPresent(d -> {
            argv.addAll(List.of("--ro-bind", d.toString(), d.toString()));
            notes.add("dns: /etc/resolv.conf points into " + d + ", bound read-only");
        });
        for (Mount m : mounts) {
            argv.addAll(m.args());
        }
        if (env.installation() != null) {
            argv.addAll(Wrappers.overlays(wrappers, env.installation().launcher()));
        }
        argv.addAll(dockerArgs(policy.docker(), env, notes));
        argv.addAll(List.of("--tmpfs", RUNTIME.toString()));
        if (env.installation() != null) {
            argv.addAll(List.of("--ro-bind", env.installation().launcher().toString(), ENTRY_POINT.toString()));
            argv.addAll(List.of("--ro-bind", env.installation().appHome().toString(), APP.toString()));
            argv.addAll(List.of("--symlink", ENTRY_POINT.getFileName().toString(), COMMAND_START.toString()));
        } else {
            argv.addAll(List.of("--ro-bind", hiddenFile.toString(), ENTRY_POINT.toString()));
        }
        if (nested) {
            // the outer sandbox's runtime: its wrappers' rules and real binaries, its git guard
            argv.addAll(List.of("--ro-bind", RUNTIME.toString(), Wrappers.OUTER.toString()));
            notes.add("nested: inside another sandbox, whose runtime stays reachable at " + Wrappers.OUTER);
        }
        argv.addAll(Wrappers.args(wrappers, guardSocket == null ? null : guardSocket.getParent()));
        List<String> spilled = List.of();
        // the options still to come: --remount-ro, --tmpfs, --setenv, --chdir, --, the first program
        int still = 2 + 2 + 3 + 3 + 1;
        if (env.installation() != null && argv.size() - 1 + still + command.size() > BWRAP_MAX_ARGS) {
            // More arguments than bwrap takes: they go to a file that the sandbox's first
            // program reads, so the command gets them all, as the kernel allows.
            spilled = command;
            argv.addAll(List.of("--ro-bind", runtimeDir.resolve(RuntimeDirs.COMMAND).toString(),
                    SPILLED_COMMAND.toString()));
            notes.add("command: " + command.size() + " words, more than bwrap's command line takes: passed in "
                    + SPILLED_COMMAND);
        }
        argv.addAll(List.of("--remount-ro", RUNTIME.toString()));
        // The private runtime dir lives in the host temp dir, which is writable inside:
        // hide it so the sandbox cannot change the stand-in for excluded files.
        Path privateInside = base ? Path.of("/tmp").resolve(runtimeDir.getFileName()) : runtimeDir;
        argv.addAll(List.of("--tmpfs", privateInside.toString()));
        if (base) {
            argv.addAll(List.of("--setenv", "TMPDIR", "/tmp"));
        }
        argv.addAll(List.of("--chdir", env.workDir().toString(), "--"));
        if (env.installation() != null) {
            argv.add(COMMAND_START.toString());
        }
        if (spilled.isEmpty()) {
            argv.addAll(command);
        }
        if (argv.size() - 1 > BWRAP_MAX_ARGS) {
            throw new SandboxException("the command has " + command.size() + " arguments, more than bwrap accepts"
                    + " (at most " + BWRAP_MAX_ARGS + " in all, of which the sandbox's own options take "
                    + (argv.size() - 1 - command.size()) + ")",
                    "pass fewer at once, e.g. through xargs inside the sandbox");
        }

        notes.add("network: " + (network ? "on" : "off (only loopback)"));
        notes.addAll(mountNotes);
        notes.addAll(wrapperNotes);
        Path tmpSource = base ? env.tempDir() : Path.of("/tmp");
        return new Plan(argv, mounts, runtimeDir, hiddenFile, notes, bwrap, guardSocket, tmpSource, spilled);
    }

    /**
     * Starts the plan with the caller's stdin, stdout and stderr.
     *
     * @throws SandboxException when the machine cannot run a sandbox (root, no bwrap, …)
     */
    public static Execution start(Plan plan, Environment env) {
        return start(plan, env, ProcessBuilder.Redirect.INHERIT, ProcessBuilder.Redirect.INHERIT,
                ProcessBuilder.Redirect.INHERIT);
    }

    /** Starts the plan with the given standard streams. */
    public static Execution start(Plan plan, Environment env, ProcessBuilder.Redirect in,
            ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        Preflight.checkCanRun(env);
        createRuntime(plan);
        GuardServer guard = null;
        try {
            ProcessBuilder pb = new ProcessBuilder(plan.argv());
            setEnvironment(pb.environment(), env.hostEnv());
            pb.directory(env.workDir().toFile());
            pb.redirectInput(in).redirectOutput(out).redirectError(err);
            if (plan.guardSocket() != null) {
                guard = GuardServer.prepare(env, plan);
            }
            Process bwrap = pb.start();
            if (guard != null) {
                guard.listen();
            }
            Execution execution = new Execution(bwrap, plan, guard);
            // while bwrap sets the sandbox up: off the path to the command's start
            removeStaleRuntimes(plan);
            return execution;
        } catch (IOException e) {
            closeQuietly(guard);
            removeRuntime(plan);
            throw new SandboxException("cannot start bwrap: " + e.getMessage(), Preflight.INSTALL_HINT, e);
        } catch (RuntimeException e) {
            closeQuietly(guard);
            removeRuntime(plan);
            throw e;
        }
    }

    /**
     * Makes {@code target} (a process builder's environment, inherited from this process)
     * equal to {@code wanted}, changing only what differs: an inherited variable keeps its
     * original bytes, so a value that is not valid UTF-8 reaches the command unchanged.
     */
    static void setEnvironment(Map<String, String> target, Map<String, String> wanted) {
        target.keySet().retainAll(wanted.keySet());
        for (Map.Entry<String, String> e : wanted.entrySet()) {
            if (!e.getValue().equals(target.get(e.getKey()))) {
                target.put(e.getKey(), e.getValue());
            }
        }
    }

    private static void closeQuietly(GuardServer guard) {
        if (guard != null) {
            guard.close();
        }
    }

    private static void createRuntime(Plan plan) {
        try {
            Files.createDirectory(plan.runtimeDir(),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            RuntimeDirs.writeOwner(plan.runtimeDir());
            Files.createFile(plan.hiddenFile(),
                    PosixFilePermissions.asFileAttribute(Set.of()));
            if (!plan.spilledCommand().isEmpty()) {
                writeCommand(plan.runtimeDir().resolve(RuntimeDirs.COMMAND), plan.spilledCommand());
            }
            if (plan.guardSocket() != null) {
                Files.createDirectory(plan.guardSocket().getParent(),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        } catch (FileAlreadyExistsException e) {
            throw new SandboxException("runtime directory " + plan.runtimeDir() + " already exists",
                    "plans are for one run; make a new plan");
        } catch (IOException e) {
            removeRuntime(plan);
            throw new SandboxException("cannot create the runtime directory " + plan.runtimeDir() + ": "
                    + e.getMessage(), "check that the temp dir (TMPDIR) exists and is writable", e);
        }
    }

    /** The command's words, each ended by a NUL byte, readable by the owner only. */
    private static void writeCommand(Path file, List<String> command) throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (String word : command) {
            bytes.writeBytes(word.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            bytes.write(0);
        }
        Files.write(Files.createFile(file, PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rw-------"))), bytes.toByteArray());
    }

    /**
     * Removes what runs that were killed (SIGKILL leaves no chance to clean up) left in
     * the temp dir: their runtime directories, once their owner is gone. Only a real
     * run does this, never a dry run.
     */
    private static void removeStaleRuntimes(Plan plan) {
        try {
            Object uid = Files.getAttribute(plan.runtimeDir(), "unix:uid", LinkOption.NOFOLLOW_LINKS);
            RuntimeDirs.removeStale(plan.runtimeDir().getParent(), (Integer) uid,
                    plan.runtimeDir().getFileName().toString());
        } catch (IOException | RuntimeException e) {
            // best effort: leftovers of other runs never stop this one
        }
    }

    static void removeRuntime(Plan plan) {
        if (plan.guardSocket() != null) {
            Execution.deleteQuietly(plan.guardSocket());
            Execution.deleteQuietly(plan.guardSocket().getParent());
        }
        Execution.deleteQuietly(plan.hiddenFile());
        if (!plan.spilledCommand().isEmpty()) {
            Execution.deleteQuietly(plan.runtimeDir().resolve(RuntimeDirs.COMMAND));
        }
        // the owner goes last: a directory that still has files keeps saying whose it is
        Execution.deleteQuietly(plan.runtimeDir().resolve(RuntimeDirs.OWNER));
        Execution.deleteQuietly(plan.runtimeDir());
    }

    /**
     * Eight random bytes for the per-run directory name. Read straight from the kernel:
     * {@code SecureRandom} would load the security provider framework on every start.
     * The name only needs to be unlikely to collide; the directory is created
     * exclusively, so a guessed name cannot be pre-planted.
     */
    private static byte[] randomBytes() {
        byte[] b = new byte[8];
        try (java.io.InputStream in = Files.newInputStream(Path.of("/dev/urandom"))) {
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

    private static void checkWorkDirNotExcluded(Path workDir, List<Specificity.Decision> decisions) {
        Path real = Resolver.realPath(workDir);
        if (real == null) {
            real = workDir;
        }
        for (Specificity.Decision d : decisions) {
            Candidate w = d.winner();
            if (w.access() == Access.EXCLUDE && real.startsWith(w.path())) {
                throw new SandboxException("the working directory " + workDir
                        + (real.equals(w.path()) ? " is excluded" : " lies inside the excluded path " + w.path())
                        + " (" + w.origin() + ")",
                        "run agent-sandbox from another directory, or remove the exclude rule");
            }
        }
    }

    /** Loaded config files and the project config files stay read-only wherever they are writable. */
    private static List<Mount> configProtection(Policy policy, Environment env,
            List<Specificity.Decision> decisions, List<String> notes) {
        List<Path> files = new ArrayList<>(policy.configFiles());
        files.add(env.workDir().resolve(".agent-sandbox.json"));
        files.add(env.workDir().resolve(".agent-sandbox.jsonc"));
        List<Mount> out = new ArrayList<>();
        java.util.Set<Path> seen = new java.util.HashSet<>();
        Origin origin = new Origin(Layer.FLAG, "config protection");
        for (Path f : files) {
            Path real = Resolver.realPath(f);
            if (real == null) {
                continue;
            }
            for (Path inside : pathsInside(real, decisions)) {
                if (!seen.add(inside) || effectiveAccess(inside, decisions) != Access.RW) {
                    continue;
                }
                out.add(new Mount(Mount.Kind.READ_ONLY, real, inside, Access.RO, origin));
                notes.add(Planner.pad("ro") + inside + "  <- " + origin
                        + (inside.equals(real) ? "" : " (" + real + ")"));
            }
        }
        return out;
    }

    /**
     * Where a host file can be reached inside: at its own path, and below every mount
     * that shows a host directory at another path (the host temp dir at {@code /tmp}).
     */
    private static List<Path> pathsInside(Path real, List<Specificity.Decision> decisions) {
        List<Path> out = new ArrayList<>(List.of(real));
        for (Specificity.Decision d : decisions) {
            Candidate w = d.winner();
            if (!w.source().equals(w.path()) && real.startsWith(w.source())) {
                out.add(w.path().resolve(w.source().relativize(real)));
            }
        }
        return out;
    }

    /** The level a path ends up with: that of the deepest decision at or above it (root: ro). */
    private static Access effectiveAccess(Path p, List<Specificity.Decision> decisions) {
        Specificity.Decision best = null;
        for (Specificity.Decision d : decisions) {
            if (p.startsWith(d.path()) && (best == null || d.path().getNameCount() > best.path().getNameCount())) {
                best = d;
            }
        }
        return best == null ? Access.RO : best.winner().access();
    }

    /** When /etc/resolv.conf is a symlink into /run, the directory that holds its target. */
    private static Optional<Path> resolvConfDir() {
        Path conf = Path.of("/etc/resolv.conf");
        if (!Files.isSymbolicLink(conf)) {
            return Optional.empty();
        }
        Path real = Resolver.realPath(conf);
        if (real == null || !real.startsWith("/run") || real.getParent() == null) {
            return Optional.empty();
        }
        return Optional.of(real.getParent());
    }

    private static List<String> dockerArgs(boolean docker, Environment env, List<String> notes) {
        String host = env.env("DOCKER_HOST").orElse("");
        Path socket = host.startsWith("unix://") ? Path.of(host.substring("unix://".length()))
                : Path.of("/var/run/docker.sock");
        Path real = Resolver.realPath(socket);
        if (docker) {
            if (real == null) {
                throw new SandboxException("Docker is enabled but there is no Docker socket at " + socket,
                        "start Docker, set DOCKER_HOST=unix:///path/to/docker.sock, or run without --docker");
            }
            notes.add("docker: socket " + real + " bound in");
            return List.of("--bind", real.toString(), real.toString());
        }
        if (real == null) {
            notes.add("docker: off (no socket at " + socket + ")");
            return List.of();
        }
        notes.add("docker: off, /dev/null bound over " + real);
        return List.of("--ro-bind", "/dev/null", real.toString());
    }
}
