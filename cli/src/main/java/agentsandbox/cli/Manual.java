package agentsandbox.cli;

import agentsandbox.core.rules.Presets;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Makes the man page {@code agent-sandbox(1)} and the bash, zsh and fish completions
 * from the documentation of the command line ({@link Reference}), the source {@code --help}
 * is printed from too, when the app image is built:
 *
 * <pre>{@code java -cp lib/agent-sandbox-cli.jar agentsandbox.cli.Manual IMAGE/share}</pre>
 *
 * writes {@link #MAN_PAGE}, {@link #BASH}, {@link #ZSH} and {@link #FISH} under the given
 * directory. Not used at run time.
 */
public final class Manual {
    private Manual() {}

    static final String MAN_PAGE = "man/man1/agent-sandbox.1";
    static final String BASH = "bash-completion/completions/agent-sandbox";
    static final String ZSH = "zsh/site-functions/_agent-sandbox";
    static final String FISH = "fish/vendor_completions.d/agent-sandbox.fish";

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: Manual SHARE-DIR");
            System.exit(2);
        }
        Path share = Path.of(args[0]);
        Reference help = Reference.current();
        String version = Flags.version();
        write(share.resolve(MAN_PAGE), man(help, version));
        write(share.resolve(BASH), bash(help));
        write(share.resolve(ZSH), zsh(help));
        write(share.resolve(FISH), fish(help));
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }

    // ------------------------------------------------------------------ man page

    static String man(Reference ref, String version) {
        StringBuilder m = new StringBuilder();
        m.append(".\\\" Generated from agent-sandbox's Reference when agent-sandbox was built; do not edit.\n");
        m.append(".TH AGENT-SANDBOX 1 \"\" \"agent-sandbox ").append(roff(version)).append("\" \"User Commands\"\n");
        m.append(".SH NAME\nagent-sandbox \\- ").append(roff(ref.summary())).append('\n');
        m.append(".SH SYNOPSIS\n.nf\n");
        for (Reference.Command c : ref.commands()) {
            m.append("\\fB").append(Reference.PROGRAM).append("\\fR ").append(roff(c.synopsis())).append('\n');
        }
        m.append(".fi\n");
        m.append(".SH DESCRIPTION\n");
        for (String p : ref.description()) {
            m.append(".PP\n").append(roff(p)).append('\n');
        }
        m.append(".SH COMMANDS\n");
        for (Reference.Command c : ref.commands()) {
            if (c.name() == null) {
                continue;
            }
            m.append(".TP\n");
            String synopsis = c.synopsis().startsWith("[flags] ") ? c.synopsis().substring(8) : c.synopsis();
            String[] words = synopsis.split(" ");
            for (int i = 0; i < words.length; i++) {
                m.append(i == 0 ? "" : " ").append(synopsisWord(words[i], i == 0));
            }
            m.append('\n').append(roff(c.details().isEmpty() ? c.brief() : c.details())).append('\n');
        }
        m.append(".SH OPTIONS\n");
        for (Reference.Option o : ref.options()) {
            m.append(".TP\n");
            for (int i = 0; i < o.names().size(); i++) {
                m.append(i == 0 ? "" : ", ").append("\\fB").append(roff(o.names().get(i))).append("\\fR");
            }
            if (o.argument() != null) {
                m.append(o.optional() ? "[=\\fI" + roff(o.argument()) + "\\fR]" : " \\fI" + roff(o.argument()) + "\\fR");
            }
            String text = o.details().isEmpty() ? capitalised(o.brief()) + "." : o.details();
            m.append('\n').append(roff(text)).append('\n');
        }
        for (Reference.Section s : ref.sections()) {
            m.append(".SH ").append(roff(s.title())).append('\n');
            for (Reference.Item item : s.items()) {
                if (item.term() == null) {
                    m.append(".PP\n");
                } else {
                    m.append(".TP\n\\fB").append(roff(item.term())).append("\\fR\n");
                }
                m.append(roff(item.text())).append('\n');
            }
        }
        m.append(".SH SEE ALSO\n\\fBbwrap\\fR(1)\n");
        return m.toString();
    }

    /** A word of a synopsis in roff: the name and flags bold, placeholders italic, brackets plain. */
    private static String synopsisWord(String word, boolean name) {
        int start = 0;
        int end = word.length();
        while (start < end && word.charAt(start) == '[') {
            start++;
        }
        while (end > start && (word.charAt(end - 1) == ']' || word.charAt(end - 1) == '.')) {
            end--;
        }
        String core = word.substring(start, end);
        String font = name || core.startsWith("-") ? "\\fB" : !core.isEmpty() && Character.isUpperCase(core.charAt(0)) ? "\\fI" : "";
        String styled = font.isEmpty() ? roff(core) : font + roff(core) + "\\fR";
        return word.substring(0, start) + styled + word.substring(end);
    }

    private static String capitalised(String text) {
        return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
    }

    /** Text as roff: backslashes and hyphens escaped, a line never starting with a control character. */
    static String roff(String text) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\\' -> b.append("\\e");
                case '-' -> b.append("\\-");
                case '\'', '.' -> b.append(i == 0 ? "\\&" + c : String.valueOf(c));
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ completions

    /** What the argument of a flag completes to, by its placeholder. */
    private enum Kind { FILE, DIRECTORY, BOOL, PRESET, COMMAND_RULE, NONE }

    private static Kind kind(Reference.Option f) {
        if (f.argument() == null) {
            return Kind.NONE;
        }
        String a = f.argument().toUpperCase(Locale.ROOT);
        if (a.equals("BOOL")) {
            return Kind.BOOL;
        }
        if (a.contains("PRESET")) {
            return Kind.PRESET;
        }
        if (a.startsWith("NAME=")) {
            return Kind.COMMAND_RULE;
        }
        if (a.equals("DIR") || f.names().contains("--cwd")) {
            return Kind.DIRECTORY;
        }
        if (a.contains("PATH") || a.contains("FILE")) {
            return Kind.FILE;
        }
        return Kind.NONE;
    }

    private static String words(List<String> list) {
        return String.join(" ", list);
    }

    static String bash(Reference help) {
        StringBuilder names = new StringBuilder();
        StringBuilder valued = new StringBuilder();
        StringBuilder cases = new StringBuilder();
        for (Reference.Option f : help.options()) {
            for (String n : f.names()) {
                names.append(names.isEmpty() ? "" : " ").append(n);
                if (f.argument() != null && !f.optional()) {
                    valued.append(valued.isEmpty() ? "" : "|").append(n);
                }
            }
            if (f.argument() != null) {
                String completion = switch (kind(f)) {
                    case FILE -> "compgen -f -- \"$cur\"";
                    case DIRECTORY -> "compgen -d -- \"$cur\"";
                    case BOOL -> "compgen -W 'true false 1 0' -- \"$cur\"";
                    case PRESET -> "compgen -W \"$presets\" -- \"$cur\"";
                    case COMMAND_RULE -> "compgen -c -S = -- \"$cur\"";
                    case NONE -> "";
                };
                cases.append("        ").append(String.join("|", f.names())).append(")\n")
                        .append("            COMPREPLY=($(").append(completion.isEmpty() ? "true" : completion)
                        .append("))\n            return ;;\n");
            }
        }
        StringBuilder subcommands = new StringBuilder();
        StringBuilder subcommandFlags = new StringBuilder();
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            subcommands.append(subcommands.isEmpty() ? "" : " ").append(s.name());
            subcommandFlags.append("        ").append(s.name()).append(") COMPREPLY=($(")
                    .append(s.paths() ? "compgen -f" : "compgen -W '" + words(s.flags()) + "'")
                    .append(" -- \"$cur\")); return ;;\n");
        }
        return """
                # bash completion for agent-sandbox, generated when agent-sandbox was built; do not edit.

                _agent_sandbox() {
                    local cur=${COMP_WORDS[COMP_CWORD]}
                    local prev=${COMP_WORDS[COMP_CWORD-1]}
                    local flags='%s'
                    local subcommands='%s'
                    local presets='%s'
                    local i word
                    # The first word that is not a flag or a flag's value is the command.
                    for ((i = 1; i < COMP_CWORD; i++)); do
                        word=${COMP_WORDS[i]}
                        case $word in
                            --) ((i++)); break ;;
                            %s) ((i++)); continue ;;
                            -*) continue ;;
                            *) break ;;
                        esac
                    done
                    if ((i < COMP_CWORD)); then
                        case ${COMP_WORDS[i]} in
                %s        esac
                        if declare -F _command_offset >/dev/null; then
                            _command_offset "$i"
                        else
                            COMPREPLY=($(compgen -f -- "$cur"))
                        fi
                        return
                    fi
                    case $prev in
                %s    esac
                    if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
                    else
                        COMPREPLY=($(compgen -W "$subcommands" -- "$cur") $(compgen -c -- "$cur"))
                    fi
                }
                complete -F _agent_sandbox -o bashdefault -o default agent-sandbox
                """.formatted(names, subcommands, words(Presets.NAMES), valued.isEmpty() ? "--" : valued,
                subcommandFlags, cases);
    }

    /** Text for a zsh {@code _arguments} description or action: brackets, colons and quotes escaped. */
    private static String zshQuote(String text) {
        return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]")
                .replace(":", "\\:");
    }

    static String zsh(Reference help) {
        StringBuilder specs = new StringBuilder();
        for (Reference.Option f : help.options()) {
            String action = switch (kind(f)) {
                case FILE -> "_files";
                case DIRECTORY -> "_files -/";
                case BOOL -> "(true false 1 0)";
                case PRESET -> "(" + words(Presets.NAMES) + ")";
                case COMMAND_RULE -> "_command_names -e";
                case NONE -> " ";
            };
            String exclusion = f.names().size() > 1 ? "(" + words(f.names()) + ")" : "";
            for (String n : f.names()) {
                String suffix;
                if (f.argument() == null) {
                    suffix = "";
                } else if (f.optional()) {
                    suffix = "=-";
                } else {
                    suffix = n.startsWith("--") ? "=" : "+";
                }
                specs.append("        '").append(exclusion).append(n).append(suffix)
                        .append('[').append(zshQuote(f.brief())).append(']');
                if (f.argument() != null) {
                    specs.append(':').append(zshQuote(f.argument().toLowerCase(Locale.ROOT))).append(':')
                            .append(action);
                }
                specs.append("' \\\n");
            }
        }
        StringBuilder subcommands = new StringBuilder();
        StringBuilder subcommandFlags = new StringBuilder();
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            subcommands.append("        '").append(zshQuote(s.name())).append(':')
                    .append(zshQuote(s.brief().isEmpty() ? "subcommand" : s.brief())).append("'\n");
            subcommandFlags.append("                ").append(s.name()).append(")")
                    .append(s.paths() ? " _files" : s.flags().isEmpty() ? "" : " compadd -- " + words(s.flags()))
                    .append(" ;;\n");
        }
        return """
                #compdef agent-sandbox
                # zsh completion for agent-sandbox, generated when agent-sandbox was built; do not edit.

                _agent_sandbox_first() {
                    local -a subcommands=(
                %s    )
                    _describe -t subcommands 'agent-sandbox subcommand' subcommands
                    _command_names -e
                }

                _agent_sandbox() {
                    local curcontext=$curcontext state line
                    _arguments -S -A '-*' \\
                %s        '1: :_agent_sandbox_first' \\
                        '*:: :->command'
                    if [[ $state == command ]]; then
                        case $words[1] in
                %s                *) _normal ;;
                        esac
                    fi
                }

                _agent_sandbox "$@"
                """.formatted(subcommands, specs, subcommandFlags);
    }

    private static String fishQuote(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    static String fish(Reference help) {
        StringBuilder f = new StringBuilder();
        f.append("# fish completion for agent-sandbox, generated when agent-sandbox was built; do not edit.\n\n");
        StringBuilder subcommandNames = new StringBuilder();
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            subcommandNames.append(subcommandNames.isEmpty() ? "" : " ").append(s.name());
        }
        String beforeCommand = "'not __fish_seen_subcommand_from " + subcommandNames + "; and __fish_is_first_arg'";
        for (Reference.Option flag : help.options()) {
            f.append("complete -c agent-sandbox");
            for (String n : flag.names()) {
                f.append(n.startsWith("--") ? " -l " + n.substring(2) : " -s " + n.substring(1));
            }
            switch (kind(flag)) {
                case FILE -> f.append(" -r -F");
                case DIRECTORY -> f.append(" -x -a '(__fish_complete_directories)'");
                case BOOL -> f.append(flag.optional() ? "" : " -x -a 'true false 1 0'");
                case PRESET -> f.append(" -x -a ").append(fishQuote(words(Presets.NAMES)));
                case COMMAND_RULE -> f.append(" -x -a '(__fish_complete_command)='");
                case NONE -> f.append(flag.argument() != null ? " -x" : "");
            }
            f.append(" -n ").append(beforeCommand).append(" -d ").append(fishQuote(flag.brief())).append('\n');
        }
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            f.append("complete -c agent-sandbox -f -n ").append(beforeCommand).append(" -a ")
                    .append(s.name()).append(" -d ").append(fishQuote(s.brief().isEmpty() ? "subcommand" : s.brief()))
                    .append('\n');
            if (s.paths()) {
                f.append("complete -c agent-sandbox -F -n '__fish_seen_subcommand_from ").append(s.name())
                        .append("'\n");
            }
            for (String flag : s.flags()) {
                f.append("complete -c agent-sandbox -f -n '__fish_seen_subcommand_from ").append(s.name()).append("'")
                        .append(flag.startsWith("--") ? " -l " + flag.substring(2) : " -s " + flag.substring(1))
                        .append('\n');
            }
        }
        f.append("complete -c agent-sandbox -n ").append(beforeCommand)
                .append(" -a '(__fish_complete_command)' -d command\n");
        f.append("complete -c agent-sandbox -n 'not __fish_is_first_arg; and not __fish_seen_subcommand_from ")
                .append(subcommandNames).append("' -a '(__fish_complete_subcommand)'\n");
        return f.toString();
    }
}
