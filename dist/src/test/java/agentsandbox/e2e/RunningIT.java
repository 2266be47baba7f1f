// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Running a command: its environment, stdio, terminal and exit status pass through;
 * SIGINT/SIGTERM stop the whole sandbox; what cannot run is refused in one line.
 */
class RunningIT {

    /** Generous: the JVM and bwrap start on a busy 2-core machine. */
    private static final Duration STARTUP = Duration.ofSeconds(30);

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ environment and stdio

    @Test
    void Environment_Reaches_The_Command_Unchanged_Except_TMPDIR() {
        String value = "spaces and $dollar, 'single' \"double\" quotes\nand a second line";
        Result result = sandbox.command("--", "env", "-0").env("AGENT_SANDBOX_E2E_VALUE", value).run().succeeds();

        Map<String, String> expected = new LinkedHashMap<>(sandbox.environment());
        expected.put("AGENT_SANDBOX_E2E_VALUE", value);
        expected.put("TMPDIR", "/tmp");
        expected.put("AGENT_SANDBOX_PROMPT", "(sandbox) "); // for a prompt to show, display only
        // with the network on, the sandbox's own network stack needs no proxy variables (the
        // proxy's, where no stack can run, are NetworkProxyIT's)
        // bwrap sets PWD to the directory it changes to, as a shell would.
        expected.put("PWD", sandbox.project().toString());
        assertThat(parseEnv(result.stdout())).as(() -> result.describe("the caller's environment"))
                .containsExactlyInAnyOrderEntriesOf(expected);
    }

    @Test
    void Variable_That_Is_Not_UTF8_Reaches_The_Command_Byte_For_Byte() {
        // the JVM reads such a value with U+FFFD in it; bwrap must still get the caller's bytes
        Result result = sandbox.runOnHost("sh", "-c", "X=$(printf 'a\\377b'); export X;"
                + " exec \"$0\" -- sh -c 'printf %s \"$X\" | od -An -tx1'", sandbox.launcher().toString());
        result.succeeds().stdoutContains("61 ff 62");
    }

    /**
     * The launcher forks a starter, and bwrap is the starter's child (starting a process
     * from the JVM costs a run more than anything else); then it runs the JVM as its
     * child and stays the process the caller waits for (it stops the JVM once it has the
     * status, so that the JVM's own exit costs the caller nothing). The starter and the JVM
     * end with the tool also when the tool runs no sandbox.
     */
    @Test
    void Bwrap_Is_Started_By_The_Launchers_Starter_Which_Ends_With_The_Tool() throws IOException {
        String marker = marker();
        SandboxCli.Started started = startMarked(marker);
        Map<Long, long[]> parents = new LinkedHashMap<>();
        Map<Long, String> exes = new LinkedHashMap<>();
        for (long pid : processesWithVariable("AGENT_SANDBOX_E2E_MARK=" + marker)) {
            String exe = exe(pid);
            if (exe != null) {
                exes.put(pid, exe);
                parents.put(pid, new long[] {parent(pid)});
            }
        }
        String launcher = sandbox.launcher().toRealPath().toString();
        long bwrap = exes.entrySet().stream()
                .filter(e -> e.getValue().endsWith("/bwrap") && launcher.equals(exes.get(parents.get(e.getKey())[0])))
                .mapToLong(Map.Entry::getKey).findFirst().orElse(-1);
        assertThat(bwrap).as("a bwrap whose parent is the launcher, among %s", exes).isPositive();
        long starter = parents.get(bwrap)[0];
        assertThat(parents.get(starter)[0]).as("the starter's parent is the launcher").isEqualTo(started.pid());
        assertThat(exes.get(started.pid())).isEqualTo(launcher);
        List<Long> jvms = new java.util.ArrayList<>();
        for (Map.Entry<Long, String> e : exes.entrySet()) {
            if (e.getValue().endsWith("/runtime/bin/agent-sandbox-jvm")) {
                jvms.add(e.getKey());
            }
        }
        assertThat(jvms).as("agent-sandbox's JVM among %s", exes).hasSize(1);
        assertThat(parents.get(jvms.get(0))[0]).as("the JVM's parent is the launcher").isEqualTo(started.pid());

        started.signal("TERM").waitFor(Duration.ofSeconds(8)).exitsWith(130);
        assertNoneLeft(marker);

        // no sandbox: the starter reads the end of its pipe and goes with the tool
        String quiet = marker();
        sandbox.command("--version").env("AGENT_SANDBOX_E2E_MARK", quiet).run().succeeds();
        long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<Long> left = processesWithVariable("AGENT_SANDBOX_E2E_MARK=" + quiet);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            pause(50);
            left = processesWithVariable("AGENT_SANDBOX_E2E_MARK=" + quiet);
        }
        assertThat(left).as("processes left by agent-sandbox --version").isEmpty();
    }

    /**
     * The JVM hands the launcher the tool's status; a JVM that dies without one (killed,
     * crashed) makes the launcher end the same way, and the sandbox goes with it.
     */
    @Test
    void A_JVM_That_Dies_Without_A_Status_Ends_The_Tool_The_Same_Way_And_The_Sandbox_With_It() throws IOException {
        String marker = marker();
        SandboxCli.Started started = startMarked(marker);
        assertSleepsVisible(marker);
        long jvm = -1;
        for (long pid : processesWithVariable("AGENT_SANDBOX_E2E_MARK=" + marker)) {
            String exe = exe(pid);
            if (exe != null && exe.endsWith("/runtime/bin/agent-sandbox-jvm") && parent(pid) == started.pid()) {
                jvm = pid;
            }
        }
        assertThat(jvm).as("agent-sandbox's JVM, the launcher's child").isPositive();

        sandbox.runOnHost("kill", "-KILL", Long.toString(jvm)).succeeds();

        // ended by SIGKILL as the JVM was: 128 + 9 as a Java process reports it
        started.waitFor(Duration.ofSeconds(8)).exitsWith(137);
        assertNoneLeft(marker);
    }

    /**
     * The launcher ends only when the JVM and the starter are gone: a caller that looks
     * right after the tool's end finds nothing of the run alive (the JVM's command line
     * holds the command's words, so a scan for them would find a JVM still exiting).
     */
    @Test
    void Nothing_Of_A_Run_Is_Alive_When_The_Tool_Has_Ended() {
        for (int i = 0; i < 20; i++) {
            String marker = marker();
            sandbox.command("--", "true", marker).run().succeeds();
            assertThat(SandboxCli.hostProcessesWith(marker)).as("processes of run %d right after its end", i)
                    .isEmpty();
        }
    }

    /** A long-running sandbox whose processes carry {@code marker} in their environment, ready. */
    private SandboxCli.Started startMarked(String marker) {
        SandboxCli.Started started = sandbox.command("--", "sh", "-c", longRunning(marker, ""))
                .env("AGENT_SANDBOX_E2E_MARK", marker).start();
        awaitReady(started);
        return started;
    }

    /** Host processes with {@code entry} in their environment. */
    private static List<Long> processesWithVariable(String entry) {
        List<Long> out = new java.util.ArrayList<>();
        byte[] wanted = (entry + "\0").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (var dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path dir : dirs) {
                try {
                    byte[] environ = Files.readAllBytes(dir.resolve("environ"));
                    if (indexOf(environ, wanted) >= 0) {
                        out.add(Long.parseLong(dir.getFileName().toString()));
                    }
                } catch (IOException e) {
                    // gone meanwhile, or not ours to read
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc", e);
        }
        return out;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static String exe(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc/" + pid + "/exe")).toString();
        } catch (IOException e) {
            return null;
        }
    }

    private static long parent(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses
        String[] after = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(after[1]);
    }

    /**
     * JAVA_TOOL_OPTIONS and friends configure every JVM the caller starts; they are for
     * the command, and must not reach agent-sandbox's own JVM (an option it does not
     * know would stop it, and the JVM would announce them on the command's stderr).
     */
    @ParameterizedTest
    @ValueSource(strings = {"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"})
    void Java_Option_Variables_Reach_The_Command_But_Not_Agent_Sandboxs_Own_JVM(String name) {
        String value = "-XX:+AgentSandboxE2eNoSuchOption -Dspaces='a b'";

        // of agent-sandbox's own variables only the prompt's, which is display only
        sandbox.command("--", "sh", "-c", "printenv \"$1\"; env | grep AGENT_SANDBOX_ || true", "sh", name)
                .env(name, value)
                .run()
                .succeeds()
                .stdoutIs(value + "\nAGENT_SANDBOX_PROMPT=(sandbox) \n")
                .stderrIsEmpty();
    }

    @Test
    void Temp_Dir_Inside_Is_Tmp_Private_Unless_Shared() {
        sandbox.run("--", "sh", "-c", "echo \"$TMPDIR\"; echo hi > \"$TMPDIR/from-inside\"")
                .succeeds().stdoutIs("/tmp\n").stderrIsEmpty();
        assertThat(sandbox.tmp().resolve("from-inside")).doesNotExist();

        sandbox.run("--share-tmp", "--", "sh", "-c", "echo \"$TMPDIR\"; echo hi > \"$TMPDIR/from-inside\"")
                .succeeds().stdoutIs("/tmp\n").stderrIsEmpty();
        assertThat(sandbox.read(sandbox.tmp().resolve("from-inside"))).isEqualTo("hi\n");
    }

    /**
     * The sandbox's own helper (the network's forwarder, the watch that ends the sandbox with
     * the tool) runs beside the command, never as its child: a shell's {@code wait} or a
     * program reaping "all its children" meets only its own.
     */
    @ParameterizedTest
    @ValueSource(strings = {"--network=true", "--network=false"})
    void The_Command_Starts_Without_Children_Of_Agent_Sandboxs_Own(String network) {
        sandbox.run(network, "--", "sh", "-c", "read kids < /proc/$$/task/$$/children; echo \"[$kids]\"; wait; echo waited")
                .succeeds().stdoutIs("[]\nwaited\n").stderrIsEmpty();
    }

    @Test
    void Stdin_Reaches_The_Command() {
        String input = "first line\nsecond line, no newline at the end";

        sandbox.command("--", "cat").stdin(input).run().succeeds().stdoutIs(input).stderrIsEmpty();
    }

    @Test
    void Stdout_And_Stderr_Stay_Separate() {
        sandbox.run("--", "sh", "-c", "echo out; echo err >&2; echo more out; echo more err >&2")
                .succeeds()
                .stdoutIs("out\nmore out\n")
                .stderrIs("err\nmore err\n");
    }

    // ------------------------------------------------------------------ exit status

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 3, 42, 255})
    void Exit_Status_Of_The_Command_Is_Passed_Through(int status) {
        sandbox.run("--", "sh", "-c", "echo ran; exit " + status).exitsWith(status).stdoutIs("ran\n").stderrIsEmpty();
    }

    @ParameterizedTest
    @CsvSource({"KILL, 9", "TERM, 15"})
    void Command_Killed_By_A_Signal_Exits_With_128_Plus_The_Signal_Number_Like_In_A_Shell(String signal, int number) {
        String killItself = "kill -s " + signal + " $$";

        Result host = sandbox.runOnHost("sh", "-c", "sh -c '" + killItself + "'; echo $?");
        assertThat(host.stdout()).as(() -> host.describe("the shell's status for a command killed by SIG" + signal))
                .isEqualTo((128 + number) + "\n");

        sandbox.run("--", "sh", "-c", killItself).exitsWith(128 + number).stdoutIsEmpty();
    }

    @Test
    void Unknown_Command_Fails_With_Status_1_And_One_Line_Naming_It() {
        sandbox.run("--", "no-such-command-anywhere", "arg")
                .exitsWith(1)
                .stdoutIsEmpty()
                .stderrContains("no-such-command-anywhere: command not found")
                .stderrSatisfies(err -> err.hasLineCount(1));

        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /** A PATH directory the user cannot search makes the lookup fail with EACCES; a shell says "not found" too. */
    @Test
    void Unknown_Command_Is_Not_Found_Even_When_A_Path_Directory_Cannot_Be_Searched() throws IOException {
        Path closed = sandbox.mkdirs(sandbox.world().resolve("closed-bin"));
        Files.setPosixFilePermissions(closed, java.util.Set.of());

        sandbox.command("--", "no-such-command-anywhere")
                .env("PATH", closed + ":" + SandboxCli.PATH)
                .run()
                .exitsWith(1)
                .stderrContains("no-such-command-anywhere: command not found")
                .stderrSatisfies(err -> err.hasLineCount(1));
    }

    @Test
    void Command_That_Is_Not_Executable_Fails_With_Status_1_And_One_Line_Naming_It() {
        sandbox.write("script.sh", "#!/bin/sh\necho should not run\n");

        sandbox.run("--", "./script.sh")
                .exitsWith(1)
                .stdoutIsEmpty()
                .stderrContains("./script.sh", "Permission denied")
                .stderrSatisfies(err -> err.hasLineCount(1));
    }

    /**
     * A script without "#!" runs through /bin/sh, by its path and found in PATH, as
     * execvp(3) and a shell run it (the launcher looks commands up itself).
     */
    @Test
    void Script_Without_An_Interpreter_Line_Runs_Through_The_Shell_By_Path_And_In_PATH() throws IOException {
        Path bin = sandbox.mkdirs("bin");
        Path script = sandbox.write("bin/plain-script", "echo \"plain script ran with $# arguments: $1\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwxr-xr-x"));

        sandbox.run("--", "./bin/plain-script", "one two").succeeds()
                .stdoutIs("plain script ran with 1 arguments: one two\n");
        sandbox.command("--", "plain-script", "a", "b")
                .env("PATH", "/nonexistent-dir::" + bin + ":" + SandboxCli.PATH)
                .run()
                .succeeds()
                .stdoutIs("plain script ran with 2 arguments: a\n");
    }

    // ------------------------------------------------------------------ terminal

    @Test
    void Terminal_Stays_A_Terminal_Inside() {
        Result result = sandbox.command("--", "sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo all three; tty")
                .runInTerminal()
                .succeeds()
                .stdoutContains("all three\n");

        String tty = result.stdout().lines().reduce((first, second) -> second).orElse("");
        assertThat(tty).as(() -> result.describe("the terminal's device path from tty")).matches("/dev/\\S+");
    }

    @Test
    void Without_A_Terminal_The_Command_Has_None() {
        sandbox.run("--", "sh", "-c", "test -t 0 || test -t 1 || test -t 2 || echo no terminal")
                .succeeds().stdoutIs("no terminal\n");
    }

    @Test
    void Interactive_Program_Reads_From_The_Terminal_And_Its_Status_Passes_Through() {
        sandbox.command("--", "sh", "-c", "printf 'name? '; read name; echo \"hello, $name\"; exit 7")
                .stdin("world\n")
                .runInTerminal()
                .exitsWith(7)
                .stdoutContains("name? hello, world\n");
    }

    /**
     * Pushes a character into the terminal's input queue with TIOCSTI, once plainly
     * and once with bits above the low 32 set in the request (the kernel ignores them).
     */
    private static final String PUSH_INPUT = """
            import ctypes, errno, fcntl, termios
            libc = ctypes.CDLL(None, use_errno=True)
            for request in (termios.TIOCSTI, termios.TIOCSTI | 1 << 32):
                if libc.ioctl(0, ctypes.c_ulong(request), ctypes.c_char_p(b"#")) == 0:
                    print("pushed")
                else:
                    print("refused", errno.errorcode[ctypes.get_errno()])
            """;

    /**
     * A command that shares the caller's terminal cannot push input into it (which the
     * caller's shell would read and run after the sandbox ends), while the terminal
     * stays the controlling one: /dev/tty opens. Outside a sandbox the same push works.
     */
    @Test
    void Command_Cannot_Push_Input_Into_The_Callers_Terminal_Which_Stays_Its_Terminal() {
        sandbox.runOnHost("script", "-qec", "python3 -c '" + PUSH_INPUT + "'", "/dev/null")
                .succeeds().stdoutContains("#pushed\r\n#pushed\r\n");

        sandbox.command("--", "sh", "-c", "python3 -c \"$1\" && echo controlling > /dev/tty", "sh", PUSH_INPUT)
                .runInTerminal()
                .succeeds()
                .stdoutContains("refused EPERM\nrefused EPERM\ncontrolling\n")
                .stdoutDoesNotContain("pushed", "#");
    }

    // ------------------------------------------------------------------ signals

    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT", "HUP", "QUIT"})
    void Signal_Stops_Everything_In_The_Sandbox_With_Status_130_And_Leaves_No_Runtime_Dir(String signal) {
        String marker = marker();
        SandboxCli.Started started = sandbox.command("--", "sh", "-c", longRunning(marker, "")).start();
        awaitReady(started);
        assertSleepsVisible(marker);

        Result result = started.signal(signal).waitFor(Duration.ofSeconds(8));

        // SIGQUIT is passed on as SIGTERM: no thread dump of the JVM's
        result.exitsWith(130).stdoutDoesNotContain("thread dump").stderrDoesNotContain("thread dump");
        assertNoneLeft(marker);
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Command_Ignoring_SIGTERM_Is_Still_Stopped_Within_The_Grace_Period() {
        String marker = marker();
        SandboxCli.Started started = sandbox.command("--", "sh", "-c", longRunning(marker, "trap '' TERM")).start();
        awaitReady(started);
        assertSleepsVisible(marker);

        long before = System.nanoTime();
        Result result = started.signal("TERM").waitFor(Duration.ofSeconds(20));
        Duration took = Duration.ofNanos(System.nanoTime() - before);

        result.exitsWith(130);
        assertThat(took).as("time from SIGTERM to exit").isLessThan(Duration.ofSeconds(20));
        assertNoneLeft(marker);
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /**
     * A shell that starts two sleeps in the background and waits for them, both through a
     * link whose name carries the marker, so that every process of the sandbox shows the
     * marker on its host command line; it creates ready in the project once both are started.
     */
    private static String longRunning(String marker, String setup) {
        String sleep = "/tmp/" + marker;
        return "set -e; " + setup + (setup.isEmpty() ? "" : "; ")
                + "ln -s \"$(command -v sleep)\" " + sleep + "; "
                + sleep + " 300 & " + sleep + " 301 & "
                + ": > ready; wait";
    }

    private void awaitReady(SandboxCli.Started started) {
        started.awaitFile(sandbox.project("ready"), STARTUP);
    }

    /** Both sleeps of {@link #longRunning} run, seen from the host: what must be gone after the signal. */
    private static void assertSleepsVisible(String marker) {
        long deadline = System.nanoTime() + STARTUP.toNanos();
        List<String> found = SandboxCli.hostProcessesWith(marker);
        while (!bothSleeps(found, marker) && System.nanoTime() < deadline) {
            pause(50);
            found = SandboxCli.hostProcessesWith(marker);
        }
        assertThat(bothSleeps(found, marker)).as("both sleeps among the host processes with %s in their"
                + " command line: %s", marker, found).isTrue();
    }

    private static boolean bothSleeps(List<String> processes, String marker) {
        return processes.stream().anyMatch(p -> p.endsWith(": /tmp/" + marker + " 300"))
                && processes.stream().anyMatch(p -> p.endsWith(": /tmp/" + marker + " 301"));
    }

    /** Once agent-sandbox has exited, every process of its sandbox is gone, almost at once. */
    private static void assertNoneLeft(String marker) {
        SandboxCli.awaitNoHostProcessWith(marker, Duration.ofSeconds(3), "after agent-sandbox exited");
    }

    private static String marker() {
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        return "e2e-sleep-" + HexFormat.of().formatHex(random);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    // ------------------------------------------------------------------ refusals

    @Test
    void Missing_Bwrap_Is_Refused_With_An_Install_Hint() {
        sandbox.command("--", "true").env("PATH", "/nonexistent").run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains("bwrap not found", "install bubblewrap", "apt-get install bubblewrap");

        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    /**
     * trust while a sandbox that can write the project config runs: refused (the sandbox
     * could swap the file between the review and the record); once that run has ended, the
     * file is recorded.
     */
    @Test
    void Trust_Waits_Until_No_Sandbox_That_Can_Write_The_Config_Runs() throws Exception {
        Path ready = sandbox.project("ready");
        SandboxCli.Started run = sandbox.command("--network=false", "--", "sh", "-c", "touch ready; sleep 30").start();
        run.awaitFile(ready, java.time.Duration.ofSeconds(30));
        sandbox.write(".agent-sandbox.json", "{\"hostPorts\": [5432]}");
        sandbox.run("trust").exitsWith(1).stderrContains("can be written by a sandbox running now", "once that run has"
                + " ended");
        run.signal("TERM");
        run.waitFor(java.time.Duration.ofSeconds(30));
        sandbox.run("trust").succeeds().stdoutContains("trusted ");
    }

    /**
     * An earlier run swapped a directory of the project for a link to ~/.config; the user's
     * shell cds through it (its PWD names the link) and starts the next run: refused with one
     * line and nothing ran, ~/.config unchanged; started by the directory's own path, it runs.
     */
    @Test
    void A_Working_Directory_Reached_Through_A_Planted_Link_Into_The_Home_Is_Refused() throws IOException {
        Path config = sandbox.mkdirs(sandbox.home(".config"));
        sandbox.mkdirs("packages");
        Path link = sandbox.project("packages/web");
        Files.createSymbolicLink(link, Path.of("../../home/.config"));
        sandbox.chown(link);
        Result refused = sandbox.command("--", "sh", "-c", "echo x > planted").cwd(config).env("PWD", link.toString())
                .run().exitsWith(1).stdoutIsEmpty();
        refused.failsWithOneLineError().stderrContains("is reached through the link " + link, "cd -P .");
        assertThat(config.resolve("planted")).doesNotExist();
        sandbox.command("--", "true").cwd(config).env("PWD", config.toString()).run().succeeds();
    }

    @Test
    void Bwrap_That_Cannot_Create_A_Sandbox_Gives_One_Error_Line_And_Leaves_No_Runtime_Dir() throws IOException {
        Path fakeBin = sandbox.systemProgram("fake-bin", "bwrap",
                "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", "rwxr-xr-x").getParent();

        Result result = sandbox.command("--", "sh", "-c", "echo should not run > ran")
                .env("PATH", fakeBin + ":" + SandboxCli.PATH)
                .run()
                .exitsWith(1)
                .stdoutIsEmpty();

        // one line of agent-sandbox's own that quotes bwrap; bwrap's raw line does not also appear
        result.failsWithOneLineError()
                .stderrContains("bwrap cannot create a sandbox (bwrap: No permissions to create new namespace)");
        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Missing_Home_Directory_Is_Refused_Naming_HOME_And_Base() {
        Path missing = sandbox.world().resolve("no-such-home");

        sandbox.command("--", "sh", "-c", "echo should not run > ran").env("HOME", missing.toString()).run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains(missing.toString(), "HOME", "@base");

        assertThat(sandbox.project("ran")).doesNotExist();
    }

    @Test
    void Missing_Home_Directory_Is_Accepted_When_Base_Is_Off() {
        // a policy of the user's own (-c): turning @base off loosens, so a project config would need trust
        Path policy = sandbox.write(sandbox.world().resolve("policies/no-base.json"),
                "{\"filesystem\": {\"presets\": [\"!@base\"]}}");

        sandbox.command("-c", policy.toString(), "--", "echo", "ran").env("HOME", sandbox.world().resolve("no-such-home").toString()).run()
                .succeeds().stdoutIs("ran\n");
    }

    @Test
    void Working_Directory_That_A_Preset_Excludes_Is_Refused() {
        Path ssh = sandbox.mkdirs(sandbox.home(".ssh"));

        sandbox.command("--", "sh", "-c", "echo should not run > " + sandbox.project("ran")).cwd(ssh).run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains(ssh.toString(), "excluded", "@base");

        assertThat(sandbox.project("ran")).doesNotExist();
    }

    @Test
    void Working_Directory_Below_An_Excluded_Path_Is_Refused_Even_When_A_Deeper_Rule_Allows_It() {
        Path secret = sandbox.mkdirs("secret");
        Path deeper = sandbox.mkdirs("secret/deeper");

        sandbox.command("--exclude", secret.toString(), "--rw", deeper.toString(),
                        "--", "sh", "-c", "echo should not run > " + sandbox.project("ran"))
                .cwd(deeper)
                .run()
                .failsWithOneLineError()
                .stdoutIsEmpty()
                .stderrContains(deeper.toString(), "inside the excluded path " + secret);

        assertThat(sandbox.project("ran")).doesNotExist();
    }

    private static Map<String, String> parseEnv(String nulSeparated) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String entry : nulSeparated.split("\0")) {
            if (entry.isEmpty()) {
                continue;
            }
            int eq = entry.indexOf('=');
            env.put(entry.substring(0, eq), entry.substring(eq + 1));
        }
        return env;
    }
}
