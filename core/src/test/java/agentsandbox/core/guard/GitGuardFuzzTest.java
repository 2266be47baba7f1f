// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.rules.PathPattern;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Coverage-guided fuzzing (Jazzer) of the git guard's reading of command lines and of
 * path patterns: any input ends in a decision or a clean error. Without
 * {@code JAZZER_FUZZ=1} each runs once per kept input; {@code scripts/fuzz.sh} fuzzes.
 */
class GitGuardFuzzTest {
    private static final String[] WORDS = {"git", "-C", "-c", "--git-dir", "--work-tree", "--config-env",
        "checkout", "restore", "reset", "--hard", "clean", "-f", "commit", "-n", "--no-verify", "push",
        "--force", "--forc", "+main", "--mirror", "stash", "pop", "drop", "branch", "-D", "-d", "--delete",
        "alias.x=checkout", "core.hooksPath=x", "/tmp", "/tmp/x", "..", "--", "-m", "=", "merge", "rebase"};

    /** Answers like a sandbox would, from the input itself. */
    private record Probe(boolean throwAway, Optional<String> alias, boolean external) implements GitGuard.Probe {
        @Override
        public Optional<String> realPath(String path) {
            return path.isEmpty() ? Optional.empty() : Optional.of(path);
        }

        @Override
        public GitGuard.GitRun git(List<String> args) {
            if (args.contains("config")) {
                return alias.isPresent() ? new GitGuard.GitRun(0, alias.get()) : new GitGuard.GitRun(1, "");
            }
            if (args.contains("--list-cmds=main,others")) {
                return new GitGuard.GitRun(0, external ? String.join("\n", args) : "");
            }
            return throwAway ? new GitGuard.GitRun(0, "/tmp/x/.git\n/tmp/x/.git\n/tmp/x\n")
                    : new GitGuard.GitRun(128, "");
        }

        @Override
        public boolean inPrivateTemp(String resolved) {
            return throwAway;
        }


        @Override
        public String sandboxEnv(String name) {
            return name.equals("HOME") ? "/home/u" : null;
        }
    }

    @FuzzTest(maxDuration = "20s")
    void Any_Git_Command_Line_Gets_A_Decision(FuzzedDataProvider data) {
        List<String> argv = new ArrayList<>();
        argv.add(data.consumeBoolean() ? "git" : data.pickValue(new String[] {"git-checkout", "/usr/bin/git",
            "git-upload-pack", data.consumeString(10)}));
        int n = data.consumeInt(0, 10);
        for (int i = 0; i < n; i++) {
            argv.add(data.consumeBoolean() ? data.pickValue(WORDS) : data.consumeString(16));
        }
        Map<String, String> env = new HashMap<>();
        int vars = data.consumeInt(0, 3);
        for (int i = 0; i < vars; i++) {
            env.put(data.pickValue(new String[] {"GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0",
                "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_GLOBAL", "HOME", "GIT_ALLOW_PROTOCOL"}), data.consumeString(20));
        }
        Probe probe = new Probe(data.consumeBoolean(),
                data.consumeBoolean() ? Optional.of(data.consumeString(30)) : Optional.empty(), data.consumeBoolean());
        String cwd = data.consumeBoolean() ? "/home/u/project" : "/tmp/" + data.consumeString(8);

        GitGuard.Decision d = GitGuard.decide(new GitGuard.Request(argv, cwd, env, data.consumeString(40)), probe);

        assertThat(d).isNotNull();
        if (d instanceof GitGuard.Decision.Deny deny) {
            assertThat(deny.message()).contains("is not allowed in this sandbox");
        }
    }

    @FuzzTest(maxDuration = "20s")
    void Any_Path_Pattern_Parses_Or_Is_Refused_With_A_Message(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        try {
            PathPattern p = PathPattern.parse(text);
            assertThat(p.text()).isEqualTo(text);
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).isNotBlank();
        }
    }
}
