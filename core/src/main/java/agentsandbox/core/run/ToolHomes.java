package agentsandbox.core.run;

import agentsandbox.core.rules.Access;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Rule;
import agentsandbox.core.aftercheck.StateWatch;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What {@code @caches} and {@code @agents} make writable in the home, tool by tool, and
 * which of those directories a run creates when they are missing.
 *
 * <p>A rule can only open up a path that exists: the home is read-only inside, so a
 * directory missing when the sandbox starts could never come into being there, and a
 * tool started on a fresh home failed. A run therefore creates, on the host, owner-only
 * (0700), the missing directories of the tools it starts, known by their command names:
 * the command itself and the words of a shell's {@code -c} script (the way agents hand
 * their commands to agent-sandbox). A coding agent or an interactive shell runs any tool,
 * so when one is started the directories of every tool installed on the host (found on
 * {@code PATH}, or a {@code mvnw}/{@code gradlew} in the working directory) are created
 * too. A user who never uses a tool gets none of its directories. {@code ~/.cache}, the
 * XDG cache that nearly every tool writes to, is created for any command.
 *
 * <p>The parts of a granted directory that the host runs or obeys later (installed
 * programs, build-tool init scripts and settings) stay read-only, and credential files
 * in them are hidden: a sandbox fills caches, it does not plant programs.
 */
public final class ToolHomes {
    private ToolHomes() {}

    /**
     * One tool's share of a preset.
     *
     * @param name     the tool, for messages
     * @param preset   {@code @caches} or {@code @agents}
     * @param agent    a coding agent, which runs any other tool
     * @param commands the command names that start it
     * @param grants   home-relative paths made writable
     * @param creates  home-relative directories created when missing and the tool is started
     * @param readOnly home-relative paths inside a grant that stay read-only
     * @param hidden   home-relative paths inside a grant that are hidden
     */
    record Tool(String name, String preset, boolean agent, List<String> commands, List<String> grants,
            List<String> creates, List<String> readOnly, List<String> hidden) {}

    /** Claude Code's user config, which it saves by a temp file and a rename beside it. */
    public static final String CLAUDE_CONFIG = ".claude.json";
    /** Where {@link #CLAUDE_CONFIG} lives when a run has moved it, so that it can be saved from inside. */
    static final String CLAUDE_CONFIG_MOVED = ".claude/.claude.json";

    static final List<Tool> TOOLS = List.of(
            cache("any tool (XDG cache)", List.of("pip", "pip3", "python", "python3", "deno", "pre-commit"),
                    List.of(".cache"), List.of(".cache"), List.of(), List.of()),
            cache("Bun", List.of("bun", "bunx"), List.of(".bun"), List.of(".bun", ".cache"),
                    List.of(".bun/bin/", ".bun/install/global/"), List.of()),
            cache("Go", List.of("go", "gofmt", "gopls"), List.of("go"), List.of("go", ".cache"),
                    List.of("go/bin/"), List.of()),
            cache("npm", List.of("npm", "npx", "node", "corepack"), List.of(".npm"), List.of(".npm", ".cache"),
                    List.of(), List.of()),
            cache("Cargo", List.of("cargo", "rustc", "rustdoc", "cargo-clippy", "rustfmt"), List.of(".cargo"),
                    List.of(".cargo", ".cache"),
                    List.of(".cargo/bin/", ".cargo/config.toml", ".cargo/config", ".cargo/env"),
                    List.of(".cargo/credentials.toml", ".cargo/credentials")),
            cache("rustup", List.of("rustup"), List.of(".rustup"), List.of(".rustup", ".cargo", ".cache"),
                    List.of(".rustup/toolchains/", ".rustup/settings.toml", ".rustup/update-hashes/"), List.of()),
            cache("Maven", List.of("mvn", "mvnw", "mvnd"), List.of(".m2"), List.of(".m2", ".cache"),
                    List.of(".m2/settings.xml", ".m2/toolchains.xml"),
                    List.of(".m2/settings-security.xml")),
            cache("Gradle", List.of("gradle", "gradlew"), List.of(".gradle"), List.of(".gradle", ".cache"),
                    List.of(".gradle/init.d/", ".gradle/init.gradle", ".gradle/init.gradle.kts",
                            ".gradle/gradle.properties"), List.of()),
            cache("sbt and Ivy", List.of("sbt", "ant"), List.of(".ivy2", ".sbt"), List.of(".ivy2", ".sbt", ".cache"),
                    List.of(".sbt/1.0/plugins/", ".sbt/1.0/global.sbt", ".sbt/0.13/plugins/", ".ivy2/ivysettings.xml"),
                    List.of(".sbt/credentials", ".ivy2/.credentials")),
            cache("NuGet (.NET)", List.of("dotnet", "nuget"), List.of(".nuget/packages"), List.of(".nuget/packages"),
                    List.of(), List.of()),
            cache("pnpm", List.of("pnpm", "pnpx"), List.of(".local/share/pnpm/store"),
                    List.of(".local/share/pnpm/store", ".cache"), List.of(), List.of()),
            cache("Yarn", List.of("yarn", "yarnpkg"), List.of(".yarn/berry"), List.of(".yarn/berry", ".cache"),
                    List.of(), List.of()),
            cache("uv", List.of("uv", "uvx"), List.of(".local/share/uv"), List.of(".local/share/uv", ".cache"),
                    List.of(".local/share/uv/python/", ".local/share/uv/tools/"), List.of()),
            new Tool("Claude Code", "@agents", true, List.of("claude"),
                    List.of(".claude", CLAUDE_CONFIG, ".local/state/claude", ".local/share/claude"),
                    List.of(".claude", ".local/state/claude", ".local/share/claude", ".cache"),
                    // the native installer's binaries, which ~/.local/bin/claude outside runs
                    List.of(".local/share/claude/versions/"), List.of()),
            agent("Codex", List.of("codex"), List.of(".codex"), List.of(".codex")),
            agent("Gemini CLI", List.of("gemini"), List.of(".gemini"), List.of(".gemini")),
            agent("opencode", List.of("opencode"),
                    List.of(".config/opencode", ".local/share/opencode", ".local/state/opencode"),
                    List.of(".config/opencode", ".local/share/opencode", ".local/state/opencode", ".cache")),
            agent("pi", List.of("pi"), List.of(".pi"), List.of(".pi")),
            agent("Qwen Code", List.of("qwen"), List.of(".qwen"), List.of(".qwen")),
            agent("GitHub Copilot CLI", List.of("copilot"), List.of(".copilot"), List.of(".copilot", ".cache")),
            agent("Amp", List.of("amp"), List.of(".config/amp", ".local/share/amp"),
                    List.of(".config/amp", ".local/share/amp", ".cache")),
            agent("Cline", List.of("cline"), List.of(".cline"), List.of(".cline")),
            agent("Kilo Code", List.of("kilo"),
                    List.of(".config/kilo", ".local/share/kilo", ".local/state/kilo", ".local/state/kilo-sandbox-policy"),
                    List.of(".config/kilo", ".local/share/kilo", ".local/state/kilo", ".local/state/kilo-sandbox-policy",
                            ".cache")),
            agent("Auggie", List.of("auggie"), List.of(".augment"), List.of(".augment")),
            agent("Crush", List.of("crush"), List.of(".config/crush", ".local/share/crush"),
                    List.of(".config/crush", ".local/share/crush")));

    /** Commands that run whatever they are asked to, like an agent: every installed tool's directories. */
    private static final Set<String> SHELLS = Set.of("sh", "bash", "dash", "zsh", "fish", "ksh", "mksh");

    private static Tool cache(String name, List<String> commands, List<String> grants, List<String> creates,
            List<String> readOnly, List<String> hidden) {
        return new Tool(name, "@caches", false, commands, grants, creates, readOnly, hidden);
    }

    private static Tool agent(String name, List<String> commands, List<String> grants, List<String> creates) {
        return new Tool(name, "@agents", true, commands, grants, creates, List.of(), List.of());
    }

    /** The rules of one preset, home-relative; writable grants first, then the carve-outs below them. */
    public static List<Rule> rules(String preset, Path home, Origin origin) {
        List<Rule> out = new ArrayList<>();
        if (home == null) {
            return out;
        }
        Set<String> seen = new LinkedHashSet<>();
        for (Tool t : TOOLS) {
            if (t.preset().equals(preset)) {
                for (String g : t.grants()) {
                    if (seen.add(g)) {
                        out.add(Rule.literal(home.resolve(g), Access.RW, origin));
                    }
                }
            }
        }
        for (Tool t : TOOLS) {
            if (t.preset().equals(preset)) {
                for (String p : t.readOnly()) {
                    out.add(Rule.literal(home.resolve(strip(p)), Access.RO, origin));
                }
                for (String p : t.hidden()) {
                    out.add(Rule.literal(home.resolve(p), Access.EXCLUDE, origin));
                }
            }
        }
        return out;
    }

    /**
     * The tools the command starts: its program, the words of a shell's {@code -c}
     * script, and, for an agent or an interactive shell, every tool installed on the host.
     */
    static List<Tool> started(List<String> command, Environment env, List<String> notes) {
        Set<String> words = new LinkedHashSet<>();
        boolean runsAnything = commandWords(command, words);
        List<Tool> out = new ArrayList<>();
        for (Tool t : TOOLS) {
            for (String c : t.commands()) {
                if (words.contains(c)) {
                    out.add(t);
                    runsAnything |= t.agent();
                    break;
                }
            }
        }
        if (runsAnything) {
            for (Tool t : TOOLS) {
                if (!out.contains(t) && installed(t, env)) {
                    out.add(t);
                }
            }
            notes.add("tools: " + (out.isEmpty() ? "none known" : names(out))
                    + " (started, or installed on the host and the command runs any tool)");
        } else if (!out.isEmpty()) {
            notes.add("tools: " + names(out) + " (started)");
        }
        return out;
    }

    /** Words that run the word after them as a command. */
    private static final Set<String> PREFIXES = Set.of("env", "exec", "command", "time", "nohup", "nice", "ionice",
            "timeout", "xargs", "stdbuf", "then", "do", "else", "if", "while", "until", "!", "{", "sudo", "npx", "uvx",
            "bunx", "pnpx");

    /**
     * Collects the program names in command position: the command's own, those after a
     * prefix such as {@code env} or {@code timeout 5}, and those of a shell's
     * {@code -c} script (after {@code ;}, {@code &&}, {@code |}, {@code (} …).
     *
     * @return true for a command that runs anything it is asked to: an interactive shell
     */
    private static boolean commandWords(List<String> argv, Set<String> words) {
        boolean atCommand = true;
        for (int i = 0; i < argv.size(); i++) {
            String w = argv.get(i);
            if (!atCommand) {
                return false;
            }
            if (w.indexOf('=') > 0 && !w.startsWith("-")) {
                continue; // VAR=value before the program
            }
            if (w.startsWith("-") || isDuration(w)) {
                continue; // a prefix's options and durations
            }
            String name = baseName(w);
            words.add(name);
            if (SHELLS.contains(name)) {
                for (int j = i + 1; j < argv.size(); j++) {
                    String o = argv.get(j);
                    if (!o.startsWith("-") || o.startsWith("--")) {
                        return false; // a script file: not known
                    }
                    if (o.indexOf('c') > 0 && j + 1 < argv.size()) {
                        scriptWords(argv.get(j + 1), words);
                        return false;
                    }
                }
                return true;
            }
            atCommand = PREFIXES.contains(name);
        }
        return false;
    }

    /**
     * A duration as {@code timeout} and {@code sleep} take it ({@code [0-9.]+[smhd]?}).
     */
    static boolean isDuration(String w) {
        int n = w.length();
        if (n > 1 && "smhd".indexOf(w.charAt(n - 1)) >= 0) {
            n--;
        }
        if (n == 0) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = w.charAt(i);
            if ((c < '0' || c > '9') && c != '.') {
                return false;
            }
        }
        return true;
    }

    /**
     * A shell script's words and operators as {@link #scriptWords} reads them: split at
     * ASCII whitespace (dropped), after {@code ; & | ( ` {} and before {@code ; & | ) ` }}
     * (so {@code ;}, {@code &}, {@code |} and {@code `} stand alone), a line break read as
     * {@code ;}; empty pieces left out.
     */
    static List<String> scriptTokens(String script) {
        List<String> out = new ArrayList<>();
        int start = 0;
        int n = script.length();
        for (int i = 0; i < n; i++) {
            char c = script.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r') {
                addToken(out, script, start, i);
                if (c == '\n') {
                    out.add(";");
                }
                start = i + 1;
            } else if (c == ';' || c == '&' || c == '|' || c == '`') {
                addToken(out, script, start, i);
                out.add(String.valueOf(c));
                start = i + 1;
            } else if (c == ')' || c == '}') {
                addToken(out, script, start, i);
                start = i;
            } else if (c == '(' || c == '{') {
                addToken(out, script, start, i + 1);
                start = i + 1;
            }
        }
        addToken(out, script, start, n);
        return out;
    }

    private static void addToken(List<String> out, String script, int from, int to) {
        if (from < to) {
            out.add(script.substring(from, to));
        }
    }

    /** {@code t} without the quotes it starts and ends with. */
    private static String unquoted(String t) {
        int from = 0;
        int to = t.length();
        while (from < to && (t.charAt(from) == '"' || t.charAt(from) == '\'')) {
            from++;
        }
        while (to > from && (t.charAt(to - 1) == '"' || t.charAt(to - 1) == '\'')) {
            to--;
        }
        return t.substring(from, to);
    }

    private static void scriptWords(String script, Set<String> words) {
        boolean atCommand = true;
        for (String token : scriptTokens(script)) {
            String t = token.strip();
            if (t.isEmpty()) {
                continue;
            }
            if (t.equals(";") || t.equals("&") || t.equals("|") || t.equals("(") || t.equals("`") || t.equals("{")
                    || t.endsWith("$(") || t.equals("$")) {
                atCommand = true;
                continue;
            }
            if (!atCommand) {
                continue;
            }
            if (t.indexOf('=') > 0 || t.startsWith("-") || isDuration(t)) {
                continue;
            }
            String name = baseName(unquoted(t));
            words.add(name);
            atCommand = PREFIXES.contains(name);
        }
    }

    private static String names(List<Tool> tools) {
        List<String> n = new ArrayList<>();
        for (Tool t : tools) {
            n.add(t.name());
        }
        return String.join(", ", n);
    }

    private static boolean installed(Tool t, Environment env) {
        for (String c : t.commands()) {
            if ((c.equals("mvnw") || c.equals("gradlew")) && Files.isRegularFile(env.workDir().resolve(c))) {
                return true;
            }
        }
        String path = env.hostEnv().getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            if (dir.isEmpty() || !dir.startsWith("/")) {
                continue;
            }
            for (String c : t.commands()) {
                Path p = Path.of(dir, c);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String baseName(String word) {
        int slash = word.lastIndexOf('/');
        return (slash < 0 ? word : word.substring(slash + 1)).toLowerCase(Locale.ROOT);
    }

    /**
     * Where Claude Code inside should keep its config: {@code ~/.claude} once the config
     * there is what {@code ~/.claude.json} points to. Claude Code then saves it through a
     * lock directory and a temp file in that writable directory, so that two sandboxes
     * saving at once take turns; outside, the symlink leads to the same file. Null when
     * the user chose a config directory, or the config is anywhere else.
     */
    public static Path claudeConfigDir(Set<String> active, Environment env, Setup setup) {
        if (env.home() == null || !active.contains("@agents") || env.hostEnv().containsKey("CLAUDE_CONFIG_DIR")) {
            return null;
        }
        Path config = env.home().resolve(CLAUDE_CONFIG);
        boolean linked = setup.claude() != ClaudeStep.NONE;
        if (!linked && Files.isSymbolicLink(config)) {
            try {
                linked = Files.readSymbolicLink(config).equals(Path.of(CLAUDE_CONFIG_MOVED));
            } catch (IOException e) {
                linked = false;
            }
        }
        return linked ? env.home().resolve(".claude") : null;
    }

    /**
     * For a missing path that a preset grants: which preset, and which runs create it
     * (for {@code explain}); null for any other path.
     */
    public static String whoCreates(Path home, Path path) {
        if (home == null || !path.startsWith(home)) {
            return null;
        }
        String rel = home.relativize(path).toString();
        if (rel.equals(".cache")) {
            return "preset @caches makes it writable, and every run creates it";
        }
        for (Tool t : TOOLS) {
            if (t.creates().contains(rel) && t.grants().contains(rel)) {
                return "preset " + t.preset() + " makes it writable, and a run that starts " + t.name() + " ("
                        + String.join(", ", t.commands()) + ")" + (t.agent() ? ""
                        : ", a coding agent or an interactive shell while it is installed,") + " creates it";
            }
        }
        return null;
    }

    /** A table entry without the trailing slash that marks a directory. */
    static String strip(String entry) {
        return entry.endsWith("/") ? entry.substring(0, entry.length() - 1) : entry;
    }

    private static boolean isReadOnlyPart(Path home, Path p) {
        for (Tool t : TOOLS) {
            for (String ro : t.readOnly()) {
                if (home.resolve(strip(ro)).equals(p)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A protected file as it was before a run.
     *
     * @param before    its {@link #identity}, empty when it did not exist
     * @param directory where its directory was, resolved (or as named, when it did not exist yet)
     */
    public record Watched(Path path, String before, Path directory) {}

    /** What identifies a file's version: device and inode, size, change time; empty when absent. */
    public static String identity(Path p) {
        try {
            Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino,size,ctime", LinkOption.NOFOLLOW_LINKS);
            return a.get("dev") + ":" + a.get("ino") + ":" + a.get("size") + ":" + a.get("ctime");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "";
        }
    }

    /** True when {@code p} exists, a dangling symlink included. */
    static boolean exists(Path p) {
        return Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }

    /** How a run lets Claude Code save its user config from inside. */
    public enum ClaudeStep {
        /** Nothing to do: Claude Code is not started, or the config is already a symlink. */
        NONE,
        /** No config yet: {@code ~/.claude.json} becomes a symlink to {@code ~/.claude/.claude.json}. */
        LINK_NEW,
        /** The config moves to {@code ~/.claude/.claude.json}, and a symlink takes its place. */
        MOVE_AND_LINK
    }

    /**
     * What a run prepares in the home before the sandbox starts.
     *
     * @param directories missing directories to create, owner-only, parents first
     * @param claude      what to do about Claude Code's config
     * @param watched     the read-only settings and hidden credential files of granted caches,
     *                    as they were before the run: one the sandbox creates or replaces is
     *                    moved aside after it
     */
    public record Setup(List<Path> directories, ClaudeStep claude, List<Watched> watched) {
        public static final Setup NONE = new Setup(List.of(), ClaudeStep.NONE, List.of());

        public Setup {
            directories = List.copyOf(directories);
            watched = List.copyOf(watched);
        }
    }

    /**
     * Decides what to create for the tools this command starts. Creates nothing.
     *
     * <p>A path that a rule of the user's own (config or flag) makes read-only or hidden is
     * not created. Claude Code saves {@code ~/.claude.json} through a temp file beside it
     * and a rename, which a read-only home refuses; it follows a symlink and saves beside
     * the target instead. So the config moves into {@code ~/.claude/} (writable) and a
     * relative symlink takes its place; Claude Code outside the sandbox follows the same
     * symlink, and one running with {@code CLAUDE_CONFIG_DIR=~/.claude} reads the same file.
     */
    public static Setup setup(Set<String> active, Environment env, List<String> command, List<PolicyLayer> layers,
            List<String> notes) {
        Path home = env.home();
        // no home (possible with @base off): nothing to create in it, and nothing there to protect
        if (home == null || !Files.isDirectory(home) || !(active.contains("@caches") || active.contains("@agents"))) {
            return Setup.NONE;
        }
        List<Tool> tools = started(command, env, notes);
        Set<Path> create = new LinkedHashSet<>();
        Path cache = home.resolve(".cache");
        if (active.contains("@caches") && !exists(cache) && !restrictedByUser(cache, env, layers)) {
            create.add(cache); // the XDG cache, which nearly every tool writes to, for any command
        }
        ClaudeStep claude = ClaudeStep.NONE;
        for (Tool t : tools) {
            if (!active.contains(t.preset())) {
                continue;
            }
            for (String c : t.creates()) {
                Path p = home.resolve(c);
                if (!exists(p) && !restrictedByUser(p, env, layers)) {
                    create.add(p);
                }
            }
            if (t.grants().contains(CLAUDE_CONFIG)) {
                claude = claudeStep(home, env, layers, notes);
            }
        }
        // What stays read-only inside a granted directory must exist to be mounted read-only:
        // a missing directory of them is made (empty); a missing file cannot be (an empty
        // settings file is not the same as none), so it is watched instead.
        List<Watched> watched = new ArrayList<>();
        for (Tool t : TOOLS) {
            if (!active.contains(t.preset())) {
                continue;
            }
            for (String g : t.grants()) {
                Path grant = home.resolve(g);
                if (!create.contains(grant) && !Resolver.isRealDirectory(grant)) {
                    continue;
                }
                List<String> kept = new ArrayList<>(t.readOnly());
                kept.addAll(t.hidden());
                for (String ro : kept) {
                    Path p = home.resolve(strip(ro));
                    if (!p.startsWith(grant)) {
                        continue;
                    }
                    if (!ro.endsWith("/")) {
                        // also when it exists: a second sandbox can rename it away while the
                        // first shows it read-only, then put its own in its place
                        Path dir = Resolver.realPath(p.getParent());
                        watched.add(new Watched(p, identity(p), dir != null ? dir : Resolver.createdPath(p.getParent())));
                    } else if (!exists(p)) {
                        create.add(p);
                    }
                }
            }
        }
        for (Path p : create) {
            notes.add("home: create " + p + " (owner-only), which " + (p.endsWith(".cache") ? "tools write to"
                    : "a preset makes " + (isReadOnlyPart(home, p) ? "read-only" : "writable")));
        }
        return new Setup(List.copyOf(create), claude, watched);
    }

    private static ClaudeStep claudeStep(Path home, Environment env, List<PolicyLayer> layers, List<String> notes) {
        Path config = home.resolve(CLAUDE_CONFIG);
        Path moved = home.resolve(CLAUDE_CONFIG_MOVED);
        if (restrictedByUser(config, env, layers) || restrictedByUser(home.resolve(".claude"), env, layers)) {
            return ClaudeStep.NONE;
        }
        if (Files.isSymbolicLink(config)) {
            return ClaudeStep.NONE;
        }
        if (!exists(config)) {
            if (exists(moved)) {
                notes.add("home: " + config + " becomes a symlink to " + moved);
            } else {
                notes.add("home: " + config + " becomes a symlink to " + moved + ", which Claude Code creates");
            }
            return ClaudeStep.LINK_NEW;
        }
        if (!Files.isRegularFile(config, LinkOption.NOFOLLOW_LINKS) || exists(moved)) {
            notes.add("home: " + config + " stays where it is (" + (exists(moved) ? moved + " exists too"
                    : "not a regular file") + "); Claude Code cannot save it from inside");
            return ClaudeStep.NONE;
        }
        notes.add("home: " + config + " moves to " + moved + " and becomes a symlink to it, so that Claude Code"
                + " can save it from inside");
        return ClaudeStep.MOVE_AND_LINK;
    }

    /** True when a rule of the user's own names {@code path} itself read-only or hidden. */
    private static boolean restrictedByUser(Path path, Environment env, List<PolicyLayer> layers) {
        for (PolicyLayer l : layers) {
            for (String r : l.ro()) {
                if (path.equals(lexical(r, env))) {
                    return true;
                }
            }
            for (String r : l.exclude()) {
                if (path.equals(lexical(r, env))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Path lexical(String pattern, Environment env) {
        String p = pattern.endsWith("/") && pattern.length() > 1 ? pattern.substring(0, pattern.length() - 1) : pattern;
        if (p.equals("~")) {
            return env.home();
        }
        if (p.startsWith("~/")) {
            return env.home() == null ? null : env.home().resolve(p.substring(2)).normalize();
        }
        return env.workDir().resolve(p).normalize();
    }

    /**
     * Carries out a setup on the host. What cannot be made is reported and left: the
     * preset's bind of a missing path is optional, so the run goes on with that path
     * read-only, as before.
     *
     * @return one line per failure, for the user
     */
    public static List<String> apply(Setup setup, Path home) {
        List<String> failures = new ArrayList<>();
        for (Path dir : setup.directories()) {
            try {
                createOwnerOnly(dir, home);
            } catch (IOException e) {
                failures.add("could not create " + dir + " (" + reason(e) + "); it stays read-only in the sandbox");
            }
        }
        if (setup.claude() != ClaudeStep.NONE) {
            try {
                linkClaudeConfig(home, setup.claude());
            } catch (IOException e) {
                failures.add("could not move " + home.resolve(CLAUDE_CONFIG) + " to " + home.resolve(CLAUDE_CONFIG_MOVED)
                        + " (" + reason(e) + "); Claude Code cannot save it from inside");
            }
        }
        return failures;
    }

    private static void createOwnerOnly(Path dir, Path home) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path p = dir; p != null && p.startsWith(home) && !p.equals(home) && !exists(p); p = p.getParent()) {
            missing.add(0, p);
        }
        for (Path p = dir.getParent(); p != null && p.startsWith(home) && !p.equals(home); p = p.getParent()) {
            if (Files.isSymbolicLink(p)) {
                throw new IOException("a symlink on the way: " + p);
            }
        }
        for (Path p : missing) {
            try {
                Files.createDirectory(p, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                if (!Files.isDirectory(p)) {
                    throw e;
                }
            }
        }
    }

    private static void linkClaudeConfig(Path home, ClaudeStep step) throws IOException {
        Path config = home.resolve(CLAUDE_CONFIG);
        Path moved = home.resolve(CLAUDE_CONFIG_MOVED);
        Path target = Path.of(CLAUDE_CONFIG_MOVED);
        if (step == ClaudeStep.LINK_NEW) {
            try {
                Files.createSymbolicLink(config, target);
            } catch (FileAlreadyExistsException e) {
                // Claude Code outside created it meanwhile: this run leaves it alone
            }
            return;
        }
        // The same file under a second name first, so that at every moment the config
        // path names the whole config; then a symlink renamed over it in one step.
        try {
            Files.createLink(moved, config);
        } catch (FileAlreadyExistsException e) {
            throw e;
        } catch (IOException | UnsupportedOperationException e) {
            Path copy = moved.resolveSibling(".claude.json.agent-sandbox-" + ProcessHandle.current().pid());
            Files.copy(config, copy, StandardCopyOption.COPY_ATTRIBUTES);
            Files.move(copy, moved, StandardCopyOption.ATOMIC_MOVE);
        }
        Path link = home.resolve(CLAUDE_CONFIG + ".agent-sandbox-" + ProcessHandle.current().pid());
        Files.deleteIfExists(link);
        Files.createSymbolicLink(link, target);
        Files.move(link, config, StandardCopyOption.ATOMIC_MOVE);
    }

    /** An I/O failure in a few words, for a message. */
    public static String reason(IOException e) {
        String m = e.getMessage();
        return e.getClass().getSimpleName().replace("Exception", "").replaceAll("([a-z])([A-Z])", "$1 $2").toLowerCase(
                Locale.ROOT) + (m == null ? "" : ": " + m);
    }
}
