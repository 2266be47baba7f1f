// SPDX-License-Identifier: Apache-2.0
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

    /**
     * Swaps two names atomically (renameat2 RENAME_EXCHANGE) for a while and prints how many
     * times. Arguments: A, what A is when missing ("dir", or a file's text), B, the target
     * of the link B is when missing, a file to create once swapping, seconds, a stop file. A
     * name that is gone (a run moved a planted settings file aside) is made again.
     */
    private static final String SWAPPER = """
            import ctypes, os, sys, time
            libc = ctypes.CDLL(None, use_errno=True)
            a, kind, b, target, ready, seconds, stop = sys.argv[1:8]
            def make():
                if not os.path.lexists(a):
                    if kind == "dir":
                        os.mkdir(a)
                    else:
                        with open(a, "w") as f: f.write(kind)
                if not os.path.lexists(b):
                    os.symlink(target, b)
            make()
            open(ready, "w").close()
            n, end = 0, time.time() + float(seconds)
            while time.time() < end and not os.path.exists(stop):
                if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:
                    if ctypes.get_errno() != 2:
                        print("swap failed:", os.strerror(ctypes.get_errno())); sys.exit(1)
                    make()
                    continue
                n += 1
            if os.path.islink(a) and not os.path.islink(b):
                libc.renameat2(-100, a.encode(), -100, b.encode(), 2)
            print("swaps", n)
            """;

    private static final int RUNS = 60;

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /**
     * Enters {@code dir} in a host shell (before any swapping: the shell then really is in
     * the directory, as a user's would be), starts the swapper in a default sandbox in the
     * project, and from that shell runs {@code probe} {@link #RUNS} times; returns every
     * run's output, and asserts that the swapping happened.
     */
    private String race(String a, String kind, String b, String target, String dir, String probe) {
        sandbox.write("swap.py", SWAPPER);
        sandbox.chownAll();
        String project = sandbox.project().toString();
        String loop = "cd " + quote(dir) + " || exit 9\n"
                + "touch " + quote(project + "/entered") + "\n"
                + "while [ ! -e " + quote(project + "/swapping") + " ]; do sleep 0.05; done\n"
                + "for i in $(seq " + RUNS + "); do\n"
                + "  " + quote(sandbox.launcher().toString()) + " -- sh -c " + quote(probe)
                + " 2>&1; echo \"[status $?]\"\n"
                + "done\n";
        SandboxCli.Started runner = sandbox.startOnHost(Map.of(), "sh", "-c", loop);
        runner.awaitFile(sandbox.project("entered"), Duration.ofSeconds(30));
        SandboxCli.Started swapper = sandbox.command("--", "/usr/bin/python3", "swap.py", a, kind, b, target,
                "swapping", "120", "stop-swapping").start();
        Result runs = runner.waitFor(Duration.ofSeconds(180));
        sandbox.write("stop-swapping", "");
        Result swapped = swapper.waitFor(Duration.ofSeconds(60)).succeeds();
        long count = Long.parseLong(swapped.stdout().replaceAll("(?s).*swaps (\\d+).*", "$1"));
        assertThat(count).as(swapped.describe("the swapper's exchanges")).isGreaterThan(10_000);
        assertThat(runs.stdout().split("\\[status ", -1)).as(runs.describe("every run started")).hasSize(RUNS + 1);
        long ran = runs.stdout().lines().filter(l -> l.equals("[status 0]")).count();
        System.out.println("race " + a + " <-> " + b + ": " + count + " swaps; of " + RUNS + " runs " + ran
                + " ran, the others stopped before their command");
        return runs.stdout();
    }

    @Test
    void A_Working_Directory_Swapped_For_A_Link_Is_Never_Mounted_From_The_Link() {
        Path config = sandbox.mkdirs(sandbox.home(".config"));
        sandbox.write(sandbox.home(".config/settings"), "host settings\n");
        sandbox.mkdirs("sub");
        String out = race("sub", "dir", "evil", config.toString(), sandbox.project("sub").toString(),
                "echo planted > planted-here && pwd");
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
    void A_Read_Only_File_Swapped_For_A_Link_To_A_Key_Never_Shows_The_Key() {
        Path key = sandbox.write(sandbox.home(".ssh/id_test"), "PRIVATE-KEY\n");
        // made by the swapping sandbox itself: one it found would be a read-only mount point there
        String out = race("biome.json", "{}\n", "evil", key.toString(), sandbox.project().toString(),
                "cat biome.json; echo tampered > biome.json 2>/dev/null; true");
        // a write through the link lands, at most, in the sandbox's own empty ~/.ssh
        assertThat(out).doesNotContain("PRIVATE-KEY").contains("[status 0]");
        assertThat(sandbox.read(key)).isEqualTo("PRIVATE-KEY\n");
    }

    @Test
    void A_Watched_Cache_Setting_Swapped_For_A_Link_To_A_Key_Never_Shows_It_Or_Takes_A_Write() {
        sandbox.homesFallback(); // the fallback's watched settings (with the views, the host's file is never written)
        Path key = sandbox.write(sandbox.home(".ssh/id_test"), "PRIVATE-KEY\n");
        sandbox.mkdirs(sandbox.home(".cargo/registry"));
        Path cargo = sandbox.home(".cargo");
        String out = race(cargo.resolve("config.toml").toString(), "[build]\n", cargo.resolve("evil").toString(),
                key.toString(), sandbox.project().toString(),
                "cat ~/.cargo/config.toml; echo '[x]' >> ~/.cargo/config.toml 2>/dev/null; true");
        assertThat(out).doesNotContain("PRIVATE-KEY").contains("[build]");
        assertThat(sandbox.read(key)).isEqualTo("PRIVATE-KEY\n");
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
