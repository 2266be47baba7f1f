// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * When things go wrong around a sandbox: agent-sandbox killed outright, signalled
 * twice, its output closed early, a sandbox that will not stop. Nothing of the sandbox
 * may outlive agent-sandbox, and what a killed run leaves in the temp dir is removed
 * by the next run.
 *
 * <p>Sandboxed processes run through links whose names carry a random marker, so that
 * {@link SandboxCli#hostProcessesWith} finds every one of them on the host.
 */
class FaultsIT {
    /** Generous: the JVM and bwrap start on a busy 2-core machine. */
    private static final Duration STARTUP = Duration.ofSeconds(30);

    /** agent-sandbox's grace period between SIGTERM and SIGKILL. */
    private static final Duration GRACE = Duration.ofSeconds(10);

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ SIGKILL

    @Test
    void SIGKILL_Of_Agent_Sandbox_Ends_Every_Sandboxed_Process_Within_A_Second_And_The_Next_Run_Cleans_Up() {
        String marker = marker();
        SandboxCli.Started started = sandbox.command("--network=false", "--", "sh", "-c", family(marker)).start();
        awaitReady(started);
        awaitFamily(marker);

        started.signal("KILL");
        SandboxCli.awaitNoHostProcessWith(marker, Duration.ofSeconds(1), "1 s after SIGKILL");
        started.waitFor(Duration.ofSeconds(5)).exitsWith(128 + 9);

        // SIGKILL leaves no chance to clean up: the run's directory stays behind ...
        List<Path> leftovers = sandbox.runtimeDirsInTmp();
        assertThat(leftovers).as("runtime directories after SIGKILL").hasSize(1);
        // ... a dry run neither removes it nor creates one ...
        sandbox.run("--dry-run", "--", "true").succeeds();
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after a dry run").isEqualTo(leftovers);
        // ... and the next real run removes it.
        sandbox.run("--network=false", "--", "true").succeeds().stdoutIsEmpty().stderrIsEmpty();
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after the next run").isEmpty();
    }

    /**
     * A run prepares its directory while its plan is made: when the plan fails (a broken
     * project config), the error is one line and the directory is gone with it.
     */
    /**
     * A signal at any moment of the start: from the JVM's first steps (before it handles
     * SIGTERM itself, when its own handling printed a word of Java's and exited 143) to
     * bwrap's set-up (when its sandbox's init is made but has not yet asked to die with
     * bwrap, and a SIGKILL left it running with the command). SIGTERM ends the tool with
     * 130, SIGKILL with 137, and no process of the run is left. The moments swept are those
     * of this machine's start, about 30 ms to bwrap; from 10 ms on, as before the launcher
     * itself runs (setpriv, env) a signal ends it as it ends any program not yet started.
     * With the network on, the sandbox's watch shares its process with the forwarder.
     */
    @ParameterizedTest
    @CsvSource({"TERM, 130, false", "KILL, 137, false", "KILL, 137, true"})
    void A_Signal_At_Any_Moment_Of_The_Start_Leaves_No_Process(String signal, int status, boolean network) {
        for (int delay = 10; delay <= 76; delay += 3) {
            String marker = marker();
            SandboxCli.Started started = sandbox.command("--network=" + network, "--", "sh", "-c",
                    "sleep 30; : " + marker).start();
            pause(delay);
            started.signal(signal);
            Result result = started.waitFor(Duration.ofSeconds(15));
            result.exitsWith(status);
            assertThat(result.stderr()).as("stderr after SIG%s %d ms into the start", signal, delay)
                    .doesNotContain("java").doesNotContain("Exception").doesNotContain("Runtime.exit");
            SandboxCli.awaitNoHostProcessWith(marker, Duration.ofSeconds(2),
                    "2 s after SIG" + signal + " " + delay + " ms into the start");
        }
    }

    @Test
    void A_Run_Whose_Plan_Fails_Leaves_No_Run_Directory_Behind() {
        sandbox.write(".agent-sandbox.jsonc", "{\"filesystem\": {\"ro\": [\"docs\"\n");
        List<Path> socketsBefore = socketDirs();

        sandbox.run("--", "sh", "-c", ": > ran").failsWithOneLineError().stderrContains(".agent-sandbox.jsonc");

        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).as("run directories after a failed plan").isEmpty();
        assertThat(socketDirs()).as("socket directories after a failed plan").isSubsetOf(socketsBefore);
    }

    /**
     * Ctrl-C while the plan is still being made (a slow one here: seven globs over 20 000
     * files, 2 000 of them excluded) ends agent-sandbox with 130 before the command
     * starts, and nothing of the run is left.
     */
    @Test
    void SIGINT_While_The_Plan_Is_Made_Ends_With_130_Before_The_Command_Runs_And_Leaves_Nothing() {
        sandbox.runOnHost("sh", "-c", "for d in $(seq 1 100); do mkdir -p many/d$d/e && (cd many/d$d/e && seq 1 200"
                + " | xargs touch) || exit 1; done").succeeds();
        List<String> argv = new java.util.ArrayList<>(List.of("-C", "many", "--network=false", "--exclude", "*/*/*7"));
        for (String never : List.of("a", "b", "c", "d", "e", "f")) {
            argv.addAll(List.of("--exclude", "*/*/*." + never));
        }
        argv.addAll(List.of("--", "sh", "-c", ": > ran"));
        SandboxCli.Started started = sandbox.command(argv.toArray(String[]::new)).start();
        // the run directory appears as soon as the plan is being made (and the handler is in place)
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (sandbox.runtimeDirsInTmp().isEmpty() && started.isAlive() && System.nanoTime() < deadline) {
            pause(5);
        }
        List<Path> runs = sandbox.runtimeDirsInTmp();
        assertThat(runs).as("a run directory while the plan is made").hasSize(1);
        Path sockets = socketsBase().resolve(runs.get(0).getFileName());
        started.signal("INT");

        started.waitFor(STARTUP).exitsWith(130);
        assertThat(sandbox.project("many/ran")).as("the command never ran").doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).as("run directories after the interrupted plan").isEmpty();
        assertThat(sockets).as("the run's socket directory after the interrupted plan").doesNotExist();
    }

    /** Where the runs of the test user keep their sockets (the world sets no XDG_RUNTIME_DIR). */
    private Path socketsBase() {
        return Path.of("/tmp/agent-sandbox-" + sandbox.uid());
    }

    /** The runs' socket directories of the test user, of this world and any other. */
    private List<Path> socketDirs() {
        Path base = socketsBase();
        List<Path> found = new java.util.ArrayList<>();
        if (Files.isDirectory(base)) {
            try (java.util.stream.Stream<Path> entries = Files.list(base)) {
                entries.filter(p -> p.getFileName().toString().matches("[0-9a-f]{16}")).forEach(found::add);
            } catch (IOException e) {
                throw new AssertionError("cannot list " + base + ": " + e.getMessage(), e);
            }
        }
        return found;
    }

    /**
     * Removing what killed runs left must not touch a run in progress: its runtime
     * directory holds the git guard's socket, which its git calls still need.
     */
    @Test
    void Removing_Leftovers_Spares_The_Runtime_Of_A_Sandbox_Still_Running() {
        sandbox.git("init", "-q");
        SandboxCli.Started running = sandbox.command("--", "sh", "-c", ": > ready-running; "
                        + "while [ ! -e go ]; do sleep 0.05; done; git status --short --untracked-files=no; echo git-ran")
                .start();
        awaitReady(running, "ready-running");
        List<Path> live = sandbox.runtimeDirsInTmp();
        assertThat(live).hasSize(1);
        SandboxCli.Started killed = sandbox.command("--", "sh", "-c", ": > ready-killed; exec sleep 300").start();
        awaitReady(killed, "ready-killed");
        killed.signal("KILL").waitFor(Duration.ofSeconds(5)).exitsWith(128 + 9);
        assertThat(sandbox.runtimeDirsInTmp()).as("the running sandbox's and the killed one's").hasSize(2)
                .containsAll(live);

        sandbox.run("--", "true").succeeds();

        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories while a sandbox still runs").isEqualTo(live);
        sandbox.write(sandbox.project("go"), "");
        running.waitFor(STARTUP).succeeds().stdoutIs("git-ran\n").stderrIsEmpty();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /**
     * A signal that comes while the starter still removes the run's directories (here, the
     * many small files the command left in the git dir's copy-on-write layer, which is on
     * disk in the run's directory: about 2 s of the disk's work; the private /tmp is in
     * memory and goes with the sandbox) stops
     * that removal; what is left keeps its owner record, so the next run's sweep removes it.
     * (Which entry a directory lists first is the file system's choice: where it lists
     * {@code owner} before {@code tmp/}, only its removal last keeps it.)
     */
    @Test
    void A_Removal_Cut_Short_By_A_Signal_Is_Finished_By_The_Next_Run() {
        sandbox.git("init", "-q");
        String marker = marker();
        SandboxCli.Started started = sandbox.command("--network=false", "--", "sh", "-c",
                "(mkdir .git/many && cd .git/many && head -c 30000 /dev/zero > all && split -b 1 -a 5 all f)"
                        + " && : > ready", marker).start();
        awaitReady(started);
        // bwrap gone, and the JVM's last work (about 2 ms) done: the starter is removing
        long deadline = System.nanoTime() + STARTUP.toNanos();
        while (!bwrapsWith(marker).isEmpty() && System.nanoTime() < deadline) {
            pause(5);
        }
        assertThat(bwrapsWith(marker)).as("bwrap of the run").isEmpty();
        pause(200);
        started.signal("TERM");
        started.waitFor(Duration.ofSeconds(5)).exitsWith(0); // the run itself was over
        SandboxCli.awaitNoHostProcessWith(marker, Duration.ofSeconds(2), "after agent-sandbox exited");

        List<Path> leftovers = sandbox.runtimeDirsInTmp();
        assertThat(leftovers).as("the run directory whose removal was cut short").hasSize(1);
        assertThat(leftovers.get(0).resolve("owner")).as("its owner record, removed last").isRegularFile();
        sandbox.run("--network=false", "--", "true").succeeds().stdoutIsEmpty().stderrIsEmpty();
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after the next run").isEmpty();
    }

    /**
     * A run sweeps what a run killed outright left while its own sandbox is set up and runs:
     * a signal then still stops its sandbox at once, and the tool ends once the sweep is done,
     * with nothing left of either run.
     */
    @Test
    void A_Signal_While_A_Large_Stale_Run_Is_Swept_Stops_The_Sandbox_At_Once() {
        sandbox.git("init", "-q"); // the files go to the git dir's layer, on disk in the run's directory
        String killedMarker = marker();
        SandboxCli.Started killed = sandbox.command("--network=false", "--", "sh", "-c",
                "(mkdir .git/many && cd .git/many && seq 60000 | xargs touch) && : > ready && sleep 300; : "
                        + killedMarker).start();
        awaitReady(killed, "ready");
        killed.signal("KILL").waitFor(Duration.ofSeconds(5)).exitsWith(128 + 9);
        SandboxCli.awaitNoHostProcessWith(killedMarker, Duration.ofSeconds(2), "after the SIGKILL");
        List<Path> stale = sandbox.runtimeDirsInTmp();
        assertThat(stale).as("the killed run's directory").hasSize(1);
        deleteQuietly(sandbox.project("ready"));

        String marker = marker();
        SandboxCli.Started started = sandbox.command("--network=false", "--", "sh", "-c",
                ": > ready; sleep 300; : " + marker).start();
        awaitReady(started);
        assertThat(stale.get(0)).as("the stale run's directory, being swept (more files if it went first)")
                .exists();
        started.signal("INT");
        // the sandbox goes at once, while the sweep of 60 000 files is still at work
        long deadline = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        while (!bwrapsWith(marker).isEmpty() && System.nanoTime() < deadline) {
            pause(2);
        }
        assertThat(bwrapsWith(marker)).as("bwrap 2 s after SIGINT").isEmpty();
        assertThat(stale.get(0)).as("the stale run's directory, still being swept when the sandbox had gone")
                .exists();
        started.waitFor(Duration.ofSeconds(60)).exitsWith(130);
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after the run").isEmpty();
    }

    /**
     * A directory tree in the sandbox's /tmp thousands of levels deep (its paths far past
     * PATH_MAX, more levels than a process may hold directories open) goes with the run.
     */
    @Test
    void A_Tree_Thousands_Of_Levels_Deep_In_Tmp_Is_Removed_With_The_Run() {
        // 50 levels at a time, the chain so far moved into each new one's deepest: short paths only
        String deep = "cd /tmp && p=$(printf 'd/%.0s' $(seq 50)) && mkdir -p \"b/$p\" && "
                + "for i in $(seq 52); do mkdir -p \"s/$p\" && mv b \"s/${p}x\" && mv s b || exit 9; done && echo deep";
        sandbox.run("--network=false", "--", "sh", "-c", deep).succeeds().stdoutIs("deep\n").stderrIsEmpty();
        assertThat(sandbox.runtimeDirsInTmp()).as("runtime directories after the run").isEmpty();
    }

    /** The host's bwrap processes with the marker in their command line. */
    private static List<String> bwrapsWith(String marker) {
        List<String> out = new java.util.ArrayList<>();
        for (String p : SandboxCli.hostProcessesWith(marker)) {
            String pid = p.substring(0, p.indexOf(':'));
            try {
                if (Files.readString(Path.of("/proc", pid, "comm")).strip().equals("bwrap")) {
                    out.add(p);
                }
            } catch (IOException e) {
                // ended meanwhile
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ two signals

    /** Both signals at once, to a sandbox whose command ignores them: status 130 at once, nothing left. */
    @ParameterizedTest
    @CsvSource({"TERM, TERM", "INT, INT", "INT, TERM"})
    void Two_Signals_End_The_Sandbox_At_Once_With_Status_130(String first, String second) {
        String marker = marker();
        SandboxCli.Started started = sandbox.command("--", "sh", "-c", "trap '' INT TERM; " + family(marker)).start();
        awaitReady(started);
        awaitFamily(marker);

        long before = System.nanoTime();
        signalTwice(started, first, second);
        Result result = started.waitFor(STARTUP);
        Duration took = Duration.ofNanos(System.nanoTime() - before);

        result.exitsWith(130).stderrIsEmpty();
        assertThat(took).as("time from the signals to the exit").isLessThan(Duration.ofSeconds(5));
        awaitNoneLeft(marker);
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /**
     * A sandbox that outlives the first SIGTERM (here bwrap itself ignores it, standing
     * in for any sandbox slow to stop) is still running after it, within the grace
     * period; the second signal kills it at once.
     */
    @ParameterizedTest
    @CsvSource({"TERM, TERM", "INT, INT"})
    void Second_Signal_Kills_At_Once_A_Sandbox_That_Outlives_The_First(String first, String second) {
        String marker = marker();
        SandboxCli.Started started = withStubbornBwrap(sandbox.command("--", "sh", "-c", family(marker))).start();
        awaitReady(started);
        awaitFamily(marker);

        started.signal(first);
        pause(1500);
        assertThat(started.isAlive()).as("agent-sandbox 1.5 s after SIG%s, within the grace period", first).isTrue();
        assertThat(SandboxCli.hostProcessesWith(marker)).as("the sandbox within the grace period").isNotEmpty();
        long before = System.nanoTime();
        Result result = started.signal(second).waitFor(STARTUP);
        Duration took = Duration.ofNanos(System.nanoTime() - before);

        result.exitsWith(130).stderrDoesNotContain("Exception", "\tat ");
        assertThat(took).as("time from the second signal to the exit").isLessThan(Duration.ofSeconds(3));
        awaitNoneLeft(marker);
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Sandbox_That_Outlives_SIGTERM_Is_Killed_When_The_Grace_Period_Ends() {
        String marker = marker();
        SandboxCli.Started started = withStubbornBwrap(sandbox.command("--", "sh", "-c", family(marker))).start();
        awaitReady(started);
        awaitFamily(marker);

        long before = System.nanoTime();
        started.signal("TERM");
        pause(GRACE.toMillis() / 2);
        assertThat(started.isAlive()).as("agent-sandbox halfway through the grace period").isTrue();
        Result result = started.waitFor(GRACE.plus(STARTUP));
        Duration took = Duration.ofNanos(System.nanoTime() - before);

        result.exitsWith(130).stderrDoesNotContain("Exception", "\tat ");
        assertThat(took).as("time from SIGTERM to the exit").isBetween(GRACE.minusMillis(500), GRACE.plusSeconds(5));
        awaitNoneLeft(marker);
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /**
     * A bwrap that ignores SIGTERM: a shell that runs the real bwrap as its child and
     * waits for it. SIGKILL ends the shell, and the real bwrap with it
     * ({@code --die-with-parent}).
     */
    private SandboxCli.Invocation withStubbornBwrap(SandboxCli.Invocation invocation) {
        Path realBwrap = onPath("bwrap");
        Path bin = sandbox.systemProgram("stubborn-bin", "bwrap", """
                #!/bin/sh
                trap '' TERM INT
                "$FAULTS_REAL_BWRAP" "$@" &
                child=$!
                while :; do
                    wait "$child"; status=$?
                    kill -0 "$child" 2>/dev/null || exit "$status"
                done
                """, "rwxr-xr-x").getParent();
        return invocation.env(Map.of("PATH", bin + ":" + SandboxCli.PATH, "FAULTS_REAL_BWRAP", realBwrap.toString()));
    }

    // ------------------------------------------------------------------ output closed early

    @Test
    void Command_Whose_Output_Is_Closed_Early_Inside_Ends_Normally() {
        sandbox.run("--", "sh", "-c", "yes | head -n 1; yes no | head -c 3; echo")
                .succeeds().stdoutIs("y\nno\n\n").stderrIsEmpty();
    }

    /**
     * {@code agent-sandbox -- yes | head -n1} from a shell: once head has its line, yes
     * dies of SIGPIPE and agent-sandbox ends promptly with yes's status, saying nothing.
     */
    @Test
    void Reader_Closing_Agent_Sandboxs_Output_Ends_It_Promptly_Without_A_Trace() {
        String launcher = Result.quote(sandbox.launcher().toString());
        long before = System.nanoTime();
        Result result = sandbox.runOnHost("sh", "-c",
                "{ " + launcher + " -- yes; echo \"status $?\" >&2; } | head -n 1; "
                        + "{ " + launcher + " -- sh -c 'cat /dev/zero; echo \"cat $?\" >&2'; echo \"status $?\" >&2; }"
                        + " | head -c 5 | od -An -c");
        Duration took = Duration.ofNanos(System.nanoTime() - before);

        result.succeeds()
                .stdoutContains("y\n", "\\0  \\0  \\0  \\0  \\0")
                .stderrIs("status 141\ncat 141\nstatus 0\n");
        assertThat(took).as("time for both pipelines").isLessThan(Duration.ofSeconds(15));
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    // ------------------------------------------------------------------ helpers

    /**
     * A shell that starts three sleeps through links named after the marker: a
     * background child, one in a session of its own ({@code setsid -f}) and one
     * orphaned by a double fork. It creates ready in the project once all three are started.
     */
    private static String family(String marker) {
        String link = "/tmp/" + marker;
        return "set -e; sleep=$(command -v sleep); "
                + "ln -s \"$sleep\" " + link + "-child; ln -s \"$sleep\" " + link + "-session; "
                + "ln -s \"$sleep\" " + link + "-orphan; "
                + link + "-child 300 & "
                + "setsid -f " + link + "-session 301; "
                + "( " + link + "-orphan 302 & ); "
                + ": > ready; wait";
    }

    private void awaitReady(SandboxCli.Started started) {
        awaitReady(started, "ready");
    }

    /** Waits for the command to create {@code NAME} in the project (its /tmp is its own). */
    private void awaitReady(SandboxCli.Started started, String name) {
        started.awaitFile(sandbox.project(name), STARTUP);
    }

    /** The three sleeps of {@link #family} run, seen from the host. */
    private static void awaitFamily(String marker) {
        List<String> wanted = List.of("-child 300", "-session 301", "-orphan 302");
        long deadline = System.nanoTime() + STARTUP.toNanos();
        List<String> found = SandboxCli.hostProcessesWith(marker);
        while (!allFound(found, marker, wanted) && System.nanoTime() < deadline) {
            pause(50);
            found = SandboxCli.hostProcessesWith(marker);
        }
        assertThat(allFound(found, marker, wanted))
                .as("the three sleeps among the host processes with %s in their command line: %s", marker, found)
                .isTrue();
    }

    private static boolean allFound(List<String> processes, String marker, List<String> suffixes) {
        return suffixes.stream().allMatch(s -> processes.stream().anyMatch(p -> p.endsWith(marker + s)));
    }

    /** Once agent-sandbox has exited, no process of its sandbox is left. */
    private static void awaitNoneLeft(String marker) {
        SandboxCli.awaitNoHostProcessWith(marker, Duration.ofSeconds(2), "after agent-sandbox exited");
    }

    /** Sends two signals to agent-sandbox from one shell, microseconds apart. */
    private static void signalTwice(SandboxCli.Started started, String first, String second) {
        try {
            Process kill = new ProcessBuilder("sh", "-c", "kill -s \"$0\" \"$2\" && kill -s \"$1\" \"$2\"",
                    first, second, Long.toString(started.pid())).redirectErrorStream(true).start();
            String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(kill.waitFor()).as("kill -s %s, then -s %s: %s", first, second, output).isZero();
        } catch (IOException e) {
            throw new AssertionError("cannot signal " + started.pid() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** An executable in one of the directories of the tests' PATH: a clear failure when it is missing. */
    private static Path onPath(String program) {
        for (String dir : SandboxCli.PATH.split(":")) {
            Path candidate = Path.of(dir, program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError(program + " not found on " + SandboxCli.PATH);
    }

    private static String marker() {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return "e2e-fault-" + HexFormat.of().formatHex(random);
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
