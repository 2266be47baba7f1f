// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The network's fallback, forced: where no network stack can run (no usable
 * {@code /dev/net/tun}, no slirp4netns), a sandbox with the network on has only its
 * loopback and agent-sandbox's HTTP(S) proxy, named in the proxy variables; {@code --debug}
 * says so, with why and the fix. Here the stack is found missing for real: the caller's
 * PATH holds every program the run needs but slirp4netns.
 */
class NetworkProxyIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** A PATH of links to the programs the tests run, without slirp4netns. */
    private Map<String, String> withoutStack() {
        java.nio.file.Path bin = sandbox.world().resolve("bin-without-stack");
        sandbox.mkdirs(bin);
        for (String tool : new String[] {"bwrap", "sh", "env", "cat", "curl", "python3", "grep", "tail", "cut", "tr"}) {
            for (String dir : SandboxCli.PATH.split(":")) {
                java.nio.file.Path p = java.nio.file.Path.of(dir, tool);
                if (java.nio.file.Files.isExecutable(p) && !java.nio.file.Files.exists(bin.resolve(tool))) {
                    sandbox.symlink(bin.resolve(tool), p.toString());
                }
            }
        }
        assertThat(bin.resolve("slirp4netns")).doesNotExist();
        return Map.of("PATH", bin.toString());
    }

    @Test
    void Without_A_Stack_The_Proxy_Is_The_Way_Out_And_Debug_Says_Why() {
        Result r = sandbox.command("--debug", "--", "sh", "-c", """
                cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '
                echo "HTTPS_PROXY=$HTTPS_PROXY"
                curl -sS -m 20 -o /dev/null -w 'through the proxy %{http_code}\\n' https://registry.npmjs.org/
                curl -sS -m 5 --noproxy '*' -o /dev/null https://registry.npmjs.org/ || echo 'direct: no way'
                """).env(withoutStack()).run().succeeds();
        r.stdoutContains("lo\n", "HTTPS_PROXY=http://127.0.0.1:3128", "through the proxy 200", "direct: no way")
                .stdoutDoesNotContain("tap0")
                .stderrContains("network: on, through agent-sandbox's proxy", "only programs that use HTTP_PROXY get"
                        + " out, since slirp4netns is not installed", "apt-get install slirp4netns");
    }

    @Test
    void Chosen_By_The_Variable_The_Proxy_Keeps_The_Hosts_Loopback_Out_And_Grants_A_Port() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        SandboxCli.Started server = sandbox.startOnHost(Map.of(), "python3", "-c", """
                import socket, sys
                s = socket.socket()
                s.bind(("127.0.0.1", int(sys.argv[1])))
                s.listen()
                open(sys.argv[2], "w").close()
                while True:
                    c, _ = s.accept()
                    c.sendall(b"hello from the host")
                    c.close()
                """, Integer.toString(port), sandbox.tmp().resolve("proxy-listening").toString());
        try {
            server.awaitFile(sandbox.tmp().resolve("proxy-listening"), java.time.Duration.ofSeconds(10));
            String probe = """
                    curl -sS -m 5 http://127.0.0.1:%1$d/ 2>/dev/null | grep -q hello && echo 'escaped: direct'
                    curl -sS -m 5 --noproxy '' http://127.0.0.1:%1$d/ 2>/dev/null | grep -q hello \
                        && echo 'escaped: proxy'
                    curl -sS -m 5 --noproxy '' -o /dev/null -w 'proxy answers %%{http_code}\\n' http://localhost:%1$d/
                    python3 -c "
                    import socket
                    s = socket.create_connection(('127.0.0.1', %1$d), timeout=5)
                    print('granted', s.recv(100).decode())
                    " 2>/dev/null || echo 'not granted'
                    """.formatted(port);
            sandbox.command("--", "sh", "-c", probe).env("AGENT_SANDBOX_NETWORK_STACK", "proxy").run().succeeds()
                    .stdoutContains("proxy answers 403", "not granted").stdoutDoesNotContain("escaped", "granted hello");
            sandbox.command("--host-port", Integer.toString(port), "--", "python3", "-c", """
                    import socket
                    s = socket.create_connection(('127.0.0.1', %d), timeout=5)
                    print('granted', s.recv(100).decode())
                    """.formatted(port)).env("AGENT_SANDBOX_NETWORK_STACK", "proxy").run().succeeds()
                    .stdoutIs("granted hello from the host\n");
        } finally {
            server.signal("KILL");
        }
    }
}
