// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code --dry-run} output compared with expected-output files in
 * {@code src/test/resources/golden/<case>.txt}. Set {@code -Dgolden.update=true} to
 * rewrite them after an intended change, then review the diff.
 */
class DryRunGoldenTest {
    private static final Path GOLDEN = Path.of("src/test/resources/golden");

    /** Each case fills a world and returns the arguments to run. */
    static final Map<String, Function<CliWorld, String[]>> CASES = new LinkedHashMap<>();

    static {
        CASES.put("defaults-plain-dir", w -> new String[] {"--dry-run", "--", "true"});
        CASES.put("defaults-with-lint-and-secrets", w -> {
            w.write("home/project/biome.json", "{}");
            w.write("home/project/pyproject.toml", "");
            w.write("home/project/.golangci.yml", "");
            w.write("home/project/.editorconfig", "");
            w.mkdir("home/.ssh");
            w.mkdir("home/.cache");
            w.write("home/.claude.json", "{}");
            w.write("home/.aws", "not a dir");
            return new String[] {"--dry-run", "npm", "test"};
        });
        CASES.put("project-config-and-flags", w -> {
            w.write("home/project/.agent-sandbox.json", """
                    { // project policy
                      "filesystem": {
                        "presets": ["!@lint/python"],
                        "ro": ["config/*/secrets.json"],
                        "rw": ["~/shared"],
                        "exclude": [".env"],
                      },
                      "network": false,
                    }
                    """);
            w.write("home/project/config/prod/secrets.json", "{}");
            w.write("home/project/config/dev/secrets.json", "{}");
            w.write("home/project/.env", "TOKEN=1");
            w.mkdir("home/shared");
            w.mkdir("home/project/out");
            // it loosens (rw ~/shared): the user trusts it first
            if (w.run("trust").status() != 0) {
                throw new AssertionError("agent-sandbox trust failed");
            }
            return new String[] {"--exclude", "config/dev", "--ro=out", "--dry-run", "--", "sh", "-c",
                    "echo 'it''s' $HOME"};
        });
        CASES.put("base-only-network-off", w -> new String[] {"--network=false", "--dry-run", "--cmd",
                "rm=false", "ls"});
        CASES.put("global-config-xdg", w -> {
            w.env.put("XDG_CONFIG_HOME", w.root.resolve("xdg").toString());
            w.write("xdg/agent-sandbox/config.jsonc", """
                    {"filesystem": {"presets": ["!@all", "@base"], "exclude": ["~/private"]}}
                    """);
            w.mkdir("home/private/notes");
            return new String[] {"--dry-run", "make"};
        });
    }

    static Stream<String> cases() {
        return CASES.keySet().stream();
    }

    @ParameterizedTest
    @MethodSource("cases")
    void Dry_Run_Prints_The_Expected_Line(String name, @TempDir Path dir) throws IOException {
        CliWorld w = new CliWorld(dir);
        String[] args = CASES.get(name).apply(w);
        CliWorld.Result r = w.run(args);
        assertThat(r.err()).isEmpty();
        assertThat(r.status()).isZero();
        assertThat(r.out()).endsWith("\n");
        assertThat(r.out().strip()).doesNotContain("\n");
        String actual = w.normalize(r.out());
        Golden.check(GOLDEN, name, actual);
    }

    @Test
    void Every_Expected_Output_File_Has_A_Case() throws IOException {
        assertThat(Golden.names(GOLDEN)).containsExactlyInAnyOrderElementsOf(CASES.keySet());
    }

    @Test
    void Dry_Run_Creates_Nothing(@TempDir Path dir) throws IOException {
        CliWorld w = new CliWorld(dir);
        w.mkdir("home/.ssh");
        w.write("home/.aws", "x");
        CliWorld.Result r = w.run("--dry-run", "true");
        assertThat(r.status()).isZero();
        try (Stream<Path> s = Files.list(w.tmp)) {
            assertThat(s).isEmpty();
        }
    }

    @Test
    void Two_Dry_Runs_Differ_Only_In_The_Runtime_Directory_Name(@TempDir Path dir) {
        CliWorld w = new CliWorld(dir);
        String a = w.run("--dry-run", "true").out();
        String b = w.run("--dry-run", "true").out();
        assertThat(a).isNotEqualTo(b);
        assertThat(w.normalize(a)).isEqualTo(w.normalize(b));
    }
}
