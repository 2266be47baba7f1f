// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The completions as each shell runs them: bash's function called the way its programmable
 * completion calls it, zsh's completion system in a real interactive zsh in a pseudo-terminal
 * (a key bound to complete-word, as Tab), fish's own {@code complete -C}. The shells must be
 * installed (CI installs zsh and fish); a missing one fails the test, it never skips.
 *
 * <p>In each: a boolean takes its value only after {@code =}, so {@code --network f} offers
 * {@code --network=false} and never the command {@code false}; flags complete after flags;
 * subcommands and their arguments complete; after the command, the command's own completion
 * takes over (a command {@code mycmd} completes {@code alpha beta}).
 */
class CompletionShellTest {
    @TempDir
    Path dir;

    private static final List<String> LINES = List.of(
            "agent-sandbox --network f",
            "agent-sandbox --network=f",
            "agent-sandbox --docker=",
            "agent-sandbox --network=false --r",
            "agent-sandbox --ro /etc --network=false --exc",
            "agent-sandbox expl",
            "agent-sandbox check -",
            "agent-sandbox trust -",
            "agent-sandbox explain fil",
            "agent-sandbox --ro fil",
            "agent-sandbox --rw x mycmd al",
            "agent-sandbox --network=false -- mycmd b");

    @BeforeEach
    void files() throws IOException {
        Files.writeString(dir.resolve("file.txt"), "x");
        Files.createDirectories(dir.resolve("home"));
        Reference ref = Reference.current();
        Files.writeString(dir.resolve("agent-sandbox.bash"), Manual.bash(ref));
        Files.createDirectories(dir.resolve("zsh"));
        Files.writeString(dir.resolve("zsh/_agent-sandbox"), Manual.zsh(ref));
        Files.writeString(dir.resolve("agent-sandbox.fish"), Manual.fish(ref));
        for (String harness : List.of("bash-harness.sh", "zsh-harness.zsh")) {
            try (InputStream in = CompletionShellTest.class.getResourceAsStream("/completion/" + harness)) {
                Files.write(dir.resolve(harness), in.readAllBytes());
            }
        }
    }

    /** The same cases, whatever the shell: what is offered at the end of each line. */
    private static void assertCommonCases(String shell, Map<String, List<String>> offered) {
        assertThat(offered.get("agent-sandbox --network f")).as(shell + ": --network f")
                .contains("--network=false").doesNotContain("false");
        assertThat(offered.get("agent-sandbox --network=false --r")).as(shell + ": flags after flags")
                .contains("--ro", "--rw");
        assertThat(offered.get("agent-sandbox --ro /etc --network=false --exc")).as(shell + ": flags after flags")
                .containsExactly("--exclude");
        assertThat(offered.get("agent-sandbox expl")).as(shell + ": subcommands").contains("explain");
        assertThat(offered.get("agent-sandbox check -")).as(shell + ": check's flag").contains("-q")
                .doesNotContain("--ro");
        assertThat(offered.get("agent-sandbox trust -")).as(shell + ": trust's flag").contains("-C")
                .doesNotContain("--ro");
        assertThat(offered.get("agent-sandbox --rw x mycmd al")).as(shell + ": the command's own completion")
                .containsExactly("alpha");
        assertThat(offered.get("agent-sandbox --network=false -- mycmd b")).as(shell + ": after --")
                .containsExactly("beta");
    }

    @Test
    void Bash_Completes_Flags_Values_After_Equals_Subcommands_And_The_Commands_Own_Completion() throws Exception {
        Map<String, List<String>> offered = blocks(run(List.of("bash", "--norc", "--noprofile",
                dir.resolve("bash-harness.sh").toString(), dir.resolve("agent-sandbox.bash").toString()), LINES, null));
        assertCommonCases("bash", offered);
        // readline replaces only what follows the '=' (it is in COMP_WORDBREAKS)
        assertThat(offered.get("agent-sandbox --network=f")).containsExactly("false");
        assertThat(offered.get("agent-sandbox --docker=")).containsExactly("true", "false", "1", "0");
        assertThat(offered.get("agent-sandbox explain fil")).containsExactly("file.txt");
        assertThat(offered.get("agent-sandbox --ro fil")).containsExactly("file.txt");

        // where '=' breaks no word, the whole word is replaced
        Map<String, List<String>> whole = blocks(run(List.of("bash", "--norc", "--noprofile",
                dir.resolve("bash-harness.sh").toString(), dir.resolve("agent-sandbox.bash").toString()),
                List.of("agent-sandbox --network=f", "agent-sandbox --cmd=gi"), " \t\n\"'><;|&(:"));
        assertThat(whole.get("agent-sandbox --network=f")).containsExactly("--network=false");
    }

    @Test
    void Zsh_Completes_Flags_Values_After_Equals_Subcommands_And_The_Commands_Own_Completion() throws Exception {
        Path out = dir.resolve("zsh.out");
        List<String> command = new ArrayList<>(List.of("zsh", "-f", dir.resolve("zsh-harness.zsh").toString(),
                dir.resolve("zsh").toString(), out.toString()));
        command.addAll(LINES);
        run(command, List.of(), null);
        String text = Files.readString(out);
        Map<String, List<String>> offered = blocks(text);
        assertCommonCases("zsh", offered);
        assertThat(offered.get("agent-sandbox --network=f")).containsExactly("--network=false");
        assertThat(offered.get("agent-sandbox --docker=")).containsExactlyInAnyOrder("--docker=true",
                "--docker=false", "--docker=1", "--docker=0");
        assertThat(offered.get("agent-sandbox explain fil")).contains("file.txt");
        assertThat(offered.get("agent-sandbox --ro fil")).contains("file.txt");
        // one Tab after a bare boolean turns the word into the flag with its value
        assertThat(text).contains("=== agent-sandbox --network f\n--network=false\nbuffer: agent-sandbox --network"
                + " --network=false \n");
    }

    @Test
    void Fish_Completes_Flags_Values_After_Equals_Subcommands_And_The_Commands_Own_Completion() throws Exception {
        StringBuilder script = new StringBuilder("source " + dir.resolve("agent-sandbox.fish") + "\n"
                + "complete -c mycmd -f -a 'alpha beta'\n");
        for (String line : LINES) {
            script.append("echo '=== ").append(line).append("'\n");
            script.append("complete -C '").append(line).append("' | string replace -r '\\t.*' ''\n");
        }
        script.append("exit 0\n");
        Map<String, List<String>> offered = blocks(run(List.of("fish", "--no-config", "-c", script.toString()),
                List.of(), null));
        assertCommonCases("fish", offered);
        assertThat(offered.get("agent-sandbox --network=f")).containsExactly("--network=false");
        assertThat(offered.get("agent-sandbox --docker=")).containsExactlyInAnyOrder("--docker=true",
                "--docker=false", "--docker=1", "--docker=0");
        assertThat(offered.get("agent-sandbox explain fil")).containsExactly("file.txt");
        assertThat(offered.get("agent-sandbox --ro fil")).containsExactly("file.txt");
    }

    /** Runs a shell in the temp dir with HOME there; its stdout, after it exits 0. */
    private String run(List<String> command, List<String> extra, String wordbreaks) throws Exception {
        List<String> argv = new ArrayList<>(command);
        argv.addAll(extra);
        ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(false);
        pb.environment().put("HOME", dir.resolve("home").toString());
        pb.environment().put("XDG_DATA_HOME", dir.resolve("home/.local/share").toString());
        pb.environment().put("XDG_CONFIG_HOME", dir.resolve("home/.config").toString());
        pb.environment().remove("WORDBREAKS");
        if (wordbreaks != null) {
            pb.environment().put("WORDBREAKS", wordbreaks);
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new AssertionError(argv.get(0) + " is needed to test its completion (apt-get install "
                    + argv.get(0) + "): " + e.getMessage(), e);
        }
        p.getOutputStream().close();
        byte[] err;
        String out;
        try (InputStream o = p.getInputStream(); InputStream e = p.getErrorStream()) {
            out = new String(o.readAllBytes(), StandardCharsets.UTF_8);
            err = e.readAllBytes();
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(argv.get(0) + " ended").isTrue();
        assertThat(p.exitValue()).as(argv.get(0) + ": " + new String(err, StandardCharsets.UTF_8)).isZero();
        return out;
    }

    /** "=== LINE" blocks: the lines offered under each ("buffer: " lines left out). */
    private static Map<String, List<String>> blocks(String text) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        List<String> current = null;
        for (String line : text.split("\n")) {
            if (line.startsWith("=== ")) {
                current = new ArrayList<>();
                out.put(line.substring(4), current);
            } else if (current != null && !line.startsWith("buffer: ") && !line.isEmpty()
                    && !current.contains(line)) {
                current.add(line);
            }
        }
        return out;
    }
}
