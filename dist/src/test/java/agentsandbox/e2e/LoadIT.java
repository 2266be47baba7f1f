// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Many sandboxes at once, from the same project and user: each gets its own runtime
 * (and git guard), reads back exactly what it wrote, and leaves nothing behind.
 */
class LoadIT {
    private static final int SANDBOXES = 20;

    /** For all of them to start together on a busy 2-core machine. */
    private static final Duration ALL_STARTED = Duration.ofSeconds(50);

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /**
     * Each run writes files with its own name and token in the project, its private /tmp and
     * ~/.cache, then waits until all the others run too; then it reads its files back
     * and asks git about the repository (through the wrapped git and its guard).
     */
    private static final String WORK = """
            set -e
            n=$1
            mkdir -p /tmp/load "$HOME/.cache/load"
            echo "project $n $LOAD_TOKEN" > "out-$n.txt"
            echo "tmp $n $LOAD_TOKEN" > "/tmp/load/tmp-$n.txt"
            echo "cache $n $LOAD_TOKEN" > "$HOME/.cache/load/cache-$n.txt"
            own=$(mktemp)
            echo "mktemp $n $LOAD_TOKEN" > "$own"
            : > "ready-$n"
            while [ ! -e go ]; do sleep 0.05; done
            cat "out-$n.txt" "/tmp/load/tmp-$n.txt" "$HOME/.cache/load/cache-$n.txt" "$own"
            rm "$own"
            git status --short --untracked-files=no
            git log --format=%s -1
            echo "done $n"
            """;

    @Test
    void Twenty_Sandboxes_At_Once_Keep_To_Their_Own_Files_And_Leave_Nothing_Behind() {
        sandbox.write("README.md", "load\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "README.md");
        sandbox.git("commit", "-q", "-m", "Initial commit");
        sandbox.mkdirs(sandbox.home(".cache"));

        List<String> tokens = IntStream.range(0, SANDBOXES).mapToObj(i -> token()).toList();
        List<SandboxCli.Started> runs = new ArrayList<>();
        for (int n = 0; n < SANDBOXES; n++) {
            runs.add(sandbox.command("--network=false", "--", "sh", "-c", WORK, "sh", Integer.toString(n))
                    .env("LOAD_TOKEN", tokens.get(n))
                    .start());
        }
        awaitAllReady(runs);
        List<Path> live = sandbox.runtimeDirsInTmp();
        assertThat(live).as("one runtime directory per running sandbox").hasSize(SANDBOXES).doesNotHaveDuplicates();

        sandbox.write(sandbox.project("go"), "");
        List<Result> results = runs.stream().map(r -> r.waitFor(ALL_STARTED)).toList();

        SoftAssertions soft = new SoftAssertions();
        for (int n = 0; n < SANDBOXES; n++) {
            Result r = results.get(n);
            String t = tokens.get(n);
            soft.assertThat(r.exitCode()).as(r.describe("exit status 0 of run " + n)).isZero();
            soft.assertThat(r.stdout()).as(r.describe("run " + n + " reading back exactly its own files"))
                    .isEqualTo("project " + n + " " + t + "\ntmp " + n + " " + t + "\ncache " + n + " " + t + "\n"
                            + "mktemp " + n + " " + t + "\nInitial commit\ndone " + n + "\n");
            soft.assertThat(r.stderr()).as(r.describe("nothing on stderr of run " + n)).isEmpty();
            soft.assertThat(sandbox.read(sandbox.project("out-" + n + ".txt"))).isEqualTo("project " + n + " " + t + "\n");
            // ~/.cache is copy-on-write: twenty runs merged into the one layer, none into the host's
            soft.assertThat(sandbox.read(sandbox.home(".local/share/agent-sandbox/homes/layers/.cache/load/cache-" + n
                    + ".txt"))).isEqualTo("cache " + n + " " + t + "\n");
        }
        soft.assertAll();
        assertThat(sandbox.home(".cache/load")).doesNotExist();
        // every run's /tmp was its own: nothing of it reached the host temp dir
        assertThat(sandbox.tmp().resolve("load")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after all runs ended").isEmpty();
        sandbox.runOnHost("git", "status", "--short", "--untracked-files=no").succeeds().stdoutIsEmpty();
    }

    /** Waits until every run has written its ready file: all sandboxes then run at the same time. */
    private void awaitAllReady(List<SandboxCli.Started> runs) {
        long deadline = System.nanoTime() + ALL_STARTED.toNanos();
        while (true) {
            List<Integer> waiting = new ArrayList<>();
            for (int n = 0; n < runs.size(); n++) {
                if (!Files.exists(sandbox.project("ready-" + n))) {
                    if (!runs.get(n).isAlive()) {
                        throw new AssertionError("run " + n + " ended before it was ready:\n"
                                + runs.get(n).waitFor(Duration.ofSeconds(1)));
                    }
                    waiting.add(n);
                }
            }
            if (waiting.isEmpty()) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("runs " + waiting + " not ready after " + ALL_STARTED.toSeconds() + " s");
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    private static String token() {
        byte[] random = new byte[8];
        ThreadLocalRandom.current().nextBytes(random);
        return HexFormat.of().formatHex(random);
    }
}
