// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Java library without the CLI: examples/RunInSandbox.java, run as a single-file
 * program against the image's core jar, really sandboxes its command (the project
 * writable, its .env hidden).
 */
class LibraryExampleIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void Example_Program_Runs_Its_Command_In_A_Sandbox_That_Hides_Env(boolean projectAsArgument) throws IOException {
        Path example = sandbox.write(sandbox.world().resolve("example/RunInSandbox.java"),
                Files.readString(examples().resolve("RunInSandbox.java")));
        sandbox.write(".env", "API_KEY=secret-value\n");
        sandbox.runOnHost("cat", ".env").succeeds().stdoutIs("API_KEY=secret-value\n");

        List<String> command = new ArrayList<>(List.of(
                // a full JDK 25 (the one running the tests): source-file mode needs its compiler,
                // which the image's minimal runtime leaves out
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:-UsePerfData",
                "-cp", sandbox.image().resolve("lib/agent-sandbox-core.jar").toString(),
                example.toString()));
        if (projectAsArgument) {
            command.add(sandbox.project().toString());
        }
        Result result = sandbox.runOnHost(command.toArray(String[]::new));

        // `echo sandboxed > out.txt; cat .env`: the write lands in the project, the read is refused.
        result.succeeds()
                .stdoutIs("exit status 1\n")
                .stderrContains(".env: Permission denied")
                .stderrDoesNotContain("secret-value");
        assertThat(sandbox.read(sandbox.project("out.txt"))).isEqualTo("sandboxed\n");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Findings_Of_The_Run_Reach_The_Library_User() throws IOException {
        Path example = sandbox.write(sandbox.world().resolve("example/RunInSandbox.java"),
                Files.readString(examples().resolve("RunInSandbox.java")));
        sandbox.runOnHost("git", "init", "-q").succeeds();
        // a submodule's update command: the host's next `git submodule update` would run it
        Result result = sandbox.runOnHost(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:-UsePerfData", "-cp", sandbox.image().resolve("lib/agent-sandbox-core.jar").toString(),
                example.toString(), sandbox.project().toString(), "sh", "-c",
                "printf '[submodule \"x\"]\\n\\tpath = x\\n\\turl = ./x\\n\\tupdate = !touch planted\\n'"
                        + " > .gitmodules");

        result.succeeds()
                .stdoutIs("exit status 0\n")
                .stderrContains("after the run: ")
                .stderrContains("submodule.x.update");
    }

    @Test
    void The_Readme_Shows_The_Example_As_It_Is() throws IOException {
        String readme = Files.readString(examples().getParent().resolve("README.md"));
        int section = readme.indexOf("## Using it from Java");
        assertThat(section).as("the README's section on the library").isNotNegative();
        int from = readme.indexOf("```java\n", section);
        int to = readme.indexOf("```\n", from + 8);
        assertThat(from).isNotNegative();
        String example = Files.readString(examples().resolve("RunInSandbox.java"));
        // every line of the README's block, in order, is a line of the example that runs
        int at = 0;
        for (String line : readme.substring(from + 8, to).split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int found = example.indexOf(line.strip(), at);
            assertThat(found).as("README line in examples/RunInSandbox.java, in order: " + line).isNotNegative();
            at = found + line.strip().length();
        }
    }

    /** The repository's examples directory, which the build passes in. */
    private static Path examples() {
        String property = System.getProperty("agentsandbox.examples");
        if (property == null || property.isBlank()) {
            throw new AssertionError("system property agentsandbox.examples is not set: "
                    + "run the end-to-end tests through Maven (./test.sh, or mvn verify)");
        }
        Path dir = Path.of(property);
        if (!Files.isRegularFile(dir.resolve("RunInSandbox.java"))) {
            throw new AssertionError("no RunInSandbox.java in " + dir);
        }
        return dir;
    }
}
