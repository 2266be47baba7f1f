// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.text.ShellWords;
import agentsandbox.core.rules.ToolCatalogue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Which tools of the {@link ToolCatalogue} a command starts, known by their command names:
 * the command itself and the words of a shell's {@code -c} script (the way agents hand
 * their commands to agent-sandbox). A coding agent or an interactive shell runs any tool,
 * so then every tool installed on the host counts.
 */
public final class StartedTools {
    private StartedTools() {}

    /** Commands that run whatever they are asked to, like an agent: every installed tool's directories. */
    private static final Set<String> SHELLS = Set.of("sh", "bash", "dash", "zsh", "fish", "ksh", "mksh");

    /**
     * The tools the command starts: its program, the words of a shell's {@code -c}
     * script, and, for an agent or an interactive shell, every tool installed on the host.
     */
    static List<ToolCatalogue.Tool> started(List<String> command, Environment env, List<String> notes) {
        Set<String> words = new LinkedHashSet<>();
        boolean runsAnything = commandWords(command, words);
        List<ToolCatalogue.Tool> out = new ArrayList<>();
        for (ToolCatalogue.Tool t : ToolCatalogue.TOOLS) {
            for (String c : t.commands()) {
                if (words.contains(c)) {
                    out.add(t);
                    runsAnything |= t.agent();
                    break;
                }
            }
        }
        if (runsAnything) {
            for (ToolCatalogue.Tool t : ToolCatalogue.TOOLS) {
                if (!out.contains(t) && installed(t, env)) {
                    out.add(t);
                }
            }
            notes.add("tools: " + (out.isEmpty() ? "none known" : names(out))
                    + " (started, or installed on the host and the command runs any tool)");
        } else if (!out.isEmpty()) {
            notes.add("tools: " + names(out) + " (started)");
        }
        return out;
    }

    /** Words that run the word after them as a command. */
    private static final Set<String> PREFIXES = Set.of("env", "exec", "command", "time", "nohup", "nice", "ionice",
            "timeout", "xargs", "stdbuf", "then", "do", "else", "if", "while", "until", "!", "{", "sudo", "npx", "uvx",
            "bunx", "pnpx");

    /**
     * Collects the program names in command position: the command's own, those after a
     * prefix such as {@code env} or {@code timeout 5}, and those of a shell's
     * {@code -c} script (after {@code ;}, {@code &&}, {@code |}, {@code (} …).
     *
     * @return true for a command that runs anything it is asked to: an interactive shell
     */
    private static boolean commandWords(List<String> argv, Set<String> words) {
        boolean atCommand = true;
        for (int i = 0; i < argv.size(); i++) {
            String w = argv.get(i);
            if (!atCommand) {
                return false;
            }
            if (w.indexOf('=') > 0 && !w.startsWith("-")) {
                continue; // VAR=value before the program
            }
            if (w.startsWith("-") || isDuration(w)) {
                continue; // a prefix's options and durations
            }
            String name = baseName(w);
            words.add(name);
            if (SHELLS.contains(name)) {
                for (int j = i + 1; j < argv.size(); j++) {
                    String o = argv.get(j);
                    if (!o.startsWith("-") || o.startsWith("--")) {
                        return false; // a script file: not known
                    }
                    if (o.indexOf('c') > 0 && j + 1 < argv.size()) {
                        scriptWords(argv.get(j + 1), words);
                        return false;
                    }
                }
                return true;
            }
            atCommand = PREFIXES.contains(name);
        }
        return false;
    }

    /**
     * A duration as {@code timeout} and {@code sleep} take it ({@code [0-9.]+[smhd]?}).
     */
    static boolean isDuration(String w) {
        int n = w.length();
        if (n > 1 && "smhd".indexOf(w.charAt(n - 1)) >= 0) {
            n--;
        }
        if (n == 0) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            char c = w.charAt(i);
            if ((c < '0' || c > '9') && c != '.') {
                return false;
            }
        }
        return true;
    }

    private static void scriptWords(String script, Set<String> words) {
        boolean atCommand = true;
        for (String token : ShellWords.scriptTokens(script)) {
            String t = token.strip();
            if (t.isEmpty()) {
                continue;
            }
            if (t.equals(";") || t.equals("&") || t.equals("|") || t.equals("(") || t.equals("`") || t.equals("{")
                    || t.endsWith("$(") || t.equals("$")) {
                atCommand = true;
                continue;
            }
            if (!atCommand) {
                continue;
            }
            if (t.indexOf('=') > 0 || t.startsWith("-") || isDuration(t)) {
                continue;
            }
            String name = baseName(ShellWords.unquoted(t));
            words.add(name);
            atCommand = PREFIXES.contains(name);
        }
    }

    private static String names(List<ToolCatalogue.Tool> tools) {
        List<String> n = new ArrayList<>();
        for (ToolCatalogue.Tool t : tools) {
            n.add(t.name());
        }
        return String.join(", ", n);
    }

    private static boolean installed(ToolCatalogue.Tool t, Environment env) {
        for (String c : t.commands()) {
            if ((c.equals("mvnw") || c.equals("gradlew")) && Files.isRegularFile(env.workDir().resolve(c))) {
                return true;
            }
        }
        String path = env.hostEnv().getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            if (dir.isEmpty() || !dir.startsWith("/")) {
                continue;
            }
            for (String c : t.commands()) {
                Path p = Path.of(dir, c);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static String baseName(String word) {
        int slash = word.lastIndexOf('/');
        return (slash < 0 ? word : word.substring(slash + 1)).toLowerCase(Locale.ROOT);
    }
}
