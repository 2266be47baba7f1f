// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A git command line read the way git reads it: the program name, git's own global
 * options (up to the subcommand), the subcommand and its arguments. Nothing here
 * decides anything: {@link GitRules} does, from what this finds.
 *
 * @param invoked     the program name git was started as, without its directory
 * @param dir         the directory git works in after every {@code -C}, lexically
 * @param gitDirFlag  {@code --git-dir} as given, or null
 * @param workTreeFlag {@code --work-tree} as given, or null
 * @param inline      every {@code -c}/{@code --config-env} value, in order, with its option
 * @param forwarded   the global options that choose the repository and its config, to ask git
 *                    the same question in the same context ({@code -C}, {@code -c},
 *                    {@code --config-env}, {@code --git-dir}, {@code --work-tree}, {@code --bare},
 *                    {@code --exec-path=})
 * @param query       whether a global option makes git only print something (help, version, paths)
 * @param incomplete  whether a global option misses its value (git reports it and runs nothing)
 * @param sub         the subcommand, or null when there is none
 * @param rest        the subcommand's arguments
 * @param prefix      the words before the subcommand, as given
 * @param cwd         the directory git was started in
 */
record GitCommand(String invoked, String dir, String gitDirFlag, String workTreeFlag, List<String> inline,
        List<String> forwarded, boolean query, boolean incomplete, String sub, List<String> rest,
        List<String> prefix, String cwd) {

    /** Git's global options that take a value as the next argument (or after {@code =} for the long ones). */
    private static final Set<String> GLOBAL_WITH_VALUE = Set.of(
            "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--attr-source",
            "--super-prefix", "--list-cmds", "--shallow-file");

    /** Reads {@code argv} (program name first) as git does, starting in {@code cwd}. */
    static GitCommand read(List<String> argv, String cwd) {
        String invoked = argv.isEmpty() ? "git" : baseName(argv.get(0));
        String dir = cwd;
        String gitDirFlag = null;
        String workTreeFlag = null;
        List<String> inline = new ArrayList<>();
        List<String> forwarded = new ArrayList<>();
        boolean query = false;
        int i = 1;
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
                        return new GitCommand(invoked, dir, gitDirFlag, workTreeFlag, List.copyOf(inline),
                                List.copyOf(forwarded), query, true, null, List.of(), List.copyOf(argv), cwd);
                    }
                    value = argv.get(++i);
                }
                switch (name) {
                    case "-C" -> {
                        dir = value.isEmpty() ? dir : resolve(dir, value);
                        forwarded.add("-C");
                        forwarded.add(value);
                    }
                    case "-c", "--config-env" -> {
                        inline.add(name + " " + value);
                        forwarded.add(name);
                        forwarded.add(value);
                    }
                    case "--git-dir" -> {
                        gitDirFlag = value;
                        forwarded.add("--git-dir=" + value);
                    }
                    case "--work-tree" -> {
                        workTreeFlag = value;
                        forwarded.add("--work-tree=" + value);
                    }
                    default -> {
                        // --namespace, --attr-source, --super-prefix, --list-cmds, --shallow-file: harmless
                    }
                }
            } else if (a.equals("--bare") || a.startsWith("--exec-path=")) {
                forwarded.add(a); // --exec-path=DIR: where git looks for programs git-NAME
            } else if (a.equals("-h") || a.equals("--help") || a.equals("-v") || a.equals("--version")
                    || (a.startsWith("--exec-path") && !a.startsWith("--exec-path=")) || a.equals("--html-path")
                    || a.equals("--man-path") || a.equals("--info-path")) {
                // queries; --exec-path=DIR is not one: git goes on to run the command
                query = true;
            }
            // every other global option is a flag (-p, -P, --no-pager …)
        }
        String sub = i < argv.size() ? argv.get(i) : null;
        List<String> rest = i < argv.size() ? argv.subList(i + 1, argv.size()) : List.of();
        return new GitCommand(invoked, dir, gitDirFlag, workTreeFlag, List.copyOf(inline), List.copyOf(forwarded),
                query, false, sub, List.copyOf(rest), List.copyOf(argv.subList(0, Math.min(i, argv.size()))), cwd);
    }

    /**
     * The same command with the subcommand replaced by an alias's words, read again: an
     * alias may begin with global options ({@code -c …}), which git then applies.
     */
    GitCommand expand(List<String> words) {
        List<String> argv = new ArrayList<>(prefix);
        argv.addAll(words);
        argv.addAll(rest);
        return read(argv, cwd);
    }

    /** The last component of a program name as exec'd ({@code /usr/bin/git} → {@code git}). */
    static String baseName(String program) {
        String trimmed = program;
        while (trimmed.length() > 1 && trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        int slash = trimmed.lastIndexOf('/');
        return slash < 0 ? trimmed : trimmed.substring(slash + 1);
    }

    /** {@code path} against {@code base}, lexically ({@code ..} folded). */
    static String resolve(String base, String path) {
        if (path.indexOf('\0') >= 0 || base.indexOf('\0') >= 0) {
            // no real argument or environment value holds a NUL; never fail on one
            return resolve(base.replace('\0', '?'), path.replace('\0', '?'));
        }
        Path p = Path.of(path);
        return (p.isAbsolute() ? p : Path.of(base).resolve(p)).normalize().toString();
    }

    /** A path setting against {@code dir}, or null when unset or empty. */
    static String pathOf(String dir, String value) {
        return value == null || value.isEmpty() ? null : resolve(dir, value);
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
}
