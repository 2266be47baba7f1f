// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code agent-sandbox doctor} on this real machine, as the unprivileged test user: it
 * starts a real trial sandbox, and a missing bwrap or a broken config is a problem
 * with its fix and exit status 1. (Each kernel setting is simulated in core's
 * DoctorTest.)
 */
class DoctorIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @Test
    void On_A_Machine_That_Runs_Sandboxes_Every_Check_Passes_And_The_Exit_Status_Is_0() {
        Result r = sandbox.run("doctor").succeeds().stderrIsEmpty()
                .stdoutContains("ok       trial sandbox", "bwrap started a sandbox", "ok       bwrap",
                        "ok       user namespaces", "sandboxes can run here")
                .stdoutDoesNotContain("PROBLEM");
        assertThat(r.stdout().lines().count()).as("one screen").isLessThanOrEqualTo(24);
    }

    @Test
    void Without_Bwrap_On_Path_It_Names_The_Problem_And_The_Fix_And_Exits_1() throws Exception {
        Files.createDirectories(sandbox.world().resolve("empty-bin"));
        Result r = sandbox.command("doctor").env("PATH", sandbox.world().resolve("empty-bin").toString()).run()
                .exitsWith(1)
                .stdoutContains("PROBLEM  bwrap", "bwrap not found on PATH", "fix: install bubblewrap");
        assertThat(r.stderr()).startsWith("agent-sandbox: ").contains("1 problem stops sandboxes on this machine");
        assertThat(r.stderr().strip()).doesNotContain("\n");
    }

    @Test
    void A_Broken_Project_Config_Is_A_Problem_Naming_File_And_Line() {
        sandbox.write(".agent-sandbox.json", "{\n  \"network\": maybe\n}\n");
        sandbox.run("doctor").exitsWith(1)
                .stdoutContains("PROBLEM  config", sandbox.project(".agent-sandbox.json") + ":2:")
                .stdoutContains("ok       trial sandbox");
    }
}
