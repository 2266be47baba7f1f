// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The install step of {@code ./install.sh}: the built image installed under a prefix by
 * its own {@code install.sh}, then used by an unprivileged user from a project
 * directory, as the README's first example shows.
 */
class InstallIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private String install(Path prefix) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", sandbox.image().resolve("install.sh").toString(),
                "--prefix", prefix.toString())
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("install.sh output: " + output).isZero();
        return output;
    }

    @Test
    void Installed_Command_Keeps_The_Host_Read_Only_And_The_Project_Writable() throws Exception {
        Path prefix = sandbox.world().resolve("prefix");
        Files.createDirectory(prefix, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));

        String output = install(prefix);

        assertThat(output).contains("installed agent-sandbox ").contains(prefix + "/bin/agent-sandbox");
        Path command = prefix.resolve("bin/agent-sandbox");
        assertThat(Files.isSymbolicLink(command)).isTrue();
        assertThat(command.toRealPath()).isEqualTo(prefix.resolve("lib/agent-sandbox/bin/agent-sandbox").toRealPath());

        sandbox.command("--", "sh", "-c", "echo hi > /usr/x").executable(command).run()
                .fails().stderrContains("Read-only file system");
        assertThat(Path.of("/usr/x")).doesNotExist();
        sandbox.command("--", "sh", "-c", "echo hi > x").executable(command).run().succeeds();
        assertThat(sandbox.read(sandbox.project().resolve("x"))).isEqualTo("hi\n");
    }

    @Test
    void Reinstalling_Replaces_The_Old_Install_And_Leaves_No_Staging_Directories() throws Exception {
        Path prefix = sandbox.world().resolve("prefix");
        Files.createDirectory(prefix, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        install(prefix);
        Files.writeString(prefix.resolve("lib/agent-sandbox/stale-file"), "old");

        install(prefix);

        assertThat(prefix.resolve("lib/agent-sandbox/stale-file")).doesNotExist();
        try (var entries = Files.list(prefix.resolve("lib"))) {
            assertThat(entries.map(p -> p.getFileName().toString()).toList()).containsExactly("agent-sandbox");
        }
        sandbox.command("--version").executable(prefix.resolve("bin/agent-sandbox")).run()
                .succeeds().stdoutContains("agent-sandbox ");
    }

    @Test
    void A_Shared_Prefix_Gets_A_World_Readable_Install() throws Exception {
        Path prefix = sandbox.world().resolve("prefix");
        Files.createDirectory(prefix, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Path image = sandbox.world().resolve("private-image");
        new ProcessBuilder("cp", "-a", sandbox.image().toString(), image.toString()).start().waitFor();
        new ProcessBuilder("chmod", "-R", "go-rwx", image.toString()).start().waitFor();

        Process p = new ProcessBuilder("bash", image.resolve("install.sh").toString(),
                "--prefix", prefix.toString()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(output).isZero();

        for (String file : List.of("lib/agent-sandbox/bin/agent-sandbox", "lib/agent-sandbox/lib/agent-sandbox-cli.jar",
                "lib/agent-sandbox/lib/agent-sandbox-core.jar")) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(prefix.resolve(file))))
                    .as(file).matches("r..r..r..");
        }
        sandbox.command("--version").executable(prefix.resolve("bin/agent-sandbox")).run().succeeds();
    }
}
