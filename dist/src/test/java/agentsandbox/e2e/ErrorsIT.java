// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every failure agent-sandbox can foresee is one line of its own on stderr, naming the
 * fix, with status 1, before bwrap runs: bwrap's raw words never appear. A failure it
 * cannot foresee (bwrap's setup) is one line of its own quoting bwrap, once. The
 * command's own stderr is untouched by any of it.
 */
class ErrorsIT {
    private static final String PROC = "/proc in the sandbox is its own process file system, which rules cannot"
            + " change (host paths there name host processes; /proc/self is agent-sandbox itself) (remove the rule)";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ foreseeable: refused before bwrap

    @Test
    void Start_In_The_Root_Directory_Is_Refused_In_One_Line_That_Says_To_Cd_Into_A_Project() {
        sandbox.command("--", "sh", "-c", "echo ran").cwd("/").run()
                .failsWithOneLineError().stdoutIsEmpty()
                .stderrIs("agent-sandbox: the working directory is /, and preset @base makes the working directory"
                        + " writable: here, the whole machine (cd into a project directory first, or name one with"
                        + " -C DIR)\n");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Start_In_The_Root_Directory_Works_Without_Base() {
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"presets\": [\"!@base\"]}}");
        sandbox.command("-c", sandbox.project(".agent-sandbox.json").toString(), "--", "sh", "-c",
                "pwd; touch /x 2>/dev/null || echo read-only").cwd("/").run()
                .succeeds().stdoutIs("/\nread-only\n").stderrIsEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--exclude | /proc/self/environ | agent-sandbox: --exclude /proc/self/environ: " + PROC,
        "--ro      | /proc/sys          | agent-sandbox: --ro /proc/sys: " + PROC,
        "--rw      | /proc/1            | agent-sandbox: --rw /proc/1: " + PROC,
        "--exclude | /proc/*/environ    | agent-sandbox: --exclude /proc/*/environ lies in /proc: " + PROC,
        "--rw      | /run               | agent-sandbox: --rw /run: /run in the sandbox is a fresh file system of its"
                + " own (holding its runtime at /run/agent-sandbox), which rules can add host paths below but not"
                + " replace (name the paths below /run that the command needs instead)",
        "--exclude | /dev               | agent-sandbox: --exclude /dev: /dev in the sandbox is a fresh file system"
                + " of its own (null, zero, random, tty, pts, shm), which rules can add host paths below but not"
                + " replace (name the paths below /dev that the command needs instead, e.g. --rw /dev/dri)",
        "--rw      | /                  | agent-sandbox: --rw /: / is the host root, read-only in every sandbox: a"
                + " rule on / itself would also cover the sandbox's own /dev, /proc and /run (name the directories"
                + " the command needs instead)",
        "--ro      | /run/agent-sandbox/x | agent-sandbox: --ro /run/agent-sandbox/x: /run/agent-sandbox is reserved"
                + " for agent-sandbox's own runtime (remove the rule)",
    })
    void Rule_On_The_Sandboxs_Own_File_Systems_Is_One_Line_Naming_The_Rule_Not_Bwraps(String flag, String path,
            String line) {
        sandbox.command(flag, path, "--", "sh", "-c", "echo ran").run()
                .failsWithOneLineError().stdoutIsEmpty().stderrIs(line + "\n").stderrDoesNotContain("bwrap");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Rule_Reaching_Proc_Through_A_Link_In_Dev_Is_Refused_Naming_Both() {
        sandbox.command("--exclude", "/dev/fd", "--", "true").run()
                .failsWithOneLineError().stderrContains("agent-sandbox: --exclude /dev/fd is a link to /proc/",
                        "/fd: /proc in the sandbox is its own process file system")
                .stderrDoesNotContain("bwrap", "Can't");
    }

    @Test
    void Rule_In_Proc_From_A_Config_File_Is_Refused_Naming_The_File_And_The_Rule() {
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"exclude\": [\"/proc/self/environ\"]}}");
        sandbox.command("--", "sh", "-c", "echo ran").run()
                .failsWithOneLineError().stdoutIsEmpty()
                .stderrContains("/.agent-sandbox.json: rule 'exclude /proc/self/environ': " + PROC + "\n")
                .stderrDoesNotContain("bwrap");
    }

    @Test
    void Rules_Below_Dev_In_Sys_And_Read_Only_Root_Still_Apply() {
        sandbox.command("--ro", "/", "--exclude", "/sys/kernel", "--ro", "/run/lock", "--ro", "/dev/shm", "--", "sh",
                "-c", "ls -A /sys/kernel | wc -l; test -d /run/lock && echo host-run-lock-shown;"
                        + " touch /dev/shm/x 2>/dev/null || echo shm-read-only").run()
                .succeeds().stdoutIs("0\nhost-run-lock-shown\nshm-read-only\n").stderrIsEmpty();
    }

    @Test
    void Mistyped_Flag_Is_One_Line_Naming_The_Flag_Meant() {
        sandbox.command("--netwrok=false", "--", "sh", "-c", "echo ran").run()
                .failsWithOneLineError().stdoutIsEmpty()
                .stderrIs("agent-sandbox: unknown flag '--netwrok=false', did you mean --network? (see agent-sandbox"
                        + " --help; to pass it to a command, put the command first or use --)\n");
    }

    @Test
    void Mistyped_Config_Key_And_Preset_Are_One_Line_Naming_The_One_Meant() {
        sandbox.write(".agent-sandbox.json", "{\"netwrok\": false}");
        sandbox.command("--", "true").run().failsWithOneLineError()
                .stderrContains(".agent-sandbox.json:1:2: unknown key \"netwrok\" (did you mean \"network\"?");
        sandbox.write(".agent-sandbox.json", "{\"filesystem\": {\"presets\": [\"!@lint/pyhton\"]}}");
        sandbox.command("--", "true").run().failsWithOneLineError()
                .stderrContains("unknown preset '!@lint/pyhton' (did you mean !@lint/python?");
    }

    // ------------------------------------------------------------------ booleans take a value only with =

    @Test
    void Bare_Boolean_Before_False_Runs_False_As_Specified_After_One_Hint_Line() {
        sandbox.command("--network", "false", "sh", "-c", "echo ran").run()
                .exitsWith(1).stdoutIsEmpty()
                .stderrIs("agent-sandbox: --network false runs the command \"false\" (a flag takes a BOOL only after"
                        + " =); did you mean --network=false?\n");
        sandbox.command("--network=false", "sh", "-c", "echo ran").run().succeeds().stdoutIs("ran\n")
                .stderrIsEmpty();
    }

    // ------------------------------------------------------------------ not foreseen: bwrap's words, once

    @Test
    void Bwrap_Setup_Failure_Is_One_Line_Of_Our_Own_Quoting_Bwrap_And_Nothing_Runs() {
        // a working directory this user can no longer enter: bwrap's chdir inside fails
        Result result = sandbox.runOnHost("sh", "-c", "mkdir locked && cd locked && chmod 000 . && exec \"$0\" -- sh"
                + " -c 'echo ran > /tmp/ran; echo ran'", sandbox.launcher().toString());
        sandbox.runOnHost("chmod", "755", sandbox.project("locked").toString()).succeeds();

        result.failsWithOneLineError().stdoutIsEmpty()
                .stderrContains("agent-sandbox: bwrap could not set up the sandbox: Can't chdir to ",
                        "/locked: Permission denied (run with --debug to see every mount and the rule behind it)\n")
                .stderrDoesNotContain("bwrap: ", "install bubblewrap");
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Commands_Own_Stderr_And_Status_1_Pass_Through_Untouched() {
        sandbox.command("--", "sh", "-c", "echo own message >&2; exit 1").run()
                .exitsWith(1).stdoutIsEmpty().stderrIs("own message\n");
        sandbox.command("--", "sh", "-c", "echo 'bwrap: looks like bwrap' >&2; exit 1").run()
                .exitsWith(1).stderrIs("bwrap: looks like bwrap\n");
    }

    @Test
    void Commands_Stderr_Is_The_Callers_Terminal_Unbuffered_And_In_Order() {
        Result r = sandbox.command("--", "sh", "-c", "test -t 2 && echo err-is-tty >&2; echo one >&2; echo two;"
                + " echo three >&2; env | grep -c AGENT_SANDBOX_STDERR_FD; ls /proc/self/fd | wc -l").runInTerminal();
        r.succeeds();
        // 0, 1, 2 and ls's own directory: no descriptor of agent-sandbox's reaches the command.
        // script, its stdin at its end while the terminal is raw (the relay's), types a NUL
        // into it, which the sandbox's terminal echoes as ^@, as it would a key
        assertThat(r.stdout().replace("^@", "")).isEqualTo("err-is-tty\none\ntwo\nthree\n0\n4\n");
    }

    @Test
    void Command_Not_Found_Inside_Is_Still_Reported_By_The_Sandbox_In_One_Line() {
        List<String> lines = sandbox.command("--", "no-such-command-here").run().exitsWith(1).stderr().lines()
                .toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.getFirst()).startsWith("agent-sandbox: no-such-command-here: command not found");
    }
}
