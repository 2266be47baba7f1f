// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.PolicyLayer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ConfigReaderTest {
    @TempDir
    Path dir;

    private CliWorld world() {
        return new CliWorld(dir);
    }

    private static ConfigReader.Loaded load(CliWorld w, String explicit) {
        return ConfigReader.load(w.environment(), explicit);
    }

    @Test
    void No_Files_Means_No_Layers() {
        ConfigReader.Loaded l = load(world(), null);
        assertThat(l.layers()).isEmpty();
        assertThat(l.files()).isEmpty();
        assertThat(l.notes()).anyMatch(n -> n.contains("not found"));
    }

    @Test
    void Ssh_Agent_Is_A_Boolean_Or_A_List_Of_Key_Comments() {
        CliWorld w = world();
        w.write("home/.config/agent-sandbox/config.json", """
                {"sshAgent": ["work", "deploy"]}
                """);
        PolicyLayer g = load(w, null).layers().get(0);
        assertThat(g.sshAgent()).isTrue();
        assertThat(g.sshAgentKeys()).containsExactly("work", "deploy");
        for (String bad : new String[] {"[]", "[\"\"]", "[\"a\", \"a\"]", "[1]"}) {
            w.write("home/.config/agent-sandbox/config.json", "{\"sshAgent\": " + bad + "}\n");
            assertThatThrownBy(() -> load(w, null)).as(bad).hasMessageContaining("sshAgent")
                    .hasMessageNotContaining("\n");
        }
    }

    @Test
    void Network_Is_A_Boolean_Or_An_Allow_List_Of_Host_Names() {
        CliWorld w = world();
        w.write("home/.config/agent-sandbox/config.json", "{\"network\": {\"allow\": [\"Example.ORG\", \"*.example.net\"]}}\n");
        PolicyLayer g = load(w, null).layers().get(0);
        assertThat(g.network()).isTrue();
        assertThat(g.allowHosts()).containsExactly("example.org", "*.example.net");
        for (String bad : new String[] {"{\"allow\": []}", "{\"allow\": [\"http://x\"]}", "{\"allow\": [\"*\"]}",
            "{\"allow\": [1]}", "{\"allow\": \"x.org\"}", "{\"deny\": [\"x.org\"]}", "\"x.org\""}) {
            w.write("home/.config/agent-sandbox/config.json", "{\"network\": " + bad + "}\n");
            assertThatThrownBy(() -> load(w, null)).as(bad).hasMessageContaining("network")
                    .hasMessageNotContaining("\n");
        }
    }

    @Test
    void Global_Then_Project_With_Every_Key() {
        CliWorld w = world();
        Path global = w.write("home/.config/agent-sandbox/config.json", """
                {"network": false, "commands": {"rm": false}}
                """);
        Path project = w.write("home/project/.agent-sandbox.jsonc", """
                {
                  // the project's policy
                  "filesystem": {
                    "presets": ["!@lint/python", "@git-strict",],
                    "ro": ["~/code/lib", "config/*/secrets.json"],
                    "rw": [".generated/"],
                    "exclude": ["~/.aws", ".env"],
                  },
                  "commands": {"git": "@git", "npm": "~/bin/npm-guard.sh", "curl": true},
                  "network": true,
                  "docker": false,
                }
                """);
        ConfigReader.Loaded l = load(w, null);
        assertThat(l.files()).containsExactly(global, project);
        assertThat(l.layers()).extracting(PolicyLayer::layer).containsExactly(Layer.GLOBAL, Layer.PROJECT);
        PolicyLayer g = l.layers().get(0);
        assertThat(g.source()).isEqualTo(global.toString());
        assertThat(g.network()).isFalse();
        assertThat(g.docker()).isNull();
        assertThat(g.commands()).containsEntry("rm", new CommandRule.Blocked());
        PolicyLayer p = l.layers().get(1);
        assertThat(p.presets()).containsExactly("!@lint/python", "@git-strict");
        assertThat(p.ro()).containsExactly("~/code/lib", "config/*/secrets.json");
        assertThat(p.rw()).containsExactly(".generated/");
        assertThat(p.exclude()).containsExactly("~/.aws", ".env");
        assertThat(p.commands()).containsExactly(
                java.util.Map.entry("git", new CommandRule.Preset("@git")),
                java.util.Map.entry("npm", new CommandRule.Script("~/bin/npm-guard.sh")),
                java.util.Map.entry("curl", new CommandRule.Unwrapped()));
        assertThat(p.network()).isTrue();
        assertThat(p.docker()).isFalse();
    }

    @Test
    void Xdg_Config_Home_Replaces_The_Default_Location() {
        CliWorld w = world();
        w.write("home/.config/agent-sandbox/config.json", "{\"network\": true}");
        Path xdg = w.write("xdg/agent-sandbox/config.jsonc", "{\"network\": false}");
        w.env.put("XDG_CONFIG_HOME", w.root.resolve("xdg").toString());
        assertThat(load(w, null).files()).containsExactly(xdg);
    }

    @Test
    void A_Relative_Xdg_Config_Home_Is_Ignored() {
        CliWorld w = world();
        Path home = w.write("home/.config/agent-sandbox/config.json", "{}");
        w.env.put("XDG_CONFIG_HOME", "relative/dir");
        assertThat(load(w, null).files()).containsExactly(home);
    }

    @Test
    void Explicit_File_Replaces_The_Project_File_But_Not_The_Global_One() {
        CliWorld w = world();
        Path global = w.write("home/.config/agent-sandbox/config.json", "{}");
        w.write("home/project/.agent-sandbox.json", "{\"network\": false}");
        Path other = w.write("home/other.json", "{\"docker\": false}");
        ConfigReader.Loaded l = load(w, "../other.json");
        assertThat(l.files()).containsExactly(global, other);
        assertThat(l.layers().get(1).layer()).isEqualTo(Layer.PROJECT);
        assertThat(l.layers().get(1).network()).isNull();
        assertThat(load(w, "~/other.json").files()).containsExactly(global, other);
    }

    @Test
    void Both_Extensions_In_One_Place_Is_An_Error() {
        CliWorld w = world();
        w.write("home/.config/agent-sandbox/config.json", "{}");
        w.write("home/.config/agent-sandbox/config.jsonc", "{}");
        assertThatThrownBy(() -> load(w, null)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("both config.json and config.jsonc");
    }

    @Test
    void Missing_Explicit_File_Is_An_Error() {
        assertThatThrownBy(() -> load(world(), "nope.json")).isInstanceOf(ConfigException.class)
                .hasMessageContaining("nope.json").hasMessageContaining("does not exist");
    }

    @Test
    void Unreadable_File_Is_An_Error() throws Exception {
        CliWorld w = world();
        Path f = w.write("home/project/.agent-sandbox.json", "{}");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("---------"));
        // root reads anything; the refusal is then only provable end to end as a user
        if (!Files.isReadable(f)) {
            assertThatThrownBy(() -> load(w, null)).isInstanceOf(ConfigException.class)
                    .hasMessageContaining("permission denied");
        } else {
            assertThat(load(w, null).files()).containsExactly(f);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "{\"netwrk\": true}                              | 1:2: unknown key \"netwrk\" (did you mean \"network\"? known here",
        "{\"verbose\": true}                             | 1:2: unknown key \"verbose\" (known here",
        "{\"filesystem\": {\"exlude\": []}}              | 1:17: unknown key \"filesystem.exlude\" (did you mean \"filesystem.exclude\"?",
        "{\"filesystem\": {\"presets\": [\"@lint/pyhton\"]}} | 1:29: filesystem.presets: unknown preset '@lint/pyhton' (did you mean @lint/python? known:",
        "{\"filesystem\": {\"presets\": [\"!@gti\"]}}    | 1:29: filesystem.presets: unknown preset '!@gti' (did you mean !@git? known:",
        "{\"filesystem\": {\"readonly\": []}}            | 1:17: unknown key \"filesystem.readonly\"",
        "{\"network\": \"yes\"}                          | 1:13: network: expected true, false or {\"allow\": [\"example.org\"]}, got string",
        "{\"docker\": 1}                                 | 1:12: docker: expected true or false, got number",
        "{\"filesystem\": []}                            | 1:16: filesystem: expected an object, got array",
        "{\"filesystem\": {\"ro\": \"x\"}}               | 1:23: filesystem.ro: expected an array of strings, got string",
        "{\"filesystem\": {\"rw\": [\"a\", 2]}}          | 1:29: filesystem.rw: expected an array of strings, got number",
        "{\"filesystem\": {\"presets\": [\"@nope\"]}}    | 1:29: filesystem.presets: unknown preset '@nope'",
        "{\"filesystem\": {\"exclude\": [\"a/[bc\"]}}    | 1:29: filesystem.exclude: \"a/[bc\"",
        "{\"commands\": []}                              | 1:14: commands: expected an object, got array",
        "{\"commands\": {\"git\": 3}}                    | 1:22: commands.git: expected \"@git\", true, false or a script path, got number",
        "{\"commands\": {\"git\": \"@nope\"}}            | 1:22: commands.git: unknown command preset '@nope'",
        "{\"commands\": {\"git\": \"false\"}}            | 1:22: commands.git: write false without quotes",
        "{\"commands\": {\"git\": \"\"}}                 | 1:22: commands.git: empty command rule",
        "{\"commands\": {\"a/b\": true}}                 | 1:15: commands.a/b: invalid command name",
        "[]                                              | 1:1: the top level: expected an object, got array",
        "{\"network\": tr                                | 1:13: invalid JSONC",
    })
    void Schema_Errors_Name_File_Position_And_Key(String json, String message) {
        CliWorld w = world();
        Path f = w.write("home/project/.agent-sandbox.json", json.strip());
        assertThatThrownBy(() -> load(w, null)).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(f + ":")
                .hasMessageContaining(message);
    }

    @Test
    void Positions_Are_Reported_On_Later_Lines() {
        CliWorld w = world();
        Path f = w.write("home/project/.agent-sandbox.jsonc", "{\n  // c\n  \"filesystem\": {\n    \"ro\": [true]\n  }\n}");
        assertThatThrownBy(() -> load(w, null)).hasMessageStartingWith(f + ":4:12: filesystem.ro");
    }

    @Test
    void Invalid_Utf8_Is_Reported_With_Its_Position() throws Exception {
        CliWorld w = world();
        Path f = w.root.resolve("home/project/.agent-sandbox.json");
        Files.write(f, new byte[] {'{', '\n', ' ', '"', (byte) 0xc3, '"', ':', '1', '}'});
        assertThatThrownBy(() -> load(w, null)).hasMessageStartingWith(f + ":2:3: not valid UTF-8");
    }

    @Test
    void Files_Over_The_Limit_Are_Refused_Before_Parsing() {
        CliWorld w = world();
        w.write("home/project/.agent-sandbox.json", " ".repeat((int) ConfigReader.MAX_BYTES) + "{}");
        assertThatThrownBy(() -> load(w, null)).hasMessageContaining("too large");
    }

    @Test
    void A_Directory_Is_Not_A_Config_File() {
        CliWorld w = world();
        w.mkdir("home/project/.agent-sandbox.jsonc");
        assertThatThrownBy(() -> load(w, null)).hasMessageContaining("is a directory");
    }
}
