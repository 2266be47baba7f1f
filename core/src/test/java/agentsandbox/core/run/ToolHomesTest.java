// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.Sandbox;
import agentsandbox.core.text.ShellWords;
import agentsandbox.core.TestWorld;
import agentsandbox.core.rules.ToolCatalogue;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ToolHomesTest {
    @TempDir
    Path tmp;

    private static final Set<String> BOTH = Set.of("@base", "@caches", "@agents");

    /** An environment whose PATH holds exactly the given programs. */
    private Environment env(TestWorld w, String... installed) throws IOException {
        Path bin = Files.createDirectories(w.root.resolve("bin"));
        for (String name : installed) {
            Path p = bin.resolve(name);
            Files.writeString(p, "#!/bin/sh\n");
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return new Environment(w.home, w.project, Map.of("PATH", bin.toString()), w.tmp, 1000, "Linux", null);
    }

    private static String started(Environment env, String... command) {
        return StartedTools.started(List.of(command), env, new ArrayList<>()).stream()
                .map(ToolCatalogue.Tool::name).collect(Collectors.joining(", "));
    }

    private static List<String> created(ToolHomes.Setup s, Path home) {
        return s.directories().stream().map(p -> "~/" + home.relativize(p)).toList();
    }

    @Test
    void The_Program_And_The_Programs_After_Prefixes_Are_Started_Tools() throws IOException {
        Environment env = env(new TestWorld(tmp), "mvn", "cargo");
        assertThat(started(env, "mvn", "-q", "package")).isEqualTo("Maven");
        assertThat(started(env, "/usr/bin/env", "CI=1", "timeout", "5", "cargo", "build")).isEqualTo("Cargo");
        assertThat(started(env, "make", "go")).isEmpty(); // an argument is not a program
        assertThat(started(env, "./mvnw", "verify")).isEqualTo("Maven");
    }

    @Test
    void A_Shell_Script_Starts_The_Programs_In_Command_Position() throws IOException {
        Environment env = env(new TestWorld(tmp), "mvn", "cargo", "gradle");
        assertThat(started(env, "bash", "-c", "cd app && ./gradlew build; echo go | npx prettier"))
                .isEqualTo("npm, Gradle");
        assertThat(started(env, "sh", "-lc", "X=$(go env GOPATH); uv sync\nmvn -v")).isEqualTo("Go, Maven, uv");
        assertThat(started(env, "sh", "-c", "echo cargo mvn")).isEmpty();
    }

    @Test
    void An_Agent_Or_An_Interactive_Shell_Also_Starts_Every_Installed_Tool() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Environment env = env(w, "mvn", "cargo");
        assertThat(started(env, "codex", "exec", "hi")).isEqualTo("Codex, Cargo, Maven");
        assertThat(started(env, "bash")).isEqualTo("Cargo, Maven");
        assertThat(started(env, "bash", "-c", "true")).isEmpty();
        Files.writeString(w.project.resolve("gradlew"), "#!/bin/sh\n");
        assertThat(started(env, "claude")).isEqualTo("Claude Code, Cargo, Maven, Gradle");
    }

    @Test
    void A_Fresh_Home_Gets_The_Started_Tools_Directories_And_Nothing_Else() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Environment env = env(w);
        Files.createDirectories(w.home.resolve(".cache"));
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env, List.of("mvn", "package"), List.of(), new ArrayList<>());
        assertThat(created(s, w.home)).containsExactly("~/.m2");
        s = ToolHomes.setup(BOTH, env, List.of("opencode"), List.of(), new ArrayList<>());
        assertThat(created(s, w.home)).containsExactly("~/.config/opencode", "~/.local/share/opencode",
                "~/.local/state/opencode");
        s = ToolHomes.setup(Set.of("@base", "@agents"), env, List.of("mvn"), List.of(), new ArrayList<>());
        assertThat(s.directories()).as("@caches is off").isEmpty();
        s = ToolHomes.setup(BOTH, env, List.of("ls"), List.of(), new ArrayList<>());
        assertThat(s).isEqualTo(ToolHomes.Setup.NONE);
        Files.delete(w.home.resolve(".cache"));
        s = ToolHomes.setup(BOTH, env, List.of("ls"), List.of(), new ArrayList<>());
        assertThat(created(s, w.home)).as("the XDG cache, for any command").containsExactly("~/.cache");
    }

    @Test
    void A_Directory_The_User_Makes_Read_Only_Or_Hidden_Is_Not_Created() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Environment env = env(w);
        PolicyLayer user = TestWorld.flags().ro("~/.m2").exclude("~/.cache/").build();
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env, List.of("mvn"), List.of(user), new ArrayList<>());
        assertThat(s.directories()).isEmpty();
    }

    @Test
    void Applying_Creates_Owner_Only_Directories_With_Their_Parents() throws IOException {
        TestWorld w = new TestWorld(tmp);
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env(w), List.of("pnpm", "i"), List.of(), new ArrayList<>());
        assertThat(ToolHomes.apply(s, w.home)).isEmpty();
        for (String d : List.of(".local", ".local/share", ".local/share/pnpm", ".local/share/pnpm/store", ".cache")) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(w.home.resolve(d))))
                    .as(d).isEqualTo("rwx------");
        }
    }

    @Test
    void Claude_Config_Moves_Into_Its_Directory_Behind_A_Relative_Symlink() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Path config = Files.writeString(w.home.resolve(".claude.json"), "{\"numStartups\": 3}");
        Object inode = Files.getAttribute(config, "unix:ino");
        List<String> notes = new ArrayList<>();
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env(w), List.of("claude"), List.of(), notes);
        assertThat(s.claude()).isEqualTo(ToolHomes.ClaudeStep.MOVE_AND_LINK);
        assertThat(String.join("\n", notes)).contains("moves to " + w.home.resolve(".claude/.claude.json"));
        assertThat(Files.exists(config, LinkOption.NOFOLLOW_LINKS)).as("planning changes nothing").isTrue();
        assertThat(Files.isSymbolicLink(config)).isFalse();

        assertThat(ToolHomes.apply(s, w.home)).isEmpty();
        assertThat(Files.readSymbolicLink(config)).isEqualTo(Path.of(".claude/.claude.json"));
        Path moved = w.home.resolve(".claude/.claude.json");
        assertThat(Files.readString(moved)).isEqualTo("{\"numStartups\": 3}");
        assertThat(Files.getAttribute(moved, "unix:ino")).as("the same file, not a copy").isEqualTo(inode);
        try (var left = Files.list(w.home)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(
                    "project", ".claude", ".claude.json", ".local", ".cache");
        }
        assertThat(ToolHomes.setup(BOTH, env(w), List.of("claude"), List.of(), new ArrayList<>()).claude())
                .as("a second run finds the symlink").isEqualTo(ToolHomes.ClaudeStep.NONE);
    }

    @Test
    void A_Fresh_Home_Gets_A_Symlink_For_The_Config_Claude_Code_Will_Write() throws IOException {
        TestWorld w = new TestWorld(tmp);
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env(w), List.of("claude", "-p", "hi"), List.of(), new ArrayList<>());
        assertThat(s.claude()).isEqualTo(ToolHomes.ClaudeStep.LINK_NEW);
        assertThat(created(s, w.home)).containsExactly("~/.cache", "~/.claude", "~/.local/state/claude",
                "~/.local/share/claude", "~/.local/share/claude/versions");
        assertThat(ToolHomes.apply(s, w.home)).isEmpty();
        assertThat(Files.readSymbolicLink(w.home.resolve(".claude.json"))).isEqualTo(Path.of(".claude/.claude.json"));
        assertThat(Files.isDirectory(w.home.resolve(".claude"))).isTrue();
    }

    @Test
    void Two_Configs_Are_Left_Alone_And_Said_So() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.writeString(w.home.resolve(".claude.json"), "{}");
        Files.createDirectories(w.home.resolve(".claude"));
        Files.writeString(w.home.resolve(".claude/.claude.json"), "{\"other\": 1}");
        List<String> notes = new ArrayList<>();
        ToolHomes.Setup s = ToolHomes.setup(BOTH, env(w), List.of("claude"), List.of(), notes);
        assertThat(s.claude()).isEqualTo(ToolHomes.ClaudeStep.NONE);
        assertThat(String.join("\n", notes)).contains("exists too");
    }

    @Test
    void The_Plan_Binds_A_Directory_It_Will_Create_And_Keeps_The_Config_Rule_Off_The_Symlink() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.writeString(w.home.resolve(".claude.json"), "{}");
        Plan p = Sandbox.plan(Policy.builder().build(), env(w), List.of("claude"));
        String line = String.join(" ", p.argv());
        assertThat(line).contains(w.home.resolve(".claude") + " " + w.home.resolve(".claude"));
        assertThat(line).doesNotContain(w.home.resolve(".claude.json").toString());
        assertThat(line).contains("--setenv CLAUDE_CONFIG_DIR " + w.home.resolve(".claude"));
        Plan other = Sandbox.plan(Policy.builder().build(), env(w), List.of("ls"));
        assertThat(String.join(" ", other.argv())).as("the config is not linked yet").doesNotContain("CLAUDE_CONFIG_DIR");
        assertThat(Files.exists(w.home.resolve(".claude"))).as("a plan creates nothing").isFalse();
    }

    /** The table of docs/presets.md, linked from the README, is the one the code uses. */
    @Test
    void The_Presets_Doc_Table_Lists_Exactly_The_Tools_And_Paths_Of_The_Code() throws IOException {
        String readme = Files.readString(Path.of("..", "docs", "presets.md"));
        int start = readme.indexOf("<!-- tool-table:start -->\n");
        int end = readme.indexOf("<!-- tool-table:end -->");
        assertThat(start).as("docs/presets.md has the tool table").isNotNegative();
        StringBuilder expected = new StringBuilder("| tool | commands | preset | rw | ro | hidden |\n|---|---|---|---|---|---|\n");
        for (ToolCatalogue.Tool t : ToolCatalogue.TOOLS) {
            expected.append("| ").append(t.name()).append(" | ").append(words(t.commands(), ""))
                    .append(" | `").append(t.preset()).append("` | ").append(words(t.grants(), "~/"))
                    .append(" | ").append(words(t.readOnly(), "~/")).append(" | ").append(words(t.hidden(), "~/"))
                    .append(" |\n");
        }
        String table = readme.substring(start + "<!-- tool-table:start -->\n".length(), end);
        assertThat(table.replaceAll(" +", " ")).isEqualTo(expected.toString().replaceAll(" +", " "));
    }

    /** The pass-through table of docs/presets.md names exactly the files the code passes through. */
    @Test
    void The_Presets_Doc_Lists_Exactly_The_Files_That_Pass_Through() throws IOException {
        String doc = Files.readString(Path.of("..", "docs", "presets.md"));
        int start = doc.indexOf("<!-- pass-through-table:start -->\n");
        int end = doc.indexOf("<!-- pass-through-table:end -->");
        assertThat(start).as("docs/presets.md has the pass-through table").isNotNegative();
        List<String> files = doc.substring(start, end).lines().filter(l -> l.startsWith("| `~/"))
                .map(l -> l.substring(5, l.indexOf('`', 5))).toList();
        assertThat(files).isEqualTo(ToolCatalogue.PASSED_THROUGH);
    }

    private static String words(List<String> items, String prefix) {
        return items.stream().map(i -> "`" + prefix + i + "`").collect(Collectors.joining(" "));
    }

    @Test
    void A_Duration_Is_Digits_And_Dots_With_An_Optional_Unit() {
        for (String yes : List.of("5", "0.5", "10s", "3m", "2h", "1d", ".", "1.5s")) {
            assertThat(StartedTools.isDuration(yes)).as(yes).isTrue();
        }
        for (String no : List.of("", "s", "5x", "5ss", "-5", "5 s", "m5", "cargo", "1e3")) {
            assertThat(StartedTools.isDuration(no)).as(no).isFalse();
        }
    }

    /**
     * The script's words come out as the shell-ish split it replaced did (a regex: after
     * {@code ; & | ( ` {}, before {@code ; & | ) ` }}, at whitespace, a line break as
     * {@code ;}), stripped and without empty ones as they are read, for every string of
     * the characters that matter up to 5 long.
     */
    @Test
    void A_Scripts_Words_Split_As_The_Regex_Did_For_Every_Short_String() {
        java.util.regex.Pattern reference = java.util.regex.Pattern.compile("(?<=[;&|(`{])|(?=[;&|)`}])|\\s+");
        char[] alphabet = {'a', ';', '&', '|', '(', ')', '`', '{', '}', ' ', '\n', '\t', '$'};
        int checked = 0;
        for (int length = 0; length <= 5; length++) {
            int[] digits = new int[length];
            while (true) {
                StringBuilder b = new StringBuilder();
                for (int d : digits) {
                    b.append(alphabet[d]);
                }
                String script = b.toString();
                List<String> expected = new ArrayList<>();
                for (String piece : reference.split(script.replace('\n', ';'))) {
                    if (!piece.strip().isEmpty()) {
                        expected.add(piece.strip()); // as the words are read: stripped, empty ones left out
                    }
                }
                List<String> actual = new ArrayList<>();
                for (String token : ShellWords.scriptTokens(script)) {
                    if (!token.strip().isEmpty()) {
                        actual.add(token.strip());
                    }
                }
                assertThat(actual).as("[%s]", script).isEqualTo(expected);
                checked++;
                int k = length - 1;
                while (k >= 0 && ++digits[k] == alphabet.length) {
                    digits[k--] = 0;
                }
                if (k < 0) {
                    break;
                }
            }
        }
        assertThat(checked).isEqualTo(402_234);
    }

    @Test
    void Words_In_A_Shell_Script_Are_Found_After_Operators_And_Without_Their_Quotes() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Environment env = env(w, "cargo", "npm", "go");
        assertThat(started(env, "sh", "-c", "cd x && \"cargo\" build\n'npm' test | (go vet)").split(", "))
                .containsExactlyInAnyOrder("Cargo", "npm", "Go");
        assertThat(started(env, "sh", "-c", "echo cargo npm go")).isEmpty();
    }
}
