// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class GitGuardTest {
    private static final String PROJECT = "/home/u/project";
    private static final String SCRATCH = "/tmp/scratch";

    /** Aliases the test repository defines (outside the sandbox). */
    private static final Map<String, String> ALIASES = Map.ofEntries(
            Map.entry("co", "checkout"),
            Map.entry("deep", "co"),
            Map.entry("nuke", "reset --hard"),
            Map.entry("wipe", "clean -fdx"),
            Map.entry("fp", "push --force"),
            Map.entry("ci", "commit"),
            Map.entry("cinv", "commit --no-verify"),
            Map.entry("drop", "stash drop"),
            Map.entry("redef", "-c core.hooksPath=/dev/null commit"),
            Map.entry("quoted", "commit -m 'a -n message'"),
            Map.entry("loop1", "loop2"),
            Map.entry("loop2", "loop1"),
            Map.entry("st", "status"),
            Map.entry("lg", "log --oneline --graph"),
            Map.entry("unstage", "reset HEAD --"),
            Map.entry("amend", "commit --amend --no-edit"),
            Map.entry("sh", "!git checkout ."),
            Map.entry("ext", "checkout"),
            Map.entry("keep", "stash -u"));

    /** Programs named git-NAME that git would run for "git NAME". */
    private static final Set<String> EXTERNAL = Set.of("lfs", "ext");

    /**
     * The sandbox as the guard sees it: paths resolve lexically, git finds no repository
     * (so the names given decide), every path in /tmp is or is not in the private temp
     * dir, HOME is /home/u, and git's config holds {@link #ALIASES}.
     */
    record TestProbe(boolean throwAway) implements GitGuard.Probe {
        @Override
        public Optional<String> realPath(String path) {
            return Optional.of(Path.of(path).normalize().toString());
        }

        @Override
        public GitGuard.GitRun git(List<String> args) {
            int config = args.indexOf("config");
            if (config >= 0 && args.size() == config + 3 && args.get(config + 1).equals("--get")) {
                String alias = ALIASES.get(args.get(config + 2).substring("alias.".length()));
                return alias == null ? new GitGuard.GitRun(1, "") : new GitGuard.GitRun(0, alias + "\n");
            }
            if (args.contains("--list-cmds=main,others")) {
                return new GitGuard.GitRun(0, "add\ncommit\n" + String.join("\n", EXTERNAL) + "\n");
            }
            if (args.contains("rev-parse") && args.contains("--verify")) {
                // the branches of the repository: one named "existing"
                return new GitGuard.GitRun(args.getLast().equals("refs/heads/existing") ? 0 : 1, "");
            }
            if (args.contains("rev-parse")) {
                return new GitGuard.GitRun(128, "");
            }
            throw new AssertionError("unexpected question " + args);
        }

        @Override
        public boolean inPrivateTemp(String resolved) {
            return throwAway;
        }


        @Override
        public String sandboxEnv(String name) {
            return Map.of("HOME", "/home/u").get(name);
        }
    }

    // ------------------------------------------------------------------ tables

    /** Refused command lines and the operation the refusal names. None points outside the current dir. */
    private static final String REFUSED = """
            # checkout, in any form and from any entry point
            git checkout main                                 | git checkout
            git checkout -b feature -- file.txt               | git checkout
            git checkout -b feature main file.txt             | git checkout
            git checkout -fb feature                          | git checkout
            git checkout -b feature -f                        | git checkout
            git checkout -p -b feature                        | git checkout
            git checkout -b feature --ours                    | git checkout
            git checkout -b                                   | git checkout
            git checkout -b one -B two                        | git checkout
            git checkout -B existing                          | git checkout -B
            git checkout -B existing main                     | git checkout -B
            git co -B existing                                | git checkout -B
            git checkout -- file.txt                          | git checkout
            git checkout .                                    | git checkout
            git checkout -f                                   | git checkout
            git checkout HEAD~1 -- src                        | git checkout
            git checkout -p                                   | git checkout
            git-checkout main                                 | git checkout
            /usr/lib/git-core/git-checkout .                  | git checkout
            /usr/bin/git checkout .                           | git checkout
            xgit checkout .                                   | git checkout
            # global options before the subcommand
            git -C . checkout .                               | git checkout
            git -C sub -C .. checkout .                       | git checkout
            git -C '' checkout .                              | git checkout
            git --no-pager checkout .                         | git checkout
            git -P checkout .                                 | git checkout
            git -p checkout .                                 | git checkout
            git --paginate checkout .                         | git checkout
            git --bare checkout .                             | git checkout
            git --git-dir=.git checkout .                     | git checkout
            git --git-dir .git --work-tree . checkout .       | git checkout
            git --work-tree=. checkout .                      | git checkout
            git --namespace x checkout .                      | git checkout
            git --namespace=x checkout .                      | git checkout
            git --literal-pathspecs checkout .                | git checkout
            git --no-replace-objects checkout .               | git checkout
            git -c user.name=x checkout .                     | git checkout
            git --exec-path=/usr/lib/git-core checkout .      | git checkout
            git --shallow-file .git/shallow checkout .        | git checkout
            git --super-prefix x/ checkout .                  | git checkout
            # aliases expanding to a refused operation
            git co main                                       | git checkout
            git deep .                                        | git checkout
            git -C . co                                       | git checkout
            git loop1                                         | git loop1
            # restore
            git restore file.txt                              | git restore
            git restore --staged --worktree file.txt          | git restore
            git restore -W -S file.txt                        | git restore
            git restore -s HEAD~1 .                           | git restore
            git -C . restore .                                | git restore
            git-restore .                                     | git restore
            # reset --hard
            git reset --hard                                  | git reset --hard
            git reset --hard HEAD~1                           | git reset --hard
            git reset --har                                   | git reset --hard
            git reset --ha origin/main                        | git reset --hard
            git reset --h                                     | git reset --hard
            git reset HEAD~1 --hard                           | git reset --hard
            git reset -q --hard                               | git reset --hard
            git reset --quiet --hard @{u}                     | git reset --hard
            git reset --soft --hard                           | git reset --hard
            git reset --hard --                               | git reset --hard
            /usr/lib/git-core/git-reset --hard                | git reset --hard
            git nuke                                          | git reset --hard
            # clean with force (a forced dry run too)
            git clean -f                                      | git clean with force
            git clean -fd                                     | git clean with force
            git clean -dfx                                    | git clean with force
            git clean -xdf                                    | git clean with force
            git clean -fdX                                    | git clean with force
            git clean -ff                                     | git clean with force
            git clean --force                                 | git clean with force
            git clean --forc                                  | git clean with force
            git clean --f                                     | git clean with force
            git clean -d --force                              | git clean with force
            git clean -n -f                                   | git clean with force
            git clean -q -f                                   | git clean with force
            git clean -e '*.log' -f                           | git clean with force
            git clean --exclude=-n -f                         | git clean with force
            git clean build -f                                | git clean with force
            git clean -f -- build                             | git clean with force
            git wipe                                          | git clean with force
            # commit --no-verify
            git commit -n                                     | git commit --no-verify
            git commit -n -m msg                              | git commit --no-verify
            git commit -nm msg                                | git commit --no-verify
            git commit -anm msg                               | git commit --no-verify
            git commit -am msg -n                             | git commit --no-verify
            git commit -qn                                    | git commit --no-verify
            git commit -sn -m msg                             | git commit --no-verify
            git commit --no-verify                            | git commit --no-verify
            git commit --no-verif -m msg                      | git commit --no-verify
            git commit --no-veri -m msg                       | git commit --no-verify
            git commit --no-ver -m msg                        | git commit --no-verify
            git commit -m msg --no-verify                     | git commit --no-verify
            git commit file.txt -n -m msg                     | git commit --no-verify
            git commit -m '-n fix' -n                         | git commit --no-verify
            git commit --amend --no-edit -n                   | git commit --no-verify
            git commit -u -n                                  | git commit --no-verify
            git commit -S -n                                  | git commit --no-verify
            git commit --verify -n                            | git commit --no-verify
            git-commit -n -m msg                              | git commit --no-verify
            git ci -n                                         | git commit --no-verify
            git cinv -m msg                                   | git commit --no-verify
            git amend -n                                      | git commit --no-verify
            # --no-verify of push, merge, pull, am, rebase
            git push --no-verify                              | git push --no-verify
            git push origin main --no-verify                  | git push --no-verify
            git push --no-verif origin                        | git push --no-verify
            git merge --no-verify feature                     | git merge --no-verify
            git merge feature --no-verify                     | git merge --no-verify
            git merge --no-verif feature                      | git merge --no-verify
            git pull --no-verify                              | git pull --no-verify
            git pull --rebase --no-verify                     | git pull --no-verify
            git pull --jobs --no-verify                       | git pull --no-verify
            git pull -j --no-verify                           | git pull --no-verify
            git am --no-verify x.patch                        | git am --no-verify
            git am -n x.patch                                 | git am --no-verify
            git am -3n x.patch                                | git am --no-verify
            git am -Cn -p1 -n x.patch                         | git am --no-verify
            git rebase --no-verify main                       | git rebase --no-verify
            git rebase main --no-verify                       | git rebase --no-verify
            git rebase -i --no-verify HEAD~3                  | git rebase --no-verify
            # stash drop, clear, pop
            git stash drop                                    | git stash drop
            git stash drop stash@{1}                          | git stash drop
            git stash clear                                   | git stash clear
            git stash pop                                     | git stash pop
            git stash pop --index                             | git stash pop
            git stash -q pop                                  | git stash pop
            git stash --quiet drop                            | git stash drop
            git drop                                          | git stash drop
            # branch -D and its equivalents
            git branch -D topic                               | git branch -D
            git branch --delete --force topic                 | git branch -D
            git branch -d -f topic                            | git branch -D
            git branch -df topic                              | git branch -D
            git branch -fd topic                              | git branch -D
            git branch --force -d topic                       | git branch -D
            git branch --del --forc topic                     | git branch -D
            git branch -d topic -f                            | git branch -D
            git branch topic -D                               | git branch -D
            git branch -qD topic                              | git branch -D
            git branch -rD origin/topic                       | git branch -D
            git branch -D -r origin/topic                     | git branch -D
            git branch --contains HEAD -D topic               | git branch -D
            # push --force, -f, a + refspec, --mirror
            git push --force                                  | git push --force
            git push -f                                       | git push --force
            git push -fu origin main                          | git push --force
            git push -uf origin main                          | git push --force
            git push -qf                                      | git push --force
            git push --forc                                   | git push --force
            git push --force origin main                      | git push --force
            git push origin main --force                      | git push --force
            git push --force --force-with-lease               | git push --force
            git push origin +main                             | git push +main
            git push origin +HEAD:main                        | git push +HEAD:main
            git push origin main +dev:dev                     | git push +dev:dev
            git push -- origin +main                          | git push +main
            git push --mirror                                 | git push --mirror
            git push --mir origin                             | git push --mirror
            # deleting a remote branch: --delete, -d, a refspec with no source, --prune
            git push --delete origin topic                    | git push --delete
            git push origin --delete topic                    | git push --delete
            git push origin topic --delete                    | git push --delete
            git push -d origin topic                          | git push --delete
            git push -ud origin topic                         | git push --delete
            git push --del origin topic                       | git push --delete
            git push --repo=origin --delete topic             | git push --delete
            git push origin --delete refs/heads/topic         | git push --delete
            git push origin tag v1 --delete                   | git push --delete
            git push --force-with-lease --delete origin topic | git push --delete
            git push origin :topic                            | git push :topic
            git push origin :refs/heads/topic                 | git push :refs/heads/topic
            git push origin main :topic                       | git push :topic
            git push origin main:main :a :b                   | git push :a
            git push -- origin :topic                         | git push :topic
            git push --force-with-lease origin :topic         | git push :topic
            git push origin +:topic                           | git push +:topic
            git push --prune origin                           | git push --prune
            git push --prune origin refs/heads/*:refs/heads/* | git push --prune
            git push --all --prune                            | git push --prune
            # rewriting a remote branch: every force but a lease alone
            git push --all --force                            | git push --force
            git push --branches -f                            | git push --force
            git push --tags --force                           | git push --force
            git push --force-with-lease --force origin main   | git push --force
            git push --force-if-includes -f                   | git push --force
            git push --force-with-lease origin +main          | git push +main
            git push origin +:                                | git push +:
            git push origin +refs/heads/*:refs/heads/*        | git push +refs/heads/*:refs/heads/*
            git send-pack --force ../r main                   | git send-pack --force
            git send-pack --mirror ../r                       | git send-pack --mirror
            git send-pack ../r :topic                         | git send-pack
            git send-pack ../r +main                          | git send-pack
            git send-pack --stdin ../r                        | git send-pack --stdin
            git http-push --force https://x/r main            | git http-push
            git http-push -d https://x/r topic                | git http-push
            git http-push https://x/r :topic                  | git http-push
            git -c remote.origin.push=:refs/heads/topic push  | git -c remote.origin.push=:refs/heads/topic
            git -c Remote.origin.Push=+main:main push         | git -c Remote.origin.Push=+main:main
            git --config-env=remote.origin.push=V push        | git --config-env remote.origin.push=V
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.push GIT_CONFIG_VALUE_0=+main:main git push | git with GIT_CONFIG_KEY_0=remote.origin.push
            # local history: expiring reflogs, pruning unreachable commits now
            git -c gc.reflogExpire=now -c gc.reflogExpireUnreachable=now -c gc.pruneExpire=now gc | git -c gc.reflogExpire=now
            git -c gc.pruneExpire=now gc                      | git -c gc.pruneExpire=now
            git -c gc.reflogExpireUnreachable=now commit -m x | git -c gc.reflogExpireUnreachable=now
            git -c gc.refs/heads/*.reflogExpire=now gc        | git -c gc.refs/heads/*.reflogExpire=now
            git -c GC.WorktreePruneExpire=now gc              | git -c GC.WorktreePruneExpire=now
            git -c gc.auto=1 -c gc.pruneExpire=now commit -m x | git -c gc.pruneExpire=now
            GIT_CONFIG_PARAMETERS="'gc.pruneExpire'='now'" git gc | git with GIT_CONFIG_PARAMETERS gc.pruneExpire=now
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=gc.reflogExpire GIT_CONFIG_VALUE_0=now git gc | git with GIT_CONFIG_KEY_0=gc.reflogExpire
            git gc --prune=now                                | git gc --prune=now
            git gc --prune=all                                | git gc --prune=all
            git gc --pru=now                                  | git gc --prune=now
            git gc --aggressive --prune=1.second.ago          | git gc --prune=1.second.ago
            git prune                                         | git prune
            git prune --expire=now                            | git prune
            git prune --expire now -v                         | git prune
            git repack -a -d                                  | git repack -a -d
            git repack -ad                                    | git repack -a -d
            git repack -adf                                   | git repack -a -d
            git repack -A -d --unpack-unreachable=now         | git repack --unpack-unreachable
            git repack --cruft -d --cruft-expiration=now      | git repack --cruft-expiration
            git fast-import                                   | git fast-import
            git fast-import --force                           | git fast-import
            git fast-import --quiet --force                   | git fast-import
            # fetch or pull overwriting or deleting local branches and tags
            git fetch . +refs/heads/old:refs/heads/keep       | git fetch +refs/heads/old:refs/heads/keep
            git fetch origin +main:main                       | git fetch +main:main
            git fetch --force . old:keep                      | git fetch --force old:keep
            git fetch -f origin main:main                     | git fetch --force main:main
            git fetch origin +refs/heads/*:refs/heads/*       | git fetch +refs/heads/*:refs/heads/*
            git fetch origin refs/heads/*:refs/heads/*        | git fetch refs/heads/*:refs/heads/*
            git fetch --prune origin main:main                | git fetch --prune main:main
            git fetch origin --refmap=+refs/heads/*:refs/heads/* main | git fetch +refs/heads/*:refs/heads/*
            git fetch origin +v1:refs/tags/v1                 | git fetch +v1:refs/tags/v1
            git fetch --stdin origin                          | git fetch --stdin
            git fetch --prune-tags origin                     | git fetch --prune-tags
            git fetch -pP                                     | git fetch --prune-tags
            git fetch --tags --force                          | git fetch --tags --force
            git fetch -ft                                     | git fetch --tags --force
            git pull origin +main:main                        | git pull +main:main
            git pull --force . old:keep                       | git pull --force old:keep
            git -c remote.origin.fetch=+refs/heads/*:refs/heads/* fetch | git -c remote.origin.fetch=+refs/heads/*:refs/heads/*
            git -c fetch.pruneTags=true fetch -p              | git -c fetch.pruneTags=true
            # discarding work tree changes, by porcelain and plumbing
            git switch -f main                                | git switch --discard-changes
            git switch --discard-changes main                 | git switch --discard-changes
            git switch --discard main                         | git switch --discard-changes
            git switch -C main                                | git switch -C
            git checkout-index -f -a                          | git checkout-index -f
            git checkout-index -af                            | git checkout-index -f
            git read-tree -u --reset HEAD                     | git read-tree -u --reset
            git read-tree --reset -u HEAD                     | git read-tree -u --reset
            git rm -f a.txt                                   | git rm -f
            git rm -rf src                                    | git rm -f
            git mv -f a.txt b.txt                             | git mv -f
            git clean -i                                      | git clean -i
            git clean -d                                      | git clean
            git clean                                         | git clean
            git worktree remove --force ../wt                 | git worktree remove --force
            git worktree remove -f ../wt                      | git worktree remove --force
            # deleting or moving refs and reflogs
            git reflog delete --updateref refs/stash@{0}      | git reflog delete
            git reflog expire --expire=now --all              | git reflog expire
            git update-ref -d refs/stash                      | git update-ref
            git update-ref -d refs/heads/x                    | git update-ref
            git update-ref refs/heads/main HEAD~1             | git update-ref
            git update-ref --stdin                            | git update-ref
            git branch -f name                                | git branch -f
            git branch -f name main                           | git branch -f
            git branch --force name main                      | git branch -f
            git branch -M old main                            | git branch -M
            git branch -m -f old main                         | git branch -M
            git branch -C old main                            | git branch -M
            git tag -f v1                                     | git tag -f
            git tag -d v1                                     | git tag -d
            git tag --delete v1                               | git tag -d
            git symbolic-ref HEAD refs/heads/other            | git symbolic-ref
            git symbolic-ref -d HEAD                          | git symbolic-ref
            git worktree add -B main ../wt                    | git worktree add -B
            git filter-branch --all                           | git filter-branch
            # commits without the hooks
            git commit-tree -m x HEAD^{tree}                  | git commit-tree
            # inline config that runs programs
            git -c core.fsmonitor=./x.sh status               | git -c core.fsmonitor=./x.sh
            git -c filter.lfs.smudge=./x.sh checkout-index -a | git -c filter.lfs.smudge=./x.sh
            git -c diff.external=./x.sh diff                  | git -c diff.external=./x.sh
            git fp                                            | git push --force
            # inline config that redefines commands or skips hooks
            git -c alias.x=checkout x                         | git -c alias.x=checkout
            git -c Alias.X=checkout status                    | git -c Alias.X=checkout
            git -c ALIAS.co=checkout co                       | git -c ALIAS.co=checkout
            git -c user.name=x -c alias.st=status st          | git -c alias.st=status
            git -c core.hooksPath=/dev/null commit -m msg     | git -c core.hooksPath=/dev/null
            git -c CORE.HOOKSPATH=/dev/null commit            | git -c CORE.HOOKSPATH=/dev/null
            git -c core.hooksPath commit                      | git -c core.hooksPath
            git --config-env=alias.co=VAR co                  | git --config-env alias.co=VAR
            git --config-env alias.co=VAR co                  | git --config-env alias.co=VAR
            git --config-env=core.hooksPath=HOOKS commit      | git --config-env core.hooksPath=HOOKS
            git -c include.path=/tmp/x status                 | git -c include.path=/tmp/x
            git -c clean.requireForce=false clean             | git -c clean.requireForce=false
            git -c Clean.RequireForce=0 clean -d              | git -c Clean.RequireForce=0
            git -c remote.origin.mirror=true push origin      | git -c remote.origin.mirror=true
            git -c remote.origin.push=+refs/heads/*:refs/heads/* push | git -c remote.origin.push=+refs/heads/*:refs/heads/*
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=clean.requireForce GIT_CONFIG_VALUE_0=false git clean | git with GIT_CONFIG_KEY_0=clean.requireForce
            GIT_CONFIG_PARAMETERS="'remote.origin.mirror'='true'" git push | git with GIT_CONFIG_PARAMETERS remote.origin.mirror=true
            git -c includeIf.gitdir:/home/.path=/tmp/x status | git -c includeIf.gitdir:/home/.path=/tmp/x
            git redef -m msg                                  | git -c core.hooksPath=/dev/null
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.co GIT_CONFIG_VALUE_0=checkout git co | git with GIT_CONFIG_KEY_0=alias.co
            GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_KEY_1=core.hooksPath git commit | git with GIT_CONFIG_KEY_1=core.hooksPath
            GIT_CONFIG_COUNT=x git status                     | git with GIT_CONFIG_COUNT=x
            GIT_CONFIG_PARAMETERS="'alias.co'='checkout'" git co | git with GIT_CONFIG_PARAMETERS alias.co=checkout
            GIT_CONFIG_PARAMETERS="'alias.co=checkout'" git co   | git with GIT_CONFIG_PARAMETERS alias.co=checkout
            GIT_CONFIG_PARAMETERS="'user.name'='x' 'Core.HooksPath'='/dev/null'" git commit | git with GIT_CONFIG_PARAMETERS Core.HooksPath=/dev/null
            GIT_CONFIG_PARAMETERS="'alias.co" git status      | git with GIT_CONFIG_PARAMETERS
            GIT_CONFIG_GLOBAL=/tmp/x git status               | git with GIT_CONFIG_GLOBAL=/tmp/x
            GIT_CONFIG_SYSTEM=/tmp/x git status               | git with GIT_CONFIG_SYSTEM=/tmp/x
            HOME=/tmp/home git status                         | git with HOME=/tmp/home
            XDG_CONFIG_HOME=/tmp/cfg git status               | git with XDG_CONFIG_HOME=/tmp/cfg
            """;

    /** Refused even where the directory or repository is a throw-away one in temp: git is pointed elsewhere. */
    private static final String REFUSED_ELSEWHERE = """
            # cwd            | command line                                                  | operation
            /tmp/scratch     | git -C /home/u/project checkout .                             | git checkout
            /tmp/scratch     | git -C ../../home/u/project reset --hard                      | git reset --hard
            /tmp/scratch     | git --git-dir=/home/u/project/.git --work-tree=/home/u/project reset --hard | git reset --hard
            /tmp/scratch     | git --git-dir=/home/u/project/.git clean -fdx                 | git clean with force
            /tmp/scratch     | git --work-tree=/home/u/project reset --hard                  | git reset --hard
            /tmp/scratch     | git --git-dir=.git -C /home/u/project clean -fdx              | git clean with force
            /tmp/scratch     | git --work-tree=. -C /home/u/project checkout .               | git checkout
            /tmp/scratch     | GIT_DIR=/home/u/project/.git git reset --hard                 | git reset --hard
            /tmp/scratch     | GIT_WORK_TREE=/home/u/project git clean -fdx                  | git clean with force
            /tmp/scratch     | GIT_COMMON_DIR=/home/u/project/.git git branch -D topic       | git branch -D
            /tmp/scratch     | GIT_INDEX_FILE=/home/u/project/.git/index git reset --hard    | git reset --hard
            /tmp/scratch     | git -C /home/u/project -c alias.co=checkout co                | git -c alias.co=checkout
            /home/u/project  | git --git-dir=/tmp/scratch/.git reset --hard                  | git reset --hard
            /home/u/project  | GIT_DIR=/tmp/scratch/.git git checkout .                      | git checkout
            /home/u/project  | GIT_WORK_TREE=/tmp/scratch git stash drop                     | git stash drop
            /home/u/project  | git --work-tree=/tmp/scratch branch -D topic                  | git branch -D
            /home/u/project  | git -C /tmp/scratch/../../home/u/project checkout .           | git checkout
            /home/u/project  | git -C /tmpfoo checkout .                                     | git checkout
            /tmpfoo          | git reset --hard                                              | git reset --hard
            """;

    /** Allowed command lines, run from a real (not throw-away) project. */
    private static final String ALLOWED = """
            git status
            git checkout -b feature
            git checkout -b feature origin/main
            git checkout -qb feature
            git checkout --track -b feature origin/feature
            git checkout -b feature --no-track main
            git -C . checkout -b feature
            git checkout -B fresh
            git checkout -B fresh main
            git log --oneline
            git diff HEAD
            git add -A
            git add -f ignored.txt
            git commit -m msg
            git commit -m '-n fix'
            git commit -m -n
            git commit -mn
            git commit -am -n
            git commit -F -n
            git commit --message=-n
            git commit --verify -m msg
            git commit --veri -m msg
            git commit --no-no-verify -m msg
            git commit -m msg -- -n
            git commit -m msg --end-of-options -n
            git commit -C HEAD --reset-author
            git commit --fixup -n
            git -c user.name=x commit -m m
            git switch main
            git switch -c feature
            git branch -d topic
            git branch --delete topic
            git restore --staged file.txt
            git restore -S .
            git rm --cached file.txt
            git rm --cached -f file.txt
            git rm file.txt
            git mv a.txt b.txt
            git tag v1
            git tag -l
            git tag -a v2 -m msg
            git symbolic-ref HEAD
            git symbolic-ref --short HEAD
            git symbolic-ref -q HEAD
            git reflog
            git reflog show main
            git read-tree HEAD
            git read-tree -m -u HEAD
            git checkout-index -a
            git switch -c other
            git switch --detach HEAD~1
            git worktree add ../wt
            git worktree add -b topic ../wt
            git worktree remove ../wt
            git write-tree
            git -c core.editor=true commit
            git -c core.pager=cat log
            git -c protocol.file.allow=always submodule update
            git branch -m old new
            git branch --contains HEAD
            git branch -d -- -D
            git stash
            git stash push -m msg
            git stash apply
            git stash apply stash@{1}
            git stash list
            git stash show -p
            git stash -- pop
            git stash push pop
            git reset --soft HEAD~1
            git reset HEAD file
            git reset
            git reset --keep HEAD~1
            git reset -- --hard
            git clean -n
            git clean -dn
            git clean --dry-run -d -x
            git clean -e -f -n
            git push
            git push origin main
            git push -u origin main
            git push --force-with-lease
            git push --force-with-lease=main
            git push --force-with-lease=main:abc123 origin main
            git push --force-w
            git push --force-with-lease --force-if-includes
            git push origin :
            git push origin main:main
            git push origin HEAD:refs/heads/topic
            git push --all
            git push --tags
            git push --follow-tags origin main
            git push --force-with-lease origin main
            git push --force-with-lease=main:abc123 --force-if-includes origin main
            git push --no-force origin main
            git push --repo=origin
            git gc
            git gc --auto
            git gc --aggressive
            git gc --prune
            git gc --no-prune
            git gc --cruft
            git prune -n
            git prune --dry-run --expire=now
            git repack -d
            git repack -A -d
            git repack -a -A -d
            git repack -ad --cruft
            git repack -adk
            git repack -a
            git fetch origin main:main
            git fetch . topic:main
            git fetch origin main
            git fetch origin +refs/heads/*:refs/remotes/origin/*
            git fetch origin +main:refs/remotes/origin/main
            git fetch --force origin main:refs/remotes/origin/main
            git fetch origin refs/heads/*:refs/remotes/origin/*
            git fetch origin main:
            git fetch --prune origin
            git fetch -p
            git fetch --tags
            git fetch --all --prune
            git fetch --multiple origin upstream
            git fetch -u origin main:main
            git fetch origin ^refs/heads/wip
            git pull --ff-only
            git pull origin main
            git pull --rebase origin main
            git pull --force
            git pull --prune
            git -c gc.auto=0 commit -m x
            git -c fetch.prune=true fetch
            git -c push.default=current push
            git push -o -f
            git push --verify
            git fetch
            git fetch --force
            git pull
            git pull --rebase
            git pull --verify
            git pull -n
            git merge -n feature
            git merge --no-stat feature
            git merge --no-ff feature
            git merge --abort
            git rebase -n main
            git rebase --continue
            git am x.patch
            git am -C -n x.patch
            git --version
            git -v
            git version
            git --help
            git -h
            git help checkout
            git --help checkout
            git --exec-path
            git checkout --help
            git reset --help --hard
            git co --help
            git
            git-receive-pack /home/u/project
            git-upload-pack /home/u/project
            /usr/lib/git-core/git-upload-archive /home/u/project
            git st
            git lg
            git unstage file.txt
            git quoted
            git sh
            git ext
            git lfs pull
            git frobnicate --force
            git -C /tmp/scratch status
            GIT_CONFIG_PARAMETERS="'user.name'='x' 'core.editor'='vi'" git commit -m msg
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=user.email GIT_CONFIG_VALUE_0=x@y git commit -m msg
            GIT_CONFIG_COUNT=0 git status
            GIT_CONFIG_GLOBAL=/dev/null git status
            HOME=/home/u git status
            """;

    /** Throw-away repositories in temp, named from anywhere: nothing is refused. */
    private static final String ALLOWED_THROW_AWAY = """
            # cwd            | command line
            /home/u/project  | git -C /tmp/scratch reset --hard
            /home/u/project  | git -C /tmp checkout .
            /home/u/project  | git --git-dir=/tmp/scratch/.git --work-tree=/tmp/scratch clean -fdx
            /home/u/project  | GIT_DIR=/tmp/scratch/.git GIT_WORK_TREE=/tmp/scratch git branch -D topic
            /home/u/project  | git -C /tmp/scratch --git-dir=.git checkout .
            /tmp/scratch     | git --git-dir=../other/.git reset --hard
            /tmp/scratch     | GIT_COMMON_DIR=/tmp/main/.git git branch -D topic
            /tmp/scratch     | git -c alias.co=checkout co
            /tmp/scratch     | HOME=/tmp/home git push --force
            """;

    /** The refused lines that delete or overwrite something on a remote. */
    private static final Pattern REMOTE_EFFECT = Pattern.compile(
            "^(git (push|send-pack|http-push) |git fp$|.*(?i:remote\\.origin\\.(push|mirror)))");

    // ------------------------------------------------------------------ tests

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void Refuses_Every_Spelling_Of_The_Refused_Operations(String line, String operation) {
        assertRefuses(decide(PROJECT, line, false), operation);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void Refusal_Is_One_Line_Naming_The_Operation_The_Reason_And_A_Safer_Way(String line, String operation) {
        GitGuard.Decision decision = decide(PROJECT, line, false);
        assertThat(decision).isInstanceOf(GitGuard.Decision.Deny.class);
        assertThat(((GitGuard.Decision.Deny) decision).message()).doesNotContain("\n")
                .matches(Pattern.quote(operation) + " is not allowed in this sandbox: [^;]+; .+");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void Refuses_The_Same_In_Temp_When_The_Repository_Is_Not_Throw_Away(String line, String operation) {
        assertRefuses(decide(SCRATCH, line, false), operation);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void Allows_Every_Refused_Operation_In_A_Throw_Away_Repository_In_Temp(String line, String operation) {
        GitGuard.Decision d = decide(SCRATCH, line, true);
        if (REMOTE_EFFECT.matcher(line).find() && !line.contains("--no-verif")) {
            assertRefuses(d, operation); // the remote is no throw-away
        } else {
            assertThat(d).isInstanceOf(GitGuard.Decision.Allow.class);
        }
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("refusedElsewhere")
    void Refuses_When_Git_Is_Pointed_At_A_Repository_Outside_Temp(String cwd, String line, String operation) {
        assertRefuses(decide(cwd, line, true), operation);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("allowed")
    void Allows_Commands_That_Neither_Destroy_Work_Nor_Skip_Hooks(String line) {
        assertThat(decide(PROJECT, line, false)).isInstanceOf(GitGuard.Decision.Allow.class);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("allowedThrowAway")
    void Allows_Throw_Away_Repositories_In_Temp_However_They_Are_Named(String cwd, String line) {
        assertThat(decide(cwd, line, true)).isInstanceOf(GitGuard.Decision.Allow.class);
    }

    @Test
    void Checks_Every_Config_Key_From_The_Environment_However_Many_There_Are() {
        Map<String, String> env = new HashMap<>(Map.of("HOME", "/home/u"));
        int n = 20_000;
        env.put("GIT_CONFIG_COUNT", Integer.toString(n));
        for (int k = 0; k < n; k++) {
            env.put("GIT_CONFIG_KEY_" + k, "user.k" + k);
            env.put("GIT_CONFIG_VALUE_" + k, "v");
        }
        env.put("GIT_CONFIG_KEY_" + (n - 1), "alias.co");
        GitGuard.Request request = new GitGuard.Request(List.of("git", "co"), PROJECT, env);

        assertRefuses(GitGuard.decide(request, new TestProbe(false)),
                "git with GIT_CONFIG_KEY_" + (n - 1) + "=alias.co");
    }

    @Test
    void Stops_At_The_First_Missing_Config_Key_Like_Git_Which_Then_Runs_Nothing() {
        Map<String, String> env = Map.of("HOME", "/home/u", "GIT_CONFIG_COUNT", "1000000000",
                "GIT_CONFIG_KEY_0", "user.name", "GIT_CONFIG_VALUE_0", "x");
        GitGuard.Request request = new GitGuard.Request(List.of("git", "status"), PROJECT, env);

        assertThat(GitGuard.decide(request, new TestProbe(false))).isInstanceOf(GitGuard.Decision.Allow.class);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "checkout|checkout",
        "reset --hard|reset,--hard",
        "commit -m 'a b'|commit,-m,a b",
        "commit -m \"it's\"|commit,-m,it's",
        "log --format=\"%h %s\"|log,--format=%h %s",
        "say a\\ b|say,a b",
        "  spaced   out  |spaced,out",
    })
    void Splits_An_Alias_Like_Git(String alias, String words) {
        assertThat(GitCommand.splitAlias(alias)).containsExactly(words.split(","));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "'alias.co'='checkout'|alias.co=checkout",
        "'alias.co=checkout'|alias.co=checkout",
        "'a.b'='c' 'd.e'='f'|a.b=c,d.e=f",
        "'user.name'='it'\\''s'|user.name=it's",
    })
    void Reads_Git_Config_Parameters(String value, String words) {
        assertThat(GitCommand.shellWords(value)).containsExactly(words.split(","));
    }

    /** Git's own calls, by the command line of the git that makes them, and commands git runs for the caller. */
    private static final String PARENTS = """
            # parent's command line                      | child                                                  | allowed
            git stash -u                                 | git clean --force --quiet -d :/                        | yes
            git stash -u                                 | git reset --hard -q --no-recurse-submodules            | yes
            git stash -q -a                              | git clean --force --quiet -d :/ -x                     | yes
            git bisect--helper start HEAD HEAD~2         | git checkout -q 0123456789abcdef0123 --                | yes
            git stash push --keep-index                  | git checkout --no-overlay 0123456789abcdef0123 -- :/   | yes
            git stash branch sb                          | git checkout -b sb 0123456789abcdef0123                | yes
            git -C . stash                               | git reset --hard -q --no-recurse-submodules            | yes
            git keep                                     | git clean --force --quiet -d :/                        | yes
            git worktree add ../wt                       | git reset --hard --no-recurse-submodules               | yes
            git worktree add ../wt                       | git symbolic-ref HEAD refs/heads/wt                    | yes
            git worktree add -q ../wt                    | git symbolic-ref HEAD refs/heads/wt --quiet            | yes
            git worktree add -q ../wt                    | git reset --hard --no-recurse-submodules --quiet       | yes
            git bisect--helper reset                     | git checkout main --                                   | yes
            git submodule--helper update --init          | git checkout -q 0123456789abcdef0123                   | yes
            git gc                                       | git reflog expire --all                                | yes
            git gc                                       | git prune --expire 2.weeks.ago                         | yes
            git gc --auto                                | git repack -d -l -A --unpack-unreachable=2.weeks.ago   | yes
            git gc                                       | git repack -d -l --cruft --cruft-expiration=2.weeks.ago | yes
            git fetch hg::x                              | git fast-import --allow-unsafe-features --quiet        | yes
            git clone hg::x                              | git fast-import --allow-unsafe-features --stats --cat-blob-fd=5 | yes
            git cherry-pick feature                      | git commit -n --no-gpg-sign -F .git/MERGE_MSG --cleanup=verbatim --allow-empty-message | yes
            git rebase -i main                           | git commit -n -F /p/.git/rebase-merge/message --cleanup=strip | yes
            # commands the parent runs for the caller get every rule
            git stash -u                                 | git clean -fdx                                         | no
            git stash                                    | git reset --hard                                       | no
            git stash -p                                 | git reset --hard -q --no-recurse-submodules x.diff     | no
            git submodule--helper foreach git checkout -- a.txt | git checkout -- a.txt                           | no
            git submodule--helper foreach git branch -D x | git branch -D x                                       | no
            git submodule--helper update                 | git checkout -- a.txt                                  | no
            git rebase --exec 'git checkout -- a.txt' main | git checkout -- a.txt                                | no
            git rebase -x 'git reset --hard' main        | git reset --hard                                       | no
            git bisect--helper run git checkout -- a.txt | git checkout -- a.txt                                  | no
            git difftool -x 'git checkout --' HEAD       | git checkout -- a.txt                                  | no
            git sh                                       | git checkout .                                         | no
            git commit                                   | git commit -n --no-gpg-sign -F .git/MERGE_MSG --cleanup=verbatim | no
            git commit                                   | git commit -n -m x                                     | no
            git cherry-pick feature                      | git commit -n -m x                                     | no
            git worktree list                            | git reset --hard --no-recurse-submodules               | no
            git frobnicate                               | git reset --hard -q --no-recurse-submodules            | no
            git commit                                   | git prune                                              | no
            git fetch origin                             | git prune --expire now                                 | no
            git fetch hg::x                              | git fast-import --allow-unsafe-features --quiet --force | no
            git fetch hg::x                              | git fast-import --force                                | no
            """;

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @MethodSource("parents")
    void Tells_Gits_Own_Calls_From_Commands_Git_Runs_For_The_Caller(String parent, String child, String allowed) {
        GitGuard.Request request = new GitGuard.Request(words(child), PROJECT, Map.of("HOME", "/home/u"),
                "/run/agent-sandbox/real/1/git", words(parent));
        GitGuard.Decision d = GitGuard.decide(request, new TestProbe(false));
        assertThat(d).isInstanceOf(allowed.equals("yes") ? GitGuard.Decision.Allow.class : GitGuard.Decision.Deny.class);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/bin/sh", "/usr/bin/git", "/run/agent-sandbox/real/x/git", "/run/agent-sandbox/real/1",
        "/run/agent-sandbox/real/1/git/x", "/tmp/run/agent-sandbox/real/1/git", "relative/real/1/git"})
    void Only_A_Running_Real_Git_Makes_Gits_Own_Calls(String parentExe) {
        GitGuard.Request request = new GitGuard.Request(words("git reset --hard -q --no-recurse-submodules"),
                PROJECT, Map.of("HOME", "/home/u"), parentExe, words("git stash"));
        assertRefuses(GitGuard.decide(request, new TestProbe(false)), "git reset --hard");
    }

    @Test
    void A_Real_Git_Of_An_Outer_Sandbox_Is_A_Running_Git_Too() {
        assertThat(GitGuard.isRealBinary("/run/agent-sandbox/outer/outer/real/12/git")).isTrue();
        assertThat(GitGuard.isRealBinary("/run/agent-sandbox/real/1/git")).isTrue();
    }

    @Test
    void Refuses_An_Alias_Whose_Config_Git_Cannot_Read_In_Time() {
        GitGuard.Probe noAnswer = new GitGuard.Probe() {
            @Override
            public Optional<String> realPath(String path) {
                return Optional.of(path);
            }

            @Override
            public GitGuard.GitRun git(List<String> args) {
                return GitGuard.GitRun.NONE;
            }

            @Override
            public boolean inPrivateTemp(String resolved) {
                return false;
            }


            @Override
            public String sandboxEnv(String name) {
                return "/home/u";
            }
        };
        GitGuard.Request request = new GitGuard.Request(List.of("git", "co", "."), PROJECT, Map.of());
        assertRefuses(GitGuard.decide(request, noAnswer), "git co");
    }

    /**
     * A sandbox can write the git dir's {@code remotes/} and {@code branches/} files, which
     * git still reads for a remote the config does not define; their refspecs can force or
     * delete. Here {@code evil} is such a file, {@code origin} is not.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "git push evil                | git push evil",
        "git push evil main           | git push evil",
        "git push --repo=evil         | git push evil",
        "git fetch evil               | git fetch evil",
        "git fetch --multiple a evil  | git fetch evil",
        "git pull evil                | git pull evil",
        "git pull --rebase legacy     | git pull legacy",
        "git push origin main         | ",
        "git push                     | ",
        "git fetch                    | ",
        "git fetch --all              | ",
        "git push ../bare.git main    | ",
        "git pull origin main         | ",
    })
    void Push_Or_Fetch_Through_A_Remote_Defined_In_The_Git_Dirs_Files_Is_Refused(String line, String operation) {
        String gitDir = PROJECT + "/.git";
        Set<String> files = Set.of(gitDir + "/remotes/evil", gitDir + "/branches/legacy");
        GitGuard.Probe probe = new TestProbe(false);
        GitGuard.Probe legacy = new GitGuard.Probe() {
            @Override
            public Optional<String> realPath(String path) {
                return files.contains(path) ? Optional.of(path) : Optional.empty();
            }

            @Override
            public GitGuard.GitRun git(List<String> args) {
                assertThat(args).startsWith("rev-parse", "--path-format=absolute");
                StringBuilder out = new StringBuilder();
                for (int i = 0; i < args.size(); i++) {
                    if (args.get(i).equals("--git-path")) {
                        out.append(gitDir).append('/').append(args.get(++i)).append('\n');
                    }
                }
                return new GitGuard.GitRun(0, out.toString());
            }

            @Override
            public boolean inPrivateTemp(String resolved) {
                return false;
            }

            @Override
            public String sandboxEnv(String name) {
                return probe.sandboxEnv(name);
            }
        };
        GitGuard.Decision d = GitGuard.decide(new GitGuard.Request(words(line), PROJECT, Map.of("HOME", "/home/u")),
                legacy);
        if (operation == null) {
            assertThat(d).isInstanceOf(GitGuard.Decision.Allow.class);
        } else {
            assertRefuses(d, operation);
        }
    }

    @Test
    void Push_Refusals_Say_How_The_User_Does_It() {
        for (String line : List.of("git push origin --delete topic", "git push origin :topic", "git push --prune")) {
            assertThat(((GitGuard.Decision.Deny) decide(PROJECT, line, false)).message())
                    .endsWith("; " + GitRules.REMOTE_INSTEAD);
        }
        assertThat(((GitGuard.Decision.Deny) decide(PROJECT, "git push -f", false)).message())
                .contains("--force-with-lease").contains("outside the sandbox");
    }

    // ------------------------------------------------------------------ helpers

    static Stream<Arguments> parents() {
        return table(PARENTS);
    }

    static Stream<Arguments> refused() {
        return table(REFUSED);
    }

    static Stream<Arguments> refusedElsewhere() {
        return table(REFUSED_ELSEWHERE);
    }

    static Stream<Arguments> allowed() {
        return table(ALLOWED);
    }

    static Stream<Arguments> allowedThrowAway() {
        return table(ALLOWED_THROW_AWAY);
    }

    private static Stream<Arguments> table(String text) {
        return text.lines()
                .map(String::strip)
                .filter(line -> !line.isEmpty() && !line.startsWith("#"))
                .map(line -> Arguments.of((Object[]) Arrays.stream(line.split("\\|")).map(String::strip)
                        .toArray(String[]::new)));
    }

    /** Asserts a refusal that names this operation. */
    private static void assertRefuses(GitGuard.Decision decision, String operation) {
        assertThat(decision).isInstanceOf(GitGuard.Decision.Deny.class);
        assertThat(((GitGuard.Decision.Deny) decision).message())
                .startsWith(operation + " is not allowed in this sandbox: ");
    }

    /** Runs a shell-like command line: leading NAME=value words are the environment, the rest is argv. */
    private static GitGuard.Decision decide(String cwd, String line, boolean throwAway) {
        List<String> words = words(line);
        Map<String, String> env = new HashMap<>(Map.of("HOME", "/home/u", "PATH", "/usr/bin:/bin"));
        int i = 0;
        while (i < words.size() && words.get(i).matches("[A-Z_][A-Z0-9_]*=.*")) {
            String w = words.get(i++);
            env.put(w.substring(0, w.indexOf('=')), w.substring(w.indexOf('=') + 1));
        }
        GitGuard.Request request = new GitGuard.Request(words.subList(i, words.size()), cwd, env);
        return GitGuard.decide(request, new TestProbe(throwAway));
    }

    /** Splits like a shell: spaces, single and double quotes. */
    private static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (char c : line.toCharArray()) {
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else {
                    word.append(c);
                }
            } else if (c == ' ') {
                if (word != null) {
                    out.add(word.toString());
                    word = null;
                }
            } else {
                word = word == null ? new StringBuilder() : word;
                if (c == '\'' || c == '"') {
                    quote = c;
                } else {
                    word.append(c);
                }
            }
        }
        if (word != null) {
            out.add(word.toString());
        }
        return out;
    }
}
