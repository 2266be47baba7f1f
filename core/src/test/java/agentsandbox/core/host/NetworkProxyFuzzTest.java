// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

import agentsandbox.core.rules.HostPattern;

/**
 * Coverage-guided fuzzing (Jazzer) of the proxy's reading of a request head: any head
 * ends in a destination with a host and a port in range, or a refusal, never an
 * exception. Without {@code JAZZER_FUZZ=1} it runs once per kept input;
 * {@code scripts/fuzz.sh} fuzzes.
 */
class NetworkProxyFuzzTest {
    private static final String[] PIECES = {"CONNECT ", "GET ", "POST ", "http://", "HTTP://", "https://", " HTTP/1.1",
        " HTTP/1.0", " HTTP/2", "\r\n", "\r\n\r\n", ":", "[", "]", "::1", "127.0.0.1", "0177.0.0.1", "@", "/", "user:pw",
        "example.org", "65535", "65536", "0", "-1", "+80", " ", "%00"};

    @FuzzTest(maxDuration = "20s")
    void Any_Request_Head_Gets_A_Destination_Or_A_Refusal(FuzzedDataProvider data) {
        StringBuilder head = new StringBuilder();
        int n = data.consumeInt(0, 12);
        for (int i = 0; i < n; i++) {
            head.append(data.consumeBoolean() ? data.pickValue(PIECES) : data.consumeString(12));
        }

        NetworkProxy.Request r = NetworkProxy.Request.parse(head.toString());

        assertThat(r).isNotNull();
        if (r.refusal() == null) {
            // the allow-list reads whatever host the client named
            HostPattern.allowed(java.util.List.of("example.org", "*.example.org"), r.host());
            assertThat(r.host()).isNotEmpty();
            assertThat(r.port()).isBetween(1, 65535);
            assertThat(r.method()).isNotEmpty().doesNotContain(" ");
            assertThat(r.version()).startsWith("HTTP/1.");
            if (r.originForm() != null) {
                assertThat(r.originForm()).startsWith("/");
            } else {
                assertThat(r.method()).isEqualTo("CONNECT");
            }
        } else {
            assertThat(r.refusal()).isNotBlank().doesNotContain("\n");
        }
    }
}
