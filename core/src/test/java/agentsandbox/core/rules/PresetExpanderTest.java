// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PresetExpanderTest {
    @TempDir
    Path tmp;

    private static List<PolicyLayer> layers(String... toggleLists) {
        PolicyLayer.Builder g = PolicyLayer.builder(Layer.GLOBAL, "global");
        PolicyLayer.Builder p = PolicyLayer.builder(Layer.PROJECT, "project");
        if (toggleLists.length > 0 && !toggleLists[0].isBlank()) {
            Arrays.stream(toggleLists[0].split(" ")).forEach(g::preset);
        }
        if (toggleLists.length > 1 && !toggleLists[1].isBlank()) {
            Arrays.stream(toggleLists[1].split(" ")).forEach(p::preset);
        }
        return List.of(Policy.defaults(), g.build(), p.build());
    }

    @ParameterizedTest(name = "global [{0}] project [{1}] -> {2}")
    @CsvSource(delimiter = '|', value = {
        "|| @base @caches @agents @git @lint/ts @lint/go @lint/python",
        "!@lint/python|| @base @caches @agents @git @lint/ts @lint/go",
        "!@all @base|| @base",
        "!@all|@base @git| @base @git",
        "@lint/all|| @base @caches @agents @git @lint/ts @lint/go @lint/python",
        "!@lint/all|| @base @caches @agents @git",
        "!@all @lint/all|!@lint/ts| @lint/go @lint/python",
        "@git-strict|| @base @caches @agents @git @git-strict @lint/ts @lint/go @lint/python",
        "!@all @base|@all| @base @caches @agents @git @lint/ts @lint/go @lint/python",
        "!@git|@git| @base @caches @agents @git @lint/ts @lint/go @lint/python",
        "@git|!@git| @base @caches @agents @lint/ts @lint/go @lint/python",
        "!@all||",
    })
    void Toggles_Apply_In_Order_Across_Layers_And_The_Last_One_Wins(String global, String project, String expected) {
        String active = String.join(" ", PresetExpander.activeLeaves(layers(global == null ? "" : global,
                project == null ? "" : project)));
        assertThat(active).isEqualTo(expected == null ? "" : expected.strip());
    }

    @Test
    void Unknown_Preset_Is_An_Error_Naming_It() {
        assertThatThrownBy(() -> PresetExpander.activeLeaves(layers("@nope")))
                .hasMessageContaining("@nope").hasMessageContaining("@base");
    }

    private static String pathsOf(List<Rule> rules, Path base) {
        return rules.stream()
                .map(r -> r.access().word() + " " + (r.literal().startsWith(base)
                        ? "~" + (r.literal().equals(base) ? "" : "/" + base.relativize(r.literal()))
                        : r.literal().toString()))
                .collect(Collectors.joining(", "));
    }

    @Test
    void Base_Is_Workdir_Rw_Home_Ro_Secrets_Hidden() {
        // the private /tmp is the plan's, not a rule (see SandboxPlanTest)
        TestWorld w = new TestWorld(tmp);
        List<Rule> rules = PresetExpander.rules(java.util.Set.of("@base"), w.env(), Optional.empty());
        assertThat(pathsOf(rules, w.home)).isEqualTo(
                "rw ~/project, ro ~, exclude ~/.ssh, exclude ~/.gnupg, exclude ~/.aws");
    }

    @Test
    void Caches_And_Agents_Are_Exactly_The_Listed_Home_Paths_Rw() {
        TestWorld w = new TestWorld(tmp);
        assertThat(pathsOf(PresetExpander.rules(java.util.Set.of("@caches"), w.env(), Optional.empty()), w.home))
                .isEqualTo("rw ~/.cache, rw ~/.bun, rw ~/go, rw ~/.npm, rw ~/.cargo, rw ~/.rustup, rw ~/.m2,"
                        + " rw ~/.gradle, rw ~/.ivy2, rw ~/.sbt, rw ~/.nuget/packages, rw ~/.local/share/pnpm/store,"
                        + " rw ~/.yarn/berry, rw ~/.local/share/uv,"
                        + " ro ~/.bun/bin, ro ~/.bun/install/global, ro ~/go/bin,"
                        + " ro ~/.cargo/bin, ro ~/.cargo/config.toml, ro ~/.cargo/config, ro ~/.cargo/env,"
                        + " exclude ~/.cargo/credentials.toml, exclude ~/.cargo/credentials,"
                        + " ro ~/.rustup/toolchains, ro ~/.rustup/settings.toml, ro ~/.rustup/update-hashes,"
                        + " ro ~/.m2/settings.xml, ro ~/.m2/toolchains.xml, exclude ~/.m2/settings-security.xml,"
                        + " ro ~/.gradle/init.d, ro ~/.gradle/init.gradle, ro ~/.gradle/init.gradle.kts,"
                        + " ro ~/.gradle/gradle.properties,"
                        + " ro ~/.sbt/1.0/plugins, ro ~/.sbt/1.0/global.sbt, ro ~/.sbt/0.13/plugins,"
                        + " ro ~/.ivy2/ivysettings.xml, exclude ~/.sbt/credentials, exclude ~/.ivy2/.credentials,"
                        + " ro ~/.local/share/uv/python, ro ~/.local/share/uv/tools");
        assertThat(pathsOf(PresetExpander.rules(java.util.Set.of("@agents"), w.env(), Optional.empty()), w.home))
                .isEqualTo("rw ~/.claude, rw ~/.claude.json, rw ~/.local/state/claude, rw ~/.local/share/claude,"
                        + " rw ~/.codex, rw ~/.gemini, rw ~/.config/opencode, rw ~/.local/share/opencode,"
                        + " rw ~/.local/state/opencode, rw ~/.pi, rw ~/.qwen, rw ~/.copilot, rw ~/.config/amp,"
                        + " rw ~/.local/share/amp, rw ~/.cline, rw ~/.config/kilo, rw ~/.local/share/kilo,"
                        + " rw ~/.local/state/kilo, rw ~/.local/state/kilo-sandbox-policy, rw ~/.augment,"
                        + " rw ~/.config/crush, rw ~/.local/share/crush, ro ~/.local/share/claude/versions");
    }

    @Test
    void Lint_Presets_Protect_Their_Files_And_Editorconfig_In_The_Workdir() {
        TestWorld w = new TestWorld(tmp);
        Path p = w.project;
        assertThat(pathsOf(PresetExpander.rules(java.util.Set.of("@lint/go"), w.env(), Optional.empty()), p))
                .isEqualTo("ro ~/.golangci.yml, ro ~/.golangci.yaml, ro ~/.golangci.toml, ro ~/.golangci.json,"
                        + " ro ~/.editorconfig");
        assertThat(pathsOf(PresetExpander.rules(java.util.Set.of("@lint/python"), w.env(), Optional.empty()), p))
                .isEqualTo("ro ~/pyproject.toml, ro ~/setup.cfg, ro ~/.flake8, ro ~/mypy.ini, ro ~/.mypy.ini,"
                        + " ro ~/.pylintrc, ro ~/ruff.toml, ro ~/.ruff.toml, ro ~/.editorconfig");
        assertThat(pathsOf(PresetExpander.rules(java.util.Set.of("@lint/ts"), w.env(), Optional.empty()), p))
                .isEqualTo("ro ~/biome.json, ro ~/biome.jsonc, ro ~/.eslintrc, ro ~/.eslintrc.js, ro ~/.eslintrc.json,"
                        + " ro ~/eslint.config.js, ro ~/eslint.config.mjs, ro ~/.oxlintrc.json, ro ~/.prettierrc,"
                        + " ro ~/.prettierrc.json, ro ~/prettier.config.js, ro ~/tsconfig.json,"
                        + " ro ~/tsconfig.build.json, ro ~/.editorconfig");
    }

    @Test
    void Rules_Remember_Their_Preset() {
        TestWorld w = new TestWorld(tmp);
        List<Rule> rules = PresetExpander.rules(java.util.Set.of("@caches"), w.env(), Optional.empty());
        assertThat(rules).allSatisfy(r -> assertThat(r.origin()).isEqualTo(Origin.preset("@caches")));
    }
}
