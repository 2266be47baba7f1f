// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sandbox's bounds: the private /tmp's size (ENOSPC inside, nothing on the host's
 * disk), the number of processes (a fork bomb stops, also in a user namespace and a
 * sandbox made inside), the memory of one process, and one line for a bad bound.
 */
class BoundsIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** Forks children that sleep until fork fails; prints how many it got and the error. */
    static final String FORK_BOMB = """
            import errno, os, time
            kids = 0
            try:
                while kids < 100000:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                    kids += 1
                print("not stopped", kids)
            except OSError as e:
                print("stopped after", kids, errno.errorcode[e.errno])
            """;

    @Test
    void A_Full_Private_Tmp_Is_No_Space_Left_Inside_And_Nothing_On_The_Host_Disk() {
        sandbox.run("--tmp-size", "8M", "--", "sh", "-c",
                        "df -k /tmp | tail -1; fallocate -l 3G /tmp/big || echo refused;"
                                + " head -c 16M /dev/zero > /tmp/fill 2>/dev/null || echo full; ls /tmp")
                .succeeds()
                .stdoutContains("tmpfs", " 8192 ", "refused\n", "full\n", "fill\n")
                .stderrContains("No space left on device");
        // nothing of it on the host: the run's state holds no big file
        assertThat(sandbox.runOnHost("sh", "-c", "du -sk " + sandbox.home() + " | cut -f1").stdout().strip())
                .satisfies(kib -> assertThat(Long.parseLong(kib)).isLessThan(8192));
    }

    @Test
    void The_Defaults_Bound_Tmp_Processes_And_Memory() {
        Result r = sandbox.run("--", "bash", "-c", "df -k --output=size /tmp | tail -1; ulimit -u; ulimit -d")
                .succeeds();
        String[] lines = r.stdout().strip().split("\n");
        long tmpKib = Long.parseLong(lines[0].strip());
        assertThat(tmpKib).as("the private /tmp's size in KiB").isEqualTo(2L << 20);
        assertThat(lines[1]).isEqualTo("4096");
        assertThat(lines[2]).as("memory per process").isNotEqualTo("unlimited");
    }

    @Test
    void A_Fork_Bomb_Stops_At_The_Bound_Also_In_A_User_Namespace_And_A_Nested_Sandbox() {
        assertStopped(sandbox.run("--max-procs", "64", "--", "python3", "-c", FORK_BOMB));
        assertStopped(sandbox.run("--max-procs", "64", "--", "unshare", "--user", "--map-root-user", "python3", "-c",
                FORK_BOMB));
        assertStopped(sandbox.run("--max-procs", "64", "--", "/run/agent-sandbox/agent-sandbox", "--max-procs", "4096",
                "--", "python3", "-c", FORK_BOMB));
        // a bound in a config file, as the flag
        sandbox.write("bounds.json", "{\"maxProcs\": 64, \"tmpSize\": \"4M\"}");
        Result r = sandbox.run("-c", sandbox.project("bounds.json").toString(), "--", "sh", "-c",
                "df -k --output=size /tmp | tail -1; python3 -c \"$1\"", "sh", FORK_BOMB);
        r.succeeds().stdoutContains("4096\n");
        assertStopped(r);
    }

    private static void assertStopped(Result r) {
        r.succeeds();
        Matcher m = Pattern.compile("stopped after (\\d+) EAGAIN").matcher(r.stdout());
        assertThat(m.find()).as(r.describe("the fork bomb stopped by EAGAIN")).isTrue();
        assertThat(Integer.parseInt(m.group(1))).isLessThan(64);
    }

    @Test
    void A_Process_Cannot_Allocate_More_Than_The_Memory_Bound() {
        sandbox.run("--max-memory", "256M", "--", "python3", "-c",
                        "import sys\ntry:\n    b = bytearray(512 << 20)\n    print('allocated')\n"
                                + "except MemoryError:\n    print('refused')\nc = bytearray(64 << 20)\nprint('small ok')")
                .succeeds().stdoutIs("refused\nsmall ok\n");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--tmp-size|abc|expected a size",
        "--tmp-size|0|too small",
        "--tmp-size|-1|expected a size",
        "--tmp-size|100|too small",
        "--max-procs|abc|expected a whole number",
        "--max-procs|0|too few",
        "--max-procs|-1|expected a whole number",
        "--max-procs|2|too few",
        "--max-memory|1M|too small",
        "--max-memory|0|too small",
    })
    void A_Bad_Bound_Is_One_Line_And_Status_1(String flag, String value, String says) {
        sandbox.run(flag, value, "--", "sh", "-c", "echo ran")
                .failsWithOneLineError().stderrContains(flag + " " + value + ": " + says).stdoutIsEmpty();
    }

    @Test
    void A_Bad_Bound_In_A_Config_File_Is_One_Line_And_Status_1() {
        sandbox.write("bad.json", "{\"tmpSize\": \"lots\"}");
        sandbox.run("-c", sandbox.project("bad.json").toString(), "--", "sh", "-c", "echo ran")
                .failsWithOneLineError().stderrContains("tmpSize lots: expected a size").stdoutIsEmpty();
    }
}
