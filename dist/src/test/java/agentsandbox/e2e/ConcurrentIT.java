// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two sandboxes of the same user at once: sandbox A, as strong as a user can make it
 * ({@code --rw ~}, the host temp dir shared), attacks sandbox B while B runs, the way the
 * runtime files of other runs were once reachable in the shared temp dir: it looks for
 * B's run directory, its stand-in for excluded files, its git guard's and its proxy's
 * sockets, its private {@code /tmp}, and tries to plant, replace and listen. B must then
 * run its own command under its own policy, and the host must lose nothing.
 */
class ConcurrentIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private static final Duration WAIT = Duration.ofSeconds(30);

    /** What A tries; each success prints a line starting with "escaped". */
    private static final String ATTACK = """
            # this sandbox's own /tmp is also at its own path (its run dir): the one thing there
            own=/none; for r in "$HOME/.local/state/agent-sandbox/run"/*; do [ "$r/tmp" -ef /tmp ] && own=$r; done
            for d in "$HOME/.local/state/agent-sandbox" "$HOME/.local/state/agent-sandbox/run" /tmp/agent-sandbox-*; do
                [ -d "$d" ] || continue
                for e in "$d"/* "$d"/.[!.]*; do
                    [ -e "$e" ] || continue
                    case "$own/" in "$e"/*) continue ;; esac
                    echo "escaped: sees $e"
                done
                mkdir -p "$d/planted" 2>/dev/null   # lands in this sandbox's own empty file system, if anywhere
            done
            for s in $(find "$HOME" /tmp /run -type s 2>/dev/null); do
                case "$s" in /run/agent-sandbox/*) continue ;; esac
                echo "escaped: socket $s"
            done
            grep -rl "victim-secret" "$HOME" /tmp /run 2>/dev/null | grep -v "^$PWD/" \\
                | sed 's/^/escaped: secret at /'
            true
            """;

    @ParameterizedTest(name = "attacker {0}")
    @ValueSource(strings = {"default", "strong"})
    void A_Running_Sandbox_Cannot_See_Or_Change_Another_Runs_State(String attacker) {
        sandbox.write("a.txt", "committed\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "base");
        sandbox.write("a.txt", "uncommitted work\n");
        sandbox.write(".env", "SECRET=victim-secret\n");

        // B: hides .env, keeps a secret in its private /tmp, waits, then uses its guard
        SandboxCli.Started b = sandbox.command("--exclude", ".env", "--", "sh", "-c", """
                echo victim-secret > /tmp/b-only
                : > ready-b
                while [ ! -e go ]; do sleep 0.05; done
                cat /tmp/b-only
                cat .env 2>/dev/null && echo "B read .env"
                git checkout -- a.txt && echo "B's guard was bypassed"
                echo b-done
                """).start();
        b.awaitFile(sandbox.project("ready-b"), WAIT);

        List<String> flags = attacker.equals("strong")
                ? List.of("--rw", "~", "--share-tmp", "--exclude", ".env") : List.of("--exclude", ".env");
        List<String> all = new java.util.ArrayList<>(flags);
        all.addAll(List.of("--", "sh", "-c", ATTACK));
        String[] args = all.toArray(String[]::new);
        sandbox.run(args).succeeds().stdoutDoesNotContain("escaped");

        sandbox.write(sandbox.project("go"), "");
        b.waitFor(WAIT).succeeds().stdoutContains("victim-secret", "b-done")
                .stdoutDoesNotContain("B read .env", "B's guard was bypassed")
                .stderrContains("git checkout is not allowed");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("uncommitted work\n");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
        assertThat(sandbox.home(".local/state/agent-sandbox/planted")).doesNotExist();
        assertThat(sandbox.home(".local/state/agent-sandbox/run/planted")).doesNotExist();
    }

    @Test
    void A_Long_Temp_Dir_Changes_Nothing_And_Git_Is_Still_Guarded() {
        Path longTmp = sandbox.tmp();
        while (longTmp.toString().length() < 200) {
            longTmp = longTmp.resolve("a-rather-long-directory-name");
        }
        sandbox.mkdirs(longTmp);
        assertThat(Files.isDirectory(longTmp)).isTrue();
        sandbox.write("a.txt", "committed\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "base");
        sandbox.write("a.txt", "uncommitted work\n");

        sandbox.command("--", "sh", "-c", "git status --short; git checkout -- a.txt; echo TMPDIR=$TMPDIR")
                .env("TMPDIR", longTmp.toString()).run()
                .succeeds().stdoutContains(" M a.txt", "TMPDIR=/tmp").stderrContains("git checkout is not allowed");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("uncommitted work\n");
    }
}
