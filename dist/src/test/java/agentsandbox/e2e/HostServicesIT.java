// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host session's services, started on the host as the same user the way a desktop or
 * a terminal session has them (a tmux server, a D-Bus session bus on a file and on an
 * abstract address, an ssh-agent holding a key, an X server, a loopback listener, an
 * abstract-socket listener, a session keyring holding a key), attacked from inside with
 * the caller's environment pointing at them, {@code TMPDIR} set and unset, network on and
 * off. Every route must fail and the host must show no effect; each test first proves on
 * the host that the same route works there, so a failing route inside means something.
 */
class HostServicesIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private static final AtomicInteger IDS = new AtomicInteger((int) (ProcessHandle.current().pid() % 500) * 10);

    /** TMPDIR set (the harness's) or unset (host /tmp), network on or off. */
    static Stream<Arguments> settings() {
        return Stream.of(Arguments.of(true, true), Arguments.of(true, false), Arguments.of(false, true),
                Arguments.of(false, false));
    }

    private SandboxCli.Invocation inside(boolean tmpdirSet, boolean network, Map<String, String> env,
            String script) {
        List<String> args = new ArrayList<>();
        if (!network) {
            args.add("--network=false");
        }
        args.addAll(List.of("--", "sh", "-c", script));
        SandboxCli.Invocation i = sandbox.command(args.toArray(String[]::new)).env(env);
        if (!tmpdirSet) {
            i.env("TMPDIR", null);
        }
        return i;
    }

    private Map<String, String> hostEnv(boolean tmpdirSet) {
        Map<String, String> env = new LinkedHashMap<>();
        if (!tmpdirSet) {
            env.put("TMPDIR", "/tmp");
        }
        return env;
    }

    /** tmux needs a terminal type, and a shell (the test user's login shell is nologin). */
    private static Map<String, String> tmuxEnv(Map<String, String> env) {
        Map<String, String> all = new LinkedHashMap<>(env);
        all.put("TERM", "xterm");
        all.put("SHELL", "/bin/sh");
        return all;
    }

    private Path marker(String name) {
        return sandbox.home("pwned-" + name);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitPath(Path p, String what) {
        for (int i = 0; i < 200 && !Files.exists(p); i++) {
            pause(25);
        }
        assertThat(p).as(what).exists();
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void A_Tmux_Server_Of_The_Host_Cannot_Be_Driven_From_Inside(boolean tmpdirSet, boolean network) {
        String name = "hs" + IDS.incrementAndGet();
        Path socket = Path.of("/tmp/tmux-" + sandbox.uid(), name);
        try {
            sandbox.runOnHost(tmuxEnv(hostEnv(tmpdirSet)), "tmux", "-L", name, "new-session", "-d", "-s", "main",
                    "sleep 1000").succeeds();
            awaitPath(socket, "the host's tmux socket");
            // on the host, the route works
            sandbox.runOnHost(tmuxEnv(Map.of()), "tmux", "-L", name, "run-shell", "touch " + marker("host-tmux"))
                    .succeeds();
            awaitPath(marker("host-tmux"), "the host's own tmux run-shell");

            Result r = inside(tmpdirSet, network, Map.of("TMUX", socket + ",1,0", "TMUX_PANE", "%0"), """
                    tmux -L %1$s send-keys -t main 'touch %2$s' Enter && echo "escaped: send-keys"
                    tmux -L %1$s run-shell 'touch %3$s' && echo "escaped: run-shell"
                    tmux -S %4$s run-shell 'touch %3$s' && echo "escaped: -S socket"
                    [ -z "$TMUX" ] || echo "escaped: TMUX passed on"
                    [ -e %4$s ] && echo "escaped: socket visible"
                    true
                    """.formatted(name, marker("tmux-keys"), marker("tmux-shell"), socket)).run().succeeds();
            pause(300);
            r.stdoutDoesNotContain("escaped:");
            assertThat(marker("tmux-keys")).doesNotExist();
            assertThat(marker("tmux-shell")).doesNotExist();
        } finally {
            sandbox.runOnHost("tmux", "-L", name, "kill-server");
        }
    }

    @Test
    void A_Tmux_Socket_Dir_Moved_Into_The_Home_Is_Hidden_Too() {
        String name = "hs" + IDS.incrementAndGet();
        Path dir = sandbox.mkdirs(sandbox.home("tmux-dir"));
        Map<String, String> env = Map.of("TMUX_TMPDIR", dir.toString());
        try {
            sandbox.runOnHost(tmuxEnv(env), "tmux", "-L", name, "new-session", "-d", "-s", "main", "sleep 1000")
                    .succeeds();
            Path socket = dir.resolve("tmux-" + sandbox.uid()).resolve(name);
            awaitPath(socket, "the host's tmux socket");
            sandbox.command("--", "sh", "-c", "tmux -L " + name + " run-shell 'touch " + marker("tmux-home")
                    + "' && echo escaped; ls -A " + socket.getParent() + "; true").env(env).run().succeeds()
                    .stdoutDoesNotContain("escaped", name);
            assertThat(marker("tmux-home")).doesNotExist();
        } finally {
            sandbox.runOnHost(env, "tmux", "-L", name, "kill-server");
        }
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void The_Session_Bus_Is_Out_Of_Reach_On_A_File_And_On_An_Abstract_Address(boolean tmpdirSet, boolean network) {
        int id = IDS.incrementAndGet();
        Path fileBus = tmpdirSet ? sandbox.home("bus-" + id) : Path.of("/tmp/agent-sandbox-test-bus-" + id);
        List<String> addresses = List.of("unix:path=" + fileBus, "unix:abstract=agent-sandbox-test-bus-" + id);
        for (String address : addresses) {
            SandboxCli.Started daemon = sandbox.startOnHost(Map.of(), "dbus-daemon", "--session", "--nofork",
                    "--address=" + address);
            try {
                boolean up = false;
                for (int i = 0; i < 200 && !up; i++) {
                    pause(25);
                    up = sandbox.runOnHost(Map.of("DBUS_SESSION_BUS_ADDRESS", address), "dbus-send", "--session",
                            "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                            "org.freedesktop.DBus.ListNames").exitCode() == 0;
                }
                assertThat(up).as("the host's bus at " + address + " answers on the host").isTrue();
                inside(tmpdirSet, network, Map.of("DBUS_SESSION_BUS_ADDRESS", address), """
                        send() { dbus-send "$@" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \\
                            org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:LD_PRELOAD,%2$s; }
                        send --session && echo "escaped: session bus from the variable"
                        send --bus=%1$s && echo "escaped: bus named explicitly"
                        [ -z "$DBUS_SESSION_BUS_ADDRESS" ] || echo "escaped: variable passed on"
                        true
                        """.formatted(address, sandbox.project("evil.so"))).run().succeeds()
                        .stdoutDoesNotContain("escaped:");
            } finally {
                daemon.signal("KILL");
            }
        }
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void The_Ssh_Agent_Cannot_List_Or_Use_Keys_Unless_Granted(boolean tmpdirSet, boolean network) throws IOException {
        int id = IDS.incrementAndGet();
        Path socket = tmpdirSet ? sandbox.tmp().resolve("ssh-" + id + "/agent.1") : Path.of("/tmp/ssh-as" + id, "agent.1");
        sandbox.runOnHost("mkdir", "-p", "-m", "700", socket.getParent().toString()).succeeds();
        // a killed agent leaves its socket file, and a test run with the same ids would not bind
        sandbox.runOnHost("rm", "-f", socket.toString()).succeeds();
        sandbox.runOnHost("mkdir", "-p", "-m", "700", sandbox.home(".ssh").toString()).succeeds();
        sandbox.runOnHost("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "agent-sandbox-test-key", "-f",
                sandbox.home(".ssh/id_test").toString()).succeeds();
        SandboxCli.Started agent = sandbox.startOnHost(Map.of(), "ssh-agent", "-D", "-a", socket.toString());
        try {
            awaitPath(socket, "the host's ssh-agent socket");
            Map<String, String> env = Map.of("SSH_AUTH_SOCK", socket.toString());
            sandbox.runOnHost(env, "ssh-add", sandbox.home(".ssh/id_test").toString()).succeeds();
            sandbox.runOnHost(env, "ssh-add", "-L").succeeds().stdoutContains("agent-sandbox-test-key");

            inside(tmpdirSet, network, env, """
                    ssh-add -L && echo "escaped: keys listed"
                    SSH_AUTH_SOCK=%s ssh-add -L && echo "escaped: socket named explicitly"
                    [ -z "$SSH_AUTH_SOCK" ] || echo "escaped: variable passed on"
                    true
                    """.formatted(socket)).run().succeeds().stdoutDoesNotContain("escaped:", "agent-sandbox-test-key");

            // the opt-in: the agent, not the key files
            List<String> args = new ArrayList<>(network ? List.of() : List.of("--network=false"));
            args.addAll(List.of("--ssh-agent", "--", "sh", "-c",
                    "ssh-add -L; cat ~/.ssh/id_test && echo escaped: key file read; true"));
            SandboxCli.Invocation granted = sandbox.command(args.toArray(String[]::new)).env(env);
            if (!tmpdirSet) {
                granted.env("TMPDIR", null);
            }
            granted.run().succeeds().stdoutContains("agent-sandbox-test-key").stdoutDoesNotContain("escaped:");
        } finally {
            sandbox.runOnHost("rm", "-rf", socket.getParent().toString());
            agent.signal("KILL");
        }
    }

    /** Asks the agent at SSH_AUTH_SOCK to lock itself (SSH_AGENTC_LOCK, 22); exits 0 when it did. */
    private static final String LOCK_AGENT = """
            import os, socket, struct, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(os.environ["SSH_AUTH_SOCK"])
            body = bytes([22]) + struct.pack(">I", 2) + b"pw"
            s.sendall(struct.pack(">I", len(body)) + body)
            answer = s.recv(5)
            print("lock answer", answer[4])
            sys.exit(0 if answer[4] == 6 else 1)
            """;

    /**
     * With {@code --ssh-agent} the sandbox can list the agent's keys and sign with them, and
     * nothing else: removing every key, adding one, locking the agent are refused, and the
     * host's agent holds the same keys afterwards. With key comments named, only those keys
     * are listed and sign.
     */
    @Test
    void The_Granted_Ssh_Agent_Signs_But_Cannot_Be_Managed_From_Inside() {
        int id = IDS.incrementAndGet();
        Path socket = sandbox.tmp().resolve("ssh-" + id + "/agent.1");
        sandbox.runOnHost("mkdir", "-p", "-m", "700", socket.getParent().toString()).succeeds();
        sandbox.runOnHost("rm", "-f", socket.toString()).succeeds();
        sandbox.runOnHost("mkdir", "-p", "-m", "700", sandbox.home(".ssh").toString()).succeeds();
        for (String name : List.of("work", "deploy")) {
            sandbox.runOnHost("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "key-" + name, "-f",
                    sandbox.home(".ssh/id_" + name).toString()).succeeds();
            sandbox.runOnHost("cp", sandbox.home(".ssh/id_" + name + ".pub").toString(),
                    sandbox.project(name + ".pub").toString()).succeeds();
        }
        // a key of the sandbox's own, which it tries to add
        sandbox.runOnHost("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "planted-key", "-f",
                sandbox.project("planted").toString()).succeeds();
        sandbox.write("message", "to be signed\n");
        SandboxCli.Started agent = sandbox.startOnHost(Map.of(), "ssh-agent", "-D", "-a", socket.toString());
        try {
            awaitPath(socket, "the host's ssh-agent socket");
            Map<String, String> env = Map.of("SSH_AUTH_SOCK", socket.toString());
            sandbox.runOnHost(env, "ssh-add", sandbox.home(".ssh/id_work").toString(),
                    sandbox.home(".ssh/id_deploy").toString()).succeeds();
            // on the host, the agent can be managed: a key added and removed again
            sandbox.runOnHost(env, "ssh-add", sandbox.project("planted").toString()).succeeds();
            sandbox.runOnHost(env, "ssh-add", "-d", sandbox.project("planted.pub").toString()).succeeds();
            String before = sandbox.runOnHost(env, "ssh-add", "-l").succeeds().stdout();
            assertThat(before).contains("key-work", "key-deploy").doesNotContain("planted-key");

            sandbox.command("--ssh-agent", "--", "sh", "-c", """
                    ssh-add -l
                    ssh-add -D && echo "escaped: keys removed"
                    ssh-add planted && echo "escaped: key added"
                    python3 -c "$LOCK" && echo "escaped: agent locked"
                    ssh-keygen -Y sign -f work.pub -n file message && echo "signed with work"
                    true
                    """).env(env).env("LOCK", LOCK_AGENT).run().succeeds()
                    .stdoutContains("key-work", "key-deploy", "signed with work", "lock answer 5")
                    .stdoutDoesNotContain("escaped:");
            assertThat(sandbox.project("message.sig")).as("the signature made inside").exists();
            sandbox.runOnHost("sh", "-c", "printf 'me %s\\n' \"$(cut -d' ' -f1,2 work.pub)\" > allowed").succeeds();
            sandbox.runOnHost("sh", "-c", "ssh-keygen -Y verify -f allowed -I me -n file -s message.sig < message")
                    .succeeds();
            assertThat(sandbox.runOnHost(env, "ssh-add", "-l").succeeds().stdout())
                    .as("the host agent's keys after the attempts inside").isEqualTo(before);

            // one key named: the other is neither listed nor used
            sandbox.runOnHost("rm", "-f", sandbox.project("message.sig").toString()).succeeds();
            sandbox.command("--ssh-agent=key-work", "--", "sh", "-c", """
                    ssh-add -l
                    ssh-keygen -Y sign -f work.pub -n file message >/dev/null && echo "signed with work"
                    rm -f message.sig
                    ssh-keygen -Y sign -f deploy.pub -n file message && echo "escaped: signed with deploy"
                    true
                    """).env(env).run().succeeds()
                    .stdoutContains("key-work", "signed with work")
                    .stdoutDoesNotContain("key-deploy", "escaped:");

            // a comment that names no key
            sandbox.command("--ssh-agent=key-nosuch", "--", "true").env(env).run().failsWithOneLineError()
                    .stderrContains("no key in your ssh-agent has the comment \"key-nosuch\"", "key-work");
        } finally {
            sandbox.runOnHost("rm", "-rf", socket.getParent().toString());
            agent.signal("KILL");
        }
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void The_X_Server_Cannot_Be_Reached_On_Its_File_Or_Abstract_Socket(boolean tmpdirSet, boolean network)
            throws IOException {
        int display = freeDisplay();
        SandboxCli.Started x = sandbox.startOnHost(Map.of(), "Xvfb", ":" + display, "-nolisten", "tcp");
        try {
            boolean up = false;
            for (int i = 0; i < 200 && !up; i++) {
                pause(50);
                up = sandbox.runOnHost("xdpyinfo", "-display", ":" + display).exitCode() == 0;
            }
            assertThat(up).as("Xvfb :" + display + " answers on the host").isTrue();
            inside(tmpdirSet, network, Map.of("DISPLAY", ":" + display, "XAUTHORITY", sandbox.home(".Xauthority")
                    .toString()), """
                    xdpyinfo >/dev/null 2>&1 && echo "escaped: display from the variable"
                    xdpyinfo -display :%1$d >/dev/null 2>&1 && echo "escaped: display named explicitly"
                    xdotool type --display :%1$d 'touch %2$s' 2>/dev/null && echo "escaped: typed"
                    [ -z "$DISPLAY" ] || echo "escaped: DISPLAY passed on"
                    true
                    """.formatted(display, marker("x11"))).run().succeeds().stdoutDoesNotContain("escaped:");
        } finally {
            ProcessHandle.of(x.pid()).ifPresent(ProcessHandle::destroyForcibly);
            // SIGKILL leaves the server's lock and socket behind: gone for the next test run
            Files.deleteIfExists(Path.of("/tmp/.X" + display + "-lock"));
            Files.deleteIfExists(Path.of("/tmp/.X11-unix/X" + display));
        }
    }

    /** A display number no X server (nor one killed earlier) has a lock or a socket of. */
    private static int freeDisplay() {
        for (int i = 0; i < 400; i++) {
            int display = 50 + IDS.incrementAndGet() % 400;
            if (!Files.exists(Path.of("/tmp/.X" + display + "-lock"))
                    && !Files.exists(Path.of("/tmp/.X11-unix/X" + display))) {
                return display;
            }
        }
        throw new AssertionError("no free X display between :50 and :449");
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void Host_Loopback_And_Abstract_Listeners_Are_Unreachable_And_Names_Cannot_Be_Taken(boolean tmpdirSet,
            boolean network) throws IOException {
        int id = IDS.incrementAndGet();
        int port = freePort();
        String abstractName = "agent-sandbox-test-" + id;
        SandboxCli.Started tcp = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER.formatted(
                "socket.AF_INET", "('127.0.0.1', " + port + ")"));
        SandboxCli.Started unix = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER.formatted(
                "socket.AF_UNIX", "'\\0" + abstractName + "'"));
        try {
            awaitListening(port, abstractName);
            int squatPort = freePort();
            String squatName = "agent-sandbox-squat-" + id;
            SandboxCli.Started squatter = inside(tmpdirSet, network, Map.of(), """
                    python3 -c "
                    import socket
                    def probe(family, address, what):
                        s = socket.socket(family)
                        s.settimeout(3)
                        try:
                            s.connect(address)
                            print('escaped:', what, s.recv(100))
                        except OSError:
                            pass
                    probe(socket.AF_INET, ('127.0.0.1', %1$d), 'host loopback')
                    probe(socket.AF_UNIX, '\\0%2$s', 'host abstract socket')
                    "
                    for h in 127.0.0.1 localhost; do
                        curl -s -m 5 --noproxy '' -x http://127.0.0.1:3128 http://$h:%1$d/ | grep -q 'hello from' \
                            && echo "escaped: proxy to $h"
                    done
                    python3 -c "
                    import socket, time
                    a = socket.socket(socket.AF_UNIX); a.bind('\\0%3$s'); a.listen()
                    t = socket.socket(socket.AF_INET); t.bind(('127.0.0.1', %4$d)); t.listen()
                    open('%5$s', 'w').close()
                    time.sleep(3)
                    "
                    """.formatted(port, abstractName, squatName, squatPort, sandbox.project("squatting"))).start();
            awaitPath(sandbox.project("squatting"), "the squatter listening inside");
            sandbox.runOnHost("python3", "-c", """
                    import socket
                    for family, address in ((socket.AF_UNIX, '\\0%s'), (socket.AF_INET, ('127.0.0.1', %d))):
                        s = socket.socket(family)
                        s.settimeout(2)
                        try:
                            s.connect(address)
                            print('escaped: the host reached a name taken inside', address)
                        except OSError:
                            pass
                    """.formatted(squatName, squatPort)).succeeds().stdoutDoesNotContain("escaped");
            squatter.waitFor(Duration.ofSeconds(30)).succeeds().stdoutDoesNotContain("escaped:");
        } finally {
            tcp.signal("KILL");
            unix.signal("KILL");
        }
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void No_Host_Key_Can_Be_Read_Changed_Or_Planted(boolean tmpdirSet, boolean network) {
        String flags = network ? "" : "--network=false ";
        Result r = sandbox.runOnHost(hostEnv(tmpdirSet), "keyctl", "session", "-", "sh", "-c", """
                id=$(keyctl add user agent-sandbox-secret s3cr3t-value @s) || exit 99
                keyctl print "$id" >/dev/null || exit 98
                %1$s %2$s-- sh -c '
                    keyctl print '"$id"' && echo "escaped: read"
                    keyctl update '"$id"' changed && echo "escaped: changed"
                    keyctl add user planted p @s && echo "escaped: planted in @s"
                    keyctl add user planted p @u && echo "escaped: planted in @u"
                    keyctl link '"$id"' @s && echo "escaped: linked"
                    grep -q s3cr3t-value /proc/keys 2>/dev/null && echo "escaped: /proc/keys"
                    true'
                keyctl print "$id"
                keyctl search @s user planted >/dev/null 2>&1 && echo "escaped: planted key on the host"
                true
                """.formatted(sandbox.launcher(), flags));
        r.succeeds().stdoutDoesNotContain("escaped:").stdoutContains("s3cr3t-value");
        assertThat(r.stdout().indexOf("s3cr3t-value")).as("the secret appears once, printed by the host")
                .isEqualTo(r.stdout().lastIndexOf("s3cr3t-value"));
    }

    @ParameterizedTest(name = "TMPDIR set {0}, network {1}")
    @MethodSource("settings")
    void Tmp_And_The_Sandboxs_Own_Loopback_Work_And_Tmp_Is_Private(boolean tmpdirSet, boolean network)
            throws IOException {
        Path hostTmpFile = tmpdirSet ? sandbox.write(sandbox.tmp().resolve("host-file"), "host") : null;
        int port = freePort();
        inside(tmpdirSet, network, Map.of(), """
                echo data > /tmp/own && cat /tmp/own
                d=$(mktemp -d) && touch "$d/x" && echo "mktemp ok $d"
                echo "TMPDIR=$TMPDIR"
                ls -A /tmp
                python3 -c "
                import socket
                s = socket.socket(); s.bind(('127.0.0.1', %d)); s.listen()
                c = socket.create_connection(s.getsockname()); a, _ = s.accept(); c.sendall(b'own loopback ok')
                print(a.recv(100).decode())
                "
                """.formatted(port)).run().succeeds().stdoutContains("data", "mktemp ok /tmp/", "TMPDIR=/tmp",
                "own loopback ok").stdoutDoesNotContain("host-file");
        if (hostTmpFile != null) {
            assertThat(hostTmpFile).hasContent("host");
        }
        // the private /tmp is gone with the run, and so is everything else of it
        assertThat(sandbox.home(".local/state/agent-sandbox/run")).isEmptyDirectory();
    }

    @Test
    void Shared_Tmp_Is_The_Host_Temp_Dir_Without_Its_Session_Sockets() throws IOException {
        String name = "hs" + IDS.incrementAndGet();
        Map<String, String> env = Map.of("TMUX_TMPDIR", sandbox.tmp().toString());
        sandbox.write(sandbox.tmp().resolve("shared-file"), "shared");
        try {
            sandbox.runOnHost(tmuxEnv(env), "tmux", "-L", name, "new-session", "-d", "-s", "main", "sleep 1000")
                    .succeeds();
            awaitPath(sandbox.tmp().resolve("tmux-" + sandbox.uid()).resolve(name), "the host's tmux socket");
            sandbox.command("--share-tmp", "--", "sh", "-c", "cat /tmp/shared-file; echo new > /tmp/from-inside;"
                    + " ls -A /tmp/tmux-" + sandbox.uid() + "; tmux -S /tmp/tmux-" + sandbox.uid() + "/" + name
                    + " run-shell 'touch " + marker("shared-tmux") + "' && echo escaped; true").env(env).run()
                    .succeeds().stdoutContains("shared").stdoutDoesNotContain("escaped", name);
            assertThat(sandbox.tmp().resolve("from-inside")).hasContent("new");
            assertThat(marker("shared-tmux")).doesNotExist();
        } finally {
            sandbox.runOnHost(env, "tmux", "-L", name, "kill-server");
        }
    }

    @Test
    void Network_On_Reaches_Out_And_A_Granted_Host_Port_Only() throws IOException {
        int granted = freePort();
        int other = freePort();
        SandboxCli.Started a = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER.formatted("socket.AF_INET",
                "('127.0.0.1', " + granted + ")"));
        SandboxCli.Started b = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER.formatted("socket.AF_INET",
                "('127.0.0.1', " + other + ")"));
        try {
            awaitListening(granted, null);
            awaitListening(other, null);
            sandbox.run("--host-port", Integer.toString(granted), "--", "sh", "-c", """
                    python3 -c "
                    import socket
                    for port in (%d, %d):
                        try:
                            s = socket.create_connection(('127.0.0.1', port), timeout=5)
                            print(port, s.recv(100).decode())
                        except OSError as e:
                            print(port, 'refused')
                    "
                    curl -sS -m 20 -o /dev/null -w 'registry %%{http_code}\\n' https://registry.npmjs.org/
                    """.formatted(granted, other)).succeeds().stdoutContains(granted + " hello from the host",
                    other + " refused", "registry 200");
            sandbox.run("--network=false", "--", "sh", "-c", "curl -sS -m 5 https://registry.npmjs.org/ && echo"
                    + " escaped; true").succeeds().stdoutDoesNotContain("escaped");
        } finally {
            a.signal("KILL");
            b.signal("KILL");
        }
    }

    /** A host listener that greets whoever connects. */
    private static final String LISTENER = """
            import socket
            s = socket.socket(%s)
            s.bind(%s)
            s.listen()
            while True:
                c, _ = s.accept()
                try:
                    c.sendall(b'hello from the host')
                except OSError:
                    pass
                c.close()
            """;

    private void awaitListening(int port, String abstractName) {
        String probe = """
                import socket, sys
                def ok(family, address):
                    s = socket.socket(family)
                    try:
                        s.connect(address)
                        return True
                    except OSError:
                        return False
                sys.exit(0 if ok(socket.AF_INET, ('127.0.0.1', %d)) and (%s) else 1)
                """.formatted(port, abstractName == null ? "True" : "ok(socket.AF_UNIX, '\\0" + abstractName + "')");
        for (int i = 0; i < 200; i++) {
            if (sandbox.runOnHost("python3", "-c", probe).exitCode() == 0) {
                return;
            }
            pause(25);
        }
        throw new AssertionError("host listeners did not come up");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
