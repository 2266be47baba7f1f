// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The denial log under real bwrap: the host records what a run refused, and nothing inside
 * a sandbox (also with {@code --rw ~}) can write, truncate or forge it. Also the prompt
 * variable, and git checkout -b allowed by effect.
 */
class DenialLogIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private Path log() {
        return sandbox.home(".local/state/agent-sandbox/log/runs.jsonl");
    }

    @Test
    void A_Run_That_Refuses_Git_Commands_Is_Logged_And_Says_So_In_One_Line() {
        sandbox.git("init", "-q");
        sandbox.git("commit", "-q", "--allow-empty", "-m", "start");
        sandbox.run("--", "sh", "-c", "git checkout . ; git reset --hard; git checkout -q -b feat &&"
                        + " git branch --show-current; printf '%s\\n' \"$AGENT_SANDBOX_PROMPT\"")
                .succeeds()
                .stdoutIs("feat\n(sandbox) \n")
                .stderrContains("agent-sandbox: this run refused 2 things (2 git commands); see them with:"
                        + " agent-sandbox log\n");
        sandbox.run("log").succeeds()
                .stdoutContains("  git      git checkout .: git checkout is not allowed in this sandbox",
                        "  git      git reset --hard: git reset --hard is not allowed");
        sandbox.run("log", "--json").succeeds().stdoutContains("{\"version\":1,\"runs\":[{\"version\":1,",
                "\"refused\":2,", "\"kind\":\"git\",\"what\":\"git checkout .\"");
    }

    /**
     * A blocked command is refused inside, by the launcher: it reports the call to the host
     * over the guard's socket, and the host logs it, marked as the sandbox's report. With the
     * git guard off too, the socket is there for the reports alone.
     */
    @ParameterizedTest
    @ValueSource(strings = {"@git", "true"})
    void A_Blocked_Command_And_A_Git_Refusal_Are_Logged(String gitRule) {
        sandbox.git("init", "-q");
        sandbox.git("commit", "-q", "--allow-empty", "-m", "start");
        boolean guarded = gitRule.equals("@git");
        sandbox.run("--cmd", "rm=false", "--cmd", "git=" + gitRule, "--", "sh", "-c",
                        "rm -rf 'a b' \"$(printf '\\033[2J')\"; echo rm=$?; git checkout . 2>/dev/null; true")
                .succeeds()
                .stdoutIs("rm=1\n")
                .stderrContains("agent-sandbox: rm is blocked in this sandbox (its command rule is false)\n",
                        guarded ? "agent-sandbox: this run refused 2 things (1 git command, 1 blocked command); see"
                                + " them with: agent-sandbox log\n"
                                : "agent-sandbox: this run refused 1 thing (1 blocked command); see them with:"
                                + " agent-sandbox log\n");
        Result log = sandbox.run("log").succeeds()
                .stdoutContains("  command  rm -rf a b \\x1b[2J: rm is blocked in this sandbox (its command rule is"
                        + " false) [reported by the sandbox]\n");
        if (guarded) {
            log.stdoutContains("  git      git checkout .: git checkout is not allowed in this sandbox");
        }
        sandbox.run("log", "--json").succeeds().stdoutContains(
                "\"refused\":" + (guarded ? 2 : 1) + ",",
                "{\"kind\":\"command\",\"what\":\"rm -rf a b \\u001b[2J\",\"why\":\"rm is blocked in this sandbox"
                        + " (its command rule is false)\",\"source\":\"sandbox\"}");
        if (guarded) {
            sandbox.run("log", "--json").succeeds().stdoutContains(
                    "{\"kind\":\"git\",\"what\":\"git checkout .\",", "\"source\":\"host\"}");
        }
    }

    /**
     * A command the outer sandbox blocks, called in a sandbox nested in it, is reported to the
     * outer run's host side: the outer log has it.
     */
    @Test
    void A_Blocked_Command_Called_In_A_Nested_Sandbox_Reaches_The_Outer_Log() {
        sandbox.run("--cmd", "rm=false", "--", "sh", "-c", "/run/agent-sandbox/agent-sandbox --cmd git=true -- sh -c"
                        + " 'rm inner-call; echo inner=$?'; rm outer-call; echo outer=$?")
                .succeeds()
                .stdoutIs("inner=1\nouter=1\n")
                .stderrContains("agent-sandbox: this run refused 2 things (2 blocked commands); see them with:"
                        + " agent-sandbox log\n");
        sandbox.run("log").succeeds().stdoutContains(
                "  command  rm inner-call: rm is blocked in this sandbox (its command rule is false) [reported by the"
                        + " sandbox]\n",
                "  command  rm outer-call: rm is blocked in this sandbox (its command rule is false) [reported by the"
                        + " sandbox]\n");
    }

    /** What the checks after the run report (a git setting the host's next git would run) is a file entry. */
    @Test
    void What_The_Checks_After_The_Run_Report_Is_Logged_As_A_File_Entry() {
        sandbox.git("init", "-q");
        sandbox.run("--", "sh", "-c", "printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = ./x\\n\\tupdate = !touch planted\\n'"
                        + " > .gitmodules")
                .succeeds()
                .stderrContains("agent-sandbox: after the run: ", "submodule.x.update",
                        "agent-sandbox: this run refused 1 thing (1 other); see them with: agent-sandbox log\n");
        sandbox.run("log").succeeds().stdoutContains("  file     ", "submodule.x.update",
                ": found by the checks after the run\n");
        sandbox.run("log", "--json").succeeds().stdoutContains("{\"kind\":\"file\",", "\"source\":\"host\"}");
    }

    /**
     * The sandbox talks to the guard's socket itself: it forges reports of commands it does
     * not block, sends oversized and malformed ones, text that would end the JSON string or
     * the terminal line, and thousands of reports. The log keeps one well-formed line for the
     * run, the host's entry first and whole, only reports of the blocked command (marked as
     * the sandbox's), bounded in number and length.
     */
    @Test
    void Forged_And_Oversized_Reports_Cannot_Break_Or_Forge_The_Log() throws IOException {
        sandbox.git("init", "-q");
        sandbox.git("commit", "-q", "--allow-empty", "-m", "start");
        String attack = String.join("\n",
                "import socket, sys",
                "def send(data):",
                "    s = socket.socket(socket.AF_UNIX)",
                "    s.settimeout(20)",
                "    s.connect('/run/agent-sandbox/guard/socket')",
                "    try:",
                "        s.sendall(data)",
                "        s.shutdown(socket.SHUT_WR)",
                "        return s.recv(200) or b'closed'",
                "    except OSError:",
                "        return b'closed'",
                "    finally:",
                "        s.close()",
                "out = []",
                "out.append(send(b'AGSB\\0curl\\0curl https://example.org\\0'))",
                "out.append(send(b'AGSB\\0rm\\0' + b'x' * 100000 + b'\\0'))",
                "out.append(send(b'AGSB\\0rm\\0rm a\\0extra\\0'))",
                "out.append(send(b'AGSB\\0rm\\0rm \"}]},{\"kind\":\"git\"\\n{\"version\":1}\\x1b]52;c;eA==\\x07\\xc2\\x9b\\xff\\0'))",
                "for i in range(1500):",
                "    send(b'AGSB\\0rm\\0rm ' + str(i).encode() + b' ' + b'y' * 3000 + b'\\0')",
                "print(' '.join(a.decode(errors='replace').strip() for a in out))");
        sandbox.command("--cmd", "rm=false", "--", "sh", "-c", "git checkout . 2>/dev/null; python3 -c \"$ATTACK\"")
                .env("ATTACK", attack).run().succeeds()
                .stdoutIs("D no such blocked command here closed closed A\n")
                .stderrContains("agent-sandbox: this run refused 1502 things (1 git command, 1501 blocked commands);"
                        + " see them with: agent-sandbox log\n");

        List<String> lines = Files.readAllLines(log());
        assertThat(lines).hasSize(1);
        String line = lines.getFirst();
        assertThat(line).startsWith("{\"version\":1,\"id\":\"").endsWith("]}").doesNotContain("\u001b", "\u0007",
                "\u009b", "curl");
        assertThat(line.length()).isLessThan(300_000);
        // the host's entry first, whole; then only the sandbox's reports of rm, each marked and cut
        assertThat(line).contains("\"refused\":1502,\"entries\":[{\"kind\":\"git\",\"what\":\"git checkout .\",");
        assertThat(line.split("\"kind\":", -1)).hasSize(1 + 200);
        assertThat(line.split("\"kind\":\"command\"", -1)).hasSize(200);
        assertThat(line.split("\"source\":\"sandbox\"", -1)).hasSize(200);
        assertThat(line.split("\"source\":\"host\"", -1)).hasSize(2);
        assertThat(line).contains("\"what\":\"rm \\\"}]},{\\\"kind\\\":\\\"git\\\"\\n{\\\"version\\\":1}\\u001b]52;c;eA==\\u0007"
                + "\\u009b\ufffd\"");
        assertThat(line).contains("\"what\":\"rm 0 " + "y".repeat(1000 - "rm 0 ".length()) + "...\"");

        Result log = sandbox.run("log").succeeds();
        assertThat(log.stdout().lines().filter(l -> l.startsWith("  command  ")).toList()).hasSize(199)
                .allMatch(l -> l.endsWith(" [reported by the sandbox]"));
        assertThat(log.stdout()).contains("  ... and 1302 more refusals, counted but not kept\n")
                .doesNotContain("\u001b").doesNotContain("\u009b");
        sandbox.run("log", "--json").succeeds().stdoutContains("\"refused\":1502,");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "mkdir -p ~/.local/state/agent-sandbox/log && echo '{\"forged\":1}' >> ~/.local/state/agent-sandbox/log/runs.jsonl",
        "rm -rf ~/.local/state/agent-sandbox/log",
        "truncate -s 0 ~/.local/state/agent-sandbox/log/runs.jsonl",
        "mv ~/.local/state ~/.local/moved",
        "rm -rf ~/.local/state/agent-sandbox && ln -s /tmp ~/.local/state/agent-sandbox",
        "ln -sf /tmp/x ~/.local/state/agent-sandbox/log/runs.jsonl",
    })
    void Nothing_Inside_Writes_Truncates_Or_Forges_The_Log_Even_With_Rw_Home(String attempt) throws IOException {
        sandbox.run("--", "true").succeeds();
        String before = sandbox.read(log());
        assertThat(before).startsWith("{\"version\":1,").endsWith("\n");
        // inside, the state directory is an empty file system of the sandbox's own: no log there to attack
        sandbox.run("--rw", "~", "--", "sh", "-c", "ls -A ~/.local/state/agent-sandbox 2>/dev/null; (" + attempt
                + ") 2>/dev/null; true").succeeds().stdoutDoesNotContain("log");
        String after = sandbox.read(log());
        // the host's two records, whole: the attack's text is only in the second one's command, as data
        assertThat(after).as("the log after the attack").startsWith(before);
        assertThat(after.lines().toList()).hasSize(2).allMatch(l -> l.startsWith("{\"version\":1,\"id\":\""));
        assertThat(Files.isSymbolicLink(log())).isFalse();
        assertThat(Files.isSymbolicLink(sandbox.home(".local/state/agent-sandbox"))).isFalse();
    }
}
