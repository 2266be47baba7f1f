// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.PresetPath;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Repository discovery against real repositories made by the real git. */
class GitLayoutTest {
    @TempDir
    Path tmp;

    private Path root() throws IOException {
        return tmp.toRealPath();
    }

    static void git(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new AssertionError("git " + String.join(" ", args) + " failed: " + output);
        }
    }

    private Path repoWithCommit() throws Exception {
        Path repo = Files.createDirectories(root().resolve("repo"));
        git(repo, "init", "-q");
        Files.writeString(repo.resolve("a.txt"), "a\n");
        git(repo, "add", "a.txt");
        git(repo, "commit", "-q", "-m", "first");
        return repo;
    }

    @Test
    void discoversTheRepositoryFromASubdirectory() throws Exception {
        Path repo = repoWithCommit();
        Path sub = Files.createDirectories(repo.resolve("src/deep"));

        GitLayout g = GitLayout.discover(sub).orElseThrow();

        assertThat(g.workTree()).isEqualTo(repo);
        assertThat(g.gitDir()).isEqualTo(repo.resolve(".git"));
        assertThat(g.commonDir()).isEqualTo(repo.resolve(".git"));
        assertThat(g.linkedWorktree()).isFalse();
        assertThat(g.currentBranch()).contains("main");
        assertThat(g.gitPaths()).containsExactly(
                new PresetPath(repo.resolve(".git/hooks"), Access.RO),
                new PresetPath(repo.resolve(".git/config"), Access.RO));
    }

    @Test
    void noRepositoryMeansNothing() throws Exception {
        Path plain = Files.createDirectories(root().resolve("plain/dir"));
        assertThat(GitLayout.discover(plain)).isEmpty();
    }

    @Test
    void aDotGitDirectoryWithoutHeadIsNotARepository() throws Exception {
        Path repo = repoWithCommit();
        Path fake = Files.createDirectories(repo.resolve("vendor/.git"));
        GitLayout g = GitLayout.discover(fake.getParent()).orElseThrow();
        assertThat(g.workTree()).isEqualTo(repo);
    }

    @Test
    void linkedWorktreeSharesTheMainGitDir() throws Exception {
        Path repo = repoWithCommit();
        Path wt = root().resolve("wt");
        git(repo, "worktree", "add", "-q", "-b", "feature", wt.toString());

        GitLayout g = GitLayout.discover(wt).orElseThrow();

        assertThat(g.linkedWorktree()).isTrue();
        assertThat(g.workTree()).isEqualTo(wt);
        assertThat(g.gitDir()).isEqualTo(repo.resolve(".git/worktrees/wt"));
        assertThat(g.commonDir()).isEqualTo(repo.resolve(".git"));
        assertThat(g.currentBranch()).contains("feature");
        assertThat(g.gitPaths()).containsExactly(
                new PresetPath(repo.resolve(".git"), Access.RW),
                new PresetPath(repo.resolve(".git/worktrees/wt"), Access.RW),
                new PresetPath(repo.resolve(".git/hooks"), Access.RO),
                new PresetPath(repo.resolve(".git/config"), Access.RO));
    }

    @Test
    void strictProtectsOtherBranchesTagsAndPackedRefs() throws Exception {
        Path repo = repoWithCommit();
        git(repo, "branch", "other");
        git(repo, "branch", "team/topic");
        git(repo, "tag", "v1");

        GitLayout g = GitLayout.discover(repo).orElseThrow();

        Path git = repo.resolve(".git");
        assertThat(g.strictPaths()).containsExactly(
                new PresetPath(git.resolve("refs/heads/other"), Access.RO),
                new PresetPath(git.resolve("refs/heads/team/topic"), Access.RO),
                new PresetPath(git.resolve("refs/tags"), Access.RO),
                new PresetPath(git.resolve("packed-refs"), Access.RO));
    }

    @Test
    void detachedHeadProtectsEveryBranch() throws Exception {
        Path repo = repoWithCommit();
        git(repo, "branch", "other");
        git(repo, "checkout", "-q", "--detach");

        GitLayout g = GitLayout.discover(repo).orElseThrow();

        assertThat(g.currentBranch()).isEmpty();
        assertThat(g.strictPaths()).extracting(PresetPath::path).contains(
                repo.resolve(".git/refs/heads/main"), repo.resolve(".git/refs/heads/other"));
    }

    /**
     * A sandbox can write the project's .git file and a worktree dir with a commondir that
     * names any directory; only a worktree git made (inside a real repository, pointing
     * back) makes a shared git dir writable.
     */
    @Test
    void aForgedWorktreeOpensNothingUp() throws Exception {
        Path repo = repoWithCommit();
        Path target = Files.createDirectories(root().resolve("home/.config"));
        Path secrets = Files.createDirectories(root().resolve("home/.aws"));
        Files.writeString(secrets.resolve("config"), "secret");
        for (Path named : new Path[] {target, secrets}) {
            Path wt = Files.createDirectories(repo.resolve("wt"));
            Files.writeString(wt.resolve("HEAD"), "ref: refs/heads/main\n");
            Files.writeString(wt.resolve("commondir"), named + "\n");
            Files.writeString(wt.resolve("gitdir"), repo.resolve(".git") + "\n");
            if (Files.isDirectory(repo.resolve(".git"))) {
                Files.move(repo.resolve(".git"), repo.resolve(".git.orig"));
            }
            Files.writeString(repo.resolve(".git"), "gitdir: " + wt + "\n");

            GitLayout g = GitLayout.discover(repo).orElseThrow();

            assertThat(g.linkedWorktree()).isFalse();
            assertThat(g.gitPaths()).extracting(PresetPath::path).doesNotContain(named, named.resolve("config"),
                    named.resolve("hooks"));
            assertThat(g.gitPaths()).extracting(PresetPath::access).doesNotContain(Access.RW);
        }
    }

    /** A project whose .git is a link to another worktree's .git borrows nothing of it. */
    @Test
    void aLinkToAnotherWorktreesDotGitOpensNothingUp() throws Exception {
        Path repo = repoWithCommit();
        Path wt = root().resolve("wt");
        git(repo, "worktree", "add", "-q", "-b", "feature", wt.toString());
        Path project = Files.createDirectories(root().resolve("project"));
        Files.createSymbolicLink(project.resolve(".git"), wt.resolve(".git"));

        GitLayout g = GitLayout.discover(project).orElseThrow();

        assertThat(g.linkedWorktree()).isFalse();
        assertThat(g.gitPaths()).extracting(PresetPath::access).doesNotContain(Access.RW);
        assertThat(GitLayout.discover(wt).orElseThrow().linkedWorktree()).as("the real worktree still is one").isTrue();
    }

    @Test
    void gitdirFileWithoutCommondirIsNotALinkedWorktree() throws Exception {
        Path repo = repoWithCommit();
        Path modules = root().resolve("store");
        Files.move(repo.resolve(".git"), modules);
        Files.writeString(repo.resolve(".git"), "gitdir: ../store\n");

        GitLayout g = GitLayout.discover(repo).orElseThrow();

        assertThat(g.gitDir()).isEqualTo(modules);
        assertThat(g.commonDir()).isEqualTo(modules);
        assertThat(g.linkedWorktree()).isFalse();
        assertThat(g.gitPaths()).extracting(PresetPath::path)
                .containsExactly(modules.resolve("hooks"), modules.resolve("config"));
    }

    @Test
    void aHugeSparseDotGitFileOrAFifoReadsAsNoRepositoryAtOnce() throws Exception {
        Path huge = tmp.resolve("huge");
        Files.createDirectories(huge);
        try (var f = new java.io.RandomAccessFile(huge.resolve(".git").toFile(), "rw")) {
            f.setLength(1_500_000_000L); // sparse: no disk used
        }
        Path fifo = tmp.resolve("fifo");
        Files.createDirectories(fifo);
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.resolve(".git").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();

        long start = System.nanoTime();
        assertThat(GitLayout.discover(huge)).isEmpty();
        assertThat(GitLayout.discover(fifo)).isEmpty();
        assertThat(System.nanoTime() - start).isLessThan(2_000_000_000L);
    }
}
