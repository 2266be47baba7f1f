// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agent-sandbox doctor} in-process: one screen of checks, the fix under each
 * problem, the config files' validity and trust, and exit status 0 only when a sandbox
 * can run. The machine is a program named bwrap and a directory laid out like
 * {@code /proc/sys} (the library's checks are tested one by one in core's DoctorTest).
 */
class DoctorReportTest {
    @TempDir
    Path dir;

    private CliWorld world;

    @BeforeEach
    void healthyMachine() throws IOException {
        world = new CliWorld(dir);
        Path bwrap = world.write("bin/bwrap",
                "#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.9.0' ;; *) exit 0 ;; esac\n");
        Files.setPosixFilePermissions(bwrap, PosixFilePermissions.fromString("rwxr-xr-x"));
        world.env.put("PATH", bwrap.getParent().toString());
        world.write("proc-sys/user/max_user_namespaces", "63000\n");
        world.write("proc-sys/kernel/seccomp/actions_avail", "kill_process errno allow\n");
        world.write("proc-sys/dev/tty/legacy_tiocsti", "0\n");
        world.procSys = world.root.resolve("proc-sys");
    }

    private static String sha256(byte[] data) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    }

    @Test
    void A_Machine_That_Can_Run_Sandboxes_Exits_0() {
        CliWorld.Result r = world.run("doctor");
        assertThat(r.status()).as(r.out() + r.err()).isZero();
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("ok       bwrap").contains("bubblewrap 0.9.0").contains("trial sandbox")
                .doesNotContain("PROBLEM").endsWith("sandboxes can run here\n");
        assertThat(r.out()).contains("no config files here");
        assertThat(r.out().lines().count()).as("one screen").isLessThanOrEqualTo(24);
    }

    @Test
    void Problems_Are_Marked_With_Their_Fix_And_Exit_1_With_One_Error_Line() {
        world.env.put("PATH", world.root.resolve("no-bin").toString());
        world.write("proc-sys/kernel/unprivileged_userns_clone", "0\n");
        world.write("home/project/.agent-sandbox.json", "{\"network\": tru}");

        CliWorld.Result r = world.run("doctor");

        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: ").endsWith("\n").contains("3 problems stop sandboxes");
        assertThat(r.err().strip()).doesNotContain("\n");
        assertThat(r.out()).containsPattern("PROBLEM  bwrap +bwrap not found on PATH")
                .containsPattern("\\n +fix: install bubblewrap")
                .containsPattern("PROBLEM  user namespaces .*kernel.unprivileged_userns_clone = 0")
                .contains("fix: sudo sysctl -w kernel.unprivileged_userns_clone=1")
                .containsPattern("PROBLEM  config +\\S*\\.agent-sandbox\\.json:1:");
        assertThat(r.out().lines().count()).as("one screen").isLessThanOrEqualTo(24);
    }

    @Test
    void Warnings_Alone_Leave_Exit_Status_0() {
        world.write("proc-sys/dev/tty/legacy_tiocsti", "1\n");
        CliWorld.Result r = world.run("doctor");
        assertThat(r.status()).isZero();
        assertThat(r.out()).contains("warning  TIOCSTI").contains("fix: sudo sysctl -w dev.tty.legacy_tiocsti=0");
    }

    @Test
    void Project_Config_Is_Reported_Trusted_Only_While_Its_Content_Matches_The_Trust_Record() throws Exception {
        Path config = world.write("home/project/.agent-sandbox.json", "{\"network\": false}\n");
        world.write("home/.config/agent-sandbox/config.json", "{}\n");
        assertThat(world.run("doctor").out()).contains("ok       global config")
                .contains(config + ": valid, not trusted, which is fine: it only tightens the policy");

        assertThat(world.run("trust").status()).isZero();
        assertThat(world.run("doctor").out()).contains(config + ": valid, trusted");

        Files.writeString(config, "{\"network\": true}\n");
        assertThat(world.run("doctor").out()).contains(config + ": valid, not trusted");
    }

    @Test
    void An_Untrusted_Project_Config_That_Loosens_Is_A_Problem_With_The_Fix() {
        Path config = world.write("home/project/.agent-sandbox.json", "{\"hostPorts\": [5432]}\n");
        CliWorld.Result r = world.run("doctor");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.out()).containsPattern("PROBLEM  project config +" + java.util.regex.Pattern.quote(config
                + ": not trusted, and it loosens the policy (hostPorts [5432]), so every run here stops on it"))
                .contains("fix: review it, then run: agent-sandbox trust -C " + config.getParent());
        assertThat(r.err()).contains("1 problem stops");

        assertThat(world.run("trust").status()).isZero();
        assertThat(world.run("doctor").status()).isZero();
        world.write("home/project/.agent-sandbox.json", "{\"hostPorts\": [5433]}\n");
        assertThat(world.run("doctor").out()).contains(config + ": changed since it was trusted, and it loosens");
    }

    @Test
    void The_Trust_Store_Follows_XDG_STATE_HOME() throws Exception {
        Path config = world.write("home/project/.agent-sandbox.json", "{}\n");
        world.env.put("XDG_STATE_HOME", world.root.resolve("state").toString());
        assertThat(world.run("trust").status()).isZero();
        assertThat(Files.list(world.root.resolve("state/agent-sandbox/trust")).count()).isEqualTo(2);
        assertThat(world.run("doctor").out()).contains(config + ": valid, trusted");
    }

    @Test
    void Doctor_Takes_No_Arguments() {
        CliWorld.Result r = world.run("doctor", "now");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: doctor takes no arguments").contains("agent-sandbox -- doctor");
    }
}
