// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.Environment;
import agentsandbox.core.run.Execution;
import agentsandbox.core.plan.Explanation;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Loosening;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.run.Preparation;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The command line as one function: arguments and environment in, exit status out.
 * This is the single place where failures become {@code agent-sandbox: <message>} and
 * exit status 1.
 */
final class Cli {
    /** Exit status after SIGINT or SIGTERM. */
    static final int INTERRUPTED = 130;
    /** The check of git metadata after a run never holds the terminal longer than this. */

    private final PrintStream out;
    private final PrintStream err;
    private final Consumer<Runnable> interrupts;

    /**
     * @param interrupts installs a handler for SIGINT/SIGTERM (tests may pass a no-op)
     */
    Cli(PrintStream out, PrintStream err, Consumer<Runnable> interrupts) {
        this.out = out;
        this.err = err;
        this.interrupts = interrupts;
    }

    int run(List<String> argv, Environment env) {
        boolean debug = argv.contains("--debug");
        try {
            return dispatch(Flags.parse(argv), env);
        } catch (SandboxException e) {
            err.println("agent-sandbox: " + oneLine(e.oneLine()));
            if (debug && e.getCause() != null) {
                e.getCause().printStackTrace(err);
            }
            return 1;
        } catch (RuntimeException | StackOverflowError e) {
            err.println("agent-sandbox: internal error: " + oneLine(String.valueOf(e))
                    + (debug ? "" : " (run with --debug for details)"));
            if (debug) {
                e.printStackTrace(err);
            }
            return 1;
        }
    }

    /** A message as one printable line (see {@link SandboxException#printable}). */
    static String oneLine(String message) {
        return SandboxException.printable(message);
    }

    private int dispatch(Args args, Environment env) {
        switch (args.mode()) {
            case HELP -> {
                out.print(Reference.current().help());
                return 0;
            }
            case USAGE -> {
                err.print(Reference.current().help());
                return 1;
            }
            case SUBCOMMAND_HELP -> {
                out.print(Reference.current().subcommandHelp(args.command().get(0)));
                return 0;
            }
            case VERSION -> {
                out.print(VersionReport.text(env));
                return 0;
            }
            case DOCTOR -> {
                return DoctorReport.run(withCwd(args.cwd(), env), args.config(), args.json(), out, err);
            }
            case CHECK -> {
                boolean inside = Sandbox.isInside();
                if (!args.quiet()) {
                    out.println(inside ? "inside sandbox" : "outside sandbox");
                }
                return inside ? 0 : 1;
            }
            case TRUST -> {
                return trust(args, env);
            }
            case EXPLAIN -> {
                return explain(args, env);
            }
            case CHANGES -> {
                return Changes.run(args.command(), env, out, err);
            }
            case LOG -> {
                return LogCommand.run(args.command(), withCwd(args.cwd(), env), out);
            }
            case RUN -> {
                return runCommand(args, env);
            }
        }
        throw new IllegalStateException("unhandled mode " + args.mode());
    }

    private int runCommand(Args args, Environment env) {
        Debug debug = args.debug() ? new Debug(err) : Debug.OFF;
        if (args.dryRun()) {
            Planned planned = plan(args, env, args.command(), debug, null);
            for (String hint : args.hints()) {
                err.println("agent-sandbox: " + oneLine(hint));
            }
            out.println(args.json() ? Json.array(planned.plan().argv()) : planned.plan().shellLine());
            return 0;
        }
        Environment effective = withCwd(args.cwd(), env);
        Sandbox.prepareHost(effective);
        // Ctrl-C from here on ends the run the agent-sandbox way: nothing left behind
        Interrupt interrupt = new Interrupt();
        interrupts.accept(interrupt);
        // the run directory and the checks before the run, on the second core while planning
        java.time.Instant start = java.time.Instant.now();
        try (Preparation prepared = Preparation.start(effective)) {
            Planned planned = plan(args, env, args.command(), debug, prepared);
            Plan plan = planned.plan();
            if (args.cwd() == null && effective.workDir().toString().equals(System.getProperty("user.dir"))) {
                // the working directory is this process's own, as the kernel knows it
                checkWorkDirIsCurrent(plan.checkedWorkDir());
            }
            for (String hint : args.hints()) {
                err.println("agent-sandbox: " + oneLine(hint));
            }
            if (interrupt.fired()) {
                return INTERRUPTED;
            }
            try (Execution execution = Sandbox.start(plan, effective, prepared)) {
                interrupt.attach(execution);
                execution.sweep(); // stale runs' directories, while bwrap sets the sandbox up
                // the check of the git metadata is let go as soon as bwrap has ended, while the
                // servers stop, the run directory goes and the stale ones are swept
                int status = execution.waitForEnd();
                for (String line : execution.bwrapMessages()) {
                    err.println(oneLine(line)); // what bwrap wrote, so no terminal control sequences
                }
                execution.afterRun(); // files moved aside before the run directory goes
                execution.closeAtExit(); // the tool ends next
                List<String> findings = execution.findings();
                for (String line : findings) {
                    err.println("agent-sandbox: after the run: " + oneLine(line));
                }
                int result = execution.terminated() ? INTERRUPTED : status;
                logRun(effective, args, planned.policyDigest(), start, result, execution, findings);
                return result;
            }
        }
    }

    /**
     * A plan, the environment it was made for (the working directory of {@code -C}) and the
     * SHA-256 of its merged policy's layers (the denial log's "policy").
     */
    private record Planned(Environment env, Plan plan, String policyDigest) {}

    /**
     * Records the run in the denial log (host side, after the sandbox has ended) and, when it
     * refused something, says so in one line. A log that cannot be written is said in one line
     * and does not change the run's exit status.
     */
    private void logRun(Environment env, Args args, String policy, java.time.Instant start, int status,
            Execution execution, List<String> findings) {
        List<DenialLog.Entry> entries = new java.util.ArrayList<>(DenialLog.git(execution.gitRefusals()));
        int git = execution.gitRefusalCount();
        for (String f : findings) {
            entries.add(new DenialLog.Entry("file", f, "found by the checks after the run"));
        }
        // the allow-list's refusals, as the proxy or the DNS filter recorded them on the host
        entries.addAll(DenialLog.network(execution.networkRefusals()));
        int network = execution.networkRefusedCount();
        int others = findings.size();
        // last, after everything the host saw: what the sandbox reported (blocked commands it
        // called), so that its reports never push a host entry out of the record
        entries.addAll(DenialLog.blocked(execution.blockedCommandReports()));
        int blocked = execution.blockedCommandReportCount();
        int refused = git + network + blocked + others;
        // an id to tell runs apart, not a secret: no SecureRandom (its set-up costs every run)
        String id = Long.toHexString(start.toEpochMilli()) + Long.toHexString(System.nanoTime() & 0xffffff);
        try {
            DenialLog.append(env, new DenialLog.Run(id, start,
                    java.time.Instant.now(), env.workDir().toString(), args.command(), policy, status, refused,
                    entries));
        } catch (SandboxException e) {
            err.println("agent-sandbox: " + oneLine(e.oneLine()));
        }
        if (refused > 0) {
            List<String> parts = new java.util.ArrayList<>();
            if (git > 0) {
                parts.add(git + " git command" + (git == 1 ? "" : "s"));
            }
            if (network > 0) {
                parts.add(network + " network destination" + (network == 1 ? "" : "s"));
            }
            if (blocked > 0) {
                parts.add(blocked + " blocked command" + (blocked == 1 ? "" : "s"));
            }
            if (others > 0) {
                parts.add(others + " other");
            }
            err.println("agent-sandbox: this run refused " + refused + (refused == 1 ? " thing" : " things") + " ("
                    + String.join(", ", parts) + "); see them with: agent-sandbox log");
        }
    }

    /**
     * The plan a run with these flags makes here: config files, the project config's
     * trust, the merge, then {@link Sandbox#plan} (for the run that {@code prepared} prepares,
     * when not null). Creates nothing.
     */
    private Planned plan(Args args, Environment env, List<String> command, Debug debug, Preparation prepared) {
        Environment effective = withCwd(args.cwd(), env);

        ConfigReader.Loaded config = ConfigReader.load(effective, args.config());
        Policy.Builder builder = Policy.builder();
        for (PolicyLayer layer : config.layers()) {
            builder.layer(layer);
        }
        for (Path file : config.files()) {
            builder.configFile(file);
        }
        PolicyLayer flags = args.flagLayer();
        builder.layer(flags);
        Policy policy = builder.build();
        if (!policy.network()) { // only then can anything conflict (and Conflicts is not even loaded)
            for (String conflict : Conflicts.of(policy)) {
                err.println("agent-sandbox: " + oneLine(conflict));
            }
        }

        debug.section("config");
        for (String note : config.notes()) {
            debug.line(note);
        }
        String projectStatus = null;
        if (config.project() != null) {
            String decided = checkProjectConfig(policy, config, effective, args.cwd(), args.config(), debug != Debug.OFF);
            debug.line(decided);
            projectStatus = decided.startsWith(TRUSTED) ? "trusted"
                    : "untrusted, which is fine: it only tightens";
        }
        if (debug != Debug.OFF) { // what only --debug shows is not even made otherwise
            debug.section("merge (lowest priority first)");
            for (PolicyLayer l : policy.layers()) {
                debug.line(describe(l));
            }
            debug.line("result: network " + (policy.network() ? "on" : "off")
                    + (policy.network() && !policy.allowHosts().isEmpty() ? " for " + policy.allowHosts() + " only" : "")
                    + ", docker " + (policy.docker() ? "on" : "off"));
            for (Map.Entry<String, CommandRule> e : policy.commands().entrySet()) {
                debug.line("result: command " + e.getKey() + " = " + e.getValue().describe());
            }
        }

        Plan plan = Sandbox.plan(policy, effective, command, debug != Debug.OFF, prepared);
        if (debug != Debug.OFF) {
            debug.section("resolution and mounts");
            for (String note : plan.notes()) {
                debug.line(note);
            }
            debug.section("bwrap");
            debug.line(plan.shellLine());
        }
        plan = plan.withExplanation(plan.explanation().withConfigs(
                configs(config, effective, args.config(), projectStatus)));
        StringBuilder layers = new StringBuilder();
        for (PolicyLayer l : policy.layers()) {
            layers.append(describe(l)).append('\n');
        }
        return new Planned(effective, plan, Sha256.hex(layers.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    /**
     * The run's config files as {@code explain} shows them: where the global one is (or
     * would be), and the project one with its trust.
     */
    private static List<Explanation.Config> configs(ConfigReader.Loaded config, Environment env, String explicit,
            String projectStatus) {
        List<Explanation.Config> out = new java.util.ArrayList<>();
        Path global = null;
        Path project = null;
        for (PolicyLayer l : config.layers()) {
            if (l.layer() == Layer.GLOBAL) {
                global = Path.of(l.source());
            } else if (l.layer() == Layer.PROJECT) {
                project = Path.of(l.source());
            }
        }
        if (global != null) {
            out.add(new Explanation.Config(Layer.GLOBAL, global, "loaded"));
        } else {
            java.util.Optional<Path> dir = ConfigReader.globalDir(env);
            if (dir.isPresent()) {
                out.add(new Explanation.Config(Layer.GLOBAL, dir.get().resolve("config.jsonc"), "not found"));
            }
        }
        if (project != null) {
            out.add(new Explanation.Config(Layer.PROJECT, project,
                    explicit != null ? "given with -c" : projectStatus == null ? "loaded" : projectStatus));
        } else {
            out.add(new Explanation.Config(Layer.PROJECT, env.workDir().resolve(".agent-sandbox.json"),
                    "not found"));
        }
        return out;
    }

    /**
     * {@code agent-sandbox [flags] explain PATH...}: outside, for the plan a run with these
     * flags would make here (nothing is started); inside, for the sandbox it runs in, from
     * the record its run left at {@link Inside#POLICY}.
     */
    private int explain(Args args, Environment env) {
        List<String> paths = args.command();
        if (Sandbox.isInside()) {
            if (args.hasPolicyFlags()) {
                throw new UsageException("inside a sandbox, explain answers for the sandbox it runs in, so it"
                        + " takes no flags", "run agent-sandbox [flags] explain PATH... outside to see what flags"
                        + " would change");
            }
            Explain.validate(paths, env);
            Explanation here = Explain.read(Inside.POLICY);
            Explanation outer = Files.exists(Explain.OUTER_POLICY) ? Explain.read(Explain.OUTER_POLICY) : null;
            out.print(new Explain(here, outer, true, env).answer(paths, args.json()));
            return 0;
        }
        Explain.validate(paths, env);
        Planned planned = plan(args, env, List.of("true"), args.debug() ? new Debug(err) : Debug.OFF, null);
        out.print(new Explain(planned.plan().explanation(), null, false, planned.env()).answer(paths, args.json()));
        return 0;
    }

    /**
     * An untrusted project config may only tighten the policy: one that loosens it stops
     * the run, unless the user trusted exactly these bytes at this path.
     *
     * @return what was decided, for {@code --debug}
     */
    private static String checkProjectConfig(Policy policy, ConfigReader.Loaded config, Environment env,
            String cwdFlag, String configFlag, boolean detail) {
        PolicyLayer project = config.project();
        Path file = Path.of(project.source());
        Trust.Status status = Trust.status(env, file, config.projectBytes());
        if (status == Trust.Status.TRUSTED && !detail) {
            // accepted as it is, whatever it loosens: working that out resolves every rule
            // twice more, which only --debug shows
            return TRUSTED + " (sha256 " + Trust.sha256(config.projectBytes()) + ")";
        }
        List<String> loosens = Loosening.of(policy, project, env);
        if (loosens.isEmpty()) {
            return "project config: only tightens the policy (no trust needed)";
        }
        if (status == Trust.Status.TRUSTED) {
            return TRUSTED + " (sha256 " + Trust.sha256(config.projectBytes()) + "), loosens: "
                    + String.join(", ", loosens);
        }
        String why = status == Trust.Status.CHANGED ? "has changed since it was trusted, so it is not trusted," : "is not trusted";
        if (Sandbox.isInside()) {
            throw new SandboxException(file + " " + why + " and loosens the policy: " + summary(loosens)
                    + "; inside a sandbox no project config is trusted",
                    "run outside the sandbox, or name a config with -c");
        }
        throw new SandboxException(file + " " + why + " and loosens the policy: " + summary(loosens)
                + (configFlag == null ? "" : " (a file named with -c in the project is trusted only as a project"
                        + " config is: sandboxes write there)"),
                "review it, then run: agent-sandbox"
                        + (configFlag == null ? "" : " -c " + agentsandbox.core.text.ShellQuote.quote(configFlag))
                        + " trust" + (cwdFlag == null ? "" : " -C " + env.workDir()));
    }

    private static final String TRUSTED = "project config: trusted";

    /** The first items of a list, and how many more. */
    static String summary(List<String> items) {
        int shown = Math.min(3, items.size());
        String s = String.join(", ", items.subList(0, shown));
        return items.size() > shown ? s + " and " + (items.size() - shown) + " more" : s;
    }

    /**
     * {@code agent-sandbox trust [-C DIR]}: says what the project config of DIR accepts
     * and records its path and hash in the host-side store.
     */
    private int trust(Args args, Environment env) {
        if (Sandbox.isInside()) {
            throw new SandboxException("trust is refused inside a sandbox (a sandbox must not vouch for"
                    + " the config it may have written)", "run agent-sandbox trust outside any sandbox");
        }
        Environment effective = withCwd(args.cwd(), env);
        Optional<Path> found = args.config() != null ? Optional.of(ConfigReader.explicitFile(effective, args.config()))
                : ConfigReader.projectFile(effective);
        if (args.config() != null && !ConfigReader.inProject(effective, found.get())) {
            throw new SandboxException(found.get() + " is outside the project: a file named with -c there is trusted"
                    + " without a record", "run agent-sandbox -c FILE with it as it is");
        }
        if (found.isEmpty()) {
            throw new SandboxException("no .agent-sandbox.json or .agent-sandbox.jsonc in " + effective.workDir()
                    + " to trust", "run it in the project's directory, or give it with -C DIR");
        }
        Path file = found.get();
        // A sandbox running now that can write the file could swap it between your review and
        // this record (one that began before the file existed writes it for the rest of its run).
        // A run whose records cannot be read yet is starting: its command has not run, and it
        // has written nothing (counting it would refuse trust after any run killed as it began)
        String writer = null;
        try {
            writer = agentsandbox.core.run.OtherRuns.now(agentsandbox.core.run.RunLayout.runsDir(
                    agentsandbox.core.run.RunLayout.stateDir(effective)), "").writerOf(file, false);
        } catch (RuntimeException e) {
            // no state dir: no run of yours to look at
        }
        if (writer != null) {
            throw new SandboxException(file + " can be written by a sandbox running now (" + writer + "): what you"
                    + " review could change before it is recorded", "trust it once that run has ended");
        }
        ConfigReader.Loaded config = ConfigReader.load(effective, args.config());
        Policy.Builder builder = Policy.builder();
        for (PolicyLayer layer : config.layers()) {
            builder.layer(layer);
        }
        Policy policy = builder.build();
        List<String> loosens = Loosening.of(policy, config.project(), effective);
        byte[] bytes = config.projectBytes();
        Trust.Previous previous = Trust.previous(effective, file, bytes);
        String text = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        out.println(Trust.key(file) + ":");
        for (String line : text.split("\n", -1)) {
            if (!line.isEmpty() || !text.endsWith("\n")) {
                out.println("  | " + oneLine(line));
            }
        }
        switch (previous.status()) {
            case TRUSTED -> out.println("unchanged since you trusted it last");
            case UNTRUSTED -> out.println("never trusted before");
            case CHANGED -> {
                java.util.List<String> diff = previous.content() == null ? null
                        : LineDiff.of(new String(previous.content(), java.nio.charset.StandardCharsets.UTF_8), text);
                if (diff == null) {
                    out.println("changed since you trusted it last (the earlier content is not at hand to compare)");
                } else {
                    out.println("changed since you trusted it last:");
                    for (String line : diff) {
                        out.println("  " + oneLine(line));
                    }
                }
            }
        }
        Path record = Trust.record(effective, file, bytes);
        out.println("trusted " + Trust.key(file) + " (sha256 " + Trust.sha256(bytes) + ")");
        if (loosens.isEmpty()) {
            out.println("  it only tightens the policy");
        } else {
            out.println("  it loosens the policy:");
            for (String item : loosens) {
                out.println("    " + oneLine(item));
            }
        }
        out.println("  recorded in " + record + "; any change to the file makes it untrusted again");
        return 0;
    }

    /**
     * The directory the plan resolved the working directory to must be the one this
     * process was started in, as the kernel knows it (the path was taken from it when the
     * tool started): otherwise something renamed it, or put a link at its path, meanwhile.
     */
    private static void checkWorkDirIsCurrent(Path planned) {
        if (planned == null) {
            return;
        }
        Object here;
        Object there;
        try {
            // the kernel's own link to this process's directory: "." would be resolved
            // against the path the JVM noted at its start, when that no longer leads here
            here = Files.readAttributes(Path.of("/proc/self/cwd"), "unix:dev,ino");
            there = Files.readAttributes(planned, "unix:dev,ino");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            here = null;
            there = e;
        }
        if (!there.equals(here)) {
            throw new SandboxException("the working directory " + planned + " changed while the sandbox was being"
                    + " set up: it is no longer the directory agent-sandbox was started in (a concurrent process"
                    + " renamed it, or put a link in its place); nothing ran, start again");
        }
    }

    private static Environment withCwd(String cwd, Environment env) {
        if (cwd == null) {
            return env;
        }
        Path dir = env.workDir().resolve(expandHome(cwd, env)).normalize();
        if (!Files.isDirectory(dir)) {
            throw new UsageException("--cwd " + cwd + ": no such directory");
        }
        return env.withWorkDir(dir);
    }

    private static String expandHome(String path, Environment env) {
        if (env.home() != null && (path.equals("~") || path.startsWith("~/"))) {
            return env.home() + path.substring(1);
        }
        return path;
    }

    private static String describe(PolicyLayer l) {
        StringBuilder sb = new StringBuilder(l.layer().word()).append(" ").append(l.source()).append(":");
        int len = sb.length();
        if (!l.presets().isEmpty()) {
            sb.append(" presets ").append(l.presets());
        }
        if (!l.ro().isEmpty()) {
            sb.append(" ro ").append(l.ro());
        }
        if (!l.rw().isEmpty()) {
            sb.append(" rw ").append(l.rw());
        }
        if (!l.exclude().isEmpty()) {
            sb.append(" exclude ").append(l.exclude());
        }
        for (Map.Entry<String, agentsandbox.core.rules.CommandRule> c : l.commands().entrySet()) {
            sb.append(" command ").append(c.getKey()).append("=").append(c.getValue().describe());
        }
        if (l.network() != null) {
            sb.append(" network ").append(l.network());
        }
        if (l.docker() != null) {
            sb.append(" docker ").append(l.docker());
        }
        if (l.shareTmp() != null) {
            sb.append(" shareTmp ").append(l.shareTmp());
        }
        if (l.gpgAgent() != null) {
            sb.append(" gpgAgent ").append(l.gpgAgent());
        }
        if (l.sshAgent() != null) {
            sb.append(" sshAgent ").append(l.sshAgent());
        }
        if (!l.hostPorts().isEmpty()) {
            sb.append(" hostPorts ").append(l.hostPorts());
        }
        if (!l.allowHosts().isEmpty()) {
            sb.append(" network.allow ").append(l.allowHosts());
        }
        if (sb.length() == len) {
            sb.append(" (nothing)");
        }
        return sb.toString();
    }

    /** Connects a signal that may arrive before the sandbox has started. */
    private static final class Interrupt implements Runnable {
        private Execution execution;
        private int pending;

        /** What a signal does: {@link #fire()}. */
        @Override
        public void run() {
            fire();
        }

        synchronized void fire() {
            if (execution == null) {
                pending++;
            } else {
                execution.terminate();
            }
        }

        synchronized boolean fired() {
            return pending > 0;
        }

        synchronized void attach(Execution e) {
            execution = e;
            for (; pending > 0; pending--) {
                e.terminate();
            }
        }
    }

    /** {@code --debug} output: deliberate sections on stderr. */
    private static class Debug {
        static final Debug OFF = new Debug(null);
        private final PrintStream err;

        Debug(PrintStream err) {
            this.err = err;
        }

        void section(String title) {
            if (err != null) {
                err.println("agent-sandbox: " + title);
            }
        }

        void line(String text) {
            if (err != null) {
                // a path a sandbox named (a nested repository's directory) may hold escape sequences
                err.println("  " + oneLine(text));
            }
        }
    }
}
