// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The published agent CLIs, installed from the npm registry at pinned versions, started
 * through agent-sandbox on a fresh home (nothing of theirs exists yet), the way a new
 * user starts them. What they save must reach the host, where the same CLI outside the
 * sandbox reads it. An unreachable registry fails these tests; nothing is skipped.
 */
class AgentsIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    static final String CLAUDE_CODE = "@anthropic-ai/claude-code@2.1.330";
    static final String CODEX = "@openai/codex@0.169.0";
    static final String GEMINI = "@google/gemini-cli@0.61.0";
    private static final List<String> PACKAGES = List.of(CLAUDE_CODE, CODEX, GEMINI);

    private static Path bin;

    /**
     * Installs the CLIs once into a world-readable directory beside the test worlds,
     * kept for later runs under a name made of the pinned versions.
     */
    @BeforeAll
    static void install() throws IOException, InterruptedException {
        Path base = Path.of(System.getProperty("agentsandbox.e2e.tmp", "/var/tmp"));
        String name = "agent-sandbox-agent-clis-" + Integer.toHexString(String.join(" ", PACKAGES).hashCode());
        Path dir = base.resolve(name);
        bin = dir.resolve("node_modules/.bin");
        if (Files.exists(dir.resolve("installed"))) {
            return;
        }
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        String npm = List.of("/usr/bin/npm", "/usr/local/bin/npm").stream().filter(p -> Files.isExecutable(Path.of(p)))
                .findFirst().orElseThrow(() -> new AssertionError(
                        "npm not found: the agent tests install the agent CLIs from the npm registry (apt-get install npm)"));
        Path log = dir.resolve("npm.log");
        List<String> command = new java.util.ArrayList<>(List.of(npm, "install", "--prefix", dir.toString(),
                "--no-audit", "--no-fund", "--loglevel=error"));
        command.addAll(PACKAGES);
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(new File("/dev/null")).start();
        if (!p.waitFor(15, java.util.concurrent.TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("npm install of " + PACKAGES + " took over 15 minutes");
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("npm install of " + PACKAGES + " failed (is the npm registry"
                    + " reachable?):\n" + Files.readString(log));
        }
        Files.writeString(dir.resolve("installed"), String.join("\n", PACKAGES) + "\n");
    }

    private String claude() {
        return bin.resolve("claude").toString();
    }

    private String codex() {
        return bin.resolve("codex").toString();
    }

    private Path config() {
        return sandbox.home(".claude.json");
    }

    @Test
    void Claude_Code_Keeps_Its_User_Config_In_Sandboxes_And_The_Hosts_Claude_Never_Sees_It() throws IOException {
        sandbox.run("--", claude(), "--version").succeeds().stdoutContains("2.1.330 (Claude Code)");

        sandbox.run("--", claude(), "mcp", "add", "-s", "user", "x", "--", "true").succeeds()
                .stdoutContains("Added stdio MCP server x");

        assertThat(Files.readSymbolicLink(config())).isEqualTo(Path.of(".claude/.claude.json"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(sandbox.home(".claude"))))
                .isEqualTo("rwx------");
        // the next sandbox has it; the host's Claude Code does not
        sandbox.run("--", claude(), "mcp", "list").succeeds().stdoutContains("x: true");
        assertThat(sandbox.home(".claude/.claude.json")).doesNotExist();
        sandbox.runOnHost(Map.of("HOME", sandbox.home().toString()), claude(), "mcp", "list").succeeds()
                .stdoutDoesNotContain("x: true");
        try (var left = Files.list(sandbox.home())) {
            assertThat(left.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(".claude.json")))
                    .as("no lock or temp file left beside the config").containsExactly(".claude.json");
        }
    }

    /**
     * Two sandboxes at once each see the layer as it was when they started, and their own
     * changes; when both save one file, the one that ends later wins, whole file for whole
     * file. The host's config is never touched.
     */
    @Test
    void Two_Sandboxes_Saving_Claude_Codes_Config_At_Once_Leave_One_Whole_Config_And_The_Hosts_Untouched()
            throws IOException {
        String original = "{\n  \"numStartups\": 7,\n  \"mcpServers\": {}\n}\n";
        sandbox.write(config(), original);
        sandbox.chownAll();
        SandboxCli.Started first = sandbox.command("--", claude(), "mcp", "add", "-s", "user", "one", "--", "true")
                .start();
        SandboxCli.Started second = sandbox.command("--", claude(), "mcp", "add", "-s", "user", "two", "--", "true")
                .start();
        first.waitFor(Duration.ofSeconds(60)).succeeds();
        second.waitFor(Duration.ofSeconds(60)).succeeds();

        assertThat(Files.isSymbolicLink(config())).isTrue();
        assertThat(sandbox.read(sandbox.home(".claude/.claude.json"))).isEqualTo(original);
        Result list = sandbox.run("--", claude(), "mcp", "list").succeeds();
        assertThat(list.stdout().contains("one: true") || list.stdout().contains("two: true"))
                .as(list.describe("the config of the sandbox that ended later")).isTrue();
        sandbox.run("--", "sh", "-c", "cat ~/.claude/.claude.json").succeeds().stdoutContains("\"numStartups\"");
        sandbox.runOnHost(Map.of("HOME", sandbox.home().toString()), claude(), "mcp", "list").succeeds()
                .stdoutDoesNotContain("one: true", "two: true");
    }

    @Test
    void Codex_Starts_Without_Warnings_Keeps_An_Mcp_Server_In_Sandboxes_And_Runs_Its_Own_Sandbox_Inside()
            throws IOException {
        sandbox.run("--", codex(), "--version").succeeds().stdoutContains("0.169.0")
                .stderrDoesNotContain("WARNING", "Refusing", "Read-only");
        assertThat(sandbox.home(".codex")).isDirectory();

        sandbox.run("--", codex(), "mcp", "add", "x", "--", "true").succeeds();
        sandbox.run("--", codex(), "mcp", "list").succeeds().stdoutContains("x");
        assertThat(sandbox.home(".codex/config.toml")).doesNotExist();
        sandbox.runOnHost(Map.of("HOME", sandbox.home().toString()), codex(), "mcp", "list").succeeds()
                .stdoutDoesNotContain("true");

        sandbox.run("--", codex(), "sandbox", "--", "sh", "-c", "echo nested-ok; touch /usr/nested 2>&1 || true")
                .succeeds().stdoutContains("nested-ok", "Read-only file system");
    }

    @Test
    void Gemini_Cli_Keeps_Its_Settings_In_Sandboxes_On_A_Fresh_Home() {
        String gemini = bin.resolve("gemini").toString();
        sandbox.run("--", gemini, "--version").succeeds().stdoutContains("0.61.0");
        sandbox.run("--", gemini, "mcp", "add", "-s", "user", "x", "true").succeeds();
        // Gemini CLI lists on stderr; outside the folder it trusts, the server shows as disabled
        sandbox.run("--", gemini, "mcp", "list").succeeds().stderrContains("x: true");
        assertThat(sandbox.home(".gemini/settings.json")).doesNotExist();
        sandbox.runOnHost(Map.of("HOME", sandbox.home().toString()), gemini, "mcp", "list").succeeds()
                .stderrDoesNotContain("x: true");
    }

    @Test
    void A_Maven_Build_Fills_And_Uses_A_Fresh_Home_Repository() throws IOException {
        // filled on the host first, online, as a user would have it; the sandbox builds offline
        sandbox.write("prefill/pom.xml", pom("prefill"));
        Result host = sandbox.runOnHost(Map.of("HOME", sandbox.home().toString()), "sh", "-c",
                "cd prefill && mvn -B -q -ntp -Duser.home=\"$HOME\" install");
        assertThat(host.exitCode()).as(host.describe("the host's Maven fills ~/.m2 from Maven Central")).isZero();
        sandbox.write("app/pom.xml", pom("app"));
        sandbox.write("app/src/main/java/demo/App.java", "package demo; public class App {}\n");
        sandbox.chownAll();

        sandbox.run("--", "sh", "-c", "cd app && mvn -B -q -o -Duser.home=\"$HOME\" install").succeeds();

        assertThat(sandbox.project("app/target/app-1.0.jar")).isRegularFile();
        // installed into the sandboxes' layer of ~/.m2: the next sandbox has it, the host's Maven does not
        assertThat(sandbox.home(".m2/repository/demo/app/1.0/app-1.0.jar")).doesNotExist();
        sandbox.run("--", "sh", "-c", "test -f ~/.m2/repository/demo/app/1.0/app-1.0.jar").succeeds();
    }

    @Test
    void A_Gradle_Style_Cache_Write_Needs_No_Config_On_A_Fresh_Home() throws IOException {
        // a wrapper script in the project, as Gradle projects ship one; it keeps its caches in ~/.gradle
        Path gradlew = sandbox.write("gradlew", """
                #!/bin/sh
                mkdir -p "$HOME/.gradle/caches/modules-2" && echo cached > "$HOME/.gradle/caches/modules-2/entry"
                echo BUILD SUCCESSFUL
                """);
        Files.setPosixFilePermissions(gradlew, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(sandbox.home(".gradle")).doesNotExist();

        sandbox.run("--", "bash", "-c", "./gradlew build --offline").succeeds().stdoutContains("BUILD SUCCESSFUL");

        sandbox.run("--", "sh", "-c", "cat ~/.gradle/caches/modules-2/entry").succeeds().stdoutIs("cached\n");
        assertThat(sandbox.home(".gradle/caches/modules-2/entry")).as("in the sandboxes' layer only").doesNotExist();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(sandbox.home(".gradle"))))
                .isEqualTo("rwx------");
        assertThat(sandbox.home(".m2")).as("no directory of a tool that was not started").doesNotExist();
    }

    @Test
    void A_Tool_The_Run_Does_Not_Start_Gets_No_Directory_And_Debug_Says_What_Was_Created() {
        sandbox.run("--debug", "--", "true").succeeds()
                .stderrContains("home: create " + sandbox.home(".cache"));
        assertThat(sandbox.home(".m2")).doesNotExist();
        assertThat(sandbox.home(".claude")).doesNotExist();
        assertThat(sandbox.home(".codex")).doesNotExist();
        sandbox.run("--debug", "--", "sh", "-c", "npm --version").succeeds()
                .stderrContains("tools: npm (started)", "home: create " + sandbox.home(".npm"));
        assertThat(sandbox.home(".npm")).isDirectory();
    }

    @Test
    void Programs_And_Settings_Of_A_Granted_Cache_Change_For_Sandboxes_Only_And_Credentials_Stay_Hidden() {
        sandbox.mkdirs(sandbox.home(".cargo/bin"));
        sandbox.mkdirs(sandbox.home(".cargo/registry"));
        sandbox.write(sandbox.home(".cargo/bin/cargo"), "#!/bin/sh\n");
        sandbox.write(sandbox.home(".cargo/credentials.toml"), "[registry]\ntoken = \"secret\"\n");
        sandbox.write(sandbox.home(".m2/settings.xml"), "<settings/>\n");
        sandbox.chownAll();

        sandbox.run("--", "sh", "-c", """
                echo x >> ~/.cargo/registry/index && echo registry-writable
                echo planted >> ~/.cargo/bin/cargo && echo bin-in-layer
                cat ~/.cargo/credentials.toml || echo credentials-hidden
                echo planted >> ~/.m2/settings.xml && echo settings-in-layer
                """).succeeds().stdoutContains("registry-writable", "bin-in-layer", "credentials-hidden",
                "settings-in-layer").stdoutDoesNotContain("secret");
        assertThat(sandbox.read(sandbox.home(".cargo/bin/cargo"))).isEqualTo("#!/bin/sh\n");
        assertThat(sandbox.read(sandbox.home(".m2/settings.xml"))).isEqualTo("<settings/>\n");
        assertThat(sandbox.home(".cargo/registry/index")).doesNotExist();
    }

    @Test
    void In_The_Fallback_Programs_And_Settings_Of_A_Granted_Cache_Stay_Read_Only_And_Credentials_Hidden() {
        sandbox.homesFallback();
        sandbox.mkdirs(sandbox.home(".cargo/bin"));
        sandbox.mkdirs(sandbox.home(".cargo/registry"));
        sandbox.write(sandbox.home(".cargo/bin/cargo"), "#!/bin/sh\n");
        sandbox.write(sandbox.home(".cargo/credentials.toml"), "[registry]\ntoken = \"secret\"\n");
        sandbox.write(sandbox.home(".m2/settings.xml"), "<settings/>\n");
        sandbox.chownAll();

        sandbox.run("--", "sh", "-c", """
                echo x >> ~/.cargo/registry/index && echo registry-writable
                echo x >> ~/.cargo/bin/cargo || echo bin-read-only
                cat ~/.cargo/credentials.toml || echo credentials-hidden
                echo x >> ~/.m2/settings.xml || echo settings-read-only
                """).succeeds().stdoutContains("registry-writable", "bin-read-only", "credentials-hidden",
                "settings-read-only").stdoutDoesNotContain("secret");
    }

    private static String pom(String artifact) {
        return """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>demo</groupId>
                  <artifactId>%s</artifactId>
                  <version>1.0</version>
                  <properties>
                    <maven.compiler.release>17</maven.compiler.release>
                    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
                  </properties>
                  <build>
                    <plugins>
                      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
                      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
                      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version></plugin>
                      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.2</version></plugin>
                      <plugin><artifactId>maven-install-plugin</artifactId><version>3.1.3</version></plugin>
                    </plugins>
                  </build>
                </project>
                """.formatted(artifact);
    }
}
