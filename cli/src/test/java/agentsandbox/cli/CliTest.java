// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CliTest {
    @TempDir
    Path dir;

    private static void assertOneCleanErrorLine(CliWorld.Result r, String... mentions) {
        assertThat(r.status()).as("exit status").isEqualTo(1);
        assertThat(r.out()).as("stdout").isEmpty();
        assertThat(r.err()).startsWith("agent-sandbox: ").endsWith("\n");
        assertThat(r.err().strip()).as("one line").doesNotContain("\n");
        assertThat(r.err()).doesNotContain("Exception").doesNotContainPattern("at [\\w.$]+\\(\\w+\\.java:\\d+\\)");
        for (String m : mentions) {
            assertThat(r.err()).contains(m);
        }
    }

    static Stream<Arguments> badInputs() {
        return Stream.<Arguments>of(
                bad("unknown flag", w -> {}, "--netwrk", "--", "true"),
                bad("flag without value", w -> {}, "--cwd"),
                bad("bad boolean", w -> {}, "--network=yes", "true"),
                bad("flag without command", w -> {}, "--network=false"),
                bad("bad cmd rule", w -> {}, "--cmd", "git=@nope", "true"),
                bad("missing -c file", w -> {}, "-c", "nope.json", "true"),
                bad("missing --cwd dir", w -> {}, "-C", "nowhere", "true"),
                bad("truncated json", w -> w.write("home/project/.agent-sandbox.json", "{\"network\": tr"), "true"),
                bad("wrong type", w -> w.write("home/project/.agent-sandbox.json", "{\"network\": \"no\"}"), "true"),
                bad("unknown key", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"filesystem\": {\"readonly\": []}}"), "true"),
                bad("unknown preset", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"filesystem\": {\"presets\": [\"@nope\"]}}"), "true"),
                bad("bad glob", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"filesystem\": {\"ro\": [\"src/[abc\"]}}"), "true"),
                bad("bad command value", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"commands\": {\"git\": 3}}"), "true"),
                bad("both json and jsonc", w -> {
                    w.write("home/project/.agent-sandbox.json", "{}");
                    w.write("home/project/.agent-sandbox.jsonc", "{}");
                }, "true"),
                bad("directory instead of file", w -> w.mkdir("home/project/.agent-sandbox.json"), "true"),
                bad("huge file", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"filesystem\": {\"ro\": [" + "\"x\",".repeat(400_000) + "\"x\"]}}"), "true"),
                bad("non-utf8 bytes", w -> {
                    try {
                        Files.write(w.root.resolve("home/project/.agent-sandbox.json"),
                                new byte[] {'{', '"', (byte) 0xff, (byte) 0xfe, '"', ':', '1', '}'});
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, "true"),
                bad("deep nesting", w -> w.write("home/project/.agent-sandbox.json",
                        "[".repeat(100_000)), "true"),
                bad("reserved path", w -> {}, "--ro", "/run/agent-sandbox/x", "true"),
                bad("newline in a flag", w -> {}, "--bogus\nflag", "true"),
                bad("newline in a config path", w -> {}, "-c", "no\nsuch.json", "true"),
                bad("cwd excluded", w -> {}, "--exclude", ".", "true"),
                bad("rule in /proc", w -> {}, "--exclude", "/proc/self/environ", "true"),
                bad("rule in /proc in config", w -> w.write("home/project/.agent-sandbox.json",
                        "{\"filesystem\": {\"exclude\": [\"/proc/self/environ\"]}}"), "true"),
                bad("rule replacing /run", w -> {}, "--rw", "/run", "true"),
                bad("rule replacing /dev", w -> {}, "--exclude", "/dev", "true"),
                bad("rule on / itself", w -> {}, "--rw", "/", "true"),
                bad("working directory /", w -> {}, "-C", "/", "true"));
    }

    private static Arguments bad(String name, Consumer<CliWorld> setup, String... args) {
        return Arguments.of(name, setup, args);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badInputs")
    void Bad_Input_Ends_In_One_Clean_Line_And_Exit_1(String name, Consumer<CliWorld> setup, String[] args) {
        CliWorld w = new CliWorld(dir);
        setup.accept(w);
        assertOneCleanErrorLine(w.run(args));
    }

    @Test
    void Config_Errors_Name_The_File_Line_Column_And_Key() {
        CliWorld w = new CliWorld(dir);
        Path f = w.write("home/project/.agent-sandbox.json", "{\n  \"filesystem\": {\n    \"ro\": [1]\n  }\n}\n");
        assertOneCleanErrorLine(w.run("true"), f.toString(), ":3:", "filesystem.ro");
    }

    @Test
    void Rules_That_Would_Change_The_Sandboxs_Own_File_Systems_Are_Refused_Naming_The_Rule_And_Why()
            throws java.io.IOException {
        CliWorld w = new CliWorld(dir);
        assertThat(w.run("--exclude", "/proc/self/environ", "true").err()).isEqualTo("agent-sandbox: --exclude"
                + " /proc/self/environ: /proc in the sandbox is its own process file system, which rules cannot"
                + " change (host paths there name host processes; /proc/self is agent-sandbox itself) (remove the"
                + " rule)\n");
        Path cfg = w.write("home/project/.agent-sandbox.json", "{\"filesystem\": {\"ro\": [\"/proc/*/status\"]}}");
        assertThat(w.run("true").err()).startsWith("agent-sandbox: " + cfg + ": rule 'ro /proc/*/status' lies in"
                + " /proc: /proc in the sandbox is its own process file system");
        java.nio.file.Files.delete(cfg);
        assertThat(w.run("--ro", "/run", "true").err()).isEqualTo("agent-sandbox: --ro /run: /run in the sandbox is"
                + " a fresh file system of its own (holding its runtime at /run/agent-sandbox), which rules can add"
                + " host paths below but not replace (name the paths below /run that the command needs instead)\n");
        assertThat(w.run("-C", "/", "true").err()).isEqualTo("agent-sandbox: the working directory is /, and preset"
                + " @base makes the working directory writable: here, the whole machine (cd into a project"
                + " directory first, or name one with -C DIR)\n");
    }

    @Test
    void Read_Only_Root_Rule_Changes_Nothing_And_Covers_Nothing() {
        CliWorld w = new CliWorld(dir);
        CliWorld.Result with = w.run("--ro", "/", "--dry-run", "true");
        assertThat(with.status()).isZero();
        assertThat(w.normalize(with.out())).isEqualTo(w.normalize(w.run("--dry-run", "true").out()));
    }

    @Test
    void Working_Directory_Root_Is_Fine_Without_Base() {
        CliWorld w = new CliWorld(dir);
        Path cfg = w.write("cfg.json", "{\"filesystem\": {\"presets\": [\"!@base\"]}}");
        CliWorld.Result r = w.run("-C", "/", "-c", cfg.toString(), "--dry-run", "true");
        assertThat(r.status()).as(r.err()).isZero();
        assertThat(r.out()).endsWith(" --chdir / -- true\n");
    }

    @Test
    void Bare_Boolean_Before_A_Boolean_Word_Prints_One_Hint_Line_And_Runs_That_Word() {
        CliWorld.Result r = new CliWorld(dir).run("--dry-run", "--network", "false", "claude");
        assertThat(r.status()).isZero();
        assertThat(r.err()).isEqualTo("agent-sandbox: --network false runs the command \"false\" (a flag takes a"
                + " BOOL only after =); did you mean --network=false?\n");
        assertThat(r.out()).endsWith(" -- false claude\n");
    }

    /**
     * A project whose repository leads to more git dirs than agent-sandbox looks at: those past
     * the bound would get neither read-only config and hooks nor a watch, so no run starts
     * there, with one line that says why and what to do; at the bound, it starts.
     */
    @Test
    void A_Repository_Leading_To_More_Git_Dirs_Than_Are_Protected_Does_Not_Start() {
        CliWorld w = new CliWorld(dir);
        w.write("home/project/.git/HEAD", "ref: refs/heads/main\n");
        StringBuilder modules = new StringBuilder();
        // the project's own git dir and this many nested ones: exactly the bound
        for (int i = 1; i < agentsandbox.core.git.GitDirs.MAX_DIRS; i++) {
            modules.append("[submodule \"s").append(i).append("\"]\n\tpath = s").append(i).append('\n');
            w.write("home/project/s" + i + "/.git/HEAD", "ref: refs/heads/main\n");
        }
        w.write("home/project/.gitmodules", modules.toString());
        CliWorld.Result atTheBound = w.run("--dry-run", "true");
        assertThat(atTheBound.err()).isEmpty();
        assertThat(atTheBound.status()).isZero();

        modules.append("[submodule \"one-more\"]\n\tpath = one-more\n");
        w.write("home/project/one-more/.git/HEAD", "ref: refs/heads/main\n");
        w.write("home/project/.gitmodules", modules.toString());
        CliWorld.Result past = w.run("--dry-run", "true");
        assertThat(past.status()).isEqualTo(1);
        assertThat(past.out()).isEmpty();
        assertThat(past.err()).isEqualTo("agent-sandbox: the repository at " + w.project + " leads to more than "
                + agentsandbox.core.git.GitDirs.MAX_DIRS + " git dirs (submodules, nested repositories): agent-sandbox"
                + " cannot protect the config and hooks of the rest (run it in a part of the project with fewer"
                + " repositories)\n");
    }

    @Test
    void No_Arguments_Is_A_Usage_Error_With_The_Usage_On_Stderr() {
        CliWorld.Result r = new CliWorld(dir).run();
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).contains("agent-sandbox [flags]").contains("--dry-run");
        assertThat(r.out()).isEmpty();
    }

    @Test
    void Version_Prints_The_Version() {
        CliWorld.Result r = new CliWorld(dir).run("--version");
        assertThat(r.status()).isZero();
        assertThat(r.out()).matches("agent-sandbox \\d+\\.\\d+\\.\\d+\\n(?s).*");
        assertThat(r.out()).contains("\ncommit: unknown").contains("\njava runtime: " + Runtime.version())
                .contains("\nbwrap: not found on PATH\n");
    }

    @Test
    void Check_Outside_A_Sandbox_Says_So_And_Exits_1() {
        CliWorld w = new CliWorld(dir);
        CliWorld.Result r = w.run("check");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.out()).isEqualTo("outside sandbox\n");
        CliWorld.Result q = w.run("--check", "-q");
        assertThat(q.status()).isEqualTo(1);
        assertThat(q.out()).isEmpty();
    }

    @Test
    void Debug_Explains_Config_Merge_And_Every_Mounted_Path_With_Its_Rule() {
        CliWorld w = new CliWorld(dir);
        Path cfg = w.write("home/project/.agent-sandbox.json", "{\"filesystem\": {\"exclude\": [\".env\"]}}");
        w.write("home/project/.env", "SECRET=1");
        w.write("home/project/biome.json", "{}");
        CliWorld.Result r = w.run("--debug", "--ro", "~", "--dry-run", "true");
        assertThat(r.status()).isZero();
        String e = r.err();
        assertThat(e).contains("agent-sandbox: config").contains(cfg.toString());
        assertThat(e).contains("agent-sandbox: merge");
        assertThat(e).containsPattern("exclude +" + java.util.regex.Pattern.quote(w.project + "/.env")
                + " +<- project " + java.util.regex.Pattern.quote(cfg.toString()));
        assertThat(e).containsPattern("ro +" + java.util.regex.Pattern.quote(w.project + "/biome.json")
                + " +<- preset @lint/ts");
        assertThat(e).containsPattern("rw +" + java.util.regex.Pattern.quote(w.project.toString())
                + " +<- preset @base");
        assertThat(e).contains("agent-sandbox: bwrap");
        // debug never changes stdout
        assertThat(w.normalize(r.out())).isEqualTo(w.normalize(w.run("--ro", "~", "--dry-run", "true").out()));
    }

    @Test
    void Cwd_Flag_Changes_Config_Lookup_And_Working_Directory() {
        CliWorld w = new CliWorld(dir);
        Path other = w.mkdir("home/other");
        w.write("home/other/.agent-sandbox.json", "{\"network\": false}");
        CliWorld.Result r = w.run("-C", "../other", "--dry-run", "pwd");
        assertThat(r.status()).isZero();
        assertThat(r.out()).doesNotContain("--share-net").contains("--chdir " + other + " -- pwd");
    }

    @Test
    void Flags_After_The_Command_Belong_To_The_Command() {
        CliWorld.Result r = new CliWorld(dir).run("--dry-run", "npm", "install", "--save-dev", "-h");
        assertThat(r.status()).isZero();
        assertThat(r.out()).endsWith(" -- npm install --save-dev -h\n");
    }

    @Test
    void Dash_Dash_Check_Runs_A_Program_Named_Check() {
        CliWorld.Result r = new CliWorld(dir).run("--dry-run", "--", "check");
        assertThat(r.status()).isZero();
        assertThat(r.out()).endsWith(" -- check\n");
    }
}
