// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.Environment;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitLayout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns the presets' on/off toggles of every layer into the rules they stand for.
 *
 * <p>{@code @all} applies unless a toggle names {@code @all} or {@code !@all}; then
 * the toggles apply in order, each adding or removing the leaf presets it stands for,
 * so the last toggle touching a preset decides it.
 */
public final class PresetExpander {
    private PresetExpander() {}

    /** Leaf presets, in the order their rules are listed. */
    static final List<String> LEAVES = List.of(
            "@base", "@caches", "@agents", "@git", "@git-strict", "@lint/ts", "@lint/go", "@lint/python");

    private static final Map<String, List<String>> GROUPS = Map.of(
            "@all", List.of("@base", "@caches", "@agents", "@git", "@lint/ts", "@lint/go", "@lint/python"),
            "@lint/all", List.of("@lint/ts", "@lint/go", "@lint/python"));

    static final List<String> LINT_TS = List.of(
            "biome.json", "biome.jsonc", ".eslintrc", ".eslintrc.js", ".eslintrc.json", "eslint.config.js",
            "eslint.config.mjs", ".oxlintrc.json", ".prettierrc", ".prettierrc.json", "prettier.config.js",
            "tsconfig.json", "tsconfig.build.json");
    static final List<String> LINT_GO = List.of(
            ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json");
    static final List<String> LINT_PYTHON = List.of(
            "pyproject.toml", "setup.cfg", ".flake8", "mypy.ini", ".mypy.ini", ".pylintrc", "ruff.toml", ".ruff.toml");
    static final List<String> SECRETS = List.of(".ssh", ".gnupg", ".aws");

    /** The active leaf presets after applying every layer's toggles in order. */
    public static Set<String> activeLeaves(List<PolicyLayer> layers) {
        List<String> toggles = new ArrayList<>();
        for (PolicyLayer l : layers) {
            toggles.addAll(l.presets());
        }
        Set<String> active = new LinkedHashSet<>();
        boolean namesAll = false; // a loop, not a stream: the first stream of a run costs its start
        for (String t : toggles) {
            namesAll |= t.equals("@all") || t.equals("!@all");
        }
        if (!namesAll) {
            active.addAll(leaves("@all"));
        }
        for (String t : toggles) {
            Presets.validateToggle(t);
            if (t.startsWith("!")) {
                active.removeAll(leaves(t.substring(1)));
            } else {
                active.addAll(leaves(t));
            }
        }
        Set<String> ordered = new LinkedHashSet<>();
        for (String leaf : LEAVES) {
            if (active.contains(leaf)) {
                ordered.add(leaf);
            }
        }
        return ordered;
    }

    private static List<String> leaves(String name) {
        return GROUPS.getOrDefault(name, List.of(name));
    }

    /**
     * The rules of the active presets.
     *
     * @param git the repository around the working directory, if any
     */
    public static List<Rule> rules(Set<String> active, Environment env, Optional<GitLayout> git) {
        return rules(active, env, git, null);
    }

    /**
     * {@link #rules(Set, Environment, Optional)} with the git dirs found for the working
     * directory a moment ago ({@link GitDirs#reuse}); null to find them.
     */
    public static List<Rule> rules(Set<String> active, Environment env, Optional<GitLayout> git, GitDirs dirs) {
        List<Rule> out = new ArrayList<>();
        Path home = env.home();
        Path work = env.workDir();
        for (String leaf : active) {
            Origin o = Origin.preset(leaf);
            switch (leaf) {
                case "@base" -> {
                    out.add(Rule.literal(work, Access.RW, o));
                    if (home != null) {
                        out.add(Rule.literal(home, Access.RO, o));
                        for (String s : SECRETS) {
                            out.add(Rule.literal(home.resolve(s), Access.EXCLUDE, o));
                        }
                    }
                }
                case "@caches", "@agents" -> out.addAll(ToolCatalogue.rules(leaf, home, o));
                case "@git" -> {
                    if (git.isPresent()) {
                        presetPaths(out, git.get().gitPaths(), o);
                    }
                    otherGitDirs(out, work, git, dirs, o);
                }
                case "@git-strict" -> {
                    if (git.isPresent()) {
                        presetPaths(out, git.get().gitPaths(), o);
                        presetPaths(out, git.get().strictPaths(), o);
                    }
                    if (!active.contains("@git")) {
                        otherGitDirs(out, work, git, dirs, o);
                    }
                }
                case "@lint/ts" -> lintRules(out, work, LINT_TS, o);
                case "@lint/go" -> lintRules(out, work, LINT_GO, o);
                case "@lint/python" -> lintRules(out, work, LINT_PYTHON, o);
                default -> throw new IllegalStateException("no rules for preset " + leaf);
            }
        }
        return out;
    }

    private static void lintRules(List<Rule> out, Path work, List<String> names, Origin o) {
        for (String n : names) {
            out.add(Rule.literal(work.resolve(n), Access.RO, o));
        }
        // Any lint preset also protects .editorconfig.
        out.add(Rule.literal(work.resolve(".editorconfig"), Access.RO, o));
    }

    /**
     * The config and hooks of every other git dir the host's git will use from here
     * (submodules, nested repositories, worktrees; see {@link GitDirs}) read-only, like
     * the repository's own.
     */
    private static void otherGitDirs(List<Rule> out, Path work, Optional<GitLayout> git, GitDirs dirs, Origin o) {
        List<Path> own = new ArrayList<>();
        if (git.isPresent()) {
            for (PresetPath p : git.get().gitPaths()) {
                own.add(p.path());
            }
        }
        for (Path p : GitDirs.reuse(dirs, work).protectable()) {
            if (!own.contains(p)) {
                out.add(Rule.literal(p, Access.RO, o));
            }
        }
    }

    private static void presetPaths(List<Rule> out, List<PresetPath> paths, Origin o) {
        for (PresetPath p : paths) {
            out.add(Rule.literal(p.path(), p.access(), o));
        }
    }
}
