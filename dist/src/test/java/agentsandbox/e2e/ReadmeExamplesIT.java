// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's examples, run as written: the real CLI under real bwrap, as the test user, in
 * a fresh home and project, in the README's order (an example may rely on one above it). A
 * fenced block is an example when an HTML comment right before it says how to run it:
 *
 * <ul>
 * <li>{@code <!-- readme-test: console -->}: each {@code $ } line runs in the project
 *     ({@code sh -c}, stderr into stdout), and must print exactly the lines below it, up to
 *     the next {@code $ } line; a {@code cd} line is skipped (everything runs in the project);
 * <li>{@code <!-- readme-test: run -->}: the block runs as one script ({@code sh -e}) and must
 *     succeed;
 * <li>{@code <!-- readme-test: dry-run -->}: each line that starts with {@code agent-sandbox}
 *     runs with {@code --dry-run} after it (the agent it names need not be installed) and must
 *     print a bwrap command line and nothing on stderr;
 * <li>{@code <!-- readme-test: file PATH -->}: the block is written to PATH ({@code ~} is the
 *     home), for the examples below it.
 * </ul>
 * Blocks without a marker are not run (what needs a Docker daemon, an ssh-agent, an agent
 * installed, or shows times and ids that change).
 */
class ReadmeExamplesIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** A marked block: its kind, the marker's argument, the line it starts at, its text. */
    record Example(String kind, String argument, int line, String text) {}

    private static final Pattern MARKER = Pattern.compile("<!-- readme-test: ([a-z-]+)(?: (\\S+))? -->");

    static List<Example> examples(String readme) {
        List<Example> out = new ArrayList<>();
        List<String> lines = readme.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = MARKER.matcher(lines.get(i));
            if (!m.matches()) {
                assertThat(lines.get(i)).as("line %d: a marker that does not parse", i + 1)
                        .doesNotContain("readme-test");
                continue;
            }
            assertThat(lines.get(i + 1)).as("line %d: a marker right before a fenced block", i + 2).startsWith("```");
            StringBuilder text = new StringBuilder();
            int j = i + 2;
            for (; !lines.get(j).equals("```"); j++) {
                text.append(lines.get(j)).append('\n');
            }
            out.add(new Example(m.group(1), m.group(2), i + 2, text.toString()));
            i = j;
        }
        return out;
    }

    private Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        // the installed tool first on PATH, as after ./install.sh
        env.put("PATH", sandbox.launcher().getParent() + ":" + SandboxCli.PATH);
        return env;
    }

    private Result shell(String script) {
        return sandbox.runOnHost(environment(), "sh", "-c", script);
    }

    @Test
    void Every_Marked_Example_Of_The_Readme_Runs_As_Written() throws IOException {
        List<Example> examples = examples(Files.readString(readme()));
        // the examples that must stay covered: a first run, the full config, wrappers, the log
        assertThat(examples).extracting(Example::kind).contains("console", "run", "dry-run", "file");
        assertThat(examples).filteredOn(e -> e.kind().equals("file"))
                .anyMatch(e -> e.text().contains("\"commands\"") && e.text().contains("\"hostPorts\""));

        for (Example e : examples) {
            String where = "README.md line " + e.line() + " (" + e.kind() + ")";
            switch (e.kind()) {
                case "console" -> console(e, where);
                case "run" -> succeeds(shell("set -e\n" + e.text()), where);
                case "dry-run" -> {
                    for (String line : e.text().lines().toList()) {
                        if (line.startsWith("agent-sandbox ")) {
                            Result r = succeeds(shell("agent-sandbox --dry-run "
                                    + line.substring("agent-sandbox ".length())), where + ": " + line);
                            assertThat(r.stdout()).as(where + ": " + line).contains("bwrap").contains(" -- ");
                            assertThat(r.stderr()).as(where + ": " + line).isEmpty();
                        }
                    }
                }
                case "file" -> {
                    assertThat(e.argument()).as(where + ": the file's path").isNotNull();
                    Path file = e.argument().startsWith("~/") ? sandbox.home(e.argument().substring(2))
                            : sandbox.project(e.argument());
                    sandbox.write(file, e.text());
                }
                default -> throw new AssertionError(where + ": unknown kind " + e.kind());
            }
        }
    }

    private static Result succeeds(Result r, String where) {
        assertThat(r.exitCode()).as(where + "\n" + r.describe("exit status 0")).isZero();
        return r;
    }

    private void console(Example e, String where) {
        List<String> lines = e.text().lines().toList();
        int ran = 0;
        for (int i = 0; i < lines.size(); i++) {
            assertThat(lines.get(i)).as(where + ": a console block starts with a command").startsWith("$ ");
            String command = lines.get(i).substring(2);
            StringBuilder expected = new StringBuilder();
            while (i + 1 < lines.size() && !lines.get(i + 1).startsWith("$ ")) {
                expected.append(lines.get(++i)).append('\n');
            }
            if (command.startsWith("cd ")) {
                continue;
            }
            Result r = shell("exec 2>&1\n" + command);
            assertThat(r.stdout()).as(where + ": " + command + "\n" + r).isEqualTo(expected.toString());
            ran++;
        }
        assertThat(ran).as(where + ": commands run").isPositive();
    }

    /** The repository's README, found beside the examples directory the build names. */
    private static Path readme() {
        String examples = System.getProperty("agentsandbox.examples");
        assertThat(examples).as("system property agentsandbox.examples (run the end-to-end tests through Maven)")
                .isNotBlank();
        Path readme = Path.of(examples).toAbsolutePath().getParent().resolve("README.md");
        assertThat(readme).isRegularFile();
        return readme;
    }

    /** The parser itself: a marker must sit right before a block, and a wrong one fails. */
    @Test
    void Markers_Are_Read_As_Written() {
        List<Example> found = examples("""
                text
                <!-- readme-test: file ~/x.json -->
                ```json
                {"a": 1}
                ```
                <!-- readme-test: console -->
                ```console
                $ echo hi
                hi
                ```
                """);
        assertThat(found).containsExactly(new Example("file", "~/x.json", 3, "{\"a\": 1}\n"),
                new Example("console", null, 7, "$ echo hi\nhi\n"));
    }
}
