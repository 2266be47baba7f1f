// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The packaged tool starts, answers, sandboxes, and can be found from inside its own sandbox. */
class SmokeIT {

    private static final String INSIDE_LAUNCHER = "/run/agent-sandbox/agent-sandbox";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @Test
    void Version_Prints_Name_And_Exits_Zero() {
        sandbox.run("--version").succeeds().stdoutContains("agent-sandbox").stderrIsEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"check", "--check"})
    void Check_Outside_A_Sandbox_Says_Outside_And_Exits_One(String check) {
        sandbox.run(check).exitsWith(1).stdoutIs("outside sandbox\n").stderrIsEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"check", "--check"})
    void Check_Quiet_Outside_A_Sandbox_Prints_Nothing_And_Exits_One(String check) {
        sandbox.run(check, "-q").exitsWith(1).stdoutIsEmpty().stderrIsEmpty();
    }

    @Test
    void Check_Is_Answered_Without_Starting_Java() throws IOException {
        Path launcherOnly = sandbox.world().resolve("no-runtime/bin/agent-sandbox");
        sandbox.mkdirs(launcherOnly.getParent());
        Files.copy(sandbox.launcher(), launcherOnly);
        sandbox.chown(launcherOnly);

        sandbox.command("check").executable(launcherOnly).run()
                .exitsWith(1).stdoutIs("outside sandbox\n").stderrIsEmpty();
    }

    @Test
    void Missing_Runtime_Is_One_Line_Error_Naming_It() throws IOException {
        Path home = sandbox.world().resolve("no-runtime");
        Path launcherOnly = home.resolve("bin/agent-sandbox");
        sandbox.mkdirs(launcherOnly.getParent());
        Files.copy(sandbox.launcher(), launcherOnly);
        sandbox.chown(launcherOnly);

        sandbox.command("--version").executable(launcherOnly).run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrIs("agent-sandbox: no Java runtime at " + home.resolve("runtime")
                        + "; reinstall agent-sandbox (./install.sh)\n");
    }

    @Test
    void Root_Filesystem_Is_Read_Only() {
        sandbox.run("--", "sh", "-c", "echo hi > /usr/x").fails().stderrContains("Read-only file system");

        assertThat(Path.of("/usr/x")).doesNotExist();
    }

    @Test
    void Project_Directory_Is_Writable() {
        sandbox.run("--", "sh", "-c", "echo hi > ./x").succeeds().stderrIsEmpty();

        assertThat(sandbox.read(sandbox.project("x"))).isEqualTo("hi\n");
    }

    @Test
    void Check_Inside_A_Sandbox_Says_Inside_And_Exits_Zero() {
        sandbox.run("--", INSIDE_LAUNCHER, "check").succeeds().stdoutIs("inside sandbox\n").stderrIsEmpty();
        sandbox.run("--", INSIDE_LAUNCHER, "check", "-q").succeeds().stdoutIsEmpty().stderrIsEmpty();
    }

    @Test
    void Works_When_Started_Through_A_Symlink() {
        Path link = sandbox.symlink(sandbox.world().resolve("links/agent-sandbox"), sandbox.launcher().toString());

        sandbox.command("--version").executable(link).run().succeeds().stdoutContains("agent-sandbox");
        sandbox.command("--", INSIDE_LAUNCHER, "check").executable(link).run()
                .succeeds().stdoutIs("inside sandbox\n");
    }

    @Test
    void Works_From_A_Directory_With_Spaces() {
        Path image = sandbox.copyImage(sandbox.world().resolve("dir with spaces/agent sandbox"));
        Path launcher = image.resolve("bin/agent-sandbox");

        sandbox.command("--version").executable(launcher).run().succeeds().stdoutContains("agent-sandbox");
        sandbox.command("--", INSIDE_LAUNCHER, "check").executable(launcher).run()
                .succeeds().stdoutIs("inside sandbox\n");
    }

    @Test
    void Refuses_To_Run_As_Root() {
        assumeTrue(sandbox.testsRunAsRoot(), "only a test JVM running as root can start agent-sandbox as root");

        sandbox.command("--", "true").asInvokingUser().run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("root");
    }
}
