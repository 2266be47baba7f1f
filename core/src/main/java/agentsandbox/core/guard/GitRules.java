// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.git.ObjectIds;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the {@code @git} guard refuses, decided by what a git operation does rather than
 * how it is spelled. Every operation git offers, porcelain or plumbing, has one or more
 * of these effects; an operation is refused when it has an effect that loses work or
 * history and no safer form of it was asked for:
 *
 * <ul>
 * <li>{@link Effect#WORK_TREE}: overwrites or deletes uncommitted files (checkout, restore,
 *     reset --hard, switch --discard-changes, checkout-index -f, read-tree -u --reset,
 *     rm -f, mv -f, clean, worktree remove --force);
 * <li>{@link Effect#REFS}: deletes or moves a branch, tag or HEAD by force (branch -D/-f/-M/-C,
 *     tag -f/-d, update-ref, symbolic-ref HEAD, switch -C, worktree add -B, filter-branch,
 *     fetch into a local branch by force, fast-import);
 * <li>{@link Effect#REFLOGS}: deletes the record that lets work be found again (reflog
 *     delete/expire/drop, stash drop/clear/pop, gc config that expires reflogs now);
 * <li>{@link Effect#OBJECTS}: deletes unreachable commits at once (prune, gc --prune=,
 *     repack -a -d);
 * <li>{@link Effect#REMOTE}: deletes or overwrites a branch on a remote (push --delete, :ref,
 *     --force, +ref, --mirror, --prune; send-pack, http-push);
 * <li>{@link Effect#HOOKS}: makes a commit or push without the project's hooks (--no-verify,
 *     commit-tree, core.hooksPath);
 * <li>{@link Effect#CONFIG}: changes, inline, what commands mean or runs programs
 *     (alias.*, include.*, core.fsmonitor, filter drivers, diff.external, ext transport …).
 * </ul>
 *
 * Index-only operations (reset, restore --staged, rm --cached, read-tree without -u) are
 * allowed: what they drop is still in the work tree or in git's objects.
 */
final class GitRules {
    private GitRules() {}

    /** What an operation changes that cannot be taken back. */
    enum Effect {
        WORK_TREE, REFS, REFLOGS, OBJECTS, REMOTE, HOOKS, CONFIG
    }

    /** How a user does what the guard refuses on a remote. */
    static final String REMOTE_INSTEAD = "leave the remote branch as it is, or ask the user to run this outside the"
            + " sandbox";
    private static final String PRUNE_INSTEAD = "leave pruning to plain git gc, which keeps them two weeks";

    /**
     * A refusal: the operation as spelled, its effect, why, and the safer way.
     */
    record Refusal(String operation, Effect effect, String why, String instead) {
        String message() {
            return operation + " is not allowed in this sandbox: " + why + "; " + instead;
        }
    }

    private static final GitOptions COMMIT = GitOptions.of("""
            a|all p|patch C|reuse-message= c|reedit-message= fixup= squash= reset-author short branch porcelain
            long z|null F|file= author= date= m|message= t|template= s|signoff trailer= n|no-verify
            allow-empty allow-empty-message cleanup= e|edit amend no-post-rewrite i|include o|only
            pathspec-from-file= pathspec-file-nul u|untracked-files? v|verbose q|quiet dry-run status
            S|gpg-sign? interactive
            """);
    private static final GitOptions PUSH = GitOptions.of("""
            all branches mirror tags follow-tags atomic n|dry-run porcelain d|delete prune receive-pack= exec=
            f|force force-with-lease? force-if-includes repo= u|set-upstream thin q|quiet v|verbose progress
            recurse-submodules= no-verify o|push-option= signed? 4|ipv4 6|ipv6
            """);
    private static final GitOptions FETCH = GitOptions.of("""
            q|quiet v|verbose all set-upstream a|append atomic upload-pack= f|force m|multiple t|tags n| j|jobs=
            prefetch p|prune P|prune-tags recurse-submodules? dry-run porcelain write-fetch-head k|keep
            u|update-head-ok progress depth= shallow-since= shallow-exclude= deepen= unshallow refetch
            update-shallow refmap= o|server-option= 4|ipv4 6|ipv6 negotiation-restrict= negotiation-tip=
            negotiation-include= negotiate-only filter= auto-maintenance auto-gc show-forced-updates
            write-commit-graph stdin
            """);
    private static final GitOptions SEND_PACK = GitOptions.of("""
            receive-pack= exec= remote= all dry-run mirror f|force v|verbose q|quiet thin stateless-rpc stdin
            helper-status force-with-lease? force-if-includes atomic signed? push-option= progress
            """);
    private static final GitOptions HTTP_PUSH = GitOptions.of("""
            all force dry-run verbose d| D|
            """);
    private static final GitOptions GC = GitOptions.of("""
            q|quiet prune? cruft max-cruft-size= aggressive auto detach force keep-largest-pack expire-to=
            """);
    private static final GitOptions PRUNE = GitOptions.of("""
            n|dry-run v|verbose progress expire= exclude-promisor-objects
            """);
    private static final GitOptions REPACK = GitOptions.of("""
            a| A| d| cruft cruft-expiration= max-cruft-size= combine-cruft-below-size= expire-to= l|local f| F|
            q|quiet n| window= depth= threads= window-memory= max-pack-size= filter= filter-to= b|write-bitmap-index
            pack-kept-objects k|keep-unreachable keep-pack= unpack-unreachable= g|geometric= m|write-midx
            name-hash-version= path-walk i|delta-islands
            """);
    private static final GitOptions MERGE = GitOptions.of("""
            commit e|edit cleanup= ff ff-only log? n|no-stat stat summary squash no-verify s|strategy=
            X|strategy-option= verify-signatures q|quiet v|verbose progress autostash allow-unrelated-histories
            rerere-autoupdate overwrite-ignore S|gpg-sign? abort quit continue into-name= F|file= m|message=
            signoff
            """);
    private static final GitOptions PULL = GitOptions.of("""
            q|quiet v|verbose recurse-submodules? commit e|edit cleanup= ff ff-only log? n|no-stat stat summary
            squash no-verify s|strategy= X|strategy-option= verify-signatures autostash allow-unrelated-histories
            r|rebase? S|gpg-sign? all a|append upload-pack= f|force t|tags p|prune P|prune-tags j|jobs? dry-run k|keep
            depth= shallow-since= shallow-exclude= deepen= unshallow update-shallow refmap= o|server-option=
            4|ipv4 6|ipv6 negotiation-tip= show-forced-updates set-upstream signoff u|update-head-ok
            """);
    private static final GitOptions AM = GitOptions.of("""
            i|interactive 3|3way q|quiet s|signoff u|utf8 k|keep keep-non-patch keep-cr c|scissors
            whitespace= ignore-space-change ignore-whitespace directory= exclude= include= C|= p|= reject
            patch-format= resolvemsg= S|gpg-sign? continue r|resolved skip abort quit show-current-patch?
            committer-date-is-author-date ignore-date n|no-verify m|message-id quoted-cr= empty= allow-empty
            """);
    private static final GitOptions REBASE = GitOptions.of("""
            onto= keep-base continue abort quit skip edit-todo show-current-patch m|merge s|strategy=
            X|strategy-option= S|gpg-sign? q|quiet v|verbose stat n|no-stat no-verify verify C|= f|force-rebase
            fork-point ignore-whitespace whitespace= committer-date-is-author-date ignore-date signoff
            i|interactive r|rebase-merges? x|exec= root autosquash autostash reschedule-failed-exec
            update-refs empty= keep-empty apply reapply-cherry-picks
            """);
    private static final GitOptions RESET = GitOptions.of("""
            soft mixed hard merge keep q|quiet recurse-submodules? N|intent-to-add p|patch
            pathspec-from-file= pathspec-file-nul refresh U|unified= inter-hunk-context=
            """);
    private static final GitOptions CLEAN = GitOptions.of("""
            d| f|force i|interactive n|dry-run q|quiet e|exclude= x| X|
            """);
    private static final GitOptions BRANCH = GitOptions.of("""
            v|verbose q|quiet t|track? u|set-upstream-to= unset-upstream color? r|remotes contains^ no-contains^
            merged^ no-merged^ column? sort= points-at= a|all d|delete D| m|move M| c|copy C| l|list show-current
            create-reflog edit-description f|force format= i|ignore-case omit-empty recurse-submodules abbrev?
            """);
    private static final GitOptions SWITCH = GitOptions.of("""
            c|create= C|force-create= d|detach guess f|force discard-changes m|merge conflict= q|quiet progress
            t|track? orphan= ignore-other-worktrees recurse-submodules? overlay
            """);
    private static final GitOptions CHECKOUT = GitOptions.of("""
            b|= B|= l| d|detach t|track? orphan= f|force m|merge conflict= p|patch q|quiet progress guess
            overwrite-ignore ignore-other-worktrees ours theirs 2| 3| overlay recurse-submodules?
            ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul U|unified= inter-hunk-context=
            """);
    /** The options of {@code checkout -b NEW} that keep it what {@code switch -c NEW} is. */
    private static final Set<String> NEW_BRANCH_OPTIONS = Set.of("-b", "-B", "-l", "track", "no-track", "quiet",
            "progress", "guess", "no-guess", "merge", "conflict", "recurse-submodules", "no-recurse-submodules");
    private static final GitOptions RESTORE = GitOptions.of("""
            s|source= p|patch W|worktree S|staged q|quiet progress ours theirs m|merge conflict=
            ignore-unmerged ignore-skip-worktree-bits recurse-submodules? overlay pathspec-from-file=
            pathspec-file-nul U|unified= inter-hunk-context=
            """);
    private static final GitOptions CHECKOUT_INDEX = GitOptions.of("""
            u|index q|quiet f|force a|all n|no-create prefix= stage= temp ignore-skip-worktree-bits z| stdin
            """);
    private static final GitOptions READ_TREE = GitOptions.of("""
            m| reset u| i| index-output= no-sparse-checkout empty v| trivial aggressive prefix= exclude-per-directory=
            q|quiet recurse-submodules? n|dry-run
            """);
    private static final GitOptions RM = GitOptions.of("""
            f|force n|dry-run r| cached ignore-unmatch sparse q|quiet pathspec-from-file= pathspec-file-nul
            """);
    private static final GitOptions MV = GitOptions.of("""
            v|verbose n|dry-run f|force k| sparse
            """);
    private static final GitOptions TAG = GitOptions.of("""
            a|annotate s|sign u|local-user= f|force d|delete v|verify n? l|list sort= contains^ no-contains^
            merged^ no-merged^ points-at= m|message= F|file= e|edit cleanup= create-reflog i|ignore-case
            column? format= color? omit-empty trailer=
            """);
    private static final GitOptions SYMBOLIC_REF = GitOptions.of("""
            q|quiet d|delete short no-recurse m|=
            """);
    private static final GitOptions WORKTREE_ADD = GitOptions.of("""
            f|force d|detach checkout lock reason= orphan b|= B|= q|quiet track guess-remote
            """);
    private static final GitOptions WORKTREE_REMOVE = GitOptions.of("""
            f|force
            """);

    /**
     * The branch {@code git checkout -b NEW [START]} or {@code -B NEW [START]} creates, when
     * that is all it does: one new branch switched to like {@code git switch -c}, which
     * carries uncommitted changes along and stops rather than overwrite one; no paths, no
     * {@code -f}, no {@code -p}. Null for any other checkout. {@code -B} moves the branch
     * when it exists, so {@link GitGuard} allows it only where no such branch is there yet
     * ({@link #resetsBranch}).
     */
    static String newBranch(List<String> args) {
        GitOptions.Parsed p = CHECKOUT.parse(args);
        if (p.has("-b") == p.has("-B") || !NEW_BRANCH_OPTIONS.containsAll(p.options()) || p.positionals().size() > 1
                || args.contains("--") || args.contains("--end-of-options")) {
            return null;
        }
        List<String> names = p.values(p.has("-b") ? "-b" : "-B");
        if (names.size() != 1 || names.get(0).isEmpty() || names.get(0).startsWith("-")) {
            return null;
        }
        return names.get(0);
    }

    /** Whether a checkout that {@link #newBranch} allows is the {@code -B} one. */
    static boolean resetsBranch(List<String> args) {
        return CHECKOUT.parse(args).has("-B");
    }

    /** The refusal for a subcommand with these arguments, or null when it may run. */
    static Refusal check(String sub, List<String> args) {
        Refusal r = checkWorkTree(sub, args);
        return r != null ? r : checkHistory(sub, args);
    }

    /** The commands that can lose uncommitted work in the work tree. */
    private static Refusal checkWorkTree(String sub, List<String> args) {
        switch (sub) {
            case "checkout" -> {
                if (newBranch(args) != null) {
                    return null; // checkout -b NEW [START]: git switch -c NEW [START], which keeps every change
                }
                return new Refusal("git checkout", Effect.WORK_TREE, "it can overwrite uncommitted changes",
                        "use git switch to change branches (git switch -c to create one), git restore --staged"
                                + " to unstage");
            }
            case "restore" -> {
                GitOptions.Parsed p = RESTORE.parse(args);
                if (p.has("staged") && !p.has("worktree")) {
                    return null; // the index only: the work tree keeps every change
                }
                return new Refusal("git restore", Effect.WORK_TREE, "it discards uncommitted changes",
                        "commit or stash first; git restore --staged only unstages");
            }
            case "reset" -> {
                if (RESET.parse(args).has("hard")) {
                    return new Refusal("git reset --hard", Effect.WORK_TREE, "it discards uncommitted changes",
                            "use git reset --soft, git stash, or git revert");
                }
            }
            case "switch" -> {
                GitOptions.Parsed p = SWITCH.parse(args);
                if (p.has("force") || p.has("discard-changes")) {
                    return new Refusal("git switch --discard-changes", Effect.WORK_TREE,
                            "it throws away uncommitted changes", "commit or git stash first, then git switch");
                }
                if (p.has("force-create")) {
                    return new Refusal("git switch -C", Effect.REFS, "it moves an existing branch to another commit",
                            "use git switch -c with a new branch name");
                }
            }
            case "checkout-index" -> {
                if (CHECKOUT_INDEX.parse(args).has("force")) {
                    return new Refusal("git checkout-index -f", Effect.WORK_TREE,
                            "it overwrites uncommitted changes with the index", "commit or stash first");
                }
            }
            case "read-tree" -> {
                GitOptions.Parsed p = READ_TREE.parse(args);
                if (p.has("-u") && p.has("reset")) {
                    return new Refusal("git read-tree -u --reset", Effect.WORK_TREE,
                            "it overwrites uncommitted changes", "commit or stash first; read-tree -m -u keeps them");
                }
            }
            case "rm" -> {
                GitOptions.Parsed p = RM.parse(args);
                if (p.has("force") && !p.has("cached") && !p.has("dry-run")) {
                    return new Refusal("git rm -f", Effect.WORK_TREE, "it deletes files with uncommitted changes",
                            "commit first, or git rm --cached to untrack a file and keep it");
                }
            }
            case "mv" -> {
                GitOptions.Parsed p = MV.parse(args);
                if (p.has("force") && !p.has("dry-run")) {
                    return new Refusal("git mv -f", Effect.WORK_TREE, "it overwrites the file at the destination",
                            "move onto a free name, or commit the destination first");
                }
            }
            case "clean" -> {
                GitOptions.Parsed p = CLEAN.parse(args);
                if (p.has("force") || !p.has("dry-run")) {
                    String op = p.has("force") ? "git clean with force" : p.has("interactive") ? "git clean -i"
                            : "git clean";
                    return new Refusal(op, Effect.WORK_TREE,
                            "it deletes untracked files for good", "review with git clean -n and remove files by hand");
                }
            }
            case "worktree" -> {
                return checkWorktree(args);
            }
            default -> {
                return null;
            }
        }
        return null;
    }

    /** The commands that rewrite or delete history (refs, reflogs), or skip the project's hooks. */
    private static Refusal checkHistory(String sub, List<String> args) {
        Refusal r = checkRefs(sub, args);
        return r != null ? r : checkHooksAndTransfer(sub, args);
    }

    /** The commands that move, delete or rewrite refs and reflogs directly. */
    private static Refusal checkRefs(String sub, List<String> args) {
        switch (sub) {
            case "branch" -> {
                GitOptions.Parsed p = BRANCH.parse(args);
                if (p.has("-D") || (p.has("delete") && p.has("force"))) {
                    return new Refusal("git branch -D", Effect.REFS,
                            "it deletes a branch even when its commits are merged nowhere",
                            "use git branch -d, which deletes only merged branches");
                }
                if (p.has("-M") || p.has("-C") || ((p.has("move") || p.has("copy")) && p.has("force"))) {
                    return new Refusal("git branch -M", Effect.REFS, "it overwrites an existing branch",
                            "rename or copy onto a new name with git branch -m or -c");
                }
                if (p.has("force") && !p.has("delete")) {
                    return new Refusal("git branch -f", Effect.REFS, "it moves an existing branch to another commit",
                            "create a new branch, or git switch to the branch and merge");
                }
            }
            case "tag" -> {
                GitOptions.Parsed p = TAG.parse(args);
                if (p.has("delete")) {
                    return new Refusal("git tag -d", Effect.REFS, "it deletes a tag", "leave the tag, add a new one");
                }
                if (p.has("force")) {
                    return new Refusal("git tag -f", Effect.REFS, "it moves an existing tag",
                            "create a tag with a new name");
                }
            }
            case "update-ref" -> {
                return new Refusal("git update-ref", Effect.REFS,
                        "it moves or deletes refs directly, and commits made that way skip the hooks",
                        "use git commit, git branch, git tag or git reset --soft");
            }
            case "symbolic-ref" -> {
                GitOptions.Parsed p = SYMBOLIC_REF.parse(args);
                if (p.has("delete") || p.positionals().size() >= 2) {
                    return new Refusal("git symbolic-ref", Effect.REFS,
                            "it points HEAD at another branch without touching the work tree",
                            "use git switch; reading HEAD with git symbolic-ref HEAD is fine");
                }
            }
            case "reflog" -> {
                String action = args.isEmpty() ? "show" : args.get(0);
                if (action.equals("delete") || action.equals("expire") || action.equals("drop")) {
                    return new Refusal("git reflog " + action, Effect.REFLOGS,
                            "it deletes the record that lets lost commits be found again", "leave the reflog to git gc");
                }
            }
            case "filter-branch", "filter-repo" -> {
                return new Refusal("git " + sub, Effect.REFS, "it rewrites every branch", "run it outside the sandbox");
            }
            case "commit-tree" -> {
                return new Refusal("git commit-tree", Effect.HOOKS, "a commit made this way skips the project's hooks",
                        "use git commit");
            }
            default -> {
                return null;
            }
        }
        return null;
    }

    /** The commands that skip the project's hooks, fetch or push refs away, or drop objects. */
    private static Refusal checkHooksAndTransfer(String sub, List<String> args) {
        switch (sub) {
            case "commit" -> {
                if (COMMIT.parse(args).has("no-verify")) {
                    return noVerify("commit");
                }
            }
            case "merge" -> {
                if (MERGE.parse(args).has("no-verify")) {
                    return noVerify("merge");
                }
            }
            case "pull" -> {
                GitOptions.Parsed p = PULL.parse(args);
                if (p.has("no-verify")) {
                    return noVerify("pull");
                }
                return checkFetch("pull", p);
            }
            case "fetch" -> {
                return checkFetch("fetch", FETCH.parse(args));
            }
            case "send-pack" -> {
                return checkSendPack(SEND_PACK.parse(args));
            }
            case "http-push" -> {
                GitOptions.Parsed p = HTTP_PUSH.parse(args);
                if (p.has("force") || p.has("-d") || p.has("-D") || forcesOrDeletes(p.positionals()) != null) {
                    return new Refusal("git http-push", Effect.REMOTE, "it can delete or overwrite branches on the remote",
                            REMOTE_INSTEAD);
                }
            }
            case "gc" -> {
                GitOptions.Parsed p = GC.parse(args);
                if (!p.values("prune").isEmpty()) {
                    return new Refusal("git gc --prune=" + p.values("prune").get(p.values("prune").size() - 1),
                            Effect.OBJECTS, "it deletes unreachable commits sooner than git's two weeks", PRUNE_INSTEAD);
                }
            }
            case "prune" -> {
                if (!PRUNE.parse(args).has("dry-run")) {
                    return new Refusal("git prune", Effect.OBJECTS,
                            "it deletes every unreachable commit at once, with no grace period", PRUNE_INSTEAD);
                }
            }
            case "repack" -> {
                return checkRepack(REPACK.parse(args));
            }
            case "fast-import" -> {
                return new Refusal("git fast-import", Effect.REFS,
                        "its input can move any branch by force (feature force), which the guard cannot see",
                        "import into a repository in /tmp and fetch from it");
            }
            case "am" -> {
                if (AM.parse(args).has("no-verify")) {
                    return noVerify("am");
                }
            }
            case "rebase" -> {
                if (REBASE.parse(args).has("no-verify")) {
                    return noVerify("rebase");
                }
            }
            case "push" -> {
                return checkPush(PUSH.parse(args));
            }
            case "stash" -> {
                return checkStash(args);
            }
            default -> {
                return null;
            }
        }
        return null;
    }

    private static Refusal checkWorktree(List<String> args) {
        if (args.isEmpty()) {
            return null;
        }
        List<String> options = args.subList(1, args.size());
        switch (args.get(0)) {
            case "remove" -> {
                if (WORKTREE_REMOVE.parse(options).has("force")) {
                    return new Refusal("git worktree remove --force", Effect.WORK_TREE,
                            "it deletes a worktree with uncommitted changes", "commit there first, then remove it");
                }
            }
            case "add" -> {
                if (WORKTREE_ADD.parse(options).has("-B")) {
                    return new Refusal("git worktree add -B", Effect.REFS, "it moves an existing branch",
                            "use git worktree add -b with a new branch name");
                }
            }
            default -> {
                return null;
            }
        }
        return null;
    }

    /**
     * A push that deletes or overwrites a remote branch: every spelling git's push reads
     * ({@code --delete}/{@code -d}, a {@code :dst} refspec, {@code --prune}, {@code --mirror},
     * {@code --force}/{@code -f}, a {@code +} refspec, {@code +:} for all matching branches).
     * {@code --force-with-lease} alone stays allowed: it overwrites only what the local
     * repository has seen, which stays in its remote-tracking branch's reflog.
     */
    private static Refusal checkPush(GitOptions.Parsed p) {
        if (p.has("no-verify")) {
            return noVerify("push");
        }
        if (p.has("delete")) {
            return new Refusal("git push --delete", Effect.REMOTE, "it deletes branches on the remote", REMOTE_INSTEAD);
        }
        if (p.has("force")) {
            return new Refusal("git push --force", Effect.REMOTE, "it can overwrite commits on the remote",
                    "use git push --force-with-lease, or ask the user to push outside the sandbox");
        }
        if (p.has("mirror")) {
            return new Refusal("git push --mirror", Effect.REMOTE, "it overwrites and deletes every ref on the remote",
                    "push the branches you mean, with --force-with-lease if needed");
        }
        if (p.has("prune")) {
            return new Refusal("git push --prune", Effect.REMOTE,
                    "it deletes every remote branch that has no local branch of the same name", REMOTE_INSTEAD);
        }
        return forcesOrDeletes(p.positionals());
    }

    /**
     * The refusal for the first refspec that forces ({@code +src:dst}, {@code +:}) or deletes
     * ({@code :dst}) a remote ref, or null. Git's push reads a refspec so: one leading
     * {@code +} forces, and an empty source before the last {@code :} deletes the
     * destination; {@code :} alone pushes the matching branches, without force.
     */
    static Refusal forcesOrDeletes(List<String> refspecs) {
        for (String refspec : refspecs) {
            if (refspec.startsWith("+")) {
                return new Refusal("git push " + refspec, Effect.REMOTE,
                        "a + refspec forces the update and can overwrite commits on the remote",
                        "use git push --force-with-lease, or ask the user to push outside the sandbox");
            }
            if (refspec.startsWith(":") && refspec.length() > 1) {
                return new Refusal("git push " + refspec, Effect.REMOTE,
                        "a refspec with nothing before the colon deletes that branch on the remote", REMOTE_INSTEAD);
            }
        }
        return null;
    }

    /** The plumbing under push: the same refspecs, and {@code --stdin} only as git's own HTTP push uses it. */
    private static Refusal checkSendPack(GitOptions.Parsed p) {
        if (p.has("force") || p.has("mirror")) {
            return new Refusal("git send-pack --" + (p.has("force") ? "force" : "mirror"), Effect.REMOTE,
                    "it can overwrite or delete branches on the remote", REMOTE_INSTEAD);
        }
        if (p.has("stdin") && !p.has("stateless-rpc")) {
            return new Refusal("git send-pack --stdin", Effect.REMOTE,
                    "refspecs read from input can delete or overwrite remote branches unseen", "use git push");
        }
        // the first positional is the remote
        Refusal r = forcesOrDeletes(p.positionals().isEmpty() ? List.of()
                : p.positionals().subList(1, p.positionals().size()));
        return r == null ? null : new Refusal("git send-pack", Effect.REMOTE, r.why(), r.instead());
    }

    /**
     * A fetch (or the fetch of a pull) that overwrites or deletes a local branch or tag:
     * a command-line refspec or {@code --refmap} whose destination is not a
     * remote-tracking branch, forced ({@code +}, {@code --force}), a pattern (which
     * {@code fetch.prune} can turn into deletions), or with {@code --prune}; tags moved by
     * {@code --tags --force}; {@code --prune-tags}; refspecs read from input. A refspec
     * without force only fast-forwards: it loses nothing.
     */
    private static Refusal checkFetch(String sub, GitOptions.Parsed p) {
        String op = "git " + sub;
        if (p.has("stdin")) {
            return new Refusal(op + " --stdin", Effect.REFS,
                    "refspecs read from input can overwrite local branches unseen", "give the refspecs as arguments");
        }
        if (p.has("prune-tags")) {
            return new Refusal(op + " --prune-tags", Effect.REFS, "it deletes every local tag the remote lacks",
                    "delete tags one by one with git tag -d outside the sandbox, or leave them");
        }
        boolean force = p.has("force");
        if (force && p.has("tags")) {
            return new Refusal(op + " --tags --force", Effect.REFS, "it moves local tags, which keep no reflog",
                    "fetch without --force; a moved tag stays as it is");
        }
        List<String> refspecs = new ArrayList<>();
        if (!p.has("multiple") && !p.has("all") && p.positionals().size() > 1) {
            refspecs.addAll(p.positionals().subList(1, p.positionals().size()));
        }
        refspecs.addAll(p.values("refmap"));
        for (String refspec : refspecs) {
            boolean plus = refspec.startsWith("+");
            String body = plus ? refspec.substring(1) : refspec;
            int colon = body.lastIndexOf(':');
            if (body.startsWith("^") || colon < 0) {
                continue;
            }
            String dst = body.substring(colon + 1);
            if (dst.isEmpty() || dst.startsWith("refs/remotes/")) {
                continue; // not stored, or a remote-tracking branch (whose reflog keeps every tip)
            }
            if (plus || force) {
                return new Refusal(op + " " + (plus ? refspec : "--force " + refspec), Effect.REFS,
                        "it overwrites the local ref " + dst + " by force, losing the commits only it had",
                        "fetch into a new branch name, or into refs/remotes/, without + or --force");
            }
            if (p.has("prune")) {
                return new Refusal(op + " --prune " + refspec, Effect.REFS,
                        "it deletes the local refs the remote lacks", "fetch without --prune");
            }
            if (dst.indexOf('*') >= 0) {
                return new Refusal(op + " " + refspec, Effect.REFS,
                        "a pattern into local branches lets fetch.prune delete those the remote lacks",
                        "fetch into refs/remotes/, or name each branch");
            }
        }
        return null;
    }

    /** Repacking that drops unreachable objects at once instead of keeping them loose or in a cruft pack. */
    private static Refusal checkRepack(GitOptions.Parsed p) {
        for (String option : List.of("unpack-unreachable", "cruft-expiration")) {
            if (p.has(option)) {
                return new Refusal("git repack --" + option, Effect.OBJECTS,
                        "it can delete unreachable commits at once", PRUNE_INSTEAD);
            }
        }
        if (p.has("-a") && p.has("-d") && !p.has("-A") && !p.has("cruft") && !p.has("keep-unreachable")) {
            return new Refusal("git repack -a -d", Effect.OBJECTS, "it deletes unreachable commits at once",
                    "use git repack -A -d or git gc, which keep them two weeks");
        }
        return null;
    }

    /**
     * The remote names a push, fetch or pull names (empty when it names none, so git
     * takes the default), or null for other commands and for {@code fetch --all}.
     */
    static List<String> remotes(String sub, List<String> args) {
        GitOptions.Parsed p;
        switch (sub) {
            case "push" -> {
                p = PUSH.parse(args);
                if (!p.positionals().isEmpty()) {
                    return List.of(p.positionals().get(0));
                }
                List<String> repo = p.values("repo");
                return repo.isEmpty() ? List.of() : List.of(repo.get(repo.size() - 1));
            }
            case "fetch" -> p = FETCH.parse(args);
            case "pull" -> p = PULL.parse(args);
            default -> {
                return null;
            }
        }
        if (p.has("all")) {
            return null;
        }
        if (p.has("multiple")) {
            return p.positionals();
        }
        return p.positionals().isEmpty() ? List.of() : List.of(p.positionals().get(0));
    }

    private static final Set<String> STASH_SUBCOMMANDS = Set.of(
            "list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store",
            "export", "import");

    private static Refusal checkStash(List<String> args) {
        // git stash reads its own options up to the first non-option, the subcommand
        for (String a : args) {
            if (a.equals("--")) {
                return null;
            }
            if (a.startsWith("-")) {
                continue;
            }
            if (!STASH_SUBCOMMANDS.contains(a)) {
                return null;
            }
            return switch (a) {
                case "drop", "clear", "pop" -> new Refusal("git stash " + a, Effect.REFLOGS,
                        "it can lose stashed work for good", "use git stash apply and keep the stash");
                default -> null;
            };
        }
        return null;
    }

    private static Refusal noVerify(String sub) {
        return new Refusal("git " + sub + " --no-verify", Effect.HOOKS, "it skips the project's hooks",
                "fix what the hook complains about");
    }

    // ------------------------------------------------------------------ config

    /** The refusal for setting a config key inline, or null. */
    static Refusal checkConfigKey(String key, String spelled) {
        String k = key.toLowerCase(Locale.ROOT);
        String op = "git " + spelled;
        if (k.startsWith("alias.")) {
            return new Refusal(op, Effect.CONFIG, "inline aliases can redefine what a command does",
                    "configure aliases outside the sandbox");
        }
        if (k.equals("core.hookspath")) {
            return new Refusal(op, Effect.HOOKS, "moving the hooks skips the project's hooks",
                    "configure hooks outside the sandbox");
        }
        if (k.equals("protocol.allow") || k.equals("protocol.ext.allow")) {
            return new Refusal(op, Effect.CONFIG, "the ext transport runs commands as git's own",
                    "fetch and push over file, ssh or https");
        }
        if (k.equals("clean.requireforce")) {
            return new Refusal(op, Effect.WORK_TREE, "without requireForce git clean deletes untracked files for good",
                    "review with git clean -n and remove files by hand");
        }
        if (k.startsWith("remote.") && (k.endsWith(".mirror") || k.endsWith(".push"))) {
            return new Refusal(op, Effect.REMOTE, "a remote's mirror or push refspec set inline can force a push",
                    "push with --force-with-lease");
        }
        if (k.startsWith("remote.") && (k.endsWith(".fetch") || k.endsWith(".prunetags"))
                || k.equals("fetch.prunetags")) {
            return new Refusal(op, Effect.REFS, "a fetch refspec or tag pruning set inline can overwrite or delete"
                    + " local branches and tags", "fetch with refspecs given as arguments");
        }
        if (k.startsWith("gc.") && (k.endsWith(".reflogexpire") || k.endsWith(".reflogexpireunreachable")
                || k.equals("gc.pruneexpire") || k.equals("gc.worktreepruneexpire"))) {
            return new Refusal(op, Effect.REFLOGS,
                    "it makes git gc (also the automatic one) expire reflogs or prune commits sooner than git's"
                            + " defaults", "leave expiry to git's defaults");
        }
        if (k.startsWith("include.") || k.startsWith("includeif.")) {
            return new Refusal(op, Effect.CONFIG, "an included config file can define aliases and hooks",
                    "configure git outside the sandbox");
        }
        if (k.equals("core.fsmonitor") || k.equals("diff.external") || k.equals("core.gitproxy")
                || k.equals("uploadpack.packobjectshook")
                || (k.startsWith("filter.") && (k.endsWith(".clean") || k.endsWith(".smudge")
                        || k.endsWith(".process")))) {
            return new Refusal(op, Effect.CONFIG, "it makes git run a program of its own on everyday commands",
                    "configure it outside the sandbox");
        }
        return null;
    }

    static String keyOf(String assignment) {
        int eq = assignment.indexOf('=');
        return eq < 0 ? assignment : assignment.substring(0, eq);
    }

    /**
     * The refusal for git's environment (the first occurrence of each variable, as git
     * reads it), or null. {@code expected} gives the sandbox's own value of a variable.
     */
    static Refusal checkEnvironment(Map<String, String> env, GitGuard.Probe expected) {
        String count = env.get("GIT_CONFIG_COUNT");
        if (count != null && !count.isBlank()) {
            int n;
            try {
                n = Integer.parseInt(count.strip());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0) {
                return new Refusal("git with GIT_CONFIG_COUNT=" + count, Effect.CONFIG, "the count is not a number",
                        "unset GIT_CONFIG_COUNT");
            }
            for (int k = 0; k < n; k++) {
                String key = env.get("GIT_CONFIG_KEY_" + k);
                if (key == null) {
                    break; // git stops at a missing key and runs nothing
                }
                Refusal r = checkConfigKey(key, "with GIT_CONFIG_KEY_" + k + "=" + key);
                if (r != null) {
                    return r;
                }
            }
        }
        String parameters = env.get("GIT_CONFIG_PARAMETERS");
        if (parameters != null && !parameters.isBlank()) {
            List<String> words = GitCommand.shellWords(parameters);
            if (words == null) {
                return new Refusal("git with GIT_CONFIG_PARAMETERS", Effect.CONFIG, "its value cannot be read",
                        "unset GIT_CONFIG_PARAMETERS");
            }
            for (String w : words) {
                Refusal r = checkConfigKey(keyOf(w), "with GIT_CONFIG_PARAMETERS " + w);
                if (r != null) {
                    return r;
                }
            }
        }
        String protocols = env.get("GIT_ALLOW_PROTOCOL");
        if (protocols != null && java.util.Arrays.asList(protocols.split(":")).contains("ext")) {
            return new Refusal("git with GIT_ALLOW_PROTOCOL=" + protocols, Effect.CONFIG,
                    "the ext transport runs commands as git's own", "fetch and push over file, ssh or https");
        }
        for (String var : List.of("HOME", "XDG_CONFIG_HOME")) {
            String v = env.get(var);
            String sandbox = expected.sandboxEnv(var);
            if (v != null && !v.isEmpty() && !v.equals(sandbox)) {
                return new Refusal("git with " + var + "=" + v, Effect.CONFIG,
                        "git would read another global config, which can define aliases and hooks",
                        "run git with the sandbox's own " + var + (sandbox == null ? "" : " (" + sandbox + ")"));
            }
        }
        for (String var : List.of("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG")) {
            String v = env.get(var);
            if (v != null && !v.isEmpty() && !v.equals("/dev/null")) {
                return new Refusal("git with " + var + "=" + v, Effect.CONFIG,
                        "another config file can define aliases and hooks",
                        "configure git outside the sandbox, or unset " + var);
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ git's own calls

    /**
     * Whether a git started directly by a running git is that git's own work: the exact
     * call a {@code parentSub} makes itself ({@code git stash -u} runs
     * {@code git clean --force --quiet -d :/}), not a command a user had it run (an
     * editor, {@code rebase --exec}, {@code submodule foreach}, a {@code !}-alias, a
     * hook), which gets every rule. The shapes are git's own argument lists, so a
     * command a user writes matches only if it is written the same, to the letter.
     */
    static boolean ownCall(String parentSub, List<String> parentRest, String sub, List<String> args) {
        String parentAction = parentRest.isEmpty() ? "" : parentRest.get(0);
        return switch (parentSub) {
            case "stash" -> matches(sub, args, "clean --force --quiet -d :/")
                    || matches(sub, args, "clean --force --quiet -d :/ -x")
                    || matches(sub, args, "reset --hard -q --no-recurse-submodules")
                    || matches(sub, args, "checkout --no-overlay <hex> -- :/")
                    || matches(sub, args, "checkout -b <name> <hex>");
            case "worktree" -> parentAction.equals("add")
                    && (matches(sub, args, "reset --hard --no-recurse-submodules")
                            || matches(sub, args, "reset --hard --no-recurse-submodules --quiet")
                            || matches(sub, args, "symbolic-ref HEAD <ref>")
                            || matches(sub, args, "symbolic-ref HEAD <ref> --quiet"));
            case "bisect", "bisect--helper" -> matches(sub, args, "checkout -q <name> --")
                    || matches(sub, args, "checkout <name> --");
            case "submodule--helper" -> parentAction.equals("update")
                    && (matches(sub, args, "checkout -q <hex>") || matches(sub, args, "checkout -f -q <hex>")
                            || matches(sub, args, "checkout -q -f <hex>"));
            // gc's repack and prune take their expiry from the config, which the sandbox cannot change
            case "gc", "maintenance" -> matches(sub, args, "reflog expire --all") || sub.equals("repack")
                    || sub.equals("prune");
            // a remote helper's import (transport-helper.c): the stream comes from the configured helper
            case "fetch", "clone" -> sub.equals("fast-import") && importerCall(args);
            case "cherry-pick", "revert", "rebase", "am", "merge", "pull" -> sub.equals("commit")
                    && sequencerCommit(args);
            default -> false;
        };
    }

    private static boolean importerCall(List<String> args) {
        if (args.size() < 2 || !args.get(0).equals("--allow-unsafe-features")
                || !(args.get(1).equals("--quiet") || args.get(1).equals("--stats"))) {
            return false;
        }
        for (String a : args.subList(2, args.size())) {
            if (!a.startsWith("--cat-blob-fd=")) {
                return false;
            }
        }
        return true;
    }

    /** The sequencer's {@code git commit -n … -F <git dir>/MERGE_MSG --cleanup=…} (hooks already ran or do not apply). */
    private static boolean sequencerCommit(List<String> args) {
        boolean cleanup = false;
        boolean message = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.startsWith("--cleanup=")) {
                cleanup = true;
            } else if (a.equals("-F") && i + 1 < args.size()) {
                String f = args.get(++i);
                message = f.endsWith("/MERGE_MSG") || f.contains("/rebase-merge/");
            } else if (!a.startsWith("-")) {
                return false;
            }
        }
        return cleanup && message;
    }

    private static boolean matches(String sub, List<String> args, String shape) {
        String[] words = shape.split(" ");
        if (!words[0].equals(sub) || words.length - 1 != args.size()) {
            return false;
        }
        for (int i = 1; i < words.length; i++) {
            String a = args.get(i - 1);
            boolean ok = switch (words[i]) {
                case "<hex>" -> isHex(a);
                case "<name>" -> !a.isEmpty() && !a.startsWith("-");
                case "<ref>" -> a.startsWith("refs/heads/");
                default -> words[i].equals(a);
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** An object name or an abbreviation git accepts (7 digits or more). */
    private static boolean isHex(String s) {
        return s.length() >= 7 && s.length() <= 64 && ObjectIds.isHex(s);
    }
}
