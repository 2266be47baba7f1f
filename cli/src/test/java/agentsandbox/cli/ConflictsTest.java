// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Settings that cancel each other out are said, in one line, never dropped without a word. */
class ConflictsTest {
    @TempDir
    Path dir;

    @Test
    void Host_Port_And_Network_Off_On_One_Command_Line_Are_A_Usage_Error_In_One_Line() {
        CliWorld.Result r = new CliWorld(dir).run("--network=false", "--host-port", "8765", "--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).isEqualTo("agent-sandbox: --host-port 8765 and --network=false contradict each other:"
                + " with the network off no host port can be reached (leave out one of them)\n");
    }

    @Test
    void A_Configured_Host_Port_Under_Network_Off_For_One_Run_Is_Said_And_The_Run_Goes_Ahead() {
        CliWorld w = new CliWorld(dir);
        Path global = w.write("home/.config/agent-sandbox/config.json", "{\"hostPorts\": [5432]}");
        CliWorld.Result r = w.run("--network=false", "--dry-run", "true");
        assertThat(r.status()).isZero();
        assertThat(r.err()).isEqualTo("agent-sandbox: \"hostPorts\": [5432] in " + global
                + " is ignored with the network off (--network=false): no host port can be reached\n");
        assertThat(r.out()).doesNotContain("5432");
    }

    @Test
    void Docker_With_Network_Off_Is_Said_Because_The_Daemon_Still_Has_The_Network() {
        CliWorld w = new CliWorld(dir);
        w.write("no-docker.sock", "");
        CliWorld.Result r = w.run("--network=false", "--docker", "--dry-run", "true");
        assertThat(r.err()).contains("agent-sandbox: --docker with the network off (--network=false): the Docker"
                + " daemon still reaches the network");
        assertThat(r.err().lines().count()).isEqualTo(1);
    }

    @Test
    void An_Allow_List_And_Network_Off_Are_A_Usage_Error_As_Flags_And_Said_From_A_Config() {
        CliWorld w = new CliWorld(dir);
        CliWorld.Result r = w.run("--network=false", "--allow-host", "example.org", "--dry-run", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("agent-sandbox: --allow-host example.org and --network=false contradict each"
                + " other: with the network off no host can be reached (leave out one of them)\n");
        Path global = w.write("home/.config/agent-sandbox/config.json", "{\"network\": {\"allow\": [\"example.org\"]}}");
        r = w.run("--network=false", "--dry-run", "true");
        assertThat(r.status()).isZero();
        assertThat(r.err()).isEqualTo("agent-sandbox: \"network\": {\"allow\": [...]} in " + global
                + " is ignored with the network off (--network=false): no host can be reached\n");
        assertThat(r.out()).doesNotContain("example.org");
    }

    @Test
    void Network_On_With_A_Host_Port_Says_Nothing() {
        CliWorld.Result r = new CliWorld(dir).run("--host-port", "8765", "--dry-run", "true");
        assertThat(r.status()).isZero();
        assertThat(r.err()).isEmpty();
    }
}
