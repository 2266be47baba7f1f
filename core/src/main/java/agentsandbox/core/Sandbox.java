// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.run.Execution;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.run.Launch;
import agentsandbox.core.run.OwnState;
import agentsandbox.core.plan.PlanBuilder;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.run.Preparation;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.run.RunLayout;
import agentsandbox.core.rules.ToolCatalogue;
import agentsandbox.core.run.Unsettled;

import java.nio.file.Path;
import java.util.List;

/**
 * The engine: turns a {@link Policy} into a {@link Plan} (nothing is created), and
 * starts a plan under bwrap. The CLI is one client of this class. The stages live in
 * their packages: {@code rules} (presets, patterns, resolution), {@code plan} (the
 * mounts and the bwrap command line), {@code host} (the host's services), {@code run}
 * (the run directory, the home's set-up, starting bwrap), {@code guard} (the git
 * guard), {@code aftercheck} (what a run left for the host to notice).
 *
 * <pre>{@code
 * Plan plan = Sandbox.plan(policy, env, List.of("make", "test"));
 * try (Execution run = Sandbox.start(plan, env)) {
 *     int status = run.waitFor();
 *     for (String finding : run.findings()) {
 *         System.err.println(finding);
 *     }
 * }
 * }</pre>
 */
public final class Sandbox {
    private Sandbox() {}

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
        return new PlanBuilder(policy, env, command, detail, prepared).build();
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
        return Launch.start(plan, env, prepared, null, null, null);
    }

    /** Starts the plan with the given standard streams (null: the caller's own). */
    public static Execution start(Plan plan, Environment env, ProcessBuilder.Redirect in,
            ProcessBuilder.Redirect out, ProcessBuilder.Redirect err) {
        return Launch.start(plan, env, null, in, out, err);
    }

    /**
     * For a missing home path that {@code @caches} or {@code @agents} grants: which preset,
     * and which runs create it; null for any other path.
     */
    public static String whoCreates(Path home, Path path) {
        return ToolCatalogue.whoCreates(home, path);
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
            Unsettled.check(RunLayout.stateDir(env));
        }
    }

    /** True when this process runs inside an agent-sandbox sandbox. */
    public static boolean isInside() {
        return Inside.isInside();
    }
}
