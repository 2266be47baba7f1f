// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Blocked and script-wrapped commands, reached every way a process can reach them. */
class WrappersIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private Path script;

    @BeforeEach
    void wrapperScript() throws Exception {
        script = sandbox.write(sandbox.home().resolve("bin/touch-guard.sh"), """
                #!/bin/sh
                echo "wrapper for $AGENT_SANDBOX_CMD, real $AGENT_SANDBOX_REAL, args: $*"
                exec "$AGENT_SANDBOX_REAL" "$@"
                """);
        java.nio.file.Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));
        sandbox.write("victim.txt", "keep me\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "rm victim.txt",
        "/usr/bin/rm victim.txt",
        "/bin/rm victim.txt",
        "env rm victim.txt",
        "sh -c 'rm victim.txt'",
        "echo victim.txt | xargs rm",
        "find . -name victim.txt -exec rm {} +",
        "command rm victim.txt",
        "exec rm victim.txt",
        "PATH=/bin rm victim.txt",
        "ln -s /usr/bin/rm /tmp/alias && /tmp/alias victim.txt",
    })
    void A_Blocked_Command_Is_Blocked_Through_Every_Route(String route) {
        sandbox.run("--cmd", "rm=false", "--", "sh", "-c", route)
                .fails()
                .stderrContains("agent-sandbox: rm is blocked in this sandbox");
        assertThat(sandbox.read(sandbox.project("victim.txt"))).isEqualTo("keep me\n");
    }

    @Test
    void Blocked_In_Config_Too_With_One_Clear_Line() {
        sandbox.write(".agent-sandbox.json", "{\"commands\": {\"rm\": false}}");
        // the block's one line, then the run's line pointing to the denial log
        sandbox.run("--", "rm", "victim.txt")
                .fails()
                .stderrIs("agent-sandbox: rm is blocked in this sandbox (its command rule is false)\n"
                        + "agent-sandbox: this run refused 1 thing (1 blocked command); see them with:"
                        + " agent-sandbox log\n");
    }

    @Test
    void A_Wrapped_Path_Shows_A_Binary_And_The_Runtime_Cannot_Be_Listed() {
        sandbox.run("--cmd", "rm=false", "--", "sh", "-c",
                        "head -c 4 /usr/bin/rm | od -An -c; ls /run/agent-sandbox/cmd; true")
                .succeeds()
                .stdoutContains("177   E   L   F")
                .stderrContains("cannot open directory '/run/agent-sandbox/cmd': Permission denied");
    }

    @Test
    void A_Blocked_Command_Has_No_Real_Binary_Inside() {
        sandbox.run("--cmd", "rm=false", "--", "sh", "-c",
                        "for f in /run/agent-sandbox/real/*/rm /run/agent-sandbox/real/1/rm; do"
                                + " test -e \"$f\" && echo FOUND $f; done; echo searched")
                .succeeds()
                .stdoutIs("searched\n");
    }

    @Test
    void A_Script_Wrapper_Gets_The_Arguments_The_Name_And_The_Real_Binary() {
        sandbox.run("--cmd", "touch=~/bin/touch-guard.sh", "--", "touch", "new file.txt", "-c")
                .succeeds()
                .stdoutSatisfies(out -> out.matches(
                        "wrapper for touch, real /run/agent-sandbox/real/[0-9]+/touch, args: new file.txt -c\n"));
        // -c: do not create, so nothing appears; then without it the real touch creates the file
        assertThat(sandbox.project("new file.txt")).doesNotExist();
        sandbox.run("--cmd", "touch=~/bin/touch-guard.sh", "--", "sh", "-c", "/bin/touch made.txt").succeeds()
                .stdoutContains("wrapper for touch");
        assertThat(sandbox.project("made.txt")).exists();
    }

    @Test
    void Script_Rules_From_Config_Resolve_The_Home_Directory() {
        sandbox.write(".agent-sandbox.jsonc", "{\"commands\": {\"touch\": \"~/bin/touch-guard.sh\",}}");
        sandbox.run("--", "touch", "x").succeeds().stdoutContains("wrapper for touch, real ");
    }

    @Test
    void A_Missing_Or_Non_Executable_Script_Stops_Before_The_Sandbox_Starts() throws Exception {
        sandbox.run("--cmd", "touch=~/bin/nope.sh", "--", "touch", "x")
                .failsWithOneLineError()
                .stderrContains("wrapper script", "nope.sh", "does not exist");
        Path plain = sandbox.write(sandbox.home().resolve("bin/plain.sh"), "#!/bin/sh\n");
        java.nio.file.Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
        sandbox.run("--cmd", "touch=~/bin/plain.sh", "--", "touch", "x")
                .failsWithOneLineError()
                .stderrContains("is not executable");
        assertThat(sandbox.project("x")).doesNotExist();
    }

    @Test
    void Unknown_Command_Preset_Is_A_Usage_Error() {
        sandbox.run("--cmd", "git=@nope", "--", "true")
                .failsWithOneLineError()
                .stderrContains("unknown command preset '@nope'");
    }

    @Test
    void A_Rule_For_A_Command_Found_Nowhere_Is_Explained_By_Debug() {
        sandbox.run("--debug", "--cmd", "no-such-tool=false", "--", "true")
                .succeeds()
                .stderrContains("command no-such-tool: not found on PATH, nothing to overlay");
    }

    @Test
    void A_Copy_Of_A_Blocked_Command_Is_Only_The_Launcher() {
        sandbox.run("--cmd", "rm=false", "--", "sh", "-c", "cp /usr/bin/rm /tmp/copy && /tmp/copy victim.txt")
                .fails();
        assertThat(sandbox.read(sandbox.project("victim.txt"))).isEqualTo("keep me\n");
    }

    @Test
    void True_Removes_The_Default_Git_Wrapper() {
        String hostGit = sandbox.runOnHost("sh", "-c", "sha256sum < /usr/bin/git").succeeds().stdout();
        String launcher = sandbox.runOnHost("sha256sum", sandbox.launcher().toString()).succeeds().stdout()
                .split(" ")[0];
        sandbox.run("--", "sh", "-c", "sha256sum < /usr/bin/git").succeeds().stdoutContains(launcher);
        sandbox.run("--cmd", "git=true", "--", "sh", "-c", "sha256sum < /usr/bin/git").succeeds().stdoutIs(hostGit);
    }
}
