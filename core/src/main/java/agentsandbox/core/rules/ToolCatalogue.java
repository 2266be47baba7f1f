// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The tools {@code @caches} and {@code @agents} know, and what each grants in the home:
 * the directories made writable, the parts of them that stay read-only (installed programs,
 * init scripts, settings the host obeys later) and the credential files hidden in them.
 */
public final class ToolCatalogue {
    private ToolCatalogue() {}

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
    public record Tool(String name, String preset, boolean agent, List<String> commands, List<String> grants,
            List<String> creates, List<String> readOnly, List<String> hidden) {}

    /** Claude Code's user config, which it saves by a temp file and a rename beside it. */
    public static final String CLAUDE_CONFIG = ".claude.json";

    public static final List<Tool> TOOLS = List.of(
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

    /**
     * With copy-on-write views of the home: the single data files that a sandbox shares with
     * the host instead (bound over its view), because the provider rotates the login they
     * hold on refresh and a copy that went its own way would log one side out. Data only,
     * never code or settings; each was traced with the CLI from the npm registry: it saves
     * the file in place when a rename over it fails (Claude Code), or always in place (Gemini CLI).
     */
    public static final List<String> PASSED_THROUGH = List.of(".claude/.credentials.json", ".gemini/oauth_creds.json");

    /**
     * With copy-on-write views of the home: the login files that sandboxes keep their own
     * of, hidden from the first sandbox by a whiteout in the new layer. Codex saves
     * {@code auth.json} only by renaming a new file over it, which no single-file pass-through
     * survives, and its login rotates: shared through the layer, the first refresh inside
     * would leave the host's Codex with a spent token. A sandbox's Codex logs in once of its own.
     */
    public static final List<String> OWN_IN_SANDBOXES = List.of(".codex/auth.json");

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
    public static String strip(String entry) {
        return entry.endsWith("/") ? entry.substring(0, entry.length() - 1) : entry;
    }

    public static boolean isReadOnlyPart(Path home, Path p) {
        for (Tool t : TOOLS) {
            for (String ro : t.readOnly()) {
                if (home.resolve(strip(ro)).equals(p)) {
                    return true;
                }
            }
        }
        return false;
    }
}
