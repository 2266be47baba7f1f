// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the host takes from a git view's layer, with real repositories: the layer is made
 * as the overlay makes it, from the files a clone's git wrote (the overlay itself is the
 * end-to-end tests' part).
 */
class GitApplyTest {
    @TempDir
    Path dir;

    private Path host;
    private Path inside;
    private Path upper;

    @BeforeEach
    void repositories() throws Exception {
        host = Files.createDirectories(dir.resolve("host"));
        git(host, "init", "-q", "-b", "main");
        Files.writeString(host.resolve("a.txt"), "one\n");
        git(host, "add", "a.txt");
        git(host, "commit", "-q", "-m", "first");
        inside = dir.resolve("inside");
        git(dir, "clone", "-q", host.toString(), inside.toString());
        upper = Files.createDirectories(dir.resolve("upper"));
    }

    private static String git(Path in, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("git", "-c", "user.name=T", "-c", "user.email=t@t.invalid",
                "-c", "commit.gpgsign=false", "-c", "protocol.file.allow=always"));
        argv.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(in.toFile()).redirectErrorStream(true);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("git %s: %s", List.of(args), out).isZero();
        return out.strip();
    }

    /** Copies what a commit made inside (its loose objects, the branch) into the layer. */
    private String commitInside(String message) throws Exception {
        Files.writeString(inside.resolve("a.txt"), message + "\n", java.nio.file.StandardOpenOption.APPEND);
        git(inside, "commit", "-q", "-am", message);
        return syncLayer();
    }

    /** The layer as the overlay would hold it after the inside clone's git work: new objects, the branch. */
    private String syncLayer() throws Exception {
        String tip = git(inside, "rev-parse", "HEAD");
        try (Stream<Path> files = Files.walk(inside.resolve(".git/objects"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String rel = inside.resolve(".git").relativize(f).toString();
                if (Files.isRegularFile(f) && rel.matches("objects/[0-9a-f]{2}/[0-9a-f]{38}")
                        && !Files.exists(host.resolve(".git").resolve(rel))) {
                    Files.createDirectories(upper.resolve(rel).getParent());
                    Files.copy(f, upper.resolve(rel));
                }
            }
        }
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/main"), tip + "\n");
        return tip;
    }

    private List<String> apply() {
        return new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString())).apply();
    }

    /**
     * The refs the sandbox's first program records of {@code gitDir} when the view is
     * mounted (launcher/src/git_snapshot.c), in its format: each loose ref's name and
     * content, NUL-ended, and packed-refs as it is.
     */
    /** The sandbox's packed-refs with main at {@code tip} and no other ref: every other packed ref deleted inside. */
    private void packedMainOnly(String tip) throws IOException {
        Files.writeString(upper.resolve("packed-refs"), "# pack-refs with: peeled fully-peeled sorted \n" + tip
                + " refs/heads/main\n");
    }

    /** An apply as a run makes one: the refs its view started from are the host's now. */
    private GitApply viewApply() throws IOException {
        return new GitApply(host.resolve(".git"), base(host.resolve(".git")), upper,
                Map.of("PATH", System.getenv("PATH"), "HOME", dir.toString()), null);
    }

    private BaseRefs base(Path gitDir) throws IOException {
        return base(gitDir, "layer");
    }

    /** The refs a view of {@code gitDir} starts from now, as a run's first program records them in {@code name}. */
    private BaseRefs base(Path gitDir, String name) throws IOException {
        Path layer = Files.createDirectories(dir.resolve(name));
        java.io.ByteArrayOutputStream loose = new java.io.ByteArrayOutputStream();
        try (Stream<Path> files = Files.walk(gitDir.resolve("refs"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        && !f.getFileName().toString().endsWith(".lock")) {
                    loose.writeBytes(gitDir.relativize(f).toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
                    loose.write(0);
                    loose.writeBytes(Files.readAllBytes(f));
                    loose.write(0);
                }
            }
        }
        Files.write(layer.resolve(BaseRefs.LOOSE), loose.toByteArray());
        if (Files.exists(gitDir.resolve("packed-refs"))) {
            Files.copy(gitDir.resolve("packed-refs"), layer.resolve(BaseRefs.PACKED));
        }
        return BaseRefs.in(layer);
    }

    @Test
    void A_Commit_Made_Inside_Moves_The_Host_Branch_Forward() throws Exception {
        String tip = commitInside("second");
        assertThat(apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        git(host, "fsck", "--strict");
    }

    /**
     * The branch is written as git's files backend writes it (the host's git is not started
     * for it): its lock, its reflog and HEAD's, each entry naming agent-sandbox; git reads
     * them all back, and fsck finds nothing.
     */
    @Test
    void A_Branch_Taken_Is_Written_As_Git_Writes_It() throws Exception {
        String before = git(host, "rev-parse", "main");
        String tip = commitInside("second");
        assertThat(apply()).isEmpty();
        assertThat(Files.readString(host.resolve(".git/refs/heads/main"))).isEqualTo(tip + "\n");
        assertThat(host.resolve(".git/refs/heads/main.lock")).doesNotExist();
        for (String ref : List.of("main", "HEAD")) {
            assertThat(git(host, "reflog", "show", "-1", "--format=%H %gn <%ge> %gs", ref))
                    .isEqualTo(tip + " agent-sandbox <agent-sandbox> agent-sandbox: from the sandbox");
        }
        assertThat(Files.readString(host.resolve(".git/logs/refs/heads/main"))).contains(before + " " + tip + " ");
        git(host, "fsck", "--strict");
    }

    /** HEAD's reflog a link (or a reflog a directory): nothing is written through it, and no entry stands for a move not made. */
    @Test
    void A_Reflog_That_Is_No_Plain_File_Gets_No_Entry_And_The_Branch_Stays() throws Exception {
        String before = git(host, "rev-parse", "main");
        Path elsewhere = Files.writeString(dir.resolve("elsewhere"), "");
        Files.delete(host.resolve(".git/logs/HEAD"));
        Files.createSymbolicLink(host.resolve(".git/logs/HEAD"), elsewhere);
        long mainLog = Files.size(host.resolve(".git/logs/refs/heads/main"));
        String tip = commitInside("second");
        assertThat(apply()).singleElement().asString().contains("refs/heads/main was not taken")
                .contains("not a plain file");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(before);
        assertThat(Files.readString(elsewhere)).isEmpty();
        assertThat(Files.size(host.resolve(".git/logs/refs/heads/main"))).isEqualTo(mainLog);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/main")).isEqualTo(tip);
    }

    @Test
    void A_Packed_Branch_And_A_New_Branch_In_A_New_Directory_Are_Written_Too() throws Exception {
        git(host, "pack-refs", "--all");
        assertThat(host.resolve(".git/refs/heads/main")).doesNotExist();
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/heads/feature"));
        Files.writeString(upper.resolve("refs/heads/feature/x"), tip + "\n");
        assertThat(apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main", "feature/x")).isEqualTo(tip + "\n" + tip);
        assertThat(git(host, "reflog", "show", "-1", "--format=%gs", "feature/x"))
                .isEqualTo("agent-sandbox: from the sandbox");
        git(host, "fsck", "--strict");
    }

    /** Where a ref is in the way (git's directory-file conflict), the host's git says so, and nothing is written. */
    @Test
    void A_New_Ref_Below_A_Branch_Is_Left_To_Git_Which_Refuses_It() throws Exception {
        git(host, "branch", "topic");
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/heads/topic"));
        Files.writeString(upper.resolve("refs/heads/topic/x"), tip + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("refs/heads/topic/x was not taken"));
        assertThat(host.resolve(".git/refs/heads/topic")).isRegularFile();
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads/topic/")).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
    }

    /** A shared repository's refs are group-writable: written by the host's git, which knows how. */
    @Test
    void A_Shared_Repository_s_Branch_Is_Written_By_The_Host_s_Git() throws Exception {
        git(host, "config", "core.sharedRepository", "group");
        String tip = commitInside("second");
        assertThat(apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        assertThat(Files.getPosixFilePermissions(host.resolve(".git/refs/heads/main")))
                .contains(java.nio.file.attribute.PosixFilePermission.GROUP_WRITE);
        assertThat(git(host, "reflog", "show", "-1", "--format=%gn <%ge> %gs", "main"))
                .isEqualTo("agent-sandbox <agent-sandbox> agent-sandbox: from the sandbox");
    }

    /**
     * A run directory of this process (alive) in {@code runs}, as another run of the user's
     * writes one, that mounts {@code writable} read-write and has no view.
     */
    private static void otherRun(Path runs, String name, Path writable) throws IOException {
        // made whole beside the runs, then moved in: the apply never reads it half made
        Path run = Files.createDirectories(runs.resolveSibling("making-" + name));
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        String pid = Files.readSymbolicLink(Path.of("/proc/self")).toString();
        Files.writeString(run.resolve("owner"), pid + " " + fields[22 - 3] + " "
                + Files.readSymbolicLink(Path.of("/proc/self/ns/pid")) + "\n");
        java.io.ByteArrayOutputStream checks = new java.io.ByteArrayOutputStream();
        for (String f : new String[] {"b", writable.toString(), writable.toString()}) {
            checks.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            checks.write(0);
        }
        Files.write(run.resolve("mount-checks"), checks.toByteArray());
        Files.move(run, runs.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * Another run of the user's that can write the git dir without a view: nothing is applied
     * while it runs, and one that begins while an apply writes stops that apply within the
     * next write (the other runs are looked at again before a write when the last look is
     * older than 20 ms).
     */
    @Test
    void Another_Run_That_Can_Write_The_Git_Dir_Stops_The_Apply() throws Exception {
        String tip = commitInside("second");
        Path runs = Files.createDirectories(dir.resolve("runs"));
        GitApply apply = viewApply();
        apply.watchOtherRuns(runs, "f".repeat(16));
        otherRun(runs, "a".repeat(16), dir);
        assertThat(apply.apply(false)).isEmpty();
        assertThat(apply.incomplete()).isTrue();
        assertThat(apply.apply()).singleElement().asString().contains("were not applied: another sandbox running now"
                + " (pid ");
        assertThat(git(host, "rev-parse", "main")).isNotEqualTo(tip);
        deleteTree(runs.resolve("a".repeat(16)));

        // 400 new branches: the other run begins once the first is on the host
        for (int i = 0; i < 400; i++) {
            Files.writeString(upper.resolve("refs/heads/branch-" + i), tip + "\n");
        }
        Thread starter = new Thread(() -> {
            try {
                while (!Files.exists(host.resolve(".git/refs/heads/main"))
                        || git(host, "rev-parse", "main").equals(tip) == false) {
                    Thread.sleep(1);
                }
                otherRun(runs, "b".repeat(16), dir);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        GitApply second = viewApply();
        second.watchOtherRuns(runs, "f".repeat(16));
        starter.start();
        List<String> said = second.apply();
        starter.join();
        assertThat(said).singleElement().asString().contains("were not all applied: another sandbox that began"
                + " meanwhile (pid ");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        int taken = git(host, "for-each-ref", "--format=%(refname)", "refs/heads/").split("\n").length;
        assertThat(taken).as("branches taken before it began").isLessThan(401);
        git(host, "fsck", "--strict");
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> all = Files.walk(p)) {
            for (Path f : (Iterable<Path>) all.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(f);
            }
        }
    }

    @Test
    void A_Move_That_Loses_Commits_Is_Kept_Aside_And_Said() throws Exception {
        String hostTip = git(host, "rev-parse", "HEAD");
        git(inside, "commit", "-q", "--amend", "-m", "rewritten");
        String rewritten = git(inside, "rev-parse", "HEAD");
        commitInside("more");
        String tip = git(inside, "rev-parse", "HEAD");
        assertThat(git(inside, "rev-parse", "HEAD~1")).isEqualTo(rewritten);

        assertThat(apply()).singleElement().asString()
                .contains("moved refs/heads/main", "the host keeps " + hostTip.substring(0, 12),
                        "refs/agent-sandbox/heads/main");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/main")).isEqualTo(tip);
    }

    /** A git of the host's holds the branch's lock at the last apply: the sandbox's commits stay on a ref. */
    @Test
    void A_Branch_Locked_On_The_Host_At_The_End_Keeps_The_Sandbox_s_Tip_Aside() throws Exception {
        String hostTip = git(host, "rev-parse", "HEAD");
        String tip = commitInside("second");
        Files.writeString(host.resolve(".git/refs/heads/main.lock"), "");
        assertThat(apply()).singleElement().asString()
                .contains("refs/heads/main was not taken", "kept at refs/agent-sandbox/heads/main");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/main")).isEqualTo(tip);
    }

    @Test
    void A_Ref_The_User_Moved_On_The_Host_Meanwhile_Wins() throws Exception {
        commitInside("inside");
        Files.writeString(host.resolve("b.txt"), "b\n");
        git(host, "add", "b.txt");
        git(host, "commit", "-q", "-m", "on the host");
        String hostTip = git(host, "rev-parse", "HEAD");
        assertThat(apply()).singleElement().asString().contains("the host keeps");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
    }

    @Test
    void Config_Hooks_Commondir_And_Other_Files_Never_Reach_The_Host() throws Exception {
        String config = Files.readString(host.resolve(".git/config"));
        Files.writeString(upper.resolve("config"), "[core]\n\tfsmonitor = touch /tmp/x\n");
        Files.createDirectories(upper.resolve("hooks"));
        Files.writeString(upper.resolve("hooks/post-checkout"), "#!/bin/sh\n");
        Files.writeString(upper.resolve("commondir"), "/tmp\n");
        Files.createDirectories(upper.resolve("info"));
        Files.writeString(upper.resolve("info/attributes"), "* filter=x\n");
        Files.writeString(upper.resolve("config.worktree"), "[core]\n\thooksPath = /tmp\n");
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/..bad"), git(host, "rev-parse", "HEAD") + "\n");
        Files.createDirectories(upper.resolve("refs/other"));
        Files.writeString(upper.resolve("refs/other/x"), git(host, "rev-parse", "HEAD") + "\n");

        assertThat(apply()).isEmpty();
        assertThat(Files.readString(host.resolve(".git/config"))).isEqualTo(config);
        assertThat(host.resolve(".git/hooks/post-checkout")).doesNotExist();
        assertThat(host.resolve(".git/commondir")).doesNotExist();
        assertThat(host.resolve(".git/info/attributes")).doesNotExist();
        assertThat(host.resolve(".git/config.worktree")).doesNotExist();
        assertThat(host.resolve(".git/refs/other/x")).doesNotExist();
    }

    @Test
    void A_Corrupt_Object_Applies_No_Ref_And_Is_Said_In_One_Line() throws Exception {
        String hostTip = git(host, "rev-parse", "HEAD");
        String tip = commitInside("second");
        Path object = upper.resolve("objects").resolve(tip.substring(0, 2)).resolve(tip.substring(2));
        Files.write(object, new byte[] {1, 2, 3});
        assertThat(apply()).singleElement().asString().contains("the sandbox's object", "nothing was applied");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
    }

    @Test
    void A_Ref_To_An_Object_The_Host_Lacks_Is_Not_Applied() throws Exception {
        String hostTip = git(host, "rev-parse", "HEAD");
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/main"), "1234567890123456789012345678901234567890\n");
        assertThat(apply()).singleElement().asString().contains("refs/heads/main");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
    }

    @Test
    void Objects_Are_Checked_Against_Their_Names() throws Exception {
        Files.writeString(inside.resolve("c.txt"), "content\n");
        String id = git(inside, "hash-object", "-w", "c.txt");
        byte[] deflated = Files.readAllBytes(inside.resolve(".git/objects").resolve(id.substring(0, 2))
                .resolve(id.substring(2)));
        assertThat(GitApply.checkObject(deflated, id, false)).isNull();
        assertThat(GitApply.checkObject(deflated, "0" + id.substring(1), false)).contains("not what its name says");
        assertThat(GitApply.checkObject(java.util.Arrays.copyOf(deflated, deflated.length / 2), id, false))
                .isNotNull();
        assertThat(GitApply.checkObject("garbage".getBytes(StandardCharsets.US_ASCII), id, false)).isNotNull();
        byte[] trailing = java.util.Arrays.copyOf(deflated, deflated.length + 4);
        assertThat(GitApply.checkObject(trailing, id, false)).as("git calls it corrupt")
                .contains("bytes after its compressed data");
    }

    @Test
    void An_Index_Is_Taken_Only_Whole() throws IOException {
        byte[] index = Files.readAllBytes(host.resolve(".git/index"));
        assertThat(GitApply.checkIndex(index, false)).isNull();
        byte[] cut = java.util.Arrays.copyOf(index, index.length - 3);
        assertThat(GitApply.checkIndex(cut, false)).isNotNull();
        byte[] changed = index.clone();
        changed[20] ^= 1;
        assertThat(GitApply.checkIndex(changed, false)).contains("checksum");
        assertThat(GitApply.checkIndex("DIRX".getBytes(StandardCharsets.US_ASCII), false)).isNotNull();
    }

    /**
     * An index whose entry names a path in the git dir or outside the work tree (a hook, the
     * user's ~/.bashrc) is never taken, though its checksum is right: the user's next
     * {@code git checkout -- .} would write there.
     */
    @Test
    void An_Index_With_A_Path_Git_Never_Writes_Is_Not_Taken() throws Exception {
        Files.createDirectories(upper);
        byte[] hostIndex = Files.readAllBytes(host.resolve(".git/index"));
        for (String name : new String[] {"../ab", ".git/", ".GIT/", "/a.tx", ".git.", "git~1"}) {
            byte[] index = hostIndex.clone();
            // the one entry, a.txt: its name right after 62 bytes of stat data, hash and flags
            byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(bytes, 0, index, 12 + 62, 5);
            byte[] sum = java.security.MessageDigest.getInstance("SHA-1").digest(
                    java.util.Arrays.copyOf(index, index.length - 20));
            System.arraycopy(sum, 0, index, index.length - 20, 20);
            Files.write(upper.resolve("index"), index);
            GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                    "HOME", dir.toString()));
            assertThat(apply.apply()).as(name).singleElement().asString().contains("a path git never writes there");
            assertThat(Files.readAllBytes(host.resolve(".git/index"))).as(name).isEqualTo(hostIndex);
        }
    }

    @Test
    void Only_Branches_Tags_Remotes_Notes_And_The_Stash_Are_Taken() {
        assertThat(GitApply.applicable("refs/heads/feature/x")).isTrue();
        assertThat(GitApply.applicable("refs/tags/v1")).isTrue();
        assertThat(GitApply.applicable("refs/remotes/origin/main")).isTrue();
        assertThat(GitApply.applicable("refs/stash")).isTrue();
        assertThat(GitApply.applicable("refs/agent-sandbox/heads/main")).isFalse();
        assertThat(GitApply.applicable("refs/heads/../../config")).isFalse();
        assertThat(GitApply.applicable("refs/heads/x.lock")).isFalse();
        assertThat(GitApply.applicable("refs/heads/" + "d/".repeat(61) + "x")).isTrue();
        assertThat(GitApply.applicable("refs/heads/" + "d/".repeat(62) + "x")).as("65 components").isFalse();
        assertThat(GitApply.applicable("refs/heads/" + "x".repeat(1014))).isFalse();
        assertThat(GitApply.applicable("refs/heads/a b")).isFalse();
        assertThat(GitApply.applicable("HEAD")).isFalse();
        assertThat(GitApply.applicable("refs/heads/evil.")).as("a name ending in a dot").isFalse();
        assertThat(GitApply.applicable("refs/tags/v1.")).isFalse();
        assertThat(GitApply.applicable("refs/heads/caf\u00e9")).isTrue();
    }

    /** Every name the host takes is one git itself takes ({@code git check-ref-format}), of tricky names at random. */
    @Test
    void Every_Ref_Name_Taken_Is_One_Git_Takes() throws Exception {
        java.util.Random random = new java.util.Random(31);
        String[] pieces = {"a", "b", ".", "..", "/", "//", "@", "@{", "{", "lock", ".lock", "-", "~", "^", ":", "?",
            "*", "[", "\\", " ", "\t", "\u00e9", "x.", "HEAD", "refs"};
        int taken = 0;
        for (int i = 0; i < 300; i++) {
            StringBuilder name = new StringBuilder(List.of("refs/heads/", "refs/tags/", "refs/remotes/o/", "refs/notes/")
                    .get(random.nextInt(4)));
            for (int n = 1 + random.nextInt(4); n > 0; n--) {
                name.append(pieces[random.nextInt(pieces.length)]);
            }
            if (GitApply.applicable(name.toString())) {
                taken++;
                ProcessBuilder pb = new ProcessBuilder("git", "check-ref-format", name.toString())
                        .redirectErrorStream(true);
                Process p = pb.start();
                p.getInputStream().readAllBytes();
                assertThat(p.waitFor()).as("git check-ref-format %s", name).isZero();
            }
        }
        assertThat(taken).as("some were taken").isGreaterThan(20);
    }

    @Test
    void An_Empty_Layer_Changes_Nothing() throws Exception {
        String before = git(host, "for-each-ref");
        assertThat(apply()).isEmpty();
        assertThat(git(host, "for-each-ref")).isEqualTo(before);
    }

    @Test
    void A_Commit_Reaches_The_Host_While_The_Sandbox_Still_Runs() throws Exception {
        LiveApply live = new LiveApply(List.of(new GitApply(host.resolve(".git"), upper,
                Map.of("PATH", System.getenv("PATH"), "HOME", dir.toString()))));
        live.start();
        String tip = commitInside("live");
        long end = System.nanoTime() + java.time.Duration.ofSeconds(30).toNanos();
        while (!git(host, "rev-parse", "main").equals(tip) && System.nanoTime() < end) {
            Thread.sleep(100);
        }
        assertThat(git(host, "rev-parse", "main")).as("applied before the end").isEqualTo(tip);
        assertThat(live.finish()).isEmpty();
    }

    @Test
    void A_Commit_Taken_In_Passing_May_Be_Amended_And_Stays_Recoverable() throws Exception {
        String hostTip = git(host, "rev-parse", "HEAD");
        GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));
        String first = commitInside("second");
        assertThat(apply.apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(first);
        git(inside, "commit", "-q", "--amend", "-m", "second, amended");
        String amended = syncLayer();

        assertThat(apply.apply()).singleElement().asString()
                .contains("the sandbox rewrote refs/heads/main after the host had taken it")
                .contains("refs/agent-sandbox/heads/main");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(amended);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/main")).isEqualTo(first);
        // what the host had before the run is never lost
        git(inside, "reset", "-q", "--soft", "HEAD~1");
        git(inside, "commit", "-q", "--amend", "-m", "first, rewritten");
        syncLayer();
        assertThat(apply.apply()).singleElement().asString().contains("the host keeps");
        assertThat(git(host, "merge-base", "--is-ancestor", hostTip, "main")).isEmpty();
    }

    @Test
    void A_Ref_To_An_Object_Not_There_Yet_Waits_Unsaid_While_The_Sandbox_Runs_And_Is_Said_After() throws Exception {
        String hostTip = git(host, "rev-parse", "main");
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/main"), "1234567890123456789012345678901234567890\n");
        GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));

        assertThat(apply.apply(false)).isEmpty();
        assertThat(apply.incomplete()).isTrue();
        assertThat(apply.apply()).singleElement().asString()
                .contains("points at 123456789012, an object it did not leave in its git dir: not taken");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(hostTip);
        // once git inside has written it, the next apply takes it
        String tip = commitInside("second");
        assertThat(apply.apply(false)).isEmpty();
        assertThat(apply.incomplete()).isFalse();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
    }

    @Test
    void A_Branch_Created_Taken_And_Deleted_Inside_Goes_On_The_Host_Too() throws Exception {
        // the view's lower layer is the run's copy of the git dir from before the branch: its
        // deletion inside leaves nothing in the layer, and the host still knows it gave it
        GitApply apply = viewApply();
        String tip = commitInside("second");
        Files.writeString(upper.resolve("refs/heads/topic"), tip + "\n");
        assertThat(apply.apply()).isEmpty();
        assertThat(git(host, "rev-parse", "topic")).isEqualTo(tip);
        Files.delete(upper.resolve("refs/heads/topic"));

        assertThat(apply.apply()).isEmpty();
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/topic")).isEqualTo(tip);
    }

    @Test
    void A_Pack_Made_Inside_Is_Indexed_By_The_Host_s_Git_And_Taken() throws Exception {
        Files.writeString(inside.resolve("a.txt"), "packed\n", java.nio.file.StandardOpenOption.APPEND);
        git(inside, "commit", "-q", "-am", "packed");
        git(inside, "gc", "-q");
        String tip = git(inside, "rev-parse", "HEAD");
        Path packs = Files.createDirectories(upper.resolve("objects/pack"));
        try (Stream<Path> files = Files.list(inside.resolve(".git/objects/pack"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Files.copy(f, packs.resolve(f.getFileName()));
            }
        }
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/main"), tip + "\n");
        assertThat(apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        git(host, "fsck", "--strict");
    }

    @Test
    void Links_In_The_Layer_Are_Never_Followed_Into_The_Host_s_Git_Dir() throws Exception {
        Path secret = Files.writeString(dir.resolve("secret"), "aws_secret_access_key = 0123456789abcdef\n");
        Path packs = Files.createDirectories(upper.resolve("objects/pack"));
        Files.createSymbolicLink(packs.resolve("pack-0123456789012345678901234567890123456789.pack"), secret);
        Files.createDirectories(upper.resolve("objects/ab"));
        Files.createSymbolicLink(upper.resolve("objects/ab/" + "c".repeat(38)), secret);
        Files.createDirectories(upper.resolve("logs/refs/heads"));
        Files.createSymbolicLink(upper.resolve("logs/refs/heads/main"), secret);
        String tip = commitInside("second");

        assertThat(apply()).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        try (Stream<Path> all = Files.walk(host.resolve(".git"))) {
            for (Path f : (Iterable<Path>) all::iterator) {
                if (Files.isRegularFile(f, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    assertThat(new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1)).as(f.toString())
                            .doesNotContain("aws_secret");
                }
            }
        }
    }

    @Test
    void The_Host_s_Symbolic_Refs_Are_Never_Followed_To_The_Branch_They_Name() throws Exception {
        git(host, "symbolic-ref", "refs/heads/master", "refs/heads/main");
        git(host, "update-ref", "refs/remotes/origin/main", "HEAD");
        git(host, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main");
        String main = git(host, "rev-parse", "main");
        // inside: both symbolic refs deleted, one of them replaced by a plain ref
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.createDirectories(upper.resolve("refs/remotes/origin"));
        // the overlay's mark of a deleted file (a 0/0 character device: only root makes one
        // outside an overlay; as another user the deletion is not tried, the change still is)
        new ProcessBuilder("mknod", upper.resolve("refs/heads/master").toString(), "c", "0", "0")
                .redirectErrorStream(true).start().waitFor();
        Files.writeString(upper.resolve("refs/remotes/origin/HEAD"), main + "\n");
        Files.writeString(upper.resolve("HEAD"), "ref: refs/heads/not-on-the-host\n");

        apply();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);
        assertThat(git(host, "rev-parse", "refs/remotes/origin/main")).isEqualTo(main);
        assertThat(git(host, "symbolic-ref", "refs/heads/master")).isEqualTo("refs/heads/main");
        assertThat(git(host, "symbolic-ref", "refs/remotes/origin/HEAD")).isEqualTo("refs/remotes/origin/main");
        assertThat(git(host, "symbolic-ref", "HEAD")).isEqualTo("refs/heads/main");
        git(host, "fsck");
    }

    /**
     * The apply's own walk of loose commits (the fast way to say a move loses nothing) reads
     * parents as git writes them: none for a root, two for a merge, and nothing for what is
     * not a loose commit, which it leaves to the host's git.
     */
    @Test
    void Parents_Are_Read_From_Loose_Commits_Only() throws Exception {
        Path gitDir = host.resolve(".git");
        String root = git(host, "rev-parse", "HEAD");
        assertThat(ObjectImport.looseCommitParents(gitDir, root)).isEmpty();
        git(host, "checkout", "-q", "-b", "side");
        Files.writeString(host.resolve("b.txt"), "b\n");
        git(host, "add", "b.txt");
        git(host, "commit", "-q", "-m", "side");
        String side = git(host, "rev-parse", "HEAD");
        git(host, "checkout", "-q", "main");
        Files.writeString(host.resolve("c.txt"), "c\n");
        git(host, "add", "c.txt");
        git(host, "commit", "-q", "-m", "main");
        String main = git(host, "rev-parse", "HEAD");
        git(host, "merge", "-q", "--no-edit", "side");
        String merge = git(host, "rev-parse", "HEAD");
        assertThat(ObjectImport.looseCommitParents(gitDir, merge)).containsExactly(main, side);
        assertThat(ObjectImport.looseCommitParents(gitDir, git(host, "rev-parse", "HEAD^{tree}"))).isNull();
        assertThat(ObjectImport.looseCommitParents(gitDir, "0".repeat(40))).isNull();
        git(host, "gc", "-q");
        assertThat(ObjectImport.looseCommitParents(gitDir, merge)).as("packed").isNull();
    }

    /** A tag the host had is never moved, not even forward: the sandbox's is kept beside it, and said. */
    @Test
    void A_Tag_The_Host_Had_Is_Never_Moved() throws Exception {
        git(host, "tag", "v1");
        String tagged = git(host, "rev-parse", "v1");
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/v1"), tip + "\n");
        Files.writeString(upper.resolve("refs/tags/v2"), tip + "\n");
        assertThat(apply()).singleElement().asString().contains("moved the tag v1")
                .contains("kept at refs/agent-sandbox/tags/v1");
        assertThat(git(host, "rev-parse", "v1")).isEqualTo(tagged);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/tags/v1")).isEqualTo(tip);
        assertThat(git(host, "rev-parse", "v2")).as("a new tag is taken").isEqualTo(tip);
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
    }

    /**
     * A branch deleted inside whose commits a branch this run moved holds: taken, as nothing
     * the host's branches held is lost; that branch's later rewind, which would leave them on
     * none, is not taken, and a line says so.
     */
    @Test
    void A_Deletion_Resting_On_A_Branch_This_Run_Moved_Holds_Only_While_That_Branch_Does() throws Exception {
        String first = git(host, "rev-parse", "main");
        git(host, "switch", "-q", "-c", "release");
        Files.writeString(host.resolve("r.txt"), "r\n");
        git(host, "add", "r.txt");
        git(host, "commit", "-q", "-m", "release");
        String release = git(host, "rev-parse", "release");
        git(host, "switch", "-q", "main");
        git(host, "pack-refs", "--all");
        GitApply apply = viewApply();
        // inside: main fast-forwarded onto release, then release deleted (packed-refs rewritten)
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/main"), release + "\n");
        assertThat(apply.apply(false)).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(release);
        packedMainOnly(first);
        assertThat(apply.apply(false)).isEmpty();
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
        // then main rewound inside: release's commit would be on no branch
        Files.writeString(upper.resolve("refs/heads/main"), first + "\n");
        assertThat(apply.apply()).singleElement().asString().contains("the sandbox rewrote refs/heads/main")
                .contains("the host keeps it");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(release);
    }

    /**
     * A branch deleted inside, whose commits another branch holds: taken, its tip kept aside,
     * and its reflog with it. git deletes a ref's reflog with the ref: a commit that only that
     * reflog held (the branch moved onto it, then back) would otherwise be unreachable, and
     * gone at the host's next gc.
     */
    @Test
    void A_Branch_Deleted_Inside_Keeps_Its_Reflog_With_Its_Tip() throws Exception {
        String first = git(host, "rev-parse", "main");
        git(host, "branch", "feat");
        String only = git(host, "commit-tree", "-p", "HEAD", "-m", "only in feat's reflog", "HEAD^{tree}");
        git(host, "branch", "-f", "feat", only);
        git(host, "branch", "-f", "feat", first);
        git(host, "pack-refs", "--all");
        GitApply apply = viewApply();
        packedMainOnly(first); // inside: feat deleted (packed-refs rewritten without it)
        assertThat(apply.apply()).isEmpty();
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/feat")).isEqualTo(first);
        assertThat(git(host, "rev-list", "--reflog")).contains(only);
        assertThat(git(host, "fsck", "--unreachable", "--no-progress")).doesNotContain(only);
    }

    /**
     * Two runs at once: one makes a branch at main's tip (taken), the other deletes main
     * (taken: the new branch holds its commits), then the first deletes its own branch. That
     * last deletion would leave main's commits on no branch: not taken, whoever made the branch.
     */
    @Test
    void A_Branch_A_Run_Made_Is_Not_Deleted_Where_It_Alone_Holds_What_The_Host_Had() throws Exception {
        git(host, "branch", "feature");
        Files.writeString(host.resolve("m.txt"), "m\n");
        git(host, "add", "m.txt");
        git(host, "commit", "-q", "-m", "on main only");
        String main = git(host, "rev-parse", "main");
        String feature = git(host, "rev-parse", "feature");
        GitApply first = viewApply();
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/keep"), main + "\n");
        assertThat(first.apply(false)).isEmpty();
        assertThat(git(host, "rev-parse", "keep")).isEqualTo(main);

        // the second run starts now, with main not checked out, and deletes main
        git(host, "switch", "-q", "feature");
        git(host, "pack-refs", "--all");
        Path secondUpper = Files.createDirectories(dir.resolve("second-upper"));
        GitApply second = new GitApply(host.resolve(".git"), base(host.resolve(".git"), "second-layer"), secondUpper,
                Map.of("PATH", System.getenv("PATH"), "HOME", dir.toString()), null);
        Files.writeString(secondUpper.resolve("packed-refs"), "# pack-refs with: peeled fully-peeled sorted \n"
                + feature + " refs/heads/feature\n" + main + " refs/heads/keep\n");
        assertThat(second.apply()).isEmpty();
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads"))
                .isEqualTo("refs/heads/feature\nrefs/heads/keep");

        // the first run deletes keep, the branch it made (its layer holds other files of git's still)
        Files.delete(upper.resolve("refs/heads/keep"));
        Files.writeString(upper.resolve("COMMIT_EDITMSG"), "x\n");
        assertThat(first.apply()).singleElement().asString().contains("the sandbox deleted refs/heads/keep")
                .contains("would be on none");
        assertThat(git(host, "rev-parse", "keep")).isEqualTo(main);
    }

    /**
     * A branch the host had, deleted inside where another holds its commits (taken), then
     * made again at a commit that does not hold them: not taken, as a move that loses them.
     */
    @Test
    void A_Branch_Deleted_And_Made_Again_Elsewhere_Is_Judged_Against_The_Tip_It_Had() throws Exception {
        git(host, "branch", "feature");
        String had = git(host, "rev-parse", "feature");
        git(host, "pack-refs", "--all");
        GitApply apply = viewApply();
        packedMainOnly(had);
        assertThat(apply.apply(false)).isEmpty(); // main holds its commits: the deletion is taken
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
        // made again on an unrelated root commit
        git(inside, "switch", "-q", "--orphan", "evil");
        git(inside, "commit", "-q", "--allow-empty", "-m", "evil");
        syncLayer();
        String evil = git(inside, "rev-parse", "HEAD");
        Files.writeString(upper.resolve("refs/heads/main"), had + "\n");
        Files.writeString(upper.resolve("refs/heads/feature"), evil + "\n");
        assertThat(apply.apply()).singleElement().asString().contains("the sandbox made refs/heads/feature again at")
                .contains("its tip when the sandbox deleted it: not taken");
        assertThat(git(host, "reflog", "--format=%H", "refs/agent-sandbox/heads/feature")).contains(had);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/feature")).isEqualTo(evil);
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
    }

    /** A tag the host had is never deleted either. */
    /** A reflog of the host's that is a link (to a file of the user's, say) is never appended to, by git either. */
    @Test
    void A_Reflog_That_Is_A_Link_Gets_Nothing_Through_It() throws Exception {
        Path bashrc = Files.writeString(dir.resolve("bashrc"), "# mine\n");
        Files.createDirectories(host.resolve(".git/logs/refs"));
        Files.createSymbolicLink(host.resolve(".git/logs/refs/stash"), bashrc);
        Files.writeString(inside.resolve("a.txt"), "changed\n");
        git(inside, "stash", "-q");
        String stash = git(inside, "rev-parse", "refs/stash");
        syncLayer();
        Files.writeString(upper.resolve("refs/stash"), stash + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("refs/stash").contains("was not taken"));
        assertThat(Files.readString(bashrc)).isEqualTo("# mine\n");
    }

    /**
     * A branch a rebase or a bisect under way will go back to (in the main worktree or a
     * linked one) is as checked out, and a HEAD that is a link to its branch's file
     * (core.preferSymlinkRefs) names its branch: none of these is deleted.
     */
    @Test
    void A_Branch_A_Rebase_Or_Bisect_Returns_To_Or_A_Linked_HEAD_Names_Is_Never_Deleted() throws Exception {
        String main = git(host, "rev-parse", "main");
        git(host, "branch", "feat");
        git(host, "branch", "other");
        git(host, "pack-refs", "--all");
        Files.createDirectories(host.resolve(".git/rebase-merge"));
        Files.writeString(host.resolve(".git/rebase-merge/head-name"), "refs/heads/feat\n");
        Files.writeString(host.resolve(".git/BISECT_START"), "other\n");
        GitApply apply = viewApply();
        packedMainOnly(main);
        List<String> said = apply.apply();
        assertThat(said).anySatisfy(line -> assertThat(line).contains("deleted refs/heads/feat; the host keeps it"));
        assertThat(said).anySatisfy(line -> assertThat(line).contains("deleted refs/heads/other; the host keeps it"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).contains("refs/heads/feat",
                "refs/heads/other");
    }

    @Test
    void A_Branch_A_Linked_HEAD_Names_Is_Never_Deleted() throws Exception {
        git(host, "branch", "feat");
        git(host, "pack-refs", "--all");
        String main = git(host, "rev-parse", "main");
        Files.delete(host.resolve(".git/HEAD"));
        Files.createSymbolicLink(host.resolve(".git/HEAD"), Path.of("refs/heads/feat"));
        GitApply apply = viewApply();
        Files.writeString(upper.resolve("packed-refs"), "# pack-refs with: peeled fully-peeled sorted \n" + main
                + " refs/heads/main\n");
        assertThat(apply.apply()).anySatisfy(line -> assertThat(line).contains("deleted refs/heads/feat; the host"
                + " keeps it"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).contains("refs/heads/feat");
    }

    /** The branch checked out on the host, named in UTF-8 beyond ASCII, is never deleted either. */
    @Test
    void A_Checked_Out_Branch_With_A_Name_Beyond_ASCII_Is_Never_Deleted() throws Exception {
        git(host, "switch", "-q", "-c", "caf\u00e9");
        git(host, "pack-refs", "--all");
        String main = git(host, "rev-parse", "main");
        GitApply apply = viewApply();
        packedMainOnly(main);
        assertThat(apply.apply()).anySatisfy(line -> assertThat(line).contains("the sandbox deleted refs/heads/caf"
                + "\u00e9; the host keeps it"));
        assertThat(git(host, "rev-parse", "caf\u00e9")).isEqualTo(main);
        assertThat(git(host, "symbolic-ref", "HEAD")).isEqualTo("refs/heads/caf\u00e9");
    }

    /**
     * A partial clone's git fetches a missing object by itself, through the transport its
     * config names (core.sshCommand, say): the apply's git uses no transport at all.
     */
    @Test
    void The_Apply_s_Git_Fetches_Nothing_For_A_Missing_Object() throws Exception {
        Path marker = dir.resolve("fetched");
        git(host, "config", "core.repositoryformatversion", "1");
        git(host, "config", "extensions.partialClone", "origin");
        git(host, "config", "remote.origin.url", "ssh://example.invalid/x.git");
        git(host, "config", "remote.origin.promisor", "true");
        git(host, "config", "core.sshCommand", "touch " + marker + " #");
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/ghost"), "1234567890123456789012345678901234567890\n");
        assertThat(apply()).singleElement().asString().contains("refs/heads/ghost points at 123456789012, an object"
                + " it did not leave");
        assertThat(marker).doesNotExist();
    }

    @Test
    void A_Tag_The_Host_Had_Is_Never_Deleted() throws Exception {
        git(host, "tag", "v1");
        git(host, "pack-refs", "--all");
        String main = git(host, "rev-parse", "main");
        GitApply apply = viewApply();
        packedMainOnly(main);
        assertThat(apply.apply()).singleElement().asString().contains("the sandbox deleted refs/tags/v1; the host"
                + " keeps it");
        assertThat(git(host, "rev-parse", "v1")).isEqualTo(main);
    }

    /**
     * The index's caches (a cache-tree, which the user's next commit would record for the
     * directories it did not touch, whatever the entries say) are dropped when the host
     * takes it; its entries are the sandbox's, and git reads it whole.
     */
    @Test
    void An_Index_Is_Taken_Without_Its_Cache_Tree() throws Exception {
        commitInside("second");
        byte[] inner = Files.readAllBytes(inside.resolve(".git/index"));
        assertThat(new String(inner, StandardCharsets.ISO_8859_1)).as("git wrote a cache-tree").contains("TREE");
        Files.write(upper.resolve("index"), inner);
        assertThat(apply()).isEmpty();
        byte[] taken = Files.readAllBytes(host.resolve(".git/index"));
        assertThat(new String(taken, StandardCharsets.ISO_8859_1)).doesNotContain("TREE");
        assertThat(GitApply.checkIndex(taken, false)).isNull();
        assertThat(git(host, "ls-files", "-s")).isEqualTo(git(inside, "ls-files", "-s"));
        assertThat(apply()).as("taken already").isEmpty();
    }

    /**
     * An index whose entries are the host's, whatever follows them (a cache-tree, an
     * extension the host would not take), gives the host nothing: its index stays the very
     * file it was, and nothing is said.
     */
    @Test
    void An_Index_Whose_Entries_Are_The_Host_s_Leaves_The_Host_s_Index_As_It_Is() throws Exception {
        byte[] hosts = Files.readAllBytes(host.resolve(".git/index"));
        int end = hosts.length - 20; // no extension in a young repository's index
        java.io.ByteArrayOutputStream sandbox = new java.io.ByteArrayOutputStream();
        sandbox.write(hosts, 0, end);
        sandbox.write("link".getBytes(StandardCharsets.ISO_8859_1)); // a split index: never taken
        sandbox.write(new byte[] {0, 0, 0, 20});
        sandbox.write(new byte[20]);
        sandbox.write(new byte[20]); // a checksum of zeros: git's index.skipHash
        Files.write(upper.resolve("index"), sandbox.toByteArray());
        Object before = Files.getAttribute(host.resolve(".git/index"), "unix:ino");
        java.nio.file.attribute.FileTime modified = Files.getLastModifiedTime(host.resolve(".git/index"));

        assertThat(apply()).isEmpty();
        assertThat(Files.getAttribute(host.resolve(".git/index"), "unix:ino")).isEqualTo(before);
        assertThat(Files.getLastModifiedTime(host.resolve(".git/index"))).isEqualTo(modified);
        assertThat(Files.readAllBytes(host.resolve(".git/index"))).isEqualTo(hosts);
    }

    /** A note, branch or remote-tracking ref that names no commit is not taken (the host's git log would fail). */
    @Test
    void A_Ref_Other_Than_A_Tag_Naming_No_Commit_Is_Not_Taken() throws Exception {
        commitInside("second");
        String blob = git(inside, "rev-parse", "HEAD:a.txt");
        Files.createDirectories(upper.resolve("refs/notes"));
        Files.writeString(upper.resolve("refs/notes/commits"), blob + "\n");
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/blob"), blob + "\n");
        assertThat(apply()).singleElement().asString().contains("refs/notes/commits points at")
                .contains("which is no commit: not taken");
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/notes")).isEmpty();
        assertThat(git(host, "rev-parse", "refs/tags/blob")).as("a tag may name any object").isEqualTo(blob);
        git(host, "log", "-1");
    }

    /**
     * An index that drops a gitlink the host had (the user's next git checkout -- . would
     * replace the submodule's directory, with its .git) is not taken; once the sandbox's
     * index has it again, it is.
     */
    /**
     * A SHA-256 repository's index entries are 12 bytes longer (74 before the name): read at
     * their own length, a gitlink the sandbox staged is seen, and a plain index is taken.
     */
    @Test
    void A_SHA_256_Repository_s_Index_Is_Read_At_Its_Own_Length() throws Exception {
        Path host256 = Files.createDirectories(dir.resolve("host256"));
        git(host256, "init", "-q", "-b", "main", "--object-format=sha256");
        Files.writeString(host256.resolve("a.txt"), "one\n");
        git(host256, "add", "a.txt");
        git(host256, "commit", "-q", "-m", "first");
        String head = git(host256, "rev-parse", "HEAD");
        byte[] plain = Files.readAllBytes(host256.resolve(".git/index"));
        Files.writeString(host256.resolve("b.txt"), "two\n");
        git(host256, "add", "b.txt");
        byte[] staged = Files.readAllBytes(host256.resolve(".git/index"));
        git(host256, "update-index", "--add", "--cacheinfo", "160000," + head + ",sub");
        byte[] withLink = Files.readAllBytes(host256.resolve(".git/index"));
        Files.write(host256.resolve(".git/index"), plain);
        Path upper256 = Files.createDirectories(dir.resolve("upper256"));
        GitApply apply = new GitApply(host256.resolve(".git"), upper256, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));

        Files.write(upper256.resolve("index"), withLink);
        assertThat(apply.apply(false)).singleElement().asString().contains("adds the gitlink sub");
        assertThat(git(host256, "ls-files")).isEqualTo("a.txt");

        Files.write(upper256.resolve("index"), staged);
        assertThat(apply.apply()).isEmpty();
        assertThat(git(host256, "ls-files", "-s")).contains("\tb.txt");
        git(host256, "fsck", "--strict");
    }

    @Test
    void An_Index_Dropping_A_Gitlink_The_Host_Had_Is_Not_Taken() throws Exception {
        String head = git(host, "rev-parse", "HEAD");
        git(host, "update-index", "--add", "--cacheinfo", "160000," + head + ",sub");
        byte[] withLink = Files.readAllBytes(host.resolve(".git/index"));
        git(host, "rm", "--cached", "-q", "sub");
        byte[] withoutLink = Files.readAllBytes(host.resolve(".git/index"));
        Files.write(host.resolve(".git/index"), withLink);
        GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));
        Files.write(upper.resolve("index"), withoutLink);
        assertThat(apply.apply(false)).singleElement().asString().contains("drops the gitlink sub");
        assertThat(git(host, "ls-files", "-s")).contains("160000 " + head + " 0\tsub");
        Files.write(upper.resolve("index"), withLink);
        assertThat(apply.apply()).isEmpty();
    }

    /**
     * An index with a file where a nested repository with a view of its own is: the user's
     * next git checkout -- . would replace that repository, history and all.
     */
    @Test
    void An_Index_Putting_A_File_Where_A_Nested_Repository_Is_Is_Not_Taken() throws Exception {
        byte[] before = Files.readAllBytes(host.resolve(".git/index"));
        Files.writeString(inside.resolve("nested"), "a file\n");
        git(inside, "add", "nested");
        Files.write(upper.resolve("index"), Files.readAllBytes(inside.resolve(".git/index")));
        GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));
        apply.nestedRepositories(List.of("nested"));
        assertThat(apply.apply()).singleElement().asString().contains("holding nested where a nested repository");
        assertThat(Files.readAllBytes(host.resolve(".git/index"))).isEqualTo(before);
    }

    /**
     * A link in the host's git dir on the way to where the apply writes (objects, a ref, its
     * reflog), which a process that can write that git dir may have put there: nothing is
     * written through it.
     */
    @Test
    void Nothing_Is_Written_Through_A_Link_In_The_Host_s_Git_Dir() throws Exception {
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Path tags = host.resolve(".git/refs/tags");
        Files.deleteIfExists(tags);
        Files.createSymbolicLink(tags, elsewhere);
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/t"), tip + "\n");
        assertThat(apply()).singleElement().asString().contains("symbolic link or a file on the way to refs/tags/t");
        assertThat(elsewhere).isEmptyDirectory();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
        // the objects themselves
        Files.delete(tags);
        Path objects = host.resolve(".git/objects");
        Path moved = dir.resolve("objects-elsewhere");
        Files.move(objects, moved);
        Files.createSymbolicLink(objects, moved);
        commitInside("third");
        assertThat(apply()).singleElement().asString().contains("objects in the host's git dir is a symbolic link");
    }

    /** A new tag or branch with the short name of one the host has in the other namespace, or of HEAD, is not taken. */
    @Test
    void A_Ref_Shadowing_A_Branch_Or_HEAD_Is_Not_Taken() throws Exception {
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/main"), tip + "\n");
        Files.writeString(upper.resolve("refs/heads/HEAD"), tip + "\n");
        List<String> said = apply();
        assertThat(said).hasSize(2).allSatisfy(l -> assertThat(l).contains("git would take it for that one"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/tags", "refs/heads"))
                .isEqualTo("refs/heads/main");
    }

    /**
     * An index that marks a file assume-unchanged or skip-worktree (so that the user's git
     * status and git diff never show what the sandbox changed in it) is not taken; marks the
     * host's index had before the run (a sparse checkout's) are the user's own.
     */
    @Test
    void An_Index_Hiding_A_File_From_Git_Status_Is_Not_Taken() throws Exception {
        git(host, "update-index", "--skip-worktree", "a.txt");
        byte[] own = Files.readAllBytes(host.resolve(".git/index"));
        git(host, "update-index", "--no-skip-worktree", "a.txt");
        git(host, "update-index", "--assume-unchanged", "a.txt");
        byte[] hiding = Files.readAllBytes(host.resolve(".git/index"));
        git(host, "update-index", "--no-assume-unchanged", "a.txt");
        byte[] before = Files.readAllBytes(host.resolve(".git/index"));
        Files.write(upper.resolve("index"), hiding);
        assertThat(apply()).singleElement().asString().contains("marking a.txt assume-unchanged or skip-worktree");
        assertThat(Files.readAllBytes(host.resolve(".git/index"))).isEqualTo(before);
        // the user's own mark, there before the run, may stay
        Files.write(host.resolve(".git/index"), own);
        Files.write(upper.resolve("index"), own);
        assertThat(apply()).isEmpty();
    }

    /** A file or link at a directory above a nested repository: git's checkout would remove the directory, repository and all. */
    @Test
    void An_Index_Putting_A_File_Above_A_Nested_Repository_Is_Not_Taken() throws Exception {
        byte[] before = Files.readAllBytes(host.resolve(".git/index"));
        Files.writeString(inside.resolve("src"), "a file\n");
        git(inside, "add", "src");
        Files.write(upper.resolve("index"), Files.readAllBytes(inside.resolve(".git/index")));
        GitApply apply = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));
        apply.nestedRepositories(List.of("src/vendor/deep"));
        assertThat(apply.apply()).singleElement().asString().contains("holding src where a nested repository")
                .contains("or a directory above one");
        assertThat(Files.readAllBytes(host.resolve(".git/index"))).isEqualTo(before);
    }

    /** A new branch named like a remote-tracking ref of the host's (git takes the branch first) is not taken. */
    @Test
    void A_Branch_Shadowing_A_Remote_Tracking_Ref_Is_Not_Taken() throws Exception {
        git(host, "update-ref", "refs/remotes/origin/main", git(host, "rev-parse", "main"));
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/heads/origin"));
        Files.writeString(upper.resolve("refs/heads/origin/main"), tip + "\n");
        assertThat(apply()).singleElement().asString().contains("git would take it for that one");
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
    }

    /**
     * A new branch named like one of the host's remotes (git takes it before the remote's
     * HEAD, which a later fetch or `git remote set-head` makes), and a remote's HEAD the host
     * has not, are not taken.
     */
    @Test
    void A_Branch_Or_A_Remote_s_HEAD_Shadowing_A_Remote_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        git(host, "update-ref", "refs/remotes/origin/main", main); // no origin/HEAD: a fetch does not make one
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/heads"));
        Files.writeString(upper.resolve("refs/heads/origin"), tip + "\n");
        Files.createDirectories(upper.resolve("refs/remotes/upstream"));
        Files.writeString(upper.resolve("refs/remotes/upstream/HEAD"), tip + "\n");
        assertThat(apply()).hasSize(2).allSatisfy(line -> assertThat(line).contains("git would take it for that one"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes/upstream"))
                .isEqualTo("refs/heads/main");
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads/origin")).isEmpty();
    }

    /**
     * A commit that adds a gitlink (a repository the host's git would enter once a checkout
     * puts it in the index) is not taken, on a branch or as the checked-out branch's move;
     * a commit that only changes files beside the project's own submodules is.
     */
    @Test
    void A_Commit_That_Adds_A_Submodule_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        // a gitlink at d/x, as `git add d/x` of a repository there stages it
        git(inside, "update-index", "--add", "--cacheinfo", "160000," + main + ",d/x");
        git(inside, "commit", "-q", "-m", "adds d/x");
        String tip = syncLayer();
        assertThat(apply()).singleElement().asString().contains("adds a submodule at d/x")
                .contains("not taken").contains("kept at refs/agent-sandbox/heads/main");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/heads/main")).isEqualTo(tip);

        // kept aside, it is still checked when another ref takes it
        Files.writeString(upper.resolve("refs/heads/other"), tip + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("the sandbox's refs/heads/other holds a"
                + " commit that adds a submodule at d/x"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");
    }

    /** Stages, in the inside clone's index, a directory {@code dir} shaped as a bare repository whose config runs a pager. */
    private void stageGitDirShaped(String dir) throws Exception {
        Path files = Files.createDirectories(this.dir.resolve("shape"));
        Files.writeString(files.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(files.resolve("config"), "[core]\n\tbare = true\n\tpager = touch pwned; cat\n");
        Files.writeString(files.resolve("keep"), "");
        for (String[] entry : new String[][] {{"HEAD", "HEAD"}, {"config", "config"}, {"keep", "objects/.keep"},
                {"keep", "refs/.keep"}}) {
            String blob = git(inside, "hash-object", "-w", files.resolve(entry[0]).toString());
            git(inside, "update-index", "--add", "--cacheinfo", "100644," + blob + "," + dir + "/" + entry[1]);
        }
    }

    /**
     * A commit that adds a directory shaped as a git dir (a HEAD with objects/ and refs/: git's
     * discovery, run in it once it is checked out, takes it for a repository and obeys its
     * config) is not taken, whether the walk in this process finds it or the host's git walks
     * the commits (a merge); nor is an index that adds a file named HEAD.
     */
    @Test
    void A_Commit_Or_An_Index_That_Adds_A_Directory_Shaped_As_A_Git_Dir_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        stageGitDirShaped("tools/x");
        git(inside, "commit", "-q", "-m", "adds tools/x");
        String tip = syncLayer();
        assertThat(apply()).singleElement().asString().contains("holds a commit that adds files in a directory your git would"
                + " take for a repository of its own at tools/x").contains("not taken");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);

        // brought by a merge: the host's git walks it
        git(inside, "checkout", "-q", "-b", "other", main);
        git(inside, "commit", "-q", "--allow-empty", "-m", "side");
        git(inside, "merge", "-q", "--no-edit", "--no-ff", tip);
        String merge = syncLayer();
        Files.writeString(upper.resolve("refs/heads/main"), main + "\n");
        Files.writeString(upper.resolve("refs/heads/other"), merge + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("refs/heads/other holds a commit that adds files in"
                + " a directory your git would take for a repository of its own at tools/x"));
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads")).isEqualTo("refs/heads/main");

        // staged only: the index is not taken
        Files.delete(upper.resolve("refs/heads/other"));
        git(inside, "checkout", "-q", "main");
        git(inside, "reset", "-q", "--hard", main);
        stageGitDirShaped("lib/y");
        Files.copy(inside.resolve(".git/index"), upper.resolve("index"));
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("the sandbox's index adds lib/y/HEAD")
                .contains("the host keeps its index"));
        assertThat(git(host, "ls-files")).isEqualTo("a.txt");
    }

    /**
     * The shape split or spelled otherwise: {@code refs} committed as a link (git takes any
     * {@code refs} that leads to a directory), and a commit or an index that adds only a
     * config (or a hook) into a directory that the work tree holds as a git dir (a bare
     * repository the sandbox left there untracked, without a config): a checkout or a restore
     * would write it there. Neither is taken.
     */
    @Test
    void A_Git_Dir_Shape_Spelled_With_A_Link_Or_Split_With_The_Work_Tree_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        Path files = Files.createDirectories(dir.resolve("shape2"));
        Files.writeString(files.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(files.resolve("config"), "[core]\n\tpager = touch pwned; cat\n");
        Files.writeString(files.resolve("keep"), "");
        String head = git(inside, "hash-object", "-w", files.resolve("HEAD").toString());
        String config = git(inside, "hash-object", "-w", files.resolve("config").toString());
        String keep = git(inside, "hash-object", "-w", files.resolve("keep").toString());
        Files.writeString(files.resolve("link"), "objects");
        String link = git(inside, "hash-object", "-w", files.resolve("link").toString());
        git(inside, "update-index", "--add", "--cacheinfo", "100644," + head + ",tools/x/HEAD");
        git(inside, "update-index", "--add", "--cacheinfo", "100644," + keep + ",tools/x/objects/.keep");
        git(inside, "update-index", "--add", "--cacheinfo", "120000," + link + ",tools/x/refs");
        git(inside, "commit", "-q", "-m", "refs as a link");
        syncLayer();
        assertThat(apply()).singleElement().asString().contains("at tools/x").contains("not taken");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);

        // split: the work tree holds a bare repository without a config; the commit brings the config
        Path bare = Files.createDirectories(host.resolve("tools/w"));
        Files.writeString(bare.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(bare.resolve("objects"));
        Files.createDirectories(bare.resolve("refs"));
        git(inside, "reset", "-q", "--hard", main);
        git(inside, "update-index", "--add", "--cacheinfo", "100644," + config + ",tools/w/config");
        git(inside, "commit", "-q", "-m", "a config only");
        syncLayer();
        assertThat(apply()).singleElement().asString().contains("at tools/w").contains("in your work tree")
                .contains("not taken");
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);

        // and staged only, as a hook: the index is not taken
        Files.writeString(upper.resolve("refs/heads/main"), main + "\n");
        git(inside, "reset", "-q", "--hard", main);
        git(inside, "update-index", "--add", "--cacheinfo", "100755," + keep + ",tools/w/hooks/post-checkout");
        Files.copy(inside.resolve(".git/index"), upper.resolve("index"));
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("the sandbox's index adds"
                + " tools/w/hooks/post-checkout to tools/w, a git dir in your work tree"));
        assertThat(git(host, "ls-files")).isEqualTo("a.txt");
    }

    /**
     * While the sandbox runs, an apply may list the layer's objects while git inside still
     * writes them, and see a commit whose tree it did not list: the commit cannot be checked
     * yet, so that apply leaves the ref for the next one, with no line and nothing kept aside;
     * once the objects are all there, the ref is taken.
     */
    @Test
    void A_Live_Apply_That_Meets_A_Commit_Whose_Objects_Are_Being_Written_Leaves_It_For_The_Next() throws Exception {
        String main = git(host, "rev-parse", "main");
        Files.writeString(inside.resolve("a.txt"), "second\n", java.nio.file.StandardOpenOption.APPEND);
        git(inside, "commit", "-q", "-am", "second");
        String tree = git(inside, "rev-parse", "HEAD^{tree}");
        // more than the walk in this process follows, so that the host's git walks them
        for (int i = 0; i < 70; i++) {
            git(inside, "commit", "-q", "--allow-empty", "-m", "empty " + i);
        }
        String tip = syncLayer();
        Path treeFile = upper.resolve("objects").resolve(tree.substring(0, 2)).resolve(tree.substring(2));
        Path away = Files.move(treeFile, dir.resolve("tree-not-yet-written"));
        GitApply live = new GitApply(host.resolve(".git"), upper, Map.of("PATH", System.getenv("PATH"),
                "HOME", dir.toString()));
        assertThat(live.apply(false)).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(main);
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/agent-sandbox")).isEmpty();
        Files.move(away, treeFile);
        assertThat(live.apply(false)).isEmpty();
        assertThat(git(host, "rev-parse", "main")).isEqualTo(tip);
    }

    /**
     * A worktree made inside ({@code git worktree add}) is never taken: the end of the run says
     * so and names its directory, which leads to no repository on the host; one the host had
     * and the sandbox used is not named.
     */
    @Test
    void A_Worktree_Made_Inside_Is_Named_As_Not_Taken() throws Exception {
        git(host, "worktree", "add", "-q", dir.resolve("mine").toString());
        Path made = Files.createDirectories(upper.resolve("worktrees/wt"));
        Files.writeString(made.resolve("gitdir"), host.resolve("wt/.git") + "\n");
        Files.writeString(made.resolve("HEAD"), "ref: refs/heads/wt\n");
        Files.createDirectories(upper.resolve("worktrees/mine"));
        Files.writeString(upper.resolve("worktrees/mine/HEAD"), "ref: refs/heads/mine\n");
        assertThat(apply()).singleElement().asString().contains("the sandbox made the worktree " + host.resolve("wt"))
                .contains("which the host does not take").doesNotContain("mine");
        assertThat(host.resolve(".git/worktrees/wt")).doesNotExist();
    }

    /**
     * A tag of a tree (directly, or through an annotated tag) is not taken: the user's
     * {@code git checkout <tag> -- .} would put the tree's gitlinks in the index. Tags of
     * commits and of files are.
     */
    @Test
    void A_Tag_Of_A_Tree_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        git(inside, "update-index", "--add", "--cacheinfo", "160000," + main + ",x/y/sub");
        String tree = git(inside, "write-tree");
        git(inside, "tag", "-a", "-m", "annotated", "annotated-tree", tree);
        String annotated = git(inside, "rev-parse", "annotated-tree");
        String blob = git(inside, "rev-parse", "main:a.txt");
        syncLayer();
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/t"), tree + "\n");
        Files.writeString(upper.resolve("refs/tags/annotated-tree"), annotated + "\n");
        Files.writeString(upper.resolve("refs/tags/file"), blob + "\n");
        Files.writeString(upper.resolve("refs/tags/release"), main + "\n");
        // the tree and the tag object, as git inside left them
        for (String id : List.of(tree, annotated)) {
            Path object = inside.resolve(".git/objects").resolve(id.substring(0, 2)).resolve(id.substring(2));
            Files.createDirectories(upper.resolve("objects").resolve(id.substring(0, 2)));
            Files.copy(object, upper.resolve("objects").resolve(id.substring(0, 2)).resolve(id.substring(2)),
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
        List<String> said = apply();
        assertThat(said).anySatisfy(line -> assertThat(line).contains("refs/tags/t names a tree", "not taken"));
        assertThat(said).anySatisfy(line -> assertThat(line).contains("refs/tags/annotated-tree names a tree"));
        assertThat(git(host, "tag", "--list")).isEqualTo("file\nrelease");
        assertThat(git(host, "rev-parse", "refs/agent-sandbox/tags/t")).isEqualTo(tree);
    }

    /** A detached HEAD at a commit that adds a gitlink is not taken either: the host's HEAD stays. */
    @Test
    void A_Detached_HEAD_At_A_Commit_That_Adds_A_Submodule_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        git(inside, "update-index", "--add", "--cacheinfo", "160000," + main + ",d/x");
        git(inside, "commit", "-q", "-m", "adds d/x");
        String tip = syncLayer();
        Files.writeString(upper.resolve("refs/heads/main"), main + "\n"); // the branch stays; HEAD moves
        Files.writeString(upper.resolve("HEAD"), tip + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("the sandbox's HEAD is detached at")
                .contains("adds a submodule at d/x"));
        assertThat(Files.readString(host.resolve(".git/HEAD")).strip()).isEqualTo("ref: refs/heads/main");
        // and a branch made at it later is judged as new: HEAD does not vouch for its commits
        Files.writeString(upper.resolve("refs/heads/agent-work"), tip + "\n");
        assertThat(apply()).anySatisfy(line -> assertThat(line).contains("refs/heads/agent-work holds a commit that"
                + " adds a submodule at d/x"));
    }

    /** A commondir file in the host's git dir (planted: a view is of a common dir) stops the apply. */
    @Test
    void A_Git_Dir_With_A_Commondir_Gets_Nothing_Applied() throws Exception {
        String tip = commitInside("second");
        Files.writeString(host.resolve(".git/commondir"), dir.resolve("elsewhere") + "\n");
        assertThat(apply()).singleElement().asString().contains("has a commondir file");
        Files.delete(host.resolve(".git/commondir"));
        assertThat(git(host, "rev-parse", "main")).isNotEqualTo(tip);
    }

    /**
     * A deletion of a branch that moved on the host since the run began (your commit, or
     * another run's) is not taken; nor of one a linked worktree of yours has checked out.
     */
    @Test
    void A_Branch_Moved_On_The_Host_Or_Checked_Out_In_A_Worktree_Is_Not_Deleted() throws Exception {
        git(host, "branch", "feature");
        git(host, "branch", "other");
        git(host, "pack-refs", "--all");
        GitApply apply = viewApply();
        // the host moves feature meanwhile; other is checked out in a worktree of the host's
        git(host, "worktree", "add", "-q", dir.resolve("wt").toString(), "other");
        git(host, "switch", "-q", "feature");
        Files.writeString(host.resolve("n.txt"), "n\n");
        git(host, "add", "n.txt");
        git(host, "commit", "-q", "-m", "the user's own");
        String moved = git(host, "rev-parse", "feature");
        git(host, "switch", "-q", "main");
        packedMainOnly(git(host, "rev-parse", "main")); // inside: feature and other deleted
        List<String> lines = apply.apply();
        assertThat(lines).anySatisfy(line -> assertThat(line).contains("the sandbox deleted refs/heads/feature, which"
                + " moved on the host since the run began"));
        assertThat(lines).anySatisfy(line -> assertThat(line).contains("the sandbox deleted refs/heads/other"));
        assertThat(git(host, "rev-parse", "feature")).isEqualTo(moved);
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads/other")).isEqualTo("refs/heads/other");
    }

    /** New branches named under a remote's name, or like an object id, are not taken. */
    @Test
    void A_Branch_Under_A_Remote_s_Name_Or_Named_Like_An_Object_Is_Not_Taken() throws Exception {
        String main = git(host, "rev-parse", "main");
        git(host, "update-ref", "refs/remotes/origin/main", main);
        String tip = commitInside("second");
        Files.createDirectories(upper.resolve("refs/heads/origin"));
        Files.writeString(upper.resolve("refs/heads/origin/hotfix"), tip + "\n");
        Files.createDirectories(upper.resolve("refs/tags"));
        Files.writeString(upper.resolve("refs/tags/" + main.substring(0, 7)), tip + "\n");
        assertThat(apply()).filteredOn(line -> line.contains("git would take it for that one")).hasSize(2);
        assertThat(git(host, "for-each-ref", "--format=%(refname)", "refs/heads/origin", "refs/tags")).isEmpty();
    }
}
