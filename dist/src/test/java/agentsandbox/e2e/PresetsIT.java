// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The built-in presets under real bwrap (spec section 3): what each one protects, hides
 * or opens, how presets are turned off, and the git presets in plain repositories,
 * sub-directories, linked worktrees and with {@code @git-strict}.
 */
class PresetsIT {

    /** git inside the sandbox, with an identity (the home directory is read-only there). */
    private static final String GIT = "git -c user.name=Agent -c user.email=agent@agent-sandbox.invalid"
            + " -c commit.gpgsign=false";

    private static final List<String> SECRET_DIRS = List.of(".ssh", ".gnupg", ".aws");
    private static final List<String> CACHES = List.of(".cache", ".bun", "go", ".npm", ".cargo");

    /** The lint presets and the files each protects in the working directory. */
    enum Lint {
        TS("@lint/ts", "biome.json", "biome.jsonc", ".eslintrc", ".eslintrc.js", ".eslintrc.json", "eslint.config.js",
                "eslint.config.mjs", ".oxlintrc.json", ".prettierrc", ".prettierrc.json", "prettier.config.js",
                "tsconfig.json", "tsconfig.build.json"),
        GO("@lint/go", ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json"),
        PYTHON("@lint/python", "pyproject.toml", "setup.cfg", ".flake8", "mypy.ini", ".mypy.ini", ".pylintrc",
                "ruff.toml", ".ruff.toml");

        final String preset;
        final List<String> files;

        Lint(String preset, String... files) {
            this.preset = preset;
            this.files = List.of(files);
        }

        static List<String> allFiles() {
            return Stream.of(values()).flatMap(l -> l.files.stream()).toList();
        }
    }

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ @base

    @Test
    void Base_Hides_The_Contents_Of_Ssh_Gnupg_And_Aws() {
        for (String dir : SECRET_DIRS) {
            sandbox.write(sandbox.home(dir + "/key"), "secret\n");
            sandbox.write(sandbox.home(dir + "/sub/deeper"), "deeper secret\n");
        }

        sandbox.attempts(List.of(),
                        "test -d ~/.ssh && test -z \"$(ls -A ~/.ssh)$(ls -A ~/.gnupg)$(ls -A ~/.aws)\"",
                        "cat ~/.ssh/key",
                        "cat ~/.gnupg/key",
                        "cat ~/.aws/key",
                        "cat ~/.aws/sub/deeper",
                        "cat /proc/self/root$HOME/.ssh/key")
                .run().succeeds().stdoutIs("""
                        test -d ~/.ssh && test -z "$(ls -A ~/.ssh)$(ls -A ~/.gnupg)$(ls -A ~/.aws)": ok
                        cat ~/.ssh/key: No such file or directory
                        cat ~/.gnupg/key: No such file or directory
                        cat ~/.aws/key: No such file or directory
                        cat ~/.aws/sub/deeper: No such file or directory
                        cat /proc/self/root$HOME/.ssh/key: No such file or directory
                        """);

        for (String dir : SECRET_DIRS) {
            assertThat(sandbox.read(sandbox.home(dir + "/key"))).isEqualTo("secret\n");
            assertThat(sandbox.read(sandbox.home(dir + "/sub/deeper"))).isEqualTo("deeper secret\n");
        }
    }

    @Test
    void Base_Makes_Ssh_Gnupg_And_Aws_Unreadable_When_They_Are_Files() {
        for (String file : SECRET_DIRS) {
            sandbox.write(sandbox.home(file), "secret\n");
        }

        sandbox.attempts(List.of(),
                        "test -e ~/.ssh && test -e ~/.gnupg && test -e ~/.aws",
                        "cat ~/.ssh",
                        "cat ~/.gnupg",
                        "cat ~/.aws",
                        "echo changed > ~/.aws")
                .run().succeeds().stdoutIs("""
                        test -e ~/.ssh && test -e ~/.gnupg && test -e ~/.aws: ok
                        cat ~/.ssh: Permission denied
                        cat ~/.gnupg: Permission denied
                        cat ~/.aws: Permission denied
                        echo changed > ~/.aws: Read-only file system
                        """);

        for (String file : SECRET_DIRS) {
            assertThat(sandbox.read(sandbox.home(file))).isEqualTo("secret\n");
        }
    }

    @Test
    void Base_Makes_Home_Read_Only_And_The_Working_Dir_Writable() {
        Path code = sandbox.mkdirs(sandbox.home("code/app"));
        sandbox.mkdirs(sandbox.home("code/app/src"));
        sandbox.mkdirs(sandbox.home("code/other"));
        sandbox.write(sandbox.home(".profile"), "# host\n");

        sandbox.writeProbe(List.of(), "~", "~/.profile", "~/code", "~/code/other", ".", "src")
                .cwd(code).run().succeeds().stdoutIs("""
                        ~: Read-only file system
                        ~/.profile: Read-only file system
                        ~/code: Read-only file system
                        ~/code/other: Read-only file system
                        .: writable
                        src: writable
                        """);

        assertThat(sandbox.probeLanded(sandbox.home())).isFalse();
        assertThat(sandbox.read(sandbox.home(".profile"))).isEqualTo("# host\n");
        assertThat(sandbox.probeLanded(sandbox.home("code"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home("code/other"))).isFalse();
        assertThat(sandbox.probeLanded(code)).isTrue();
        assertThat(sandbox.probeLanded(code.resolve("src"))).isTrue();
    }

    // ------------------------------------------------------------------ @caches and @agents

    @Test
    void Caches_Are_Writable_Copy_On_Write_When_They_Exist() {
        for (String dir : CACHES) {
            sandbox.mkdirs(sandbox.home(dir));
        }
        sandbox.mkdirs(sandbox.home(".local/share"));

        List<String> probed = new ArrayList<>(CACHES.stream().map(d -> "~/" + d).toList());
        probed.add("~/.local/share");
        sandbox.writeProbe(List.of(), probed.toArray(String[]::new)).run().succeeds().stdoutIs("""
                ~/.cache: writable
                ~/.bun: writable
                ~/go: writable
                ~/.npm: writable
                ~/.cargo: writable
                ~/.local/share: Read-only file system
                """);

        for (String dir : CACHES) {
            assertThat(sandbox.probeLanded(sandbox.home(dir))).as(dir + ": in the layer, not the host's").isFalse();
            sandbox.run("--", "cat", sandbox.home(dir).resolve(SandboxCli.PROBE_FILE).toString()).succeeds()
                    .stdoutContains(SandboxCli.PROBE_LINE);
        }
        assertThat(sandbox.probeLanded(sandbox.home(".local/share"))).isFalse();
    }

    @Test
    void In_The_Fallback_Caches_Are_The_Hosts_Writable_Directories() {
        sandbox.homesFallback();
        for (String dir : CACHES) {
            sandbox.mkdirs(sandbox.home(dir));
        }
        sandbox.writeProbe(List.of(), CACHES.stream().map(d -> "~/" + d).toArray(String[]::new)).run().succeeds();
        for (String dir : CACHES) {
            assertThat(sandbox.probeLanded(sandbox.home(dir))).as(dir).isTrue();
        }
    }

    @Test
    void Agent_Directories_Are_Writable_Copy_On_Write_And_A_Claude_Json_Claude_Does_Not_Save_Is_Read_Only() {
        for (String dir : List.of(".codex", ".claude", ".pi")) {
            sandbox.mkdirs(sandbox.home(dir));
        }
        sandbox.write(sandbox.home(".claude.json"), "{}\n");
        sandbox.mkdirs(sandbox.home(".config"));

        // Claude Code is not started here: its config stays a file of the home, which has no view
        sandbox.writeProbe(List.of(), "~/.codex", "~/.claude", "~/.claude.json", "~/.pi", "~/.config")
                .run().succeeds().stdoutIs("""
                        ~/.codex: writable
                        ~/.claude: writable
                        ~/.claude.json: Read-only file system
                        ~/.pi: writable
                        ~/.config: Read-only file system
                        """);

        for (String path : List.of(".codex", ".claude", ".claude.json", ".pi", ".config")) {
            assertThat(sandbox.probeLanded(sandbox.home(path))).as(path).isFalse();
        }
        assertThat(sandbox.read(sandbox.home(".claude.json"))).isEqualTo("{}\n");
    }

    // ------------------------------------------------------------------ lint presets

    @ParameterizedTest
    @EnumSource(Lint.class)
    void Lint_Preset_Makes_Its_Files_And_Editorconfig_Read_Only_In_The_Working_Dir(Lint lint) {
        List<String> files = writeLintFiles();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["!@all", "@base", "%s"]}}
                """.formatted(lint.preset));
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        List<String> readOnly = new ArrayList<>(lint.files);
        readOnly.add(".editorconfig");
        probeLintFiles(files, readOnly);
    }

    @Test
    void All_Lint_Files_Are_Read_Only_By_Default() {
        List<String> files = writeLintFiles();

        List<String> readOnly = new ArrayList<>(Lint.allFiles());
        readOnly.add(".editorconfig");
        probeLintFiles(files, readOnly);
    }

    @Test
    void Turning_Off_Lint_Python_Leaves_Its_Files_Writable_And_Keeps_The_Others() {
        List<String> files = writeLintFiles();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["!@lint/python"]}}
                """);
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        List<String> readOnly = new ArrayList<>(Lint.TS.files);
        readOnly.addAll(Lint.GO.files);
        readOnly.add(".editorconfig");
        probeLintFiles(files, readOnly);
    }

    @Test
    void Not_All_Then_Base_Is_Base_Alone() {
        List<String> files = writeLintFiles();
        sandbox.mkdirs(sandbox.home(".cache"));
        sandbox.mkdirs(sandbox.home(".claude"));
        sandbox.write(sandbox.home(".ssh/key"), "secret\n");
        sandbox.git("init", "-q");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["!@all", "@base"]}}
                """);
        sandbox.run("trust").succeeds(); // it loosens the policy: the user trusts it first

        List<String> probed = new ArrayList<>(List.of("~", "~/.cache", "~/.claude", ".git/hooks", ".git/config"));
        probed.addAll(files);
        String expected = Stream.concat(
                        Stream.of("~: Read-only file system", "~/.cache: Read-only file system",
                                "~/.claude: Read-only file system", ".git/hooks: writable", ".git/config: writable"),
                        files.stream().map(f -> f + ": writable"))
                .collect(Collectors.joining("\n", "", "\n"));
        sandbox.writeProbe(List.of(), probed.toArray(String[]::new)).run().succeeds().stdoutIs(expected);
        sandbox.attempts(List.of(), "cat ~/.ssh/key").run().succeeds().stdoutIs("""
                cat ~/.ssh/key: No such file or directory
                """);

        assertThat(sandbox.probeLanded(sandbox.home(".cache"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.home(".claude"))).isFalse();
        assertThat(sandbox.probeLanded(sandbox.project("biome.json"))).isTrue();
        assertThat(sandbox.probeLanded(sandbox.project(".git/hooks"))).isTrue();
    }

    // ------------------------------------------------------------------ @git

    @Test
    void Git_Protects_Hooks_And_Config_While_Commits_Work() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        initRepository();
        Path hook = sandbox.write(".git/hooks/pre-push", "#!/bin/sh\nexit 0\n");
        String config = sandbox.read(sandbox.project(".git/config"));

        sandbox.attempts(List.of(),
                        "echo evil >> .git/hooks/pre-push",
                        "rm .git/hooks/pre-push",
                        "echo evil > .git/hooks/pre-commit",
                        "mv .git/hooks .git/hooks-moved",
                        "echo '[core] hooksPath = /tmp' >> .git/config",
                        "rm .git/config")
                .run().succeeds().stdoutIs("""
                        echo evil >> .git/hooks/pre-push: Read-only file system
                        rm .git/hooks/pre-push: Read-only file system
                        echo evil > .git/hooks/pre-commit: Read-only file system
                        mv .git/hooks .git/hooks-moved: Device or resource busy
                        echo '[core] hooksPath = /tmp' >> .git/config: Read-only file system
                        rm .git/config: Device or resource busy
                        """);
        sandbox.run("--", "git", "config", "core.hooksPath", "/tmp/hooks").fails();
        sandbox.run("--", "sh", "-c", "echo change >> README.md && " + GIT + " commit -q -am 'from inside'")
                .succeeds();

        assertThat(sandbox.git("log", "--format=%s", "-1").stdout()).isEqualTo("from inside\n");
        assertThat(sandbox.read(hook)).isEqualTo("#!/bin/sh\nexit 0\n");
        assertThat(sandbox.project(".git/hooks/pre-commit")).doesNotExist();
        assertThat(sandbox.read(sandbox.project(".git/config"))).isEqualTo(config);
        assertThat(sandbox.project(".git/config.lock")).doesNotExist();
    }

    @Test
    void Git_Protects_The_Repository_When_Started_In_A_Sub_Directory() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        initRepository();
        sandbox.write("src/main.c", "int main(void) { return 0; }\n");
        String config = sandbox.read(sandbox.project(".git/config"));
        List<String> projectWritable = List.of("--rw", sandbox.project().toString());

        sandbox.writeProbe(projectWritable, "../.git/hooks", "../.git/config", "../.git/description", ".")
                .cwd("src").run().succeeds().stdoutIs("""
                        ../.git/hooks: Read-only file system
                        ../.git/config: Read-only file system
                        ../.git/description: writable
                        .: writable
                        """);
        sandbox.command(with(projectWritable, "--", "sh", "-c", GIT + " add main.c && " + GIT + " commit -q -m 'from src'"))
                .cwd("src").run().succeeds();

        assertThat(sandbox.probeLanded(sandbox.project(".git/hooks"))).isFalse();
        assertThat(sandbox.read(sandbox.project(".git/config"))).isEqualTo(config);
        assertThat(sandbox.probeLanded(sandbox.project(".git/description")))
                .as("the rest of .git is writable, so the protection comes from @git").isTrue();
        assertThat(sandbox.git("log", "--format=%s", "-1").stdout()).isEqualTo("from src\n");
    }

    @Test
    void Git_In_A_Linked_Worktree_Commits_While_The_Main_Hooks_And_Config_Stay_Read_Only() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        initRepository();
        Path worktree = sandbox.mkdirs(sandbox.world().resolve("wt"));
        sandbox.git("worktree", "add", "-q", worktree.toString(), "-b", "feature");
        String config = sandbox.read(sandbox.project(".git/config"));

        sandbox.attempts(List.of(),
                        "echo wt > wt-file && " + GIT + " add wt-file && " + GIT + " commit -q -m 'in worktree'",
                        "echo evil >> ../project/.git/config",
                        "echo evil > ../project/.git/hooks/pre-commit",
                        "echo evil >> ../project/README.md")
                .cwd(worktree).run().succeeds().stdoutIs("""
                        echo wt > wt-file && %s add wt-file && %s commit -q -m 'in worktree': ok
                        echo evil >> ../project/.git/config: Read-only file system
                        echo evil > ../project/.git/hooks/pre-commit: Read-only file system
                        echo evil >> ../project/README.md: Read-only file system
                        """.formatted(GIT, GIT));

        assertThat(sandbox.git("log", "--format=%s", "-1", "feature").stdout()).isEqualTo("in worktree\n");
        assertThat(sandbox.git("log", "--format=%s", "-1", "main").stdout()).isEqualTo("first\n");
        assertThat(sandbox.read(sandbox.project(".git/config"))).isEqualTo(config);
        assertThat(sandbox.project(".git/hooks/pre-commit")).doesNotExist();
        assertThat(sandbox.read(sandbox.project("README.md"))).isEqualTo("hello\n");
    }

    // ------------------------------------------------------------------ @git-strict

    @Test
    void Git_Strict_Commits_On_The_Current_Branch_But_Protects_Other_Branches_And_Tags() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        initRepository();
        sandbox.git("branch", "other");
        sandbox.git("branch", "feature/nested");
        sandbox.git("tag", "v1");
        String first = head();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["@git-strict"]}}
                """);

        sandbox.run("--", "sh", "-c", "echo change >> README.md && " + GIT + " commit -q -am 'on main'").succeeds();
        assertRefused(
                "git branch -f other HEAD",
                "git update-ref refs/heads/other HEAD",
                "git update-ref refs/heads/feature/nested HEAD",
                "git branch -D other",
                "git tag -d v1",
                "git tag -f v1 HEAD",
                "git tag v2");

        assertThat(sandbox.git("log", "--format=%s", "-1", "main").stdout()).isEqualTo("on main\n");
        assertThat(sandbox.git("rev-parse", "other").stdout().strip()).isEqualTo(first);
        assertThat(sandbox.git("rev-parse", "feature/nested").stdout().strip()).isEqualTo(first);
        assertThat(sandbox.git("rev-parse", "v1").stdout().strip()).isEqualTo(first);
        assertThat(sandbox.git("tag", "--list").stdout()).isEqualTo("v1\n");
    }

    @Test
    void Git_Strict_With_A_Detached_Head_Protects_Every_Branch() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        initRepository();
        sandbox.git("branch", "other");
        sandbox.git("checkout", "-q", "--detach");
        String first = head();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["@git-strict"]}}
                """);

        sandbox.run("--", "sh", "-c", GIT + " commit -q --allow-empty -m detached").succeeds();
        assertRefused(
                "git branch -f main HEAD",
                "git update-ref refs/heads/main HEAD",
                "git branch -f other HEAD");

        assertThat(sandbox.git("log", "--format=%s", "-1", "HEAD").stdout()).isEqualTo("detached\n");
        assertThat(sandbox.git("rev-parse", "main").stdout().strip()).isEqualTo(first);
        assertThat(sandbox.git("rev-parse", "other").stdout().strip()).isEqualTo(first);
    }

    @Test
    void Without_A_Repository_The_Git_Presets_Add_Nothing() {
        sandbox.write("README.md", "hello\n");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["@git-strict"]}}
                """);
        String withGit = sandbox.run("--dry-run", "--", "true").succeeds().stdout();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["!@git", "!@git-strict"]}}
                """);
        String withoutGit = sandbox.run("--dry-run", "--", "true").succeeds().stdout();

        assertThat(stable(withGit)).isEqualTo(stable(withoutGit)).doesNotContain(".git");
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["@git-strict"]}}
                """);
        sandbox.run("--", "sh", "-c", "echo more >> README.md").succeeds().stderrIsEmpty();
        assertThat(sandbox.read(sandbox.project("README.md"))).isEqualTo("hello\nmore\n");
    }

    // ------------------------------------------------------------------ helpers

    /** A repository in the project with one commit of README.md on main. */
    private void initRepository() {
        sandbox.write("README.md", "hello\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "README.md");
        sandbox.git("commit", "-q", "-m", "first");
    }

    private String head() {
        return sandbox.git("rev-parse", "HEAD").stdout().strip();
    }

    /** Each git command fails inside the sandbox (whatever git's wording). */
    private void assertRefused(String... commands) {
        Result result = sandbox.attempts(List.of(), commands).run().succeeds();
        List<String> lines = result.stdout().lines().toList();
        assertThat(lines).as(() -> result.describe("one line per command")).hasSize(commands.length);
        for (int i = 0; i < commands.length; i++) {
            assertThat(lines.get(i)).as(() -> result.describe("every command refused"))
                    .startsWith(commands[i] + ": ")
                    .isNotEqualTo(commands[i] + ": ok");
        }
    }

    /** Every lint file, {@code .editorconfig}, a nested lint file and a README, in the project. */
    private List<String> writeLintFiles() {
        List<String> files = new ArrayList<>(Lint.allFiles());
        files.add(".editorconfig");
        files.add("packages/a/biome.json");
        files.add("packages/a/pyproject.toml");
        files.add("README.md");
        for (String f : files) {
            sandbox.write(f, "host " + f + "\n");
        }
        return files;
    }

    /** Probes every file: exactly {@code readOnly} are read-only inside, and only the others change on the host. */
    private void probeLintFiles(List<String> files, List<String> readOnly) {
        String expected = files.stream()
                .map(f -> f + (readOnly.contains(f) ? ": Read-only file system" : ": writable"))
                .collect(Collectors.joining("\n", "", "\n"));

        sandbox.writeProbe(List.of(), files.toArray(String[]::new)).run().succeeds().stdoutIs(expected);

        for (String f : files) {
            Path host = sandbox.project(f);
            if (readOnly.contains(f)) {
                assertThat(sandbox.read(host)).as(f).isEqualTo("host " + f + "\n");
            } else {
                assertThat(sandbox.probeLanded(host)).as(f).isTrue();
            }
        }
    }

    private static String[] with(List<String> flags, String... more) {
        return Stream.concat(flags.stream(), Stream.of(more)).toArray(String[]::new);
    }

    /** A dry-run line with the per-run directory name replaced. */
    private static String stable(String dryRun) {
        return dryRun.replaceAll("/[0-9a-f]{16}/", "/RUN/");
    }
}
