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
    /**
     * The run's {@link Explanation} (what it shows at each path, and why), read-only: what
     * {@code agent-sandbox explain} reads inside. Written by the host side before bwrap
     * starts and never read back there.
     */
    public static final Path POLICY = RUNTIME.resolve("policy");
    /**
     * The identities of the plan's mounts, which the sandbox's first program checks before
     * the command starts ({@link MountChecks}).
     */
    static final Path MOUNTS = RUNTIME.resolve("mounts");
    /**
     * The launcher's argument that makes it start bwrap with bwrap's setup messages kept
     * apart (the same in the launcher's {@code guard.h}).
     */
    static final String START_BWRAP = "--internal-start-bwrap";
    /** What the sandbox's first program writes to the setup log just before the command starts. */
    static final String STARTED_MARK = "agent-sandbox: the command starts";
    /** Where the first program finds the caller's stderr (the variable holds its descriptor). */
    static final String STDERR_VARIABLE = "AGENT_SANDBOX_STDERR_FD";
    /** bwrap refuses a command line with more arguments than this, its own and the command's together. */
    static final int BWRAP_MAX_ARGS = 9000;


    /**
     * What the host does after a run: a settings file or init script of a granted cache
     * that the sandbox created (your tools outside would obey it) is moved aside.
     *
     * @return one line per file moved, for the user
     */
    public static List<String> afterRun(Plan plan) {
        return ToolHomes.quarantine(plan.homeSetup(), plan.runtimeDir().getParent().getParent());
    }

    /**
     * For a missing home path that {@code @caches} or {@code @agents} grants: which preset,
     * and which runs create it; null for any other path.
     */
    public static String whoCreates(Path home, Path path) {
        return ToolHomes.whoCreates(home, path);
    }

    /** The symlink-resolved path, or null when it does not exist (or is a dangling symlink). */
    public static Path realPath(Path p) {
        return Resolver.realPath(p);
    }

    /**
     * Creates what agent-sandbox keeps on the host before a run, outside any sandbox, where
     * it is missing: the global config's directory, so that no sandbox can be the one to
     * create it (see {@link OwnState}).
     */
    public static void prepareHost(Environment env) {
        if (!isInside()) {
            OwnState.create(env);
            Unsettled.check(RunDir.stateDir(env));
        }
    }

    /** True when this process runs inside an agent-sandbox sandbox. */
    public static boolean isInside() {
        // following links: no exception for the missing entry point outside (asked a few
        // times a start); only root could put a dangling link there outside a sandbox
        return Files.exists(ENTRY_POINT);
    }

    /** Where the network proxy's socket and the first program's listen file are inside. */
    public static final Path NET = RUNTIME.resolve(RunDir.NET);
    /** The network proxy's socket inside (NET_SOCKET in guard.h). */
    static final Path NET_SOCKET = NET.resolve(RunDir.SOCKET);
    /** What the sandbox's first program listens on for the network (NET_LISTEN in guard.h). */
    static final Path NET_LISTEN = NET.resolve(RunDir.LISTEN);
    /**
     * The port of the network proxy on the sandbox's loopback (set in HTTP_PROXY and the like),
     * which no host port can take.
     */
    public static final int PROXY_PORT = 3128;
    /** Where the sandbox's private temp dir is, inside. */
    static final Path TMP = Path.of("/tmp");

    /**
     * Resolves the policy for this environment and command. Creates nothing.
     *
     * @throws SandboxException for an unusable policy or environment
     */
    public static Plan plan(Policy policy, Environment env, List<String> command) {
        return plan(policy, env, command, true);
    }

    /**
     * {@link #plan(Policy, Environment, List)}, with a note for every path a rule matched
     * and every path decided only when {@code detail} is set (what {@code --debug} shows):
     * a rule that matches thousands of files would otherwise make thousands of lines that
     * nobody reads. Every other note is made in any case.
     */
    public static Plan plan(Policy policy, Environment env, List<String> command, boolean detail) {
        return plan(policy, env, command, detail, null);
    }

    /**
     * {@link #plan(Policy, Environment, List, boolean)} for the run that {@code prepared}
     * (made for the same environment) is preparing meanwhile: its run directory.
     */
    public static Plan plan(Policy policy, Environment env, List<String> command, boolean detail,
            Preparation prepared) {
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
        // The working directory, resolved once: every rule on it, the checks below and the
        // sandbox's first program use this very path (a concurrent process that swaps a
        // directory on the way for a link cannot make one rule mean another directory).
        Path realWork = Resolver.realPath(env.workDir());
        if (realWork == null || !Files.isDirectory(realWork)) {
            throw new SandboxException("working directory " + env.workDir() + " does not exist");
        }
        if (base) {
            checkWorkDirCanBeWritable(realWork);
        }
        Optional<GitLayout> git = Optional.empty();
        if (active.contains("@git") || active.contains("@git-strict")) {
            git = prepared != null ? prepared.gitLayout() : GitLayout.discover(env.workDir());
            if (git.isPresent()) { // not map(): a lambda is a class the startup cache loads at every start
                GitLayout g = git.get();
                notes.add("git: repository " + g.gitDir()
                        + (g.linkedWorktree() ? " (linked worktree of " + g.commonDir() + ")" : "")
                        + ", branch " + g.currentBranch().orElse("(detached HEAD)"));
            } else {
                notes.add("git: no repository above " + env.workDir() + "; git presets add nothing");
            }
        }
        boolean shareTmp = base && policy.shareTmp();
        Path sharedTmp = shareTmp ? Resolver.realPath(env.tempDir()) : null;
        if (shareTmp && sharedTmp == null) {
            throw new SandboxException("the host temp dir " + env.tempDir() + " (shared with the sandbox) does not exist",
                    "create it, set TMPDIR to an existing directory, or do not share it");
        }

        // Inside another sandbox the home is as the outer run left it (read-only but for its
        // grants), and the outer run created what its tools need: nothing to create here.
        ToolHomes.Setup homeSetup = isInside() ? ToolHomes.Setup.NONE
                : ToolHomes.setup(active, env, command, policy.layers(), notes);
        List<Rule> rules = new ArrayList<>(PresetExpander.rules(active, env, git));
        if (homeSetup.claude() != ToolHomes.ClaudeStep.NONE) {
            // a symlink into ~/.claude once the run starts, which that directory's rule covers
            Path config = env.home().resolve(ToolHomes.CLAUDE_CONFIG);
            for (java.util.Iterator<Rule> it = rules.iterator(); it.hasNext();) {
                Rule r = it.next();
                if (config.equals(r.literal()) && r.origin().layer() == Layer.PRESET) {
                    it.remove();
                }
            }
        }
        for (PolicyLayer layer : policy.layers()) {
            Origin o = layer.origin();
            for (String p : layer.ro()) { // loops: no lambda made per layer at every start
                rules.add(Rule.pattern(p, Access.RO, o));
            }
            for (String p : layer.rw()) {
                rules.add(Rule.pattern(p, Access.RW, o));
            }
            for (String p : layer.exclude()) {
                rules.add(Rule.pattern(p, Access.EXCLUDE, o));
            }
        }
        Path agentSocket = null;
        if (policy.sshAgent()) {
            agentSocket = sshAgentSocket(env);
            Origin o = new Origin(Layer.FLAG, "--ssh-agent");
            if (env.home() != null) {
                rules.add(Rule.literal(env.home().resolve(".ssh/known_hosts"), Access.RO, o));
                rules.add(Rule.literal(env.home().resolve(".ssh/config"), Access.RO, o));
            }
        }
        if (shareTmp) {
            rules.add(Rule.literal(sharedTmp, Access.RW, new Origin(Layer.PRESET, "@base (shared temp dir)")));
        }
        rules.addAll(configProtection(policy, env));
        Path stateDir = RunDir.stateDir(env);
        Path runDir = prepared != null ? prepared.runDir() : RunDir.newPath(stateDir, randomBytes());
        if (!RunDir.runsDir(stateDir).equals(runDir.getParent())) {
            throw new IllegalArgumentException("the preparation was made for another environment: " + runDir);
        }
        Path hiddenFile = RunDir.hidden(runDir);
        java.util.Set<Path> created = java.util.Set.copyOf(homeSetup.directories());
        Resolver roots = new Resolver(env, notes, created, List.of(), detail).resolvedAs(env.workDir(), realWork);
        List<Path> writableRoots = roots.writableRoots(rules);
        List<Candidate> candidates = new ArrayList<>(roots.withWritable(writableRoots).resolve(rules));
        if (base && !shareTmp) {
            // a contender like any rule's: a rule on /tmp itself can still show the host's
            candidates.add(new Candidate(TMP, RunDir.tmp(runDir), Access.RW, Origin.preset("@base"), true,
                    "a private temp dir"));
            notes.add("tmp: /tmp is private to this run (" + RunDir.tmp(runDir) + "), removed when it ends");
        }
        List<Specificity.Decision> decisions = new ArrayList<>(Specificity.decide(candidates));
        checkWorkDirNotExcluded(env.workDir(), realWork, decisions);
        if (shareTmp) {
            decisions.addAll(mirror(decisions, sharedTmp, TMP));
            notes.add("tmp: /tmp is the host temp dir " + sharedTmp + " (shared), every rule below it applies at"
                    + " /tmp too");
        }

        List<Mount> mounts = new ArrayList<>();
        Origin sandbox = new Origin(Layer.PRESET, "sandbox");
        mounts.add(Mount.of(Mount.Kind.ROOT, Path.of("/"), Path.of("/"), Access.RO, sandbox));
        mounts.add(Mount.of(Mount.Kind.DEVICES, null, Path.of("/dev"), Access.RW, sandbox));
        mounts.add(Mount.of(Mount.Kind.PROCESSES, null, Path.of("/proc"), Access.RO, sandbox));
        mounts.add(Mount.of(Mount.Kind.FRESH_DIR, null, Path.of("/run"), Access.RW, sandbox));
        Optional<Path> dns = resolvConfDir();
        if (dns.isPresent()) {
            Path d = dns.get();
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, d, d, Access.RO, new Origin(Layer.PRESET, "dns")));
            notes.add("dns: /etc/resolv.conf points into " + d + ", bound read-only");
        }
        List<String> mountNotes = new ArrayList<>();
        int policyFrom = mounts.size();
        mounts.addAll(Planner.plan(decisions, hiddenFile, mountNotes, detail));
        int policyTo = mounts.size();
        OwnState.refuseLinks(env, mounts);
        policyTo += Pins.pin(mounts, policyFrom, policyTo, env, realWork);
        if (detail) {
            for (Mount m : mounts) {
                if (m.origin() == Pins.PINNED) {
                    notes.add("pinned: " + m.target() + " is a mount point of its own, so that no sandbox can rename"
                            + " it: a protected path lies below");
                }
            }
        }

        // What no rule may open up: agent-sandbox's own state (every run's directory, the
        // trust store), the host session's sockets.
        Origin own = new Origin(Layer.PRESET, "agent-sandbox's own state, hidden in every sandbox");
        for (Path dir : List.of(stateDir, RunDir.socketsBase(env))) {
            for (Path inside : views(dir, mounts)) {
                // an empty file system of this sandbox's own: what a nested agent-sandbox keeps
                // there (or anything else written there) stays in memory and goes with the sandbox
                mounts.add(Mount.of(Mount.Kind.EMPTY_DIR, inside, inside, Access.EXCLUDE, own));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + own);
            }
        }
        if (base && !shareTmp) {
            // The private /tmp also at its own path: a program that looks up where /tmp comes
            // from (/proc/self/mountinfo) and mounts there finds it. Codex's own sandbox hides
            // its runtime dir under every path /tmp is known by, and fails on a missing one.
            Path privateTmp = RunDir.tmp(runDir);
            Origin tmpOrigin = new Origin(Layer.PRESET, "@base (the private /tmp at its own path)");
            mounts.add(Mount.of(Mount.Kind.READ_WRITE, privateTmp, privateTmp, Access.RW, tmpOrigin));
            mountNotes.add(Planner.pad("rw") + privateTmp + "  <- " + tmpOrigin);
        }
        // Nothing is mounted over /proc/keys: the kernel refuses a nested sandbox a /proc of its
        // own once anything in /proc is covered, and the key calls themselves are refused.
        java.util.Set<String> keep = agentSocket != null ? java.util.Set.of("SSH_AUTH_SOCK") : java.util.Set.of();
        HostSockets.Found sockets = HostSockets.find(env, keep, sharedTmp);
        notes.addAll(sockets.notes());
        Origin session = new Origin(Layer.PRESET, "host session sockets");
        for (Path d : sockets.directories()) {
            for (Path inside : views(d, mounts)) {
                mounts.add(Mount.of(Mount.Kind.EMPTY_DIR, inside, inside, Access.EXCLUDE, session));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + session);
            }
        }
        for (Path f : sockets.sockets()) {
            for (Path inside : views(f, mounts)) {
                mounts.add(Mount.of(Mount.Kind.NULL_DEVICE, null, inside, Access.EXCLUDE, session));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + session);
            }
        }
        if (agentSocket != null) {
            mounts.add(Mount.of(Mount.Kind.READ_WRITE, agentSocket, agentSocket, Access.RW,
                    new Origin(Layer.FLAG, "--ssh-agent")));
            mountNotes.add(Planner.pad("rw") + agentSocket + "  <- flag --ssh-agent");
            notes.add("ssh-agent: " + agentSocket + " reachable (--ssh-agent); ~/.ssh/known_hosts and ~/.ssh/config"
                    + " readable, the keys stay hidden");
        }
        if (policy.gpgAgent()) {
            GpgAgent.Found gpg = GpgAgent.find(env);
            for (Mount m : GpgAgent.mounts(gpg)) {
                mounts.add(m);
                mountNotes.add(Planner.pad(m.access().word()) + m.target() + "  <- flag --gpg-agent");
            }
            notes.add("gpg-agent: its restricted socket " + gpg.socket() + " at " + gpg.home().resolve("S.gpg-agent")
                    + " (--gpg-agent); " + gpg.home() + " shows only its public keyring, trust database and"
                    + " configuration");
        }
        mounts.addAll(dockerMounts(policy.docker(), env, notes));

        boolean nested = isInside();
        List<String> wrapperNotes = new ArrayList<>();
        List<Wrappers.Wrapper> wrappers = Wrappers.discover(policy, env, nested ? RUNTIME : null, wrapperNotes,
                prepared);
        boolean guard = false;
        for (Wrappers.Wrapper w : wrappers) {
            guard |= w.needsGuard();
        }
        Path socketsBase = RunDir.socketsBase(env);
        Path socketsDir = RunDir.socketsDir(socketsBase, runDir);
        Path guardSocket = guard ? RunDir.guardSocket(socketsDir) : null;
        boolean network = policy.network();
        Path netSocket = null;
        Path outerNet = null;
        if (network && nested) {
            outerNet = Files.exists(NET_SOCKET) ? NET : null;
            if (outerNet == null) {
                network = false;
                notes.add("network: off, since the outer sandbox has none");
            } else if (!policy.hostPorts().isEmpty()) {
                notes.add("network: through the outer sandbox's proxy; host ports are those the outer sandbox grants");
            }
        } else if (network && env.installation() == null) {
            network = false;
            notes.add("network: off, since only the agent-sandbox launcher can connect the sandbox to the proxy"
                    + " (no installation given)");
        } else if (network) {
            netSocket = RunDir.netSocket(socketsDir);
        }
        for (Path socket : java.util.Arrays.asList(guardSocket, netSocket)) {
            if (socket != null && socket.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                    > RunDir.MAX_SOCKET_PATH) {
                throw new SandboxException("the path of agent-sandbox's socket " + socket + " is too long for a Unix"
                        + " socket", "set XDG_RUNTIME_DIR to a shorter directory of your own, or unset it");
            }
        }

        Origin runtime = new Origin(Layer.PRESET, "agent-sandbox runtime");
        if (env.installation() != null) {
            mounts.addAll(Wrappers.overlayMounts(wrappers, env.installation().launcher()));
        }
        mounts.add(Mount.of(Mount.Kind.FRESH_DIR, null, RUNTIME, Access.RO, runtime));
        if (env.installation() != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, env.installation().launcher(), ENTRY_POINT, Access.RO, runtime));
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, env.installation().appHome(), APP, Access.RO, runtime));
            mounts.add(Mount.of(Mount.Kind.SYMLINK, ENTRY_POINT.getFileName(), COMMAND_START, Access.RO, runtime));
        } else {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, hiddenFile, ENTRY_POINT, Access.RO, runtime));
        }
        mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunDir.policy(runDir), POLICY, Access.RO, runtime));
        if (env.installation() != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunDir.mountIdentities(runDir), MOUNTS, Access.RO, runtime));
        }
        if (nested) {
            // the outer sandbox's runtime: its wrappers' rules and real binaries, its git guard
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, RUNTIME, Wrappers.OUTER, Access.RO, runtime));
            notes.add("nested: inside another sandbox, whose runtime stays reachable at " + Wrappers.OUTER);
        }
        mounts.addAll(Wrappers.runtimeMounts(wrappers, guardSocket == null ? null : guardSocket.getParent()));
        if (netSocket != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, netSocket.getParent(), NET, Access.RO,
                    new Origin(Layer.PRESET, "network proxy")));
        } else if (outerNet != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, outerNet, NET, Access.RO,
                    new Origin(Layer.PRESET, "network proxy of the outer sandbox")));
        }

        List<String> argv = new ArrayList<>();
        Path bwrap = Preflight.findBwrap(env);
        argv.add(bwrap == null ? "bwrap" : bwrap.toString());
        argv.add("--die-with-parent");
        argv.add("--unshare-all");
        if (env.installation() == null) {
            // No launcher to seal the terminal with (see COMMAND_START): a session of
            // its own keeps the command from pushing input into the caller's terminal.
            argv.add("--new-session");
        }
        argv.addAll(Mount.render(mounts));
        List<String> spilled = List.of();
        List<String> tail = new ArrayList<>();
        tail.addAll(List.of("--remount-ro", RUNTIME.toString()));
        for (String v : sockets.dropped()) {
            tail.addAll(List.of("--unsetenv", v));
        }
        if (base) {
            tail.addAll(List.of("--setenv", "TMPDIR", "/tmp"));
        }
        Path claudeDir = ToolHomes.claudeConfigDir(active, env, homeSetup);
        if (claudeDir != null) {
            tail.addAll(List.of("--setenv", "CLAUDE_CONFIG_DIR", claudeDir.toString()));
            notes.add("home: CLAUDE_CONFIG_DIR=" + claudeDir + " inside, the directory of the config "
                    + env.home().resolve(ToolHomes.CLAUDE_CONFIG) + " points to");
        }
        if (network) {
            String proxy = "http://127.0.0.1:" + PROXY_PORT;
            for (String v : PROXY_VARIABLES) {
                tail.addAll(List.of("--setenv", v, proxy));
            }
            tail.addAll(List.of("--setenv", "NO_PROXY", NO_PROXY, "--setenv", "no_proxy", NO_PROXY));
        }
        tail.addAll(List.of("--chdir", env.workDir().toString(), "--"));
        if (env.installation() != null) {
            tail.add(COMMAND_START.toString());
        }
        if (env.installation() != null && argv.size() - 1 + 3 + tail.size() + command.size() > BWRAP_MAX_ARGS) {
            // More arguments than bwrap takes: they go to a file that the sandbox's first
            // program reads, so the command gets them all, as the kernel allows.
            spilled = command;
            Mount m = Mount.of(Mount.Kind.READ_ONLY, RunDir.command(runDir), SPILLED_COMMAND, Access.RO, runtime);
            mounts.add(m);
            argv.addAll(m.args());
            notes.add("command: " + command.size() + " words, more than bwrap's command line takes: passed in "
                    + SPILLED_COMMAND);
        }
        mounts.add(Mount.of(Mount.Kind.REMOUNT_READ_ONLY, null, RUNTIME, Access.RO, runtime));
        argv.addAll(tail);
        if (spilled.isEmpty()) {
            argv.addAll(command);
        }
        if (argv.size() - 1 > BWRAP_MAX_ARGS) {
            int ownArgs = argv.size() - 1 - (spilled.isEmpty() ? command.size() : 0);
            if (ownArgs > BWRAP_MAX_ARGS) {
                throw new SandboxException("the rules produce " + mounts.size() + " mounts, " + ownArgs
                        + " bwrap arguments, more than bwrap accepts (at most " + BWRAP_MAX_ARGS + ")",
                        "match fewer paths: exclude a directory instead of every file in it");
            }
            throw new SandboxException("the command has " + command.size() + " arguments, more than bwrap accepts"
                    + " (at most " + BWRAP_MAX_ARGS + " in all, of which the sandbox's own options take " + ownArgs + ")",
                    "pass fewer at once, e.g. through xargs inside the sandbox");
        }

        notes.add("network: " + (network ? "on, through agent-sandbox's proxy at http://127.0.0.1:"
                + PROXY_PORT + " (no host loopback, no host abstract sockets"
                + (policy.hostPorts().isEmpty() || netSocket == null ? "" : "; host ports " + policy.hostPorts())
                + ")" : "off (only loopback)"));
        notes.addAll(mountNotes);
        notes.addAll(wrapperNotes);
        Path tmpSource = shareTmp ? sharedTmp : base ? RunDir.tmp(runDir) : TMP;
        Explanation explanation = Explanation.of(env, policy, mounts, policyFrom, policyTo, decisions,
                base && !shareTmp ? RunDir.tmp(runDir) : null, own, session);
        return new Plan(argv, mounts, runDir, hiddenFile, notes, bwrap, guardSocket, tmpSource, spilled, netSocket,
                policy.hostPorts(), homeSetup, explanation, base ? realWork : null);
    }

    /** The variables that point clients at the proxy. */
    static final List<String> PROXY_VARIABLES = List.of("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
            "https_proxy", "all_proxy");
    static final String NO_PROXY = "localhost,127.0.0.1,::1";

    /**
     * The decisions at and below {@code source}, repeated below {@code target}: a host
     * directory shown at a second path gets every rule at both (a rule holds on every view).
     */
    static List<Specificity.Decision> mirror(List<Specificity.Decision> decisions, Path source, Path target) {
        List<Specificity.Decision> out = new ArrayList<>();
        for (Specificity.Decision d : decisions) {
            Candidate w = d.winner();
            if (w.source().startsWith(source) && w.source().equals(w.path())) {
                Path at = target.resolve(source.relativize(w.path()).toString());
                out.add(new Specificity.Decision(new Candidate(at, w.source(), w.access(), w.origin(), w.exact(),
                        w.rule()), d.overridden()));
            }
        }
        return out;
    }

    /**
     * Every path inside at which a host path can be reached: its own, unless a fresh file
     * system or another host directory is shown there ({@code /run}, a private
     * {@code /tmp}), and the same place below every mount that shows a host directory at
     * another path (a shared temp dir at {@code /tmp}).
     */
    static List<Path> views(Path host, List<Mount> mounts) {
        List<Path> out = new ArrayList<>();
        // the host path and its parents: a mount at one of them covers it (a set lookup per
        // mount rather than a comparison; a plan can have tens of thousands of mounts)
        java.util.Set<Path> covering = new java.util.HashSet<>();
        for (Path p = host; p != null; p = p.getParent()) {
            covering.add(p);
        }
        Mount shows = null; // the mount whose content is seen at the host path: the deepest, then the last
        for (Mount m : mounts) {
            if (m.isView() && host.startsWith(m.source())) {
                out.add(m.target().resolve(m.source().relativize(host).toString()));
            }
            if (covering.contains(m.target()) && m.kind() != Mount.Kind.REMOUNT_READ_ONLY
                    && (shows == null || m.target().getNameCount() >= shows.target().getNameCount())) {
                shows = m;
            }
        }
        boolean own = shows == null || shows.kind() == Mount.Kind.ROOT
                || (shows.kind() == Mount.Kind.READ_ONLY || shows.kind() == Mount.Kind.READ_WRITE) && !shows.isView();
        if (own) {
            out.add(0, host);
        }
        return out;
    }

    /** The caller's ssh-agent socket, for {@code --ssh-agent}. */
    private static Path sshAgentSocket(Environment env) {
        String v = env.env("SSH_AUTH_SOCK").orElse("");
        if (v.isEmpty()) {
            throw new SandboxException("--ssh-agent: SSH_AUTH_SOCK is not set, so there is no ssh-agent to reach",
                    "start one (eval \"$(ssh-agent)\" && ssh-add), or run without --ssh-agent");
        }
        Path p = HostSockets.socketNamedBy("SSH_AUTH_SOCK", v);
        if (p == null) {
            throw new SandboxException("--ssh-agent: SSH_AUTH_SOCK=" + v + " is not a socket",
                    "start the agent again (eval \"$(ssh-agent)\"), or run without --ssh-agent");
        }
        return p;
    }

    /**
     * Pays what the first use of the JVM's Unix sockets costs (the classes' setup, and a
     * random-number source for their temporary names: the app image's runtime has a provider
     * of its own for that, see agentsandbox.urandom.UrandomProvider).
     * {@link Preparation} does it while the plan is made, on a core that planning leaves
     * idle, rather than while bwrap sets the sandbox up, which it would slow down.
     */
    static void openSocketClasses() {
        try {
            java.nio.channels.ServerSocketChannel.open(java.net.StandardProtocolFamily.UNIX).close();
            java.nio.channels.Selector.open().close();
            // the first bind sets up the JDK's network classes (InetAddress among them), which
            // opening a channel does not
            Class.forName("sun.nio.ch.Net");
        } catch (IOException | ClassNotFoundException | RuntimeException e) {
            // the guard and the proxy meet the same failure when they open theirs, and say so
        }
    }

    /**
     * Starts the plan with the caller's stdin, stdout and stderr.
     *
     * @throws SandboxException when the machine cannot run a sandbox (root, no bwrap, …)
     */
    public static Execution start(Plan plan, Environment env) {
        return start(plan, env, null);
    }

    /**
     * {@link #start(Plan, Environment)} with the run directory and the rest that {@code
     * prepared} made while the plan was made (see {@link Preparation}); null to make them now.
     */
    public static Execution start(Plan plan, Environment env, Preparation prepared) {
        // null: the caller's own streams (the class of ProcessBuilder.Redirect costs a start
        // its initialisation when touched, and the launcher's starter needs none of it)
        return start(plan, env, prepared, null, null, null);
    }

    /** Starts the plan with the given standard streams (null: the caller's own). */
    public static Execution start(Plan plan, Environment env, ProcessBuilder.Redirect in,
            ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        return start(plan, env, null, in, out, err);
    }

    private static Execution start(Plan plan, Environment env, Preparation prepared, ProcessBuilder.Redirect in,
            ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        // the machine's check first: as root or without bwrap, nothing is created
        RunDir run;
        StateWatch state;
        if (prepared != null) {
            run = prepared.take(plan); // throws what the preparation's check found
            state = null; // taken below, just before bwrap starts
        } else {
            Preflight.checkCanRun(env);
            run = RunDir.create(plan.runtimeDir(), RunDir.socketsDir(RunDir.socketsBase(env), plan.runtimeDir()),
                    env.uid());
            state = StateWatch.before(env);
        }
        GuardServer guard = null;
        NetworkProxy proxy = null;
        try {
            prepareRun(run, plan);
            List<String> argv = plan.argv();
            java.nio.channels.FileChannel setupLog = null;
            if (env.installation() != null) {
                // bwrap's setup messages into a file of the run, the caller's stderr back
                // for the command: see start_bwrap in the launcher, and Execution
                Path logFile = Files.createFile(RunDir.setupLog(run.path()), PosixFilePermissions.asFileAttribute(
                        PosixFilePermissions.fromString("rw-------")));
                setupLog = java.nio.channels.FileChannel.open(logFile, java.nio.file.StandardOpenOption.READ,
                        LinkOption.NOFOLLOW_LINKS);
                argv = new ArrayList<>();
                argv.addAll(List.of(env.installation().launcher().toString(), START_BWRAP, logFile.toString()));
                argv.addAll(plan.argv());
            }
            if (plan.guardSocket() != null) {
                guard = GuardServer.prepare(env, plan);
            }
            if (plan.netSocket() != null) {
                proxy = new NetworkProxy(plan.netSocket(), plan.hostPorts());
            }
            if (prepared != null) {
                // the state before the run, which the second thread takes meanwhile: the
                // home's set-up below and bwrap come after it
                state = prepared.state();
            }
            for (String failure : ToolHomes.apply(plan.homeSetup(), env.home())) {
                System.err.println("agent-sandbox: " + failure);
            }
            if (env.installation() != null) {
                // after the home's set-up: what it creates is mounted too
                RunDir.createFile(RunDir.mountChecks(run.path()), "r--------",
                        MountChecks.render(plan.mounts(), plan.checkedWorkDir()));
            }
            Bwrap bwrap = null;
            if (setupLog != null && inherits(in) && inherits(out) && inherits(err)) {
                BwrapStarter starter = BwrapStarter.take(env.installation().starter());
                if (starter != null) {
                    bwrap = starter.start(RunDir.setupLog(run.path()), plan.argv(), env.hostEnv());
                }
            }
            if (bwrap == null) {
                ProcessBuilder pb = new ProcessBuilder(argv);
                setEnvironment(pb.environment(), env.hostEnv());
                // bwrap's own directory does not matter (it goes to the working directory with
                // --chdir, inside): "/" can always be entered, so a working directory that cannot
                // is bwrap's to report, in the words of its chdir
                pb.directory(new java.io.File("/"));
                pb.redirectInput(in == null ? ProcessBuilder.Redirect.INHERIT : in)
                        .redirectOutput(out == null ? ProcessBuilder.Redirect.INHERIT : out)
                        .redirectError(err == null ? ProcessBuilder.Redirect.INHERIT : err);
                bwrap = Bwrap.of(pb.start());
            }
            if (guard != null) {
                guard.listen();
            }
            if (proxy != null) {
                proxy.listen();
            }
            Execution execution = new Execution(bwrap, plan, run, guard, proxy, setupLog, env.procSys(), state,
                    env.uid());
            return execution;
        } catch (IOException e) {
            closeQuietly(guard);
            closeQuietly(proxy);
            run.close();
            throw new SandboxException("cannot start bwrap: " + e.getMessage(), Preflight.INSTALL_HINT, e);
        } catch (RuntimeException e) {
            closeQuietly(guard);
            closeQuietly(proxy);
            run.close();
            throw e;
        }
    }

    /** Whether a stream of {@link #start} is the caller's own (null stands for that too). */
    private static boolean inherits(ProcessBuilder.Redirect r) {
        return r == null || r == ProcessBuilder.Redirect.INHERIT;
    }

    /** What the plan needs in the run directory beyond what every run has. */
    private static void prepareRun(RunDir run, Plan plan) throws IOException {
        // created read-only, written through the descriptor that created it
        RunDir.createFile(RunDir.policy(run.path()), "r--------",
                plan.explanation().format().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        if (!plan.spilledCommand().isEmpty()) {
            writeCommand(RunDir.command(run.path()), plan.spilledCommand());
        }
        if (plan.guardSocket() != null) {
            run.socketDir(RunDir.GUARD);
        }
        if (plan.netSocket() != null) {
            Path net = run.socketDir(RunDir.NET);
            RunDir.createFile(net.resolve(RunDir.LISTEN), "rw-------",
                    NetworkProxy.listenFile(plan.hostPorts()).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
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

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                // closing a server that never listened does not fail in a way that matters
            }
        }
    }

    /** The command's words, each ended by a NUL byte, readable by the owner only. */
    private static void writeCommand(Path file, List<String> command) throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (String word : command) {
            bytes.writeBytes(word.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            bytes.write(0);
        }
        RunDir.createFile(file, "rw-------", bytes.toByteArray());
    }

    /**
     * Eight random bytes for the per-run directory name. Read straight from the kernel:
     * {@code SecureRandom} would load the security provider framework on every start.
     * The name only needs to be unlikely to collide; the directory is created
     * exclusively, so a guessed name cannot be pre-planted.
     */
    static byte[] randomBytes() {
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

    /**
     * {@code @base} makes the working directory writable. Started in {@code /} that would be
     * the whole machine, with the host's {@code /dev}, {@code /proc} and {@code /run} over the
     * sandbox's own (bwrap then fails to create {@code /run/agent-sandbox} in the host's
     * {@code /run}). No reading of "the project" makes {@code /} one, and quietly leaving it
     * read-only would break the promise that the working directory is writable: so the
     * run is refused, with the fix. The same goes for the other paths no rule may make
     * writable ({@link Resolver#refusal}): {@code /proc/...}, {@code /dev}, {@code /run}.
     */
    private static void checkWorkDirCanBeWritable(Path real) {
        String why = Resolver.refusal(real, Access.RW);
        if (why == null) {
            return;
        }
        throw new SandboxException(real.getNameCount() == 0
                ? "the working directory is /, and preset @base makes the working directory writable: here, the"
                        + " whole machine"
                : "the working directory " + real + " cannot be made writable (preset @base): " + why,
                "cd into a project directory first, or name one with -C DIR");
    }

    private static void checkWorkDirNotExcluded(Path workDir, Path real, List<Specificity.Decision> decisions) {
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

    /**
     * Loaded config files and the project config files stay read-only: rules of the
     * highest layer on each existing file (symlinks resolved), so they hold on every view.
     */
    private static List<Rule> configProtection(Policy policy, Environment env) {
        List<Path> files = new ArrayList<>(policy.configFiles());
        files.add(env.workDir().resolve(".agent-sandbox.json"));
        files.add(env.workDir().resolve(".agent-sandbox.jsonc"));
        List<Rule> out = new ArrayList<>();
        Origin origin = new Origin(Layer.FLAG, "config protection");
        // The global config's directory, with or without a config in it: a rule opening up
        // its parent (--rw ~) must not let a sandbox put a config there that later runs obey.
        Path globalDir = StateWatch.globalConfigDir(env);
        if (globalDir != null && Resolver.realPath(globalDir) != null) {
            out.add(Rule.literal(globalDir, Access.RO, origin));
        }
        for (Path f : files) {
            if (Resolver.realPath(f) != null) {
                // as named: the resolver follows a link here only if the host made it
                out.add(Rule.literal(f, Access.RO, origin));
            }
            // A config file outside the project (the global one) is read from its directory
            // on every run: the directory too, so that a rule opening up its parent (--rw ~)
            // does not let a sandbox move it away and put a looser config in its place.
            Path dir = f.getParent();
            if (dir != null && !f.startsWith(env.workDir()) && (env.home() == null || !dir.equals(env.home()))
                    && Resolver.realPath(dir) != null && Resolver.realPath(f) != null) {
                out.add(Rule.literal(dir, Access.RO, origin));
            }
        }
        return out;
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

    private static List<Mount> dockerMounts(boolean docker, Environment env, List<String> notes) {
        String host = env.env("DOCKER_HOST").orElse("");
        Path socket = host.startsWith("unix://") ? Path.of(host.substring("unix://".length()))
                : Path.of("/var/run/docker.sock");
        Path real = Resolver.realPath(socket);
        Origin origin = new Origin(Layer.PRESET, docker ? "docker on" : "docker off");
        if (docker) {
            if (real == null) {
                throw new SandboxException("Docker is enabled but there is no Docker socket at " + socket,
                        "start Docker, set DOCKER_HOST=unix:///path/to/docker.sock, or run without --docker");
            }
            notes.add("docker: socket " + real + " bound in");
            return List.of(Mount.of(Mount.Kind.READ_WRITE, real, real, Access.RW, origin));
        }
        List<Mount> out = new ArrayList<>();
        List<Path> sockets = new ArrayList<>();
        if (real != null) {
            sockets.add(real);
        }
        // Docker Desktop and rootless Docker keep theirs in the home or the runtime dir
        if (env.home() != null) {
            Path desktop = Resolver.realPath(env.home().resolve(".docker/run/docker.sock"));
            if (desktop != null && !sockets.contains(desktop)) {
                sockets.add(desktop);
            }
        }
        if (sockets.isEmpty()) {
            notes.add("docker: off (no socket at " + socket + ")");
        }
        for (Path p : sockets) {
            // also under the fresh /run: a socket path there must not come back by a rule
            notes.add("docker: off, /dev/null bound over " + p);
            out.add(Mount.of(Mount.Kind.NULL_DEVICE, null, p, Access.EXCLUDE, origin));
        }
        return out;
    }
}
