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
}
