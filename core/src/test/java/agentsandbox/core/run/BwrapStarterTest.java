// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The request to the launcher's starter; the starter itself runs in the end-to-end tests. */
class BwrapStarterTest {

    @Test
    void Request_Is_A_Header_Line_Then_The_Log_The_Words_And_The_Variables_Each_Ended_By_NUL() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("A", "b c");
        env.put("EMPTY", "");
        byte[] request = BwrapStarter.request(Path.of("/run/x/log"), List.of("/usr/bin/bwrap", "--", "grüß"), env);

        String body = "/run/x/log\0/usr/bin/bwrap\0--\0grüß\0A=b c\0EMPTY=\0";
        int bytes = body.getBytes(StandardCharsets.UTF_8).length;
        assertThat(new String(request, StandardCharsets.UTF_8)).isEqualTo("3 2 " + bytes + "\n" + body);
    }

    @Test
    void What_Cannot_Pass_As_Text_Leaves_The_Start_To_The_Caller() {
        Path log = Path.of("/run/x/log");
        List<String> argv = List.of("/usr/bin/bwrap", "--", "true");
        // a variable the JVM read with bytes that are not UTF-8 keeps them only through ProcessBuilder
        assertThat(BwrapStarter.request(log, argv, Map.of("X", "a\uFFFDb"))).isNull();
        assertThat(BwrapStarter.request(log, List.of("/usr/bin/bwrap", "a\0b"), Map.of())).isNull();
        assertThat(BwrapStarter.request(log, argv, Map.of("A=B", "c"))).isNull();
        assertThat(BwrapStarter.request(log, List.of(), Map.of())).isNull();
        assertThat(BwrapStarter.request(log, argv, Map.of("X", "y"))).isNotNull();
    }

    @Test
    void Removal_Is_A_Header_Line_Then_Each_Absolute_Path_Ended_By_NUL() {
        byte[] request = BwrapStarter.removal(List.of(Path.of("/s/run1"), Path.of("/state/run/grüß")));
        String body = "/s/run1\0/state/run/grüß\0";
        assertThat(new String(request, StandardCharsets.UTF_8))
                .isEqualTo("remove 2 " + body.getBytes(StandardCharsets.UTF_8).length + "\n" + body);
        // what the starter would not take is removed by the caller
        assertThat(BwrapStarter.removal(List.of(Path.of("relative")))).isNull();
        assertThat(BwrapStarter.removal(List.of())).isNull();
        assertThat(BwrapStarter.removal(java.util.Collections.nCopies(17, Path.of("/a")))).isNull();
    }

    @Test
    void Network_Request_Is_A_Header_Line_Then_The_Stack_And_The_Allow_List_Each_Ended_By_NUL() {
        byte[] request = BwrapStarter.networkRequest(Path.of("/usr/bin/slirp4netns"), List.of("a.org", "*.b.org"));
        String body = "/usr/bin/slirp4netns\0a.org,*.b.org\0";
        assertThat(new String(request, StandardCharsets.UTF_8)).isEqualTo("network " + body.length() + "\n" + body);
        assertThat(new String(BwrapStarter.networkRequest(Path.of("/s"), List.of()), StandardCharsets.UTF_8))
                .isEqualTo("network 4\n/s\0\0");
        // what the starter would not take: bwrap's launcher starts the stack itself
        assertThat(BwrapStarter.networkRequest(Path.of("/s\uFFFD"), List.of())).isNull();
        assertThat(BwrapStarter.networkRequest(Path.of("/s"), List.of("x".repeat(70_000)))).isNull();
    }

    @Test
    void Only_A_Well_Formed_Name_Is_A_Starter() {
        assertThat(BwrapStarter.parse("5,6")).isNotNull();
        assertThat(BwrapStarter.parse(null)).isNull();
        assertThat(BwrapStarter.parse("5")).isNull();
        assertThat(BwrapStarter.parse("5,6,7")).isNull();
        assertThat(BwrapStarter.parse("x,6")).isNull();
        assertThat(BwrapStarter.parse("5,")).isNull();
        // never the standard streams
        assertThat(BwrapStarter.parse("1,6")).isNull();
        assertThat(BwrapStarter.parse("5,2")).isNull();
    }
}
