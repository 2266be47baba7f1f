// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The app image is self-contained and starts with its startup cache. */
class AppImageIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @Test
    void The_Runtime_Is_Part_Of_The_Image_And_Holds_Only_What_Is_Needed() throws IOException {
        Path runtime = sandbox.image().resolve("runtime");
        assertThat(Files.isSymbolicLink(runtime)).as("runtime is a real directory, not a link to a JDK").isFalse();
        assertThat(runtime.resolve("bin/java")).isExecutable();
        assertThat(runtime.resolve("bin/javac")).doesNotExist();
        String modules = sandbox.runOnHost(runtime.resolve("bin/java").toString(), "--list-modules").succeeds().stdout();
        assertThat(modules.lines().map(l -> l.replaceFirst("@.*", "")))
                .containsExactlyInAnyOrder("java.base", "jdk.unsupported", "agentsandbox.urandom");
        // the security provider java.security names first, found among the modules' services
        assertThat(sandbox.runOnHost(runtime.resolve("bin/java").toString(), "--describe-module",
                "agentsandbox.urandom").succeeds().stdout())
                .contains("provides java.security.Provider with agentsandbox.urandom.UrandomProvider");
    }

    @Test
    void The_Runtimes_Security_Settings_Are_The_JDKs_With_The_Cheap_Random_Source_First() throws IOException {
        List<String> lines = Files.readAllLines(sandbox.image().resolve("runtime/conf/security/java.security"));
        assertThat(lines.get(0)).isEqualTo("security.provider.1=AgentSandboxUrandom");
        assertThat(lines).contains("security.provider.2=SUN", "security.provider.3=SunRsaSign");
        assertThat(lines).as("settings without the JDK's comments").noneMatch(l -> l.startsWith("#") || l.isBlank());
        // the JDK's settings are still there, their continued lines included
        assertThat(lines).anyMatch(l -> l.startsWith("jdk.tls.disabledAlgorithms="));
        assertThat(lines).anyMatch(l -> l.startsWith("securerandom.source="));
    }

    @Test
    void Runs_Without_Any_JDK_On_Path_And_Without_JAVA_HOME() {
        // PATH holds bwrap and nothing else: no java, no shell tools
        Path bin = sandbox.mkdirs(sandbox.world().resolve("only-bwrap"));
        sandbox.symlink(bin.resolve("bwrap"), "/usr/bin/bwrap");
        sandbox.command("--", "/bin/sh", "-c", "echo hi > /usr/x").env("PATH", bin.toString())
                .env("JAVA_HOME", null).run()
                .fails().stderrContains("Read-only file system");
        sandbox.command("--", "/bin/echo", "hi").env("PATH", bin.toString()).env("JAVA_HOME", null).run()
                .succeeds().stdoutIs("hi\n");
    }

    @Test
    void The_Startup_Cache_Applies_To_The_Real_Command_Line() {
        // With AGENT_SANDBOX_REQUIRE_CACHE=1 the launcher asks the JVM to refuse to start
        // without the cache: a cache that silently stopped applying fails here.
        sandbox.command("--dry-run", "--", "true").env("AGENT_SANDBOX_REQUIRE_CACHE", "1").run().succeeds();
        sandbox.command("--", "true").env("AGENT_SANDBOX_REQUIRE_CACHE", "1").run().succeeds();
    }

    @Test
    void The_JVM_Is_Started_In_Process_By_The_Runtimes_Own_Starter() throws IOException {
        Path starter = sandbox.image().resolve("runtime/bin/agent-sandbox-jvm").toRealPath();
        String marker = "e2e-jvm-start-" + ProcessHandle.current().pid();
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", ": > ready; sleep 300; : " + marker).start();
        try {
            run.awaitFile(sandbox.project("ready"), java.time.Duration.ofSeconds(30));
            List<Path> programs = new java.util.ArrayList<>();
            for (String p : SandboxCli.hostProcessesWith(marker)) {
                try {
                    programs.add(Files.readSymbolicLink(Path.of("/proc", p.substring(0, p.indexOf(':')), "exe")));
                } catch (IOException e) {
                    // not ours to read, or gone
                }
            }
            assertThat(programs).as("the programs of the run's processes").contains(starter)
                    .doesNotContain(starter.resolveSibling("java"));
        } finally {
            run.signal("TERM").waitFor(java.time.Duration.ofSeconds(30));
        }
    }

    @Test
    void An_Image_Without_The_In_Process_Starter_Starts_The_JVM_With_Java() throws IOException {
        Path copy = sandbox.copyImage(sandbox.world().resolve("image without its starter"));
        Files.delete(copy.resolve("runtime/bin/agent-sandbox-jvm"));
        sandbox.command("--", "/bin/echo", "hi").executable(copy.resolve("bin/agent-sandbox"))
                .env("AGENT_SANDBOX_REQUIRE_CACHE", "1").run().succeeds().stdoutIs("hi\n").stderrIsEmpty();
    }

    @Test
    void A_Cache_Older_Than_The_Jars_Is_Never_Used() throws IOException {
        Path copy = sandbox.copyImage(sandbox.world().resolve("stale image"));
        Path jar = copy.resolve("lib/agent-sandbox-cli.jar");
        Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(
                Files.getLastModifiedTime(copy.resolve("lib/agent-sandbox.aot")).toMillis() + 60_000));
        Path launcher = copy.resolve("bin/agent-sandbox");
        sandbox.command("--version").executable(launcher).run().succeeds().stderrIsEmpty();
        sandbox.command("--version").executable(launcher).env("AGENT_SANDBOX_REQUIRE_CACHE", "1").run()
                .failsWithOneLineError().stderrContains("startup cache", "older than the jars");
    }

    @Test
    void The_Image_Archive_Holds_The_Image() throws IOException {
        Path target = Path.of(System.getProperty("agentsandbox.image")).getParent();
        try (Stream<Path> files = Files.list(target)) {
            Path archive = files.filter(p -> p.getFileName().toString().matches("agent-sandbox-.+-linux-.+\\.tar\\.gz"))
                    .findFirst().orElseThrow(() -> new AssertionError("no image archive in " + target));
            Process tar = new ProcessBuilder("tar", "-tzf", archive.toString()).redirectErrorStream(true).start();
            String listing = new String(tar.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            try {
                assertThat(tar.waitFor()).as(listing).isZero();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertThat(listing).contains("agent-sandbox/bin/agent-sandbox", "agent-sandbox/lib/agent-sandbox-cli.jar",
                    "agent-sandbox/lib/agent-sandbox.aot", "agent-sandbox/runtime/bin/java",
                    "agent-sandbox/runtime/bin/agent-sandbox-jvm");
        }
    }
}
