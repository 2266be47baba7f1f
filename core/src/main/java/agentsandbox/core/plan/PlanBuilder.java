// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Bounds;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.Environment;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.git.GitViews;
import agentsandbox.core.homes.HomeLayers;
import agentsandbox.core.homes.HomeViews;
import agentsandbox.core.host.GpgAgent;
import agentsandbox.core.host.HostServices;
import agentsandbox.core.host.NetStack;
import agentsandbox.core.host.NetworkProxy;
import agentsandbox.core.host.HostSockets;
import agentsandbox.core.host.SshAgentRelay;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.run.OwnState;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.host.Preflight;
import agentsandbox.core.run.Preparation;
import agentsandbox.core.rules.PresetExpander;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Rule;
import agentsandbox.core.run.RunLayout;
import agentsandbox.core.SandboxException;
import agentsandbox.core.rules.Specificity;
import agentsandbox.core.rules.ToolCatalogue;
import agentsandbox.core.run.ToolHomes;
import agentsandbox.core.guard.Wrappers;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Makes the {@link Plan} for one command, one stage after another ({@link #build}):
 * presets, the working directory, git, the rules of every layer, the decision at each
 * path, the fixed mounts, the policy's mounts, what no rule opens up, the host's services,
 * agent-sandbox's runtime inside, and the bwrap command line. Creates nothing.
 */
public final class PlanBuilder {
    /** Why agent-sandbox's own files are where they are inside. */
    private static final Origin RUNTIME = new Origin(Layer.PRESET, "agent-sandbox runtime");

    private final Policy policy;
    private final Environment env;
    private final List<String> command;
    private final boolean detail;
    private final Preparation prepared;

    private final List<String> notes = new ArrayList<>();
    /** Notes on the mounts, which come after the other notes. */
    private final List<String> mountNotes = new ArrayList<>();
    private final List<String> wrapperNotes = new ArrayList<>();
    private final List<Mount> mounts = new ArrayList<>();
    private final boolean nested;

    private Set<String> active;
    private boolean base;
    private Path realWork;
    private Optional<GitLayout> git = Optional.empty();
    /** The git dirs the preparation found, for the git presets; null to find them. */
    private GitDirs gitDirs;
    /** The git dirs seen through a copy-on-write view. */
    private List<Path> gitViews = List.of();
    /** The home's directories seen through a copy-on-write view. */
    private List<HomeViews.View> homeViews = List.of();
    private boolean shareTmp;
    private Path sharedTmp;
    private ToolHomes.Setup homeSetup;
    private final List<Rule> rules = new ArrayList<>();
    private Path agentSocket;
    private SshAgentRelay.Spec sshAgent;
    private Path stateDir;
    private Path runDir;
    private Path hiddenFile;
    private List<Specificity.Decision> decisions;
    private int policyFrom;
    private int policyTo;
    private Origin own;
    private Origin session;
    private HostSockets.Found sockets;
    private List<Wrappers.Wrapper> wrappers;
    private Path guardSocket;
    private boolean network;
    /** Whether the sandbox gets a way out of its own (the stack, or this run's proxy). */
    private boolean ownNetwork;
    private final List<String> networkNotes = new ArrayList<>();
    private Path netSocket;
    private Path outerNet;
    private NetStack netStack;
    private String resolvConf;
    /** The allow-list this run applies itself (its own proxy or DNS filter); empty for none. */
    private List<String> allowHosts = List.of();
    private Path bwrap;

    /**
     * @param detail   a note for every path a rule matched and every path decided (what
     *                 {@code --debug} shows); every other note is made in any case
     * @param prepared the preparation of the same environment's run, whose run directory
     *                 and git layout the plan uses; null for none
     */
    /**
     * What the first program needs to mount the git views: mounting, reaching the lower
     * dirs through directories of other owners (root's, outside), and mapping the user's
     * uid into the user namespace it then enters (the kernel asks for CAP_SETFCAP at the
     * unshare to map the parent's uid 0). It has none of them once the command runs.
     */
    static final List<String> GIT_VIEW_CAPABILITIES = List.of("CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_SETFCAP");

    public PlanBuilder(Policy policy, Environment env, List<String> command, boolean detail, Preparation prepared) {
        this.policy = policy;
        this.env = env;
        this.command = command;
        this.detail = detail;
        this.prepared = prepared;
        this.nested = Inside.isInside();
    }

    /**
     * The plan.
     *
     * @throws SandboxException for an unusable policy or environment
     */
    public Plan build() {
        if (command.isEmpty()) {
            throw new SandboxException("no command given");
        }
        network();
        presets();
        workDir();
        git();
        temp();
        homes();
        rules();
        decide();
        homeViews();
        fixedMounts();
        policyMounts();
        ownState();
        hostServices();
        wrappers();
        runtime();
        return commandLine();
    }

    /** The active presets. */
    private void presets() {
        try {
            active = PresetExpander.activeLeaves(policy.layers());
        } catch (IllegalArgumentException e) {
            throw new SandboxException(e.getMessage());
        }
        notes.add("presets: " + (active.isEmpty() ? "none" : String.join(", ", active)));
        base = active.contains("@base");
        if (base && (env.home() == null || !Files.isDirectory(env.home()))) {
            throw new SandboxException("home directory " + (env.home() == null ? "(unset)" : env.home())
                    + " does not exist, and preset @base makes it read-only",
                    "set HOME to an existing directory, or turn @base off with \"presets\": [\"!@base\"]");
        }
    }

    /**
     * The working directory, resolved once: every rule on it, the checks and the sandbox's
     * first program use this very path (a concurrent process that swaps a directory on the
     * way for a link cannot make one rule mean another directory).
     */
    private void workDir() {
        realWork = Resolver.realPath(env.workDir());
        if (realWork == null || !Files.isDirectory(realWork)) {
            throw new SandboxException("working directory " + env.workDir() + " does not exist");
        }
        if (base) {
            WorkDirChecks.canBeWritable(realWork);
            WorkDirChecks.notThroughALinkOutOfItsDirectory(env.env("PWD").orElse(null), realWork, env.home());
        }
    }

    /** The project's repository, for the git presets. */
    private void git() {
        if (!active.contains("@git") && !active.contains("@git-strict")) {
            return;
        }
        git = prepared != null ? prepared.gitLayout() : GitLayout.discover(env.workDir());
        Path runs;
        try {
            runs = RunLayout.runsDir(RunLayout.stateDir(env));
        } catch (RuntimeException e) {
            runs = null; // no state dir: this run says why later
        }
        String self = prepared != null ? prepared.runDir().getFileName().toString() : "";
        // what the views need besides the git dirs, looked at while the second thread still finds those
        GitViews.Look look = GitViews.look(env, git, nested, runs, self);
        if (git.isPresent()) {
            GitLayout g = git.get();
            notes.add("git: repository " + g.gitDir()
                    + (g.linkedWorktree() ? " (linked worktree of " + g.commonDir() + ")" : "")
                    + ", branch " + g.currentBranch().orElse("(detached HEAD)"));
        } else {
            notes.add("git: no repository above " + env.workDir() + "; git presets add nothing");
        }
        gitDirs = prepared != null ? prepared.gitDirs() : null;
        if (git.isPresent()) {
            GitDirs all = GitDirs.reuse(gitDirs, env.workDir(), env.home());
            if (all.tooMany()) {
                // what lies past the bound would be writable and unwatched: a sandbox's setting there
                // would run in your git
                throw new SandboxException("the repository at " + env.workDir() + " leads to more than "
                        + GitDirs.MAX_DIRS + " git dirs (submodules, nested repositories): agent-sandbox cannot protect"
                        + " the config and hooks of the rest", "run it in a part of the project with fewer repositories");
            }
            gitDirs = all;
        }
        gitViews = GitViews.of(env, git, gitDirs, notes, look);
    }

    /** Whether /tmp is the host's temp dir. */
    private void temp() {
        shareTmp = base && policy.shareTmp();
        sharedTmp = shareTmp ? Resolver.realPath(env.tempDir()) : null;
        if (shareTmp && sharedTmp == null) {
            throw new SandboxException("the host temp dir " + env.tempDir()
                    + " (shared with the sandbox) does not exist",
                    "create it, set TMPDIR to an existing directory, or do not share it");
        }
    }

    /**
     * What the run creates in the home for the tools it starts. Inside another sandbox the
     * home is as the outer run left it (read-only but for its grants), and the outer run
     * created what its tools need: nothing to create here.
     */
    private void homes() {
        homeSetup = nested ? ToolHomes.Setup.NONE : ToolHomes.setup(active, env, command, policy.layers(), notes);
    }

    /** Every rule: the presets', each layer's, the flags', and the config files' protection. */
    private void rules() {
        rules.addAll(PresetExpander.rules(active, env, git, gitDirs));
        if (homeSetup.claude() != ToolHomes.ClaudeStep.NONE) {
            // a symlink into ~/.claude once the run starts, which that directory's rule covers
            Path config = env.home().resolve(ToolCatalogue.CLAUDE_CONFIG);
            for (Iterator<Rule> it = rules.iterator(); it.hasNext();) {
                Rule r = it.next();
                if (config.equals(r.literal()) && r.origin().layer() == Layer.PRESET) {
                    it.remove();
                }
            }
        }
        if (env.home() != null && active.contains("@agents")) {
            // shared with the host over the copy-on-write view of their directory (HomeViews)
            Origin through = new Origin(Layer.PRESET, "@agents, passed through");
            for (String file : ToolCatalogue.PASSED_THROUGH) {
                rules.add(Rule.literal(env.home().resolve(file), Access.RW, through));
            }
        }
        for (PolicyLayer layer : policy.layers()) {
            Origin o = layer.origin();
            for (String p : layer.ro()) {
                rules.add(Rule.pattern(p, Access.RO, o));
            }
            for (String p : layer.rw()) {
                rules.add(Rule.pattern(p, Access.RW, o));
            }
            for (String p : layer.exclude()) {
                rules.add(Rule.pattern(p, Access.EXCLUDE, o));
            }
        }
        if (policy.sshAgent()) {
            agentSocket = HostServices.sshAgentSocket(env);
            SshAgentRelay.checkKeys(agentSocket, policy.sshAgentKeys());
            Origin o = new Origin(Layer.FLAG, "--ssh-agent");
            if (env.home() != null) {
                rules.add(Rule.literal(env.home().resolve(".ssh/known_hosts"), Access.RO, o));
                rules.add(Rule.literal(env.home().resolve(".ssh/config"), Access.RO, o));
            }
        }
        if (shareTmp) {
            rules.add(Rule.literal(sharedTmp, Access.RW, new Origin(Layer.PRESET, "@base (shared temp dir)")));
        }
        rules.addAll(ConfigProtection.rules(policy, env));
    }

    /** The run directory, then the rule that decides each path. */
    private void decide() {
        stateDir = RunLayout.stateDir(env);
        runDir = prepared != null ? prepared.runDir() : RunLayout.newPath(stateDir, RunLayout.randomName());
        if (!RunLayout.runsDir(stateDir).equals(runDir.getParent())) {
            throw new IllegalArgumentException("the preparation was made for another environment: " + runDir);
        }
        hiddenFile = RunLayout.hidden(runDir);
        Set<Path> created = Set.copyOf(homeSetup.directories());
        Resolver roots = new Resolver(env, notes, created, List.of(), detail).resolvedAs(env.workDir(), realWork);
        List<Path> writableRoots = roots.writableRoots(rules);
        List<Candidate> candidates = new ArrayList<>(roots.withWritable(writableRoots).resolve(rules));
        if (base && !shareTmp) {
            // a contender like any rule's: a rule on /tmp itself can still show the host's
            candidates.add(new Candidate(Inside.TMP, RunLayout.tmp(runDir), Access.RW, Origin.preset("@base"), true,
                    "a private temp dir"));
            notes.add("tmp: /tmp is private to this run (" + RunLayout.tmp(runDir) + "), removed when it ends");
        }
        decisions = new ArrayList<>(Specificity.decide(candidates));
        WorkDirChecks.notExcluded(env.workDir(), realWork, decisions);
        if (shareTmp) {
            if (!sharedTmp.equals(Inside.TMP)) {
                // (a temp dir that is /tmp already is its own view: a mirror would say every rule twice)
                decisions.addAll(Views.mirror(decisions, sharedTmp, Inside.TMP));
            }
            notes.add("tmp: /tmp is the host temp dir " + sharedTmp + " (shared), every rule below it applies at"
                    + " /tmp too");
        }
    }

    /**
     * The home's directories that @caches and @agents grant, seen through copy-on-write views
     * ({@link HomeViews}): read-only from the host, the view mounted over them inside.
     */
    private void homeViews() {
        if (active.contains("@caches") || active.contains("@agents")) {
            homeViews = HomeViews.choose(env, decisions, nested, Set.copyOf(homeSetup.directories()), notes);
        }
    }

    /** What every sandbox has: the host read-only, its own /dev, /proc and /run, the DNS config. */
    private void fixedMounts() {
        Origin sandbox = new Origin(Layer.PRESET, "sandbox");
        mounts.add(Mount.of(Mount.Kind.ROOT, Path.of("/"), Path.of("/"), Access.RO, sandbox));
        mounts.add(Mount.of(Mount.Kind.DEVICES, null, Path.of("/dev"), Access.RW, sandbox));
        mounts.add(Mount.of(Mount.Kind.PROCESSES, null, Path.of("/proc"), Access.RO, sandbox));
        mounts.add(Mount.of(Mount.Kind.FRESH_DIR, null, Path.of("/run"), Access.RW, sandbox));
        Optional<Path> dns = HostServices.resolvConfDir();
        if (dns.isPresent()) {
            Path d = dns.get();
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, d, d, Access.RO, new Origin(Layer.PRESET, "dns")));
            notes.add("dns: /etc/resolv.conf points into " + d + ", bound read-only");
        }
    }

    /** The decisions as mounts, and the pins that keep a protected path where it is. */
    private void policyMounts() {
        policyFrom = mounts.size();
        mounts.addAll(Planner.plan(decisions, hiddenFile, mountNotes, detail));
        policyTo = mounts.size();
        boundedTmp();
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
    }

    /**
     * The private /tmp as a file system in memory of the policy's size (tmpfs), in place of
     * the bind of the run's temp dir that the decisions planned: a full /tmp is ENOSPC
     * inside, never a full disk. The rules below /tmp are mounted after it, as planned.
     */
    private void boundedTmp() {
        if (!base || shareTmp) {
            return;
        }
        Path privateTmp = RunLayout.tmp(runDir);
        long size = policy.bounds().tmpSize();
        for (int i = policyFrom; i < policyTo; i++) {
            Mount m = mounts.get(i);
            if (m.kind() == Mount.Kind.READ_WRITE && Inside.TMP.equals(m.target()) && privateTmp.equals(m.source())) {
                mounts.set(i, new Mount(Mount.Kind.BOUNDED_TMP, null, Inside.TMP, Access.RW, m.origin(), size));
                notes.add("tmp: /tmp is a file system in memory of at most " + Bounds.human(size)
                        + " (--tmp-size, tmpSize)");
            }
        }
    }

    /**
     * What no rule may open up: agent-sandbox's own state (every run's directory, the trust
     * store), and the private /tmp at its own path.
     */
    private void ownState() {
        own = new Origin(Layer.PRESET, "agent-sandbox's own state, hidden in every sandbox");
        List<Path> hidden = new ArrayList<>(List.of(stateDir, RunLayout.socketsBase(env)));
        Path homeLayers = HomeLayers.root(env);
        if (homeLayers != null && Files.isDirectory(homeLayers)) {
            hidden.add(homeLayers);
        }
        for (Path dir : hidden) {
            for (Path inside : Views.of(dir, mounts)) {
                // an empty file system of this sandbox's own: what a nested agent-sandbox keeps
                // there (or anything else written there) stays in memory and goes with the sandbox
                mounts.add(Mount.of(Mount.Kind.EMPTY_DIR, inside, inside, Access.EXCLUDE, own));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + own);
            }
        }
        // The private /tmp is a tmpfs (boundedTmp): /proc/self/mountinfo names no host path
        // for it, so nothing needs it at another path (Codex's sandbox hides its runtime dir
        // under every path /tmp is known by).
    }

    /**
     * The host session's sockets hidden; the ssh-agent, the gpg-agent and Docker as the
     * flags say. Nothing is mounted over /proc/keys: the kernel refuses a nested sandbox a
     * /proc of its own once anything in /proc is covered, and the key calls themselves are
     * refused.
     */
    private void hostServices() {
        Set<String> keep = agentSocket != null ? Set.of("SSH_AUTH_SOCK") : Set.of();
        sockets = HostSockets.find(env, keep, sharedTmp);
        notes.addAll(sockets.notes());
        session = new Origin(Layer.PRESET, "host session sockets");
        for (Path d : sockets.directories()) {
            for (Path inside : Views.of(d, mounts)) {
                mounts.add(Mount.of(Mount.Kind.EMPTY_DIR, inside, inside, Access.EXCLUDE, session));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + session);
            }
        }
        for (Path f : sockets.sockets()) {
            for (Path inside : Views.of(f, mounts)) {
                mounts.add(Mount.of(Mount.Kind.NULL_DEVICE, null, inside, Access.EXCLUDE, session));
                mountNotes.add(Planner.pad("exclude") + inside + "  <- " + session);
            }
        }
        if (agentSocket != null) {
            // the relay's socket (list and sign only) where SSH_AUTH_SOCK points, never the agent's
            Path relay = RunLayout.sshAgentSocket(RunLayout.socketsDir(RunLayout.socketsBase(env), runDir));
            sshAgent = new SshAgentRelay.Spec(agentSocket, relay, policy.sshAgentKeys());
            mounts.add(Mount.of(Mount.Kind.READ_WRITE, relay, agentSocket, Access.RW,
                    new Origin(Layer.FLAG, "--ssh-agent")));
            mountNotes.add(Planner.pad("rw") + agentSocket + "  <- flag --ssh-agent (relay: list and sign only"
                    + (sshAgent.keys().isEmpty() ? "" : ", keys " + String.join(", ", sshAgent.keys())) + ")");
            notes.add("ssh-agent: " + agentSocket + " reachable through agent-sandbox's relay, which lets through"
                    + " listing keys and signing only (--ssh-agent); ~/.ssh/known_hosts and ~/.ssh/config"
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
        mounts.addAll(HostServices.dockerMounts(policy.docker(), env, notes));
    }

    /**
     * The network: off, the outer sandbox's proxy, or a way out of the sandbox's own (its stack,
     * or the proxy where none can run). Decided first: a run's stack starts (see {@link
     * Preparation#startNetwork}) while the rest is planned. Its notes go with the wrappers'.
     */
    private void network() {
        network = policy.network();
        boolean outerStack = false;
        if (network && nested) {
            outerNet = Files.exists(Inside.NET.resolve(RunLayout.SOCKET)) ? Inside.NET : null;
            if (outerNet == null) {
                network = false;
                networkNotes.add("network: off, since the outer sandbox has none");
            } else if (outerHasStack(outerNet)) {
                // The outer sandbox's network namespace reaches out through its own stack (under its
                // routes and allow-list), and this sandbox's processes share no namespace with it: they
                // get a proxy of their own, run by this agent-sandbox in the outer namespace, as the
                // fallback does on a host. So this sandbox's own allow-list and host ports apply too
                // (a host port only reaches the host where the outer sandbox grants it as well).
                outerNet = null;
                outerStack = true;
            } else if (!policy.hostPorts().isEmpty()) {
                networkNotes.add("network: through the outer sandbox's proxy; host ports are those the outer sandbox grants");
            }
        }
        boolean ownWayOut = network && outerNet == null; // else the outer sandbox's proxy carries it all
        if (ownWayOut && env.installation() == null) {
            network = false;
            networkNotes.add("network: off, since only the agent-sandbox launcher can connect the sandbox to the proxy"
                    + " (no installation given)");
        } else if (ownWayOut) {
            ownNetwork = true;
            netStack = outerStack ? NetStack.PROXY_CHOSEN : NetStack.choose(env);
            allowHosts = policy.allowHosts();
        }
        if (network && outerNet != null && !policy.allowHosts().isEmpty()) {
            networkNotes.add("network: the allow-list " + policy.allowHosts() + " is not applied inside another sandbox,"
                    + " whose proxy (and its allow-list) carries the traffic; set it on the outer sandbox");
        }
        if (prepared != null && netStack != null && netStack.stack()) {
            prepared.startNetwork(netStack.program(), allowHosts);
        }
    }

    /** The command wrappers, and the sockets of the git guard and the network proxy. */
    private void wrappers() {
        wrappers = Wrappers.discover(policy, env, nested ? Inside.RUNTIME : null, wrapperNotes, prepared);
        boolean guard = false;
        for (Wrappers.Wrapper w : wrappers) {
            guard |= w.needsSocket(); // the git guard, or reports of blocked commands
        }
        Path socketsDir = RunLayout.socketsDir(RunLayout.socketsBase(env), runDir);
        guardSocket = guard ? RunLayout.guardSocket(socketsDir) : null;
        notes.addAll(networkNotes);
        if (ownNetwork) {
            netSocket = RunLayout.netSocket(socketsDir);
        }
        for (Path socket : new Path[] {guardSocket, netSocket}) {
            if (socket != null && socket.toString().getBytes(StandardCharsets.UTF_8).length
                    > RunLayout.MAX_SOCKET_PATH) {
                throw new SandboxException("the path of agent-sandbox's socket " + socket + " is too long for a Unix"
                        + " socket", "set XDG_RUNTIME_DIR to a shorter directory of your own, or unset it");
            }
        }
    }

    /** agent-sandbox's runtime directory inside: the launcher, the app, the run's files, the sockets. */
    private void runtime() {
        Origin runtime = RUNTIME;
        if (env.installation() != null) {
            mounts.addAll(Wrappers.overlayMounts(wrappers, env.installation().launcher()));
        }
        mounts.add(Mount.of(Mount.Kind.FRESH_DIR, null, Inside.RUNTIME, Access.RO, runtime));
        if (env.installation() != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, env.installation().launcher(), Inside.ENTRY_POINT, Access.RO,
                    runtime));
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, env.installation().appHome(), Inside.APP, Access.RO, runtime));
            mounts.add(Mount.of(Mount.Kind.SYMLINK, Inside.ENTRY_POINT.getFileName(), Inside.COMMAND_START, Access.RO,
                    runtime));
        } else {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, hiddenFile, Inside.ENTRY_POINT, Access.RO, runtime));
        }
        mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunLayout.policy(runDir), Inside.POLICY, Access.RO, runtime));
        if (env.installation() != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunLayout.mountIdentities(runDir), Inside.MOUNTS, Access.RO,
                    runtime));
        }
        if (!gitViews.isEmpty() || !homeViews.isEmpty()) {
            Origin views = new Origin(Layer.PRESET, "copy-on-write views");
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunLayout.gitViews(runDir), Inside.GIT_VIEWS, Access.RO, views));
        }
        if (!gitViews.isEmpty()) {
            mounts.add(Mount.of(Mount.Kind.READ_WRITE, RunLayout.gitLayers(runDir), Inside.GIT_LAYERS, Access.RW,
                    new Origin(Layer.PRESET, "git's copy-on-write views")));
        }
        if (!homeViews.isEmpty()) {
            mounts.add(Mount.of(Mount.Kind.READ_WRITE, HomeLayers.root(env), Inside.HOME_LAYERS, Access.RW,
                    new Origin(Layer.PRESET, "the home's copy-on-write views")));
        }
        if (nested) {
            // the outer sandbox's runtime: its wrappers' rules and real binaries, its git guard
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, Inside.RUNTIME, Wrappers.OUTER, Access.RO, runtime));
            notes.add("nested: inside another sandbox, whose runtime stays reachable at " + Wrappers.OUTER);
        }
        mounts.addAll(Wrappers.runtimeMounts(wrappers, guardSocket == null ? null : guardSocket.getParent()));
        if (netStack != null && netStack.stack()) {
            resolvConf = NetStack.resolvConf(HostServices.readResolvConf(), !allowHosts.isEmpty());
            Path conf = Resolver.realPath(Path.of("/etc/resolv.conf"));
            if (resolvConf != null && conf != null) {
                mounts.add(Mount.of(Mount.Kind.READ_ONLY, RunLayout.resolvConf(runDir), conf, Access.RO,
                        new Origin(Layer.PRESET, allowHosts.isEmpty() ? "network stack's resolver"
                                : "the allow-list's DNS filter, which answers only " + String.join(", ", allowHosts))));
                notes.add(!allowHosts.isEmpty() ? "network: " + conf + " names the DNS filter "
                        + NetStack.FILTER_RESOLVER + ", which answers only the allow-list's names"
                        : "network: " + conf + " names the stack's resolver " + NetStack.RESOLVER
                        + ", which asks the host's (the host's file names one on its loopback)");
            } else {
                if (!allowHosts.isEmpty()) {
                    notes.add("network: the host has no /etc/resolv.conf to name the allow-list's DNS filter in:"
                            + " no name resolves inside");
                }
                resolvConf = null;
            }
        }
        if (netSocket != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, netSocket.getParent(), Inside.NET, Access.RO,
                    new Origin(Layer.PRESET, "network proxy")));
        } else if (outerNet != null) {
            mounts.add(Mount.of(Mount.Kind.READ_ONLY, outerNet, Inside.NET, Access.RO,
                    new Origin(Layer.PRESET, "network proxy of the outer sandbox")));
        }
    }

    /** The bwrap command line, and the plan. */
    private Plan commandLine() {
        bwrap = Preflight.findBwrap(env);
        // Without the launcher to seal the terminal with (see Inside.COMMAND_START), a
        // session of its own keeps the command from pushing input into the caller's terminal.
        BwrapCommand line = new BwrapCommand(bwrap == null ? "bwrap" : bwrap.toString(), env.installation() == null);
        if (!gitViews.isEmpty() || !homeViews.isEmpty()) {
            line.firstProgramAsRoot(GIT_VIEW_CAPABILITIES);
        }
        line.mount(mounts);
        line.remountReadOnly(Inside.RUNTIME);
        for (String v : sockets.dropped()) {
            line.unsetenv(v);
        }
        if (base) {
            line.setenv("TMPDIR", "/tmp");
        }
        if (env.installation() != null) {
            // the first program (the launcher) applies them and takes the variable away
            Bounds b = policy.bounds();
            line.setenv(Inside.LIMITS_VARIABLE, b.maxProcs() + " " + b.maxMemory());
            notes.add("bounds: at most " + b.maxProcs() + " processes (--max-procs, maxProcs), "
                    + Bounds.human(b.maxMemory()) + " of memory per process (--max-memory, maxMemory)");
            if (shareTmp) {
                // the first program guards the host's sockets in the shared /tmp (unix_guard.h)
                line.setenv(Inside.SOCKET_GUARD_VARIABLE, nested ? Inside.SOCKET_GUARD_NESTED : "1");
                notes.add("tmp: a host socket in the shared /tmp is refused whenever the host makes it; the"
                        + " sandbox's own sockets there work (the socket guard)");
            }
        }
        // for a prompt to show (PS1='${AGENT_SANDBOX_PROMPT}'...): display only, a sandbox can
        // change it; "agent-sandbox check" is the test that cannot be fooled
        line.setenv(Inside.PROMPT_VARIABLE, Inside.PROMPT);
        Path claudeDir = ToolHomes.claudeConfigDir(active, env, homeSetup);
        if (claudeDir != null) {
            line.setenv("CLAUDE_CONFIG_DIR", claudeDir.toString());
            notes.add("home: CLAUDE_CONFIG_DIR=" + claudeDir + " inside, the directory of the config "
                    + env.home().resolve(ToolCatalogue.CLAUDE_CONFIG) + " points to");
        }
        if (network && (netStack == null || !netStack.stack())) {
            String proxy = "http://127.0.0.1:" + Inside.PROXY_PORT;
            for (String v : HostServices.PROXY_VARIABLES) {
                line.setenv(v, proxy);
            }
            line.setenv("NO_PROXY", HostServices.NO_PROXY);
            line.setenv("no_proxy", HostServices.NO_PROXY);
        }
        if (!allowHosts.isEmpty()) {
            // for programs and people inside to see which hosts they reach; display only
            line.setenv(Inside.NETWORK_ALLOW_VARIABLE, String.join(",", allowHosts));
        }
        line.start(env.workDir(), env.installation() != null ? Inside.COMMAND_START : null);
        Mount spill = null;
        Origin runtime = RUNTIME;
        Mount spillMount = Mount.of(Mount.Kind.READ_ONLY, RunLayout.command(runDir), Inside.SPILLED_COMMAND, Access.RO,
                runtime);
        if (env.installation() != null && line.spills(command, spillMount)) {
            // More arguments than bwrap takes: they go to a file that the sandbox's first
            // program reads, so the command gets them all, as the kernel allows.
            spill = spillMount;
            mounts.add(spill);
            notes.add("command: " + command.size() + " words, more than bwrap's command line takes: passed in "
                    + Inside.SPILLED_COMMAND);
        }
        mounts.add(Mount.of(Mount.Kind.REMOUNT_READ_ONLY, null, Inside.RUNTIME, Access.RO, runtime));
        singleNames(mounts, realWork);
        List<String> argv = line.finish(command, spill, mounts.size());

        notes.add(networkNote());
        notes.addAll(mountNotes);
        notes.addAll(wrapperNotes);
        Path tmpSource = shareTmp ? sharedTmp : base ? RunLayout.tmp(runDir) : Inside.TMP;
        Explanation explanation = Explanation.of(env, policy, mounts, policyFrom, policyTo, decisions,
                base && !shareTmp ? RunLayout.tmp(runDir) : null, own, session);
        return new Plan(argv, mounts, runDir, hiddenFile, notes, bwrap, guardSocket, tmpSource,
                spill == null ? List.of() : command, netSocket, policy.hostPorts(), homeSetup, explanation,
                base ? realWork : null, gitViews, gitViews.isEmpty() || !active.contains("@git-strict") ? null
                        : "refs/heads/" + git.get().currentBranch().orElse("(detached HEAD)"),
                netStack != null && netStack.stack() ? netStack.program() : null, resolvConf, sshAgent, homeViews,
                active.contains("@git") || active.contains("@git-strict"), allowHosts);
    }

    /**
     * Whether the outer sandbox's network is a stack of its own rather than its proxy: its
     * first program then listens on no proxy port ({@link NetworkProxy#listenFile}).
     */
    private static boolean outerHasStack(Path outerNet) {
        try {
            for (String line : Files.readAllLines(outerNet.resolve(RunLayout.LISTEN), StandardCharsets.US_ASCII)) {
                if (line.startsWith(NetworkProxy.LISTEN_PROXY + " ")) {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // unreadable: the outer sandbox's proxy, as before
        }
    }

    /** What {@code --debug} says of the network: off, the stack, or the proxy and why. */
    private String networkNote() {
        if (!network) {
            return "network: off (only loopback)";
        }
        String ports = (policy.hostPorts().isEmpty() || netSocket == null ? "" : "; host ports " + policy.hostPorts())
                + (allowHosts.isEmpty() ? "" : "; only the hosts of the allow-list " + allowHosts + (netStack != null
                && netStack.stack() ? " (their names through a DNS filter, their addresses routed; every other"
                + " address refused)" : " (the proxy refuses the others by name)"));
        if (netStack != null && netStack.stack()) {
            return "network: on, through a network stack of the sandbox's own (" + netStack.program()
                    + "): DNS, TCP and UDP for every program; the host's loopback, its own addresses and link-local"
                    + " addresses unreachable" + ports;
        }
        String proxy = "network: on, through agent-sandbox's proxy at http://127.0.0.1:" + Inside.PROXY_PORT
                + " (no host loopback, no host abstract sockets" + ports + ")";
        if (netStack != null && netStack.fallback() != null) {
            return proxy + "; only programs that use HTTP_PROXY get out, since " + netStack.fallback()
                    + " (fix: " + netStack.fix() + ")";
        }
        return proxy;
    }

    /** At most this many entries of the hidden or read-only directories in the project are looked at by {@link #singleNames}. */
    static final int MAX_NAMES_CHECKED = 50_000;

    /**
     * Refuses a run in which a file that a rule makes read-only or hides, in a directory the
     * sandbox writes, has another name (a hard link): the rule holds for this name only, and
     * the sandbox would read or change the file through the other one, which may lie anywhere
     * it writes. No sandbox makes such a name while the file is protected (a link across the
     * read-only mount is refused), but one may have made it before: a file it created, which
     * a later rule protects (a {@code .env} it scaffolded, a lint config it wrote, a file in a
     * directory it made that a rule now hides). Files named by a rule are looked at wherever
     * the sandbox writes; the files in a hidden or read-only directory, in the working
     * directory {@code work} (the project: in the home, such directories are the tools' own,
     * where whole packages live), up to {@link #MAX_NAMES_CHECKED} of them, beyond which the
     * run stops too.
     */
    static void singleNames(List<Mount> mounts, Path work) {
        List<Path> writable = new ArrayList<>();
        for (Mount m : mounts) {
            if (m.kind() == Mount.Kind.READ_WRITE && m.source() != null && m.source().equals(m.target())) {
                writable.add(m.target());
            }
        }
        int[] seen = {0};
        for (Mount m : mounts) {
            boolean hidden = m.kind() == Mount.Kind.UNREADABLE_FILE || m.kind() == Mount.Kind.EMPTY_DIR;
            boolean readOnly = m.kind() == Mount.Kind.READ_ONLY && m.source() != null && m.source().equals(m.target());
            if (!hidden && !readOnly) {
                continue;
            }
            boolean inWritable = false;
            for (Path w : writable) {
                inWritable |= m.target().startsWith(w) && !m.target().equals(w);
            }
            if (!inWritable) {
                continue;
            }
            if (Files.isRegularFile(m.target(), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                singleName(m.target(), m.target(), hidden);
            } else if (work != null && m.target().startsWith(work)
                    && Files.isDirectory(m.target(), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                singleNamesBelow(m.target(), m.target(), hidden, seen, 0);
            }
        }
    }

    /** {@link #singleName} for every file below directory {@code dir} (links not followed), counting entries in {@code seen}. */
    private static void singleNamesBelow(Path dir, Path rule, boolean hidden, int[] seen, int depth) {
        try (java.nio.file.DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                if (++seen[0] > MAX_NAMES_CHECKED || depth > 256) {
                    throw new SandboxException(rule + " is " + (hidden ? "hidden" : "read-only") + " in the sandbox,"
                            + " and the hidden and read-only directories of the project hold more than "
                            + MAX_NAMES_CHECKED + " entries, or lie deeper than 256 levels: agent-sandbox cannot tell that none of their files has"
                            + " another name (a hard link) through which a sandbox would " + (hidden ? "read" : "change")
                            + " it", "hide or protect smaller directories");
                }
                if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    singleNamesBelow(p, rule, hidden, seen, depth + 1);
                } else if (Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    singleName(p, rule, hidden);
                }
            }
        } catch (java.io.IOException | java.nio.file.DirectoryIteratorException e) {
            // unreadable: what the user cannot read, the sandbox cannot either
        }
    }

    /** Refuses the run when {@code file}, protected by the rule on {@code rule}, has another name. */
    private static void singleName(Path file, Path rule, boolean hidden) {
        int names;
        try {
            names = (Integer) Files.getAttribute(file, "unix:nlink", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (java.io.IOException | RuntimeException e) {
            return; // gone meanwhile
        }
        if (names > 1) {
            throw new SandboxException(file + " is " + (hidden ? "hidden" : "read-only") + " in the sandbox"
                    + (file.equals(rule) ? "" : " (" + rule + " is)") + " but has " + (names - 1) + " other name"
                    + (names > 2 ? "s" : "") + " (hard links), through which a sandbox would "
                    + (hidden ? "read" : "change") + " it",
                    "give it a name of its own: cp -p FILE FILE.new && mv FILE.new FILE (find the others with:"
                            + " find DIR -samefile FILE)");
        }
    }
}
