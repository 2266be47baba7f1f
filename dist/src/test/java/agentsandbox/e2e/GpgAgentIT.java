// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import agentsandbox.core.Sandbox;

import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --gpg-agent}: a signed commit or message from inside through the caller's
 * running gpg-agent, while the private keys stay out of the sandbox and the agent's
 * restricted socket refuses to export them.
 */
class GpgAgentIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private Map<String, String> home() {
        return Map.of("HOME", sandbox.home().toString());
    }

    @BeforeEach
    void keyAndAgent() {
        Result made = sandbox.runOnHost(home(), "gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "",
                "--quick-gen-key", "Sandbox Test <test@agent-sandbox.invalid>", "ed25519", "sign", "never");
        made.succeeds();
        sandbox.runOnHost(home(), "gpgconf", "--launch", "gpg-agent").succeeds();
    }

    @AfterEach
    void stopAgent() {
        sandbox.runOnHost(home(), "gpgconf", "--kill", "gpg-agent");
    }

    @Test
    void Signs_Through_The_Agent_Without_Seeing_The_Private_Keys() {
        sandbox.run("--gpg-agent", "--", "sh", "-c", """
                echo hello | gpg --batch --clearsign
                ls -A ~/.gnupg
                gpg --batch --armor --export-secret-keys test@agent-sandbox.invalid >/dev/null 2>&1 \\
                    && echo secret-exported || echo export-refused
                """)
                .succeeds()
                .stdoutContains("-----BEGIN PGP SIGNED MESSAGE-----", "hello", "-----BEGIN PGP SIGNATURE-----",
                        "pubring.kbx", "S.gpg-agent", "export-refused")
                .stdoutDoesNotContain("private-keys-v1.d", "openpgp-revocs.d", "secret-exported");
        sandbox.runOnHost(home(), "sh", "-c", "ls ~/.gnupg").succeeds().stdoutContains("private-keys-v1.d");
    }

    /**
     * The restricted socket, asked directly inside: it signs, but exporting, deleting and
     * importing keys, presetting and reading passphrases, listing keys and stopping the
     * agent are forbidden; on the host's own socket the same requests are answered.
     */
    @Test
    void The_Restricted_Socket_Signs_But_Refuses_To_Manage_Keys_Or_The_Agent() {
        String grip = sandbox.runOnHost(home(), "sh", "-c",
                "gpg --with-keygrip -K --with-colons | awk -F: '/^grp/ {print $10; exit}'").succeeds().stdout().strip();
        assertThat(grip).matches("[0-9A-F]{40}");
        String requests = String.join("\n", "HAVEKEY " + grip, "EXPORT_KEY " + grip, "DELETE_KEY --force " + grip,
                "IMPORT_KEY", "PRESET_PASSPHRASE " + grip + " -1 41", "GET_PASSPHRASE --no-ask x X X X",
                "KEYINFO --list", "KILLAGENT") + "\n";
        // each request's answer on a line of its own: OK, or ERR with the reason
        String ask = "gpg-connect-agent %s < requests | grep -E '^(OK|ERR)' | sed 's/^ERR [0-9]* /ERR /'";
        sandbox.write("requests", requests);
        // on the host's own socket, those that change nothing are answered
        sandbox.write("host-requests", "HAVEKEY " + grip + "\nKEYINFO --list\nEXPORT_KEY " + grip + "\n");
        String host = sandbox.runOnHost(home(), "sh", "-c", ask.formatted("--no-autostart").replace("< requests",
                "< host-requests")).succeeds().stdout();
        assertThat(host.lines().toList()).as("on the host's own socket").hasSize(3)
                .doesNotContain("ERR Forbidden <GPG Agent>");

        String inside = sandbox.run("--gpg-agent", "--", "sh", "-c",
                ask.formatted("--no-autostart") + "; echo hello | gpg --batch --clearsign >/dev/null && echo signed")
                .succeeds().stdout();
        assertThat(inside.lines().toList()).containsExactly("OK", "ERR Forbidden <GPG Agent>",
                "ERR Forbidden <GPG Agent>", "ERR Forbidden <GPG Agent>", "ERR Forbidden <GPG Agent>",
                "ERR Forbidden <GPG Agent>", "ERR Forbidden <GPG Agent>", "ERR Forbidden <GPG Agent>", "signed");
        sandbox.runOnHost(home(), "gpg", "-K").succeeds().stdoutContains("test@agent-sandbox.invalid");
        sandbox.runOnHost(home(), "gpg-connect-agent", "--no-autostart", "GETINFO pid", "/bye").succeeds()
                .stdoutContains("OK");
    }

    @Test
    void A_Signed_Commit_Works_With_The_Flag_And_Fails_Without() {
        sandbox.git("init", "-q");
        sandbox.git("config", "user.name", "Sandbox Test");
        sandbox.git("config", "user.email", "test@agent-sandbox.invalid");
        sandbox.write("a.txt", "a\n");
        sandbox.git("add", "a.txt");

        sandbox.run("--", "git", "commit", "-q", "-S", "-m", "unsigned?").fails();
        sandbox.run("--gpg-agent", "--", "git", "commit", "-q", "-S", "-m", "signed").succeeds();
        sandbox.runOnHost(home(), "git", "log", "--show-signature", "-1").succeeds().stdoutContains("Good signature");
    }

    @Test
    void Without_An_Agent_The_Flag_Is_One_Clear_Line() {
        sandbox.runOnHost(home(), "gpgconf", "--kill", "gpg-agent");
        sandbox.run(Map.of("PATH", "/nonexistent"), "--gpg-agent", "--", "true").failsWithOneLineError()
                .stderrContains("--gpg-agent: gpgconf not found");
    }
}
