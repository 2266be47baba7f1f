// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.plan.Planner;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.run.Preparation;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command rules turned into mounts. Every place a wrapped command is reachable through
 * PATH (symlinks resolved, duplicates removed; for git also its exec-path copy, whose
 * dashed aliases all point at it) is overlaid read-only by the native launcher. The
 * launcher learns what to do at that path from a symlink under
 * {@code /run/agent-sandbox/cmd/} named after the path (bwrap creates it, no host file
 * needed), and finds the real binary, when the rule needs one, under
 * {@code /run/agent-sandbox/real/}. Both directories are search-only.
 *
 * <p>Inside a sandbox, a path the outer sandbox already wraps keeps the outer rule: the
 * inner one only adds rules for commands the outer left alone.
 */
public final class Wrappers {
    private Wrappers() {}

    /** Where the launcher looks up the rule for the path it was started at. */
    public static final Path COMMANDS = Inside.RUNTIME.resolve("cmd");
    /** Where the real binaries of wrapped commands are bound. */
    static final Path REAL = Inside.RUNTIME.resolve("real");
    /** Where the outer sandbox's runtime is visible in a nested sandbox. */
    public static final Path OUTER = Inside.RUNTIME.resolve("outer");
    /** The directory that holds the git guard's socket. */
    public static final Path GUARD = Inside.RUNTIME.resolve("guard");

    private static final List<String> GIT_ENTRY_POINTS = List.of("git-receive-pack", "git-upload-pack",
            "git-upload-archive");
    private static final Path GIT_EXEC_PATH = Path.of("/usr/lib/git-core");
    /**
     * The command whose locations a run's {@link Preparation} looks up on its second
     * thread while the plan is made: every default policy wraps it, and its lookup (four
     * names in every directory of PATH, and git's own) is the dearest of a plan's wrappers.
     */
    public static final String PREPARED = "git";

    /**
     * One wrapped command.
     *
     * @param name     the command name
     * @param rule     its rule (never {@link CommandRule.Unwrapped})
     * @param origin   the layer that set the rule
     * @param overlaid the host paths the launcher is bound over
     * @param real     the real binary, bound inside when the rule runs it
     * @param realSlot where inside the runtime the real binary appears, relative to it
     * @param script   the wrapper script for a script rule
     * @param home     the sandbox's HOME and XDG_CONFIG_HOME ({@code -} when unset), for the git
     *                 guard that runs inside the sandbox when the launcher cannot reach the socket
     */
    public record Wrapper(String name, CommandRule rule, Origin origin, List<Path> overlaid, Path real, String realSlot,
            Path script, String home, String xdgConfigHome) {

        /** The launcher's instruction, stored as the target of the lookup symlink. */
        String instruction() {
            String kind;
            if (rule instanceof CommandRule.Blocked) {
                kind = "block";
            } else if (rule instanceof CommandRule.Script) {
                kind = "script";
            } else if (rule instanceof CommandRule.Preset) {
                kind = "git";
            } else {
                throw new IllegalStateException("unwrapped " + name);
            }
            String line = kind + "\t" + name + "\t" + (realSlot == null ? "-" : realSlot) + "\t"
                    + (script == null ? "-" : script.toString());
            return needsGuard() ? line + "\t" + home + "\t" + xdgConfigHome : line;
        }

        public boolean needsGuard() {
            return rule instanceof CommandRule.Preset;
        }

        /**
         * Whether the launcher at this command's paths talks to the guard's socket: to ask
         * the git guard, or to report a call of a blocked command for the denial log.
         */
        public boolean needsSocket() {
            return needsGuard() || rule instanceof CommandRule.Blocked;
        }
    }

    /**
     * The names of the commands a plan blocks, read back from the lookup links it makes
     * (the instructions {@link Wrapper#instruction()} writes): the names whose calls the
     * guard takes reports of.
     */
    public static Set<String> blockedNames(List<Mount> mounts) {
        Set<String> names = new LinkedHashSet<>();
        for (Mount m : mounts) {
            if (m.kind() == Mount.Kind.SYMLINK && m.source() != null && COMMANDS.equals(m.target().getParent())) {
                String instruction = m.source().toString();
                if (instruction.startsWith("block\t")) {
                    int end = instruction.indexOf('\t', 6);
                    names.add(end < 0 ? instruction.substring(6) : instruction.substring(6, end));
                }
            }
        }
        return names;
    }

    /** The file name under {@code cmd/} for an overlaid path: {@code /} and {@code %} escaped. */
    static String lookupName(Path overlaid) {
        String s = overlaid.toString();
        StringBuilder sb = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                sb.append("%25");
            } else if (c == '/') {
                sb.append("%2F");
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /**
     * Finds what each rule overlays.
     *
     * @param runtime the runtime directory of the sandbox the plan runs in, when nested:
     *                paths wrapped there keep their outer rule
     */
    public static List<Wrapper> discover(Policy policy, Environment env, Path runtime, List<String> notes) {
        return discover(policy, env, runtime, notes, null);
    }

    /**
     * {@link #discover(Policy, Environment, Path, List)}, with the locations of git that
     * {@code prepared} (made for the same environment; null for none) found meanwhile.
     */
    public static List<Wrapper> discover(Policy policy, Environment env, Path runtime, List<String> notes,
            Preparation prepared) {
        Map<String, CommandRule> rules = new LinkedHashMap<>();
        Map<String, Origin> origins = new LinkedHashMap<>();
        for (PolicyLayer l : policy.layers()) {
            for (Map.Entry<String, CommandRule> e : l.commands().entrySet()) {
                rules.put(e.getKey(), e.getValue());
                origins.put(e.getKey(), l.origin());
            }
        }
        List<Wrapper> out = new ArrayList<>();
        Set<Path> taken = new LinkedHashSet<>();
        for (Map.Entry<String, CommandRule> e : rules.entrySet()) {
            String name = e.getKey();
            CommandRule rule = e.getValue();
            Origin origin = origins.get(name);
            if (rule instanceof CommandRule.Unwrapped) {
                notes.add("command " + name + ": no wrapper (" + origin + ")");
                continue;
            }
            Path script = rule instanceof CommandRule.Script s ? script(name, s, env, origin) : null;
            List<Path> found = prepared != null && name.equals(PREPARED) ? prepared.gitLocations() : locations(name, env);
            if (found.isEmpty()) {
                notes.add("command " + name + ": not found on PATH, nothing to overlay (" + origin + ")");
                continue;
            }
            Path real = found.get(0);
            List<Path> overlaid = new ArrayList<>();
            for (Path p : found) {
                if (runtime != null && Files.isSymbolicLink(runtime.resolve("cmd").resolve(lookupName(p)))) {
                    notes.add("command " + name + ": " + p + " is already wrapped by the outer sandbox, whose rule"
                            + " stays (" + origin + " cannot loosen or replace it)");
                    continue;
                }
                if (taken.add(p)) {
                    overlaid.add(p);
                }
            }
            if (overlaid.isEmpty()) {
                continue;
            }
            if (env.installation() == null) {
                if (origin.layer() == Layer.PRESET) {
                    notes.add("command " + name + ": default rule " + rule.describe()
                            + " not applied (no agent-sandbox launcher installed to wrap it)");
                    continue;
                }
                throw new SandboxException("command rule " + name + "=" + rule.describe() + " (" + origin
                        + ") needs the agent-sandbox launcher, and this sandbox has no installation",
                        "pass an Environment.Installation, or remove the rule");
            }
            long slots = 0; // a loop, not a stream: the first stream of a run costs its start
            for (Wrapper x : out) {
                slots += x.realSlot() != null ? 1 : 0;
            }
            String slot = rule instanceof CommandRule.Blocked ? null
                    : Inside.RUNTIME.relativize(REAL.resolve(Long.toString(slots + 1)).resolve(name)).toString();
            out.add(new Wrapper(name, rule, origin, List.copyOf(overlaid), real, slot, script,
                    guardValue(env, "HOME"), guardValue(env, "XDG_CONFIG_HOME")));
            String why = "command " + name + " = " + rule.describe() + " (" + origin + ")";
            for (Path p : overlaid) {
                notes.add(Planner.pad("ro") + p + "  <- " + why + ": the launcher, read-only, in its place");
            }
            if (slot != null) {
                notes.add(Planner.pad("ro") + Inside.RUNTIME.resolve(slot) + "  <- " + why + ": the real " + real);
            }
        }
        return out;
    }

    /** A variable for the in-sandbox guard: {@code -} when unset or not fit for the rule's line. */
    private static String guardValue(Environment env, String name) {
        String v = env.hostEnv().get(name);
        return v == null || v.isEmpty() || v.equals("-") || v.indexOf('\t') >= 0 || v.length() > 1024 ? "-" : v;
    }

    private static Path script(String name, CommandRule.Script s, Environment env, Origin origin) {
        String text = s.path();
        Path p;
        if (text.equals("~") || text.startsWith("~/")) {
            if (env.home() == null) {
                throw new SandboxException("command rule " + name + "=" + text + " (" + origin
                        + "): ~ used but there is no home directory");
            }
            p = env.home().resolve(text.length() > 2 ? text.substring(2) : "");
        } else {
            p = env.workDir().resolve(text);
        }
        p = p.normalize();
        if (!Files.isRegularFile(p)) {
            throw new SandboxException("command rule " + name + "=" + text + " (" + origin + "): wrapper script "
                    + p + " does not exist", "create it, or change the rule");
        }
        if (!Files.isExecutable(p)) {
            throw new SandboxException("command rule " + name + "=" + text + " (" + origin + "): wrapper script "
                    + p + " is not executable", "chmod +x " + p);
        }
        return p;
    }

    /** Every real file through which {@code name} can be run, first PATH hit first. */
    public static List<Path> locations(String name, Environment env) {
        Set<Path> out = new LinkedHashSet<>();
        List<String> names = new ArrayList<>(List.of(name));
        if (name.equals("git")) {
            names.addAll(GIT_ENTRY_POINTS);
        }
        String path = env.env("PATH").orElse("");
        for (String n : names) {
            for (String dir : path.split(":")) {
                if (dir.startsWith("/")) {
                    addExecutable(out, Path.of(dir, n));
                }
            }
        }
        if (name.equals("git")) {
            addExecutable(out, GIT_EXEC_PATH.resolve("git"));
            for (String n : GIT_ENTRY_POINTS) {
                addExecutable(out, GIT_EXEC_PATH.resolve(n));
            }
        }
        return List.copyOf(out);
    }

    private static void addExecutable(Set<Path> out, Path candidate) {
        // access(2) first: most candidates do not exist, and it makes no attributes for them
        if (!Files.isExecutable(candidate) || !Files.isRegularFile(candidate)) {
            return;
        }
        try {
            Path real = candidate.toRealPath();
            if (!real.startsWith(Inside.RUNTIME)) {
                out.add(real);
            }
        } catch (IOException e) {
            // vanished or unreadable: nothing to overlay there
        }
    }

    /** The runtime part of the wrappers, after the fresh {@code /run/agent-sandbox}. */
    public static List<Mount> runtimeMounts(List<Wrapper> wrappers, Path guardDir) {
        List<Mount> a = new ArrayList<>();
        if (wrappers.isEmpty()) {
            return a;
        }
        Origin origin = new Origin(Layer.PRESET, "command wrappers");
        a.add(Mount.of(Mount.Kind.SEARCH_ONLY_DIR, null, COMMANDS, Access.RO, origin));
        boolean anyReal = false;
        for (Wrapper w : wrappers) {
            anyReal |= w.realSlot() != null;
        }
        if (anyReal) {
            a.add(Mount.of(Mount.Kind.SEARCH_ONLY_DIR, null, REAL, Access.RO, origin));
        }
        for (Wrapper w : wrappers) {
            Origin why = new Origin(w.origin().layer(), "command " + w.name() + " = " + w.rule().describe());
            for (Path p : w.overlaid()) {
                a.add(Mount.of(Mount.Kind.SYMLINK, Path.of(w.instruction()), COMMANDS.resolve(lookupName(p)),
                        Access.RO, why));
            }
            if (w.realSlot() != null) {
                Path slot = Inside.RUNTIME.resolve(w.realSlot());
                a.add(Mount.of(Mount.Kind.SEARCH_ONLY_DIR, null, slot.getParent(), Access.RO, why));
                a.add(Mount.of(Mount.Kind.READ_ONLY, w.real(), slot, Access.RO, why));
            }
        }
        boolean guard = false;
        for (Wrapper w : wrappers) {
            guard |= w.needsSocket();
        }
        if (guardDir != null && guard) {
            a.add(Mount.of(Mount.Kind.READ_ONLY, guardDir, GUARD, Access.RO, new Origin(Layer.PRESET, "git guard")));
        }
        return a;
    }

    /** The overlays themselves: the launcher bound read-only over every wrapped path. */
    public static List<Mount> overlayMounts(List<Wrapper> wrappers, Path launcher) {
        List<Mount> a = new ArrayList<>();
        for (Wrapper w : wrappers) {
            Origin why = new Origin(w.origin().layer(), "command " + w.name() + " = " + w.rule().describe());
            for (Path p : w.overlaid()) {
                a.add(Mount.of(Mount.Kind.READ_ONLY, launcher, p, Access.RO, why));
            }
        }
        return a;
    }
}
