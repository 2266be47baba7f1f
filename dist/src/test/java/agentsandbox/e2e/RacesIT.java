package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The race between a path's check and its mount: a default sandbox working in the same
 * project (or home) swaps a path with a symbolic link, hundreds of thousands of times a
 * second, while new runs start. Whatever the timing, a new run either runs with the
 * planned file at the planned path, or stops with one line before its command starts:
 * no read goes through the link, and no write does. Each test also proves that the
 * swapping really happened (the swapper counts its exchanges) and that runs started.
 */
class RacesIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** Swaps two names atomically (renameat2 RENAME_EXCHANGE) for a while; prints the count. */
    private static final String SWAPPER = """
            import ctypes, os, sys, time
            libc = ctypes.CDLL(None, use_errno=True)
            a, b = sys.argv[1].encode(), sys.argv[2].encode()
            open(sys.argv[3], "w").close()
            n, end = 0, time.time() + float(sys.argv[4])
            while time.time() < end and not os.path.exists(sys.argv[5]):
                if libc.renameat2(-100, a, -100, b, 2) != 0:
                    print("swap failed:", os.strerror(ctypes.get_errno())); sys.exit(1)
                n += 1
            if n % 2:
                libc.renameat2(-100, a, -100, b, 2)
            print("swaps", n)
            """;

    private static final int RUNS = 60;

    private static String[] concat(String first, String[] rest) {
        String[] out = new String[rest.length + 1];
        out[0] = first;
        System.arraycopy(rest, 0, out, 1, rest.length);
        return out;
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /**
     * Starts the swapper in a default sandbox in the project, then runs {@code probe}
     * {@link #RUNS} times from {@code dir} (a host shell entered there before the swapping
     * starts), and returns every run's output; asserts that the swapping happened.
     */
    private String race(String a, String b, String dir, String probe, boolean swapInSandbox) {
        sandbox.write("swap.py", SWAPPER);
        sandbox.chownAll();
        String[] swap = {"/usr/bin/python3", "swap.py", a, b, "swapping", "120", "stop-swapping"};
        // in a default sandbox where it can (its own read-only mounts are mount points it cannot
        // rename: there, as the same user on the host, which can do all a sandbox can and more)
        SandboxCli.Started swapper = swapInSandbox ? sandbox.command(concat("--", swap)).start()
                : sandbox.startOnHost(Map.of(), swap);
        swapper.awaitFile(sandbox.project("swapping"), Duration.ofSeconds(30));
        String loop = "cd " + quote(dir) + " || exit 9\n"
                + "for i in $(seq " + RUNS + "); do\n"
                + "  " + quote(sandbox.launcher().toString()) + " -- sh -c " + quote(probe)
                + " 2>&1; echo \"[status $?]\"\n"
                + "done\n";
        Result runs = sandbox.runOnHost(Map.of(), "sh", "-c", loop);
        sandbox.write("stop-swapping", "");
        Result swapped = swapper.waitFor(Duration.ofSeconds(60)).succeeds();
        long count = Long.parseLong(swapped.stdout().replaceAll("(?s).*swaps (\\d+).*", "$1"));
        assertThat(count).as(swapped.describe("the swapper's exchanges")).isGreaterThan(10_000);
        assertThat(runs.stdout().split("\\[status ", -1)).as(runs.describe("every run started")).hasSize(RUNS + 1);
        return runs.stdout();
    }

    @Test
    void A_Working_Directory_Swapped_For_A_Link_Is_Never_Mounted_From_The_Link() {
        Path config = sandbox.mkdirs(sandbox.home(".config"));
        sandbox.write(sandbox.home(".config/settings"), "host settings\n");
        sandbox.mkdirs("sub");
        sandbox.symlink(sandbox.project("evil"), config.toString());
        String out = race("sub", "evil", sandbox.project("sub").toString(),
                "echo planted > planted-here && pwd", true);
        assertThat(config.resolve("planted-here")).as(out).doesNotExist();
        assertThat(sandbox.read(sandbox.home(".config/settings"))).isEqualTo("host settings\n");
        assertThat(out).as("runs either ran in the project or stopped in one line")
                .doesNotContain(config.toString() + "\n[status 0]");
        for (String run : out.split("\\[status \\d+\\]\n")) {
            assertThat(run.isBlank() || run.strip().equals(sandbox.project("sub").toString())
                    || run.strip().equals(sandbox.project("evil").toString())
                    || run.strip().startsWith("agent-sandbox: ") && !run.strip().contains("\n"))
                    .as("one run's output: " + run).isTrue();
        }
    }

    @Test
    void A_Plain_Run_Checks_Its_Mounts_And_Enters_The_Checked_Directory() {
        sandbox.mkdirs("sub");
        sandbox.chownAll();
        Result run = sandbox.command("--", "sh", "-c",
                "pwd; tr '\\000' '\\n' < /run/agent-sandbox/mounts | grep -c -x -e b -e r -e e -e w")
                .cwd("sub").run().succeeds();
        List<String> lines = run.stdout().lines().toList();
        assertThat(lines.get(0)).isEqualTo(sandbox.project("sub").toString());
        assertThat(Integer.parseInt(lines.get(1))).as(run.describe("records checked")).isGreaterThan(3);
        assertThat(Files.exists(sandbox.project("sub"))).isTrue();
    }
}
