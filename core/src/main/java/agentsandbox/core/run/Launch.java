// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.host.SshAgentRelay;
import agentsandbox.core.git.GitViews;
import agentsandbox.core.homes.HomeLayers;
import agentsandbox.core.homes.HomeViews;

import agentsandbox.core.Environment;
import agentsandbox.core.aftercheck.GitAftercheck;
import agentsandbox.core.guard.GuardServer;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.host.NetStack;
import agentsandbox.core.host.NetworkProxy;
import agentsandbox.core.Plan;
import agentsandbox.core.host.Preflight;
import agentsandbox.core.SandboxException;
import agentsandbox.core.aftercheck.StateWatch;
import agentsandbox.core.git.GitApply;
import agentsandbox.core.git.BaseRefs;
import agentsandbox.core.plan.Inside;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts a plan: the run directory and its files, the home's set-up, the git guard and the
 * network proxy, then bwrap, through the launcher's starter when there is one.
 */
public final class Launch {
    private Launch() {}

    /**
     * The launcher's argument that makes it start bwrap with bwrap's setup messages kept
     * apart (the same in the launcher's {@code guard.h}).
     */
    public static final String START_BWRAP = "--internal-start-bwrap";
    /** What the sandbox's first program writes to the setup log just before the command starts. */
    public static final String STARTED_MARK = "agent-sandbox: the command starts";
    /** Where the first program finds the caller's stderr (the variable holds its descriptor). */
    public static final String STDERR_VARIABLE = "AGENT_SANDBOX_STDERR_FD";

    /**
     * Starts the plan with the given standard streams (null: the caller's own), using what
     * {@code prepared} made meanwhile (null: made now).
     *
     * @throws SandboxException when the machine cannot run a sandbox (root, no bwrap, …)
     */
    public static Execution start(Plan plan, Environment env, Preparation prepared, ProcessBuilder.Redirect in,
            ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        // the machine's check first: as root or without bwrap, nothing is created
        RunDir run;
        StateWatch state;
        GitAftercheck git = null; // taken below from the preparation, before bwrap starts
        if (prepared != null) {
            run = prepared.take(plan); // throws what the preparation's check found
            state = null; // taken below, just before bwrap starts
        } else {
            Preflight.checkCanRun(env);
            run = RunDir.create(plan.runtimeDir(), RunLayout.socketsDir(RunLayout.socketsBase(env), plan.runtimeDir()),
                    env.uid());
            state = StateWatch.before(env);
            git = GitAftercheck.before(env.workDir(), null, env.home());
        }
        GuardServer guard = null;
        NetworkProxy proxy = null;
        SshAgentRelay agent = null;
        java.nio.channels.FileChannel netRefused = null;
        try {
            prepareRun(run, plan, env);
            List<String> argv = plan.argv();
            java.nio.channels.FileChannel setupLog = null;
            if (env.installation() != null) {
                // bwrap's setup messages into a file of the run, the caller's stderr back
                // for the command: see start_bwrap in the launcher, and Execution
                Path logFile = Files.createFile(RunLayout.setupLog(run.path()), PosixFilePermissions.asFileAttribute(
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
                // the allow-list holds for the proxy in both modes: with the stack, the socket is
                // still there (for host ports), and nested sandboxes go out through it
                proxy = new NetworkProxy(plan.netSocket(), plan.hostPorts(), plan.allowHosts());
            }
            if (plan.netStack() != null && !plan.allowHosts().isEmpty()) {
                // the filter appends to it from outside the sandbox; read through this channel,
                // opened before bwrap starts, once the sandbox has ended
                Path refusedFile = RunLayout.netRefused(run.path());
                RunDir.createFile(refusedFile, "rw-------", new byte[0]);
                netRefused = java.nio.channels.FileChannel.open(refusedFile, java.nio.file.StandardOpenOption.READ,
                        LinkOption.NOFOLLOW_LINKS);
            }
            if (plan.sshAgent() != null) {
                // bound before bwrap starts, which binds the socket in
                agent = SshAgentRelay.start(plan.sshAgent());
            }
            if (prepared != null) {
                // the state before the run, which the second thread takes meanwhile: the
                // home's set-up below and bwrap come after it
                state = prepared.state();
                git = prepared.gitBefore();
            }
            for (String failure : ToolHomes.apply(plan.homeSetup(), env.home())) {
                System.err.println("agent-sandbox: " + failure);
            }
            if (env.installation() != null) {
                // after the home's set-up: what it creates is mounted too
                RunDir.createFile(RunLayout.mountChecks(run.path()), "r--------",
                        MountChecks.render(plan.mounts(), plan.checkedWorkDir()));
            }
            // the git dirs held before anything of the sandbox runs
            List<GitApply> applies = gitApplies(plan, env);
            Bwrap bwrap = startBwrap(plan, env, run, argv, setupLog != null, in, out, err);
            if (guard != null) {
                guard.listen();
            }
            if (proxy != null) {
                proxy.listen();
            }
            Execution execution = new Execution(bwrap, plan, run, guard, proxy, setupLog, env.procSys(), state,
                    env.uid(), git, applies,
                    plan.homeViews().isEmpty() ? null : HomeLayers.root(env));
            execution.closesAlso(agent);
            execution.readsNetworkRefusals(netRefused);
            return execution;
        } catch (IOException e) {
            closeQuietly(guard);
            closeQuietly(proxy);
            closeQuietly(agent);
            closeQuietly(netRefused);
            run.close();
            throw new SandboxException("cannot start bwrap: " + e.getMessage(), Preflight.INSTALL_HINT, e);
        } catch (RuntimeException e) {
            closeQuietly(guard);
            closeQuietly(proxy);
            closeQuietly(agent);
            closeQuietly(netRefused);
            run.close();
            throw e;
        }
    }

    /**
     * Starts bwrap: by the launcher's starter when there is one and the streams are the
     * caller's own (with {@code logged}: its setup messages go to the run's log), else as
     * this JVM's child.
     */
    private static Bwrap startBwrap(Plan plan, Environment env, RunDir run, List<String> argv, boolean logged,
            ProcessBuilder.Redirect in, ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) throws IOException {
        if (logged && inherits(in) && inherits(out) && inherits(err)) {
            BwrapStarter starter = BwrapStarter.take(env.installation().starter());
            Bwrap started = starter == null ? null
                    : starter.start(RunLayout.setupLog(run.path()), plan.argv(), launcherEnv(plan, env));
            if (started != null) {
                return started;
            }
        }
        ProcessBuilder pb = new ProcessBuilder(argv);
        setEnvironment(pb.environment(), logged ? launcherEnv(plan, env) : env.hostEnv());
        // bwrap's own directory does not matter (it goes to the working directory with
        // --chdir, inside): "/" can always be entered, so a working directory that cannot
        // is bwrap's to report, in the words of its chdir
        pb.directory(new java.io.File("/"));
        pb.redirectInput(in == null ? ProcessBuilder.Redirect.INHERIT : in)
                .redirectOutput(out == null ? ProcessBuilder.Redirect.INHERIT : out)
                .redirectError(err == null ? ProcessBuilder.Redirect.INHERIT : err);
        return Bwrap.of(pb.start());
    }

    /**
     * The environment of the launcher that starts bwrap: the caller's, with the network
     * stack it attaches named (and only then: a caller's own variable of that name never
     * reaches it).
     */
    private static Map<String, String> launcherEnv(Plan plan, Environment env) {
        Map<String, String> out = new java.util.HashMap<>(env.hostEnv());
        out.remove(NetStack.LAUNCHER_VARIABLE);
        out.remove(NetStack.LAUNCHER_ALLOW);
        out.remove(NetStack.LAUNCHER_REFUSED);
        if (plan.netStack() != null) {
            out.put(NetStack.LAUNCHER_VARIABLE, plan.netStack().toString());
            if (!plan.allowHosts().isEmpty()) {
                out.put(NetStack.LAUNCHER_ALLOW, String.join(",", plan.allowHosts()));
                out.put(NetStack.LAUNCHER_REFUSED, RunLayout.netRefused(plan.runtimeDir()).toString());
            }
        }
        return out;
    }

    /**
     * The layers of the run's copy-on-write views (owner-only, empty), and what the sandbox's
     * first program mounts: the user's uid and gid, then each view's record as the first
     * program sees it (guard.h, RUNTIME_GIT_VIEWS). A git dir's lower dir is where the first
     * program copies it, in memory of the sandbox's own, and its object stores are overlays
     * of the host's live directories (launcher/src/git_snapshot.c); its upper dir is the
     * run's own. A home directory's lower dirs are the user's layer of it, then the host's
     * directory, and its upper dir is the run's, merged into that layer at the end.
     */
    private static void writeViews(RunDir run, Plan plan, Environment env) throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        Object uid = Files.getAttribute(run.path(), "unix:uid", LinkOption.NOFOLLOW_LINKS);
        Object gid = Files.getAttribute(run.path(), "unix:gid", LinkOption.NOFOLLOW_LINKS);
        field(bytes, uid.toString());
        field(bytes, gid.toString());
        List<Path> gitDirs = plan.gitViews();
        if (!gitDirs.isEmpty()) {
            Path layers = RunDir.privateDir(RunLayout.gitLayers(run.path()));
            if (gitDirs.size() + plan.homeViews().size() > GitViews.MAX_RECORDS) {
                throw new SandboxException("the views of " + gitDirs.get(0) + " need more than "
                        + GitViews.MAX_RECORDS + " mounts", "run with " + GitViews.OFF_VARIABLE
                                + "=off for the fallback, which protects the git dirs path by path");
            }
            for (int i = 0; i < gitDirs.size(); i++) {
                Path gitDir = gitDirs.get(i);
                // the lower dir: where the first program copies the git dir, in memory of the
                // sandbox's own (launcher/src/git_snapshot.c), and beside it the refs it started from
                Path layer = RunDir.privateDir(layers.resolve(Integer.toString(i)));
                RunDir.privateDir(layer.resolve("lower"));
                RunDir.privateDir(layer.resolve("upper"));
                RunDir.privateDir(layer.resolve("work"));
                Path inside = Inside.GIT_LAYERS.resolve(Integer.toString(i));
                field(bytes, String.valueOf(GitViews.KIND));
                field(bytes, gitDir.toString());
                field(bytes, inside.resolve("lower").toString());
                field(bytes, inside.resolve("upper").toString());
                field(bytes, inside.resolve("work").toString());
                // what the first program checks it mounts on: this very directory, not one a
                // concurrent process renamed into its place
                field(bytes, Files.getAttribute(gitDir, "unix:dev", LinkOption.NOFOLLOW_LINKS) + ":"
                        + Files.getAttribute(gitDir, "unix:ino", LinkOption.NOFOLLOW_LINKS));
            }
        }
        if (!plan.homeViews().isEmpty()) {
            try {
                writeHomeViews(run, plan, env, bytes);
            } catch (IOException e) {
                Path root = HomeLayers.root(env);
                throw new SandboxException("cannot make this run's layers of the home in " + root + " ("
                        + ToolHomes.reason(e) + ")", "move " + root + " aside (what sandboxes changed is in its"
                        + " layers/), or run with " + HomeLayers.OFF_VARIABLE + "=off for the fallback");
            }
        }
        RunDir.createFile(RunLayout.gitViews(run.path()), "r--------", bytes.toByteArray());
    }

    /**
     * A new layer of the home's {@code rel}, made whole in the run's own directory and then
     * renamed into place, so that a run starting at the same moment mounts either no layer
     * or one with the host's own logins already hidden, never one half made. A layer
     * another run put there first is taken as it is.
     */
    private static void newLayer(Path own, Path layer, String rel) throws IOException {
        Path made = own.resolve(".new-layer");
        RunDir.privateDir(made);
        HomeLayers.hideOwnLogins(made, rel);
        try {
            // rename(2): takes the place of nothing, or of an empty layer made the same way
            Files.move(made, layer, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException taken) {
            if (!Files.isDirectory(layer, LinkOption.NOFOLLOW_LINKS)) {
                throw taken;
            }
            SafeRemoval.removeTree(own, made.getFileName());
        }
    }

    /** The home's views: the run's own upper and work dirs below the store, and their records. */
    private static void writeHomeViews(RunDir run, Plan plan, Environment env, java.io.ByteArrayOutputStream bytes)
            throws IOException {
        {
            Path root = HomeLayers.root(env);
            String name = run.path().getFileName().toString();
            Path runs = HomeLayers.runs(root);
            // other runs may be making the same directories at this moment
            for (Path dir : List.of(HomeLayers.layers(root), runs)) {
                RunDir.privateDirIfMissing(dir);
            }
            Path own = RunDir.privateDir(runs.resolve(name));
            for (HomeViews.View v : plan.homeViews()) {
                String layerName = HomeLayers.name(v.rel());
                Path layer = HomeLayers.layer(root, v.rel());
                if (!Files.isDirectory(layer, LinkOption.NOFOLLOW_LINKS)) {
                    newLayer(own, layer, v.rel());
                }
                Path mine = RunDir.privateDir(own.resolve(layerName));
                RunDir.privateDir(mine.resolve("upper"));
                RunDir.privateDir(mine.resolve("work"));
                Path inside = Inside.HOME_LAYERS.resolve("runs").resolve(name).resolve(layerName);
                field(bytes, String.valueOf(HomeViews.KIND));
                field(bytes, Inside.HOME_LAYERS.resolve("layers").resolve(layerName) + ":" + v.target());
                field(bytes, inside.resolve("upper").toString());
                field(bytes, inside.resolve("work").toString());
            }
        }
    }

    private static void field(java.io.ByteArrayOutputStream bytes, String text) {
        bytes.writeBytes(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        bytes.write(0);
    }

    /**
     * What the host applies from each git view after the run ({@link GitApply}), each on its
     * git dir held from now on by a descriptor ({@link agentsandbox.core.Native#pinned}): a
     * nested repository's parent is the sandbox's to rename, and a link put in its place must
     * not lead the apply, or the host's git and its hooks, anywhere else.
     */
    private static List<GitApply> gitApplies(Plan plan, Environment env) {
        List<GitApply> out = new ArrayList<>();
        for (int i = 0; i < plan.gitViews().size(); i++) {
            Path gitDir = plan.gitViews().get(i);
            Path layer = RunLayout.gitLayers(plan.runtimeDir()).resolve(Integer.toString(i));
            Path pinned;
            try {
                pinned = agentsandbox.core.Native.pinned(gitDir);
            } catch (IOException e) {
                throw new SandboxException(gitDir + " changed while the sandbox was being set up (" + e.getMessage()
                        + "): a concurrent process replaced it or a directory above it; nothing ran", "start again");
            }
            // @git-strict names the project's branch: nested repositories keep the allow-list alone
            GitApply apply = new GitApply(gitDir, pinned, BaseRefs.in(layer), layer.resolve("upper"), env.hostEnv(),
                    i == 0 ? plan.gitOnlyBranch() : null);
            apply.watchOtherRuns(plan.runtimeDir().getParent(), plan.runtimeDir().getFileName().toString());
            out.add(apply);
        }
        if (!out.isEmpty()) {
            // the nested repositories with views: the project's index may not put a file in their place
            Path workTree = plan.gitViews().get(0).getParent();
            List<String> nested = new ArrayList<>();
            for (int i = 1; i < plan.gitViews().size(); i++) {
                Path gitDir = plan.gitViews().get(i);
                if (workTree != null && gitDir.getFileName().toString().equals(".git") && gitDir.startsWith(workTree)) {
                    nested.add(workTree.relativize(gitDir.getParent()).toString());
                }
            }
            out.get(0).nestedRepositories(nested);
        }
        return out;
    }

    /** Whether a stream of {@link #start} is the caller's own (null stands for that too). */
    private static boolean inherits(ProcessBuilder.Redirect r) {
        return r == null || r == ProcessBuilder.Redirect.INHERIT;
    }

    /** What the plan needs in the run directory beyond what every run has. */
    private static void prepareRun(RunDir run, Plan plan, Environment env) throws IOException {
        // created read-only, written through the descriptor that created it
        RunDir.createFile(RunLayout.policy(run.path()), "r--------",
                plan.explanation().format().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        if (!plan.spilledCommand().isEmpty()) {
            writeCommand(RunLayout.command(run.path()), plan.spilledCommand());
        }
        if (plan.guardSocket() != null) {
            run.socketDir(RunLayout.GUARD);
        }
        if (!plan.gitViews().isEmpty() || !plan.homeViews().isEmpty()) {
            writeViews(run, plan, env);
        }
        if (plan.netSocket() != null) {
            Path net = run.socketDir(RunLayout.NET);
            RunDir.createFile(net.resolve("listen"), "rw-------", NetworkProxy.listenFile(plan.hostPorts(),
                    plan.netStack() == null).getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
        if (plan.resolvConf() != null) {
            RunDir.createFile(RunLayout.resolvConf(run.path()), "r--r--r--",
                    plan.resolvConf().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        }
    }

    /**
     * Makes {@code target} (a process builder's environment, inherited from this process)
     * equal to {@code wanted}, changing only what differs: an inherited variable keeps its
     * original bytes, so a value that is not valid UTF-8 reaches the command unchanged.
     */
    public static void setEnvironment(Map<String, String> target, Map<String, String> wanted) {
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
     * Pays what the first use of the JVM's Unix sockets costs (the classes' setup, and a
     * random-number source for their temporary names: the app image's runtime has a provider
     * of its own for that, see agentsandbox.urandom.UrandomProvider).
     * {@link Preparation} does it while the plan is made, on a core that planning leaves
     * idle, rather than while bwrap sets the sandbox up, which it would slow down.
     */
    public static void openSocketClasses() {
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
}
