// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.plan.Explanation;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.Sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code agent-sandbox explain} outside a sandbox, compared with expected-output files in
 * {@code src/test/resources/explain-golden/<case>.txt}: one case per access level and per
 * layer that can decide a path. Set {@code -Dgolden.update=true} to rewrite them after an
 * intended change, then review the diff.
 */
class ExplainGoldenTest {
    private static final Path GOLDEN = Path.of("src/test/resources/explain-golden");

    /** Each case fills a world and returns the arguments to run. */
    static final Map<String, Function<CliWorld, String[]>> CASES = new LinkedHashMap<>();

    static {
        // access levels
        CASES.put("level-read-write-working-dir", w -> {
            w.write("home/project/src/Main.java", "class Main {}");
            return new String[] {"explain", "src/Main.java"};
        });
        CASES.put("level-read-only-home", w -> {
            w.write("home/notes.txt", "");
            return new String[] {"explain", "~/notes.txt"};
        });
        CASES.put("level-hidden-dir", w -> {
            w.write("home/.ssh/id_ed25519", "key");
            return new String[] {"explain", "~/.ssh", "~/.ssh/id_ed25519"};
        });
        CASES.put("level-hidden-file", w -> {
            w.write("home/project/.env", "TOKEN=1");
            return new String[] {"--exclude", ".env", "explain", ".env"};
        });
        CASES.put("level-private-tmp", w -> new String[] {"explain", "/tmp", "/tmp/agent-sandbox-explain-example"});
        CASES.put("level-runtime", w -> new String[] {"explain", "/run/agent-sandbox/agent-sandbox",
                "/run/agent-sandbox/policy"});
        CASES.put("level-fresh-dev-proc-run", w -> new String[] {"explain", "/dev/null", "/proc/cpuinfo", "/run/user"});
        CASES.put("level-own-state", w -> {
            w.mkdir("home/.local/state/agent-sandbox");
            return new String[] {"explain", "~/.local/state/agent-sandbox/run"};
        });
        CASES.put("level-not-existing", w -> new String[] {"--rw", "build", "explain", "build/out.txt", "~/.m2"});
        CASES.put("level-symlink", w -> {
            w.mkdir("home/shared");
            try {
                Files.createSymbolicLink(w.project.resolve("shared"), w.home.resolve("shared"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return new String[] {"--rw", "shared", "explain", "shared"};
        });
        // layers
        CASES.put("layer-preset", w -> {
            w.mkdir("home/.cache/pip");
            w.write("home/project/tsconfig.json", "{}");
            return new String[] {"explain", "~/.cache/pip", "tsconfig.json"};
        });
        CASES.put("layer-global-config", w -> {
            w.env.put("XDG_CONFIG_HOME", w.root.resolve("xdg").toString());
            w.write("xdg/agent-sandbox/config.jsonc", """
                    {"filesystem": {"ro": ["docs"], "exclude": ["~/private"]}}
                    """);
            w.write("home/project/docs/guide.md", "");
            w.mkdir("home/private");
            return new String[] {"explain", "docs", "docs/guide.md", "~/private"};
        });
        CASES.put("layer-project-config-trusted", w -> {
            w.write("home/project/.agent-sandbox.json", """
                    {"filesystem": {"rw": ["~/shared"]}}
                    """);
            w.mkdir("home/shared");
            if (w.run("trust").status() != 0) {
                throw new AssertionError("agent-sandbox trust failed");
            }
            return new String[] {"explain", "~/shared"};
        });
        CASES.put("layer-project-config-untrusted", w -> {
            w.write("home/project/.agent-sandbox.json", """
                    {"filesystem": {"exclude": [".env"], "ro": ["config/*.json"]}}
                    """);
            w.write("home/project/.env", "TOKEN=1");
            w.write("home/project/config/app.json", "{}");
            return new String[] {"explain", ".env", "config/app.json", ".agent-sandbox.json"};
        });
        CASES.put("layer-flag-repeats-preset", w -> {
            w.mkdir("home/.m2");
            return new String[] {"--rw", "~/.m2", "explain", "~/.m2"};
        });
        CASES.put("layer-flag", w -> {
            w.mkdir("home/notes");
            return new String[] {"--rw", "~/notes", "--ro", "src", "explain", "~/notes"};
        });
        CASES.put("layer-flag-loses", w -> {
            w.write("home/project/.agent-sandbox.json", "{}");
            return new String[] {"--rw", ".agent-sandbox.json", "explain", ".agent-sandbox.json"};
        });
        CASES.put("layer-built-in", w -> new String[] {"explain", "/usr", "/"});
        CASES.put("layer-config-given-with-c", w -> {
            w.write("other.json", """
                    {"filesystem": {"ro": ["lib"]}}
                    """);
            w.mkdir("home/project/lib");
            return new String[] {"-c", w.root.resolve("other.json").toString(), "explain", "lib"};
        });
    }

    static Stream<String> cases() {
        return CASES.keySet().stream();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void Explain_Prints_The_Expected_Blocks(String name, @TempDir Path dir) throws IOException {
        CliWorld w = new CliWorld(dir);
        String[] args = CASES.get(name).apply(w);
        CliWorld.Result r = w.run(args);
        assertThat(r.err()).isEmpty();
        assertThat(r.status()).isZero();
        String actual = w.normalize(r.out());
        Golden.check(GOLDEN, name, actual);
    }

    @Test
    void Every_Expected_Output_File_Has_A_Case() throws IOException {
        assertThat(Golden.names(GOLDEN)).containsExactlyInAnyOrderElementsOf(CASES.keySet());
    }

    /**
     * The record a run leaves for the sandbox, read back, gives the answer the plan gives
     * outside: inside, {@code explain} answers for the sandbox's real policy.
     */
    @Test
    void The_Record_A_Run_Leaves_Gives_The_Same_Answer_Inside(@TempDir Path dir) {
        CliWorld w = new CliWorld(dir);
        w.write("home/project/.env", "x");
        w.mkdir("home/.ssh");
        w.mkdir("home/.m2");
        w.write("home/project/docs/a.md", "");
        Path link = w.project.resolve("link");
        try {
            Files.createSymbolicLink(link, w.home.resolve(".m2"));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        List<String> paths = List.of(".env", "~/.ssh", "~/.m2", "docs/a.md", "/tmp/x", "/usr", "link", "missing/x");
        // the record of a run with these flags, through its text, as a sandbox reads it
        agentsandbox.core.Plan plan = agentsandbox.core.Sandbox.plan(agentsandbox.core.rules.Policy.builder()
                .layer(agentsandbox.core.rules.PolicyLayer.builder(agentsandbox.core.rules.Layer.FLAG, "flags")
                        .rw("~/.m2").exclude(".env").ro("docs").build())
                .build(), w.environment(), List.of("true"));
        Explanation read = Explanation.parse(plan.explanation().format());
        assertThat(read).isEqualTo(plan.explanation());
        String inside = new Explain(read, null, true, w.environment()).answer(paths);
        String outsideAnswer = new Explain(plan.explanation(), null, false, w.environment()).answer(paths);
        assertThat(inside.replace("for the next run, outside this sandbox: ", "")).isEqualTo(outsideAnswer);
    }

    @Test
    void Errors_Are_One_Line_With_Status_1(@TempDir Path dir) {
        CliWorld w = new CliWorld(dir);
        for (String[] args : List.of(new String[] {"explain"}, new String[] {"explain", ""},
                new String[] {"explain", "~root/x"}, new String[] {"explain", "-x"},
                new String[] {"--dry-run", "explain", "x"}, new String[] {"explain", "a\0b"})) {
            CliWorld.Result r = w.run(args);
            assertThat(r.status()).as(String.join(" ", args)).isEqualTo(1);
            assertThat(r.out()).isEmpty();
            assertThat(r.err()).startsWith("agent-sandbox: ").endsWith("\n");
            assertThat(r.err().strip()).doesNotContain("\n");
        }
    }

    @Test
    void A_Path_After_Dashes_May_Start_With_A_Dash(@TempDir Path dir) {
        CliWorld w = new CliWorld(dir);
        CliWorld.Result r = w.run("explain", "--", "-odd");
        assertThat(r.status()).isZero();
        assertThat(r.out()).startsWith("-odd: read-write\n");
    }
}
