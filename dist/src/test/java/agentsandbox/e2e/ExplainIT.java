// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code agent-sandbox explain}: outside it answers for the run that would start here,
 * without starting one; inside it answers for the sandbox it runs in, from the record
 * that sandbox's run left read-only at {@code /run/agent-sandbox/policy}.
 */
class ExplainIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    static final String INNER = "/run/agent-sandbox/agent-sandbox";
    private static final String NEXT_RUN = "for the next run, outside this sandbox: ";

    @Test
    void Inside_Answers_As_Outside_Does_For_The_Same_Flags() {
        sandbox.mkdirs("docs");
        sandbox.write(".env", "TOKEN=1\n");
        sandbox.mkdirs(sandbox.home(".ssh"));
        sandbox.write(sandbox.home(".config/agent-sandbox/config.json"), "{\"filesystem\": {\"ro\": [\"docs\"]}}\n");
        String[] paths = {"docs", ".env", "~/.ssh", "/tmp/scratch", "/usr", "missing/file", "/run/agent-sandbox"};

        String outside = sandbox.run(concat(new String[] {"--exclude", ".env", "explain"}, paths))
                .succeeds().stderrIsEmpty().stdout();
        String inside = sandbox.run(concat(new String[] {"--exclude", ".env", "--", INNER, "explain"}, paths))
                .succeeds().stderrIsEmpty().stdout();

        assertThat(outside).contains("docs: read-only\n", ".env: hidden", "~/.ssh: hidden",
                "/tmp/scratch: replaced (the run's private temp dir", "--exclude .env (flag)");
        assertThat(inside).contains(NEXT_RUN);
        assertThat(inside.replace(NEXT_RUN, "")).isEqualTo(outside);
    }

    @Test
    void Inside_Answers_Reflect_The_Flags_Of_The_Run_Not_Of_The_Command_Line() {
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.run("--rw", "~/notes", "--", INNER, "explain", "~/notes").succeeds()
                .stdoutContains("~/notes: read-write\n", "rule:   --rw ~/notes (flag)\n");
        sandbox.run("--", INNER, "explain", "~/notes").succeeds()
                .stdoutContains("~/notes: read-only\n", "rule:   ro ~ (preset @base)\n");
    }

    @Test
    void A_Read_Only_File_System_Error_Is_Explained_With_Its_Fix() {
        sandbox.write("generated/out", "old\n");
        sandbox.run("--ro", "generated", "--", "sh", "-c", "echo new > generated/out").fails()
                .stderrContains("Read-only file system");

        sandbox.run("--ro", "generated", "--", INNER, "explain", "generated/out").succeeds()
                .stdoutContains("generated/out: read-only\n", "rule:   --ro generated (flag)\n",
                        "change: " + NEXT_RUN + "to make it writable: --rw generated/out (one run)");
        // the fix it names works
        sandbox.run("--ro", "generated", "--rw", "generated/out", "--", "sh", "-c", "echo new > generated/out")
                .succeeds();
        assertThat(sandbox.read(sandbox.project("generated/out"))).isEqualTo("new\n");
    }

    @Test
    void The_Record_Cannot_Be_Changed_Inside() {
        sandbox.run("--", "sh", "-c", "echo 'agent-sandbox policy 1' > " + INNER.replace("agent-sandbox/agent-sandbox",
                "agent-sandbox/policy")).fails().stderrContains("Read-only file system");
        sandbox.run("--", "sh", "-c", "rm -f /run/agent-sandbox/policy").fails();
        sandbox.run("--", "sh", "-c", "head -1 /run/agent-sandbox/policy").succeeds()
                .stdoutIs("agent-sandbox policy 1\n");
    }

    @Test
    void A_Nested_Sandbox_Answers_From_Its_Own_Record_And_Names_A_Stricter_Outer_One() {
        sandbox.mkdirs("shared");
        sandbox.run("--", INNER, "--ro", "shared", "--", INNER, "explain", "shared").succeeds()
                .stdoutContains("shared: read-only\n", "rule:   --ro shared (flag)\n")
                .stdoutDoesNotContain("outer:");
        sandbox.run("--ro", "shared", "--", INNER, "--", INNER, "explain", "shared").succeeds()
                .stdoutContains("shared: read-only\n",
                        "outer:  the sandbox this one runs in makes it so: --ro shared (flag)", "(preset @base)");
    }

    @Test
    void Outside_Nothing_Starts_And_Nothing_Is_Created() {
        sandbox.run(Map.of("PATH", "/nonexistent"), "explain", ".").succeeds()
                .stdoutContains(".: read-write\n");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Errors_Are_One_Line() {
        sandbox.run("explain").failsWithOneLineError().stderrContains("explain needs a PATH");
        sandbox.run("--", INNER, "--rw", "x", "explain", "x").failsWithOneLineError()
                .stderrContains("takes no flags");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
