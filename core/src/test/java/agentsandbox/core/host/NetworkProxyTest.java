// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The proxy's reading of a request line: a destination, or why the proxy does not serve it. */
class NetworkProxyTest {
    @Test
    void A_Connect_Names_Host_And_Port() {
        NetworkProxy.Request r = NetworkProxy.Request.parse("CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(r.refusal()).isNull();
        assertThat(r.host()).isEqualTo("::1");
        assertThat(r.port()).isEqualTo(443);
        assertThat(r.originForm()).isNull();
    }

    @Test
    void An_Absolute_Request_Is_Forwarded_In_Origin_Form_Without_Credentials() {
        NetworkProxy.Request r = NetworkProxy.Request.parse("GET http://user:pw@example.org:8080/a?b HTTP/1.0\r\n\r\n");
        assertThat(r.refusal()).isNull();
        assertThat(r.host()).isEqualTo("example.org");
        assertThat(r.port()).isEqualTo(8080);
        assertThat(r.originForm()).isEqualTo("/a?b");
        assertThat(NetworkProxy.Request.parse("GET HTTP://example.org HTTP/1.1\r\n\r\n").originForm()).isEqualTo("/");
        assertThat(NetworkProxy.Request.parse("GET http://example.org HTTP/1.1\r\n\r\n").port()).isEqualTo(80);
    }

    @Test
    void What_Is_Not_A_Proxy_Request_Is_Refused_With_Why() {
        assertThat(NetworkProxy.Request.parse("GET / HTTP/1.1\r\n\r\n").refusal()).contains("only CONNECT and http://");
        assertThat(NetworkProxy.Request.parse("CONNECT host HTTP/1.1\r\n\r\n").refusal()).contains("host:port");
        assertThat(NetworkProxy.Request.parse("CONNECT host:+80 HTTP/1.1\r\n\r\n").refusal()).contains("bad destination");
        assertThat(NetworkProxy.Request.parse("CONNECT host:65536 HTTP/1.1\r\n\r\n").refusal()).contains("bad destination");
        assertThat(NetworkProxy.Request.parse("CONNECT host:80 HTTP/2\r\n\r\n").refusal()).contains("not an HTTP/1");
        assertThat(NetworkProxy.Request.parse("").refusal()).contains("not an HTTP/1");
    }

    @Test
    void An_Address_Is_Read_As_Inet_Aton_And_Curl_Read_It() {
        for (String loopback : new String[] {"127.0.0.1", "0177.0.0.1", "0x7f.0.0.1", "0x7F.1", "127.1", "0177.1",
            "2130706433", "0x7f000001", "017700000001", "127.0.1"}) {
            assertThat(NetworkProxy.inetAton(loopback)).as(loopback).containsExactly(127, 0, 0, 1);
        }
        assertThat(NetworkProxy.inetAton("0")).containsExactly(0, 0, 0, 0);
        assertThat(NetworkProxy.inetAton("0x")).as("0x alone is 0 for inet_aton").containsExactly(0, 0, 0, 0);
        for (String other : new String[] {"example.org", "", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "08.1.1.1",
            "4294967296", "1..2", "1.2.3.", "0xg", "::1", "-1", "1.2.3.-4", "+1"}) {
            assertThat(NetworkProxy.inetAton(other)).as(other).isNull();
        }
    }

    @Test
    void Every_Spelling_Of_The_Hosts_Loopback_Is_Refused() {
        NetworkProxy proxy = new NetworkProxy(java.nio.file.Path.of("/nonexistent"), java.util.List.of());
        for (String loopback : new String[] {"0177.0.0.1", "0x7f.1", "2130706433"}) {
            byte[] a = NetworkProxy.inetAton(loopback);
            assertThat(a).isNotNull();
            assertThat(proxy.allowed(addressOf(a))).as(loopback).isFalse();
        }
    }

    private static java.net.InetAddress addressOf(byte[] a) {
        try {
            return java.net.InetAddress.getByAddress(a);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
