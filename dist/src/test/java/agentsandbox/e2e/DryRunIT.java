// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --dry-run} prints the one bwrap command line that would run, and that line
 * really is the sandbox; {@code --debug} explains the decisions on stderr and leaves
 * the command's stdout alone.
 */
class DryRunIT {

    /** The runtime directory a dry-run line refers to: the parent of the stand-in for excluded files. */
    private static final Pattern HIDDEN_FILE = Pattern.compile("(/\\S*/run/[0-9a-f]{16})/hidden(?=\\s)");

    /** Probes what the sandbox allows; prints the same whether it runs directly or from a pasted dry-run line. */
    private static final String PROBE = "cat .env; echo x > /usr/probe; echo x > docs/probe; echo written > written;"
            + " ls -A private; wc -l < /proc/net/dev; echo \"TMPDIR=$TMPDIR\"; /run/agent-sandbox/agent-sandbox check";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private Path globalConfig;
    private Path projectConfig;

    /** A global and a project config, an excluded file and directory, a ro tree with an rw hole. */
    @BeforeEach
    void configure() {
        globalConfig = sandbox.write(sandbox.home(".config/agent-sandbox/config.json"),
                "{\"filesystem\": {\"ro\": [\"docs\"]}}\n");
        projectConfig = sandbox.write(".agent-sandbox.json",
                "{\"filesystem\": {\"exclude\": [\".env\", \"private\"]}, \"network\": false}\n");
        sandbox.write(".env", "SECRET=1\n");
        sandbox.write("private/key", "secret\n");
        sandbox.write("docs/readme", "docs\n");
        sandbox.mkdirs("docs/generated");
    }

    @Test
    void Dry_Run_Prints_One_Line_And_Creates_Nothing() throws IOException {
        Result result = sandbox.run("--dry-run", "--", "sh", "-c", "echo ran > ran")
                .succeeds()
                .stderrIsEmpty()
                .stdoutSatisfies(out -> out.hasLineCount(1).endsWith("\n").contains(" --die-with-parent "));

        assertThat(HIDDEN_FILE.matcher(result.stdout()).find())
                .as(() -> result.describe("a reference to the stand-in for excluded files")).isTrue();
        assertThat(sandbox.project("ran")).doesNotExist();
        try (Stream<Path> tmp = Files.list(sandbox.tmp())) {
            assertThat(tmp).as("entries in the temp dir after a dry run").isEmpty();
        }
    }

    @Test
    void Two_Dry_Runs_Differ_At_Most_In_The_Runtime_Dir_Name() {
        String first = sandbox.run("--dry-run", "--", "true").succeeds().stdout();
        String second = sandbox.run("--dry-run", "--", "true").succeeds().stdout();

        assertThat(withoutRuntimeName(second)).isEqualTo(withoutRuntimeName(first));
    }

    @Test
    void Pasted_Dry_Run_Line_Runs_The_Command_In_The_Same_Sandbox() {
        Result direct = sandbox.run("--", "sh", "-c", PROBE);
        assertProbedSandbox(direct);
        sandbox.runOnHost("rm", "-f", sandbox.project("written").toString()).succeeds();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();

        sandbox.homesFallback(); // a pasted line has no layers made for it
        String line = sandbox.run("--dry-run", "--", "sh", "-c", PROBE).succeeds().stdout().strip();
        Matcher runtime = HIDDEN_FILE.matcher(line);
        assertThat(runtime.find()).as("a runtime dir in the line %s", line).isTrue();
        String dir = runtime.group(1);
        // What agent-sandbox creates before it starts bwrap: the run's directory with the empty
        // mode-000 stand-in, the policy record, the mounts' identities (none to check: a line pasted
        // by hand has no launcher to record them) and the private /tmp, and its sockets' directory.
        String sockets = "/tmp/agent-sandbox-" + sandbox.uid() + "/" + Path.of(dir).getFileName();
        Result pasted = sandbox.runOnHost("sh", "-c", "mkdir -p -m 700 " + dir + "/tmp " + sockets + "/guard " + sockets
                + "/net && : > " + dir + "/hidden && chmod 000 " + dir + "/hidden && : > " + dir + "/policy && : > " + dir
                + "/mounts && " + sandbox.gitViewFiles(dir) + " && " + line);

        assertProbedSandbox(pasted);
        assertThat(pasted.exitCode()).isEqualTo(direct.exitCode());
        assertThat(pasted.stdout()).isEqualTo(direct.stdout());
        assertThat(pasted.stderr()).isEqualTo(direct.stderr());
        sandbox.runOnHost("rm", "-rf", dir, sockets).succeeds();
    }

    /** What {@link #PROBE} shows in the configured sandbox. */
    private void assertProbedSandbox(Result result) {
        result.succeeds()
                .stdoutIs("3\nTMPDIR=/tmp\ninside sandbox\n") // /proc/net/dev: two header lines and lo
                .stderrContains(".env: Permission denied", "/usr/probe: Read-only file system",
                        "docs/probe: Read-only file system")
                .stderrDoesNotContain("SECRET", "key");
        assertThat(sandbox.read(sandbox.project("written"))).isEqualTo("written\n");
    }

    @Test
    void Debug_Explains_Configs_Merge_And_Every_Mount_On_Stderr_While_Stdout_Stays_The_Commands() {
        Result result = sandbox.run("--debug", "--rw", "docs/generated", "--", "sh", "-c", "echo out; echo err >&2")
                .succeeds()
                .stdoutIs("out\n")
                .stderrContains(
                        "global config: " + globalConfig + " (loaded)",
                        "project config: " + projectConfig + " (loaded)")
                .stderrSatisfies(err -> err.endsWith("\nerr\n"));
        String err = result.stderr();

        // The merge, lowest priority first.
        assertThat(err).containsSubsequence(
                "global " + globalConfig + ": ro [docs]",
                "project " + projectConfig + ": exclude [.env, private] network false",
                "flag flags: rw [docs/generated]",
                "result: network off, docker off");

        // Every policy mount in the bwrap line, with its level and the rule that decided it.
        assertThat(err).containsPattern(level("rw", "/tmp", "preset @base"))
                .containsPattern(level("rw", sandbox.project().toString(), "preset @base"))
                .containsPattern(level("ro", sandbox.project("docs").toString(), "global " + globalConfig))
                .containsPattern(level("rw", sandbox.project("docs/generated").toString(), "flag"))
                .containsPattern(level("exclude", sandbox.project(".env").toString(), "project " + projectConfig))
                .containsPattern(level("exclude", sandbox.project("private").toString(), "project " + projectConfig));
        List<String> mounted = policyMountTargets(bwrapLine(result));
        assertThat(mounted).as(() -> result.describe("policy mounts in the bwrap line"))
                .contains("/tmp", sandbox.project().toString(), sandbox.project("docs/generated").toString());
        for (String target : mounted) {
            assertThat(err).as(() -> result.describe("a level and a rule for " + target))
                    .containsPattern(level("(ro|rw|exclude)", target, ""));
        }
    }

    /** A debug line: level, path, and the rule that decided it. */
    private static Pattern level(String level, String path, String rulePrefix) {
        return Pattern.compile("(?m)^\\s+" + level + "\\s+" + Pattern.quote(path) + "\\s+<- " + Pattern.quote(rulePrefix));
    }

    /** The bwrap command line that --debug shows, up to the command. */
    private static String bwrapLine(Result result) {
        List<String> lines = result.stderr().lines().toList();
        int header = lines.indexOf("agent-sandbox: bwrap");
        assertThat(header).as(() -> result.describe("a bwrap section")).isNotNegative();
        String line = lines.get(header + 1).strip();
        return line.substring(0, line.indexOf(" -- "));
    }

    /**
     * Destinations of the mounts the policy made: binds and tmpfs, but not the fixed
     * ones (/, /run and the runtime under it) nor the tmpfs that hides the private
     * runtime dir.
     */
    private static List<String> policyMountTargets(String bwrapLine) {
        List<String> words = List.of(bwrapLine.split(" "));
        List<String> targets = new ArrayList<>();
        for (int i = 0; i < words.size(); i++) {
            String target = switch (words.get(i)) {
                case "--bind", "--bind-try", "--ro-bind", "--ro-bind-try" -> words.get(i + 2);
                case "--tmpfs" -> words.get(i + 1);
                default -> null;
            };
            if (target != null && !target.equals("/") && !target.equals("/run") && !target.startsWith("/run/")
                    && !target.matches("/tmp/agent-sandbox-[0-9a-f]+")) {
                targets.add(target);
            }
        }
        return targets;
    }

    private static String withoutRuntimeName(String line) {
        return line.replaceAll("/[0-9a-f]{16}(?=/|\\s|$)", "/RUNTIME");
    }
}
