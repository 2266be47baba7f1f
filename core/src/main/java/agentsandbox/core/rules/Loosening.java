// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.Environment;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.plan.Planner;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What one layer of a policy loosens: the effective policy with the layer compared with
 * the same policy without it. A layer loosens when, with it, any path is more accessible
 * (hidden becomes readable, read-only becomes writable, a path shows other host content),
 * the network, Docker, a shared temp dir, the ssh-agent, the gpg-agent or a host port is turned on, hosts are
 * added to an allow-list that the other layers already have, or a command's wrapper or block is removed or
 * replaced by something other than a block. Everything else only tightens.
 *
 * <p>This is how an untrusted project config is judged: it may only tighten.
 */
public final class Loosening {
    private Loosening() {}

    /**
     * Removes {@code layer} itself (as the caller passes it, the very object of the policy)
     * from {@code layers}.
     */
    private static boolean removeSame(List<PolicyLayer> layers, PolicyLayer layer) {
        for (int i = 0; i < layers.size(); i++) {
            if (layers.get(i) == layer) {
                layers.remove(i);
                return true;
            }
        }
        return false;
    }

    /**
     * What {@code layer} loosens in {@code policy}, one short item each ({@code "rw ~/.ssh
     * (was hidden)"}, {@code "network on"}), empty when it only tightens.
     *
     * @param policy the whole policy, with {@code layer} among its layers
     * @throws SandboxException when a policy cannot be resolved (the same error a plan gives)
     */
    public static List<String> of(Policy policy, PolicyLayer layer, Environment env) {
        List<PolicyLayer> without = new ArrayList<>(policy.layers());
        if (!removeSame(without, layer) && !without.remove(layer)) {
            throw new IllegalArgumentException("layer " + layer.source() + " is not part of the policy");
        }
        Policy before = new Policy(without, policy.configFiles());
        List<String> out = new ArrayList<>();
        if (policy.network() && !before.network()) {
            out.add("network on");
        }
        if (policy.docker() && !before.docker()) {
            out.add("docker on");
        }
        if (policy.shareTmp() && !before.shareTmp()) {
            out.add("shareTmp on (the host's temp dir at /tmp)");
        }
        if (policy.sshAgent() && !before.sshAgent()) {
            out.add("sshAgent on");
        }
        if (policy.gpgAgent() && !before.gpgAgent()) {
            out.add("gpgAgent on");
        }
        Bounds now = policy.bounds();
        Bounds was = before.bounds();
        if (now.tmpSize() > was.tmpSize()) {
            out.add("tmpSize " + Bounds.human(now.tmpSize()) + " (was " + Bounds.human(was.tmpSize()) + ")");
        }
        if (now.maxProcs() > was.maxProcs()) {
            out.add("maxProcs " + now.maxProcs() + " (was " + was.maxProcs() + ")");
        }
        if (now.maxMemory() > was.maxMemory()) {
            out.add("maxMemory " + Bounds.human(now.maxMemory()) + " (was " + Bounds.human(was.maxMemory()) + ")");
        }
        List<Integer> ports = new ArrayList<>(policy.hostPorts());
        ports.removeAll(before.hostPorts());
        if (!ports.isEmpty()) {
            out.add("hostPorts " + ports);
        }
        List<String> hosts = new ArrayList<>(policy.allowHosts());
        hosts.removeAll(before.allowHosts());
        if (!before.allowHosts().isEmpty() && !hosts.isEmpty()) {
            // a first list only narrows the network; more names on a list widen it
            out.add("network.allow " + hosts + " (more hosts than " + before.allowHosts() + ")");
        }
        commands(before.commands(), policy.commands(), out);
        if (layer.ro().isEmpty() && layer.rw().isEmpty() && layer.presets().isEmpty()
                && !(policy.shareTmp() && !before.shareTmp())) {
            // only exclusions: they hide, they never show or open anything
            return out;
        }
        List<Specificity.Decision> with;
        List<Specificity.Decision> base;
        try {
            with = decisions(policy.layers(), env);
            base = decisions(without, env);
        } catch (IllegalArgumentException e) {
            throw new SandboxException(e.getMessage());
        }
        paths(base, with, env, out);
        return out;
    }

    private static void commands(Map<String, CommandRule> before, Map<String, CommandRule> after, List<String> out) {
        for (Map.Entry<String, CommandRule> e : after.entrySet()) {
            CommandRule was = before.get(e.getKey());
            CommandRule now = e.getValue();
            if (was == null || was instanceof CommandRule.Unwrapped || was.equals(now)
                    || now instanceof CommandRule.Blocked) {
                continue;
            }
            out.add("commands." + e.getKey() + " " + spelling(now) + " (was " + spelling(was) + ")");
        }
    }

    /** A rule as a config file writes it. */
    private static String spelling(CommandRule r) {
        if (r instanceof CommandRule.Preset p) {
            return p.name();
        }
        if (r instanceof CommandRule.Blocked) {
            return "false";
        }
        if (r instanceof CommandRule.Unwrapped) {
            return "true";
        }
        return ((CommandRule.Script) r).path();
    }

    /** The access decisions a plan makes for these layers: presets, rules, resolution, specificity. */
    static List<Specificity.Decision> decisions(List<PolicyLayer> layers, Environment env) {
        Set<String> active = PresetExpander.activeLeaves(layers);
        Optional<GitLayout> git = Optional.empty();
        if (active.contains("@git") || active.contains("@git-strict")) {
            git = GitLayout.discover(env.workDir());
        }
        List<Rule> rules = new ArrayList<>(PresetExpander.rules(active, env, git));
        for (PolicyLayer l : layers) {
            Origin o = l.origin();
            for (String p : l.ro()) {
                rules.add(Rule.pattern(p, Access.RO, o));
            }
            for (String p : l.rw()) {
                rules.add(Rule.pattern(p, Access.RW, o));
            }
            for (String p : l.exclude()) {
                rules.add(Rule.pattern(p, Access.EXCLUDE, o));
            }
        }
        // no per-path notes: nobody reads them here
        List<Candidate> candidates = new ArrayList<>(
                new Resolver(env, new ArrayList<>(), Set.of(), List.of(), false).resolve(rules));
        if (active.contains("@base")) {
            // the run's own /tmp (see Sandbox.plan): a rule on /tmp shows the host's instead
            candidates.add(new Candidate(Inside.TMP, PRIVATE_TMP, Access.RW, Origin.preset("@base"), true,
                    "a private /tmp"));
        }
        return Specificity.decide(candidates);
    }

    /** Stands for the run's private /tmp, whose host path differs from run to run. */
    private static final Path PRIVATE_TMP = Path.of("/run/agent-sandbox/private-tmp");

    /**
     * Every path where either side decides is compared; between such points both sides
     * are constant (a path inherits from its deepest decided ancestor), so that is all.
     */
    private static void paths(List<Specificity.Decision> base, List<Specificity.Decision> with, Environment env,
            List<String> out) {
        Set<Path> points = new LinkedHashSet<>();
        points.add(Path.of("/"));
        for (Specificity.Decision d : with) {
            points.add(d.path());
        }
        for (Specificity.Decision d : base) {
            points.add(d.path());
        }
        List<Path> sorted = new ArrayList<>(points);
        sorted.sort(Planner.DEPTH_ORDER);
        java.util.Map<Path, Specificity.Decision> withByPath = byPath(with);
        java.util.Map<Path, Specificity.Decision> baseByPath = byPath(base);
        for (Path p : sorted) {
            Candidate now = deepest(withByPath, p);
            Candidate was = deepest(baseByPath, p);
            Access nowAccess = now == null ? Access.RO : now.access();
            Access wasAccess = was == null ? Access.RO : was.access();
            if (nowAccess == Access.EXCLUDE) {
                continue;
            }
            String name = display(p, env);
            if (nowAccess.compareTo(wasAccess) < 0) {
                out.add(nowAccess.word() + " " + name + " (was " + (wasAccess == Access.EXCLUDE ? "hidden" : "ro")
                        + ")");
            } else if (!source(now, p).equals(source(was, p))) {
                out.add(name + " shows " + display(source(now, p), env) + " (was " + display(source(was, p), env)
                        + ")");
            }
        }
    }

    private static Candidate deepest(java.util.Map<Path, Specificity.Decision> decisions, Path p) {
        for (Path up = p; up != null; up = up.getParent()) {
            Specificity.Decision d = decisions.get(up);
            if (d != null) {
                return d.winner();
            }
        }
        return null;
    }

    private static java.util.Map<Path, Specificity.Decision> byPath(List<Specificity.Decision> decisions) {
        java.util.Map<Path, Specificity.Decision> m = new java.util.HashMap<>();
        for (Specificity.Decision d : decisions) {
            m.put(d.path(), d);
        }
        return m;
    }

    /** The host path that {@code p} shows inside. */
    private static Path source(Candidate c, Path p) {
        if (c == null || c.source().equals(c.path())) {
            return p;
        }
        return c.source().resolve(c.path().relativize(p));
    }

    private static String display(Path p, Environment env) {
        if (p.startsWith(PRIVATE_TMP)) {
            return "the private /tmp";
        }
        Path home = env.home();
        if (home != null && p.startsWith(home)) {
            return p.equals(home) ? "~" : "~/" + home.relativize(p);
        }
        return p.toString();
    }
}
