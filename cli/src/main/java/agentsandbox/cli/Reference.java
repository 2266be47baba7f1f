// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The one source of the command line's documentation: every subcommand and flag with a
 * brief line and its full text, and the man page's other sections. {@code --help} prints
 * the short form ({@link #help()}); the man page and the shell completions are made from
 * the same values when the app image is built ({@link Manual}). Nothing here runs unless
 * {@code --help} is asked for or the image is built.
 *
 * @param summary     the title after {@code agent-sandbox: } and in the man page's NAME
 * @param commands    the usage forms, in order; some of them are subcommands
 * @param options     the flags, in order
 * @param helpNotes   the lines {@code --help} prints after the flags (the short form of
 *                    what the man page's sections say)
 * @param description the man page's DESCRIPTION paragraphs
 * @param sections    the man page's sections after OPTIONS
 */
record Reference(
        String summary,
        List<Command> commands,
        List<Option> options,
        List<String> helpNotes,
        List<String> description,
        List<Section> sections) {

    static final String PROGRAM = "agent-sandbox";

    /**
     * A usage form: {@code agent-sandbox} followed by the synopsis.
     *
     * @param synopsis what follows {@code agent-sandbox }, as typed
     * @param brief    the help's one line, or empty
     * @param details  the man page's text, or empty for a form that is not a subcommand
     */
    record Command(String synopsis, String brief, String details) {
        private List<String> words() {
            List<String> words = new ArrayList<>();
            for (String w : synopsis.split(" ")) {
                words.add(w);
            }
            if (words.size() > 1 && words.get(0).equals("[flags]")) {
                words.remove(0); // a subcommand that takes the run's flags before it
            }
            return words;
        }

        /** The subcommand's name, or null when this form is not a subcommand (the run, --help). */
        String name() {
            String first = words().get(0);
            if (first.isEmpty() || first.startsWith("-") || first.startsWith("[") || first.startsWith("<")) {
                return null;
            }
            return first;
        }

        /** The flags the synopsis shows after the name ({@code -q}, {@code -C}). */
        List<String> flags() {
            List<String> flags = new ArrayList<>();
            List<String> words = words();
            for (String word : words.subList(1, words.size())) {
                for (String alternative : word.replace("[", "").replace("]", "").split("\\|")) {
                    if (alternative.startsWith("-") && alternative.length() > 1) {
                        flags.add(alternative);
                    }
                }
            }
            return flags;
        }

        /** Whether it takes paths ({@code PATH...} after its name). */
        boolean paths() {
            for (String word : words()) {
                if (word.startsWith("PATH")) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * A flag.
     *
     * @param names    its spellings, short first ({@code -C}, {@code --cwd})
     * @param argument the argument's placeholder ({@code PATH}), or null
     * @param optional the argument is optional and given only with {@code =}
     * @param brief    the help's one line, also the completion menus' text
     * @param details  the man page's text, or empty when the brief says it all
     */
    record Option(List<String> names, String argument, boolean optional, String brief, String details) {
        /** The long name, or the first. */
        String longName() {
            for (String n : names) {
                if (n.startsWith("--")) {
                    return n;
                }
            }
            return names.get(0);
        }

        /** As the help and the man page show it: {@code --cwd PATH}, {@code --network[=BOOL]}. */
        String longForm() {
            String name = longName();
            if (argument == null) {
                return name;
            }
            return optional ? name + "[=" + argument + "]" : name + " " + argument;
        }

        private String shortName() {
            for (String n : names) {
                if (!n.startsWith("--")) {
                    return n;
                }
            }
            return null;
        }
    }

    /**
     * A section of the man page.
     *
     * @param title its heading, as the man page shows it ({@code FILES})
     * @param items its paragraphs, in order
     */
    record Section(String title, List<Item> items) {}

    /**
     * A paragraph of a section.
     *
     * @param term what it describes (a key, a file, a variable, an example command line),
     *             shown in bold above the text; null for a plain paragraph
     * @param text the paragraph
     */
    record Item(String term, String text) {}

    private static Item item(String term, String text) {
        return new Item(term, text);
    }

    private static Item paragraph(String text) {
        return new Item(null, text);
    }

    private static Option flag(String names, String argument, boolean optional, String brief, String details) {
        return new Option(List.of(names.split(" ")), argument, optional, brief, details);
    }

    /** The help {@code --help} prints: the short form. */
    String help() {
        int column = 0;
        for (Command c : commands) {
            if (!c.brief().isEmpty()) {
                column = Math.max(column, c.synopsis().length());
            }
        }
        StringBuilder b = new StringBuilder();
        b.append(PROGRAM).append(": ").append(summary).append("\n\nusage:\n");
        for (Command c : commands) {
            b.append("  ").append(PROGRAM).append(' ').append(c.synopsis());
            if (!c.brief().isEmpty()) {
                b.append(" ".repeat(column - c.synopsis().length() + 2)).append(c.brief());
            }
            b.append('\n');
        }
        b.append("\nflags (read up to the command or '--'; the rest is the command's):\n");
        int width = 0;
        for (Option o : options) {
            width = Math.max(width, o.longForm().length());
        }
        for (Option o : options) {
            String shortName = o.shortName();
            b.append("  ").append(shortName == null ? "    " : shortName + ", ").append(o.longForm())
                    .append(" ".repeat(width - o.longForm().length() + 1)).append(o.brief()).append('\n');
        }
        for (String line : helpNotes) {
            b.append(line).append('\n');
        }
        return b.toString();
    }

    /** The subcommand of that name ({@code doctor}, {@code log}), or null. */
    Command subcommand(String name) {
        for (Command c : commands) {
            if (name.equals(c.name())) {
                return c;
            }
        }
        return null;
    }

    /**
     * What {@code agent-sandbox NAME --help} prints: the subcommand's usage and the man
     * page's paragraph on it, filled to 80 columns.
     */
    String subcommandHelp(String name) {
        Command c = subcommand(name);
        StringBuilder b = new StringBuilder();
        b.append("usage: ").append(PROGRAM).append(' ').append(c.synopsis()).append("\n\n");
        StringBuilder line = new StringBuilder();
        for (String word : c.details().split(" ")) {
            if (word.isEmpty()) {
                continue;
            }
            if (!line.isEmpty() && line.length() + 1 + word.length() > 80) {
                b.append(line).append('\n');
                line.setLength(0);
            }
            line.append(line.isEmpty() ? "" : " ").append(word);
        }
        if (!line.isEmpty()) {
            b.append(line).append('\n');
        }
        b.append("\nAll flags: ").append(PROGRAM).append(" --help; in full: man ").append(PROGRAM).append('\n');
        return b.toString();
    }

    /** The documentation of this build. */
    static Reference current() {
        return CURRENT;
    }

    private static final Reference CURRENT = new Reference(
            "run a command in a bubblewrap sandbox",
            List.of(
                    new Command("[flags] [--] <command> [args...]", "", ""),
                    new Command("check [-q]", "inside a sandbox? (also: --check)",
                            "Print \"inside sandbox\" (exit 0) or \"outside sandbox\" (exit 1); -q (or --quiet) prints"
                                    + " nothing. Answered by the native launcher, without starting Java. A subcommand only where the command would be, taking"
                                    + " only -q; to run a program named check, write agent-sandbox -- check."),
                    new Command("trust [-C DIR]", "trust the project config of DIR",
                            "Print the project config of DIR (default: the working directory), its SHA-256 and"
                                    + " everything it loosens, and record the path and hash in the trust store. From"
                                    + " then on that exact file applies in full; one changed byte makes it untrusted"
                                    + " again. Run it outside any sandbox: inside one it is refused. Takes only -C DIR;"
                                    + " to run a program named trust, write agent-sandbox -- trust."),
                    new Command("doctor", "what stops sandboxes here, and the fix",
                            "Check in one screen whether sandboxes can run on this machine, and say how to fix what"
                                    + " stops them: bwrap missing or older than 0.5.0, user namespaces disabled"
                                    + " (user.max_user_namespaces, kernel.unprivileged_userns_clone) or restricted by"
                                    + " AppArmor (kernel.apparmor_restrict_unprivileged_userns), seccomp unavailable, the"
                                    + " legacy TIOCSTI setting (dev.tty.legacy_tiocsti), no home directory, running as"
                                    + " root. It starts a trial sandbox, and reports whether the config files here are"
                                    + " valid and whether the project config is trusted. Exit status 0 only when a"
                                    + " sandbox can run."),
                    new Command("[flags] explain PATH...", "what a run here gives PATH, and why",
                            "For each PATH, say what the sandbox makes of it, the rule that decided it and the flag"
                                    + " or config entry that would change it; start nothing. The flags before explain are"
                                    + " the run's (-C, -c, --ro, --rw, --share-tmp, ...). One block per PATH, a blank"
                                    + " line between blocks. The first line is PATH: LEVEL, with LEVEL read-write,"
                                    + " read-only, hidden (an empty directory, or a file that cannot be read) or replaced"
                                    + " (the sandbox's own, not the host's: the private /tmp, /dev, /proc, /run, the"
                                    + " runtime under /run/agent-sandbox, ...), followed for hidden and replaced by what"
                                    + " is seen there in parentheses. Then lines keyed path: (a symlink's target, or what"
                                    + " a missing path would get), tool: (the preset that grants a missing tool"
                                    + " directory), view: (whose content is shown there), outer: (a stricter outer"
                                    + " sandbox's rule), rule: (the deciding rule and its layer), beats: (the rules that"
                                    + " lost) and change: (the flag for one run and the config entry for every run that"
                                    + " would change it, or none). Inside a sandbox it answers for that sandbox and"
                                    + " takes no flags. A command failed with \"Read-only file system\"? explain its"
                                    + " path."),
                    new Command("changes [ACTION] [PATH]",
                            "what sandboxes changed in your home",
                            "ACTION is list (the default), diff PATH..., take PATH..., discard PATH... or discard"
                                    + " --all. List what sandboxes changed over your home's directories that @caches and @agents"
                                    + " grant (they see those directories copy-on-write: their changes stay in"
                                    + " agent-sandbox's layers, and no program outside a sandbox sees them): each path"
                                    + " as added, changed or deleted, its size, and whether it is code or settings that"
                                    + " a program would run or obey. diff shows the sandboxes' version against your own;"
                                    + " take brings it to your home (and out of the layer); discard drops it, so that"
                                    + " sandboxes see your own again (--all: every change). Outside any sandbox only."),
                    new Command("log [--json]", "what runs refused (the last by default)",
                            "Show what runs refused, from the denial log: git commands the guard refused (with the"
                                    + " rule), files the checks after a run moved aside or reported, blocked commands"
                                    + " that were called (reported by the sandbox, and marked so), and the run's"
                                    + " start, end, command, working directory, exit status and policy digest. The"
                                    + " last run by default; --project DIR, the runs in DIR or below it; --since WHEN,"
                                    + " the runs since then (an age such as 30m, 2h or 7d, or a time such as"
                                    + " 2026-11-26T20:00); --all, every run the log holds; --json, the runs as JSON."
                                    + " Only the host-side agent-sandbox process writes the log, after the sandbox has"
                                    + " ended; it is hidden in every sandbox. A run that refused something ends with"
                                    + " one line on stderr saying how many, and pointing here."),
                    new Command("--help | --version", "", "")),
            List.of(
                    flag("-h --help", null, false, "show this help and exit",
                            "Print this short help on stdout and exit 0; it wins wherever it appears among the"
                                    + " flags. No arguments at all print it on stderr, as a usage error (exit 1)."),
                    flag("-v --version", null, false, "show the version, Java runtime and bwrap, and exit",
                            "Print the version, the commit it was built from, the bundled Java runtime's version and"
                                    + " the bwrap found, and exit 0."),
                    flag("--check", null, false, "same as the check subcommand", ""),
                    flag("-C --cwd", "PATH", false, "behave as if started in PATH",
                            "Behave as if started in PATH: the config lookup, relative paths and the command's"
                                    + " working directory."),
                    flag("-c --config", "PATH", false, "use this config file instead of the project config",
                            "Use this config file instead of the project config; it must exist. The global config"
                                    + " still applies. A file named with -c is trusted, unless it is in the project"
                                    + " (which sandboxes write): there it is trusted as the project config is."),
                    flag("--network", "BOOL", true, "network access (default true)",
                            "Network access (default true). On, the sandbox has a network namespace of its own"
                                    + " with a user-mode network stack (slirp4netns): DNS, TCP and UDP for every"
                                    + " program, but not the host's loopback, its own addresses or link-local ones."
                                    + " Where no stack can run (agent-sandbox doctor says why), connections go"
                                    + " through agent-sandbox's proxy at 127.0.0.1:3128 inside (HTTP_PROXY,"
                                    + " HTTPS_PROXY and ALL_PROXY point there), which refuses the same destinations;"
                                    + " programs that ignore those variables get no network. Off (--network=false),"
                                    + " only the loopback is left. See also --allow-host."),
                    flag("--allow-host", "HOST", false, "reach only these hosts (repeatable, *.example.org)",
                            "With the network on, only the hosts named so are reachable, for every program:"
                                    + " example.org is that host, *.example.org every name below it. With the"
                                    + " sandbox's own network stack, a DNS filter answers only those names and only"
                                    + " their addresses are routed (another name on the same address, as on a shared"
                                    + " CDN, is reachable too); with the proxy, it refuses other hosts by name. Each"
                                    + " refusal is in agent-sandbox log. Repeatable, also comma-separated; no IP"
                                    + " addresses, URLs or ports."),
                    flag("--docker", "BOOL", true, "Docker socket, root on the host (default false)",
                            "Bind the Docker socket in (default false). Whoever can talk to the Docker daemon is"
                                    + " root on the host (docker run -v /:/host), so with --docker the sandbox no"
                                    + " longer protects anything from a command that wants out. Where a command needs"
                                    + " containers, point DOCKER_HOST at a rootless Docker or Podman socket"
                                    + " (podman system service), which has only your own rights."),
                    flag("--host-port", "PORT", false, "reach this port of the host's loopback (repeatable)",
                            "Let the sandbox reach this port of the host's loopback at 127.0.0.1:PORT inside, and"
                                    + " only that one. Repeatable, also comma-separated: --host-port 5432,6379."),
                    flag("--share-tmp", "BOOL", true, "/tmp is the host's temp dir (default false)",
                            "Show your temp dir ($TMPDIR) at /tmp instead of the run's private /tmp (default false)."
                                    + " The session sockets in it (tmux, ssh-agent, X11, ...) stay hidden."),
                    flag("--ssh-agent", "BOOL", true, "sign with your ssh-agent's keys (default false)",
                            "Keep SSH_AUTH_SOCK, pointing at a relay that lets through listing keys and signing"
                                    + " only (adding, removing, locking and unlocking are refused), and make"
                                    + " ~/.ssh/known_hosts and ~/.ssh/config readable; the key files stay hidden"
                                    + " (default false). --ssh-agent=COMMENT,... allows only the keys with those"
                                    + " comments, as ssh-add -l shows them."),
                    flag("--gpg-agent", "BOOL", true, "sign and decrypt with your gpg-agent (default false)",
                            "Let the sandbox sign and decrypt through your gpg-agent's restricted socket"
                                    + " (S.gpg-agent.extra, shown as S.gpg-agent in a fresh GnuPG home with your public"
                                    + " keyring), never the private keys (default false). The passphrase is asked for on"
                                    + " your screen as usual."),
                    flag("--tmp-size", "SIZE", false, "size of the private /tmp (default 2G)",
                            "The private /tmp is a file system of the sandbox's own in memory, of at most SIZE"
                                    + " (512M, 2G, bytes; default 2G): a"
                                    + " full /tmp is \"No space left on device\" inside, never a full disk."),
                    flag("--max-procs", "N", false, "processes the sandbox may run at once (default 4096)",
                            "At most N processes and threads at once in the sandbox, nested sandboxes included"
                                    + " (default 4096, at least 16): a fork bomb stops there."),
                    flag("--max-memory", "SIZE", false, "memory one process may allocate (default: RAM/2)",
                            "At most SIZE of memory allocated by any one process of the sandbox (default half of"
                                    + " the machine's memory, at least 64M). It bounds each process, not their sum:"
                                    + " agent-sandbox doctor says why."),
                    flag("--dry-run", null, false, "print the bwrap command line and exit",
                            "Print the bwrap command line that would run, shell-quoted as one line, and exit 0"
                                    + " without running it; nothing is created."),
                    flag("--json", null, false, "JSON for scripts: --dry-run, explain, doctor, log",
                            "Print JSON instead of text, for scripts: with --dry-run the bwrap command line as"
                                    + " an array of strings; with explain, doctor and log an object with a version"
                                    + " field (docs/json.md describes each shape). A command's own output is never"
                                    + " changed."),
                    flag("--debug", null, false, "explain every startup decision on stderr",
                            "Explain on stderr every startup decision: the config files, the merge, the resolution of"
                                    + " every path and every mount."),
                    flag("--ro", "PATH", false, "add a read-only path (repeatable)", ""),
                    flag("--rw", "PATH", false, "add a read-write path (repeatable)", ""),
                    flag("--exclude", "PATH", false, "hide a path (repeatable)",
                            "Hide a path (repeatable): an excluded directory looks empty (writes into it vanish when"
                                    + " the sandbox ends), an excluded file exists but cannot be read."),
                    flag("--cmd", "NAME=VALUE", false, "command rule: @git, true, false or a script",
                            "Give the command NAME a rule: @git (the git guard, the default for git: it refuses"
                                    + " what loses uncommitted work or local history, and deleting or overwriting a"
                                    + " remote branch, where push --force-with-lease alone is allowed; git=true lifts it"
                                    + " for a run where you want those), false"
                                    + " (blocked), true (no wrapper) or the path of a script that runs instead, with the"
                                    + " original arguments and AGENT_SANDBOX_CMD and AGENT_SANDBOX_REAL set. Every place"
                                    + " the command is reachable through PATH is covered. Repeatable, also"
                                    + " comma-separated: --cmd git=true,rm=false.")),
            List.of(
                    "",
                    "BOOL: true, false, 1 or 0, after '='. PATH: ~ or relative; * ? [...] per segment",
                    "config: ~/.config/agent-sandbox/config.json[c], then .agent-sandbox.json[c] here",
                    "exit status: the command's own, 1 when agent-sandbox fails, 130 if interrupted",
                    "Full reference: man agent-sandbox"),
            List.of(
                    "agent-sandbox runs a command inside a filesystem sandbox built with bubblewrap (bwrap), so that a"
                            + " coding agent can work in a project without being able to damage the rest of the machine,"
                            + " read its secrets, or weaken the project's own guard rails. The isolation itself is"
                            + " bubblewrap's and the kernel's; agent-sandbox turns a small layered policy into one bwrap"
                            + " command line and runs it.",
                    "In the sandbox the host's root is read-only; the working directory is writable; the home"
                            + " directory is read-only, with ~/.ssh, ~/.gnupg and ~/.aws hidden; the tools' caches and"
                            + " the coding agents' state are writable; the project's lint configs, the repository's"
                            + " .git/hooks and .git/config and agent-sandbox's config files are read-only; /tmp is a"
                            + " private temp dir of the run; the network goes through a proxy that refuses destinations"
                            + " on this machine; the Docker socket is hidden.",
                    "Flags are read up to -- or the first argument that is not a flag; everything after that belongs"
                            + " to the command: in agent-sandbox npm install --save-dev -h, --save-dev and -h go to npm."
                            + " Flags with a value take --flag VALUE or --flag=VALUE (-C DIR, -CDIR). BOOL is true,"
                            + " false, 1 or 0, and only with =: a bare boolean flag means true, so agent-sandbox"
                            + " --network false claude runs the command false, with a hint line saying so.",
                    "Run agent-sandbox doctor to see what, if anything, stops sandboxes on this machine."),
            List.of(
                    new Section("CONFIGURATION", List.of(
                            paragraph("Layers, lowest priority first: the built-in defaults (presets @all, commands"
                                    + " {\"git\": \"@git\"}, network on, Docker off); the global config; the project config,"
                                    + " or instead the file given with -c; the flags. Both .json and .jsonc accept comments"
                                    + " and trailing commas. Validation is strict: an unknown key, a wrong type, an"
                                    + " unknown preset, an invalid glob or command rule stops agent-sandbox before"
                                    + " anything runs, with file:line:column: key: problem."),
                            item("filesystem.presets", "Presets to turn on or, with a leading !, off:"
                                    + " [\"!@lint/python\"] is everything but the Python lint files, [\"!@all\", \"@base\"]"
                                    + " is @base alone."),
                            item("filesystem.ro, filesystem.rw, filesystem.exclude",
                                    "Paths made read-only, read-write or hidden, as --ro, --rw and --exclude."),
                            item("commands", "Command rules by name, as --cmd: {\"git\": \"@git\", \"rm\": false,"
                                    + " \"npm\": \"~/bin/npm-guard.sh\"}. true and false must be JSON booleans."),
                            item("network, docker, shareTmp, sshAgent, gpgAgent",
                                    "Booleans, as --network, --docker, --share-tmp, --ssh-agent and --gpg-agent;"
                                            + " sshAgent may also be a list of key comments: [\"work\"]."),
                            item("hostPorts", "Host loopback ports the sandbox may reach, as --host-port: [5432]."),
                            item("network.allow", "Instead of true: {\"allow\": [\"example.org\", \"*.example.org\"]},"
                                    + " the network on for those hosts only, as --allow-host. The lists of all layers"
                                    + " add up; an untrusted project config may start a list but not add to one."),
                            item("tmpSize, maxProcs, maxMemory", "Bounds, as --tmp-size, --max-procs and --max-memory:"
                                    + " sizes as strings (\"2G\") or numbers of bytes, maxProcs a number."),
                            paragraph("presets, ro, rw, exclude, hostPorts and network.allow add up across layers; a later layer"
                                    + " overrides a commands entry of the same name; for network, docker, shareTmp,"
                                    + " sshAgent and each bound the last layer that sets them wins."),
                            paragraph("A project config is untrusted until you run agent-sandbox trust, and an untrusted"
                                    + " one may only tighten the policy: if with it any path is more accessible, the"
                                    + " network, Docker, a shared /tmp, the ssh-agent or a host port is turned on, a bound"
                                    + " is raised, or a"
                                    + " command's wrapper or block is removed or replaced, agent-sandbox refuses to start"
                                    + " with one line saying what it loosens. The global config and a file named with -c"
                                    + " outside the project are always trusted. Inside a sandbox no project config is"
                                    + " trusted."),
                            paragraph("Paths: ~ and ~/... are in your home, absolute paths are as written, anything"
                                    + " else is relative to the working directory (also in the global config). *, ? and"
                                    + " [...] match within one path segment; there is no **. Paths that do not exist and"
                                    + " globs that match nothing are skipped. A rule on a symlink applies to its target,"
                                    + " except that a config-file or preset rule does not follow a link lying in a"
                                    + " directory the sandbox can write. A rule may not name /proc or anything in it,"
                                    + " /run/agent-sandbox or anything in it, or /dev, /run or / themselves (except ro /)."),
                            paragraph("Which rule wins for a path: the deeper path; then an exact path over a glob; then"
                                    + " the later layer (flags > project > global > presets); then, within one layer, the"
                                    + " more restrictive (exclude > ro > rw)."))),
                    new Section("PRESETS", List.of(
                            item("@base", "The working dir rw; home ro; ~/.ssh, ~/.gnupg, ~/.aws hidden; a private /tmp"
                                    + " of the run (rw)."),
                            item("@caches", "rw: the caches of the toolchains (~/.cache, ~/.npm, ~/.m2, ~/.gradle,"
                                    + " ~/.cargo, ~/go, ...); their installed programs, init scripts and settings ro,"
                                    + " their credential files hidden."),
                            item("@agents", "rw: the state of the coding agents (~/.claude, ~/.claude.json, ~/.codex,"
                                    + " ~/.gemini, ...)."),
                            item("@git", "ro: the repository's hooks/ and config, and those of every git dir your git"
                                    + " uses from here (submodules, nested repositories, worktrees); in a linked worktree"
                                    + " the main git dir and the worktree's git dir are rw (except hooks and config)."),
                            item("@git-strict", "@git, plus every branch except the current one, refs/tags and"
                                    + " packed-refs ro."),
                            item("@lint/ts, @lint/go, @lint/python", "ro: that ecosystem's lint and compiler configs in"
                                    + " the working dir, and .editorconfig."),
                            item("@lint/all", "The three lint presets."),
                            item("@all", "All of the above except @git-strict; on unless the presets say otherwise."))),
                    new Section("FILES", List.of(
                            item("$XDG_CONFIG_HOME/agent-sandbox/config.json or config.jsonc",
                                    "The global config (~/.config/agent-sandbox/ when XDG_CONFIG_HOME is unset);"
                                            + " read-only in every sandbox."),
                            item(".agent-sandbox.json or .agent-sandbox.jsonc",
                                    "The project config, in the working directory; both present stops the run."),
                            item("$XDG_STATE_HOME/agent-sandbox/trust/",
                                    "The trust store (~/.local/state/agent-sandbox/trust/ by default): one owner-only"
                                            + " file per trusted config. agent-sandbox's whole state directory is hidden"
                                            + " in every sandbox."),
                            item("$XDG_STATE_HOME/agent-sandbox/log/",
                                    "The denial log (runs.jsonl, one JSON line per run, rotated at 1 MiB to"
                                            + " runs.1.jsonl): what agent-sandbox log shows. Written only by"
                                            + " agent-sandbox outside the sandbox; hidden in every sandbox."),
                            item("$XDG_STATE_HOME/agent-sandbox/run/ID/",
                                    "A run's directory, with its private /tmp; removed after every run, and by the"
                                            + " next run when a run was killed."),
                            item("$XDG_RUNTIME_DIR/agent-sandbox/ID/",
                                    "A run's sockets (/tmp/agent-sandbox-UID/ID/ without XDG_RUNTIME_DIR)."),
                            item("/run/agent-sandbox/",
                                    "Inside a sandbox: agent-sandbox itself (the entry point agent-sandbox, which"
                                            + " check looks for), the run's policy record that explain reads (policy),"
                                            + " the wrapped commands' real binaries (real/) and, when nested, the outer"
                                            + " sandbox's runtime (outer/)."))),
                    new Section("ENVIRONMENT", List.of(
                            item("XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_RUNTIME_DIR",
                                    "Where the global config, the state and the sockets are; a relative"
                                            + " XDG_CONFIG_HOME or XDG_STATE_HOME is ignored."),
                            item("HOME", "Your home; with @base on and no home directory, agent-sandbox refuses to"
                                    + " start."),
                            item("TMPDIR", "Shown at /tmp with --share-tmp; inside, TMPDIR=/tmp is set."),
                            item("HTTP_PROXY, HTTPS_PROXY, ALL_PROXY",
                                    "Set inside (also in lower case) to the proxy when the network is on."),
                            item("AGENT_SANDBOX_PROMPT",
                                    "Set inside to \"(sandbox) \" for a prompt to show:"
                                            + " PS1='${AGENT_SANDBOX_PROMPT}'\"$PS1\" in ~/.bashrc. Display only: a"
                                            + " command inside can change it; agent-sandbox check is the test that"
                                            + " cannot be fooled."),
                            item("AGENT_SANDBOX_CMD, AGENT_SANDBOX_REAL",
                                    "Set for a wrapper script: the command's name and its real binary inside the"
                                            + " sandbox."),
                            item("TMUX, DISPLAY, WAYLAND_DISPLAY, XAUTHORITY, DBUS_SESSION_BUS_ADDRESS, SSH_AUTH_SOCK",
                                    "Not passed into the sandbox, nor any variable whose value is the path of a"
                                            + " socket (SSH_AUTH_SOCK is kept with --ssh-agent)."))),
                    new Section("EXIT STATUS", List.of(
                            item("the command's own", "The sandboxed command's exit status, passed through unchanged;"
                                    + " 0 also for --help, --version and --dry-run."),
                            item("1", "agent-sandbox itself failed (a bad flag or config, bwrap missing or failing,"
                                    + " ...), with one line on stderr saying what is wrong and how to fix it."),
                            item("130", "Interrupted: on SIGINT, SIGTERM or SIGHUP the sandbox gets SIGTERM, up to 10"
                                    + " seconds, then SIGKILL; a second signal kills at once."))),
                    new Section("EXAMPLES", List.of(
                            item("agent-sandbox claude", "Run Claude Code in the sandbox of the working directory."),
                            item("agent-sandbox --network=false -- make test", "A build without network."),
                            item("agent-sandbox --rw ~/notes --exclude .env -- codex",
                                    "One more writable path, and a hidden file."),
                            item("agent-sandbox --cmd rm=false -- sh", "A shell in which rm is blocked."),
                            item("agent-sandbox explain src/biome.json", "Why a path is read-only, and how to change it."),
                            item("agent-sandbox --dry-run -- true", "The bwrap command line, without running it."),
                            item("agent-sandbox trust", "Trust the project config here, after reviewing it.")))));
}
