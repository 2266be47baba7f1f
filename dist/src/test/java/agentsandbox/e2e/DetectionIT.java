// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import agentsandbox.core.Sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sandbox detection: the read-only entry point {@code /run/agent-sandbox/agent-sandbox}
 * that {@code check} looks for cannot be faked from either side, and it is a working
 * agent-sandbox however the host copy was started.
 */
class DetectionIT {

    private static final String ENTRY_POINT = "/run/agent-sandbox/agent-sandbox";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @ParameterizedTest
    @ValueSource(strings = {
        "rm -f $E",
        "rm -rf /run/agent-sandbox",
        "echo '#!/bin/sh' > $E",
        "echo 'echo outside sandbox' >> $E",
        "truncate -s 0 $E",
        "chmod 000 $E",
        "touch -d 2000-01-01 $E",
        "mv $E /run/agent-sandbox/moved",
        "mv $E /tmp/moved",
        "cp /bin/true /tmp/fake && mv -f /tmp/fake $E",
        "ln -sf /bin/true $E",
        "mv /run/agent-sandbox /run/moved",
        "touch /run/agent-sandbox/new-file",
        "mkdir /run/agent-sandbox/new-dir",
        "ln -s /bin/true /run/agent-sandbox/new-link",
        "mkfifo /run/agent-sandbox/new-fifo",
        "rm -f /run/agent-sandbox/exec",
        "ln -sfT /bin/true /run/agent-sandbox/exec",
    })
    void Entry_Point_And_Its_Directory_Cannot_Be_Changed_From_Inside(String attempt) {
        String script = "E=" + ENTRY_POINT + "; (" + attempt + ") 2>/dev/null && echo ATTEMPT SUCCEEDED; "
                + "sha256sum < $E; ls -A /run/agent-sandbox; readlink /run/agent-sandbox/exec; $E check";

        sandbox.run("--", "sh", "-c", script)
                .succeeds()
                .stdoutIs(sha256(sandbox.launcher()) + "  -\nagent-sandbox\napp\ncmd\nexec\ngit-views\nguard\nmounts\nnet\npolicy\nreal\nagent-sandbox\n"
                        + "inside sandbox\n");
    }

    @Test
    void Check_Run_By_The_Java_Tool_Says_Inside_Inside_And_Outside_Outside() {
        // `check` alone is answered by the launcher; with a flag before it, Java answers.
        sandbox.run("--debug", "check").exitsWith(1).stdoutIs("outside sandbox\n").stderrIsEmpty();
        sandbox.run("--", ENTRY_POINT, "--debug", "check").succeeds().stdoutIs("inside sandbox\n").stderrIsEmpty();
    }

    @Test
    void Nothing_Written_Inside_Makes_Check_Outside_Say_Inside() {
        String plant = "for dir in . /tmp \"$HOME\"; do"
                + " mkdir -p \"$dir/run/agent-sandbox\" 2>/dev/null"
                + " && cp " + ENTRY_POINT + " \"$dir/run/agent-sandbox/agent-sandbox\"; done;"
                + " echo '{}' > .agent-sandbox.json; " + ENTRY_POINT + " check";
        sandbox.run("--", "sh", "-c", plant).succeeds().stdoutIs("inside sandbox\n");
        assertThat(sandbox.project("run/agent-sandbox/agent-sandbox")).exists();
        // /tmp inside is private: nothing of it reaches the host temp dir
        assertThat(sandbox.tmp().resolve("run")).doesNotExist();

        for (Path cwd : new Path[] {sandbox.project(), sandbox.project("run"), sandbox.tmp()}) {
            sandbox.command("check").cwd(cwd).run().exitsWith(1).stdoutIs("outside sandbox\n");
            sandbox.command("--debug", "check").cwd(cwd).run().exitsWith(1).stdoutIs("outside sandbox\n");
        }
    }

    /** How the host copy of agent-sandbox is started. */
    enum Launch {
        FROM_THE_IMAGE,
        THROUGH_A_SYMLINK,
        FROM_A_COPY_IN_A_PATH_WITH_SPACES;

        Path launcher(SandboxCli sandbox) {
            return switch (this) {
                case FROM_THE_IMAGE -> sandbox.launcher();
                case THROUGH_A_SYMLINK -> sandbox.symlink(sandbox.world().resolve("some bin/agent-sandbox"),
                        sandbox.launcher().toString());
                case FROM_A_COPY_IN_A_PATH_WITH_SPACES ->
                    sandbox.copyImage(sandbox.world().resolve("my tools/agent sandbox")).resolve("bin/agent-sandbox");
            };
        }
    }

    @ParameterizedTest
    @EnumSource(Launch.class)
    void Entry_Point_Is_The_Same_Working_Launcher_However_The_Host_Copy_Was_Started(Launch launch) throws IOException {
        Path launcher = launch.launcher(sandbox);
        String version = sandbox.command("--version").executable(launcher).run().succeeds().stdout();

        String script = "E=" + ENTRY_POINT + "; sha256sum < $E && $E --version && $E --help && $E --debug check";
        Result inside = sandbox.command("--", "sh", "-c", script).executable(launcher).run()
                .succeeds()
                .stdoutContains(sha256(launcher.toRealPath()) + "  -\n" + version)
                .stdoutContains("usage:", "agent-sandbox check [-q]")
                .stderrIsEmpty();
        assertThat(inside.stdout()).as(() -> inside.describe("check answered last")).endsWith("inside sandbox\n");
    }

    private static String sha256(Path file) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (IOException | NoSuchAlgorithmException e) {
            throw new AssertionError("cannot hash " + file + ": " + e.getMessage(), e);
        }
    }
}
