// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.rules.Access;
import agentsandbox.core.Environment;
import agentsandbox.core.plan.Explanation;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;
import agentsandbox.core.text.ShellQuote;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code agent-sandbox explain PATH...}: what a sandbox shows at each path, the rule that
 * decided it, and the flag or config entry that would change it, one block per path:
 *
 * <pre>
 * PATH: LEVEL (what is there)          LEVEL: read-write, read-only, hidden, replaced
 *   path:   a symlink's target, or that the path does not exist        (when so)
 *   tool:   for a missing cache or agent directory, which runs create it (when so)
 *   view:   whose content is shown there                               (when not the host's own)
 *   outer:  what the sandbox this one runs in makes of it             (nested, when stricter)
 *   rule:   the deciding rule and its layer
 *   beats:  a rule for the same path that lost, and why               (one line each)
 *   change: the flag for one run, or the config entry for every run
 *   warning: what showing a path the built-in defaults hide gives away    (when so)
 * </pre>
 *
 * Blocks are separated by a blank line. The answer comes from an {@link Explanation}:
 * outside, of the plan a run here would make; inside, of the record the sandbox's run
 * left at {@link Inside#POLICY}, which is only displayed, never trusted for anything.
 */
final class Explain {
    /** The record of the sandbox the current one runs in (see {@link Inside#POLICY}). */
    static final Path OUTER_POLICY = Inside.RUNTIME.resolve("outer").resolve("policy");

    private static final String PAD = "  ";

    private final Explanation record;
    private final Explanation outer;
    private final boolean inside;
    private final Environment env;

    /**
     * @param record the policy to answer for
     * @param outer  inside a nested sandbox, the outer sandbox's record; else null
     * @param inside whether this runs inside the sandbox the record describes
     * @param env    home and working directory, to resolve the paths as given
     */
    Explain(Explanation record, Explanation outer, boolean inside, Environment env) {
        this.record = record;
        this.outer = outer;
        this.inside = inside;
        this.env = env;
    }

    /** Reads a sandbox's record. */
    static Explanation read(Path file) {
        try {
            if (Files.size(file) > Explanation.MAX_BYTES) {
                throw new SandboxException("the sandbox's policy record " + file + " is larger than "
                        + Explanation.MAX_BYTES + " bytes");
            }
            return Explanation.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException | IllegalArgumentException e) {
            throw new SandboxException("cannot read the sandbox's policy record " + file + ": "
                    + (e instanceof java.nio.file.NoSuchFileException ? "there is none" : e.getMessage()),
                    "this sandbox was started by an agent-sandbox without explain; run explain outside it");
        }
    }

    /** Checks every path's syntax first, so that a bad one prints nothing else. */
    static void validate(List<String> paths, Environment env) {
        for (String p : paths) {
            absolute(p, env);
        }
    }

    /** A path as given, made absolute: {@code ~} is the home, relative is to the working directory. */
    static Path absolute(String arg, Environment env) {
        String p = arg;
        if (p.isEmpty()) {
            throw new UsageException("explain: an empty path");
        }
        if (p.equals("~") || p.startsWith("~/")) {
            if (env.home() == null) {
                throw new UsageException("explain " + arg + ": there is no home directory");
            }
            p = env.home() + p.substring(1);
        } else if (p.startsWith("~")) {
            throw new UsageException("explain " + arg + ": only ~ and ~/... are understood, not ~user",
                    "write the path in full");
        }
        try {
            return env.workDir().resolve(p).normalize();
        } catch (InvalidPathException e) {
            throw new UsageException("explain " + SandboxException.printable(arg) + ": not a path ("
                    + e.getReason() + ")");
        }
    }

    /** The blocks for these paths. */
    String answer(List<String> paths) {
        return answer(paths, false);
    }

    /**
     * The blocks for these paths, as text or, with {@code json}, as {@code {"version": 1,
     * "paths": [{"path", "level" (read-write, read-only, hidden or replaced), "detail" (what
     * the parentheses say, or ""), "lines": [{"key", "text"}]}]}} on one line: the same
     * content, keyed as the text's lines are (path, tool, view, outer, rule, beats, change,
     * warning).
     */
    String answer(List<String> paths, boolean json) {
        StringBuilder sb = new StringBuilder();
        for (String p : paths) {
            if (json) {
                sb.append(sb.isEmpty() ? "{\"version\":" + Json.VERSION + ",\"paths\":[" : ",");
            } else if (!sb.isEmpty()) {
                sb.append('\n');
            }
            block(p, sb, json);
        }
        return json ? sb.append("]}\n").toString() : sb.toString();
    }

    private void block(String arg, StringBuilder sb, boolean json) {
        Path lexical = absolute(arg, env);
        boolean missing = false;
        Path real = realPath(lexical);
        if (real == null) {
            missing = true;
            Path up = lexical.getParent();
            while (up != null && realPath(up) == null) {
                up = up.getParent();
            }
            real = up == null ? lexical : realPath(up).resolve(up.relativize(lexical).toString());
        }
        Explanation.Entry d = record.decide(real);
        boolean at = real.equals(d.path()) && !missing;
        List<String[]> lines = new ArrayList<>();
        if (!real.equals(lexical)) {
            lines.add(line("path", "a symlink to " + shown(real) + ": a rule on a symlink applies to its target"));
        }
        if (missing && isPathRule(d)) {
            lines.add(line("path", "does not exist: rules skip missing paths (one naming it does nothing until it"
                    + " exists when a run starts); made during a run, it gets what " + shown(d.path()) + " gets"));
        }
        String creator = missing ? Sandbox.whoCreates(record.home(), lexical) : null;
        if (creator != null) {
            lines.add(line("tool", creator));
        }
        String view = view(d, real, missing);
        if (view != null) {
            lines.add(line("view", view));
        }
        String level = level(d, at);
        if (outer != null) {
            Explanation.Entry o = outer.decide(real);
            if (rank(o) > rank(d)) {
                level = level(o, real.equals(o.path()) && !missing);
                lines.add(line("outer", "the sandbox this one runs in makes it so: " + rule(o, outer)
                        + "; an inner sandbox cannot loosen that"));
            }
        }
        lines.add(line("rule", rule(d, record)));
        List<String> beaten = new ArrayList<>();
        for (Explanation.Why lost : d.overridden()) {
            String text = rule(lost, record);
            if (!text.equals(rule(d.why(), record)) && !beaten.contains(text)) {
                beaten.add(text);
                lines.add(line("beats", text + ": " + reason(d.why(), lost)));
            }
        }
        String change = change(d, real, at, missing);
        lines.add(line("change", inside ? "for the next run, outside this sandbox: " + change : change));
        String warning = warning(d, real);
        if (warning != null) {
            lines.add(line("warning", warning));
        }
        if (json) {
            int paren = level.indexOf(" (");
            sb.append("{\"path\":").append(Json.quote(arg))
                    .append(",\"level\":").append(Json.quote(paren < 0 ? level : level.substring(0, paren)))
                    .append(",\"detail\":").append(Json.quote(paren < 0 ? "" : level.substring(paren + 2,
                            level.length() - (level.endsWith(")") ? 1 : 0))))
                    .append(",\"lines\":[");
            for (int i = 0; i < lines.size(); i++) {
                sb.append(i == 0 ? "" : ",").append("{\"key\":").append(Json.quote(lines.get(i)[0]))
                        .append(",\"text\":").append(Json.quote(lines.get(i)[1])).append('}');
            }
            sb.append("]}");
            return;
        }
        sb.append(SandboxException.printable(arg)).append(": ").append(level).append('\n');
        for (String[] l : lines) {
            String k = l[0] + ":";
            sb.append(PAD + k + " ".repeat(Math.max(1, 8 - k.length())) + SandboxException.printable(l[1])).append('\n');
        }
    }

    private static String[] line(String key, String text) {
        return new String[] {key, text};
    }

    /** The symlink-resolved path, or null when it does not exist (or is a dangling link). */
    private static Path realPath(Path p) {
        return Sandbox.realPath(p);
    }

    /** Whether the host's content is there, by a rule on a path (not something of the sandbox's own). */
    private static boolean isPathRule(Explanation.Entry d) {
        return switch (d.shows()) {
            case ROOT, HOST, VIEW, EMPTY_DIR, UNREADABLE_FILE -> true;
            default -> false;
        };
    }

    /** Strictness, for nested sandboxes: hidden above read-only above read-write. */
    private static int rank(Explanation.Entry e) {
        return e.access().ordinal();
    }

    // ------------------------------------------------------------------ the first line

    private String level(Explanation.Entry d, boolean at) {
        return switch (d.shows()) {
            case ROOT, HOST, VIEW -> word(d.access());
            case PRIVATE_TMP -> "replaced (the run's private temp dir, read-write)";
            case EMPTY_DIR -> at ? "hidden (an empty directory inside)"
                    : "hidden (" + shown(d.path()) + " is hidden, an empty directory inside, so this is not there)";
            case UNREADABLE_FILE -> "hidden (the file is there, but reading it fails: permission denied)";
            case OWN_STATE -> "replaced (an empty file system of the sandbox's own, writable)";
            case SOCKET -> "hidden (a host session socket, or a directory of them: out of reach)";
            case DOCKER -> d.access() == Access.RW ? "read-write (the Docker socket, bound in: the Docker daemon is root on"
                    + " the host, so this sandbox protects nothing from a command that uses it; a rootless Docker"
                    + " or Podman socket through DOCKER_HOST has only your rights)"
                    : "replaced (/dev/null: the Docker socket is out of reach)";
            case LAUNCHER -> "replaced (agent-sandbox's launcher, which applies the " + d.why().origin().source()
                    + " rule)";
            case FRESH -> "replaced (a fresh, empty /run of the sandbox's own, writable)";
            case DEVICES -> "replaced (the sandbox's own /dev: null, zero, random, tty and a few more)";
            case PROCESSES -> "replaced (the sandbox's own /proc: its own processes only)";
            case RUNTIME -> "replaced (the sandbox's runtime: agent-sandbox's own files, read-only)";
        };
    }

    private static String word(Access a) {
        return switch (a) {
            case RW -> "read-write";
            case RO -> "read-only";
            case EXCLUDE -> "hidden";
        };
    }

    private String view(Explanation.Entry d, Path real, boolean missing) {
        return switch (d.shows()) {
            case VIEW -> "the host's " + shown(d.view().resolve(d.path().relativize(real).toString()))
                    + " is shown here; a rule holds on every view of a path";
            case PRIVATE_TMP -> "/tmp is the run's private temp dir, not the host's /tmp: empty when the run starts,"
                    + " removed when it ends" + (!inside && !missing && !real.equals(d.path())
                            ? "; the host's " + real + " is not visible inside" : "");
            case OWN_STATE -> "agent-sandbox's own state (every run's directory, the trust store) is not visible in"
                    + " any sandbox; what is written there goes with the sandbox";
            case FRESH -> "the host's /run is not visible inside";
            default -> null;
        };
    }

    // ------------------------------------------------------------------ the deciding rule

    private String rule(Explanation.Entry d, Explanation in) {
        return switch (d.shows()) {
            case ROOT -> "the host's root is read-only in every sandbox (built-in)";
            case PRIVATE_TMP -> "each run gets a private /tmp (preset @base)";
            case OWN_STATE -> "agent-sandbox's own state is replaced in every sandbox (built-in)";
            case SOCKET -> "host session sockets are out of reach in every sandbox (built-in)";
            case DOCKER -> d.access() == Access.RW ? "Docker is on (--docker, or \"docker\": true in a config file)"
                    : "Docker is off by default (built-in)";
            case LAUNCHER -> d.why().origin().source() + " (" + layerName(d.why().origin().layer()) + ")";
            case FRESH, DEVICES, PROCESSES, RUNTIME -> "every sandbox has its own (built-in)";
            default -> rule(d.why(), in);
        };
    }

    private String rule(Explanation.Why w, Explanation in) {
        Layer layer = w.origin().layer();
        String source = w.origin().source();
        String glob = w.exact() ? "" : " (a glob)";
        return switch (layer) {
            case FLAG -> source.equals("flags") ? flag(w.access(), w.written()) + glob + " (flag)"
                    : source.equals("config protection")
                            ? "config files are read-only in every sandbox (built-in)"
                            : source + " (flag)";
            case GLOBAL, PROJECT -> configEntry(w.access(), w.written()) + glob + " in " + shown(Path.of(source))
                    + " (" + configName(in, layer, source) + ")";
            case PRESET -> source.startsWith("@")
                    ? w.access().word() + " " + shown(w.written()) + glob + " (preset " + source + ")"
                    : source.equals("dns") ? "the directory of /etc/resolv.conf's target, read-only (built-in)"
                    : source + " (built-in)";
        };
    }

    private static String layerName(Layer l) {
        return switch (l) {
            case PRESET -> "built-in default";
            case GLOBAL -> "global config";
            case PROJECT -> "project config";
            case FLAG -> "flag";
        };
    }

    private static String configName(Explanation in, Layer layer, String file) {
        if (layer == Layer.GLOBAL) {
            return "global config";
        }
        Explanation.Config c = in.config(Layer.PROJECT);
        if (c == null || !c.file().toString().equals(file) || c.status().equals("loaded")) {
            return "project config";
        }
        return c.status().equals("given with -c") ? "config given with -c" : "project config, " + c.status();
    }

    private static String reason(Explanation.Why winner, Explanation.Why lost) {
        if (winner.exact() != lost.exact()) {
            return "an exact path beats a glob";
        }
        if (winner.origin().layer() != lost.origin().layer()) {
            return "the later layer wins (flags, then project, then global config, then presets)";
        }
        return "within one layer the stricter wins";
    }

    // ------------------------------------------------------------------ the fix

    private String change(Explanation.Entry d, Path real, boolean at, boolean missing) {
        Explanation.Why w = d.why();
        switch (d.shows()) {
            case PRIVATE_TMP -> {
                return "--share-tmp, or \"shareTmp\": true in " + globalFile()
                        + ", shows your temp dir ($TMPDIR) at /tmp instead";
            }
            case OWN_STATE, FRESH, DEVICES, PROCESSES, RUNTIME -> {
                return "none: every sandbox has this";
            }
            case SOCKET -> {
                return "none, except --ssh-agent and --gpg-agent, which let a sandbox use those agents' sockets";
            }
            case DOCKER -> {
                return d.access() == Access.RW ? "--docker=false" : "--docker, or \"docker\": true in " + globalFile()
                        + ", binds the Docker socket in (root on the host: prefer a rootless Docker or Podman"
                        + " socket through DOCKER_HOST)";
            }
            case LAUNCHER -> {
                String s = w.origin().source();
                String name = s.startsWith("command ") && s.indexOf(" = ") > 8 ? s.substring(8, s.indexOf(" = "))
                        : "NAME";
                return "--cmd " + name + "=true, or \"commands\": {\"" + name + "\": true} in " + globalFile()
                        + ", runs " + name + " unwrapped";
            }
            default -> {
                // a path rule: below
            }
        }
        Layer layer = w.origin().layer();
        String source = w.origin().source();
        boolean flagRepeatsARule = false;
        for (Explanation.Why lost : d.overridden()) {
            flagRepeatsARule |= lost.access() == w.access();
        }
        if (at && layer == Layer.FLAG && !(source.equals("flags") && flagRepeatsARule)) {
            if (source.equals("config protection")) {
                return "none: the config files stay read-only in every sandbox; edit it outside any sandbox";
            }
            return "leave out " + (source.equals("flags") ? flag(w.access(), w.written()) : source);
        }
        Access want = d.access() == Access.RO ? Access.RW : Access.RO;
        String what = d.access() == Access.RO ? "to make it writable: " : d.access() == Access.RW
                ? "to make it read-only: " : "to show it (read-only): ";
        String pattern = pattern(real, false);
        String flagPattern = pattern(real, true);
        String config;
        boolean loosens = want.compareTo(d.access()) < 0;
        if (at && w.exact() && loosens && (layer == Layer.GLOBAL || layer == Layer.PROJECT)) {
            config = "remove " + json(w.written()) + " from \"" + w.access().word() + "\" in " + shown(Path.of(source));
        } else if (at && layer == Layer.PROJECT) {
            config = configEntry(want, pattern(real, true)) + " in " + shown(Path.of(source));
        } else {
            config = configEntry(want, pattern) + " in " + globalFile();
        }
        String fix = what + flag(want, flagPattern) + " (one run), or " + (config.endsWith(")")
                ? config.substring(0, config.length() - 1) + "; every run)" : config + " (every run)");
        return missing ? "create it first, then " + fix : fix;
    }

    /**
     * What a user gives away by showing a path the built-in defaults hide (~/.ssh, ~/.gnupg,
     * ~/.aws, the tools' credential files): they are hidden because they hold keys and tokens.
     * Null for anything else.
     */
    private String warning(Explanation.Entry d, Path real) {
        if (d.access() != Access.EXCLUDE || d.why().origin().layer() != Layer.PRESET || !isPathRule(d)) {
            return null;
        }
        String p = shown(real);
        String alternative = p.equals("~/.ssh") || p.startsWith("~/.ssh/")
                ? "; to use your ssh keys, --ssh-agent lets the sandbox sign without reading them"
                : p.equals("~/.gnupg") || p.startsWith("~/.gnupg/")
                ? "; to sign or decrypt, --gpg-agent lets the sandbox use your keys without reading them" : "";
        return "it is hidden because it holds secrets (keys, tokens): shown, every command in the sandbox, the"
                + " agent included, can read it and send it anywhere" + alternative;
    }

    /** The global config file, or where to create one. */
    private String globalFile() {
        Explanation.Config g = record.config(Layer.GLOBAL);
        if (g == null) {
            return "the global config";
        }
        return shown(g.file()) + (g.status().equals("not found") ? " (a new file)" : "");
    }

    /** A path as a rule writes it: in the home as {@code ~/...}, glob characters escaped. */
    private String pattern(Path p, boolean relativeToWorkDir) {
        String s = relativeToWorkDir && p.startsWith(record.workDir()) && !p.equals(record.workDir())
                ? record.workDir().relativize(p).toString() : shown(p);
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }

    private static String flag(Access a, String value) {
        boolean home = value.startsWith("~/") && ShellQuote.quote(value.substring(2)).equals(value.substring(2));
        return "--" + a.word() + " " + (home || value.equals("~") ? value : ShellQuote.quote(value));
    }

    private static String configEntry(Access a, String pattern) {
        return "\"" + a.word() + "\": [" + json(pattern) + "]";
    }

    private static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** A path for people: {@code ~/...} in the home. */
    private String shown(Path p) {
        Path home = record.home();
        if (home != null && p.startsWith(home)) {
            return p.equals(home) ? "~" : "~/" + home.relativize(p);
        }
        return p.toString();
    }

    private String shown(String written) {
        return written.startsWith("/") ? shown(Path.of(written)) : written;
    }
}
