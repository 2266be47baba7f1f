// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
