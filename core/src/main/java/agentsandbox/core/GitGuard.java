package agentsandbox.core;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code @git} guard's rules: reads a git command line the way git does (global
 * options, then the subcommand and its options) and refuses the operations that
 * destroy work or skip the project's hooks, each with the reason and a safer way.
 *
 * <p>Everything here is pure: what the guard needs from the sandbox (resolving a path
 * as the sandboxed process sees it, finding the repository, looking up an alias) comes
 * through {@link Probe}.
 */
final class GitGuard {
    private GitGuard() {}

    /**
     * What git was asked to do, as seen inside the sandbox.
     *
     * @param parentExe the executable of the calling process, as the launcher read it
     *                  from {@code /proc}; empty when unknown
     */
    record Request(List<String> argv, String cwd, Map<String, String> env, String parentExe) {
        Request {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
            parentExe = parentExe == null ? "" : parentExe;
        }

        Request(List<String> argv, String cwd, Map<String, String> env) {
            this(argv, cwd, env, "");
        }
    }

    /**
     * The real binaries of wrapped commands, in this sandbox's runtime or an outer one's.
     * A git started directly by the real git is git's own work ({@code git stash} runs
     * {@code git reset --hard}), not the caller's: commands the caller writes reach git
     * through a shell, an editor or a hook, never as a direct child of it.
     */
    private static final java.util.regex.Pattern REAL_BINARY =
            java.util.regex.Pattern.compile("/run/agent-sandbox(/outer)*/real/[0-9]+/[^/]+");

    /** The guard's answer. */
    sealed interface Decision {
        record Allow(String why) implements Decision {}

        record Deny(String message) implements Decision {}
    }

    /** The guard's view of the sandbox. */
    interface Probe {
        /** The path with symlinks resolved as the sandboxed process sees them, or empty. */
        Optional<String> realPath(String path);

        /**
         * Whether the repository at or around this (resolved, inside) directory lives
         * entirely inside the sandbox's temp dir: its work tree and its git dirs.
         */
        boolean throwAwayRepository(String dir, String gitDir);

        /** The value of {@code alias.NAME} for the repository at this directory, or empty. */
        Optional<String> alias(String dir, String name);

        /** Whether {@code git-NAME} exists as a program git would run. */
        boolean externalCommand(String name);

        /** The value the sandbox started with for an environment variable, or null. */
        String sandboxEnv(String name);
    }

    /** The temp dir as the sandboxed process sees it. */
    static final String TEMP = "/tmp";

    private static final int MAX_ALIAS_DEPTH = 8;

    /** Git's global options that take a value as the next argument (or after {@code =} for the long ones). */
    private static final Set<String> GLOBAL_WITH_VALUE = Set.of(
            "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--attr-source",
            "--super-prefix", "--list-cmds", "--shallow-file");

    /** The programs git is also installed as that only serve fetches and pushes. */
    private static final Set<String> SERVERS = Set.of("git-receive-pack", "git-upload-pack", "git-upload-archive");

    /** Subcommands that are git builtins or shipped commands, so never aliases. */
    private static final Set<String> KNOWN = Set.of(
            "add", "am", "annotate", "apply", "archive", "bisect", "blame", "branch", "bundle", "cat-file",
            "check-attr", "check-ignore", "check-mailmap", "check-ref-format", "checkout", "checkout-index",
            "cherry", "cherry-pick", "citool", "clean", "clone", "column", "commit", "commit-graph", "commit-tree",
            "config", "count-objects", "credential", "describe", "diagnose", "diff", "diff-files", "diff-index",
            "diff-tree", "difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch",
            "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "gc", "get-tar-commit-id",
            "grep", "gui", "hash-object", "help", "hook", "index-pack", "init", "instaweb", "interpret-trailers",
            "log", "ls-files", "ls-remote", "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge",
            "merge-base", "merge-file", "merge-index", "merge-tree", "mergetool", "mktag", "mktree", "multi-pack-index",
            "mv", "name-rev", "notes", "pack-objects", "pack-refs", "patch-id", "prune", "prune-packed", "pull",
            "push", "range-diff", "read-tree", "rebase", "receive-pack", "reflog", "refs", "remote", "repack",
            "replace", "replay", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert",
            "rm", "send-email", "send-pack", "shortlog", "show", "show-branch", "show-index", "show-ref",
            "sparse-checkout", "stage", "stash", "status", "stripspace", "submodule", "switch", "symbolic-ref",
            "tag", "unpack-file", "unpack-objects", "update-index", "update-ref", "update-server-info",
            "upload-archive", "upload-pack", "var", "verify-commit", "verify-pack", "verify-tag", "version",
            "whatchanged", "worktree", "write-tree");

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
    private static final GitOptions MERGE = GitOptions.of("""
            commit e|edit cleanup= ff ff-only log? n|no-stat stat summary squash no-verify s|strategy=
            X|strategy-option= verify-signatures q|quiet v|verbose progress autostash allow-unrelated-histories
            rerere-autoupdate overwrite-ignore S|gpg-sign? abort quit continue into-name= F|file= m|message=
            signoff
            """);
    private static final GitOptions PULL = GitOptions.of("""
            q|quiet v|verbose recurse-submodules? commit e|edit cleanup= ff ff-only log? n|no-stat stat summary
            squash no-verify s|strategy= X|strategy-option= verify-signatures autostash allow-unrelated-histories
            r|rebase? S|gpg-sign? all a|append upload-pack= f|force t|tags p|prune j|jobs? dry-run k|keep
            depth= shallow-since= shallow-exclude= deepen= unshallow update-shallow refmap= o|server-option=
            4|ipv4 6|ipv6 negotiation-tip= show-forced-updates set-upstream signoff
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
    private static final GitOptions STASH = GitOptions.of("""
            q|quiet p|patch S|staged k|keep-index u|include-untracked a|all m|message= pathspec-from-file=
            pathspec-file-nul index
            """);
    private static final GitOptions BRANCH = GitOptions.of("""
            v|verbose q|quiet t|track? u|set-upstream-to= unset-upstream color? r|remotes contains^ no-contains^
            merged^ no-merged^ column? sort= points-at= a|all d|delete D| m|move M| c|copy C| l|list show-current
            create-reflog edit-description f|force format= i|ignore-case omit-empty recurse-submodules abbrev?
            """);

    /** Decides whether git may run. */
    static Decision decide(Request request, Probe probe) {
        return decide(request, probe, 0);
    }

    private static Decision decide(Request request, Probe probe, int depth) {
        List<String> argv = request.argv();
        String invoked = argv.isEmpty() ? "git" : baseName(argv.get(0));
        if (SERVERS.contains(invoked)) {
            return new Decision.Allow(invoked + " serves fetches and pushes");
        }
        if (invoked.startsWith("git-")) {
            // a dashed entry point (git-commit …): the same as "git commit …"
            List<String> rewritten = new ArrayList<>();
            rewritten.add("git");
            rewritten.add(invoked.substring(4));
            rewritten.addAll(argv.subList(1, argv.size()));
            return decide(new Request(rewritten, request.cwd(), request.env(), request.parentExe()), probe, depth);
        }
        // Under any other name (exec -a) git behaves as plain git.

        if (REAL_BINARY.matcher(request.parentExe()).matches()) {
            return new Decision.Allow("started by git itself");
        }

        // Inline config is checked after the temp-dir exception: nothing is refused there.
        Decision inlineConfig = checkEnvironment(request.env(), probe);

        String dir = request.cwd();
        int i = 1;
        boolean help = false;
        // as given: git reads a relative --git-dir or --work-tree from the directory after every -C
        String gitDirFlag = null;
        String workTreeFlag = null;
        for (; i < argv.size(); i++) {
            String a = argv.get(i);
            if (!a.startsWith("-")) {
                break;
            }
            String name = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                name = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            if (GLOBAL_WITH_VALUE.contains(name)) {
                if (value == null) {
                    if (i + 1 >= argv.size()) {
                        return new Decision.Allow("incomplete command line; git reports it");
                    }
                    value = argv.get(++i);
                }
                switch (name) {
                    case "-C" -> dir = value.isEmpty() ? dir : resolve(dir, value);
                    case "-c", "--config-env" -> {
                        if (inlineConfig == null) {
                            inlineConfig = checkConfigKey(keyOf(value), name + " " + value);
                        }
                    }
                    case "--git-dir" -> gitDirFlag = value;
                    case "--work-tree" -> workTreeFlag = value;
                    default -> {
                        // --namespace, --attr-source, --super-prefix, --list-cmds, --shallow-file: harmless
                    }
                }
            } else if (a.equals("-h") || a.equals("--help") || a.equals("-v") || a.equals("--version")
                    || (a.startsWith("--exec-path") && !a.startsWith("--exec-path=")) || a.equals("--html-path")
                    || a.equals("--man-path") || a.equals("--info-path")) {
                // queries; --exec-path=DIR is not one: git goes on to run the command
                help = true;
            }
            // every other global option is a flag (-p, -P, --bare, --no-pager …)
        }

        Map<String, String> env = request.env();
        String gitDir = pathOf(dir, gitDirFlag != null ? gitDirFlag : env.get("GIT_DIR"));
        String workTree = pathOf(dir, workTreeFlag != null ? workTreeFlag : env.get("GIT_WORK_TREE"));
        String commonDir = pathOf(dir, env.get("GIT_COMMON_DIR"));
        String indexFile = pathOf(dir, env.get("GIT_INDEX_FILE"));
        // Without a work tree given, git works on the current directory: as the work tree of an
        // explicit git dir, or as where it looks for the repository.
        String tree = workTree != null ? workTree : dir;
        if (inTemp(probe, tree) && inTemp(probe, gitDir != null ? gitDir : dir)
                && (commonDir == null || inTemp(probe, commonDir)) && (indexFile == null || inTemp(probe, indexFile))
                && probe.throwAwayRepository(real(probe, gitDir != null ? tree : dir),
                        gitDir == null ? null : real(probe, gitDir))) {
            return new Decision.Allow("the repository lies in the sandbox's temp dir");
        }
        if (inlineConfig != null) {
            return inlineConfig;
        }
        if (help || i >= argv.size()) {
            return new Decision.Allow("help or version");
        }

        String sub = argv.get(i);
        List<String> rest = argv.subList(i + 1, argv.size());
        if (!rest.isEmpty() && rest.get(0).equals("--help")) {
            // git turns "git CMD --help" into "git help CMD" before anything else
            return new Decision.Allow("git " + sub + " --help is git help " + sub);
        }
        Decision d = checkSubcommand(sub, rest);
        if (d != null) {
            return d;
        }
        if (!KNOWN.contains(sub) && !probe.externalCommand(sub)) {
            Optional<String> alias = probe.alias(real(probe, dir), sub);
            if (alias.isPresent()) {
                if (depth >= MAX_ALIAS_DEPTH) {
                    return deny("git " + sub, "its alias goes through too many other aliases to check",
                            "run the git command it stands for");
                }
                String expansion = alias.get().strip();
                if (expansion.startsWith("!")) {
                    return new Decision.Allow("shell alias; the git it runs is guarded again");
                }
                List<String> expanded = new ArrayList<>(argv.subList(0, i));
                expanded.addAll(splitAlias(expansion));
                expanded.addAll(rest);
                return decide(new Request(expanded, request.cwd(), request.env(), request.parentExe()), probe,
                        depth + 1);
            }
        }
        return new Decision.Allow("not a guarded operation");
    }

    // ------------------------------------------------------------------ subcommands

    private static Decision checkSubcommand(String sub, List<String> args) {
        switch (sub) {
            case "checkout" -> {
                return deny("git checkout", "it can overwrite uncommitted changes",
                        "use git switch to change branches (git switch -c to create one)");
            }
            case "restore" -> {
                return deny("git restore", "it discards uncommitted changes", "commit or stash first");
            }
            case "reset" -> {
                if (RESET.parse(args).has("hard")) {
                    return deny("git reset --hard", "it discards uncommitted changes",
                            "use git reset --soft, or git revert");
                }
            }
            case "clean" -> {
                if (CLEAN.parse(args).has("force")) {
                    return deny("git clean with force", "it deletes untracked files for good",
                            "review with git clean -n and remove files by hand");
                }
            }
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
                if (PULL.parse(args).has("no-verify")) {
                    return noVerify("pull");
                }
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
            case "branch" -> {
                GitOptions.Parsed p = BRANCH.parse(args);
                if (p.has("-D") || (p.has("delete") && p.has("force"))) {
                    return deny("git branch -D", "it deletes a branch even when its commits are merged nowhere",
                            "use git branch -d, which deletes only merged branches");
                }
            }
            default -> {
                return null;
            }
        }
        return null;
    }

    private static Decision checkPush(GitOptions.Parsed p) {
        if (p.has("no-verify")) {
            return noVerify("push");
        }
        if (p.has("force")) {
            return deny("git push --force", "it can overwrite commits on the remote",
                    "use git push --force-with-lease");
        }
        if (p.has("mirror")) {
            return deny("git push --mirror", "it overwrites and deletes every ref on the remote",
                    "push the branches you mean, with --force-with-lease if needed");
        }
        for (String refspec : p.positionals()) {
            if (refspec.startsWith("+")) {
                return deny("git push " + refspec, "a + refspec forces the update and can overwrite commits",
                        "use git push --force-with-lease");
            }
        }
        return null;
    }

    private static final Set<String> STASH_SUBCOMMANDS = Set.of(
            "list", "show", "drop", "pop", "apply", "branch", "push", "save", "clear", "create", "store",
            "export", "import");

    private static Decision checkStash(List<String> args) {
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
                case "drop", "clear", "pop" -> deny("git stash " + a, "it can lose stashed work for good",
                        "use git stash apply and keep the stash");
                default -> null;
            };
        }
        return null;
    }

    private static Decision noVerify(String sub) {
        return deny("git " + sub + " --no-verify", "it skips the project's hooks", "fix what the hook complains about");
    }

    private static Decision deny(String operation, String why, String instead) {
        return new Decision.Deny(operation + " is not allowed in this sandbox: " + why + "; " + instead);
    }

    // ------------------------------------------------------------------ inline config

    /** Config keys whose inline setting could redefine commands or skip hooks. */
    private static Decision checkConfigKey(String key, String spelled) {
        String k = key.toLowerCase(Locale.ROOT);
        if (k.startsWith("alias.")) {
            return deny("git " + spelled, "inline aliases can redefine what a command does",
                    "configure aliases outside the sandbox");
        }
        if (k.equals("core.hookspath")) {
            return deny("git " + spelled, "moving the hooks skips the project's hooks",
                    "configure hooks outside the sandbox");
        }
        if (k.equals("protocol.allow") || k.equals("protocol.ext.allow")) {
            return deny("git " + spelled, "the ext transport runs commands as git's own",
                    "fetch and push over file, ssh or https");
        }
        if (k.equals("clean.requireforce")) {
            return deny("git " + spelled, "without requireForce git clean deletes untracked files for good",
                    "review with git clean -n and remove files by hand");
        }
        if (k.startsWith("remote.") && (k.endsWith(".mirror") || k.endsWith(".push"))) {
            return deny("git " + spelled, "a remote's mirror or push refspec set inline can force a push",
                    "push with --force-with-lease");
        }
        if (k.startsWith("include.") || k.startsWith("includeif.")) {
            return deny("git " + spelled, "an included config file can define aliases and hooks",
                    "configure git outside the sandbox");
        }
        return null;
    }

    private static String keyOf(String assignment) {
        int eq = assignment.indexOf('=');
        return eq < 0 ? assignment : assignment.substring(0, eq);
    }

    private static Decision checkEnvironment(Map<String, String> env, Probe probe) {
        String count = env.get("GIT_CONFIG_COUNT");
        if (count != null && !count.isBlank()) {
            int n;
            try {
                n = Integer.parseInt(count.strip());
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 0) {
                return deny("git with GIT_CONFIG_COUNT=" + count, "the count is not a number",
                        "unset GIT_CONFIG_COUNT");
            }
            for (int k = 0; k < n; k++) {
                String key = env.get("GIT_CONFIG_KEY_" + k);
                if (key == null) {
                    break; // git stops at a missing key and runs nothing
                }
                Decision d = checkConfigKey(key, "with GIT_CONFIG_KEY_" + k + "=" + key);
                if (d != null) {
                    return d;
                }
            }
        }
        String parameters = env.get("GIT_CONFIG_PARAMETERS");
        if (parameters != null && !parameters.isBlank()) {
            List<String> words = shellWords(parameters);
            if (words == null) {
                return deny("git with GIT_CONFIG_PARAMETERS", "its value cannot be read",
                        "unset GIT_CONFIG_PARAMETERS");
            }
            for (String w : words) {
                Decision d = checkConfigKey(keyOf(w), "with GIT_CONFIG_PARAMETERS " + w);
                if (d != null) {
                    return d;
                }
            }
        }
        String protocols = env.get("GIT_ALLOW_PROTOCOL");
        if (protocols != null && java.util.Arrays.asList(protocols.split(":")).contains("ext")) {
            return deny("git with GIT_ALLOW_PROTOCOL=" + protocols, "the ext transport runs commands as git's own",
                    "fetch and push over file, ssh or https");
        }
        for (String var : List.of("HOME", "XDG_CONFIG_HOME")) {
            String v = env.get(var);
            String expected = probe.sandboxEnv(var);
            if (v != null && !v.isEmpty() && !v.equals(expected)) {
                return deny("git with " + var + "=" + v, "git would read another global config, which can define"
                        + " aliases and hooks", "run git with the sandbox's own " + var
                        + (expected == null ? "" : " (" + expected + ")"));
            }
        }
        for (String var : List.of("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG")) {
            String v = env.get(var);
            if (v != null && !v.isEmpty() && !v.equals("/dev/null")) {
                return deny("git with " + var + "=" + v, "another config file can define aliases and hooks",
                        "configure git outside the sandbox, or unset " + var);
            }
        }
        return null;
    }

    /**
     * Splits git's single-quoted parameter list ({@code 'a.b'='c' 'd.e'}); null when it
     * is not well-formed.
     */
    static List<String> shellWords(String s) {
        List<String> out = new ArrayList<>();
        StringBuilder word = null;
        int i = 0;
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n') {
                if (word != null) {
                    out.add(word.toString());
                    word = null;
                }
                i++;
            } else if (c == '\'') {
                int end = s.indexOf('\'', i + 1);
                if (end < 0) {
                    return null;
                }
                word = word == null ? new StringBuilder() : word;
                word.append(s, i + 1, end);
                i = end + 1;
            } else if (c == '\\' && i + 1 < s.length()) {
                word = word == null ? new StringBuilder() : word;
                word.append(s.charAt(i + 1));
                i += 2;
            } else {
                word = word == null ? new StringBuilder() : word;
                word.append(c);
                i++;
            }
        }
        if (word != null) {
            out.add(word.toString());
        }
        return out;
    }

    /** Splits an alias the way git does: whitespace, with single and double quotes. */
    static List<String> splitAlias(String s) {
        List<String> out = new ArrayList<>();
        StringBuilder word = null;
        char quote = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (quote != 0) {
                if (c == quote) {
                    quote = 0;
                } else if (c == '\\' && quote == '"' && i + 1 < s.length()) {
                    word.append(s.charAt(++i));
                } else {
                    word.append(c);
                }
            } else if (Character.isWhitespace(c)) {
                if (word != null) {
                    out.add(word.toString());
                    word = null;
                }
            } else {
                word = word == null ? new StringBuilder() : word;
                if (c == '\'' || c == '"') {
                    quote = c;
                } else if (c == '\\' && i + 1 < s.length()) {
                    word.append(s.charAt(++i));
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

    // ------------------------------------------------------------------ paths

    /** {@code path} against {@code base}, lexically ({@code ..} folded). */
    /** The last component of a program name as exec'd ({@code /usr/bin/git} → {@code git}). */
    private static String baseName(String program) {
        String trimmed = program;
        while (trimmed.length() > 1 && trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        int slash = trimmed.lastIndexOf('/');
        return slash < 0 ? trimmed : trimmed.substring(slash + 1);
    }

    static String resolve(String base, String path) {
        if (path.indexOf('\0') >= 0 || base.indexOf('\0') >= 0) {
            // no real argument or environment value holds a NUL; never fail on one
            return resolve(base.replace('\0', '?'), path.replace('\0', '?'));
        }
        Path p = Path.of(path);
        return (p.isAbsolute() ? p : Path.of(base).resolve(p)).normalize().toString();
    }

    /** A path setting against {@code dir}, or null when unset or empty. */
    private static String pathOf(String dir, String value) {
        return value == null || value.isEmpty() ? null : resolve(dir, value);
    }

    private static String real(GitGuard.Probe probe, String path) {
        return probe.realPath(path).orElse(path);
    }

    private static boolean inTemp(Probe probe, String path) {
        Optional<String> real = probe.realPath(path);
        if (real.isEmpty()) {
            return false;
        }
        String r = real.get();
        return r.equals(TEMP) || r.startsWith(TEMP + "/");
    }
}
