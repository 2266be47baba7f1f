// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.Sandbox;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code @git} guard's decision: reads the command line ({@link GitCommand}), applies
 * the rules ({@link GitRules}) through aliases, and lets a refused operation run only when
 * it is git's own call made by a running git, or when the repository it acts on is a
 * throw-away one in the sandbox's private temp dir.
 *
 * <p>Everything here is pure: what the guard needs from the sandbox (resolving a path,
 * asking the real git, inside the sandbox, which repository and which alias it would
 * use, where the sandbox's temp dir is) comes through {@link Probe}. The same rules run
 * on the host behind the guard's socket and, when the sandboxed process may not use Unix
 * sockets, inside the sandbox ({@link GuardFallback}).
 */
final class GitGuard {
    private GitGuard() {}

    /**
     * What git was asked to do, as seen inside the sandbox.
     *
     * @param env         the variables that matter to git, each as git reads it (the first
     *                    occurrence in the environment)
     * @param parentExe   the executable of the calling process, as the launcher read it from
     *                    {@code /proc}; empty when unknown
     * @param parentArgv  the command line of the calling process; empty when unknown
     */
    record Request(List<String> argv, String cwd, Map<String, String> env, String parentExe,
            List<String> parentArgv) {
        Request {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
            parentExe = parentExe == null ? "" : parentExe;
            parentArgv = parentArgv == null ? List.of() : List.copyOf(parentArgv);
        }

        Request(List<String> argv, String cwd, Map<String, String> env, String parentExe) {
            this(argv, cwd, env, parentExe, List.of());
        }

        Request(List<String> argv, String cwd, Map<String, String> env) {
            this(argv, cwd, env, "", List.of());
        }

        Request withArgv(List<String> newArgv) {
            return new Request(newArgv, cwd, env, parentExe, parentArgv);
        }
    }

    /** The guard's answer. */
    sealed interface Decision {
        record Allow(String why) implements Decision {}

        record Deny(String message) implements Decision {}
    }

    /** What the real git printed when asked, inside the sandbox; {@code status} -1 when it gave no answer. */
    record GitRun(int status, String out) {
        static final GitRun NONE = new GitRun(-1, "");
    }

    /** The guard's view of the sandbox. */
    interface Probe {
        /** The path with symlinks resolved as the sandboxed process sees them, or empty. */
        Optional<String> realPath(String path);

        /**
         * Runs the real git inside the sandbox, in the caller's directory and environment,
         * with these arguments (after the program name); bounded in time and output.
         */
        GitRun git(List<String> args);

        /** Whether a resolved path inside lies in the sandbox's own private temp dir. */
        boolean inPrivateTemp(String resolved);

        /** The value the sandbox started with for an environment variable, or null. */
        String sandboxEnv(String name);
    }

    /** The temp dir as the sandboxed process sees it. */
    static final String TEMP = "/tmp";

    private static final int MAX_ALIAS_DEPTH = 8;

    /**
     * The real binaries of wrapped commands, in this sandbox's runtime or an outer one's:
     * a process running one of them is a running git.
     */
    static boolean isRealBinary(String exe) {
        String rest = exe;
        if (!rest.startsWith(Inside.RUNTIME.toString())) {
            return false;
        }
        rest = rest.substring(Inside.RUNTIME.toString().length());
        while (rest.startsWith("/outer/")) {
            rest = rest.substring("/outer".length());
        }
        if (!rest.startsWith("/real/")) {
            return false;
        }
        rest = rest.substring("/real/".length());
        int slash = rest.indexOf('/');
        if (slash <= 0 || rest.indexOf('/', slash + 1) >= 0 || slash == rest.length() - 1) {
            return false;
        }
        for (int i = 0; i < slash; i++) {
            if (rest.charAt(i) < '0' || rest.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** The programs git is also installed as that only serve fetches and pushes. */
    private static final Set<String> SERVERS = Set.of("git-receive-pack", "git-upload-pack", "git-upload-archive");

    /** Subcommands that are git builtins or shipped commands, so never aliases. */
    static final Set<String> KNOWN = Set.of(
            "add", "am", "annotate", "apply", "archive", "bisect", "bisect--helper", "blame", "branch", "bundle",
            "cat-file", "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout",
            "checkout-index", "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit",
            "commit-graph", "commit-tree", "config", "count-objects", "credential", "describe", "diagnose", "diff",
            "diff-files", "diff-index", "diff-tree", "difftool", "difftool--helper", "fast-export", "fast-import",
            "fetch", "fetch-pack", "filter-branch", "fmt-merge-msg", "for-each-ref", "for-each-repo",
            "format-patch", "fsck", "gc", "get-tar-commit-id", "grep", "gui", "hash-object", "help", "hook",
            "index-pack", "init", "instaweb", "interpret-trailers", "log", "ls-files", "ls-remote", "ls-tree",
            "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file", "merge-index",
            "merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index", "mv", "name-rev", "notes",
            "pack-objects", "pack-refs", "patch-id", "prune", "prune-packed", "pull", "push", "range-diff",
            "read-tree", "rebase", "receive-pack", "reflog", "refs", "remote", "repack", "replace", "replay",
            "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert", "rm", "send-email",
            "send-pack", "shortlog", "show", "show-branch", "show-index", "show-ref", "sparse-checkout", "stage",
            "stash", "status", "stripspace", "submodule", "submodule--helper", "switch", "symbolic-ref", "tag",
            "unpack-file", "unpack-objects", "update-index", "update-ref", "update-server-info", "upload-archive",
            "upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version", "whatchanged",
            "worktree", "write-tree");

    /** Decides whether git may run. */
    static Decision decide(Request request, Probe probe) {
        List<String> argv = request.argv();
        String invoked = argv.isEmpty() ? "git" : GitCommand.baseName(argv.get(0));
        if (SERVERS.contains(invoked)) {
            return new Decision.Allow(invoked + " serves fetches and pushes");
        }
        if (invoked.startsWith("git-")) {
            // a dashed entry point (git-commit …): the same as "git commit …"
            return decide(request.withArgv(undashed(argv, invoked)), probe);
        }
        // Under any other name (exec -a) git behaves as plain git.
        GitCommand cmd = GitCommand.read(argv, request.cwd());
        GitRules.Refusal refusal = refusal(cmd, request, probe, 0);
        if (refusal == null) {
            return new Decision.Allow("not a guarded operation");
        }
        if (cmd.sub() != null && isRealBinary(request.parentExe()) && ownCallOfParent(cmd, request, probe)) {
            return new Decision.Allow("git's own call, made by the git that started it");
        }
        // a branch on a remote is no throw-away, whichever repository pushes to it
        if (refusal.effect() != GitRules.Effect.REMOTE && throwAway(cmd, request, probe)) {
            return new Decision.Allow("the repository lies in the sandbox's temp dir");
        }
        return new Decision.Deny(refusal.message());
    }

    private static List<String> undashed(List<String> argv, String invoked) {
        List<String> rewritten = new ArrayList<>();
        rewritten.add("git");
        rewritten.add(invoked.substring(4));
        rewritten.addAll(argv.subList(1, argv.size()));
        return rewritten;
    }

    /** Why the command may not run as it stands, or null. */
    private static GitRules.Refusal refusal(GitCommand cmd, Request request, Probe probe, int depth) {
        GitRules.Refusal env = GitRules.checkEnvironment(request.env(), probe);
        if (env != null) {
            return env;
        }
        for (String spelled : cmd.inline()) {
            String value = spelled.substring(spelled.indexOf(' ') + 1);
            GitRules.Refusal r = GitRules.checkConfigKey(GitRules.keyOf(value), spelled);
            if (r != null) {
                return r;
            }
        }
        if (cmd.incomplete() || cmd.query() || cmd.sub() == null) {
            return null; // git prints something or reports the mistake, and runs nothing
        }
        if (!cmd.rest().isEmpty() && cmd.rest().get(0).equals("--help")) {
            return null; // git turns "git CMD --help" into "git help CMD" before anything else
        }
        GitRules.Refusal r = GitRules.check(cmd.sub(), cmd.rest());
        if (r != null) {
            return r;
        }
        r = existingBranchReset(cmd, probe);
        if (r != null) {
            return r;
        }
        r = remoteFromFiles(cmd, probe);
        if (r != null) {
            return r;
        }
        Optional<List<String>> alias = alias(cmd, request, probe);
        if (alias == null) {
            return new GitRules.Refusal("git " + cmd.sub(), GitRules.Effect.CONFIG,
                    "git's config could not be read to see what this alias does", "run the git command it stands for");
        }
        if (alias.isEmpty()) {
            return null;
        }
        if (depth >= MAX_ALIAS_DEPTH) {
            return new GitRules.Refusal("git " + cmd.sub(), GitRules.Effect.CONFIG,
                    "its alias goes through too many other aliases to check", "run the git command it stands for");
        }
        return refusal(cmd.expand(alias.get()), request, probe, depth + 1);
    }

    /**
     * The words a non-shell alias stands for; empty when the subcommand is no alias, a
     * shell alias (whose git is guarded again when it runs) or a program {@code git-NAME}
     * git runs before it looks for an alias; null when git cannot tell in time. The real
     * git answers, inside the sandbox, with the caller's PATH and exec path: the host
     * never looks for a file with a path a sandbox sent.
     */
    private static Optional<List<String>> alias(GitCommand cmd, Request request, Probe probe) {
        String sub = cmd.sub();
        if (KNOWN.contains(sub)) {
            return Optional.empty();
        }
        List<String> args = new ArrayList<>(cmd.forwarded());
        args.add("config");
        args.add("--get");
        args.add("alias." + sub);
        GitRun run = probe.git(args);
        if (run.status() == 1) {
            return Optional.empty();
        }
        if (run.status() != 0) {
            return null;
        }
        String expansion = run.out().strip();
        if (expansion.isEmpty() || expansion.startsWith("!")) {
            return Optional.empty();
        }
        List<String> words = GitCommand.splitAlias(expansion);
        if (words.isEmpty()) {
            return Optional.empty();
        }
        List<String> list = new ArrayList<>(cmd.forwarded());
        list.add("--list-cmds=main,others");
        GitRun programs = probe.git(list);
        if (programs.status() != 0) {
            return null;
        }
        return programs.out().lines().anyMatch(sub::equals) ? Optional.empty() : Optional.of(words);
    }

    /**
     * {@code git checkout -B NAME}: like {@code -b} where no branch NAME exists; where one
     * does, it moves that branch, which may lose its commits. The real git says, inside,
     * whether the branch is there (and a branch made between this question and the run
     * is the sandbox's own).
     */
    private static GitRules.Refusal existingBranchReset(GitCommand cmd, Probe probe) {
        if (!cmd.sub().equals("checkout") || !GitRules.resetsBranch(cmd.rest())) {
            return null;
        }
        String name = GitRules.newBranch(cmd.rest());
        List<String> args = new ArrayList<>(cmd.forwarded());
        args.addAll(List.of("rev-parse", "--verify", "--quiet", "refs/heads/" + name));
        GitRun run = probe.git(args);
        if (run.status() == 1) {
            return null; // no such branch: -B creates it, as -b would
        }
        return new GitRules.Refusal("git checkout -B", GitRules.Effect.REFS, run.status() == 0
                ? "it moves the existing branch " + name + " to another commit"
                : "git could not say in time whether the branch " + name + " exists",
                "use git checkout -b (or git switch -c) with a new branch name");
    }

    /** Most remote names looked up in the legacy files per command. */
    private static final int MAX_REMOTE_NAMES = 4;

    /**
     * A push, fetch or pull to a remote that git reads from the git dir's {@code remotes/}
     * or {@code branches/} files (still read when the config has no such remote): a
     * sandbox can write those files, and their {@code Push:} and {@code Pull:} lines can
     * force or delete. The real git names the files, inside; whether they exist is asked
     * of the launcher.
     */
    private static GitRules.Refusal remoteFromFiles(GitCommand cmd, Probe probe) {
        List<String> names = GitRules.remotes(cmd.sub(), cmd.rest());
        if (names == null) {
            return null;
        }
        List<String> nicks = new ArrayList<>();
        for (String n : names.isEmpty() ? List.of("origin") : names) {
            if (!n.isEmpty() && n.indexOf('/') < 0 && !n.equals(".") && !n.equals("..") && !nicks.contains(n)
                    && nicks.size() < MAX_REMOTE_NAMES) {
                nicks.add(n);
            }
        }
        if (nicks.isEmpty()) {
            return null;
        }
        List<String> args = new ArrayList<>(cmd.forwarded());
        args.addAll(List.of("rev-parse", "--path-format=absolute"));
        for (String n : nicks) {
            args.addAll(List.of("--git-path", "remotes/" + n, "--git-path", "branches/" + n));
        }
        GitRun run = probe.git(args);
        if (run.status() > 0) {
            return null; // no repository: git finds no remote files either
        }
        List<String> lines = run.out().lines().toList();
        if (run.status() < 0 || lines.size() != 2 * nicks.size()) {
            return new GitRules.Refusal("git " + cmd.sub(), GitRules.Effect.REMOTE,
                    "git could not say in time where it would read the remote from", "try again");
        }
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("/") && probe.realPath(lines.get(i)).isPresent()) {
                String nick = nicks.get(i / 2);
                return new GitRules.Refusal("git " + cmd.sub() + " " + nick, GitRules.Effect.REMOTE,
                        "the remote " + nick + " comes from the git dir's " + (i % 2 == 0 ? "remotes/" : "branches/")
                                + " file, which the sandbox can write and whose refspecs can force or delete",
                        "define remotes with git remote add outside the sandbox");
            }
        }
        return null;
    }

    /** Whether the command is exactly a call its parent, a running git, makes itself. */
    private static boolean ownCallOfParent(GitCommand cmd, Request request, Probe probe) {
        List<String> parentArgv = request.parentArgv();
        if (parentArgv.isEmpty()) {
            return false;
        }
        String invoked = GitCommand.baseName(parentArgv.get(0));
        if (invoked.startsWith("git-")) {
            parentArgv = undashed(parentArgv, invoked);
        }
        GitCommand parent = GitCommand.read(parentArgv, request.cwd());
        for (int depth = 0; parent.sub() != null && depth < MAX_ALIAS_DEPTH; depth++) {
            if (GitRules.ownCall(parent.sub(), parent.rest(), cmd.sub(), cmd.rest())) {
                return true;
            }
            Optional<List<String>> alias = alias(parent, request, probe);
            if (alias == null || alias.isEmpty()) {
                return false;
            }
            parent = parent.expand(alias.get());
        }
        return false;
    }

    /**
     * Whether every place the command touches, as git itself finds it inside the sandbox
     * (its git dir, common dir and work tree, the index file, the directory it runs in),
     * lies in the sandbox's private temp dir.
     */
    private static boolean throwAway(GitCommand cmd, Request request, Probe probe) {
        Map<String, String> env = request.env();
        String dir = cmd.dir();
        String gitDir = GitCommand.pathOf(dir, cmd.gitDirFlag() != null ? cmd.gitDirFlag() : env.get("GIT_DIR"));
        String workTree = GitCommand.pathOf(dir,
                cmd.workTreeFlag() != null ? cmd.workTreeFlag() : env.get("GIT_WORK_TREE"));
        List<String> places = new ArrayList<>();
        places.add(workTree != null ? workTree : dir);
        // without a git dir given, git looks for the repository from the directory it runs in
        places.add(gitDir != null ? gitDir : dir);
        String commonDir = GitCommand.pathOf(dir, env.get("GIT_COMMON_DIR"));
        if (commonDir != null) {
            places.add(commonDir);
        }
        String indexFile = GitCommand.pathOf(dir, env.get("GIT_INDEX_FILE"));
        if (indexFile != null) {
            places.add(indexFile);
        }
        // cheap first: the names given must all be in the temp dir before git is asked
        for (String p : places) {
            if (!inTemp(probe, p)) {
                return false;
            }
        }
        List<String> args = new ArrayList<>(cmd.forwarded());
        args.addAll(List.of("rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir",
                "--show-toplevel"));
        GitRun run = probe.git(args);
        if (run.status() < 0) {
            return false;
        }
        List<String> lines = run.out().lines().toList();
        if (run.status() == 0 && lines.size() < 3) {
            return false;
        }
        // a bare repository has no top level: git stops after the two dirs
        for (int i = 0; i < Math.min(lines.size(), 3); i++) {
            if (!lines.get(i).startsWith("/") || !inTemp(probe, lines.get(i))) {
                return false;
            }
        }
        // no repository at all: git creates one here or fails, both in the temp dir
        return true;
    }

    private static boolean inTemp(Probe probe, String path) {
        Optional<String> real = probe.realPath(path);
        if (real.isEmpty()) {
            // not there yet (git init, a new worktree): its parent decides
            String parent = java.nio.file.Path.of(path).getParent() == null ? null
                    : java.nio.file.Path.of(path).getParent().toString();
            if (parent == null || parent.equals(path)) {
                return false;
            }
            real = probe.realPath(parent);
            if (real.isEmpty()) {
                return false;
            }
        }
        String r = real.get();
        return (r.equals(TEMP) || r.startsWith(TEMP + "/")) && probe.inPrivateTemp(r);
    }
}
