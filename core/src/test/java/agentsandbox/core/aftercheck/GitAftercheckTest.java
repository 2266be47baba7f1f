// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.git.GitConfigScan;
import agentsandbox.core.git.GitDirs;
import agentsandbox.core.git.GitIndex;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The check of git metadata after a run, with real git repositories. */
class GitAftercheckTest {
    @TempDir
    Path dir;

    private String git(Path in, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-c", "user.name=t", "-c", "user.email=t@t.invalid",
                "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always"));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).directory(in.toFile()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("git " + String.join(" ", args) + " failed: " + out);
            }
            return out.strip();
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private Path repo() throws IOException {
        Path r = Files.createDirectories(dir.resolve("r"));
        git(r, "init", "-q");
        Files.writeString(r.resolve("f"), "x");
        git(r, "add", "f");
        git(r, "commit", "-qm", "one");
        return r;
    }

    /** A new repository at {@code dir} whose config runs a command on the host's next git status. */
    private Path plantedRepository(Path dir) throws IOException {
        Files.createDirectories(dir);
        git(dir, "init", "-q");
        Files.writeString(dir.resolve(".git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        return dir;
    }

    private List<String> settings(List<GitAftercheck.Finding> findings) {
        return findings.stream().map(f -> f.file().getFileName() + " " + f.setting()).toList();
    }

    /**
     * The repositories right below the project, and the nested ones the run sees through
     * views: a file of their git dirs with which git runs a command that changed this run goes
     * aside while the sandbox runs, whether written in place (a git dir a .git file names
     * elsewhere in the project, which the sandbox can write) or while the repository was
     * renamed away and back (into a directory another sandbox writes); what such a file held
     * before the run stays, however the sandbox touched the repository.
     */
    @Test
    void The_Watch_Moves_Aside_What_Changed_This_Run_In_The_Git_Dirs_Of_Nested_Repositories() throws Exception {
        Path r = repo();
        Path moved = Files.createDirectories(r.resolve("moved"));
        git(moved, "init", "-q");
        Path separate = Files.createDirectories(r.resolve("separate"));
        Files.createDirectories(r.resolve("store"));
        git(separate, "init", "-q", "--separate-git-dir", r.resolve("store/separate.git").toString());
        Path kept = Files.createDirectories(r.resolve("kept"));
        git(kept, "init", "-q");
        git(kept, "config", "core.hooksPath", "/usr/share/hooks"); // the user's own, before the run
        Thread.sleep(1100); // the repositories older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Path away = Files.createDirectories(r.resolve("away"));
        Files.move(moved, away.resolve("moved"));
        Files.writeString(away.resolve("moved/.git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.move(away.resolve("moved"), moved);
        Files.writeString(r.resolve("store/separate.git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.createDirectories(kept.resolve("build")); // its directory touched, its config not
        List<String> lines = watch.stop();

        assertThat(lines).anySatisfy(l -> assertThat(l).contains(moved.resolve(".git/config") + " sets core.fsmonitor")
                .contains("moved aside at once"));
        assertThat(moved.resolve(".git/config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(r.resolve("store/separate.git/config")
                + " sets core.fsmonitor"));
        assertThat(r.resolve("store/separate.git/config")).doesNotExist();
        assertThat(lines).noneSatisfy(l -> assertThat(l).contains(kept.toString()));
        assertThat(Files.readString(kept.resolve(".git/config"))).contains("hooksPath");
    }

    /**
     * Every entry right below the project is looked at, however many: repositories a sandbox
     * creates after thousands of other entries lose their plants while it runs, as the first
     * does.
     */
    @Test
    void The_Watch_Looks_At_Every_Entry_Below_The_Project_However_Many() throws Exception {
        Path r = repo();
        for (int i = 0; i < 3000; i++) {
            Files.createDirectory(r.resolve("d" + i));
        }
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        List<Path> planted = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Path nested = Files.createDirectories(r.resolve("n" + i));
            git(nested, "init", "-q");
            Files.writeString(nested.resolve(".git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                    java.nio.file.StandardOpenOption.APPEND);
            planted.add(nested.resolve(".git/config"));
        }
        // while the watch runs, not only at its last look
        long until = System.currentTimeMillis() + 15_000;
        while (planted.stream().anyMatch(Files::exists) && System.currentTimeMillis() < until) {
            Thread.sleep(50);
        }
        List<Path> left = planted.stream().filter(Files::exists).toList();
        List<String> lines = watch.stop();

        assertThat(left).isEmpty();
        for (Path p : planted) {
            assertThat(lines).anySatisfy(l -> assertThat(l).contains(p + " sets core.fsmonitor"));
        }
    }

    /**
     * What stops one part of a look stops no other, and what a look cannot follow in a
     * repository the sandbox made waits for the user: a worktree's gitdir file with a NUL
     * (named by a .gitmodules path) leaves the repositories below looked at; a chain of
     * gitlinks deeper than the check follows is said, and the next run refuses.
     */
    @Test
    void A_Look_Goes_On_Past_What_It_Cannot_Read_And_Says_What_It_Cannot_Follow() throws Exception {
        Path r = repo();
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        // the project's own git dirs made unreadable to the look
        Path zzc = Files.createDirectories(r.resolve("zzc"));
        git(zzc, "init", "-q");
        Path wt = Files.createDirectories(zzc.resolve(".git/worktrees/w"));
        Files.copy(zzc.resolve(".git/HEAD"), wt.resolve("HEAD"));
        Files.writeString(wt.resolve("commondir"), "../..\n");
        Files.writeString(wt.resolve("gitdir"), "x\0y\n");
        Files.createDirectories(r.resolve("deep/k"));
        Files.writeString(r.resolve("deep/k/.git"), "gitdir: ../../zzc/.git/worktrees/w\n");
        Files.writeString(r.resolve(".gitmodules"), "[submodule \"k\"]\n\tpath = deep/k\n\turl = ./k\n");
        Path planted = plantedRepository(r.resolve("zz"));
        // a chain of gitlinks deeper than the check follows, in a new repository
        Path chain = Files.createDirectories(r.resolve("chain"));
        Path at = chain;
        for (int i = 0; i < 5; i++) {
            git(at, "init", "-q");
            git(at, "commit", "-q", "--allow-empty", "-m", "x");
            at = Files.createDirectories(at.resolve("n" + i));
        }
        git(at, "init", "-q");
        git(at, "commit", "-q", "--allow-empty", "-m", "x");
        for (int i = 4; i >= 0; i--) {
            Path parent = at.getParent();
            git(parent, "add", "n" + i);
            git(parent, "commit", "-q", "-m", "link");
            at = parent;
        }
        List<String> lines = watch.stop();

        assertThat(planted.resolve(".git/config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(planted.resolve(".git/config") + " sets core.fsmonitor"));
        assertThat(watch.unsettled()).anySatisfy(f -> assertThat(f.message()).contains("nested more than"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("nested more than"));
    }

    /**
     * A repository whose index names more gitlinks than a look follows (which would make every
     * look as slow as the sandbox likes): the look follows a bounded number, says so, and the
     * next run waits for the user; a plant beside it still goes at once.
     */
    @Test
    void A_Repository_With_More_Gitlinks_Than_A_Look_Follows_Is_Said_And_Holds_The_Next_Run() throws Exception {
        Path r = repo();
        Thread.sleep(1100);
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Path many = Files.createDirectories(r.resolve("many"));
        git(many, "init", "-q");
        StringBuilder info = new StringBuilder();
        for (int i = 0; i <= agentsandbox.core.git.GitDirs.MAX_NESTED_PATHS; i++) {
            info.append("160000 1111111111111111111111111111111111111111\td/").append(i).append('\n');
        }
        Process p = new ProcessBuilder("git", "update-index", "--index-info").directory(many.toFile())
                .redirectErrorStream(true).start();
        p.getOutputStream().write(info.toString().getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor()).isZero();
        Path planted = plantedRepository(r.resolve("zz"));
        List<String> lines = watch.stop();

        assertThat(planted.resolve(".git/config")).doesNotExist();
        assertThat(watch.unsettled()).anySatisfy(f -> assertThat(f.message()).contains(many + " names more than"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("names more than"));
    }

    /**
     * A link of the user's own on the way to a git dir the sandbox can write (a repository
     * right below the project that is a link to another of its directories, a .git that is a
     * link to a git dir elsewhere in the project): what the sandbox plants there goes aside at
     * the place the link leads to, and the links stay.
     */
    @Test
    void The_Watch_Follows_The_User_s_Own_Links_To_Git_Dirs_In_The_Project() throws Exception {
        Path r = repo();
        Files.createDirectories(r.resolve("store"));
        Path sub = Files.createDirectories(r.resolve("sub"));
        git(sub, "init", "-q", "--separate-git-dir", r.resolve("store/sub.git").toString());
        Files.delete(sub.resolve(".git"));
        Files.createSymbolicLink(sub.resolve(".git"), Path.of("../store/sub.git"));
        Path x = Files.createDirectories(r.resolve("vendor/x"));
        git(x, "init", "-q");
        Files.createSymbolicLink(r.resolve("lib"), Path.of("vendor/x"));
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Files.writeString(r.resolve("store/sub.git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(x.resolve(".git/config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        List<String> lines = watch.stop();

        assertThat(r.resolve("store/sub.git/config")).doesNotExist();
        assertThat(x.resolve(".git/config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(r.resolve("store/sub.git/config") + " sets core.fsmonitor"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(x.resolve(".git/config") + " sets core.fsmonitor"));
        assertThat(sub.resolve(".git")).isSymbolicLink();
        assertThat(r.resolve("lib")).isSymbolicLink();
    }

    /**
     * A directory right below the project that the sandbox makes into a git dir itself (no
     * .git: a bare repository whose config names a work tree): git run in it takes that
     * config, so what it sets goes aside like a nested repository's.
     */
    @Test
    void A_Directory_Made_Into_A_Git_Dir_Itself_Right_Below_Loses_What_It_Sets() throws Exception {
        Path r = repo();
        Path plain = Files.createDirectories(r.resolve("plain"));
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Path tool = r.resolve("tool");
        git(r, "init", "-q", "--bare", tool.toString());
        git(tool, "config", "core.bare", "false");
        git(tool, "config", "core.fsmonitor", "touch pwned");
        git(r, "init", "-q", "--bare", plain.toString()); // an existing directory, made one
        git(plain, "config", "core.fsmonitor", "touch pwned");
        List<String> lines = watch.stop();
        assertThat(tool.resolve("config")).doesNotExist();
        assertThat(plain.resolve("config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(tool.resolve("config") + " sets core.fsmonitor"));
        assertThat(lines).anySatisfy(l -> assertThat(l).contains(plain.resolve("config") + " sets core.fsmonitor"));
    }

    /**
     * Git dirs deeper in the work tree than right below the project: a repository the sandbox
     * makes in {@code src/vendor/x}, a directory of the project it makes into a git dir itself
     * ({@code src/lib}: git run in {@code src/lib/main} takes it), and an untracked repository
     * that was there, whose config the sandbox changes. What they set goes aside; what the
     * user's own deeper repository held before the run stays.
     */
    @Test
    void Git_Dirs_The_Sandbox_Makes_Or_Changes_Deeper_In_The_Work_Tree_Lose_What_They_Set() throws Exception {
        Path r = repo();
        Path lib = Files.createDirectories(r.resolve("src/lib/main"));
        Files.writeString(lib.resolve("A.java"), "class A {}");
        Path old = Files.createDirectories(r.resolve("src/vendor/old"));
        git(old, "init", "-q");
        Path mine = Files.createDirectories(r.resolve("src/vendor/mine"));
        git(mine, "init", "-q");
        git(mine, "config", "core.pager", "less -R"); // the user's own, before the run
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Path made = plantedRepository(r.resolve("src/vendor/x"));
        git(r, "init", "-q", "--bare", r.resolve("src/lib").toString());
        git(r.resolve("src/lib"), "config", "core.bare", "false");
        git(r.resolve("src/lib"), "config", "core.worktree", r.resolve("src/lib").toString());
        git(r.resolve("src/lib"), "config", "core.fsmonitor", "touch pwned");
        git(old, "config", "core.fsmonitor", "touch pwned");
        List<String> lines = watch.stop();
        assertThat(made.resolve(".git/config")).doesNotExist();
        assertThat(r.resolve("src/lib/config")).doesNotExist();
        assertThat(old.resolve(".git/config")).doesNotExist();
        assertThat(lib.resolve("A.java")).exists();
        assertThat(git(mine, "config", "core.pager")).isEqualTo("less -R");
        for (Path config : List.of(made.resolve(".git/config"), r.resolve("src/lib/config"), old.resolve(".git/config"))) {
            assertThat(lines).anySatisfy(l -> assertThat(l).contains(config + " sets core.fsmonitor")
                    .contains("moved aside at once"));
        }
        assertThat(watch.unsettled()).isEmpty();
    }

    /**
     * What one look reads of configs is bounded: a sandbox that writes large configs (or
     * configs that include large files) beside a plant does not keep the watch from it; past
     * the bound, a config that changed this run goes aside unread, with a line of its own.
     */
    @Test
    void Large_Configs_Beside_A_Plant_Go_Aside_Unread_Past_What_One_Look_Reads() throws Exception {
        Path r = repo();
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        String padding = "[user]\n" + "\tname = x\n".repeat(15_000); // 150 KB
        for (int i = 0; i < 3; i++) {
            Path big = Files.createDirectories(r.resolve("big" + i));
            git(big, "init", "-q");
            Files.writeString(big.resolve("padding.inc"), padding);
            Files.writeString(big.resolve(".git/config"), (i == 0 ? padding : "[include]\n\tpath = ../padding.inc\n"),
                    java.nio.file.StandardOpenOption.APPEND);
        }
        Path plant = plantedRepository(r.resolve("zz"));
        List<String> lines = watch.stop();
        assertThat(plant.resolve(".git/config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("/zz/.git/config"));
        assertThat(lines).anySatisfy(l -> assertThat(l).containsAnyOf("was not read: the sandbox wrote more config than"
                + " the live watch reads in one look", "what is left of what one look reads"));
    }

    /**
     * A directory right below the project with a .git that holds no HEAD is no repository:
     * git there takes the project's. The watch does not take the project's git dir for that
     * directory's own when the sandbox changes it, so what the user writes into the project's
     * own config meanwhile (on the host, outside the sandbox) stays.
     */
    @Test
    void A_Git_Dir_Without_Head_Right_Below_Is_Not_Taken_For_The_Project_s() throws Exception {
        Path r = repo();
        Path odd = Files.createDirectories(r.resolve("odd/.git"));
        git(r, "config", "core.fsmonitor", "echo one"); // the user's own, before the run
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        // the sandbox swaps the directory's .git; the user changes their setting on the host
        Files.delete(odd);
        Files.createDirectories(odd);
        git(r, "config", "core.fsmonitor", "echo two");
        Thread.sleep(3 * GitLiveWatch.INTERVAL_MILLIS);
        watch.stop();
        assertThat(r.resolve(".git/config")).exists();
        assertThat(git(r, "config", "core.fsmonitor")).contains("echo two");
    }

    /**
     * What the watch reads as git reads it, and what stops it not: a .git file whose path
     * ends in a space (git keeps it), one with a NUL byte (git reads up to it), a linked
     * worktree's config.worktree, a config padded past the check's bound; and the user's own
     * setting in a git dir the snapshot did not take stays when the sandbox only rewrites the
     * .git file that names it.
     */
    @Test
    void The_Watch_Reads_Git_Files_As_Git_Does_And_Moves_Only_What_Changed() throws Exception {
        Path r = repo();
        Files.createDirectories(r.resolve("store"));
        Path user = Files.createDirectories(r.resolve("user"));
        git(user, "init", "-q", "--separate-git-dir", r.resolve("store/user.git").toString());
        git(user, "config", "alias.x", "!true"); // the user's own, before the run
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        GitAftercheck check = GitAftercheck.before(r);
        GitLiveWatch watch = GitLiveWatch.start(check);
        Path broken = Files.createDirectories(r.resolve("broken"));
        Files.writeString(broken.resolve(".git"), "gitdir: a\0b\n"); // stops no look
        Path spaced = Files.createDirectories(r.resolve("spaced"));
        git(spaced, "init", "-q", "--separate-git-dir", spaced.resolve("gd ").toString());
        Files.writeString(spaced.resolve("gd /config"), "[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        Files.writeString(user.resolve(".git"), Files.readString(user.resolve(".git"))); // rewritten, the same
        Path big = Files.createDirectories(r.resolve("big"));
        git(big, "init", "-q");
        Files.writeString(big.resolve(".git/config"), "#" + "x".repeat(1_200_000) + "\n[core]\n\tfsmonitor = touch pwned\n",
                java.nio.file.StandardOpenOption.APPEND);
        Path worktree = Files.createDirectories(r.resolve("store/user.git/worktrees/wt"));
        Files.writeString(worktree.resolve("config.worktree"), "[core]\n\tfsmonitor = touch pwned\n");
        List<String> lines = watch.stop();

        assertThat(spaced.resolve("gd /config")).doesNotExist();
        assertThat(big.resolve(".git/config")).doesNotExist();
        assertThat(lines).anySatisfy(l -> assertThat(l).containsAnyOf(big.resolve(".git/config") + " could not be read whole",
                big.resolve(".git/config") + " was not read: the sandbox wrote more config than the live watch reads"));
        assertThat(Files.readString(r.resolve("store/user.git/config"))).contains("alias");
        assertThat(lines).noneSatisfy(l -> assertThat(l).contains(r.resolve("store/user.git/config").toString()));
        assertThat(worktree.resolve("config.worktree")).doesNotExist();
    }

    @Test
    void Gitlink_To_A_New_Nested_Repository_With_Fsmonitor_Is_Reported() throws IOException {
        Path r = repo();
        GitAftercheck check = GitAftercheck.before(r);
        Path zz = Files.createDirectories(r.resolve("zz"));
        git(zz, "init", "-q");
        git(zz, "commit", "-q", "--allow-empty", "-m", "x");
        git(zz, "config", "core.fsmonitor", "touch /tmp/pwned");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + git(zz, "rev-parse", "HEAD") + ",zz");
        List<GitAftercheck.Finding> found = check.after(Duration.ofSeconds(10));
        assertThat(settings(found)).containsExactly("config core.fsmonitor");
        assertThat(found.get(0).file()).isEqualTo(zz.resolve(".git/config"));
        assertThat(found.get(0).message()).contains("git config --file").contains("--unset-all core.fsmonitor");
    }

    @ParameterizedTest(name = "let go first: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {true, false})
    void A_Check_Made_Ready_Looks_When_Let_Go_Or_Asked_Not_When_Made(boolean letGo) throws IOException {
        Path r = repo();
        GitAftercheck.Running ready = GitAftercheck.before(r).ready();
        // made before the change, let go (or asked for its findings) after it: it sees the change
        git(r, "config", "core.fsmonitor", "touch /tmp/pwned");
        if (letGo) {
            ready.go();
        }
        assertThat(settings(ready.findings(Duration.ofSeconds(10)))).containsExactly("config core.fsmonitor");
    }

    @Test
    void A_Cancelled_Check_Finds_Nothing_At_Once_And_Cannot_Be_Let_Go() throws IOException {
        Path r = repo();
        GitAftercheck.Running ready = GitAftercheck.before(r).ready();
        git(r, "config", "core.fsmonitor", "touch /tmp/pwned");
        ready.cancel();
        ready.go();
        // no time to wait at all: a check still under way would be reported as not finished
        assertThat(ready.findings(Duration.ZERO)).isEmpty();
    }

    @Test
    void Nothing_Changed_Means_Nothing_Reported_Even_With_Settings_That_Run() throws IOException {
        Path r = repo();
        git(r, "config", "core.pager", "less");
        GitAftercheck check = GitAftercheck.before(r);
        Files.writeString(r.resolve("g"), "y");
        git(r, "add", "g");
        git(r, "commit", "-qm", "two");
        assertThat(check.after(Duration.ofSeconds(10))).isEmpty();
    }

    @Test
    void New_Submodule_Git_Dir_Config_And_Hook_Are_Reported() throws IOException {
        Path r = repo();
        GitAftercheck check = GitAftercheck.before(r);
        Path m = Files.createDirectories(r.resolve(".git/modules/lib/a"));
        Files.writeString(m.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(m.resolve("config"), "[core]\n\tbare = false\n[alias]\n\tst = !sh -c evil\n");
        Path hook = Files.createDirectories(m.resolve("hooks")).resolve("post-checkout");
        Files.writeString(hook, "#!/bin/sh\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(m.resolve("hooks/pre-commit.sample"), "#!/bin/sh\n");
        assertThat(settings(check.after(Duration.ofSeconds(10))))
                .containsExactlyInAnyOrder("config alias.st", "post-checkout hook");
    }

    @Test
    void Gitmodules_Update_Command_Is_Reported() throws IOException {
        Path r = repo();
        GitAftercheck check = GitAftercheck.before(r);
        Files.writeString(r.resolve(".gitmodules"), "[submodule \"x\"]\n\tpath = x\n\turl = ./x\n\tupdate = !touch p\n");
        assertThat(settings(check.after(Duration.ofSeconds(10)))).containsExactly(".gitmodules submodule.x.update");
    }

    @Test
    void A_Repository_Created_In_A_Directory_That_Had_None_Is_Reported() throws IOException {
        Path plain = Files.createDirectories(dir.resolve("plain"));
        GitAftercheck check = GitAftercheck.before(plain);
        git(plain, "init", "-q");
        git(plain, "config", "core.hooksPath", "/tmp/h");
        git(plain, "config", "include.path", "/tmp/more");
        git(plain, "config", "filter.x.smudge", "evil");
        assertThat(settings(check.after(Duration.ofSeconds(10))))
                .containsExactly("config core.hookspath", "config include.path", "config filter.x.smudge");
    }

    @Test
    void A_Fifo_Where_A_Config_Belongs_Is_Reported_Without_Blocking() throws Exception {
        Path r = repo();
        GitAftercheck check = GitAftercheck.before(r);
        Path zz = Files.createDirectories(r.resolve("zz/.git"));
        Files.writeString(zz.resolve("HEAD"), "ref: refs/heads/main\n");
        Process p = new ProcessBuilder("mkfifo", zz.resolve("config").toString()).start();
        assertThat(p.waitFor()).isZero();
        Files.writeString(r.resolve(".gitmodules"), "[submodule \"zz\"]\n\tpath = zz\n\turl = ./zz\n");
        long start = System.nanoTime();
        List<GitAftercheck.Finding> found = check.after(Duration.ofSeconds(10));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(settings(found)).containsExactly("config not a file");
    }

    static Stream<Arguments> running() {
        return Stream.of(
                Arguments.of("[core]\n\tfsmonitor = evil", "core.fsmonitor"),
                Arguments.of("[core] fsmonitor = \"ev\\\"il\"", "core.fsmonitor"),
                Arguments.of("[CORE]\n\tFsMonitor=x", "core.fsmonitor"),
                Arguments.of("[core]\n\tfsmonitor = true\n\tpager = less", "core.pager"),
                Arguments.of("[core]\n\teditor = vim ; comment", "core.editor"),
                Arguments.of("[core]\n\tsshCommand = ssh -i k", "core.sshcommand"),
                Arguments.of("[diff \"x\"]\n\ttextconv = cat", "diff.x.textconv"),
                Arguments.of("[merge \"x\"]\n\tdriver = cat", "merge.x.driver"),
                Arguments.of("[includeIf \"gitdir:/\"]\n\tpath = /tmp/x", "includeif.gitdir:/.path"),
                Arguments.of("[remote \"o\"]\n\turl = ext::sh -c evil", "remote.o.url"),
                Arguments.of("[credential]\n\thelper = !evil", "credential.helper"),
                Arguments.of("[core.x]\n\thookspath = h", "core.x.hookspath"),
                Arguments.of("[sequence]\n\teditor = evil", "sequence.editor"),
                Arguments.of("[uploadpack]\n\tpackObjectsHook = evil", "uploadpack.packobjectshook"),
                Arguments.of("[hook \"x\"]\n\tcommand = evil", "hook.x.command"),
                Arguments.of("[user]\n\tname = me\n[diff]\n\texternal = evil", "diff.external"));
    }

    @ParameterizedTest
    @MethodSource("running")
    void Settings_That_Run_A_Command_Are_Found(String text, String expected) {
        List<String> names = GitConfigScan.running(text.getBytes(StandardCharsets.UTF_8)).stream()
                .map(GitConfigScan.Setting::name).toList();
        assertThat(names).as(text).containsExactly(expected);
    }

    @Test
    void Ordinary_Settings_Are_Not_Reported() {
        String text = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
                + "\tlogallrefupdates = true\n\tfsmonitor = false\n[remote \"origin\"]\n"
                + "\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
                + "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = x\n"
                + "[submodule \"a\"]\n\tpath = a\n\turl = ../a.git\n\tupdate = rebase\n";
        assertThat(GitConfigScan.running(text.getBytes(StandardCharsets.UTF_8))).isEmpty();
    }

    /** A commit of a repository of its own, for gitlinks to point at. */
    private String subCommit() throws IOException {
        Path sub = Files.createDirectories(dir.resolve("sub"));
        git(sub, "init", "-q");
        git(sub, "commit", "-q", "--allow-empty", "-m", "x");
        return git(sub, "rev-parse", "HEAD");
    }

    @Test
    void Index_Gitlinks_Are_Read_From_A_Real_Index_In_Every_Version() throws IOException {
        Path r = repo();
        String sha = subCommit();
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",deep/dir/zz");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",a-first");
        for (String version : List.of("2", "3", "4")) {
            git(r, "update-index", "--index-version", version);
            byte[] index = Files.readAllBytes(r.resolve(".git/index"));
            assertThat(GitIndex.gitlinks(index, 100)).as("index version " + version)
                    .containsExactly("a-first", "deep/dir/zz");
        }
    }

    /**
     * Among ordinary entries (files, nested directories, an intent-to-add entry with extended
     * flags, a name longer than the flags can hold), in every version: exactly the gitlinks,
     * in index order, up to the limit.
     */
    @Test
    void Index_Gitlinks_Are_Found_Among_Files_Of_Every_Kind() throws IOException {
        Path r = repo();
        String sha = subCommit();
        for (int i = 0; i < 40; i++) {
            Path f = r.resolve("d" + (i % 7)).resolve("file-" + "x".repeat(i) + ".txt");
            Files.createDirectories(f.getParent());
            Files.writeString(f, "content " + i);
        }
        git(r, "add", "-A");
        Files.writeString(r.resolve("later.txt"), "intent");
        git(r, "add", "-N", "later.txt");
        String blob = git(r, "hash-object", "-w", "d0/file-.txt");
        String longName = ("n".repeat(200) + "/").repeat(21) + "last";
        git(r, "update-index", "--add", "--cacheinfo", "100644," + blob + "," + longName);
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",d3/link-in-the-middle");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",zz/last-link");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",0-first-link");
        for (String version : List.of("2", "3", "4")) {
            git(r, "update-index", "--index-version", version);
            byte[] index = Files.readAllBytes(r.resolve(".git/index"));
            assertThat(GitIndex.gitlinks(index, 100)).as("index version " + version)
                    .containsExactly("0-first-link", "d3/link-in-the-middle", "zz/last-link");
            assertThat(GitIndex.gitlinks(index, 2)).as("index version " + version + ", two at most")
                    .containsExactly("0-first-link", "d3/link-in-the-middle");
            assertThat(GitIndex.gitlinks(index, 0)).as("index version " + version + ", none asked").isEmpty();
        }
    }

    /**
     * An index the sandbox wrote is read on the host: whatever its bytes (a real index of
     * every version with random bytes changed, cut short, or with random counts and name
     * lengths), the scan ends without an error and within its limit.
     */
    @Test
    void Any_Damage_To_An_Index_Gives_No_Error_And_At_Most_The_Limit() throws IOException {
        Path r = repo();
        String sha = subCommit();
        for (int i = 0; i < 30; i++) {
            Files.writeString(r.resolve("f" + i), "x");
        }
        git(r, "add", "-A");
        for (int i = 0; i < 5; i++) {
            git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + ",link" + i);
        }
        java.util.Random random = new java.util.Random(11);
        for (String version : List.of("2", "3", "4")) {
            git(r, "update-index", "--index-version", version);
            byte[] index = Files.readAllBytes(r.resolve(".git/index"));
            for (int round = 0; round < 20_000; round++) {
                byte[] damaged = java.util.Arrays.copyOf(index, 13 + random.nextInt(index.length - 12));
                for (int k = random.nextInt(6); k >= 0; k--) {
                    damaged[12 + random.nextInt(damaged.length - 12)] = (byte) random.nextInt(256);
                }
                if (random.nextInt(4) == 0) {
                    damaged[8 + random.nextInt(4)] = (byte) random.nextInt(256); // the entry count
                }
                int limit = random.nextInt(4);
                assertThat(GitIndex.gitlinks(damaged, limit)).as("index version %s, round %d", version, round)
                        .hasSizeLessThanOrEqualTo(limit);
            }
        }
    }

    @Test
    void Damaged_Index_Gives_No_Error() {
        assertThat(GitIndex.gitlinks(new byte[] {'D', 'I', 'R', 'C', 0, 0, 0, 2, 0x7f, 0, 0, 0, 1}, 10)).isEmpty();
        assertThat(GitIndex.gitlinks(null, 10)).isEmpty();
        assertThat(GitIndex.gitlinks("not an index".getBytes(StandardCharsets.UTF_8), 10)).isEmpty();
    }

    @Test
    void Existing_Nested_And_Submodule_Git_Dirs_Are_Protected() throws IOException {
        Path r = repo();
        Path zz = Files.createDirectories(r.resolve("zz"));
        git(zz, "init", "-q");
        git(zz, "commit", "-q", "--allow-empty", "-m", "x");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + git(zz, "rev-parse", "HEAD") + ",zz");
        Path m = Files.createDirectories(r.resolve(".git/modules/m"));
        Files.writeString(m.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(m.resolve("config"), "");
        Files.createDirectories(m.resolve("hooks"));
        assertThat(GitDirs.find(r.resolve("f").getParent()).protectable()).contains(
                r.resolve(".git/config"), r.resolve(".git/hooks"), zz.resolve(".git/config"),
                zz.resolve(".git/hooks"), m.resolve("config"), m.resolve("hooks"));
    }

    /** A linked worktree's commondir is read-only inside without the view: rewritten, it would send that worktree's git elsewhere. */
    @Test
    void A_Linked_Worktree_s_Commondir_Is_Protected() throws IOException {
        Path r = repo();
        git(r, "commit", "-q", "--allow-empty", "-m", "x");
        git(r, "worktree", "add", "-q", dir.resolve("wt").toString());
        Path commondir = r.resolve(".git/worktrees/wt/commondir");
        assertThat(commondir).isRegularFile();
        assertThat(GitDirs.find(r).protectable()).contains(commondir, r.resolve(".git/config"));
        assertThat(GitDirs.find(dir.resolve("wt")).protectable()).contains(commondir);
    }

    /** A SHA-256 repository's index is read at its own entry length: the repository at its gitlink is found. */
    @Test
    void A_Gitlink_Of_A_SHA_256_Repository_Leads_To_Its_Repository() throws IOException {
        Path r = Files.createDirectories(dir.resolve("r256"));
        git(r, "init", "-q", "--object-format=sha256");
        Path zz = Files.createDirectories(r.resolve("deep/zz"));
        git(zz, "init", "-q", "--object-format=sha256");
        git(zz, "commit", "-q", "--allow-empty", "-m", "x");
        Files.writeString(r.resolve("a-file-with-a-longer-name-before-the-gitlink"), "x\n");
        git(r, "add", "a-file-with-a-longer-name-before-the-gitlink");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + git(zz, "rev-parse", "HEAD") + ",deep/zz");
        assertThat(GitDirs.find(r).protectable()).contains(zz.resolve(".git/config"), zz.resolve(".git/hooks"));
    }

    @Test
    void Git_Dirs_Found_A_Moment_Ago_Are_Reused_While_The_Repository_Looks_The_Same() throws IOException {
        Path r = repo();
        GitDirs found = GitDirs.find(r);
        assertThat(GitDirs.reuse(found, r)).isSameAs(found);
        assertThat(GitDirs.reuse(null, r).protectable()).contains(r.resolve(".git/config"), r.resolve(".git/hooks"));
        Path sub = Files.createDirectories(r.resolve("sub"));
        assertThat(GitDirs.reuse(found, sub)).isNotSameAs(found);
    }

    @Test
    void Git_Dirs_Are_Found_Again_Once_The_Repository_Changed() throws IOException {
        Path r = repo();
        GitDirs found = GitDirs.find(r);
        Path m = Files.createDirectories(r.resolve(".git/modules/m"));
        Files.writeString(m.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.writeString(m.resolve("config"), "");
        Files.createDirectories(m.resolve("hooks"));
        GitDirs again = GitDirs.reuse(found, r);
        assertThat(again).isNotSameAs(found);
        assertThat(again.protectable()).contains(m.resolve("config"), m.resolve("hooks"));
    }
}
