// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import agentsandbox.core.Sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@code @git} guard through the real launcher at git's real paths, in a real
 * repository with a local bare remote. Each table runs in one sandbox: a script runs
 * every command line and reports its status and first line of stderr.
 */
class GitGuardIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private Path remote;

    /** Refused command lines: git must not run, and the repository must stay as it was. */
    static final List<String> REFUSED = List.of(
            // checkout, in every way of reaching git
            "git checkout .",
            "git checkout main",
            "git checkout -b new-branch -- a.txt",
            "git checkout -- a.txt",
            "git checkout feature a.txt",
            "/usr/bin/git checkout .",
            "/bin/git checkout .",
            "/usr/lib/git-core/git checkout .",
            "/usr/lib/git-core/git-checkout .",
            "env git checkout .",
            "sh -c 'git checkout .'",
            "echo checkout . | xargs git || exit 1",
            "git -C . checkout .",
            "git --no-pager checkout .",
            "git -p checkout .",
            "git -c color.ui=never checkout .",
            "git --git-dir=.git --work-tree=. checkout .",
            "GIT_DIR=.git git checkout .",
            "cd /tmp && git -C \"$P\" checkout .",
            // restore
            "git restore a.txt",
            "git restore -s HEAD a.txt",
            "git restore --worktree --source=HEAD a.txt",
            // reset --hard
            "git reset --hard",
            "git reset --hard HEAD",
            "git reset --har",
            "git reset --ha HEAD",
            "git reset -q --hard",
            "git reset HEAD --hard",
            // clean with force
            "git clean -f",
            "git clean -fd",
            "git clean -dfx",
            "git clean -xdf",
            "git clean --force",
            "git clean --forc",
            "git clean -d --force",
            "git clean -ff",
            "git clean -q -f -d",
            // skipping hooks
            "git commit --no-verify -m x",
            "git commit -n -m x",
            "git commit -nm x",
            "git commit -anm x",
            "git commit -m x -n",
            "git commit --no-verif -m x",
            "git commit --no-ver -m x",
            "git commit -m x --no-verify",
            "git commit --amend --no-verify --no-edit",
            "git commit -qn -m x",
            "git push --no-verify origin main",
            "git merge --no-verify feature",
            "git merge --no-verif feature",
            "git pull --no-verify",
            "git am --no-verify x.patch",
            "git am -n x.patch",
            "git rebase --no-verify main",
            "git rebase main --no-verify",
            // force pushes
            "git push -f",
            "git push --force origin main",
            "git push origin main --force",
            "git push -fu origin main",
            "git push -uf origin main",
            "git push --forc origin main",
            "git push origin +main",
            "git push origin +HEAD:main",
            "git push --mirror origin",
            "git push origin main -f",
            "git push --force --force-with-lease origin main",
            // deleting remote branches
            "git push origin :main",
            "git push origin :refs/heads/main",
            "git push origin --delete main",
            "git push -d origin main",
            "git push origin +:main",
            "git push --prune origin 'refs/heads/*:refs/heads/*'",
            "git push --all --force origin",
            "git send-pack --force \"$(git remote get-url origin)\" main",
            // local history: reflog expiry and pruning now, forced fetches into local branches
            "git -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now gc",
            "git gc --prune=now",
            "git prune",
            "git repack -a -d",
            "git fast-import --force </dev/null",
            "git fetch . +feature:merged",
            "git fetch -f . feature:merged",
            "git pull --force . feature:merged",
            // stash
            "git stash drop",
            "git stash clear",
            "git stash pop",
            "git stash -q pop",
            "git stash pop stash@{0}",
            "git stash drop -q",
            // branch deletion by force
            "git branch -D feature",
            "git branch --delete --force feature",
            "git branch -d -f feature",
            "git branch -df feature",
            "git branch -fd feature",
            "git branch --force -d feature",
            "git branch -D -q feature",
            "git branch --del --forc feature",
            "git branch -qD feature",
            // inline config that redefines commands or hooks
            "git -c alias.co=checkout co .",
            "git -c Alias.Co=checkout co .",
            "git -c core.hooksPath=/dev/null commit -m x",
            "git -c core.hookspath=/tmp commit -m x",
            "git --config-env=alias.x=HOME status",
            "git -c include.path=/tmp/gitconfig status",
            "git -c clean.requireForce=false clean",
            "git -c remote.origin.mirror=true push origin",
            "git -c protocol.ext.allow=always fetch 'ext::sh -c true'",
            "GIT_ALLOW_PROTOCOL=ext git fetch 'ext::sh -c true'",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0=checkout git st .",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m x",
            "GIT_CONFIG_PARAMETERS=\"'alias.st'='checkout'\" git st .",
            "GIT_CONFIG_GLOBAL=/tmp/gitconfig git status",
            "HOME=/tmp git status",
            "XDG_CONFIG_HOME=/tmp git status",
            // discarding work by porcelain and plumbing
            "git switch -f main",
            "git switch --discard-changes main",
            "git checkout-index -f -a",
            "git read-tree -u --reset HEAD",
            "git rm -f a.txt",
            "git mv -f u.txt a.txt",
            "git clean -i",
            // deleting and moving refs and reflogs
            "git reflog delete --updateref refs/stash@{0}",
            "git update-ref -d refs/stash",
            "git update-ref -d refs/heads/merged",
            "git branch -f merged feature",
            "git branch -M feature merged",
            "git tag -f v0 feature",
            "git tag -d v0",
            "git symbolic-ref HEAD refs/heads/feature && git reset --soft HEAD",
            // commits that skip the hooks
            "git commit-tree -m x HEAD^{tree}",
            "git update-ref refs/heads/main $(git commit-tree -m x HEAD^{tree})",
            // an alias from a writable bare repository, used on the project
            "git init -q --bare /tmp/b.git && git --git-dir=/tmp/b.git config alias.co checkout"
                    + " && git --git-dir=/tmp/b.git --work-tree=. co -- a.txt",
            // config that runs programs
            "git -c core.fsmonitor='touch /tmp/ran' status",
            // commands git runs for the caller are guarded like the caller's
            "git -c submodule.active=. submodule foreach git -C .. checkout -- a.txt",
            "git -c submodule.active=. submodule foreach git -C .. branch -D feature",
            "git wipe",
            // the environment as git reads it: the first of duplicated variables counts
            "python3 -c \"import ctypes, os; libc = ctypes.CDLL(None); h = os.environ['HOME'].encode();"
                    + " a = (ctypes.c_char_p * 5)(b'git', b'co', b'--', b'a.txt', None);"
                    + " e = [b'PATH=/usr/bin:/bin', b'HOME=' + h, b'GIT_CONFIG_COUNT=1', b'GIT_CONFIG_KEY_0=alias.co',"
                    + " b'GIT_CONFIG_VALUE_0=checkout', b'GIT_CONFIG_COUNT=0'];"
                    + " libc.execve(b'/usr/bin/git', a, (ctypes.c_char_p * 7)(*e, None))\"");

    /** Allowed command lines, run in this order: each must succeed. */
    static final List<String> ALLOWED = List.of(
            "git status",
            "git log --oneline",
            "git diff",
            "git --version",
            "git help -a",
            "git -C . status",
            "git --no-pager log -1",
            "git rev-parse HEAD",
            "git show --stat HEAD",
            "git blame a.txt",
            "git ls-files",
            "git worktree list",
            "git remote -v",
            "git describe --always",
            "git config --get user.name",
            "git grep -n line",
            "/usr/bin/git status",
            "env git status",
            "sh -c 'git status'",
            "echo status | xargs git",
            "/usr/lib/git-core/git-status",
            "GIT_CONFIG_PARAMETERS=\"'color.ui'='never'\" git status",
            "git clean -n",
            "git clean -dn",
            "git stash list",
            "git stash",
            "git stash apply",
            "git stash",
            "git switch -c topic",
            "git switch main",
            "git branch -d merged",
            "git branch side",
            "git branch side-copy feature",
            "git merge -n topic",
            "git rebase -n main",
            "echo b > b.txt && git add b.txt",
            "git commit -q -m 'add b'",
            "git commit -q --allow-empty -m '-n looks like a flag'",
            "git commit -q --verify --allow-empty -m verified",
            "git -c user.name=Other commit -q --allow-empty -m other",
            "git reset -q --soft HEAD~1",
            "git commit -q --allow-empty -m again",
            "git tag v1",
            "git push -q origin main",
            "git commit -q --allow-empty -m ahead",
            "git push -q --force-with-lease origin main",
            "git push -q --force-with-lease=main origin main",
            "git fetch -q origin",
            "git pull -q --ff-only origin main",
            "git stash apply",
            "git reset -q HEAD a.txt",
            // everyday work, with git's own calls inside stash, rebase, pull, merge, worktree, gc, bisect
            "git stash -q -u",
            "git stash apply -q",
            "git stash -q --keep-index",
            "git stash apply -q",
            "echo k > k.txt && git add k.txt && git stash push -q -- k.txt",
            "git stash apply -q",
            "git restore --staged k.txt",
            "git add k.txt && git rm -q --cached k.txt",
            "git stash show -p stash@{0}",
            "git commit -q -a -m work",
            "git commit -q --amend --no-edit",
            "git commit -q --amend -m reworked",
            "git switch -q -c side2",
            "echo s > s.txt && git add s.txt && git commit -q -m side",
            "git switch -q main",
            "git cherry-pick side2",
            "git merge -q --no-edit side2",
            "git rebase -q side2",
            "git rebase -q --exec true HEAD~1",
            "echo dirty >> a.txt && git -c rebase.autoStash=true rebase -q HEAD~1",
            "git pull -q --no-rebase --no-edit origin main",
            "git pull -q --rebase --autostash origin main",
            "git merge -q --autostash --no-edit feature",
            "git worktree add -q /tmp/wt-a",
            "git worktree add -q -b wt-b /tmp/wt-b",
            "git worktree list",
            "git worktree remove /tmp/wt-b",
            "git worktree prune",
            "git branch -d side2",
            "git tag -a v2 -m v2",
            "git tag -l",
            "git symbolic-ref HEAD",
            "git symbolic-ref --short HEAD",
            "git reflog -n 3",
            "git rev-list --count HEAD",
            "git log --graph --oneline -5",
            "git diff --stat HEAD~1",
            "git diff --cached",
            "git show HEAD:a.txt",
            "git ls-tree HEAD",
            "git cat-file -p HEAD",
            "git shortlog -sn HEAD",
            "git format-patch -q -1 -o /tmp/patches",
            "echo m > m.txt && git add m.txt && git commit -q -m m",
            "git mv m.txt m2.txt && git commit -q -m mv",
            "git rm -q m2.txt && git commit -q -m rm",
            "git revert --no-edit HEAD",
            "git notes add -m note HEAD",
            "git notes show HEAD",
            "git gc -q",
            "git stash -q -u && git bisect start HEAD HEAD~2 && git bisect reset && git stash apply -q",
            "git write-tree",
            "git hash-object a.txt",
            "git rev-parse --show-toplevel",
            "git config --list",
            "git status -sb",
            "git fetch -q --all",
            "git -c core.pager=cat log -1",
            "git -c core.editor=true commit -q --amend",
            "git init -q /tmp/scratch && cd /tmp/scratch && git commit -q --allow-empty -m s && git checkout -q -b x",
            "cd /tmp/scratch && git reset -q --hard && git clean -fdx && git switch -q - && git branch -D x",
            "cd /tmp/scratch && git checkout -q -b y && echo x > f && git add f && git restore --staged f",
            "git -C /tmp/scratch checkout -q -b z");

    @BeforeEach
    void repository() {
        remote = sandbox.world().resolve("remote.git");
        sandbox.mkdirs(remote);
        sandbox.runOnHost("git", "init", "-q", "--bare", remote.toString()).succeeds();
        sandbox.write("a.txt", "first line\n");
        sandbox.git("init", "-q");
        sandbox.git("config", "user.name", "Agent Sandbox Test");
        sandbox.git("config", "user.email", "test@agent-sandbox.invalid");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");
        sandbox.git("branch", "merged");
        sandbox.git("switch", "-q", "-c", "feature");
        sandbox.write("f.txt", "feature\n");
        sandbox.git("add", "f.txt");
        sandbox.git("commit", "-q", "-m", "feature work");
        sandbox.git("switch", "-q", "main");
        sandbox.git("remote", "add", "origin", remote.toString());
        sandbox.git("push", "-q", "origin", "main");
        sandbox.git("tag", "v0");
        sandbox.git("config", "alias.wipe", "!git checkout -- a.txt");
        // a gitlink whose directory is a repository of its own: submodule foreach runs there
        sandbox.git("init", "-q", "sub");
        sandbox.git("-C", "sub", "commit", "-q", "--allow-empty", "-m", "sub");
        String subHead = sandbox.git("-C", "sub", "rev-parse", "HEAD").stdout().strip();
        sandbox.git("update-index", "--add", "--cacheinfo", "160000," + subHead + ",sub");
        sandbox.write(".gitmodules", "[submodule \"sub\"]\n\tpath = sub\n\turl = ./sub\n");
        sandbox.git("add", ".gitmodules");
        sandbox.git("commit", "-q", "-m", "gitlink");
        sandbox.write("a.txt", "first line\nstashed line\n");
        sandbox.git("stash", "-q");
        // uncommitted work and an untracked file that refused commands would destroy
        sandbox.write("a.txt", "first line\nuncommitted line\n");
        sandbox.write("u.txt", "untracked\n");
    }

    /** Runs every line in one sandbox and returns, per line, its status and first line of stderr. */
    private record Report(List<Map.Entry<String, String[]>> lines, String stdout) {}

    private Report runAll(List<String> lines, String before, String after) {
        StringBuilder script = new StringBuilder();
        script.append("export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x\n");
        script.append("P=$(pwd); export P\n");
        script.append("state() { git status --porcelain=v1; git for-each-ref; git stash list; cat a.txt u.txt; }\n");
        script.append(before).append('\n');
        for (int i = 0; i < lines.size(); i++) {
            script.append("cd \"$P\"; sh -c ").append(quote(lines.get(i)))
                    .append(" >/dev/null 2>/tmp/guard-err </dev/null; s=$?; printf '@@").append(i)
                    .append(" %s %s\\n' \"$s\" \"$(head -n 1 /tmp/guard-err)\"\n");
        }
        script.append("cd \"$P\"\n").append(after).append('\n');
        Result r = sandbox.run("--rw", remote.toString(), "--", "sh", "-c", script.toString()).succeeds();
        List<Map.Entry<String, String[]>> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^@@(\\d+) (\\d+) ?(.*)$").matcher(r.stdout());
        while (m.find()) {
            out.add(Map.entry(lines.get(Integer.parseInt(m.group(1))), new String[] {m.group(2), m.group(3)}));
        }
        assertThat(out).as("every line reported; stdout was:\n" + r.stdout() + "\nstderr:\n" + r.stderr())
                .hasSize(lines.size());
        return new Report(out, r.stdout());
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    @Test
    void Refuses_Every_Listed_Operation_In_Every_Spelling_And_Leaves_The_Repository_Untouched() {
        assertThat(REFUSED).hasSizeGreaterThanOrEqualTo(80);
        String hostStateBefore = hostState();

        Report report = runAll(REFUSED, "state > /tmp/state-before",
                "state > /tmp/state-after; cmp -s /tmp/state-before /tmp/state-after && echo STATE-UNCHANGED");

        assertThat(report.stdout()).as("the repository as seen inside").contains("STATE-UNCHANGED");
        SoftAssertions soft = new SoftAssertions();
        report.lines().forEach(e -> {
            String line = e.getKey();
            String[] r = e.getValue();
            // 1, or git's own failure status when a git it started was refused (submodule foreach)
            soft.assertThat(r[0]).as("exit status of: " + line + " (stderr: " + r[1] + ")")
                    .isEqualTo(line.contains(" foreach ") ? "128" : "1");
            soft.assertThat(r[1]).as("refusal of: " + line)
                    .startsWith("agent-sandbox: ")
                    .contains("is not allowed in this sandbox");
        });
        soft.assertAll();
        assertThat(hostState()).as("the repository on the host").isEqualTo(hostStateBefore);
    }

    @Test
    void Allows_Everyday_Work_Including_Anything_In_A_Throw_Away_Repository_Under_Tmp() {
        assertThat(ALLOWED).hasSizeGreaterThanOrEqualTo(80);

        Report report = runAll(ALLOWED, "", "");

        SoftAssertions soft = new SoftAssertions();
        report.lines().forEach(e -> soft.assertThat(e.getValue()[0])
                .as("exit status of: " + e.getKey() + " (stderr: " + e.getValue()[1] + ")").isEqualTo("0"));
        soft.assertAll();
        assertThat(sandbox.runOnHost("git", "--git-dir", remote.toString(), "log", "--format=%s", "-1", "main")
                .succeeds().stdout()).isEqualTo("ahead\n");
        // what the everyday commands made is there on the host
        assertThat(sandbox.runOnHost("git", "log", "--format=%s", "main").succeeds().stdout())
                .contains("reworked\n", "side\n", "Revert \"rm\"");
        assertThat(sandbox.runOnHost("git", "for-each-ref", "--format=%(refname)").succeeds().stdout())
                .contains("refs/heads/feature\n", "refs/heads/wt-a\n", "refs/tags/v2\n", "refs/stash\n",
                        "refs/notes/commits\n")
                .doesNotContain("refs/heads/side2", "refs/heads/merged\n");
    }

    @Test
    void A_Refusal_Names_The_Operation_The_Reason_And_The_Alternative() {
        // the refusal, then the run's one line that points to the denial log
        sandbox.run("--", "git", "push", "--force", "origin", "main")
                .exitsWith(1)
                .stderrIs("agent-sandbox: git push --force is not allowed in this sandbox: it can overwrite commits on"
                        + " the remote; use git push --force-with-lease, or ask the user to push outside the sandbox\n"
                        + "agent-sandbox: this run refused 1 thing (1 git command); see them with: agent-sandbox log\n");
    }

    @Test
    void Push_Deleting_A_Remote_Branch_Is_Refused_And_The_Branch_Stays_While_A_Normal_Push_Runs() {
        sandbox.git("push", "-q", "origin", "feature:topic");
        String topic = sandbox.runOnHost("git", "--git-dir", remote.toString(), "rev-parse", "refs/heads/topic")
                .succeeds().stdout();

        Result r = sandbox.run("--rw", remote.toString(), "--", "sh", "-c", """
                for spelling in ':topic' ':refs/heads/topic' '+:topic' '--delete topic' '-d topic'; do
                  git push origin $spelling 2>&1 && echo "RAN: $spelling"
                done
                git -c user.name=t -c user.email=t@x commit -q --allow-empty -m pushed && git push -q origin main \
                  && echo NORMAL-PUSH-RAN
                """).succeeds();

        assertThat(r.stdout()).doesNotContain("RAN: ").contains("NORMAL-PUSH-RAN")
                .contains("agent-sandbox: git push :topic is not allowed in this sandbox: a refspec with nothing"
                        + " before the colon deletes that branch on the remote; leave the remote branch as it is,"
                        + " or ask the user to run this outside the sandbox")
                .contains("agent-sandbox: git push --delete is not allowed in this sandbox");
        assertThat(sandbox.runOnHost("git", "--git-dir", remote.toString(), "rev-parse", "refs/heads/topic")
                .succeeds().stdout()).as("the remote branch").isEqualTo(topic);
        assertThat(sandbox.runOnHost("git", "--git-dir", remote.toString(), "log", "--format=%s", "-1", "main")
                .succeeds().stdout()).isEqualTo("pushed\n");
    }

    @Test
    void The_Real_Git_Is_Only_Reachable_Under_The_Unlistable_Runtime() {
        sandbox.run("--", "sh", "-c", "head -c 4 /usr/bin/git | od -An -c; ls /run/agent-sandbox/real"
                        + " /run/agent-sandbox/cmd 2>&1; test -x /run/agent-sandbox/real/1/git && echo reachable")
                .succeeds()
                .stdoutContains("177   E   L   F", "Permission denied", "reachable");
    }

    @Test
    void Unwrapping_Git_Lets_Every_Operation_Through() {
        sandbox.run("--cmd", "git=true", "--", "git", "checkout", "-q", "--", "a.txt").succeeds();
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("first line\n");
    }

    @Test
    void Without_The_Guard_Process_Git_Is_Refused_Not_Run() {
        // The line --dry-run prints has no guard behind it: git must fail closed.
        sandbox.homesFallback(); // a pasted line has no layers made for it
        String line = sandbox.run("--dry-run", "--", "git", "status").succeeds().stdout().strip();
        // what the run would have created: its directory (private /tmp, stand-in file, the mounts' identities,
        // here none to check) and its sockets' one
        String id = line.replaceAll(".*agent-sandbox/run/([0-9a-f]{16}).*", "$1");
        String dir = sandbox.home(".local/state/agent-sandbox/run/" + id).toString();
        String sockets = "/tmp/agent-sandbox-" + sandbox.uid() + "/" + id;
        sandbox.runOnHost("sh", "-c", "mkdir -p -m 700 " + dir + "/tmp " + sockets + "/guard " + sockets + "/net && : > "
                + dir + "/hidden && chmod 000 " + dir + "/hidden && : > " + dir + "/policy && : > " + dir + "/mounts && "
                + sandbox.gitViewFiles(dir) + " && " + line + "; s=$?; rm -rf " + dir + " " + sockets
                + "; exit $s")
                .fails()
                .stderrContains("git guard unavailable", "refusing to run git");
    }

    private String hostState() {
        List<String> parts = new ArrayList<>();
        parts.add(sandbox.runOnHost("git", "status", "--porcelain=v1").succeeds().stdout());
        parts.add(sandbox.runOnHost("git", "for-each-ref").succeeds().stdout());
        parts.add(sandbox.runOnHost("git", "stash", "list").succeeds().stdout());
        parts.add(sandbox.read(sandbox.project("a.txt")));
        parts.add(sandbox.read(sandbox.project("u.txt")));
        return String.join("\n--\n", parts);
    }
}
