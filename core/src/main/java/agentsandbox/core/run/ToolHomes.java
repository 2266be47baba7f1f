// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.ToolCatalogue;

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
    /** Where {@link #ToolCatalogue.CLAUDE_CONFIG} lives when a run has moved it, so that it can be saved from inside. */
    static final String CLAUDE_CONFIG_MOVED = ".claude/.claude.json";

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
        Path config = env.home().resolve(ToolCatalogue.CLAUDE_CONFIG);
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
        List<ToolCatalogue.Tool> tools = StartedTools.started(command, env, notes);
        Set<Path> create = new LinkedHashSet<>();
        Path cache = home.resolve(".cache");
        if (active.contains("@caches") && !exists(cache) && !restrictedByUser(cache, env, layers)) {
            create.add(cache); // the XDG cache, which nearly every tool writes to, for any command
        }
        ClaudeStep claude = ClaudeStep.NONE;
        for (ToolCatalogue.Tool t : tools) {
            if (!active.contains(t.preset())) {
                continue;
            }
            for (String c : t.creates()) {
                Path p = home.resolve(c);
                if (!exists(p) && !restrictedByUser(p, env, layers)) {
                    create.add(p);
                }
            }
            if (t.grants().contains(ToolCatalogue.CLAUDE_CONFIG)) {
                claude = claudeStep(home, env, layers, notes);
            }
        }
        // What stays read-only inside a granted directory must exist to be mounted read-only:
        // a missing directory of them is made (empty); a missing file cannot be (an empty
        // settings file is not the same as none), so it is watched instead.
        List<Watched> watched = new ArrayList<>();
        for (ToolCatalogue.Tool t : ToolCatalogue.TOOLS) {
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
                    Path p = home.resolve(ToolCatalogue.strip(ro));
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
                    : "a preset makes " + (ToolCatalogue.isReadOnlyPart(home, p) ? "read-only" : "writable")));
        }
        return new Setup(List.copyOf(create), claude, watched);
    }

    private static ClaudeStep claudeStep(Path home, Environment env, List<PolicyLayer> layers, List<String> notes) {
        Path config = home.resolve(ToolCatalogue.CLAUDE_CONFIG);
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
                failures.add("could not move " + home.resolve(ToolCatalogue.CLAUDE_CONFIG) + " to " + home.resolve(CLAUDE_CONFIG_MOVED)
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
        Path config = home.resolve(ToolCatalogue.CLAUDE_CONFIG);
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
        Path link = home.resolve(ToolCatalogue.CLAUDE_CONFIG + ".agent-sandbox-" + ProcessHandle.current().pid());
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
