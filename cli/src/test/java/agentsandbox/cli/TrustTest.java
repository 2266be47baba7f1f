// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The trust model of project configs: untrusted ones only tighten; {@code agent-sandbox trust}. */
class TrustTest {
    @TempDir
    Path dir;

    private static final String CONFIG = "home/project/.agent-sandbox.json";

    /** A project config that loosens, what the refusal must name, and what the world needs. */
    static Stream<Arguments> loosening() {
        return Stream.of(
                Arguments.of("rw home", "{\"filesystem\": {\"rw\": [\"~\"]}}", "rw ~ (was ro)", List.of()),
                Arguments.of("rw secret dir", "{\"filesystem\": {\"rw\": [\"~/.ssh\"]}}", "rw ~/.ssh (was hidden)",
                        List.of("home/.ssh/id")),
                Arguments.of("ro inside a hidden dir", "{\"filesystem\": {\"ro\": [\"~/.ssh/id\"]}}",
                        "ro ~/.ssh/id (was hidden)", List.of("home/.ssh/id")),
                Arguments.of("lint preset off", "{\"filesystem\": {\"presets\": [\"!@lint/ts\"]}}",
                        "rw ~/project/biome.json (was ro)", List.of("home/project/biome.json")),
                Arguments.of("lint file rw", "{\"filesystem\": {\"rw\": [\"biome.json\"]}}",
                        "rw ~/project/biome.json (was ro)", List.of("home/project/biome.json")),
                Arguments.of("git preset off", "{\"filesystem\": {\"presets\": [\"!@git\"]}}",
                        "rw ~/project/.git/hooks (was ro)", List.of("home/project/.git/HEAD",
                                "home/project/.git/hooks/x", "home/project/.git/config")),
                Arguments.of("everything off", "{\"filesystem\": {\"presets\": [\"!@all\"]}}", "~/.ssh",
                        List.of("home/.ssh/id")),
                Arguments.of("host tmp", "{\"filesystem\": {\"ro\": [\"/tmp\"]}}", "/tmp shows /tmp", List.of()),
                Arguments.of("docker", "{\"docker\": true}", "docker on", List.of("no-docker.sock")),
                Arguments.of("shared tmp", "{\"shareTmp\": true}", "shareTmp on", List.of()),
                Arguments.of("host port", "{\"hostPorts\": [5432]}", "hostPorts [5432]", List.of()),
                Arguments.of("git guard off", "{\"commands\": {\"git\": true}}", "commands.git true (was @git)",
                        List.of()));
    }

    private CliWorld world(List<String> files) {
        CliWorld w = new CliWorld(dir);
        for (String f : files) {
            w.write(f, f.endsWith("HEAD") ? "ref: refs/heads/main\n" : "x");
        }
        return w;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("loosening")
    void Untrusted_Loosening_Config_Refuses_With_One_Line_Naming_File_Change_And_Fix(String name, String config,
            String loosens, List<String> files) {
        CliWorld w = world(files);
        Path cfg = w.write(CONFIG, config);
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).startsWith("agent-sandbox: " + cfg + " is not trusted and loosens the policy: ")
                .contains(loosens).contains("agent-sandbox trust").endsWith("\n");
        assertThat(r.err().strip()).doesNotContain("\n");
    }

    /**
     * A file named with -c in the project is the sandboxes' to write (its directory renamed
     * away and made anew): it is trusted only as the project config is, by -c FILE trust; one
     * outside the project is the user's own choice, trusted as it is.
     */
    @Test
    void A_Config_Named_With_C_In_The_Project_Is_Trusted_Only_As_A_Project_Config_Is() throws IOException {
        CliWorld w = world(List.of());
        Path cfg = w.write("home/project/policy/dev.json", "{\"filesystem\": {\"rw\": [\"~\"]}}");
        CliWorld.Result r = w.run("-c", "policy/dev.json", "--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: " + cfg + " is not trusted and loosens the policy: ")
                .contains("rw ~ (was ro)", "agent-sandbox -c policy/dev.json trust");
        assertThat(r.err().strip()).doesNotContain("\n");

        CliWorld.Result t = w.run("-c", "policy/dev.json", "trust");
        assertThat(t.status()).as(t.err()).isZero();
        assertThat(t.out()).contains("trusted " + cfg);
        assertThat(w.run("-c", "policy/dev.json", "--dry-run", "true").status()).isZero();
        Files.writeString(cfg, "{\"filesystem\": {\"rw\": [\"~\", \"/tmp\"]}}"); // another one, made by a sandbox
        assertThat(w.run("-c", "policy/dev.json", "--dry-run", "true").err()).contains("has changed since it was trusted");

        Path outside = w.write("home/policies/dev.json", "{\"filesystem\": {\"rw\": [\"~\"]}}");
        assertThat(w.run("-c", outside.toString(), "--dry-run", "true").status()).isZero();

        // nor by a link in the project to a file outside it, or by a file of the sandboxes' layers
        Path layered = w.write("home/.local/share/agent-sandbox/homes/layers/.cache/dev.json",
                "{\"filesystem\": {\"rw\": [\"~\"]}}");
        Files.createDirectories(cfg.getParent().resolveSibling("linked"));
        Files.createSymbolicLink(cfg.getParent().resolveSibling("linked/dev.json"), layered);
        assertThat(w.run("-c", "linked/dev.json", "--dry-run", "true").err()).contains("is not trusted");
        assertThat(w.run("-c", layered.toString(), "--dry-run", "true").err()).contains("is not trusted");
    }

    /** Agents' sockets: no agent runs here, so only the refusal of an untrusted config is checked. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"sshAgent", "gpgAgent"})
    void An_Untrusted_Config_Cannot_Open_An_Agent_Socket(String key) {
        CliWorld w = world(List.of());
        Path cfg = w.write(CONFIG, "{\"" + key + "\": true}");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: " + cfg + " is not trusted and loosens the policy: ")
                .contains(key + " on");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("loosening")
    void Trusted_Loosening_Config_Runs_Until_A_Byte_Changes(String name, String config, String loosens,
            List<String> files) throws IOException {
        CliWorld w = world(files);
        Path cfg = w.write(CONFIG, config);
        CliWorld.Result t = w.run("trust");
        assertThat(t.status()).isZero();
        assertThat(t.out()).contains("trusted " + cfg).contains("sha256 ").contains(loosens);
        CliWorld.Result ok = w.run("--dry-run", "true");
        assertThat(ok.status()).as(ok.err()).isZero();

        Files.writeString(cfg, config + " ");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains(cfg + " has changed since it was trusted").contains("agent-sandbox trust");
    }

    /**
     * A trusted config is taken as it is without working out what it loosens (two more
     * resolutions of every rule); --debug still says it, and its rules apply either way.
     */
    @Test
    void Trusted_Config_Applies_And_Debug_Still_Names_What_It_Loosens() {
        CliWorld w = world(List.of());
        w.write(CONFIG, "{\"filesystem\": {\"rw\": [\"~/notes\"]}}");
        w.mkdir("home/notes");
        assertThat(w.run("trust").status()).isZero();
        CliWorld.Result plain = w.run("--dry-run", "true");
        assertThat(plain.status()).as(plain.err()).isZero();
        String notes = w.home.resolve("notes").toString();
        assertThat(plain.out()).contains("--bind-try " + notes + " " + notes);
        CliWorld.Result debug = w.run("--debug", "--dry-run", "true");
        assertThat(debug.status()).as(debug.err()).isZero();
        assertThat(debug.err()).contains("project config: trusted").contains("loosens: rw ~/notes (was ro)");
        assertThat(debug.out()).contains("--bind-try " + notes + " " + notes);
    }

    @Test
    void Untrusted_Tightening_Config_Applies_Without_Trust() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"filesystem\": {\"exclude\": [\".env\"], \"ro\": [\"docs\"],"
                + " \"presets\": [\"@git-strict\"]}, \"network\": false, \"commands\": {\"rm\": false}}");
        w.write("home/project/.env", "SECRET=1");
        w.mkdir("home/project/docs");
        CliWorld.Result r = w.run("--debug", "--dry-run", "true");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).doesNotContain("--share-net")
                .contains("/hidden " + w.project + "/.env")
                .contains("--ro-bind-try " + w.project + "/docs ");
        assertThat(r.err()).contains("project config: only tightens the policy");
    }

    @Test
    void Replacing_The_Git_Guard_With_A_Script_Loosens() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"commands\": {\"git\": \"/bin/true\", \"make\": \"/bin/true\"}}");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        // a wrapper for a command that had none only adds a script that runs inside
        assertThat(r.err()).contains("loosens the policy: commands.git /bin/true (was @git) (");
    }

    @Test
    void A_Loosening_That_Flags_Already_Grant_Is_No_Loosening() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"filesystem\": {\"rw\": [\"~\"]}}");
        assertThat(w.run("--rw", "~", "--dry-run", "true").status()).isZero();
        assertThat(w.run("--dry-run", "true").status()).isEqualTo(1);
    }

    @Test
    void Network_On_Loosens_Only_When_The_Global_Config_Turned_It_Off() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"network\": true}");
        assertThat(w.run("--dry-run", "true").status()).isZero();
        w.write("home/.config/agent-sandbox/config.json", "{\"network\": false}");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains("loosens the policy: network on");
    }

    @Test
    void An_Untrusted_Project_Config_May_Lower_A_Bound_But_Not_Raise_It() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"tmpSize\": \"64M\", \"maxProcs\": 256}");
        CliWorld.Result lower = w.run("--dry-run", "true");
        assertThat(lower.status()).isZero();
        assertThat(lower.out()).contains("--size 67108864 --tmpfs /tmp");
        w.write(CONFIG, "{\"tmpSize\": \"64G\", \"maxProcs\": 100000}");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains("loosens the policy: tmpSize 64G (was 2G), maxProcs 100000 (was 4096)");
    }

    @Test
    void Config_Named_With_Dash_C_And_Global_Config_Are_The_Users_Own() {
        CliWorld w = new CliWorld(dir);
        w.write("home/mine.json", "{\"filesystem\": {\"rw\": [\"~\"]}}");
        assertThat(w.run("-c", "~/mine.json", "--dry-run", "true").status()).isZero();
        w.write("home/.config/agent-sandbox/config.json", "{\"filesystem\": {\"rw\": [\"~\"]}, \"docker\": false}");
        assertThat(w.run("--dry-run", "true").status()).isZero();
    }

    @Test
    void Both_Project_Files_Name_The_Untrusted_One() {
        CliWorld w = new CliWorld(dir);
        w.write(CONFIG, "{\"filesystem\": {\"rw\": [\"~\"]}}");
        assertThat(w.run("trust").status()).isZero();
        Path second = w.write("home/project/.agent-sandbox.jsonc", "{}");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: " + second + ": both .agent-sandbox.json and"
                + " .agent-sandbox.jsonc exist").contains(".agent-sandbox.jsonc is not trusted");
        assertThat(r.err().strip()).doesNotContain("\n");
    }

    @Test
    void Trust_Record_Is_Private_And_Named_By_The_Configs_Path() throws IOException {
        CliWorld w = new CliWorld(dir);
        w.env.put("XDG_STATE_HOME", w.root.resolve("state").toString());
        Path cfg = w.write(CONFIG, "{}");
        CliWorld.Result r = w.run("trust");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("it only tightens the policy");
        Path store = w.root.resolve("state/agent-sandbox/trust");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(store))).isEqualTo("rwx------");
        try (Stream<Path> records = Files.list(store).filter(p -> !p.toString().endsWith(".content"))) {
            List<Path> all = records.toList();
            assertThat(all).hasSize(1);
            assertThat(all.get(0).getFileName().toString())
                    .isEqualTo(Trust.sha256(cfg.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(all.get(0))))
                    .isEqualTo("rw-------");
            assertThat(Files.readString(all.get(0))).contains(Trust.sha256(Files.readAllBytes(cfg)));
        }
        // trusting again replaces the record
        Files.writeString(cfg, "{\"network\": false}");
        assertThat(w.run("trust").status()).isZero();
        try (Stream<Path> records = Files.list(store)) {
            assertThat(records.toList()).hasSize(2); // the record and the trusted bytes' copy
        }
    }

    @Test
    void Trust_Shows_The_File_And_What_Changed_Since_It_Was_Trusted_Last() throws IOException {
        CliWorld w = new CliWorld(dir);
        w.env.put("XDG_STATE_HOME", w.root.resolve("state").toString());
        Path cfg = w.write(CONFIG, "{\n  \"network\": false,\n  \"docker\": false\n}\n");
        CliWorld.Result first = w.run("trust");
        assertThat(first.status()).isZero();
        assertThat(first.out()).startsWith(cfg + ":\n  | {\n  |   \"network\": false,\n  |   \"docker\": false\n  | }\n"
                + "never trusted before\n");
        CliWorld.Result again = w.run("trust");
        assertThat(again.out()).contains("\nunchanged since you trusted it last\n");

        Files.writeString(cfg, "{\n  \"network\": false,\n  \"docker\": true\n}\n");
        CliWorld.Result changed = w.run("trust");
        assertThat(changed.status()).isZero();
        assertThat(changed.out()).contains("changed since you trusted it last:\n  @@ line 3\n"
                + "  -   \"docker\": false\n  +   \"docker\": true\n").contains("docker on");
    }

    @Test
    void Trust_Shows_A_Config_With_Control_Characters_As_Printable_Lines() {
        CliWorld w = new CliWorld(dir);
        w.env.put("XDG_STATE_HOME", w.root.resolve("state").toString());
        w.write(CONFIG, "{ /* \u001b]52;c;aGk=\u0007 */ }\n");
        CliWorld.Result r = w.run("trust");
        assertThat(r.status()).isZero();
        assertThat(r.out()).doesNotContain("\u001b").doesNotContain("\u0007");
    }

    @Test
    void Trust_Takes_A_Directory_And_Refuses_Where_There_Is_No_Config() {
        CliWorld w = new CliWorld(dir);
        w.mkdir("home/other");
        Path cfg = w.write("home/other/.agent-sandbox.jsonc", "{\"filesystem\": {\"rw\": [\"~\"]}}");
        CliWorld.Result none = w.run("trust");
        assertThat(none.status()).isEqualTo(1);
        assertThat(none.err()).startsWith("agent-sandbox: no .agent-sandbox.json or .agent-sandbox.jsonc in");
        CliWorld.Result r = w.run("trust", "-C", "../other");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("trusted " + cfg).contains("rw ~ (was ro)");
        assertThat(w.run("-C", "../other", "--dry-run", "true").status()).isZero();
        CliWorld.Result bad = w.run("trust", "--bogus");
        assertThat(bad.status()).isEqualTo(1);
        assertThat(bad.err()).contains("trust takes only -C DIR");
    }

    @Test
    void A_Program_Named_Trust_Runs_After_Dash_Dash() {
        CliWorld.Result r = new CliWorld(dir).run("--dry-run", "--", "trust", "-C", "x");
        assertThat(r.status()).isZero();
        assertThat(r.out()).endsWith(" -- trust -C x\n");
    }

    @Test
    void A_Trusted_Config_Is_Not_Trusted_At_Another_Path() throws IOException {
        CliWorld w = new CliWorld(dir);
        Path cfg = w.write(CONFIG, "{\"filesystem\": {\"rw\": [\"~\"]}}");
        assertThat(w.run("trust").status()).isZero();
        w.mkdir("home/copy");
        Files.copy(cfg, w.root.resolve("home/copy/.agent-sandbox.json"));
        CliWorld.Result r = w.run("-C", "../copy", "--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains("is not trusted").contains("agent-sandbox trust -C ");
    }
}
