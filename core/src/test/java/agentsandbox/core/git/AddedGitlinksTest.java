// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The apply's own answer to "does a new commit add a gitlink?" ({@link AddedGitlinks})
 * against the host's git's ({@code git log --raw --diff-filter=AT}, as the apply asks it):
 * where the walk says none, git finds none, in every case here and in random histories;
 * and the walk does answer the usual case, a line of commits on a packed branch.
 */
class AddedGitlinksTest {
    @TempDir
    Path dir;

    private Path repo;
    private String main;
    private String vendored;

    private static String git(Path in, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("git", "-c", "user.name=T", "-c", "user.email=t@t.invalid",
                "-c", "commit.gpgsign=false", "-c", "gc.auto=0"));
        argv.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(in.toFile()).redirectErrorStream(true);
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        pb.environment().put("HOME", in.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("git %s: %s", List.of(args), out).isZero();
        return out.strip();
    }

    /** A packed history with a deep tree and a submodule at vendor/lib; HEAD detached at main. */
    @BeforeEach
    void history() throws Exception {
        repo = Files.createDirectories(dir.resolve("repo"));
        git(repo, "init", "-q", "-b", "main");
        for (int i = 0; i < 5; i++) {
            Files.createDirectories(repo.resolve("a/b/c"));
            Files.writeString(repo.resolve("a/b/c/f" + i), "file " + i + "\n");
            Files.writeString(repo.resolve("top" + i), "top " + i + "\n");
            git(repo, "add", "-A");
            git(repo, "commit", "-q", "-m", "c" + i);
        }
        vendored = git(repo, "rev-parse", "HEAD~1");
        git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ",vendor/lib");
        Files.writeString(repo.resolve("vendor-readme"), "x\n");
        git(repo, "add", "vendor-readme");
        git(repo, "commit", "-q", "-m", "vendor");
        git(repo, "gc", "-q", "--aggressive");
        main = git(repo, "rev-parse", "main");
        git(repo, "checkout", "-q", "--detach");
    }

    /** What the apply's fallback asks the host's git: whether a commit git walks adds a gitlink. */
    private boolean gitFinds(String tip) throws Exception {
        String log = git(repo, "log", "--format=", "--raw", "-r", "--no-renames", "--no-abbrev", "--diff-filter=AT",
                "--diff-merges=first-parent", "--root", tip, "--not", "--exclude=refs/agent-sandbox/*",
                "--glob=refs/*");
        for (String line : log.split("\n")) {
            int tab = line.indexOf('\t');
            if (line.startsWith(":") && tab > 0) {
                String[] modes = line.substring(1, tab).split(" ");
                if (modes[1].equals("160000") && !modes[0].equals("160000")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The walk's answer, from the tip down to the host's main; and that git agrees where it says none. */
    private boolean walkSaysNone(String tip) throws Exception {
        HostObjects objects = new HostObjects(repo.resolve(".git"), false);
        boolean none;
        try {
            none = new AddedGitlinks(objects, false).noneAdded(tip, Set.of(main));
        } finally {
            objects.close();
        }
        if (none) {
            assertThat(gitFinds(tip)).as("git finds a gitlink the walk did not").isFalse();
        }
        return none;
    }

    private String commit(String message) throws Exception {
        git(repo, "commit", "-q", "--allow-empty", "-m", message);
        return git(repo, "rev-parse", "HEAD");
    }

    @Test
    void A_Line_Of_Ordinary_Commits_On_A_Packed_Branch_Is_Answered_Without_Git() throws Exception {
        Files.writeString(repo.resolve("a/b/c/f2"), "changed\n");
        git(repo, "commit", "-q", "-am", "one");
        Files.createDirectories(repo.resolve("new/dir"));
        Files.writeString(repo.resolve("new/dir/g"), "g\n");
        git(repo, "add", "new");
        String tip = commit("two");
        assertThat(walkSaysNone(tip)).isTrue();
        assertThat(walkSaysNone(main)).as("nothing new").isTrue();
    }

    @Test
    void A_Gitlink_Added_Deep_Is_Found() throws Exception {
        git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ",a/b/c/sub");
        String tip = commit("adds a/b/c/sub");
        assertThat(walkSaysNone(tip)).isFalse();
        assertThat(gitFinds(tip)).isTrue();
    }

    @Test
    void A_Gitlink_In_An_Earlier_Commit_Of_The_Line_Is_Found() throws Exception {
        git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ",x");
        commit("adds x");
        git(repo, "rm", "-q", "--cached", "x");
        String tip = commit("removes x");
        assertThat(walkSaysNone(tip)).isFalse();
        assertThat(gitFinds(tip)).isTrue();
    }

    /** The tree that holds vendor/lib, taken whole to another path: an old tree object at a new place. */
    @Test
    void A_Tree_Holding_A_Gitlink_Copied_To_Another_Path_Is_Found() throws Exception {
        git(repo, "read-tree", "--prefix=copy/", "HEAD:vendor");
        String tip = commit("copies vendor");
        assertThat(git(repo, "rev-parse", "HEAD:copy")).isEqualTo(git(repo, "rev-parse", "HEAD:vendor"));
        assertThat(walkSaysNone(tip)).isFalse();
        assertThat(gitFinds(tip)).isTrue();
    }

    @Test
    void A_File_Made_A_Gitlink_Is_Found() throws Exception {
        git(repo, "rm", "-q", "--cached", "a/b/c/f1");
        git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ",a/b/c/f1");
        String tip = commit("f1 becomes a gitlink");
        assertThat(walkSaysNone(tip)).isFalse();
        assertThat(gitFinds(tip)).isTrue();
    }

    @Test
    void A_Directory_Made_A_Gitlink_Is_Found() throws Exception {
        git(repo, "rm", "-q", "-r", "--cached", "a/b");
        git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ",a/b");
        String tip = commit("a/b becomes a gitlink");
        assertThat(walkSaysNone(tip)).isFalse();
        assertThat(gitFinds(tip)).isTrue();
    }

    @Test
    void A_Gitlink_Moved_To_Another_Commit_Removed_Or_Made_A_File_Adds_None() throws Exception {
        git(repo, "update-index", "--cacheinfo", "160000," + main + ",vendor/lib");
        String moved = commit("vendor/lib elsewhere");
        assertThat(walkSaysNone(moved)).isTrue();
        git(repo, "rm", "-q", "--cached", "vendor/lib");
        Files.writeString(repo.resolve("vendor-lib-file"), "f\n");
        String removed = commit("no vendor/lib");
        assertThat(walkSaysNone(removed)).isTrue();
        git(repo, "update-index", "--add", "--cacheinfo", "100644," + git(repo, "hash-object", "-w",
                "vendor-lib-file") + ",vendor/lib");
        String file = commit("vendor/lib a file");
        assertThat(walkSaysNone(file)).isTrue();
    }

    /** What the walk leaves to git: merges, root commits, long lines, trees git writes otherwise. */
    @Test
    void Merges_Roots_Long_Lines_And_Odd_Trees_Are_Left_To_Git() throws Exception {
        String side = commit("side");
        git(repo, "checkout", "-q", "--detach", main);
        commit("other side");
        git(repo, "merge", "-q", "--no-edit", side);
        assertThat(walkSaysNone(git(repo, "rev-parse", "HEAD"))).as("a merge").isFalse();

        String root = git(repo, "commit-tree", "-m", "root", git(repo, "rev-parse", "main^{tree}"));
        assertThat(walkSaysNone(root)).as("a root commit").isFalse();

        git(repo, "checkout", "-q", "--detach", main);
        String tip = main;
        for (int i = 0; i <= AddedGitlinks.MAX_COMMITS; i++) {
            tip = commit("long " + i);
        }
        assertThat(walkSaysNone(tip)).as("a longer line").isFalse();

        // entries out of git's order, a mode git never writes, and a name twice (the second
        // time as a directory, which git's order puts after the file, or after names between)
        String blob = git(repo, "rev-parse", "main:top0");
        byte[] id = java.util.HexFormat.of().parseHex(blob);
        byte[] subtree = java.util.HexFormat.of().parseHex(git(repo, "rev-parse", "main:a"));
        for (String[] entries : new String[][] {{"100644 b", "100644 a"}, {"100664 a"}, {"100644 a", "100644 a"},
                {"100644 a", "40000 a"}, {"100644 a", "100644 a.b", "40000 a"}}) {
            java.io.ByteArrayOutputStream tree = new java.io.ByteArrayOutputStream();
            for (String e : entries) {
                tree.writeBytes((e + "\0").getBytes(StandardCharsets.US_ASCII));
                tree.writeBytes(e.startsWith("40000 ") ? subtree : id);
            }
            Path raw = dir.resolve("tree");
            Files.write(raw, tree.toByteArray());
            String odd = git(repo, "hash-object", "-t", "tree", "-w", "--literally", raw.toString());
            String commit = git(repo, "commit-tree", "-p", main, "-m", "odd", odd);
            assertThat(walkSaysNone(commit)).as(String.join(", ", entries)).isFalse();
        }
    }

    /** Random histories on the packed branch: wherever the walk says none, git finds none. */
    @Test
    void Random_Histories_Never_Hide_A_Gitlink_From_The_Walk() throws Exception {
        Random random = new Random(20261127);
        int answered = 0;
        int found = 0;
        for (int round = 0; round < 24; round++) {
            git(repo, "checkout", "-q", "-f", "--detach", main);
            int commits = 1 + random.nextInt(3);
            for (int c = 0; c < commits; c++) {
                switch (random.nextInt(6)) {
                    case 0 -> git(repo, "update-index", "--add", "--cacheinfo", "160000," + vendored + ","
                            + List.of("g", "a/g", "a/b/c/g", "vendor/g").get(random.nextInt(4)));
                    case 1 -> git(repo, "read-tree", "--prefix=copy" + round + "x" + c + "/",
                            random.nextBoolean() ? "main:vendor" : "main:a");
                    case 2 -> {
                        Files.createDirectories(repo.resolve("a/b/c"));
                        Files.writeString(repo.resolve("a/b/c/f" + random.nextInt(5)), "r" + round + "\n");
                        git(repo, "add", "a");
                    }
                    case 3 -> git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "vendor/lib");
                    case 4 -> git(repo, "mv", "-k", "a/b", "a/moved" + round);
                    default -> git(repo, "update-index", "--cacheinfo", "160000," + main + ",vendor/lib");
                }
                commit("round " + round + " commit " + c);
            }
            if (random.nextBoolean()) {
                git(repo, "gc", "-q");
            }
            String tip = git(repo, "rev-parse", "HEAD");
            boolean none = walkSaysNone(tip);
            answered += none ? 1 : 0;
            found += gitFinds(tip) ? 1 : 0;
        }
        assertThat(answered).as("the walk answered some").isPositive();
        assertThat(found).as("git found gitlinks in some").isPositive();
    }
}
