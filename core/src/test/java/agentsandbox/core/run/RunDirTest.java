// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Plan;
import agentsandbox.core.SandboxException;
import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a killed run leaves in the temp dir, and how the next run tells it from what
 * other runs still use. The processes are real ({@code /proc}); where a process state
 * cannot be arranged, a directory laid out like {@code /proc} stands in.
 */
class RunDirTest {
    /** Above any pid_max the kernel allows (2^22): never a running process. */
    private static final long NO_SUCH_PID = Integer.MAX_VALUE;

    @TempDir
    Path tmp;

    private int uid;
    private StaleRuns.Owner self;

    @BeforeEach
    void identify() throws IOException {
        uid = (Integer) Files.getAttribute(tmp, "unix:uid");
        self = StaleRuns.Owner.current();
        assertThat(self).as("this process as /proc shows it").isNotNull();
    }

    /** A run directory as a run leaves it: owner record, stand-in file, guard socket, a /tmp with things in it. */
    private Path runtime(String hex, String owner) throws IOException {
        Path dir = Files.createDirectory(tmp.resolve(hex),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        if (owner != null) {
            Files.writeString(dir.resolve("owner"), owner);
        }
        Files.createFile(dir.resolve("hidden"), PosixFilePermissions.asFileAttribute(java.util.Set.of()));
        Path guard = Files.createDirectory(dir.resolve("guard"));
        Path tmpDir = Files.createDirectories(dir.resolve("tmp/build/deep"));
        Files.writeString(tmpDir.resolve("out.o"), "object");
        Files.createSymbolicLink(dir.resolve("tmp/home"), Path.of("/"));
        try (ServerSocketChannel socket = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            socket.bind(UnixDomainSocketAddress.of(guard.resolve("socket")));
        }
        return dir;
    }

    private String deadOwner() {
        return new StaleRuns.Owner(NO_SUCH_PID, 12345, self.pidNs()).format();
    }

    private int removeStale() {
        return StaleRuns.removeStale(tmp, uid, null);
    }

    @Test
    void Removes_The_Directory_Of_A_Run_Whose_Process_Is_Gone() throws IOException {
        runtime("00112233aabbccdd", deadOwner());

        assertThat(removeStale()).isEqualTo(1);
        assertThat(tmp).isEmptyDirectory();
    }

    @Test
    void Keeps_The_Directory_Of_A_Run_That_Still_Runs() throws IOException {
        Path live = runtime("00112233aabbccdd", self.format());

        assertThat(removeStale()).isZero();
        assertThat(live.resolve("owner")).exists();
        assertThat(live.resolve("guard/socket")).exists();
    }

    @Test
    void A_Reused_Pid_Does_Not_Pass_For_The_Owner() throws IOException {
        runtime("00112233aabbccdd", new StaleRuns.Owner(self.pid(), self.start() + 1, self.pidNs()).format());

        assertThat(removeStale()).isEqualTo(1);
        assertThat(tmp).isEmptyDirectory();
    }

    @Test
    void Owner_In_Another_Pid_Namespace_Is_Left_Alone() throws IOException {
        Path other = runtime("00112233aabbccdd", new StaleRuns.Owner(NO_SUCH_PID, 1, "pid:[1]").format());

        assertThat(removeStale()).isZero();
        assertThat(other.resolve("owner")).exists();
    }

    @Test
    void Directory_Without_A_Readable_Owner_Record_Is_Left_Alone_While_Fresh() throws IOException {
        Path starting = runtime("00112233aabbccdd", null); // a run between mkdir and writing its owner
        Path garbled = runtime("00112233aabbccde", "not an owner\n");
        Path ownerDir = runtime("00112233aabbccdf", null);
        Files.createDirectory(ownerDir.resolve("owner"));

        assertThat(removeStale()).isZero();
        assertThat(starting.resolve("hidden")).exists();
        assertThat(garbled.resolve("owner")).exists();
        assertThat(ownerDir.resolve("owner")).isDirectory();
    }

    @Test
    void Directory_Without_A_Readable_Owner_Record_Is_Swept_Once_Nothing_Changed_It_For_A_While()
            throws IOException {
        // runs killed between making the directory and writing the record (or during its write)
        Path starting = runtime("00112233aabbccdd", null);
        Path cut = runtime("00112233aabbccde", "12345 67");
        Path fresh = runtime("00112233aabbccdf", null);
        java.nio.file.attribute.FileTime before = java.nio.file.attribute.FileTime.fromMillis(
                System.currentTimeMillis() - StaleRuns.OWNERLESS_MILLIS - 60_000);
        Files.setLastModifiedTime(starting, before);
        Files.setLastModifiedTime(cut, before);

        assertThat(removeStale()).isEqualTo(2);
        assertThat(starting).doesNotExist();
        assertThat(cut).doesNotExist();
        assertThat(fresh.resolve("hidden")).as("a run that may still be writing its record").exists();
    }

    @Test
    void Removes_Whatever_The_Sandbox_Left_In_Its_Tmp_Even_Unwritable_Directories() throws IOException {
        Path run = runtime("00112233aabbccdd", deadOwner());
        Path locked = Files.createDirectories(run.resolve("tmp/locked/inner"));
        Files.writeString(locked.resolve("file"), "x");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("r-x------"));
        Files.setPosixFilePermissions(locked.getParent(), PosixFilePermissions.fromString("--x------"));

        assertThat(removeStale()).isEqualTo(1);
        assertThat(tmp).isEmptyDirectory();
    }

    @Test
    void Removes_A_Tree_Far_Deeper_Than_It_Holds_Directories_Open() throws IOException {
        Path run = runtime("00112233aabbccdd", deadOwner());
        int depth = SafeRemoval.MAX_DEPTH * 10 + 7; // its path far longer than PATH_MAX, too
        Path chain = deepChain(run.resolve("tmp"), depth);
        assertThat(chain.getFileName().toString()).isEqualTo("d");

        assertThat(removeStale()).isEqualTo(1);
        assertThat(tmp).isEmptyDirectory();
    }

    /**
     * {@code depth} nested directories {@code d} in {@code parent}, built from the bottom up,
     * a short chain at a time, so that no path used is long.
     */
    private Path deepChain(Path parent, int depth) throws IOException {
        Path work = Files.createDirectory(tmp.resolve("build"));
        Path built = null; // the chain so far, at work/built
        int made = 0;
        while (made < depth) {
            int n = Math.min(50, depth - made);
            Path step = work.resolve("step");
            Path deepest = step;
            Files.createDirectory(step);
            for (int i = 1; i < n; i++) {
                deepest = Files.createDirectory(deepest.resolve("d"));
            }
            if (built != null) {
                Files.move(built, deepest.resolve("d"));
            }
            built = Files.move(step, work.resolve("built"));
            made += n;
        }
        Path placed = Files.move(built, parent.resolve("d"));
        Files.delete(work);
        return placed;
    }

    /**
     * The cases the launcher's remove_tree is tested with too (launcher/test/launcher_test.c,
     * test_remove_tree), the two removals being the same one in two languages: links out (to a
     * file and a directory that must survive), directories without rights, nesting; all of it
     * goes and nothing else; a second removal finds nothing and succeeds; a link as the tree
     * itself is removed, not followed. The tree far deeper than a removal holds directories
     * open is {@link #Removes_A_Tree_Far_Deeper_Than_It_Holds_Directories_Open} here.
     */
    @Test
    void Removes_A_Tree_As_The_Launcher_Does() throws IOException {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Path kept = Files.writeString(outside.resolve("kept"), "x");
        Path run = Files.createDirectory(tmp.resolve("run"));
        Files.writeString(run.resolve("file"), "x");
        Files.createSymbolicLink(run.resolve("to-dir"), outside);
        Files.createSymbolicLink(run.resolve("to-file"), kept);
        Path b = Files.createDirectories(run.resolve("a/b"));
        Files.writeString(b.resolve("deep"), "x");
        Files.setPosixFilePermissions(b, java.util.Set.of());
        Files.setPosixFilePermissions(b.getParent(), java.util.Set.of());

        assertThat(SafeRemoval.removeTree(tmp, Path.of("run"))).isTrue();
        assertThat(run).doesNotExist();
        assertThat(kept).hasContent("x");
        assertThat(SafeRemoval.removeTree(tmp, Path.of("run"))).as("already gone").isTrue();
        Path link = Files.createSymbolicLink(tmp.resolve("link"), outside);
        assertThat(SafeRemoval.removeTree(tmp, Path.of("link"))).isTrue();
        assertThat(link).doesNotExist();
        assertThat(kept).hasContent("x");
    }

    @Test
    void Never_Follows_A_Symbolic_Link() throws IOException {
        // a runtime-looking directory elsewhere, reached through a link with a runtime name
        Path elsewhere = Files.createDirectories(tmp.resolve("elsewhere"));
        Path target = runtime("ffffffffffffffff", deadOwner());
        Path moved = Files.move(target, elsewhere.resolve("target"));
        Path link = Files.createSymbolicLink(tmp.resolve("00112233aabbccdd"), moved);
        // links inside a runtime directory, in place of its files
        Path outsideFile = Files.writeString(elsewhere.resolve("precious"), "precious");
        Path outsideDir = Files.createDirectories(elsewhere.resolve("dir"));
        Files.writeString(outsideDir.resolve("socket"), "precious too");
        Path hiddenLink = runtime("00112233aabbccde", deadOwner());
        Files.delete(hiddenLink.resolve("hidden"));
        Files.createSymbolicLink(hiddenLink.resolve("hidden"), outsideFile);
        Path guardLink = runtime("00112233aabbccdf", deadOwner());
        Files.delete(guardLink.resolve("guard/socket"));
        Files.delete(guardLink.resolve("guard"));
        Files.createSymbolicLink(guardLink.resolve("guard"), outsideDir);

        // the runs with links in them are removed (the links unlinked), the link with a run's name is no run
        assertThat(removeStale()).isEqualTo(2);
        assertThat(link).isSymbolicLink();
        assertThat(moved.resolve("owner")).exists();
        assertThat(outsideFile).hasContent("precious");
        assertThat(outsideDir.resolve("socket")).hasContent("precious too");
        assertThat(hiddenLink).doesNotExist();
        assertThat(guardLink).doesNotExist();
        assertThat(Path.of("/etc/passwd")).exists();
    }

    @Test
    void Only_Exact_Run_Names_Count() throws IOException {
        List<String> others = List.of("agent-sandbox-1234567890abcdef", "0011223344556677ff",
                "00112233AABBCCDD", "001122", "x00112233aabbccdd");
        for (String name : others) {
            Path dir = Files.createDirectory(tmp.resolve(name));
            Files.writeString(dir.resolve("owner"), deadOwner());
        }
        Files.writeString(tmp.resolve("0011223344556677"), deadOwner());

        assertThat(removeStale()).isZero();
        for (String name : others) {
            assertThat(tmp.resolve(name).resolve("owner")).exists();
        }
        assertThat(tmp.resolve("0011223344556677")).isRegularFile();
    }

    @Test
    void The_Runs_Own_Directory_Is_Left_Alone() throws IOException {
        Path dir = runtime("00112233aabbccdd", deadOwner());

        assertThat(StaleRuns.removeStale(tmp, uid, dir.getFileName().toString())).isZero();
        assertThat(dir.resolve("owner")).exists();
    }

    @Test
    void A_State_Directory_That_Is_A_Link_Or_Not_Ours_Is_Refused() throws IOException {
        Path real = Files.createDirectory(tmp.resolve("real"));
        Path link = Files.createSymbolicLink(tmp.resolve("state"), real);

        assertThatThrownBy(() -> RunDir.ensurePrivateDir(link, uid)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> RunDir.ensurePrivateDir(real, uid + 1)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("owned by uid " + uid);
    }

    @Test
    void A_State_Directory_Is_Made_With_Its_Parents_Or_Made_Owner_Only() throws IOException {
        Path made = tmp.resolve("a/b/state");
        RunDir.ensurePrivateDir(made, uid);
        assertThat(Files.getPosixFilePermissions(made)).isEqualTo(PosixFilePermissions.fromString("rwx------"));

        Path open = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        RunDir.ensurePrivateDir(open, uid);
        assertThat(Files.getPosixFilePermissions(open)).isEqualTo(PosixFilePermissions.fromString("rwx------"));

        Path file = Files.writeString(tmp.resolve("file"), "");
        assertThatThrownBy(() -> RunDir.ensurePrivateDir(file, uid)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("not a directory");
    }

    @Test
    void Close_Removes_The_Run_And_Its_Tmp_Without_Following_Links() throws IOException {
        Path outside = Files.writeString(tmp.resolve("precious"), "precious");
        RunDir run = RunDir.create(tmp.resolve("state/run/00112233aabbccdd"), tmp.resolve("sockets/00112233aabbccdd"),
                uid);
        Files.createSymbolicLink(RunLayout.tmp(run.path()).resolve("link"), outside);
        Files.createSymbolicLink(RunLayout.tmp(run.path()).resolve("up"), tmp);

        run.close();
        run.close();

        assertThat(run.path()).doesNotExist();
        assertThat(outside).hasContent("precious");
        assertThat(tmp.resolve("state/run")).isEmptyDirectory();
        assertThat(tmp.resolve("sockets")).isEmptyDirectory();
        assertThat(Files.getPosixFilePermissions(tmp.resolve("state"))).isEqualTo(
                PosixFilePermissions.fromString("rwx------"));
    }

    @Test
    void Planning_Removes_Nothing() throws IOException {
        TestWorld w = new TestWorld(Files.createDirectory(tmp.resolve("world")));
        Path stale = Files.createDirectories(RunLayout.runsDir(RunLayout.stateDir(w.env())).resolve("00112233aabbccdd"));
        Files.writeString(stale.resolve("owner"), deadOwner());

        Plan plan = w.plan();

        assertThat(stale.resolve("owner")).exists();
        assertThat(plan.runtimeDir()).doesNotExist();
    }

    @Test
    void The_Owner_Record_Names_This_Process() throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("agent-sandbox-00112233aabbccdd"));

        StaleRuns.writeOwner(dir);

        Path owner = dir.resolve("owner");
        assertThat(StaleRuns.Owner.parse(Files.readString(owner))).isEqualTo(self);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(owner))).isEqualTo("rw-------");
        assertThat(self.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(self.pidNs()).startsWith("pid:[");
        assertThat(StaleRuns.startTime(Path.of("/proc/self/stat"))).isEqualTo(self.start());
    }

    @Test
    void Owner_Record_Parsing_Rejects_Anything_Else() {
        StaleRuns.Owner o = new StaleRuns.Owner(42, 7, "pid:[4026531836]");
        assertThat(StaleRuns.Owner.parse(o.format())).isEqualTo(o);
        for (String bad : List.of("", "\n", "42 7\n", "42 7 pid:[1] extra\n", "x 7 pid:[1]\n", "42 -7 pid:[1]\n",
                "0 7 pid:[1]\n", "42 7 \n", "42  7 pid:[1]\n", "42 7 pid:[1]\n\n")) {
            assertThat(StaleRuns.Owner.parse(bad)).as("parse of %s", bad.replace("\n", "\\n")).isNull();
        }
    }

    /**
     * The owner's /proc entry decides: the same start time means it runs, whatever its
     * name holds; a zombie or another start time means it is gone.
     */
    @Test
    void Liveness_Reads_The_Start_Time_After_The_Command_Name() throws IOException {
        Path proc = Files.createDirectories(tmp.resolve("proc"));
        fakeProcess(proc, 100, "we) ird (name", "S", 5555);
        fakeProcess(proc, 101, "zombie", "Z", 5555);
        Files.createDirectories(proc.resolve("102")); // exists, stat unreadable: may be the owner
        StaleRuns.Owner me = new StaleRuns.Owner(1, 1, self.pidNs());

        assertThat(new StaleRuns.Owner(100, 5555, self.pidNs()).gone(me, proc)).isFalse();
        assertThat(new StaleRuns.Owner(100, 5556, self.pidNs()).gone(me, proc)).isTrue();
        assertThat(new StaleRuns.Owner(101, 5555, self.pidNs()).gone(me, proc)).isTrue();
        assertThat(new StaleRuns.Owner(102, 5555, self.pidNs()).gone(me, proc)).isFalse();
        assertThat(new StaleRuns.Owner(103, 5555, self.pidNs()).gone(me, proc)).isTrue();
        assertThat(new StaleRuns.Owner(103, 5555, "pid:[1]").gone(me, proc)).isFalse();
    }

    private static void fakeProcess(Path proc, long pid, String comm, String state, long start) throws IOException {
        StringBuilder stat = new StringBuilder(pid + " (" + comm + ") " + state);
        for (int field = 4; field <= 52; field++) {
            stat.append(' ').append(field == 22 ? start : field);
        }
        Path dir = Files.createDirectories(proc.resolve(Long.toString(pid)));
        Files.writeString(dir.resolve("stat"), stat.append('\n'));
    }

    @Test
    void Removing_Twice_At_Once_Is_Harmless() throws Exception {
        for (int i = 0; i < 20; i++) {
            runtime(String.format("%016x", i), deadOwner());
        }
        Thread other = Thread.ofPlatform().start(this::removeStale);
        removeStale();
        other.join();

        assertThat(tmp).isEmptyDirectory();
    }

    @Test
    void A_New_Run_Is_Named_By_Its_Random_Bytes_In_Lower_Case_Hex() {
        Path state = tmp.resolve("state");
        byte[] random = {0x00, 0x01, (byte) 0xab, (byte) 0xff, 0x7f, (byte) 0x80, 0x10, (byte) 0xc3};

        assertThat(RunLayout.newPath(state, random).getFileName().toString()).isEqualTo("0001abff7f8010c3");
        assertThat(RunLayout.newPath(state, random).getParent()).isEqualTo(RunLayout.runsDir(state));
    }
}
