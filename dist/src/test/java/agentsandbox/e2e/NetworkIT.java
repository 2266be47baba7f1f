// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Network and Docker socket: {@code --network=false} leaves only loopback and no way
 * out; the Docker socket is unreachable unless {@code --docker} binds it in.
 */
class NetworkIT {

    /**
     * Connects to a TCP port on 127.0.0.1 or to a Unix socket, sends "ping" and prints
     * the reply; prints the error and exits 3 when it cannot connect.
     */
    private static final String CLIENT = """
            import socket, sys
            kind, where = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX if kind == "unix" else socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(10)
            try:
                s.connect(where if kind == "unix" else ("127.0.0.1", int(where)))
            except OSError as e:
                print("cannot connect:", e.strerror)
                sys.exit(3)
            s.sendall(b"ping\\n")
            print(s.recv(64).decode().strip())
            """;

    /**
     * Connects to each address and port given (pairs of arguments), bound to the device in
     * PROBE_DEVICE when set; prints "ADDRESS connected" or "ADDRESS refused: why".
     */
    private static final String PROBE = """
            import os, socket, sys
            for host, port in zip(sys.argv[1::2], sys.argv[2::2]):
                s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
                s.settimeout(3)
                if os.environ.get("PROBE_DEVICE"):
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, os.environ["PROBE_DEVICE"].encode())
                try:
                    s.connect((host, int(port)))
                    print(host, "connected")
                except OSError as e:
                    print(host, "refused:", e)
            """;

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ network

    @ParameterizedTest
    @ValueSource(strings = {"flag", "config"})
    void Network_Off_Leaves_Only_Loopback(String how) {
        Result result = sandbox.run(networkOff(how, "cat", "/proc/net/dev")).succeeds();

        assertThat(interfaces(result.stdout())).as(() -> result.describe("only lo")).containsExactly("lo");
    }

    @Test
    void Network_On_Is_A_Namespace_Of_Its_Own_With_A_Stack_And_No_Proxy_Variables() {
        Result result = sandbox.run("--debug", "--", "sh", "-c", "cat /proc/net/dev; env | grep -i _proxy=; true")
                .succeeds();

        assertThat(interfaces(result.stdout())).as(() -> result.describe("lo and the stack's device"))
                .containsExactlyInAnyOrder("lo", "tap0");
        result.stdoutDoesNotContain("_PROXY=", "_proxy=")
                .stderrContains("network: on, through a network stack of the sandbox's own");
    }

    @Test
    void The_Hosts_Loopback_Is_Unreachable_Also_Through_The_Stack_s_Gateway() throws IOException {
        requirePython();
        try (PingServer server = PingServer.tcp()) {
            // 10.0.2.2 is the host's loopback for a stack that allows it: this one does not
            sandbox.run("--", "python3", "-c", PROBE, "127.0.0.1", server.port(), "10.0.2.2", server.port(), "::1",
                    server.port()).succeeds().stdoutDoesNotContain("connected");
            // bound to the stack's device, a socket skips the routes of lo and the "prohibit" ones
            // (the kernel then takes the address as on the stack's link): loopback is local on
            // that device too, and stays inside
            sandbox.command("--", "python3", "-c", PROBE, "127.0.0.1", server.port(), "127.0.0.2", server.port())
                    .env("PROBE_DEVICE", "tap0").run().succeeds().stdoutContains("127.0.0.1 refused", "127.0.0.2 refused")
                    .stdoutDoesNotContain("connected");
            assertThat(server.accepted()).as("connections that reached the host's loopback server").isZero();
        }
    }

    @Test
    void The_Hosts_Own_Interface_Addresses_Are_Unreachable() throws IOException {
        requirePython();
        List<String> addresses = hostAddresses();
        assertThat(addresses).as("this machine's own non-loopback addresses, to probe").isNotEmpty();
        try (PingServer server = PingServer.anyAddress()) {
            List<String> args = new ArrayList<>(List.of("--", "python3", "-c", PROBE));
            for (String a : addresses) {
                args.add(a);
                args.add(server.port());
            }
            Result r = sandbox.run(args.toArray(String[]::new)).succeeds();
            for (String a : addresses) {
                r.stdoutContains(a + " refused");
            }
            r.stdoutDoesNotContain("connected");
            // bound to the stack's device, a socket skips the routing table's verdict: still nothing
            sandbox.command("--", "python3", "-c", PROBE, addresses.get(0), server.port())
                    .env("PROBE_DEVICE", "tap0").run().succeeds().stdoutDoesNotContain("connected");
            assertThat(server.accepted()).as("connections that reached the host's server on its addresses").isZero();
        }
    }

    @Test
    void Cloud_Metadata_Addresses_Are_Unreachable() {
        requirePython();
        // blocked inside the sandbox: no packet to these leaves it
        sandbox.run("--", "python3", "-c", PROBE, "169.254.169.254", "80", "169.254.0.1", "80", "fd00:ec2::254",
                "80").succeeds().stdoutContains("169.254.169.254 refused", "169.254.0.1 refused",
                "fd00:ec2::254 refused").stdoutDoesNotContain("connected");
    }

    @Test
    void The_Hosts_Abstract_Sockets_Are_Unreachable() {
        requirePython();
        String name = "agent-sandbox-net-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        SandboxCli.Started listener = sandbox.startOnHost(java.util.Map.of(), "python3", "-c", """
                import socket, sys
                s = socket.socket(socket.AF_UNIX)
                s.bind("\\0" + sys.argv[1])
                s.listen()
                open(sys.argv[2], "w").close()
                print("listening", flush=True)
                while True:
                    c, _ = s.accept()
                    print("accepted", flush=True)
                    c.close()
                """, name, sandbox.tmp().resolve("abstract-listening").toString());
        String connect = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect("\\0" + sys.argv[1])
                    print("connected")
                except OSError as e:
                    print("refused:", e.strerror)
                """;
        try {
            listener.awaitFile(sandbox.tmp().resolve("abstract-listening"), java.time.Duration.ofSeconds(10));
            sandbox.runOnHost("python3", "-c", connect, name).succeeds().stdoutIs("connected\n");
            sandbox.run("--", "python3", "-c", connect, name).succeeds().stdoutIs("refused: Connection refused\n");
        } finally {
            listener.signal("KILL");
        }
        assertThat(listener.waitFor(java.time.Duration.ofSeconds(10)).stdout())
                .as("the host's own probe was accepted, the sandbox's was not").isEqualTo("listening\naccepted\n");
    }

    @Test
    void The_Sandbox_Cannot_Take_Its_Routes_Away() {
        requirePython();
        // The routes belong to a user namespace above the sandbox's own: neither the command nor a
        // user namespace it makes itself has a capability there.
        sandbox.run("--", "sh", "-c", "ip route del prohibit 169.254.0.0/16; unshare -r ip route del prohibit"
                + " 169.254.0.0/16; ip route flush table main; python3 -c \"$0\" 169.254.169.254 80; ip route", PROBE)
                .succeeds().stdoutContains("169.254.169.254 refused", "prohibit 169.254.0.0/16")
                .stdoutDoesNotContain("connected");
    }

    @Test
    void Without_The_Launcher_s_Starter_The_Stack_Comes_Up_The_Same() {
        // a variable that is not UTF-8 keeps its bytes only when the tool starts bwrap itself,
        // through the launcher's face that execs bwrap: that one starts the stack then
        Result result = sandbox.runOnHost("sh", "-c", "RAW=$(printf 'a\\377') && export RAW && exec \"$0\" -- sh -c"
                + " 'cat /proc/net/dev; { ip route; printf %s \"$RAW\" | od -An -c; } >&2'",
                sandbox.launcher().toString())
                .succeeds();

        assertThat(interfaces(result.stdout())).as(() -> result.describe("lo and the stack's device"))
                .containsExactlyInAnyOrder("lo", "tap0");
        result.stderrContains("prohibit 169.254.0.0/16", "377");
    }

    @Test
    void The_Stack_Ends_With_The_Run_And_With_A_Run_That_Stops_Before_Bwrap() {
        // the real stack under a shell whose command line names it: the shell ends only with the run
        Path stack = sandbox.write(sandbox.home("stack-" + System.nanoTime()), """
                #!/bin/sh
                slirp4netns "$@"
                while :; do sleep 1; done
                """);
        try {
            Files.setPosixFilePermissions(stack, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        sandbox.command("--", "sh", "-c", "echo ran").env("AGENT_SANDBOX_NETWORK_STACK", stack.toString()).run()
                .succeeds().stdoutIs("ran\n");
        SandboxCli.awaitNoHostProcessWith(stack.toString(), java.time.Duration.ofSeconds(5), "after the run");

        // the stack starts while the plan is made; a plan that then fails leaves none behind
        sandbox.command("--", "sh", "-c", "echo ran").env("AGENT_SANDBOX_NETWORK_STACK", stack.toString())
                .env("HOME", sandbox.home("missing").toString()).run().failsWithOneLineError()
                .stderrContains("does not exist");
        SandboxCli.awaitNoHostProcessWith(stack.toString(), java.time.Duration.ofSeconds(5), "after a failed plan");
    }

    @Test
    void A_Stack_That_Does_Not_Come_Up_Whole_Is_One_Line_And_Nothing_Runs() throws IOException {
        String[][] stacks = {
            // closes the descriptor it should say "ready" on, and goes on
            {"for a; do case $a in --ready-fd=*) eval \"exec ${a#--ready-fd=}>&-\";; esac; done; sleep 600",
                "did not say it was ready"},
            // says it is ready, then ends (its line says so, or that it made no device: whichever
            // the holder sees first)
            {"for a; do case $a in --ready-fd=*) eval \"printf 1 >&${a#--ready-fd=}\";; esac; done; exit 0",
                "stack-"},
            // says it is ready, and makes no device
            {"for a; do case $a in --ready-fd=*) eval \"printf 1 >&${a#--ready-fd=}\";; esac; done; sleep 600",
                "made no tap0"}};
        for (String[] stack : stacks) {
            Path program = sandbox.write(sandbox.home("stack-" + System.nanoTime()), "#!/bin/sh\n" + stack[0] + "\n");
            Files.setPosixFilePermissions(program, PosixFilePermissions.fromString("rwxr-xr-x"));
            sandbox.command("--", "sh", "-c", "echo should not run > ran")
                    .env("AGENT_SANDBOX_NETWORK_STACK", program.toString()).run().failsWithOneLineError()
                    .stdoutIsEmpty().stderrContains("cannot start the sandbox's network", stack[1]);
            assertThat(sandbox.project("ran")).doesNotExist();
            SandboxCli.awaitNoHostProcessWith(program.toString(), java.time.Duration.ofSeconds(5), "after the run");
        }
    }

    @Test
    void An_Unusable_Stack_Is_One_Line_And_Nothing_Runs() {
        sandbox.command("--", "sh", "-c", "echo should not run > ran").env("AGENT_SANDBOX_NETWORK_STACK", "/bin/false")
                .run().failsWithOneLineError().stdoutIsEmpty()
                .stderrContains("cannot start the sandbox's network", "/bin/false");
        assertThat(sandbox.project("ran")).doesNotExist();

        sandbox.command("--", "sh", "-c", "echo should not run > ran").env("AGENT_SANDBOX_NETWORK_STACK", "slirp4netns")
                .run().failsWithOneLineError().stdoutIsEmpty()
                .stderrContains("AGENT_SANDBOX_NETWORK_STACK=slirp4netns is not an executable program");
        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /** This machine's own addresses but its loopback's and link-local ones, as the sandbox would spell them. */
    private static List<String> hostAddresses() throws IOException {
        List<String> out = new ArrayList<>();
        for (java.net.NetworkInterface nic : java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
            for (java.net.InetAddress a : java.util.Collections.list(nic.getInetAddresses())) {
                if (!a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    String text = a.getHostAddress();
                    out.add(text.contains("%") ? text.substring(0, text.indexOf('%')) : text);
                }
            }
        }
        return out;
    }

    @ParameterizedTest
    @ValueSource(strings = {"flag", "config"})
    void Network_Off_Cannot_Reach_A_Server_On_The_Hosts_Loopback(String how) throws IOException {
        requirePython();
        try (PingServer server = PingServer.tcp()) {
            sandbox.run(networkOff(how, "python3", "-c", CLIENT, "tcp", server.port()))
                    .exitsWith(3)
                    .stdoutIs("cannot connect: Connection refused\n");

            assertThat(server.accepted()).as("connections that reached the host's server").isZero();
        }
    }

    @Test
    void Network_On_Reaches_A_Server_On_The_Hosts_Loopback_Only_When_Its_Port_Is_Granted() throws IOException {
        requirePython();
        try (PingServer server = PingServer.tcp()) {
            sandbox.run("--", "python3", "-c", CLIENT, "tcp", server.port())
                    .exitsWith(3)
                    .stdoutIs("cannot connect: Connection refused\n");
            assertThat(server.accepted()).as("connections that reached the host's server").isZero();

            sandbox.run("--host-port", server.port(), "--", "python3", "-c", CLIENT, "tcp", server.port())
                    .succeeds().stdoutIs("pong\n");
            assertThat(server.accepted()).isEqualTo(1);
        }
    }

    private String[] networkOff(String how, String... command) {
        List<String> args = new ArrayList<>();
        if (how.equals("flag")) {
            args.add("--network=false");
        } else {
            sandbox.write(".agent-sandbox.json", "{\"network\": false}");
        }
        args.add("--");
        args.addAll(List.of(command));
        return args.toArray(String[]::new);
    }

    /** The interface names in the text of /proc/net/dev. */
    private static List<String> interfaces(String procNetDev) {
        return procNetDev.lines().skip(2).map(l -> l.substring(0, l.indexOf(':')).strip()).toList();
    }

    // ------------------------------------------------------------------ Docker

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void Docker_Socket_Is_Unreachable_By_Default(boolean throughSymlink) throws IOException {
        requirePython();
        try (PingServer server = PingServer.unix(sandbox, sandbox.world().resolve("docker/docker.sock"))) {
            Path named = throughSymlink
                    ? sandbox.symlink(sandbox.world().resolve("run-link/docker.sock"), server.path().toString())
                    : server.path();

            sandbox.command("--", "sh", "-c", "test -S \"$1\" || echo not a socket; python3 -c \"$2\" unix \"$1\"",
                            "sh", named.toString(), CLIENT)
                    .env("DOCKER_HOST", "unix://" + named)
                    .run()
                    .exitsWith(3)
                    .stdoutIs("not a socket\ncannot connect: Connection refused\n");

            assertThat(server.accepted()).as("connections that reached the Docker socket").isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"--docker", "--docker=true", "config"})
    void Docker_Enabled_Binds_The_Socket_In(String how) throws IOException {
        requirePython();
        try (PingServer server = PingServer.unix(sandbox, sandbox.world().resolve("docker/docker.sock"))) {
            List<String> args = new ArrayList<>();
            if (how.equals("config")) {
                sandbox.write(".agent-sandbox.json", "{\"docker\": true}");
                sandbox.run("trust").succeeds(); // Docker on loosens the policy: the user trusts it first
            } else {
                args.add(how);
            }
            args.addAll(List.of("--", "python3", "-c", CLIENT, "unix", server.path().toString()));

            sandbox.command(args.toArray(String[]::new)).env("DOCKER_HOST", "unix://" + server.path()).run()
                    .succeeds()
                    .stdoutIs("pong\n");

            assertThat(server.accepted()).isEqualTo(1);
        }
    }

    @Test
    void Docker_Enabled_Without_A_Socket_Is_Refused() {
        Path missing = sandbox.world().resolve("docker/missing.sock");

        sandbox.command("--docker", "--", "sh", "-c", "echo should not run > ran")
                .env("DOCKER_HOST", "unix://" + missing)
                .run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("Docker", missing.toString());

        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    private static void requirePython() {
        for (String dir : SandboxCli.PATH.split(":")) {
            if (Files.isExecutable(Path.of(dir, "python3"))) {
                return;
            }
        }
        throw new AssertionError("python3 not found on " + SandboxCli.PATH
                + ": the network and Docker socket tests connect with it (apt-get install python3)");
    }

    /** Answers "pong" to every connection that sends a line; counts the connections it accepted. */
    private static final class PingServer implements AutoCloseable {
        private final ServerSocketChannel channel;
        private final Path path;
        private final AtomicInteger accepted = new AtomicInteger();
        private final Thread thread;

        private PingServer(ServerSocketChannel channel, Path path) {
            this.channel = channel;
            this.path = path;
            this.thread = Thread.ofPlatform().daemon().name("ping-server").start(this::serve);
        }

        static PingServer tcp() throws IOException {
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.INET);
            channel.bind(new InetSocketAddress("127.0.0.1", 0));
            return new PingServer(channel, null);
        }

        /** On every address of this machine, IPv4 and IPv6. */
        static PingServer anyAddress() throws IOException {
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.INET6);
            channel.bind(new InetSocketAddress(0));
            return new PingServer(channel, null);
        }

        /** On an abstract Unix socket of the host (Linux's "\0name"). */
        static PingServer abstractName(String name) throws IOException {
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            channel.bind(UnixDomainSocketAddress.of("\0" + name));
            return new PingServer(channel, null);
        }

        /** A Unix socket at {@code path} that the test user may connect to. */
        static PingServer unix(SandboxCli sandbox, Path path) throws IOException {
            sandbox.mkdirs(path.getParent());
            ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            SocketAddress address = UnixDomainSocketAddress.of(path);
            channel.bind(address);
            Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-rw-rw-"));
            sandbox.chown(path);
            return new PingServer(channel, path);
        }

        String port() {
            return Integer.toString(channel.socket().getLocalPort());
        }

        Path path() {
            return path;
        }

        int accepted() {
            return accepted.get();
        }

        private void serve() {
            while (channel.isOpen()) {
                try (SocketChannel client = channel.accept()) {
                    accepted.incrementAndGet();
                    ByteBuffer buffer = ByteBuffer.allocate(64);
                    while (buffer.hasRemaining() && client.read(buffer) >= 0
                            && !new String(buffer.array(), 0, buffer.position(), StandardCharsets.UTF_8).contains("\n")) {
                        // until the whole line is in
                    }
                    client.write(ByteBuffer.wrap("pong\n".getBytes(StandardCharsets.UTF_8)));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (path != null) {
                Files.deleteIfExists(path);
            }
        }
    }
}
