// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * ssh and {@code git push} over ssh from inside, to an sshd on the host's loopback that
 * the sandbox reaches through {@code --host-port} only, authenticated by the user's
 * ssh-agent through {@code --ssh-agent}. Both ways out: the sandbox's own network stack and
 * the fallback proxy. The sshd runs as the user running the tests (root in CI, logging in as
 * root), from a config of its own in a temp dir; the key is the test user's, held by an agent
 * the test user started.
 */
class SshPushIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @TempDir
    Path sshd;

    private Process server;
    private SandboxCli.Started agent;
    private int port;
    private Path socket;
    private Path remote;

    @BeforeEach
    void serverAndAgent() throws IOException, InterruptedException {
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        host("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshd-host-key", "-f",
                sshd.resolve("host_key").toString());
        Files.writeString(sshd.resolve("config"), """
                Port %d
                ListenAddress 127.0.0.1
                HostKey %s
                AuthorizedKeysFile %s
                PidFile %s
                StrictModes no
                UsePAM no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                """.formatted(port, sshd.resolve("host_key"), sshd.resolve("authorized_keys"), sshd.resolve("pid")));
        if (isRoot()) {
            Files.createDirectories(Path.of("/run/sshd")); // sshd's privilege separation, started as root
        }
        remote = sshd.resolve("remote.git");
        host("git", "init", "-q", "--bare", remote.toString());

        // the user's key, in the user's agent on the host; only its public half reaches sshd
        socket = sandbox.tmp().resolve("ssh-push/agent.1");
        sandbox.runOnHost("mkdir", "-p", "-m", "700", socket.getParent().toString()).succeeds();
        sandbox.runOnHost("mkdir", "-p", "-m", "700", sandbox.home(".ssh").toString()).succeeds();
        sandbox.runOnHost("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "push-key", "-f",
                sandbox.home(".ssh/id_push").toString()).succeeds();
        Files.copy(sandbox.home(".ssh/id_push.pub"), sshd.resolve("authorized_keys"));
        agent = sandbox.startOnHost(Map.of(), "ssh-agent", "-D", "-a", socket.toString());
        awaitFile(socket, "the host's ssh-agent socket");
        sandbox.runOnHost(Map.of("SSH_AUTH_SOCK", socket.toString()), "ssh-add",
                sandbox.home(".ssh/id_push").toString()).succeeds();

        server = new ProcessBuilder("/usr/sbin/sshd", "-D", "-e", "-f", sshd.resolve("config").toString())
                .redirectErrorStream(true).redirectOutput(sshd.resolve("sshd.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.readString(sshd.resolve("sshd.log")).contains("Server listening")) {
            assertThat(server.isAlive()).as("sshd runs:\n" + Files.readString(sshd.resolve("sshd.log"))).isTrue();
            assertThat(System.nanoTime() - deadline).as("sshd listens within 10 s").isNegative();
            Thread.sleep(20);
        }

        sandbox.git("init", "-q");
        sandbox.write("a.txt", "pushed from inside\n");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.destroyForcibly();
        }
        if (agent != null) {
            agent.signal("KILL");
        }
    }

    @ParameterizedTest(name = "network stack: {0}")
    @ValueSource(strings = {"stack", "proxy"})
    void Ssh_And_Git_Push_Reach_A_Granted_Host_Port_With_The_Agent(String mode) throws IOException {
        String user = System.getProperty("user.name");
        String ssh = "ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
                + " -o IdentitiesOnly=no -p " + port;
        String script = """
                %1$s %2$s@127.0.0.1 'echo remote shell says hello' 2>/dev/null
                GIT_SSH_COMMAND='%1$s' git push -q ssh://%2$s@127.0.0.1:%3$d%4$s HEAD:refs/heads/main 2>&1 \
                    && echo pushed
                """.formatted(ssh, user, port, remote);
        SandboxCli.Invocation run = sandbox.command("--host-port", Integer.toString(port), "--ssh-agent", "--",
                "sh", "-c", script).env("SSH_AUTH_SOCK", socket.toString());
        if (mode.equals("proxy")) {
            run.env("AGENT_SANDBOX_NETWORK_STACK", "proxy");
        }
        run.run().succeeds().stdoutContains("remote shell says hello", "pushed");
        String local = sandbox.git("rev-parse", "HEAD").stdout().strip();
        assertThat(host("git", "--git-dir", remote.toString(), "rev-parse", "refs/heads/main").strip())
                .as("the remote's main after the push from inside; sshd said:\n"
                        + Files.readString(sshd.resolve("sshd.log")))
                .isEqualTo(local);

        // without the port granted, sshd is out of reach, and so is the push
        SandboxCli.Invocation refused = sandbox.command("--ssh-agent", "--", "sh", "-c",
                ssh + " -o ConnectTimeout=5 " + user + "@127.0.0.1 'echo escaped: reached sshd' 2>/dev/null;"
                        + " true").env("SSH_AUTH_SOCK", socket.toString());
        if (mode.equals("proxy")) {
            refused.env("AGENT_SANDBOX_NETWORK_STACK", "proxy");
        }
        refused.run().succeeds().stdoutDoesNotContain("escaped:");
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Runs a host program as the user running the tests; its output, or a failure with it. */
    private static String host(String... command) throws IOException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            assertThat(p.waitFor()).as(String.join(" ", command) + ":\n" + out).isZero();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        return out;
    }

    private static void awaitFile(Path p, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Files.exists(p)) {
            assertThat(System.nanoTime() - deadline).as(what + " appears within 10 s").isNegative();
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
