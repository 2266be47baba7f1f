// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.assertj.core.api.AbstractStringAssert;

/**
 * What one run of a command printed and how it exited, with fluent assertions
 * whose failure messages show the whole run:
 *
 * <pre>{@code
 * sandbox.run("check").exitsWith(1).stdoutIs("outside sandbox\n").stderrIsEmpty();
 * }</pre>
 */
public record Result(List<String> command, int exitCode, String stdout, String stderr) {

    public Result {
        command = List.copyOf(command);
    }

    /** The exit status is 0. */
    public Result succeeds() {
        return exitsWith(0);
    }

    /** The exit status is not 0. */
    public Result fails() {
        assertThat(exitCode).as(() -> describe("a non-zero exit status")).isNotZero();
        return this;
    }

    public Result exitsWith(int expected) {
        assertThat(exitCode).as(() -> describe("exit status " + expected)).isEqualTo(expected);
        return this;
    }

    public Result stdoutIs(String expected) {
        assertThat(stdout).as(() -> describe("stdout")).isEqualTo(expected);
        return this;
    }

    public Result stdoutContains(String... parts) {
        assertThat(stdout).as(() -> describe("stdout")).contains(parts);
        return this;
    }

    public Result stdoutDoesNotContain(String... parts) {
        assertThat(stdout).as(() -> describe("stdout")).doesNotContain(parts);
        return this;
    }

    public Result stdoutIsEmpty() {
        assertThat(stdout).as(() -> describe("empty stdout")).isEmpty();
        return this;
    }

    public Result stderrIs(String expected) {
        assertThat(stderr).as(() -> describe("stderr")).isEqualTo(expected);
        return this;
    }

    public Result stderrContains(String... parts) {
        assertThat(stderr).as(() -> describe("stderr")).contains(parts);
        return this;
    }

    public Result stderrDoesNotContain(String... parts) {
        assertThat(stderr).as(() -> describe("stderr")).doesNotContain(parts);
        return this;
    }

    public Result stderrIsEmpty() {
        assertThat(stderr).as(() -> describe("empty stderr")).isEmpty();
        return this;
    }

    /** stderr is exactly one line that starts with {@code agent-sandbox: }: the tool's own error format. */
    public Result failsWithOneLineError() {
        exitsWith(1);
        assertThat(stderr).as(() -> describe("one error line on stderr"))
                .startsWith("agent-sandbox: ")
                .endsWith("\n")
                .hasLineCount(1);
        return this;
    }

    /** Further AssertJ assertions on stdout. */
    public Result stdoutSatisfies(Consumer<AbstractStringAssert<?>> requirements) {
        requirements.accept(assertThat(stdout).as(() -> describe("stdout")));
        return this;
    }

    /** Further AssertJ assertions on stderr. */
    public Result stderrSatisfies(Consumer<AbstractStringAssert<?>> requirements) {
        requirements.accept(assertThat(stderr).as(() -> describe("stderr")));
        return this;
    }

    /** A word as a POSIX shell would need it written, so that the command line shown can be pasted. */
    static String quote(String word) {
        if (!word.isEmpty() && word.chars().allMatch(c -> Character.isLetterOrDigit(c) || "-_./=:,+@%".indexOf(c) >= 0)) {
            return word;
        }
        return "'" + word.replace("'", "'\\''") + "'";
    }

    /** The run, for failure messages: what was expected, the command, its status and output. */
    public String describe(String expectation) {
        return "expected " + expectation + "\n" + this;
    }

    @Override
    public String toString() {
        return "command: " + command.stream().map(Result::quote).collect(Collectors.joining(" "))
                + "\nexit status: " + exitCode
                + "\n--- stdout ---\n" + stdout
                + (stdout.isEmpty() || stdout.endsWith("\n") ? "" : "\n")
                + "--- stderr ---\n" + stderr
                + (stderr.isEmpty() || stderr.endsWith("\n") ? "" : "\n")
                + "---";
    }
}
