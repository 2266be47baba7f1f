// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The network's allow-list under real bwrap, with the sandbox's own stack (its DNS filter
 * and routes) and with the proxy: a listed host is reachable, another is not, for curl,
 * getent, Java's HttpClient and a raw TCP connection by address, and each refusal is in
 * the denial log. The two hosts are the registries this machine's own tools name (npm's,
 * listed; Maven's central repository, not), found when the test runs.
 */
class NetworkAllowIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** The listed registry (npm's), its host, an IPv4 address of it, and the other registry's host (Maven's). */
    private record Hosts(URI allowedUrl, String allowed, String allowedAddress, String refused) {}

    private Hosts hosts() throws IOException {
        URI npm = NetworkStackIT.npmRegistry(sandbox);
        String refused = NetworkStackIT.mavenCentral().getHost();
        assertThat(refused).as("two different registries").isNotEqualToIgnoringCase(npm.getHost());
        String address = null;
        for (InetAddress a : InetAddress.getAllByName(npm.getHost())) {
            if (a instanceof Inet4Address && address == null) {
                address = a.getHostAddress();
            }
        }
        assertThat(address).as("an IPv4 address of " + npm.getHost()).isNotNull();
        return new Hosts(npm, npm.getHost(), address, refused);
    }

    /**
     * What the sandbox tries: a raw connection to the listed host's address before any name
     * was asked for (with the stack, no route yet), names, HTTPS, then raw connections again.
     */
    private static final String TRIES = """
            raw() {
                env -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy -u HTTP_PROXY -u http_proxy python3 -c '
            import socket, sys
            for target in sys.argv[2:]:
                try:
                    socket.create_connection((target, 443), timeout=20).close()
                    print(sys.argv[1], "raw", target + ": connected")
                except OSError as e:
                    print(sys.argv[1], "raw", target + ": refused", e.strerror or type(e).__name__)
            ' "$@"
            }
            raw before "$4"
            getent hosts "$1" > /dev/null && echo "getent $1: yes" || echo "getent $1: no"
            getent hosts "$2" > /dev/null && echo "getent $2: yes" || echo "getent $2: no"
            curl -sS -m 30 -o /dev/null -w "curl $1: %{http_code}\n" "$3" || echo "curl $1: no"
            out=$(curl -sS -m 30 -o /dev/null "https://$2/" 2>&1) && echo "curl $2: yes" || echo "curl $2: no ($out)"
            raw after "$4" "$1"
            echo "listed: $AGENT_SANDBOX_NETWORK_ALLOW"
            """;

    @Test
    void With_The_Stack_Only_Listed_Hosts_Resolve_And_Connect_For_Every_Program_And_Refusals_Are_Logged()
            throws IOException {
        Hosts h = hosts();
        Result r = sandbox.run("--allow-host", h.allowed(), "--", "sh", "-c", TRIES, "sh", h.allowed(), h.refused(),
                h.allowedUrl().toString(), h.allowedAddress()).succeeds();
        // an address is routed only once a listed name led to it: before, the kernel refuses at once
        r.stdoutContains("before raw " + h.allowedAddress() + ": refused Permission denied",
                "getent " + h.allowed() + ": yes", "getent " + h.refused() + ": no",
                "curl " + h.allowed() + ": 200", "curl " + h.refused() + ": no",
                "after raw " + h.allowedAddress() + ": connected", "after raw " + h.allowed() + ": connected",
                "listed: " + h.allowed().toLowerCase(java.util.Locale.ROOT));
        r.stderrContains("this run refused", "network destination", "see them with: agent-sandbox log");
        sandbox.run("log", "--json").succeeds().stdoutContains("{\"kind\":\"network\",\"what\":\"" + h.refused()
                .toLowerCase(java.util.Locale.ROOT) + "\",\"why\":\"not on the network's allow-list (a DNS query, ");
    }

    @Test
    void With_The_Stack_Java_s_HttpClient_Reaches_Only_The_Listed_Host() throws IOException {
        Hosts h = hosts();
        sandbox.write("Fetch.java", """
                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;

                public class Fetch {
                    public static void main(String[] args) throws Exception {
                        for (String url : args) {
                            try {
                                HttpResponse<Void> r = HttpClient.newHttpClient().send(
                                        HttpRequest.newBuilder(URI.create(url)).build(),
                                        HttpResponse.BodyHandlers.discarding());
                                System.out.println(url + " status " + r.statusCode());
                            } catch (java.io.IOException e) {
                                System.out.println(url + " failed " + e.getClass().getSimpleName());
                            }
                        }
                    }
                }
                """);
        String other = "https://" + h.refused() + "/";
        sandbox.run("--allow-host", "*." + h.allowed().substring(h.allowed().indexOf('.') + 1) + "," + h.allowed(),
                "--", "java", "Fetch.java", h.allowedUrl().toString(), other).succeeds()
                .stdoutContains(h.allowedUrl() + " status 200", other + " failed");
    }

    @Test
    void With_The_Proxy_Only_Listed_Hosts_Are_Served_And_Refusals_Are_Logged() throws IOException {
        Hosts h = hosts();
        Result r = sandbox.command("--allow-host", h.allowed(), "--", "sh", "-c", TRIES, "sh", h.allowed(),
                h.refused(), h.allowedUrl().toString(), h.allowedAddress())
                .env("AGENT_SANDBOX_NETWORK_STACK", "proxy").run().succeeds();
        // without the proxy nothing gets out at all: no name, no route
        r.stdoutContains("curl " + h.allowed() + ": 200", "curl " + h.refused() + ": no", "403",
                "after raw " + h.allowedAddress() + ": refused", "after raw " + h.allowed() + ": refused", "listed: ");
        r.stderrContains("this run refused 1 thing (1 network destination)");
        sandbox.run("log", "--json").succeeds().stdoutContains("{\"kind\":\"network\",\"what\":\""
                + h.refused().toLowerCase(java.util.Locale.ROOT) + ":443\",\"why\":\"not on the network's allow-list");
    }

    @Test
    void With_The_Stack_A_Program_Talking_To_The_Proxy_s_Socket_Is_Held_To_The_List_Too() throws IOException {
        Hosts h = hosts();
        // the proxy's socket stays in a sandbox with the stack (for host ports): a program that
        // speaks its protocol directly gets the same list
        Result r = sandbox.run("--allow-host", h.allowed(), "--", "python3", "-c", """
                import socket, sys
                for host in sys.argv[1:]:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect("/run/agent-sandbox/net/socket")
                    s.sendall(("P\\nCONNECT %s:443 HTTP/1.1\\r\\nHost: %s:443\\r\\n\\r\\n" % (host, host)).encode())
                    print(host, s.recv(200).decode().split("\\r\\n")[0])
                """, h.allowed(), h.refused()).succeeds();
        r.stdoutContains(h.allowed() + " HTTP/1.1 200 Connection established", h.refused() + " HTTP/1.1 403 Forbidden");
        sandbox.run("log", "--json").succeeds().stdoutContains("\"what\":\"" + h.refused()
                + ":443\",\"why\":\"not on the network's allow-list (a proxy request");
    }

    /**
     * A socket bound to the stack's device (SO_BINDTODEVICE needs no privilege) reaches an
     * on-link address past the routes: with a list, the stack's own resolver at 10.0.2.3 is
     * off, so a DNS query sent there straight gets no answer, for a listed name or another
     * (without the list, the same query is answered: the probe itself works).
     */
    @Test
    void With_The_Stack_A_Socket_Bound_To_The_Device_Gets_No_Resolver_Past_The_Filter() throws IOException {
        Hosts h = hosts();
        String probe = """
                import socket, struct, sys
                def ask(name):
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"tap0")
                    s.settimeout(3)
                    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
                    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\\0"
                    q += struct.pack(">HH", 1, 1)
                    try:
                        s.sendto(q, ("10.0.2.3", 53))
                        s.recv(4096)
                        print(name, "answered")
                    except OSError as e:
                        print(name, "no answer", type(e).__name__)
                for name in sys.argv[1:]:
                    ask(name)
                """;
        sandbox.run("--", "python3", "-c", probe, h.refused()).succeeds()
                .stdoutIs(h.refused() + " answered\n");
        Result r = sandbox.run("--allow-host", h.allowed(), "--", "python3", "-c", probe, h.refused(), h.allowed())
                .succeeds();
        r.stdoutContains(h.refused() + " no answer", h.allowed() + " no answer").stdoutDoesNotContain("answered");
    }

    /** A resolver of the test's own on 127.0.0.1:53: two names, the first with the metadata address. */
    private static final String RESOLVER = """
            import socket, struct, sys
            answers = {"meta.test": "169.254.169.254", "ok.test": "203.0.113.7"}
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 53))
            open(sys.argv[1], "w").close()
            while True:
                q, peer = s.recvfrom(512)
                i, labels = 12, []
                while q[i]:
                    labels.append(q[i + 1:i + 1 + q[i]].decode())
                    i += 1 + q[i]
                name, qtype = ".".join(labels).lower(), struct.unpack(">H", q[i + 1:i + 3])[0]
                question, address = q[12:i + 5], answers.get(name)
                if address and qtype == 1:
                    record = b"\\xc0\\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(address)
                    s.sendto(q[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0) + question + record, peer)
                else:
                    code = 0x8180 if address else 0x8183
                    s.sendto(q[:2] + struct.pack(">HHHHH", code, 1, 0, 0, 0) + question, peer)
            """;

    /**
     * The host of {@link #An_Allowed_Name_Answered_With_A_Blocked_Address_Gets_No_Route}: a
     * user, network and mount namespace of the test user's own, whose resolv.conf names the
     * resolver above; runs agent-sandbox there with both names allowed. $1 the directory,
     * $2 the launcher, $3 the probe.
     */
    private static final String FAKE_HOST = """
            set -e
            ip link set lo up
            mount --bind "$1/resolv.conf" /etc/resolv.conf
            python3 -c "$(cat "$1/resolver.py")" "$1/ready" &
            resolver=$!
            i=0; while [ ! -e "$1/ready" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
            status=0
            setpriv --inh-caps=-all --ambient-caps=-all "$2" --allow-host meta.test --allow-host ok.test -- \
                python3 -c "$3" || status=$?
            kill $resolver
            exit $status
            """;

    /**
     * An allowed name whose answer is a blocked address (the cloud metadata service's, which
     * a wildcard's owner can put in DNS) gets no route through the stack: a route for one
     * address would win over the "prohibit" route of its range. An ordinary answer is routed.
     */
    @Test
    void An_Allowed_Name_Answered_With_A_Blocked_Address_Gets_No_Route() {
        java.nio.file.Path dir = sandbox.project("fake-host");
        sandbox.mkdirs(dir);
        sandbox.write(dir.resolve("resolv.conf"), "nameserver 127.0.0.1\n");
        sandbox.write(dir.resolve("resolver.py"), RESOLVER);
        sandbox.chownAll();
        String probe = """
                import socket, subprocess
                def routes(address):
                    r = subprocess.run(["ip", "route", "show", address], capture_output=True, text=True)
                    return r.stdout.strip() or "none"
                for name in ("meta.test", "ok.test"):
                    print(name, socket.gethostbyname(name))
                print("own route of 169.254.169.254:", routes("169.254.169.254"))
                s = socket.socket()
                s.settimeout(3)
                try:
                    s.connect(("169.254.169.254", 80))
                    print("metadata: connected")
                except OSError as e:
                    print("metadata:", e.strerror)
                print("own route of 203.0.113.7:", routes("203.0.113.7"))
                """;
        sandbox.runOnHost("unshare", "-U", "-n", "-m", "-c", "--keep-caps", "sh", "-c", FAKE_HOST, "sh",
                dir.toString(), sandbox.launcher().toString(), probe).succeeds()
                .stdoutContains("meta.test 169.254.169.254", "ok.test 203.0.113.7",
                        // the metadata range is local on the stack's device: refused inside, never routed out
                        "own route of 169.254.169.254: none", "metadata: Connection refused",
                        "own route of 203.0.113.7: 203.0.113.7 via 10.0.2.2 dev tap0");
    }

    @Test
    void The_Sandbox_Finds_No_Record_To_Write_And_What_It_Asks_For_Is_Only_Data() {
        // the record is in the run's host-side directory, hidden in the sandbox; a name with
        // bytes no host name has is written with '?' for them, never as a line of its own
        Result r = sandbox.run("--allow-host", "example.org", "--", "sh", "-c", """
                found=$(find "$HOME/.local/state" /run /tmp -name 'net-refused*' 2>/dev/null)
                echo "records found: [$found]"
                python3 -c '
                import socket, struct
                name = b"\\x05forge\\x08tab\\tline\\x00"
                q = struct.pack(">HHHHHH", 7, 0x0100, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1)
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.settimeout(10)
                s.sendto(q, ("127.0.0.53", 53))
                print("rcode", s.recv(512)[3] & 15)
                '
                """).succeeds();
        r.stdoutContains("records found: []", "rcode 3");
        sandbox.run("log", "--json").succeeds()
                .stdoutContains("{\"kind\":\"network\",\"what\":\"forge.tab?line\",\"why\":\"not on the network's")
                .stdoutDoesNotContain("\"what\":\"line");
    }

    @Test
    void An_Entry_That_Is_No_Host_Name_Stops_The_Run_In_One_Line() {
        for (String bad : List.of("http://example.org", "a b", "*", "1.2.3.4", "0x7f.1", "a.*.org", "ex ample")) {
            Result r = sandbox.run("--allow-host", bad, "--", "touch", "started").failsWithOneLineError();
            r.stderrContains("--allow-host " + bad + ": ");
        }
        sandbox.write(".agent-sandbox.json", "{\"network\": {\"allow\": [\"example.org/path\"]}}");
        sandbox.run("--", "touch", "started").failsWithOneLineError()
                .stderrContains(".agent-sandbox.json", "network.allow: example.org/path: not a host name");
        assertThat(Files.exists(sandbox.project("started"))).as("nothing started").isFalse();
    }

    @Test
    void The_Dry_Run_And_Explain_Show_The_List() {
        sandbox.run("--dry-run", "--allow-host", "Example.ORG", "--allow-host", "*.example.net", "--", "true")
                .succeeds().stdoutContains("--setenv AGENT_SANDBOX_NETWORK_ALLOW 'example.org,*.example.net'");
        sandbox.run("--allow-host", "example.org", "explain", "/etc/resolv.conf").succeeds()
                .stdoutContains("rule:   the allow-list's DNS filter, which answers only example.org");
    }

    @Test
    void An_Untrusted_Project_Config_May_Narrow_The_Network_But_Not_Widen_A_List() {
        sandbox.write(".agent-sandbox.json", "{\"network\": {\"allow\": [\"example.org\"]}}");
        sandbox.run("--dry-run", "--", "true").succeeds()
                .stdoutContains("--setenv AGENT_SANDBOX_NETWORK_ALLOW example.org");
        sandbox.write(sandbox.home(".config/agent-sandbox/config.json"), "{\"network\": {\"allow\": [\"example.net\"]}}");
        sandbox.run("--dry-run", "--", "true").failsWithOneLineError()
                .stderrContains("network.allow [example.org]");
    }
}
