// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The filesystem model under real bwrap (spec sections 2, 3, 4): the read-only host, the
 * three access levels, where rules come from, how patterns resolve, which rule wins, the
 * protected config files, the private temp dir and the reserved runtime. Every write
 * that is attempted is checked on the host side as well.
 */
class FilesystemIT {

    /** The name of the per-run private directory in the host temp dir. */
    private static final Pattern RUNTIME_DIR = Pattern.compile("(?<=/run/)[0-9a-f]{16}|(?<=/agent-sandbox-[0-9]{1,10}/)[0-9a-f]{16}");

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ defaults

    @Test
    void Host_Root_Is_Read_Only_Even_Where_The_User_May_Write_On_The_Host() {
        Path outside = sandbox.mkdirs(sandbox.world().resolve("outside"));
        Path kept = sandbox.write(outside.resolve("kept"), "original\n");
        sandbox.runOnHost("sh", "-c", "echo host > ../outside/host-write").succeeds();

        sandbox.attempts(List.of(),
                        "echo x > ../outside/new",
                        "echo x >> ../outside/kept",
                        "rm ../outside/kept",
                        "mv ../outside/kept ../outside/moved",
                        "mkdir ../outside/dir",
                        "chmod 777 ../outside/kept",
                        "ln -s kept ../outside/link",
                        "touch /usr/agent-sandbox-probe")
                .run().succeeds().stdoutIs("""
                        echo x > ../outside/new: Read-only file system
                        echo x >> ../outside/kept: Read-only file system
                        rm ../outside/kept: Read-only file system
                        mv ../outside/kept ../outside/moved: Read-only file system
                        mkdir ../outside/dir: Read-only file system
                        chmod 777 ../outside/kept: Read-only file system
                        ln -s kept ../outside/link: Read-only file system
                        touch /usr/agent-sandbox-probe: Read-only file system
                        """);

        assertThat(outside.resolve("host-write")).as("the test user may write there on the host").exists();
        assertThat(sandbox.read(kept)).isEqualTo("original\n");
        assertThat(outside).isDirectoryNotContaining(p -> !p.getFileName().toString().matches("kept|host-write"));
        assertThat(Path.of("/usr/agent-sandbox-probe")).doesNotExist();
    }

    @Test
    void Project_Is_Writable_And_Every_Change_Reaches_The_Host() {
        sandbox.write("existing", "old\n");
        sandbox.write("doomed", "bye\n");
        sandbox.write("renamed-from", "moving\n");

        sandbox.attempts(List.of(),
                        "echo new > created",
                        "echo more >> existing",
                        "rm doomed",
                        "mkdir -p dir/sub && echo deep > dir/sub/file",
                        "mv renamed-from renamed-to")
                .run().succeeds().stdoutIs("""
                        echo new > created: ok
                        echo more >> existing: ok
                        rm doomed: ok
                        mkdir -p dir/sub && echo deep > dir/sub/file: ok
                        mv renamed-from renamed-to: ok
                        """);

        assertThat(sandbox.read(sandbox.project("created"))).isEqualTo("new\n");
        assertThat(sandbox.read(sandbox.project("existing"))).isEqualTo("old\nmore\n");
        assertThat(sandbox.project("doomed")).doesNotExist();
        assertThat(sandbox.read(sandbox.project("dir/sub/file"))).isEqualTo("deep\n");
        assertThat(sandbox.project("renamed-from")).doesNotExist();
        assertThat(sandbox.read(sandbox.project("renamed-to"))).isEqualTo("moving\n");
    }

    @Test
    void Home_Is_Read_Only_By_Default() {
        sandbox.write(sandbox.home(".bashrc"), "# host\n");
        sandbox.mkdirs(sandbox.home("code"));

        sandbox.writeProbe(List.of(), "~", "~/.bashrc", "~/code").run().succeeds().stdoutIs("""
                ~: Read-only file system
                ~/.bashrc: Read-only file system
                ~/code: Read-only file system
                """);
        sandbox.attempts(List.of(), "rm ~/.bashrc", "mkdir ~/new").run().succeeds().stdoutIs("""
                rm ~/.bashrc: Read-only file system
                mkdir ~/new: Read-only file system
                """);

        assertThat(sandbox.probeLanded(sandbox.home())).isFalse();
        assertThat(sandbox.read(sandbox.home(".bashrc"))).isEqualTo("# host\n");
        assertThat(sandbox.probeLanded(sandbox.home("code"))).isFalse();
        assertThat(sandbox.home("new")).doesNotExist();
    }

    // ------------------------------------------------------------------ where rules come from

    /** The places a rule can be written; each must give the same sandbox. */
    enum RuleSource {
        FLAGS, PROJECT_JSON, PROJECT_JSONC, CONFIG_FLAG, GLOBAL_XDG_CONFIG_HOME, GLOBAL_DOT_CONFIG
    }

    /** The rules of {@link #Rules_Apply_The_Same_From_Every_Source}, as JSONC with comments and trailing commas. */
    private static final String RULES_JSONC = """
            // the same rules as the flags
            {
              "filesystem": {
                /* relative, home and absolute patterns */
                "ro": ["docs", "%s",],
                "rw": ["~/notes"], // home is read-only otherwise
                "exclude": [
                  "secrets",
                ],
              },
            }
            """;

    @ParameterizedTest
    @EnumSource(RuleSource.class)
    void Rules_Apply_The_Same_From_Every_Source(RuleSource source) {
        sandbox.mkdirs("docs");
        sandbox.mkdirs("src");
        sandbox.mkdirs("vendor/lib");
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.write("secrets/key", "secret\n");
        String vendor = sandbox.project("vendor").toString();
        String config = RULES_JSONC.formatted(vendor);
        List<String> flags = new ArrayList<>();
        Map<String, String> env = Map.of();
        switch (source) {
            case FLAGS -> flags.addAll(List.of("--ro", "docs", "--ro=" + vendor, "--rw", "~/notes",
                    "--exclude=secrets"));
            // rw ~/notes loosens the policy: the user trusts the project config first
            case PROJECT_JSON -> {
                sandbox.write(".agent-sandbox.json", config);
                sandbox.run("trust").succeeds();
            }
            case PROJECT_JSONC -> {
                sandbox.write(".agent-sandbox.jsonc", config);
                sandbox.run("trust").succeeds();
            }
            case CONFIG_FLAG -> {
                sandbox.write(sandbox.world().resolve("policies/strict.json"), config);
                flags.addAll(List.of("-c", "../policies/strict.json"));
            }
            case GLOBAL_XDG_CONFIG_HOME -> {
                sandbox.write(sandbox.world().resolve("xdg/agent-sandbox/config.jsonc"), config);
                env = Map.of("XDG_CONFIG_HOME", sandbox.world().resolve("xdg").toString());
            }
            case GLOBAL_DOT_CONFIG -> sandbox.write(sandbox.home(".config/agent-sandbox/config.json"), config);
        }

        sandbox.writeProbe(flags, "docs", "vendor/lib", "~/notes", "src").env(env).run().succeeds().stdoutIs("""
                docs: Read-only file system
                vendor/lib: Read-only file system
                ~/notes: writable
                src: writable
                """);
        sandbox.command(with(flags, "--", "ls", "-A", "secrets")).env(env).run().succeeds().stdoutIsEmpty();

        assertThat(sandbox.probeLanded(sandbox.project("docs"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("vendor/lib"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("notes"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("src"))).isTrue();
        assertThat(sandbox.read(sandbox.project("secrets/key"))).isEqualTo("secret\n");
    }

    @Test
    void Config_Given_With_C_Replaces_The_Project_Config_But_Not_The_Global_One() {
        sandbox.mkdirs("docs");
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.mkdirs(sandbox.home("global"));
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"rw": ["~/notes"], "ro": ["docs"]}}
                """);
        sandbox.write(sandbox.world().resolve("policies/other.json"), """
                {"filesystem": {"rw": ["docs"]}}
                """);
        sandbox.write(sandbox.world().resolve("xdg/agent-sandbox/config.json"), """
                {"filesystem": {"rw": ["~/global"]}}
                """);

        sandbox.writeProbe(List.of("-c", sandbox.world().resolve("policies/other.json").toString()),
                        "docs", "~/notes", "~/global")
                .env("XDG_CONFIG_HOME", sandbox.world().resolve("xdg").toString())
                .run().succeeds().stdoutIs("""
                        docs: writable
                        ~/notes: Read-only file system
                        ~/global: writable
                        """);

        assertThat(sandbox.probeLanded(sandbox.project("docs"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.home("notes"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("global"))).isTrue();
    }

    @Test
    void Layers_Flags_Beat_Project_Beat_Global() {
        for (String dir : List.of("a", "b", "c", "d", "e")) {
            sandbox.mkdirs(sandbox.home(dir));
        }
        sandbox.write(sandbox.world().resolve("xdg/agent-sandbox/config.json"), """
                {"filesystem": {"rw": ["~/a", "~/b", "~/d"], "ro": ["~/e"]}}
                """);
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"ro": ["~/a", "~/c"], "rw": ["~/b", "~/e"]}}
                """);
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        sandbox.writeProbe(List.of("--ro", "~/b", "--rw", "~/c"), "~/a", "~/b", "~/c", "~/d", "~/e")
                .env("XDG_CONFIG_HOME", sandbox.world().resolve("xdg").toString())
                .run().succeeds().stdoutIs("""
                        ~/a: Read-only file system
                        ~/b: Read-only file system
                        ~/c: writable
                        ~/d: writable
                        ~/e: writable
                        """);

        assertThat(sandbox.probeLanded(sandbox.home("a"))).as("global rw, project ro").isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("b"))).as("global rw, project rw, flag ro").isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("c"))).as("project ro, flag rw").isTrue();
        assertThat(sandbox.probeLanded(sandbox.home("d"))).as("global rw only").isTrue();
        assertThat(sandbox.probeLanded(sandbox.home("e"))).as("global ro, project rw").isTrue();
    }

    @Test
    void Relative_Config_Paths_Resolve_Against_The_Working_Directory_Not_The_Config_File() {
        sandbox.mkdirs("docs");
        sandbox.mkdirs("policies/docs");
        sandbox.mkdirs("sub/docs");
        sandbox.write("policies/team.json", """
                {"filesystem": {"ro": ["docs"]}}
                """);

        sandbox.writeProbe(List.of("-c", "policies/team.json"), "docs", "policies/docs")
                .run().succeeds().stdoutIs("""
                        docs: Read-only file system
                        policies/docs: writable
                        """);
        sandbox.writeProbe(List.of("-C", "sub", "-c", "../policies/team.json"), "docs")
                .run().succeeds().stdoutIs("""
                        docs: Read-only file system
                        """);

        assertThat(sandbox.probeLanded(sandbox.project("docs"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("policies/docs"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("sub/docs"))).isFalse();
    }

    // ------------------------------------------------------------------ patterns

    @Test
    void Star_Matches_Exactly_One_Path_Segment() {
        for (String file : List.of("config/a/secrets.json", "config/b/secrets.json", "config/.hidden/secrets.json",
                "config/secrets.json", "config/a/deep/secrets.json", "config/a/other.json")) {
            sandbox.write(file, "{}\n");
        }

        sandbox.writeProbe(List.of("--ro", "config/*/secrets.json"),
                        "config/a/secrets.json", "config/b/secrets.json", "config/.hidden/secrets.json",
                        "config/secrets.json", "config/a/deep/secrets.json", "config/a/other.json")
                .run().succeeds().stdoutIs("""
                        config/a/secrets.json: Read-only file system
                        config/b/secrets.json: Read-only file system
                        config/.hidden/secrets.json: Read-only file system
                        config/secrets.json: writable
                        config/a/deep/secrets.json: writable
                        config/a/other.json: writable
                        """);

        assertThat(sandbox.read(sandbox.project("config/a/secrets.json"))).isEqualTo("{}\n");
        assertThat(sandbox.read(sandbox.project("config/b/secrets.json"))).isEqualTo("{}\n");
        assertThat(sandbox.read(sandbox.project("config/.hidden/secrets.json"))).isEqualTo("{}\n");
        assertThat(sandbox.probeLanded(sandbox.project("config/secrets.json"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("config/a/deep/secrets.json"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("config/a/other.json"))).isTrue();
    }

    @Test
    void Question_Mark_And_Brackets_Match_One_Character() {
        for (String file : List.of("logs/app1.log", "logs/app2.log", "logs/app10.log", "logs/app.log",
                "data/a.txt", "data/b.txt", "data/c.txt", "data/ab.txt")) {
            sandbox.write(file, "host\n");
        }

        sandbox.writeProbe(List.of("--ro", "logs/app?.log", "--ro", "data/[ab].txt"),
                        "logs/app1.log", "logs/app2.log", "logs/app10.log", "logs/app.log",
                        "data/a.txt", "data/b.txt", "data/c.txt", "data/ab.txt")
                .run().succeeds().stdoutIs("""
                        logs/app1.log: Read-only file system
                        logs/app2.log: Read-only file system
                        logs/app10.log: writable
                        logs/app.log: writable
                        data/a.txt: Read-only file system
                        data/b.txt: Read-only file system
                        data/c.txt: writable
                        data/ab.txt: writable
                        """);

        for (String file : List.of("logs/app1.log", "logs/app2.log", "data/a.txt", "data/b.txt")) {
            assertThat(sandbox.read(sandbox.project(file))).as(file).isEqualTo("host\n");
        }
        for (String file : List.of("logs/app10.log", "logs/app.log", "data/c.txt", "data/ab.txt")) {
            assertThat(sandbox.probeLanded(sandbox.project(file))).as(file).isTrue();
        }
    }

    @Test
    void Missing_Paths_And_Globs_That_Match_Nothing_Are_Skipped_Silently() {
        sandbox.mkdirs("docs");
        sandbox.symlink(sandbox.project("dangling"), "no-such-target");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {
                  "ro": ["missing", "~/missing", "/no/such/path", "docs/*.md"],
                  "rw": ["gone/*/x", "~/.nothing/[ab]"],
                  "exclude": ["dangling", "nope?"]
                }}
                """);

        sandbox.run("--ro", "not-here", "--rw", "~/not-here", "--exclude", "/no/such/dir",
                        "--ro", "nothing/*/x", "--exclude", "docs/?.txt", "--", "sh", "-c", "echo ran > ran")
                .succeeds().stdoutIsEmpty().stderrIsEmpty();

        assertThat(sandbox.read(sandbox.project("ran"))).isEqualTo("ran\n");
        assertThat(sandbox.project("missing")).doesNotExist();
        assertThat(sandbox.project("not-here")).doesNotExist();
        assertThat(sandbox.project("dangling")).isSymbolicLink();
        assertThat(sandbox.project("no-such-target")).doesNotExist();
    }

    // ------------------------------------------------------------------ exclude

    @Test
    void Excluded_Directory_Appears_Empty_And_Its_Contents_Are_Not_Found() {
        sandbox.write("secrets/key", "secret\n");
        sandbox.write("secrets/sub/deeper", "deeper secret\n");
        List<String> exclude = List.of("--exclude", "secrets");

        sandbox.command(with(exclude, "--", "ls", "-A", "secrets")).run().succeeds().stdoutIsEmpty();
        sandbox.attempts(exclude,
                        "test -d secrets",
                        "cat secrets/key",
                        "cat secrets/sub/deeper",
                        "cat ./secrets/../secrets/key",
                        "cat /proc/self/root$PWD/secrets/key",
                        "cat ../project/secrets/key",
                        "ln -s secrets alias && cat alias/key")
                .run().succeeds().stdoutIs("""
                        test -d secrets: ok
                        cat secrets/key: No such file or directory
                        cat secrets/sub/deeper: No such file or directory
                        cat ./secrets/../secrets/key: No such file or directory
                        cat /proc/self/root$PWD/secrets/key: No such file or directory
                        cat ../project/secrets/key: No such file or directory
                        ln -s secrets alias && cat alias/key: No such file or directory
                        """);
        sandbox.run(with(exclude, "--", "sh", "-c",
                "echo overwritten > secrets/key; rm -rf secrets/sub; rm -rf secrets; true")).succeeds();

        assertThat(sandbox.read(sandbox.project("secrets/key"))).isEqualTo("secret\n");
        assertThat(sandbox.read(sandbox.project("secrets/sub/deeper"))).isEqualTo("deeper secret\n");
    }

    @Test
    void Excluded_File_Exists_But_Cannot_Be_Read_Or_Changed() {
        sandbox.write(".env", "API_KEY=hunter2\n");
        sandbox.mkdirs("sub");
        List<String> exclude = List.of("--exclude", ".env");

        sandbox.attempts(exclude,
                        "test -e .env",
                        "cat .env",
                        "cat sub/../.env",
                        "cat /proc/self/root$PWD/.env",
                        "ln -s .env alias && cat alias",
                        "cp .env copy",
                        "ln .env hardlink",
                        "chmod 644 .env",
                        "echo API_KEY=changed > .env")
                .run().succeeds().stdoutIs("""
                        test -e .env: ok
                        cat .env: Permission denied
                        cat sub/../.env: Permission denied
                        cat /proc/self/root$PWD/.env: Permission denied
                        ln -s .env alias && cat alias: Permission denied
                        cp .env copy: Permission denied
                        ln .env hardlink: Invalid cross-device link
                        chmod 644 .env: Read-only file system
                        echo API_KEY=changed > .env: Read-only file system
                        """);

        assertThat(sandbox.read(sandbox.project(".env"))).isEqualTo("API_KEY=hunter2\n");
        assertThat(sandbox.project("copy")).doesNotExist();
        assertThat(sandbox.project("hardlink")).doesNotExist();
    }

    // ------------------------------------------------------------------ symlinks

    @Test
    void A_Rule_On_A_Symlink_Applies_To_Its_Target() {
        sandbox.mkdirs("real");
        sandbox.symlink(sandbox.project("link"), "real");
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.symlink(sandbox.home("notes-link"), "notes");
        sandbox.write("secret.txt", "secret\n");
        sandbox.symlink(sandbox.project("secret-link"), "secret.txt");

        List<String> flags = List.of("--ro", "link", "--rw", "~/notes-link", "--exclude", "secret-link");
        sandbox.writeProbe(flags, "real", "link", "~/notes").run().succeeds().stdoutIs("""
                real: Read-only file system
                link: Read-only file system
                ~/notes: writable
                """);
        sandbox.attempts(flags, "cat secret.txt").run().succeeds().stdoutIs("""
                cat secret.txt: Permission denied
                """);

        assertThat(sandbox.probeLanded(sandbox.project("real"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("notes"))).isTrue();
        assertThat(sandbox.read(sandbox.project("secret.txt"))).isEqualTo("secret\n");
    }

    // ------------------------------------------------------------------ specificity

    @Test
    void Specificity_Deeper_Path_Beats_Shallower_One() {
        sandbox.mkdirs("docs/drafts/deep");
        sandbox.mkdirs(sandbox.home(".config/nvim"));
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"rw": ["~/.config/nvim"]}}
                """);
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        sandbox.writeProbe(List.of("--ro", "docs", "--rw", "docs/drafts", "--ro", "~/.config"),
                        "docs", "docs/drafts", "docs/drafts/deep", "~/.config", "~/.config/nvim")
                .run().succeeds().stdoutIs("""
                        docs: Read-only file system
                        docs/drafts: writable
                        docs/drafts/deep: writable
                        ~/.config: Read-only file system
                        ~/.config/nvim: writable
                        """);

        assertThat(sandbox.probeLanded(sandbox.project("docs"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("docs/drafts"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("docs/drafts/deep"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.home(".config"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home(".config/nvim")))
                .as("a deeper project rule beats a shallower flag").isTrue();
    }

    @Test
    void Specificity_Exact_Pattern_Beats_Glob_For_The_Same_Path() {
        for (String dir : List.of("cfg/local", "cfg/shared", "gen/keep", "gen/other")) {
            sandbox.mkdirs(dir);
        }
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"rw": ["gen/keep"]}}
                """);
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        sandbox.writeProbe(List.of("--ro", "cfg/*", "--rw", "cfg/local", "--ro", "gen/*"),
                        "cfg/local", "cfg/shared", "gen/keep", "gen/other")
                .run().succeeds().stdoutIs("""
                        cfg/local: writable
                        cfg/shared: Read-only file system
                        gen/keep: writable
                        gen/other: Read-only file system
                        """);

        assertThat(sandbox.probeLanded(sandbox.project("cfg/local"))).as("exact rw beats a glob ro of the same layer")
                .isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("cfg/shared"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("gen/keep"))).as("exact rw beats a glob ro of a later layer")
                .isTrue();
        assertThat(sandbox.probeLanded(sandbox.project("gen/other"))).isFalse();
    }

    @Test
    void Specificity_Later_Layer_Wins_For_The_Same_Path() {
        sandbox.mkdirs("build");
        sandbox.mkdirs("dist");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"rw": ["build"], "ro": ["dist"]}}
                """);

        sandbox.writeProbe(List.of("--ro", "build", "--rw", "dist"), "build", "dist").run().succeeds().stdoutIs("""
                build: Read-only file system
                dist: writable
                """);

        assertThat(sandbox.probeLanded(sandbox.project("build"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("dist"))).isTrue();
    }

    @Test
    void Specificity_Most_Restrictive_Wins_Within_One_Layer() {
        sandbox.mkdirs("data");
        sandbox.mkdirs("out");
        sandbox.mkdirs("logs");
        sandbox.write("vault/key", "secret\n");
        sandbox.write("notes.txt", "private\n");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {
                  "rw": ["data", "out"],
                  "ro": ["data", "out", "vault"],
                  "exclude": ["vault"]
                }}
                """);
        List<String> flags = List.of("--rw", "logs", "--ro", "logs", "--exclude", "notes.txt", "--ro", "notes.txt");

        sandbox.writeProbe(flags, "data", "out", "logs").run().succeeds().stdoutIs("""
                data: Read-only file system
                out: Read-only file system
                logs: Read-only file system
                """);
        sandbox.attempts(flags, "ls -A vault", "cat vault/key", "cat notes.txt").run().succeeds().stdoutIs("""
                ls -A vault: ok
                cat vault/key: No such file or directory
                cat notes.txt: Permission denied
                """);

        assertThat(sandbox.probeLanded(sandbox.project("data"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("out"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("logs"))).isFalse();
    }

    // ------------------------------------------------------------------ config files

    @Test
    void Loaded_Config_Files_Are_Read_Only_Inside_Writable_Directories() {
        String global = "{\"filesystem\": {\"rw\": [\"~/notes\"]}}\n";
        String project = "// project\n{\"filesystem\": {\"ro\": [\"docs\"]}}\n";
        Path xdg = sandbox.project(".xdg");
        Path globalFile = sandbox.write(xdg.resolve("agent-sandbox/config.json"), global);
        sandbox.write(".agent-sandbox.json", project);
        sandbox.write("replacement.json", "{}\n");
        sandbox.mkdirs("docs");
        sandbox.mkdirs(sandbox.home("notes"));

        sandbox.attempts(List.of(),
                        "echo {} > .agent-sandbox.json",
                        "echo {} >> .xdg/agent-sandbox/config.json",
                        "rm .agent-sandbox.json",
                        "rm .xdg/agent-sandbox/config.json",
                        "mv .agent-sandbox.json moved.json",
                        "mv replacement.json .agent-sandbox.json",
                        "mv replacement.json .xdg/agent-sandbox/config.json")
                .env("XDG_CONFIG_HOME", xdg.toString())
                .run().succeeds().stdoutIs("""
                        echo {} > .agent-sandbox.json: Read-only file system
                        echo {} >> .xdg/agent-sandbox/config.json: Read-only file system
                        rm .agent-sandbox.json: Device or resource busy
                        rm .xdg/agent-sandbox/config.json: Read-only file system
                        mv .agent-sandbox.json moved.json: Device or resource busy
                        mv replacement.json .agent-sandbox.json: Device or resource busy
                        mv replacement.json .xdg/agent-sandbox/config.json: Read-only file system
                        """);

        assertThat(sandbox.read(sandbox.project(".agent-sandbox.json"))).isEqualTo(project);
        assertThat(sandbox.read(globalFile)).isEqualTo(global);
        assertThat(sandbox.project("moved.json")).doesNotExist();
        assertThat(sandbox.read(sandbox.project("replacement.json"))).isEqualTo("{}\n");
    }

    @Test
    void Project_Config_In_The_Working_Dir_Stays_Read_Only_When_C_Names_Another_File() {
        String ignored = "{\"filesystem\": {\"rw\": [\"~\"]}}\n";
        String chosen = "{\"filesystem\": {\"ro\": [\"docs\"]}}\n";
        sandbox.write(".agent-sandbox.json", ignored);
        sandbox.write(".agent-sandbox.jsonc", ignored);
        sandbox.write("policies/custom.json", chosen);
        sandbox.mkdirs("docs");

        sandbox.writeProbe(List.of("-c", "policies/custom.json"), ".agent-sandbox.json", ".agent-sandbox.jsonc",
                        "policies/custom.json", "docs", "~")
                .run().succeeds().stdoutIs("""
                        .agent-sandbox.json: Read-only file system
                        .agent-sandbox.jsonc: Read-only file system
                        policies/custom.json: Read-only file system
                        docs: Read-only file system
                        ~: Read-only file system
                        """);

        assertThat(sandbox.read(sandbox.project(".agent-sandbox.json"))).isEqualTo(ignored);
        assertThat(sandbox.read(sandbox.project(".agent-sandbox.jsonc"))).isEqualTo(ignored);
        assertThat(sandbox.read(sandbox.project("policies/custom.json"))).isEqualTo(chosen);
        assertThat(sandbox.probeLanded(sandbox.home())).isFalse();
    }

    @Test
    void Project_Jsonc_Config_In_The_Working_Dir_Is_Read_Only() {
        String config = "{\"network\": true,}\n";
        sandbox.write(".agent-sandbox.jsonc", config);

        sandbox.writeProbe(List.of(), ".agent-sandbox.jsonc").run().succeeds().stdoutIs("""
                .agent-sandbox.jsonc: Read-only file system
                """);

        assertThat(sandbox.read(sandbox.project(".agent-sandbox.jsonc"))).isEqualTo(config);
    }

    @Test
    void Config_Files_In_A_Shared_Host_Temp_Dir_Are_Read_Only_Through_Tmp_As_Well() {
        String global = "{\"filesystem\": {\"rw\": [\"~/notes\"]}}\n";
        String chosen = "{\"filesystem\": {\"ro\": [\"docs\"]}}\n";
        sandbox.write(sandbox.tmp().resolve("xdg/agent-sandbox/config.json"), global);
        sandbox.write(sandbox.tmp().resolve("policy.json"), chosen);

        sandbox.writeProbe(List.of("--share-tmp", "-c", sandbox.tmp().resolve("policy.json").toString()),
                        "/tmp/policy.json", "/tmp/xdg/agent-sandbox/config.json")
                .env("XDG_CONFIG_HOME", sandbox.tmp().resolve("xdg").toString())
                .run().succeeds().stdoutIs("""
                        /tmp/policy.json: Read-only file system
                        /tmp/xdg/agent-sandbox/config.json: Read-only file system
                        """);

        assertThat(sandbox.read(sandbox.tmp().resolve("policy.json"))).isEqualTo(chosen);
        assertThat(sandbox.read(sandbox.tmp().resolve("xdg/agent-sandbox/config.json"))).isEqualTo(global);
    }

    // ------------------------------------------------------------------ private temp dir

    @Test
    void Tmp_Inside_Is_Private_And_Shared_Only_When_Asked_With_TMPDIR_Pointing_There() {
        sandbox.write(sandbox.tmp().resolve("from-host"), "host\n");
        String script = """
                echo "TMPDIR=$TMPDIR"
                cat /tmp/from-host 2>/dev/null || echo "no host file"
                echo inside > /tmp/from-inside
                mkdir /tmp/dir-from-inside
                """;

        sandbox.run("--", "sh", "-c", script).succeeds().stderrIsEmpty().stdoutIs("TMPDIR=/tmp\nno host file\n");
        assertThat(sandbox.tmp().resolve("from-inside")).doesNotExist();

        sandbox.run("--share-tmp", "--", "sh", "-c", script).succeeds().stderrIsEmpty()
                .stdoutIs("TMPDIR=/tmp\nhost\n");
        assertThat(sandbox.read(sandbox.tmp().resolve("from-inside"))).isEqualTo("inside\n");
        assertThat(sandbox.tmp().resolve("dir-from-inside")).isDirectory();
        assertThat(runtimeDirsLeft()).isEmpty();
    }

    @Test
    void Private_Runtime_Dir_Cannot_Be_Reached_From_Inside() {
        sandbox.write(".env", "API_KEY=hunter2\n");

        String script = """
                # the one thing there: this sandbox's own /tmp, also at its own path
                own=none; for r in "$HOME/.local/state/agent-sandbox/run"/*; do [ "$r/tmp" -ef /tmp ] && own=$r; done
                find "$HOME/.local/state/agent-sandbox" -mindepth 1 \
                    | grep -v -e "^$HOME/.local/state/agent-sandbox/run\\$" -e "^$own\\$" -e "^$own/"
                ls -A /tmp/agent-sandbox-* 2>/dev/null && echo "sockets visible"
                echo x > "$HOME/.local/state/agent-sandbox/planted" 2>/dev/null
                cat .env
                """;
        sandbox.run("--exclude", ".env", "--", "sh", "-c", script)
                .exitsWith(1).stdoutIsEmpty().stderrContains("Permission denied");
        sandbox.run("--exclude", ".env", "--rw", "~", "--", "sh", "-c", script)
                .exitsWith(1).stdoutIsEmpty().stderrContains("Permission denied");
        assertThat(sandbox.home(".local/state/agent-sandbox/planted")).doesNotExist();

        assertThat(runtimeDirsLeft()).isEmpty();
        assertThat(sandbox.read(sandbox.project(".env"))).isEqualTo("API_KEY=hunter2\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"exit 0", "exit 3", "kill -KILL $$"})
    void Private_Runtime_Dir_Is_Removed_After_The_Run_Whatever_Its_Outcome(String script) {
        sandbox.write(".env", "API_KEY=hunter2\n");

        Result result = sandbox.run("--exclude", ".env", "--", "sh", "-c", "ls -d /tmp/agent-sandbox-* /run/agent-sandbox/hidden* 2>/dev/null; " + script);

        int expected = switch (script) {
            case "exit 0" -> 0;
            case "exit 3" -> 3;
            default -> 128 + 9;
        };
        // the run's own directory is visible nowhere inside
        result.exitsWith(expected).stdoutIsEmpty();
        assertThat(runtimeDirsLeft()).isEmpty();
    }

    /**
     * What a sandbox leaves in its private /tmp (links out of it, to a directory and a
     * file of the home; directories it closed to everyone; deep nesting) goes with the
     * run's directories, and nothing a link names is touched.
     */
    @Test
    void Private_Tmp_Is_Removed_Without_Following_What_The_Sandbox_Left_There() throws IOException {
        Path notes = sandbox.mkdirs(sandbox.home().resolve("notes"));
        Path note = sandbox.write(notes.resolve("keep.txt"), "keep\n");
        String script = """
                cd /tmp && ln -s "$HOME/notes" to-dir && ln -s "$HOME/notes/keep.txt" to-file
                mkdir -p closed/inner/deeper && echo x > closed/inner/deeper/f && echo y > closed/f
                chmod 000 closed/inner/deeper closed/inner && chmod 100 closed
                d=/tmp/nest; i=0; while [ $i -lt 60 ]; do d=$d/n; i=$((i+1)); done; mkdir -p "$d" && ln -s "$HOME" "$d/home"
                ls /run/agent-sandbox/guard >/dev/null
                """;
        Path socketsBase = Path.of("/tmp/agent-sandbox-" + sandbox.uid());
        List<Path> socketsBefore = entries(socketsBase);
        sandbox.run("--rw", "~/notes", "--", "sh", "-c", script).succeeds();

        assertThat(runtimeDirsLeft()).isEmpty();
        assertThat(note).hasContent("keep");
        assertThat(sandbox.home()).isDirectory();
        assertThat(socketsBase).as("where the run's sockets were").isDirectory();
        assertThat(entries(socketsBase)).as("the run's sockets directory is gone").isSubsetOf(socketsBefore);
    }

    private static List<Path> entries(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }

    @Test
    void Private_Runtime_Dir_Is_Removed_When_Bwrap_Fails() throws IOException {
        Path seen = sandbox.world().resolve("tmp/seen");
        Path fakeBin = sandbox.systemProgram("fake-bin", "bwrap", """
                #!/bin/sh
                ls -d "$HOME"/.local/state/agent-sandbox/run/* >> '%s' 2>&1
                echo "bwrap: Creating new namespace failed: Operation not permitted" >&2
                exit 1
                """.formatted(seen), "rwxr-xr-x").getParent();
        sandbox.write(".env", "API_KEY=hunter2\n");

        Result result = sandbox.command("--exclude", ".env", "--", "true")
                .env("PATH", fakeBin + ":" + SandboxCli.PATH).run()
                .exitsWith(1)
                .stdoutIsEmpty();

        assertThat(result.stderr().lines().toList()).as(() -> result.describe("one line of ours, bwrap's words in it"))
                .hasSize(1)
                .satisfies(lines -> assertThat(lines.get(0)).startsWith("agent-sandbox: bwrap ")
                        .contains("Operation not permitted"));

        assertThat(sandbox.read(seen))
                .as("the run's dir existed while bwrap ran").startsWith(sandbox.home(".local/state/agent-sandbox/run/")
                        .toString());
        assertThat(runtimeDirsLeft()).isEmpty();
    }

    // ------------------------------------------------------------------ hard-wired behaviour

    @ParameterizedTest
    @ValueSource(strings = {
        "--ro=/run/agent-sandbox/x",
        "--rw=/run/agent-sandbox",
        "--exclude=/run/agent-sandbox/agent-sandbox",
        "--ro=/run/agent-sandbox/*",
        "--rw=/run/../run/agent-sandbox/app",
        "--exclude=/run//agent-sandbox/"
    })
    void Rules_For_The_Reserved_Runtime_Are_Refused(String flag) {
        sandbox.command(flag, "--", "sh", "-c", "echo ran > ran").run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("/run/agent-sandbox");

        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(runtimeDirsLeft()).isEmpty();
    }

    @Test
    void Config_Rules_For_The_Reserved_Runtime_Are_Refused() {
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"ro": ["/run/agent-sandbox/x"]}}
                """);

        sandbox.run("--", "sh", "-c", "echo ran > ran")
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("/run/agent-sandbox", ".agent-sandbox.json");

        assertThat(sandbox.project("ran")).doesNotExist();
    }

    @Test
    void Resolv_Conf_Stays_Readable() throws IOException {
        Path conf = Path.of("/etc/resolv.conf");
        Result host = sandbox.runOnHost("cat", conf.toString());

        Result inside = sandbox.run("--", "cat", conf.toString());

        assertThat(inside.exitCode()).as(() -> inside.describe("the same exit status as on the host: " + host))
                .isEqualTo(host.exitCode());
        inside.stdoutIs(host.stdout());
        if (Files.isSymbolicLink(conf) && conf.toRealPath().startsWith("/run")) {
            Path targetDir = conf.toRealPath().getParent();
            sandbox.run("--", "readlink", "-f", conf.toString()).succeeds().stdoutIs(conf.toRealPath() + "\n");
            sandbox.run("--dry-run", "--", "true").succeeds()
                    .stdoutContains(" --ro-bind " + targetDir + " " + targetDir + " ");
        } else {
            sandbox.run("--", "sh", "-c", "test -L " + conf + " && echo symlink || echo plain")
                    .succeeds().stdoutIs((Files.isSymbolicLink(conf) ? "symlink" : "plain") + "\n");
        }
    }

    @Test
    void Dry_Run_Is_Byte_Identical_For_Identical_Inputs_Apart_From_The_Runtime_Dir_Name() {
        sandbox.mkdirs("docs/drafts");
        sandbox.write("secrets/key", "secret\n");
        sandbox.write(".env", "API_KEY=hunter2\n");
        sandbox.write("biome.json", "{}\n");
        sandbox.write("config/a/secrets.json", "{}\n");
        sandbox.write("config/b/secrets.json", "{}\n");
        sandbox.mkdirs(sandbox.home(".cache"));
        sandbox.mkdirs(sandbox.home(".ssh"));
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"ro": ["config/*/secrets.json", "docs"], "exclude": ["secrets"]}}
                """);
        String[] args = {"--dry-run", "--rw", "docs/drafts", "--exclude", ".env", "--", "sh", "-c", "echo 'a b'"};

        Result first = sandbox.run(args).succeeds().stderrIsEmpty();
        Result second = sandbox.run(args).succeeds().stderrIsEmpty();

        assertThat(first.stdout()).hasLineCount(1);
        assertThat(runtimeDirNames(first.stdout())).as("one runtime dir per run").hasSize(1);
        assertThat(runtimeDirNames(second.stdout())).hasSize(1);
        assertThat(withoutRuntimeDirName(second.stdout())).isEqualTo(withoutRuntimeDirName(first.stdout()));
        assertThat(first.stdout()).contains(sandbox.home(".local/state/agent-sandbox/run/").toString());
        assertThat(runtimeDirsLeft()).as("a dry run creates nothing").isEmpty();
    }

    /** Ways of starting in an excluded path; each must be refused before anything runs. */
    enum ExcludedStart {
        EXCLUDED_ITSELF, BELOW_IT, BELOW_IT_DESPITE_A_DEEPER_RW_RULE, EXCLUDED_BY_PROJECT_CONFIG, GIVEN_WITH_CWD_FLAG
    }

    @ParameterizedTest
    @EnumSource(ExcludedStart.class)
    void Working_Dir_Inside_An_Excluded_Path_Is_Refused(ExcludedStart start) {
        sandbox.mkdirs("secrets/sub");
        String secrets = sandbox.project("secrets").toString();
        List<String> flags = new ArrayList<>();
        String cwd = "secrets/sub";
        switch (start) {
            case EXCLUDED_ITSELF -> {
                flags.addAll(List.of("--exclude", secrets));
                cwd = "secrets";
            }
            case BELOW_IT -> flags.addAll(List.of("--exclude", secrets));
            case BELOW_IT_DESPITE_A_DEEPER_RW_RULE -> flags.addAll(List.of("--exclude", "..", "--rw", "."));
            case EXCLUDED_BY_PROJECT_CONFIG -> sandbox.write("secrets/sub/.agent-sandbox.json", """
                    {"filesystem": {"exclude": ["%s"]}}
                    """.formatted(secrets));
            case GIVEN_WITH_CWD_FLAG -> {
                flags.addAll(List.of("-C", "secrets/sub", "--exclude", ".."));
                cwd = ".";
            }
        }

        sandbox.command(with(flags, "--", "sh", "-c", "echo ran > ran")).cwd(cwd).run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("excluded");

        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(runtimeDirsLeft()).isEmpty();
    }

    // ------------------------------------------------------------------ helpers

    /** The flags, then more arguments. */
    private static String[] with(List<String> flags, String... more) {
        return Stream.concat(flags.stream(), Stream.of(more)).toArray(String[]::new);
    }

    /** Per-run private directories left in the host temp dir. */
    private List<Path> runtimeDirsLeft() {
        return sandbox.runtimeDirsInTmp();
    }

    private static List<String> runtimeDirNames(String text) {
        List<String> names = new ArrayList<>();
        Matcher m = RUNTIME_DIR.matcher(text);
        while (m.find()) {
            if (!names.contains(m.group())) {
                names.add(m.group());
            }
        }
        return names;
    }

    private static String withoutRuntimeDirName(String text) {
        return RUNTIME_DIR.matcher(text).replaceAll("agent-sandbox-RUNTIME");
    }
}
