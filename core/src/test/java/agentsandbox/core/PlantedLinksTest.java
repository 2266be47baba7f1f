// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.aftercheck.Quarantine;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Rule;
import agentsandbox.core.run.ToolHomes;
import agentsandbox.core.run.Unsettled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A symlink in a directory sandboxes can write may have been planted by an earlier run:
 * agent-sandbox's own rules at fixed names there must not show or open up its target.
 */
class PlantedLinksTest {
    @TempDir
    Path tmp;

    private static String line(Plan p) {
        return String.join(" ", p.argv());
    }

    private static Environment env(TestWorld w) {
        return new Environment(w.home, w.project, Map.of("PATH", "/nonexistent"), w.tmp, 1000, "Linux", null);
    }

    private static Plan plan(TestWorld w, List<String> command, PolicyLayer... layers) {
        Policy.Builder b = Policy.builder();
        for (PolicyLayer l : layers) {
            b.layer(l);
        }
        return Sandbox.plan(b.build(), env(w), command);
    }

    /**
     * The shell's working directory reached through a link in the project that leads out of
     * its directory to another one of the home (a project's directory swapped for a link to
     * ~/.config by an earlier run): refused with the way to mean it; a link to elsewhere than
     * the home, and the directory reached by its own path, run.
     */
    @Test
    void A_Working_Directory_Reached_Through_A_Link_Out_Of_The_Project_Into_The_Home_Is_Refused() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path config = Files.createDirectories(w.home.resolve(".config"));
        Files.createDirectories(w.project.resolve("packages"));
        Path link = Files.createSymbolicLink(w.project.resolve("packages/web"), config);
        Path real = config.toRealPath();
        java.util.function.Function<String, Environment> in = pwd -> new Environment(w.home, real,
                pwd == null ? Map.of("PATH", "/nonexistent")
                        : Map.of("PATH", "/nonexistent", "PWD", pwd), w.tmp, 1000, "Linux", null);
        assertThatThrownBy(() -> Sandbox.plan(Policy.builder().build(), in.apply(link.toString()), List.of("true")))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("is reached through the link " + link)
                .satisfies(e -> assertThat(((SandboxException) e).oneLine()).contains("cd -P ."));
        assertThat(line(Sandbox.plan(Policy.builder().build(), in.apply(config.toString()), List.of("true"))))
                .contains(config.toString());
        assertThat(line(Sandbox.plan(Policy.builder().build(), in.apply(null), List.of("true")))).contains(config.toString());
        // a link to a directory out of the home (a workspace on another disk) is taken as it is
        Path elsewhere = Files.createDirectories(tmp.resolve("disk/work"));
        Path out = Files.createSymbolicLink(w.home.resolve("work"), elsewhere);
        Environment outside = new Environment(w.home, elsewhere.toRealPath(), Map.of("PATH", "/nonexistent", "PWD",
                out.toString()), w.tmp, 1000, "Linux", null);
        assertThat(line(Sandbox.plan(Policy.builder().build(), outside, List.of("true")))).contains(elsewhere.toString());
    }

    /**
     * A hidden or read-only file of the project with another name (a hard link an earlier run
     * made while the file was its own): the run is refused, saying how to give it one name.
     */
    @Test
    void A_Protected_File_With_Another_Name_In_The_Project_Stops_The_Run() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path env = Files.writeString(w.project.resolve(".env"), "API_KEY=secret\n");
        Files.createDirectories(w.project.resolve("node_modules/.x"));
        Files.createLink(w.project.resolve("node_modules/.x/e"), env);
        PolicyLayer hide = PolicyLayer.builder(Layer.FLAG, "flags").exclude(".env").build();
        assertThatThrownBy(() -> plan(w, List.of("true"), hide)).isInstanceOf(SandboxException.class)
                .hasMessageContaining(env + " is hidden in the sandbox but has 1 other name (hard links)")
                .satisfies(e -> assertThat(((SandboxException) e).oneLine()).contains("-samefile"));
        PolicyLayer readOnly = PolicyLayer.builder(Layer.FLAG, "flags").ro(".env").build();
        assertThatThrownBy(() -> plan(w, List.of("true"), readOnly)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("is read-only in the sandbox but has 1 other name");

        // a file in a hidden or read-only directory of the project, too
        Path secrets = Files.createDirectories(w.project.resolve("secrets/deep"));
        Path key = Files.writeString(secrets.resolve("api.env"), "API_KEY=secret\n");
        Files.createLink(w.project.resolve("node_modules/.x/k"), key);
        for (PolicyLayer rule : List.of(PolicyLayer.builder(Layer.FLAG, "flags").exclude("secrets").build(),
                PolicyLayer.builder(Layer.FLAG, "flags").ro("secrets").build())) {
            assertThatThrownBy(() -> plan(w, List.of("true"), rule)).isInstanceOf(SandboxException.class)
                    .hasMessageContaining(key + " is ").hasMessageContaining("(" + w.project.resolve("secrets") + " is)")
                    .hasMessageContaining("1 other name");
        }
        Files.delete(w.project.resolve("node_modules/.x/k"));
        assertThat(line(plan(w, List.of("true"), PolicyLayer.builder(Layer.FLAG, "flags").exclude("secrets").build())))
                .contains(w.project.resolve("secrets").toString());

        // with a name of its own, as the message says
        Files.copy(env, w.project.resolve(".env.new"), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        Files.move(w.project.resolve(".env.new"), env, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(line(plan(w, List.of("true"), hide))).contains(env.toString());
    }

    @Test
    void A_Link_Planted_At_A_Protected_Cache_Setting_Does_Not_Show_A_Hidden_Key() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".ssh"));
        Path key = Files.writeString(w.home.resolve(".ssh/id_rsa"), "KEY");
        Files.createDirectories(w.home.resolve(".m2"));
        Files.createSymbolicLink(w.home.resolve(".m2/settings.xml"), Path.of("../.ssh/id_rsa"));

        Plan p = plan(w, List.of("mvn"));
        assertThat(line(p)).doesNotContain(key.toString());
        assertThat(String.join("\n", p.notes())).contains("skip ro " + w.home.resolve(".m2/settings.xml"))
                .contains("a sandbox may have planted it");
    }

    @Test
    void A_Link_Planted_Behind_Claude_Codes_Config_Opens_Nothing_Up() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path bashrc = Files.writeString(w.home.resolve(".bashrc"), "# mine\n");
        Files.createDirectories(w.home.resolve(".claude"));
        Files.createSymbolicLink(w.home.resolve(".claude.json"), Path.of(".claude/.claude.json"));
        Files.createSymbolicLink(w.home.resolve(".claude/.claude.json"), Path.of("../.bashrc"));

        for (List<String> command : List.of(List.of("claude"), List.of("true"))) {
            Plan p = plan(w, command);
            assertThat(line(p)).as(command.toString()).doesNotContain("--bind-try " + bashrc);
        }
    }

    @Test
    void A_Link_Planted_At_A_Lint_Config_Does_Not_Show_Its_Target() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".ssh"));
        Path secret = Files.writeString(w.home.resolve(".ssh/id_ed25519"), "KEY");
        Files.createSymbolicLink(w.project.resolve("biome.json"), secret);

        Plan p = plan(w, List.of("true"));
        assertThat(line(p)).contains("--tmpfs " + w.home.resolve(".ssh")).doesNotContain(secret.toString());
    }

    @Test
    void A_Link_The_Host_Made_In_The_Read_Only_Home_Is_Followed() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path data = Files.createDirectories(w.root.resolve("data/m2"));
        Files.createSymbolicLink(w.home.resolve(".m2"), data);

        assertThat(line(plan(w, List.of("mvn")))).contains("--bind-try " + data + " " + data);
    }

    @Test
    void A_Link_Planted_Where_A_Config_Rule_Points_Shows_And_Opens_Nothing() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path bashrc = Files.writeString(w.home.resolve(".bashrc"), "# mine\n");
        Files.createDirectories(w.home.resolve(".ssh"));
        Files.createSymbolicLink(w.project.resolve("out"), Path.of("../.bashrc"));
        Files.createSymbolicLink(w.project.resolve("docs"), w.home.resolve(".ssh"));
        PolicyLayer trusted = TestWorld.project().rw("out").ro("docs").build();
        PolicyLayer global = PolicyLayer.builder(Layer.GLOBAL, "config.json").rw("out").build();

        for (PolicyLayer layer : List.of(trusted, global)) {
            Plan p = plan(w, List.of("true"), layer);
            assertThat(line(p)).as(layer.layer().toString()).doesNotContain(bashrc.toString())
                    .doesNotContain("--ro-bind-try " + w.home.resolve(".ssh"));
        }
    }

    @Test
    void A_Flag_The_User_Gives_Still_Applies_To_The_Links_Target() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path shared = Files.createDirectories(w.home.resolve("shared"));
        Files.createSymbolicLink(w.project.resolve("shared"), shared);

        Plan p = plan(w, List.of("true"), TestWorld.flags().rw("shared").build());
        assertThat(line(p)).contains("--bind-try " + shared + " " + shared);
    }

    @Test
    void Missing_Protected_Directories_Are_Made_And_Missing_Settings_Watched_And_Moved_Aside() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".cargo/registry"));
        ToolHomes.Setup s = ToolHomes.setup(Set.of("@base", "@caches"), env(w), List.of("true"), List.of(),
                new ArrayList<>());
        assertThat(s.directories()).contains(w.home.resolve(".cargo/bin"));
        assertThat(s.watched()).extracting(ToolHomes.Watched::path)
                .contains(w.home.resolve(".cargo/config.toml"), w.home.resolve(".cargo/config"),
                        w.home.resolve(".cargo/credentials.toml"));
        Plan p = plan(w, List.of("true"));
        assertThat(line(p)).contains("--ro-bind-try " + w.home.resolve(".cargo/bin"));

        assertThat(ToolHomes.apply(s, w.home)).isEmpty();
        assertThat(w.home.resolve(".cargo/bin")).isEmptyDirectory();
        Files.writeString(w.home.resolve(".cargo/config.toml"), "[build]\nrustc-wrapper = \"/x\"\n");
        List<String> moved = Quarantine.moveAside(s, w.home.resolve(".local/state/agent-sandbox"));
        assertThat(moved).hasSize(1);
        assertThat(moved.get(0)).contains("the sandbox created " + w.home.resolve(".cargo/config.toml"));
        assertThat(w.home.resolve(".cargo/config.toml")).doesNotExist();
        try (var left = Files.list(w.home.resolve(".cargo"))) {
            assertThat(left.map(f -> f.getFileName().toString()))
                    .anyMatch(n -> n.startsWith("config.toml.agent-sandbox-"));
        }
    }

    @Test
    void A_Plant_That_Could_Not_Be_Moved_Aside_Stops_The_Next_Run_Until_It_Is_Gone() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path state = w.home.resolve(".local/state/agent-sandbox");
        Path plant = Files.writeString(w.home.resolve("planted.toml"), "[build]\n");
        Unsettled.record(state, plant, ToolHomes.identity(plant));
        assertThatThrownBy(() -> Unsettled.check(state)).isInstanceOf(SandboxException.class)
                .hasMessageContaining(plant + " was written by a sandbox");
        assertThatThrownBy(() -> Unsettled.check(state)).isInstanceOf(SandboxException.class);
        Files.delete(plant);
        Unsettled.check(state); // gone: the record is forgotten
        Files.writeString(plant, "[build]\n");
        Unsettled.check(state); // made again later, outside: not the file that was left
        try (var left = Files.list(state.resolve("unsettled"))) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void A_Working_Directory_That_Became_A_Link_During_The_Plan_Stops_It_For_Rules_Of_Every_Level() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path elsewhere = Files.createDirectories(w.root.resolve("elsewhere"));
        Files.writeString(elsewhere.resolve(".env"), "not the project's\n");
        Files.writeString(w.project.resolve(".env"), "SECRET\n");
        // resolved once at the plan's start, then swapped for a link by a concurrent process
        Path real = w.project;
        Files.move(w.project, w.root.resolve("moved"));
        Files.createSymbolicLink(w.project, elsewhere);
        for (Access level : Access.values()) {
            Resolver r = new Resolver(env(w), new ArrayList<>(), Set.of(), List.of(real), false).resolvedAs(real, real);
            assertThatThrownBy(() -> r.resolve(List.of(Rule.literal(real.resolve(".env"), level,
                    new Origin(Layer.PROJECT, "test")))))
                    .as(level.word()).isInstanceOf(SandboxException.class).hasMessageContaining(MountChecks.CHANGED);
        }
    }
}
