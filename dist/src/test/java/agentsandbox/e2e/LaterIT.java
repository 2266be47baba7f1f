// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The "later" campaign: what a sandbox leaves behind must not loosen a later run or run
 * on the host afterwards. Each case plants something inside a sandbox, the sandbox ends,
 * and then the host does what a user does next: starts agent-sandbox again, runs
 * {@code git status}, {@code git commit}, {@code git submodule update}. The proof is a
 * marker file in the home directory (read-only inside, so only the host can create it)
 * that a planted command would touch, and the host-side state of what a planted policy
 * would open.
 *
 * <p>Git metadata a sandbox can create from nothing (a new nested repository, a
 * submodule's git dir, {@code .gitmodules}) cannot be made read-only before it exists;
 * agent-sandbox reports it when the run ends, one line per setting with the fix. Those
 * cases prove the report names the file and the setting, that nothing ran while
 * agent-sandbox checked, and that after the fix it prints, the user's git runs nothing.
 *
 * <p>At the end the class prints {@code later attempts: N tried, 0 succeeded}.
 */
class LaterIT {
    private static final AtomicInteger TRIED = new AtomicInteger();
    private static final List<String> SUCCEEDED = new ArrayList<>();

    private static final String ENTRY_POINT = "/run/agent-sandbox/agent-sandbox";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @AfterAll
    static void summary() {
        System.out.println("later attempts: " + TRIED.get() + " tried, " + SUCCEEDED.size() + " succeeded");
        assertThat(SUCCEEDED).as("planted things that took effect later").isEmpty();
    }

    /** Counts one attempt; records it as succeeded when {@code took} is true. */
    private static void attempt(String name, boolean took) {
        TRIED.incrementAndGet();
        if (took) {
            synchronized (SUCCEEDED) {
                SUCCEEDED.add(name);
            }
        }
        assertThat(took).as(name + " took effect after the sandbox ended").isFalse();
    }

    private Path marker() {
        return sandbox.home("pwned");
    }

    private static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    // ------------------------------------------------------------------ policy planted for the next run

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
        "{\"filesystem\": {\"rw\": [\"~\", \"~/.ssh\"]}, \"commands\": {\"git\": true}}",
        "{\"filesystem\": {\"presets\": [\"!@all\"]}}",
        "{\"filesystem\": {\"ro\": [\"~/.ssh/id_test\"]}}",
        "{\"docker\": true}",
        "{\"commands\": {\"git\": true}}",
    })
    void A_Planted_Loosening_Project_Config_Stops_The_Next_Run(String config) {
        sandbox.write(sandbox.home(".ssh/id_test"), "PRIVATE KEY\n");
        sandbox.write(sandbox.home(".bashrc"), "# mine\n");
        sandbox.run("--", "sh", "-c", "printf '%s' \"$1\" > .agent-sandbox.json", "plant", config).succeeds();

        Result next = sandbox.run("--", "sh", "-c",
                "cat ~/.ssh/id_test; echo evil >> ~/.bashrc; touch " + marker());
        next.failsWithOneLineError().stderrContains(sandbox.project(".agent-sandbox.json").toString(),
                "is not trusted and loosens the policy", "agent-sandbox trust");
        attempt("planted " + config, next.stdout().contains("PRIVATE KEY")
                || !sandbox.read(sandbox.home(".bashrc")).equals("# mine\n") || Files.exists(marker()));
    }

    @Test
    void A_Second_Project_Config_Beside_A_Trusted_One_Names_The_Untrusted_File() {
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"rw\": [\"~/notes\"]}}\n");
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.run("trust").succeeds();
        sandbox.run("--", "sh", "-c", "echo '{\"filesystem\": {\"rw\": [\"~\"]}}' > .agent-sandbox.jsonc")
                .succeeds();

        Result next = sandbox.run("--", "touch", marker().toString());
        next.failsWithOneLineError().stderrContains(".agent-sandbox.jsonc", "both .agent-sandbox.json and"
                + " .agent-sandbox.jsonc exist", ".agent-sandbox.jsonc is not trusted");
        attempt("second config beside a trusted one", Files.exists(marker()));
    }

    @Test
    void An_Untrusted_Tightening_Config_Applies() {
        sandbox.write(".env", "SECRET=1\n");
        sandbox.mkdirs("docs");
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"exclude\": [\".env\"], \"ro\": [\"docs\"]},"
                + " \"network\": false, \"commands\": {\"rm\": false}}\n");
        sandbox.attempts(List.of(), "cat .env", "touch docs/x", "rm -f nothing")
                .run().succeeds().stdoutContains("cat .env: Permission denied\n",
                        "touch docs/x: Read-only file system\n", "rm -f nothing: ")
                .stdoutDoesNotContain("rm -f nothing: ok");
    }

    @Test
    void Trust_Lets_A_Loosening_Config_Run_Until_One_Byte_Changes() throws IOException {
        Path notes = sandbox.mkdirs(sandbox.home("notes"));
        Path config = sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"rw\": [\"~/notes\"]}}\n");
        sandbox.run("--", "touch", notes.resolve("a").toString()).failsWithOneLineError()
                .stderrContains("rw ~/notes (was ro)");

        sandbox.run("trust").succeeds().stdoutContains("trusted " + config, "sha256 ", "rw ~/notes (was ro)");
        sandbox.run("--", "touch", notes.resolve("a").toString()).succeeds();
        assertThat(notes.resolve("a")).exists();

        sandbox.write(config, "{\"filesystem\": {\"rw\": [\"~/notes\"]}} \n");
        sandbox.run("--", "touch", notes.resolve("b").toString()).failsWithOneLineError()
                .stderrContains("has changed since it was trusted", "agent-sandbox trust");
        attempt("changed trusted config", Files.exists(notes.resolve("b")));
    }

    @Test
    void Trust_Is_Refused_Inside_A_Sandbox() {
        sandbox.write("sub/.agent-sandbox.json", "{\"filesystem\": {\"rw\": [\"~\"]}}\n");
        Result r = sandbox.run("--", "sh", "-c", ENTRY_POINT + " trust -C sub; echo \"status $?\"");
        r.succeeds().stdoutContains("status 1").stderrContains("trust is refused inside a sandbox");
        // the state dir exists now (every run keeps its own directory there), but no trust record
        attempt("trust inside a sandbox", Files.exists(sandbox.home(".local/state/agent-sandbox/trust")));
    }

    @Test
    void A_Nested_Run_Trusts_No_Project_Config() {
        sandbox.write("sub/.agent-sandbox.json", "{\"filesystem\": {\"presets\": [\"!@git\"]}, \"docker\": true}\n");
        Result r = sandbox.run("--", "sh", "-c", ENTRY_POINT + " -C sub -- true; echo \"status $?\"");
        r.succeeds().stdoutContains("status 1").stderrContains("inside a sandbox no project config is trusted");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"default rules", "--rw ~"})
    void The_Trust_Store_Cannot_Be_Read_Or_Written_Inside(String rules) throws IOException {
        sandbox.write("mine/.agent-sandbox.json", "{\"filesystem\": {\"rw\": [\"~/notes\"]}}\n");
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.command("trust").cwd("mine").run().succeeds();
        Path state = sandbox.home(".local/state/agent-sandbox");
        Map<String, String> before = tree(state);
        assertThat(before).isNotEmpty();

        // a record that would trust a config the sandbox plants beside it
        String planted = "{\"filesystem\": {\"rw\": [\"~\"]}}\n";
        String path = sandbox.project(".agent-sandbox.json").toString();
        String record = "agent-sandbox trust 1\npath " + path + "\npath-sha256 "
                + sha256(path.getBytes(StandardCharsets.UTF_8)) + "\nsha256 "
                + sha256(planted.getBytes(StandardCharsets.UTF_8)) + "\n";
        String store = state.resolve("trust").toString();
        List<String> flags = rules.equals("--rw ~") ? List.of("--rw", "~") : List.of();
        List<String> args = new ArrayList<>(flags);
        args.addAll(List.of("--", "sh", "-c", """
                ls -A "$1" 2>/dev/null | sed 's/^/listed: /'
                cat "$1"/* 2>/dev/null | sed 's/^/read: /'
                for f in "$1"/*; do printf 'x' >> "$f"; done 2>/dev/null
                mkdir -p "$1" 2>/dev/null
                printf '%s' "$2" > "$1/$3" 2>/dev/null
                printf '%s' "$4" > .agent-sandbox.json
                true
                """, "plant", store, record, sha256(path.getBytes(StandardCharsets.UTF_8)), planted));
        Result inside = sandbox.run(args.toArray(String[]::new)).succeeds();

        Map<String, String> after = tree(state);
        boolean written = !after.equals(before);
        boolean read = inside.stdout().contains("listed: ") || inside.stdout().contains("read: ");
        Result next = sandbox.run("--", "touch", marker().toString());
        attempt("trust store with " + rules + (written ? " (written inside: " + after.keySet() + ")" : "")
                + (read ? " (read inside)" : ""), written || read || next.exitCode() == 0 || Files.exists(marker()));
        next.failsWithOneLineError().stderrContains("is not trusted");
    }

    /**
     * Every file below {@code dir}: relative name to content; the runs' own area
     * ({@code run/}, made and emptied by agent-sandbox itself on the host) aside.
     */
    private static Map<String, String> tree(Path dir) throws IOException {
        Map<String, String> out = new TreeMap<>();
        if (!Files.exists(dir)) {
            return out;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.startsWith(dir.resolve("run")) || f.startsWith(dir.resolve("log"))) {
                    continue; // the runs' own directories; the denial log, written by the host (DenialLogIT)
                }
                out.put(dir.relativize(f).toString(), Files.isRegularFile(f) ? Files.readString(f) : "(dir)");
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ git state the host runs later

    private void repository() {
        sandbox.write("a.txt", "tracked\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-qm", "first");
    }

    /** Runs a script inside a sandbox in the project; it must succeed. */
    private Result inside(String script) {
        return sandbox.run("--", "sh", "-c", "set -e\n" + script);
    }

    /** What the user does next on the host: ordinary git commands in the project. */
    private void userRunsGit() {
        sandbox.runOnHost("git", "status");
        sandbox.runOnHost("git", "-c", "user.name=u", "-c", "user.email=u@u.invalid", "commit", "-q",
                "--allow-empty", "-m", "next");
        sandbox.runOnHost("git", "-c", "protocol.file.allow=always", "submodule", "update", "--init");
        sandbox.runOnHost("git", "diff", "HEAD");
        sandbox.runOnHost("git", "log", "-1");
    }

    /** Applies the fixes the report printed: each "git config --file F --unset-all K", each hook deleted. */
    private void userFollowsTheReport(Result run) throws IOException {
        for (String line : run.stderr().lines().toList()) {
            if (!line.startsWith("agent-sandbox: after the run: ")) {
                continue;
            }
            int fix = line.indexOf("to remove it: git config --file ");
            if (fix >= 0) {
                String[] words = line.substring(fix + "to remove it: ".length()).split(" ");
                sandbox.runOnHost(words[0], words[1], words[2], unquote(words[3]), words[4], unquote(words[5]));
            } else if (line.contains(" git hook ")) {
                String file = line.substring("agent-sandbox: after the run: ".length(), line.indexOf(" is a "));
                Files.deleteIfExists(Path.of(file));
            }
        }
    }

    private static String unquote(String w) {
        return w.startsWith("'") && w.endsWith("'") ? w.substring(1, w.length() - 1) : w;
    }

    private String touch() {
        return "touch " + marker();
    }

    @Test
    void A_New_Nested_Repository_Added_As_A_Gitlink_With_Fsmonitor_Is_Reported_Before_Git_Runs_It()
            throws IOException {
        // the fallback: with the copy-on-write view the host takes no index that adds a gitlink
        // (GitViewIT), so the check after the run has nothing of this to name
        sandbox.gitDirPathByPath();
        repository();
        Result run = inside("""
                mkdir zz && cd zz && git init -q && git -c user.name=a -c user.email=a@a commit -q --allow-empty -m x
                git config core.fsmonitor "%s; false"
                sha=$(git rev-parse HEAD) && cd ..
                git update-index --add --cacheinfo "160000,$sha,zz"
                """.formatted(touch())).succeeds();
        run.stderrContains("agent-sandbox: after the run: " + sandbox.project("zz/.git/config")
                + " sets core.fsmonitor");
        attempt("gitlink with fsmonitor, while agent-sandbox checked", Files.exists(marker()));
        userFollowsTheReport(run);
        userRunsGit();
        attempt("gitlink with fsmonitor", Files.exists(marker()));
    }

    /**
     * What git obeys and a parser of its own could miss: a nested repository whose config
     * starts with a byte order mark, and one whose gitlink comes after 256 others.
     */
    @Test
    void A_Bom_Config_And_A_Repository_Behind_256_Gitlinks_Are_Named_In_The_Report() throws IOException {
        // the fallback: with the copy-on-write view the host takes no index that adds a gitlink
        // (GitViewIT), so the check after the run has nothing of this to name
        sandbox.gitDirPathByPath();
        repository();
        Result run = inside("""
                for d in b zz; do
                  mkdir $d && git -C $d init -q && git -C $d -c user.name=a -c user.email=a@a commit -q --allow-empty -m x
                done
                printf '\\357\\273\\277[core]fsmonitor = %1$s; false\\n' > b/.git/config
                git -C zz config core.fsmonitor "%1$s; false"
                sha=$(git -C zz rev-parse HEAD)
                git update-index --add --cacheinfo "160000,$sha,b"
                i=0
                while [ $i -lt 256 ]; do printf '160000 %%s\\tm%%03d\\n' "$sha" $i; i=$((i+1)); done \
                  | git update-index --index-info
                git update-index --add --cacheinfo "160000,$sha,zz"
                """.formatted(touch())).succeeds();
        run.stderrContains("agent-sandbox: after the run: " + sandbox.project("b/.git/config")
                + " sets core.fsmonitor");
        run.stderrContains("agent-sandbox: after the run: " + sandbox.project("zz/.git/config")
                + " sets core.fsmonitor");
        attempt("fsmonitor after a byte order mark or 256 gitlinks, while agent-sandbox checked",
                Files.exists(marker()));
        userFollowsTheReport(run);
        userRunsGit();
        attempt("fsmonitor after a byte order mark or 256 gitlinks", Files.exists(marker()));
    }

    @Test
    void An_Existing_Nested_Repositorys_Config_And_Hooks_Never_Change_On_The_Host() {
        repository();
        sandbox.mkdirs("zz");
        sandbox.runOnHost("git", "-C", "zz", "init", "-q").succeeds();
        sandbox.runOnHost("git", "-C", "zz", "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q",
                "--allow-empty", "-m", "x").succeeds();
        String sha = sandbox.runOnHost("git", "-C", "zz", "rev-parse", "HEAD").succeeds().stdout().strip();
        sandbox.git("update-index", "--add", "--cacheinfo", "160000," + sha + ",zz");
        String before = sandbox.read(sandbox.project("zz/.git/config"));

        sandbox.attempts(List.of(),
                        "git -C zz config core.fsmonitor '" + touch() + "; false'",
                        "echo '[core] fsmonitor = " + touch() + "' >> zz/.git/config",
                        "printf '#!/bin/sh\\n" + touch() + "\\n' > zz/.git/hooks/pre-commit")
                .run().succeeds(); // a copy-on-write view inside (GitViewIT): written there, never on the host
        userRunsGit();
        sandbox.runOnHost("git", "-C", "zz", "-c", "user.name=u", "-c", "user.email=u@u.invalid", "commit", "-q",
                "--allow-empty", "-m", "next");
        attempt("existing nested repository config and hooks", Files.exists(marker())
                || !sandbox.read(sandbox.project("zz/.git/config")).equals(before)
                || Files.exists(sandbox.project("zz/.git/hooks/pre-commit")));
    }

    @Test
    void An_Existing_Submodule_Git_Dirs_Config_And_Hooks_Cannot_Be_Changed() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        Path upstream = sandbox.world().resolve("upstream");
        sandbox.mkdirs(upstream);
        sandbox.runOnHost("git", "-C", upstream.toString(), "init", "-q").succeeds();
        sandbox.runOnHost("git", "-C", upstream.toString(), "-c", "user.name=a", "-c", "user.email=a@a", "commit",
                "-q", "--allow-empty", "-m", "x").succeeds();
        repository();
        sandbox.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream.toString(), "lib");
        sandbox.git("commit", "-qm", "submodule");
        Path modules = sandbox.project(".git/modules/lib");
        assertThat(modules.resolve("config")).exists();
        String before = sandbox.read(modules.resolve("config"));

        sandbox.attempts(List.of(),
                        "git -C lib config core.fsmonitor '" + touch() + "; false'",
                        "echo '[core] pager = " + touch() + "' >> .git/modules/lib/config",
                        "printf '#!/bin/sh\\n" + touch() + "\\n' > .git/modules/lib/hooks/post-checkout"
                                + " && chmod +x .git/modules/lib/hooks/post-checkout")
                .run().succeeds().stdoutContains(": Read-only file system");
        userRunsGit();
        sandbox.runOnHost("git", "-C", "lib", "log", "-1");
        attempt("existing submodule git dir config and hooks", Files.exists(marker())
                || !sandbox.read(modules.resolve("config")).equals(before)
                || Files.exists(modules.resolve("hooks/post-checkout")));
    }

    @Test
    void A_New_Submodule_Git_Dir_With_A_Hook_And_A_Pager_Is_Reported() throws IOException {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        repository();
        Result run = inside("""
                mkdir -p .git/modules/m/hooks && echo 'ref: refs/heads/main' > .git/modules/m/HEAD
                printf '[core]\\n\\tpager = %s\\n' > .git/modules/m/config
                printf '#!/bin/sh\\n%s\\n' > .git/modules/m/hooks/post-checkout
                chmod +x .git/modules/m/hooks/post-checkout
                """.formatted(touch(), touch())).succeeds();
        run.stderrContains(sandbox.project(".git/modules/m/config") + " sets core.pager",
                sandbox.project(".git/modules/m/hooks/post-checkout") + " is a new git hook");
        attempt("new submodule git dir, while agent-sandbox checked", Files.exists(marker()));
        userFollowsTheReport(run);
        userRunsGit();
        attempt("new submodule git dir", Files.exists(marker()));
    }

    @Test
    void Gitmodules_Update_Command_Is_Reported_And_Never_Run_By_Submodule_Update() throws IOException {
        repository();
        Result run = inside("""
                printf '[submodule "x"]\\n\\tpath = x\\n\\turl = ./x\\n\\tupdate = !%s\\n' > .gitmodules
                """.formatted(touch())).succeeds();
        run.stderrContains(sandbox.project(".gitmodules") + " sets submodule.x.update");
        // git itself refuses update = !cmd from .gitmodules: the report is a second line of defence
        sandbox.runOnHost("git", "submodule", "init");
        userRunsGit();
        attempt(".gitmodules update command", Files.exists(marker()));
    }

    @Test
    void A_Repository_Created_Where_There_Was_None_Is_Reported() throws IOException {
        Result run = inside("""
                git init -q
                git config core.hooksPath hooks
                git config alias.st '!%s'
                git config include.path ../included
                """.formatted(touch())).succeeds();
        // moved aside while the sandbox ran (GitLiveWatch), maybe more than once as git config
        // writes the file anew: which settings each line names depends on when the watch looked
        run.stderrContains(sandbox.project(".git/config") + " sets core.hookspath");
        attempt("new repository, while agent-sandbox checked", Files.exists(marker()));
        userFollowsTheReport(run);
        userRunsGit();
        sandbox.runOnHost("git", "st");
        attempt("new repository with hooksPath and alias", Files.exists(marker()));
    }

    @Test
    void The_Repositorys_Own_Config_And_Hooks_Stay_As_They_Were() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        repository();
        String config = sandbox.read(sandbox.project(".git/config"));
        sandbox.attempts(List.of(),
                        "git config core.fsmonitor '" + touch() + "; false'",
                        "git config core.hooksPath /tmp",
                        "printf '#!/bin/sh\\n" + touch() + "\\n' > .git/hooks/pre-commit",
                        "echo '[includeIf \"gitdir:/\"] path = /tmp/x' >> .git/config")
                .run().succeeds().stdoutContains(": Read-only file system");
        userRunsGit();
        attempt("the repository's own config and hooks", Files.exists(marker())
                || !sandbox.read(sandbox.project(".git/config")).equals(config));
    }

    @Test
    void The_Exit_Status_Is_The_Commands_Own_With_Findings() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        repository();
        Result run = inside("""
                mkdir -p .git/modules/m && echo 'ref: refs/heads/main' > .git/modules/m/HEAD
                printf '[core]\\n\\teditor = %s\\n' > .git/modules/m/config
                exit 7
                """.formatted(touch()));
        run.exitsWith(7).stderrContains(" sets core.editor");
        assertThat(run.stderr().lines().filter(l -> l.contains("after the run")).count()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ tool and agent directories

    @Test
    void A_Link_Planted_Behind_Claude_Codes_Config_Or_A_Cache_Setting_Opens_Nothing_Later() throws IOException {
        Path bashrc = sandbox.write(sandbox.home(".bashrc"), "# mine\n");
        sandbox.write(sandbox.home(".ssh/id_rsa"), "SECRET-KEY\n");
        sandbox.mkdirs(sandbox.home(".m2"));
        sandbox.chownAll();
        // a run that starts Claude Code leaves ~/.claude.json a link into ~/.claude, writable
        sandbox.run("--", "sh", "-c", """
                claude >/dev/null 2>&1
                ln -sfn ../.bashrc ~/.claude/.claude.json
                ln -s ../.ssh/id_rsa ~/.m2/settings.xml
                ln -s ../.ssh ~/.m2/toolchains.xml
                true
                """).succeeds();
        Result later = sandbox.run("--", "sh", "-c", """
                claude >/dev/null 2>&1
                echo 'touch $HOME/planted-ran' >> ~/.bashrc 2>/dev/null && echo wrote-bashrc
                cat ~/.ssh/id_rsa ~/.m2/settings.xml 2>/dev/null
                ls ~/.m2/toolchains.xml/ 2>/dev/null
                true
                """).succeeds();
        attempt("write ~/.bashrc through ~/.claude/.claude.json", later.stdout().contains("wrote-bashrc"));
        attempt("read a hidden key through ~/.m2/settings.xml", later.stdout().contains("SECRET-KEY"));
        attempt("list ~/.ssh through ~/.m2/toolchains.xml", later.stdout().contains("id_rsa"));
        assertThat(sandbox.read(bashrc)).isEqualTo("# mine\n");
        later.stdoutDoesNotContain("wrote-bashrc", "SECRET-KEY", "id_rsa");
    }

    @Test
    void A_Cache_Setting_Planted_Where_None_Was_Is_Moved_Aside_When_The_Run_Ends() {
        sandbox.homesFallback(); // with the home's views, the host never sees it (HomeViewIT)
        sandbox.mkdirs(sandbox.home(".cargo/registry"));
        sandbox.chownAll();
        Result run = sandbox.run("--", "sh", "-c", """
                printf '[build]\\nrustc-wrapper = "/bin/evil"\\n' > ~/.cargo/config.toml && echo planted
                touch ~/.cargo/bin/cargo 2>/dev/null && echo bin-writable
                true
                """).succeeds().stdoutContains("planted").stdoutDoesNotContain("bin-writable")
                .stderrContains("agent-sandbox: after the run: the sandbox created " + sandbox.home(".cargo/config.toml"));
        boolean stayed = Files.exists(sandbox.home(".cargo/config.toml"));
        attempt("plant ~/.cargo/config.toml for the host's cargo", stayed);
        assertThat(stayed).as(run.describe("the planted config moved aside")).isFalse();
    }

    @Test
    void A_Cache_Setting_Planted_In_A_Directory_The_Sandbox_Made_Read_Only_Is_Still_Moved_Aside() {
        sandbox.homesFallback(); // with the home's views, the host never sees it (HomeViewIT)
        sandbox.mkdirs(sandbox.home(".cargo/registry"));
        sandbox.chownAll();
        Result run = sandbox.run("--", "sh", "-c", """
                printf '[build]\\nrustc-wrapper = "/bin/evil"\\n' > ~/.cargo/config.toml && chmod a-w ~/.cargo && echo planted
                """).succeeds().stdoutContains("planted")
                .stderrContains("the sandbox created " + sandbox.home(".cargo/config.toml"), "moved to");
        boolean stayed = Files.exists(sandbox.home(".cargo/config.toml"));
        attempt("plant ~/.cargo/config.toml and take the write bit off ~/.cargo", stayed);
        assertThat(stayed).as(run.describe("the planted config moved aside")).isFalse();
        // and the next run starts as usual
        sandbox.run("--", "true").succeeds();
    }

    @Test
    void A_Protected_Directory_Of_A_Granted_Cache_Cannot_Be_Replaced_By_Renaming_Its_Parent() {
        sandbox.mkdirs(sandbox.home(".sbt/1.0/plugins"));
        sandbox.mkdirs(sandbox.home(".bun/install/global"));
        sandbox.chownAll();
        String attack = """
                cd ~/.sbt && mv 1.0 x 2>/dev/null && mkdir -p evil/plugins && echo planted > evil/plugins/evil.sbt \
                  && echo planted > evil/global.sbt && ln -s evil 1.0 && echo replaced-sbt
                cd ~/.bun && mv install x 2>/dev/null && mkdir -p evil/global && echo planted > evil/global/x \
                  && ln -s evil install && echo replaced-bun
                echo cache > ~/.sbt/note && echo sbt-writable
                true
                """;
        // with the home's views: the sandbox may rename in its layer, the host sees nothing of it
        sandbox.run("--", "sh", "-c", attack).succeeds().stdoutContains("sbt-writable");
        boolean tookInView = Files.isSymbolicLink(sandbox.home(".sbt/1.0")) || Files.isSymbolicLink(sandbox.home(".bun/install"))
                || Files.exists(sandbox.home(".sbt/evil"));
        // the fallback: the directories on the way are pinned
        sandbox.homesFallback();
        Result run = sandbox.run("--", "sh", "-c", attack).succeeds();
        boolean took = tookInView || run.stdout().contains("replaced");
        attempt("replace ~/.sbt/1.0 or ~/.bun/install by renaming the directory on the way", took);
        assertThat(tookInView).isFalse();
        run.stdoutContains("sbt-writable").stdoutDoesNotContain("replaced-sbt", "replaced-bun");
        assertThat(sandbox.home(".sbt/1.0")).isDirectory();
        assertThat(Files.isSymbolicLink(sandbox.home(".sbt/1.0"))).isFalse();
        assertThat(Files.isSymbolicLink(sandbox.home(".bun/install"))).isFalse();
        assertThat(sandbox.home(".sbt/1.0/global.sbt")).doesNotExist();
    }

    @Test
    void A_Sandbox_With_The_Home_Writable_Cannot_Swap_The_Global_Config_Directory() {
        sandbox.write(sandbox.home(".config/agent-sandbox/config.jsonc"), "{\"network\": false}\n");
        sandbox.chownAll();
        sandbox.run("--rw", "~", "--", "sh", "-c", """
                cd ~/.config && mv agent-sandbox old 2>/dev/null && echo moved
                mkdir -p ~/.config/agent-sandbox 2>/dev/null
                echo '{"filesystem": {"rw": ["~"]}}' > ~/.config/agent-sandbox/config.jsonc 2>/dev/null && echo wrote
                true
                """).succeeds().stdoutDoesNotContain("moved", "wrote");
        Result later = sandbox.run("--", "sh", "-c", "touch ~/later-probe 2>/dev/null && echo home-writable; true");
        attempt("a looser global config in place of the user's", later.stdout().contains("home-writable"));
        later.succeeds().stdoutDoesNotContain("home-writable");
        assertThat(sandbox.read(sandbox.home(".config/agent-sandbox/config.jsonc"))).isEqualTo("{\"network\": false}\n");
    }

    @Test
    void A_Forged_Worktree_Makes_No_Directory_Writable_Later() {
        // the fallback without the copy-on-write view (GitViewIT has the view's own tests)
        sandbox.gitDirPathByPath();
        sandbox.git("init", "-q");
        sandbox.git("commit", "-q", "--allow-empty", "-m", "start");
        sandbox.mkdirs(sandbox.home(".config"));
        sandbox.write(sandbox.home(".aws/config"), "AWS-SECRET\n");
        sandbox.chownAll();
        String home = sandbox.home().toString();
        sandbox.run("--", "sh", "-c", "mkdir wt && echo 'ref: refs/heads/main' > wt/HEAD && echo " + home
                + "/.config > wt/commondir && echo \"$PWD/.git\" > wt/gitdir && mv .git .git.orig"
                + " && echo \"gitdir: $PWD/wt\" > .git").succeeds();
        Result later = sandbox.run("--", "sh", "-c", """
                mkdir -p ~/.config/git 2>/dev/null && echo written > ~/.config/git/config 2>/dev/null && echo wrote-config
                true
                """).succeeds();
        attempt("a forged worktree's commondir made ~/.config writable", later.stdout().contains("wrote-config"));
        later.stdoutDoesNotContain("wrote-config");
        assertThat(sandbox.home(".config/git")).doesNotExist();

        sandbox.run("--", "sh", "-c", "echo " + home + "/.aws > wt/commondir").succeeds();
        Result read = sandbox.run("--", "sh", "-c", "cat ~/.aws/config 2>/dev/null; true").succeeds();
        attempt("a forged worktree's commondir showed ~/.aws/config", read.stdout().contains("AWS-SECRET"));
        read.stdoutDoesNotContain("AWS-SECRET");
    }

    @Test
    void A_Second_Sandbox_Cannot_Slip_A_Settings_File_In_While_The_First_Ones_Is_Moved_Aside() {
        sandbox.mkdirs(sandbox.home(".m2"));
        sandbox.chownAll();
        Path settings = sandbox.home(".m2/settings.xml");
        SandboxCli.Started first = sandbox.command("--", "sh", "-c", """
                echo '<settings>first</settings>' > ~/.m2/settings.xml && touch first-wrote
                while [ ! -e first-go ]; do sleep 0.1; done
                """).start();
        first.awaitFile(sandbox.project("first-wrote"), java.time.Duration.ofSeconds(30));
        SandboxCli.Started second = sandbox.command("--", "sh", "-c", """
                touch second-started
                i=0; until echo '<settings>second</settings>' > ~/.m2/settings.xml 2>/dev/null; do
                  i=$((i+1)); [ $i -gt 300 ] && exit 0; sleep 0.1
                done
                echo slipped-in
                """).start();
        second.awaitFile(sandbox.project("second-started"), java.time.Duration.ofSeconds(30));
        sandbox.write("first-go", "");
        first.waitFor(java.time.Duration.ofSeconds(60)).succeeds();
        Result b = second.waitFor(java.time.Duration.ofSeconds(60)).succeeds();
        boolean stayed = Files.exists(settings) && sandbox.read(settings).contains("second");
        attempt("a settings file slipped in by a second sandbox stayed", stayed);
        assertThat(stayed).as(b.describe("the second sandbox's file moved aside too")).isFalse();
    }

    @Test
    void A_Sandbox_With_The_Home_Writable_Cannot_Leave_A_Trust_Record_Or_A_Global_Config_By_Renaming_A_Parent() {
        sandbox.write(sandbox.home(".ssh/id_rsa"), "SECRET-KEY\n");
        sandbox.mkdirs(sandbox.home(".local/state"));
        sandbox.chownAll();
        Result run = sandbox.run("--rw", "~", "--", "sh", "-c", """
                cfg=$PWD/.agent-sandbox.json
                echo '{"filesystem": {"rw": ["~/.ssh"]}}' > "$cfg"
                ph=$(printf %s "$cfg" | sha256sum | cut -c1-64); ch=$(sha256sum < "$cfg" | cut -c1-64)
                cd ~/.local && mv state state.x && mkdir -p -m 700 state/agent-sandbox/trust \
                  && printf 'agent-sandbox trust 1\\npath %s\\npath-sha256 %s\\nsha256 %s\\n' "$cfg" "$ph" "$ch" \
                     > state/agent-sandbox/trust/$ph && echo forged-trust
                cd ~ && mv .config .config.old 2>/dev/null; mkdir -p .config/agent-sandbox \
                  && echo '{"filesystem": {"rw": ["~/.ssh"]}}' > .config/agent-sandbox/config.json && echo forged-config
                true
                """).succeeds();
        // every directory on the way is a mount point in the sandbox: the renames fail at once
        run.stdoutDoesNotContain("forged-trust", "forged-config");
        Result later = sandbox.run("--", "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; true");
        boolean took = later.stdout().contains("SECRET-KEY");
        attempt("a forged trust record or global config after --rw ~", took);
        assertThat(took).as(later.describe("the next default run keeps ~/.ssh hidden")).isFalse();
    }

    @Test
    void A_Run_Started_While_A_Sandbox_With_The_Home_Writable_Forges_State_Obeys_Only_The_Users_Policy() {
        sandbox.write(sandbox.home(".ssh/id_rsa"), "SECRET-KEY\n");
        sandbox.mkdirs(sandbox.home(".local/state"));
        sandbox.chownAll();
        SandboxCli.Started forger = sandbox.command("--rw", "~", "--", "sh", "-c", """
                (cd ~ && for d in .local/state .local .config; do mv "$d" "$d.x" 2>/dev/null && echo "renamed $d"; done)
                mkdir -p ~/.config/agent-sandbox ~/.local/state/agent-sandbox/trust 2>/dev/null
                echo '{"filesystem": {"rw": ["~/.ssh"]}, "hostPorts": [22]}' > ~/.config/agent-sandbox/config.json \
                  2>/dev/null && echo forged-config
                echo forged > ~/.local/state/agent-sandbox/trust/x 2>/dev/null && echo forged-trust
                touch forger-ready
                while [ ! -e forger-go ]; do sleep 0.1; done
                """).start();
        forger.awaitFile(sandbox.project("forger-ready"), java.time.Duration.ofSeconds(30));
        Result during = sandbox.run("--", "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; echo ran");
        sandbox.write("forger-go", "");
        Result forged = forger.waitFor(java.time.Duration.ofSeconds(60)).succeeds();
        boolean took = during.stdout().contains("SECRET-KEY");
        attempt("state forged by a running --rw ~ sandbox, obeyed by a run started meanwhile", took);
        // (a write below the state directory lands in the sandbox's own empty file system)
        forged.stdoutDoesNotContain("renamed", "forged-config");
        assertThat(sandbox.home(".local/state/agent-sandbox/trust/x")).doesNotExist();
        during.succeeds().stdoutContains("ran").stdoutDoesNotContain("SECRET-KEY");
    }

    @Test
    void A_Link_On_The_Way_To_The_Global_Config_In_A_Writable_Directory_Refuses_The_Run() {
        sandbox.write(sandbox.home("dotfiles/config/agent-sandbox/config.json"), "{}\n");
        sandbox.symlink(sandbox.home(".config"), "dotfiles/config");
        sandbox.chownAll();
        // the link itself cannot be pinned: with the home writable a sandbox could point it elsewhere
        sandbox.run("--rw", "~", "--", "true").failsWithOneLineError()
                .stderrContains(sandbox.home(".config") + " is a symbolic link in a directory this sandbox can write");
        // with the directory it points to writable, that directory is pinned and the config stays read-only
        Result run = sandbox.run("--rw", "~/dotfiles", "--", "sh", "-c",
                "mv ~/dotfiles/config ~/dotfiles/c2 2>/dev/null && echo renamed;"
                        + " echo '{\"network\": true}' > ~/.config/agent-sandbox/config.json 2>/dev/null && echo wrote; true");
        attempt("a global config behind a link, with the link's target writable", run.stdout().contains("wrote")
                || run.stdout().contains("renamed"));
        run.succeeds().stdoutDoesNotContain("renamed", "wrote");
        assertThat(sandbox.read(sandbox.home("dotfiles/config/agent-sandbox/config.json"))).isEqualTo("{}\n");
    }

    @Test
    void The_Users_Own_Edits_Of_The_Global_Config_Outside_Any_Sandbox_Are_Obeyed_At_Once() {
        sandbox.write(sandbox.home("notes/todo"), "NOTE\n");
        sandbox.chownAll();
        sandbox.run("--", "cat", sandbox.home("notes/todo").toString()).succeeds().stdoutContains("NOTE");
        // the first run made the directory, owner-only; the user edits the file there by hand
        Path dir = sandbox.home(".config/agent-sandbox");
        assertThat(dir).isDirectory();
        sandbox.runOnHost("sh", "-c", "echo '{\"filesystem\": {\"exclude\": [\"~/notes\"]}}' > "
                + dir.resolve("config.json")).succeeds();
        Result hidden = sandbox.run("--", "sh", "-c", "cat ~/notes/todo 2>&1; true").succeeds();
        hidden.stdoutDoesNotContain("NOTE");
        sandbox.runOnHost("sh", "-c", "echo '{}' > " + dir.resolve("config.json")).succeeds();
        sandbox.run("--", "cat", sandbox.home("notes/todo").toString()).succeeds().stdoutContains("NOTE");
    }

    @Test
    void A_Trusted_Project_Config_Does_Not_Follow_A_Link_Planted_Where_It_Points() {
        Path bashrc = sandbox.write(sandbox.home(".bashrc"), "# mine\n");
        sandbox.mkdirs("out");
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"rw\": [\"out\"]}}\n");
        sandbox.chownAll();
        sandbox.run("trust").succeeds();
        sandbox.run("--", "sh", "-c", "rm -rf out && ln -s \"$HOME/.bashrc\" out").succeeds();
        Result later = sandbox.run("--", "sh", "-c", "echo 'touch ~/planted' >> ~/.bashrc 2>/dev/null && echo wrote; true");
        attempt("a trusted config's rw entry led through a planted link to ~/.bashrc", later.stdout().contains("wrote"));
        later.succeeds().stdoutDoesNotContain("wrote");
        assertThat(sandbox.read(bashrc)).isEqualTo("# mine\n");
    }

    @Test
    void An_Empty_Global_Config_Directory_Takes_No_Config_From_A_Sandbox_With_The_Home_Writable() {
        sandbox.mkdirs(sandbox.home(".config/agent-sandbox"));
        sandbox.write(sandbox.home(".ssh/id_rsa"), "SECRET-KEY\n");
        sandbox.chownAll();
        sandbox.run("--rw", "~", "--", "sh", "-c",
                "echo '{\"filesystem\": {\"rw\": [\"~/.ssh\"]}}' > ~/.config/agent-sandbox/config.json"
                        + " 2>/dev/null && echo wrote; true").succeeds().stdoutDoesNotContain("wrote");
        Result later = sandbox.run("--", "sh", "-c", "cat ~/.ssh/id_rsa 2>/dev/null; true").succeeds();
        attempt("a global config written into its empty directory", later.stdout().contains("SECRET-KEY"));
        later.stdoutDoesNotContain("SECRET-KEY");
    }

    @Test
    void The_Claude_Code_Binaries_The_Host_Runs_Stay_Read_Only() throws IOException {
        Path binary = sandbox.write(sandbox.home(".local/share/claude/versions/2.1.330"), "#!/bin/sh\necho real\n");
        sandbox.chownAll();
        String attack = """
                printf '#!/bin/sh\\necho planted\\n' > ~/.local/share/claude/versions/2.1.330 2>/dev/null && echo replaced
                echo x > ~/.local/share/claude/versions/2.1.331 2>/dev/null && echo added
                echo state > ~/.local/share/claude/note && echo share-writable
                true
                """;
        // with the home's views the sandbox changes its layer; the host's binary stays
        sandbox.run("--", "sh", "-c", attack).succeeds().stdoutContains("share-writable");
        boolean tookInView = !sandbox.read(binary).equals("#!/bin/sh\necho real\n")
                || Files.exists(sandbox.home(".local/share/claude/versions/2.1.331"));
        sandbox.homesFallback();
        Result run = sandbox.run("--", "sh", "-c", attack).succeeds();
        attempt("replace the Claude Code binary the host runs", tookInView || run.stdout().contains("replaced")
                || run.stdout().contains("added"));
        run.stdoutContains("share-writable").stdoutDoesNotContain("replaced", "added");
        assertThat(tookInView).isFalse();
        assertThat(sandbox.read(binary)).isEqualTo("#!/bin/sh\necho real\n");
    }
}
