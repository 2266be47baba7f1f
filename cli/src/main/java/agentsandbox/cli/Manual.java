// SPDX-License-Identifier: Apache-2.0
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

    /** The words a BOOL takes, in the order the completions offer them. */
    private static final String BOOL_WORDS = "true false 1 0";

    /** A flag's names, each as {@code |name|}: for a shell's {@code case} of one string. */
    private static void barred(StringBuilder b, Reference.Option f) {
        for (String n : f.names()) {
            b.append(b.isEmpty() ? "|" : "").append(n).append('|');
        }
    }

    /**
     * The bash completion. It reads the line up to the cursor itself, split at blanks
     * (bash's own words also break at {@code =} and {@code :}), so {@code --network=f}
     * is one word whichever way bash splits it; what it offers then fits the part of the
     * word readline replaces. A boolean takes a value only after {@code =}: after a bare
     * {@code --network}, {@code f} offers {@code --network=false}, never the command
     * {@code false}. After the command (or {@code --}), the command's own completion runs.
     */
    static String bash(Reference help) {
        StringBuilder names = new StringBuilder();
        StringBuilder valued = new StringBuilder();
        StringBuilder bools = new StringBuilder();
        StringBuilder cases = new StringBuilder();
        for (Reference.Option f : help.options()) {
            for (String n : f.names()) {
                names.append(names.isEmpty() ? "" : " ").append(n);
                if (f.optional() && n.startsWith("--")) {
                    names.append(' ').append(n).append('=');
                }
            }
            if (f.argument() == null) {
                continue;
            }
            if (f.optional()) {
                barred(bools, f);
                continue;
            }
            barred(valued, f);
            String completion = switch (kind(f)) {
                case FILE -> "compgen -f -- \"$value\"";
                case DIRECTORY -> "compgen -d -- \"$value\"";
                case BOOL -> "compgen -W '" + BOOL_WORDS + "' -- \"$value\"";
                case PRESET -> "compgen -W \"$presets\" -- \"$value\"";
                case COMMAND_RULE -> "compgen -c -S = -- \"$value\"";
                case NONE -> "";
            };
            cases.append("        ").append(String.join("|", f.names())).append(") ")
                    .append(completion.isEmpty() ? "return ;;" : "_agent_sandbox_offer \"$2\" $(" + completion
                            + "); return ;;").append('\n');
        }
        StringBuilder subcommands = new StringBuilder();
        StringBuilder subcommandCases = new StringBuilder();
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            subcommands.append(subcommands.isEmpty() ? "" : " ").append(s.name());
            subcommandCases.append("            ").append(s.name()).append(") ");
            if (s.paths()) {
                subcommandCases.append("COMPREPLY=($(compgen -f -- \"$cur\"))");
            } else if (s.flags().contains("-C")) {
                subcommandCases.append("if [[ $prev == -C || $prev == --cwd ]]; then COMPREPLY=($(compgen -d -- \"$cur\"));"
                        + " else COMPREPLY=($(compgen -W '" + words(s.flags()) + "' -- \"$cur\")); fi");
            } else {
                subcommandCases.append("COMPREPLY=($(compgen -W '" + words(s.flags()) + "' -- \"$cur\"))");
            }
            subcommandCases.append("; return ;;\n");
        }
        return """
                # bash completion for agent-sandbox, generated when agent-sandbox was built; do not edit.

                # Offers candidates for a word typed as $1: when readline replaces only the part of
                # the word after its last '=' (that is in COMP_WORDBREAKS), the part before goes.
                _agent_sandbox_offer() {
                    local typed=$1 candidate
                    shift
                    COMPREPLY=()
                    for candidate in "$@"; do
                        if [[ $typed == *=* && $COMP_WORDBREAKS == *=* ]]; then
                            COMPREPLY+=("${candidate#"${typed%%%%=*}="}")
                        else
                            COMPREPLY+=("$candidate")
                        fi
                    done
                    if ((${#COMPREPLY[@]} == 1)) && [[ ${COMPREPLY[0]} == *= ]]; then
                        compopt -o nospace 2>/dev/null
                    fi
                }

                # The value of a flag typed as $2 after the flag $1 (or as $1=$2).
                _agent_sandbox_value() {
                    local value=$2 presets='%s'
                    case $1 in
                %s    esac
                    return 1
                }

                # The command's own completion, for the words from index $1 on.
                _agent_sandbox_command() {
                    local cmd=${words[$1]} spec function
                    if ((${#words[@]} - 1 == $1)); then
                        COMPREPLY=($(compgen -c -- "$cur"))
                        return
                    fi
                    declare -F _completion_loader >/dev/null && _completion_loader "$cmd" 2>/dev/null
                    spec=$(complete -p -- "$cmd" 2>/dev/null)
                    if [[ -z $spec ]]; then
                        COMPREPLY=($(compgen -f -- "$cur"))
                        return
                    fi
                    COMP_WORDS=("${words[@]:$1}")
                    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                    COMP_LINE=${COMP_WORDS[*]}
                    COMP_POINT=${#COMP_LINE}
                    if [[ $spec == *" -F "* ]]; then
                        function=${spec#* -F }
                        function=${function%%%% *}
                        "$function" "$cmd" "$cur" "${COMP_WORDS[COMP_CWORD-1]}"
                    else
                        spec=${spec#complete }
                        eval "COMPREPLY=(\\$(compgen ${spec%% *} -- \\"\\$cur\\"))"
                    fi
                }

                _agent_sandbox() {
                    local flags='%s'
                    local bools='%s'
                    local valued='%s'
                    local line=${COMP_LINE:0:COMP_POINT}
                    local -a words
                    read -r -a words <<<"$line"
                    [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
                    local n=${#words[@]}
                    local cur=${words[n-1]} prev=
                    ((n > 1)) && prev=${words[n-2]}
                    # The first word that is not a flag or a flag's value is the command.
                    local i=1 word
                    while ((i < n - 1)); do
                        word=${words[i]}
                        case $word in
                            --) ((i++)); _agent_sandbox_command "$i"; return ;;
                            -*) [[ $valued == *"|$word|"* ]] && ((i++)) ;;
                            *) break ;;
                        esac
                        ((i++))
                    done
                    if ((i < n - 1)); then
                        case ${words[i]} in
                %s        esac
                        _agent_sandbox_command "$i"
                        return
                    fi
                    # Completing the word at the cursor, among the flags.
                    if [[ $valued == *"|$prev|"* ]]; then
                        _agent_sandbox_value "$prev" "$cur"
                        return
                    fi
                    if [[ $cur == --*=* ]]; then
                        local flag=${cur%%%%=*} value=${cur#*=} w
                        local -a candidates=()
                        if [[ $bools == *"|$flag|"* ]]; then
                            for w in %s; do
                                [[ $w == "$value"* ]] && candidates+=("$flag=$w")
                            done
                            _agent_sandbox_offer "$cur" "${candidates[@]}"
                        elif [[ $valued == *"|$flag|"* ]]; then
                            _agent_sandbox_value "$flag" "$value"
                            candidates=("${COMPREPLY[@]/#/$flag=}")
                            _agent_sandbox_offer "$cur" "${candidates[@]}"
                        fi
                        return
                    fi
                    if [[ -n $cur && $cur != -* && $bools == *"|$prev|"* ]]; then
                        # "--network false" would run the command false: the value goes after '='
                        local w
                        COMPREPLY=()
                        for w in %s; do
                            [[ $w == "$cur"* ]] && COMPREPLY+=("$prev=$w")
                        done
                        ((${#COMPREPLY[@]})) && return
                    fi
                    if [[ $cur == -* ]]; then
                        _agent_sandbox_offer "$cur" $(compgen -W "$flags" -- "$cur")
                    else
                        COMPREPLY=($(compgen -W '%s' -- "$cur") $(compgen -c -- "$cur"))
                    fi
                }
                complete -F _agent_sandbox -o bashdefault -o default agent-sandbox
                """.formatted(words(Presets.NAMES), cases, names, bools, valued, subcommandCases, BOOL_WORDS,
                BOOL_WORDS, subcommands);
    }

    /** Text for a zsh {@code _arguments} description or action: brackets, colons and quotes escaped. */
    private static String zshQuote(String text) {
        return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]")
                .replace(":", "\\:");
    }

    static String zsh(Reference help) {
        StringBuilder specs = new StringBuilder();
        StringBuilder bools = new StringBuilder();
        for (Reference.Option f : help.options()) {
            if (f.optional()) {
                bools.append(bools.isEmpty() ? "" : " ").append(f.longName());
            }
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
                    # "--network false" would run the command false: after a bare boolean flag, a
                    # value offers the flag with the value after '='
                    local -a bools=(%s) values=()
                    local previous=${words[CURRENT-1]} value
                    if [[ -n $PREFIX && $PREFIX != -* ]] && (( ${bools[(Ie)$previous]} )); then
                        for value in %s; do
                            [[ $value == $PREFIX* ]] && values+=("$previous=$value")
                        done
                        if (( $#values )); then
                            compadd -U -Q -- $values
                            return
                        fi
                    fi
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
                        if [[ $words[1] == -- ]]; then
                            # after --, the command, whatever its name
                            shift words
                            (( CURRENT-- ))
                            _normal
                            return
                        fi
                        case $words[1] in
                %s                *) _normal ;;
                        esac
                    fi
                }

                _agent_sandbox "$@"
                """.formatted(bools, BOOL_WORDS, subcommands, specs, subcommandFlags);
    }

    private static String fishQuote(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    /**
     * The fish completion. Where the command starts is worked out from the whole line, so
     * flags complete after other flags; a boolean's value completes after {@code =} only,
     * and after a bare {@code --network}, {@code f} offers {@code --network=false}; after
     * the command (or {@code --}), the command's own completion runs.
     */
    static String fish(Reference help) {
        StringBuilder f = new StringBuilder();
        StringBuilder valued = new StringBuilder();
        StringBuilder bools = new StringBuilder();
        StringBuilder subcommandNames = new StringBuilder();
        for (Reference.Option flag : help.options()) {
            if (flag.argument() == null) {
                continue;
            }
            for (String n : flag.names()) {
                (flag.optional() ? bools : valued).append(' ').append(n);
            }
        }
        for (Reference.Command s : help.commands()) {
            if (s.name() != null) {
                subcommandNames.append(subcommandNames.isEmpty() ? "" : " ").append(s.name());
            }
        }
        f.append("""
                # fish completion for agent-sandbox, generated when agent-sandbox was built; do not edit.

                # The index of the command (or subcommand) among the words before the cursor, or
                # nothing while flags are still being typed. A flag's value is not the command.
                function __agent_sandbox_command_index
                    set -l words (commandline -opc)
                    set -l i 2
                    while test $i -le (count $words)
                        switch $words[$i]
                            case --
                                math $i + 1
                                return 0
                            case%s
                                set i (math $i + 2)
                                continue
                            case '-*'
                            case '*'
                                echo $i
                                return 0
                        end
                        set i (math $i + 1)
                    end
                    return 1
                end

                # Whether the word at the cursor is still among agent-sandbox's flags.
                function __agent_sandbox_before_command
                    not __agent_sandbox_command_index >/dev/null
                    and not __agent_sandbox_bool_value
                    and not string match -q -- '--*=*' (commandline -ct)
                end

                # The value after '=' of a flag at the cursor: --network=f, --cmd=gi.
                function __agent_sandbox_after_equals
                    not __agent_sandbox_command_index >/dev/null
                    and string match -q -- "$argv[1]=*" (commandline -ct)
                end

                # Command names as --cmd takes them: NAME=.
                function __agent_sandbox_command_rules
                    __fish_complete_command | string replace -r -- '^([^\\t]*)' '$1='
                end

                # Whether the cursor is on a value of a bare boolean flag: --network f.
                function __agent_sandbox_bool_value
                    set -l words (commandline -opc)
                    set -l current (commandline -ct)
                    test -n "$current"
                    and contains -- $words[-1]%s
                    and string match -q -r -- '^[tf01]' $current
                end

                function __agent_sandbox_bool_values
                    set -l words (commandline -opc)
                    for value in true false 1 0
                        echo $words[-1]=$value
                    end
                end

                # Whether the command found is this subcommand (not a command after --).
                function __agent_sandbox_subcommand
                    set -l i (__agent_sandbox_command_index)
                    test -n "$i"; or return 1
                    set -l words (commandline -opc)
                    set -l before (math $i - 1)
                    test $i -le (count $words); and test "$words[$i]" = $argv[1]
                    and test "$words[$before]" != --
                end

                # The command's own completions, for the words from the command on.
                function __agent_sandbox_command_completion
                    set -l i (__agent_sandbox_command_index)
                    test -n "$i"; or return
                    set -l words (commandline -opc)
                    set -l before (math $i - 1)
                    if contains -- "$words[$i]" %s; and test "$words[$before]" != --
                        return
                    end
                    set -l line (string escape -- $words[$i..-1] (commandline -ct))
                    complete -C (string join ' ' -- $line)
                end

                """.formatted(fishCase(valued), bools, subcommandNames));
        String before = "'__agent_sandbox_before_command'";
        for (Reference.Option flag : help.options()) {
            f.append("complete -c agent-sandbox");
            for (String n : flag.names()) {
                f.append(n.startsWith("--") ? " -l " + n.substring(2) : " -s " + n.substring(1));
            }
            switch (kind(flag)) {
                case FILE -> f.append(" -r -F");
                case DIRECTORY -> f.append(" -x -a '(__fish_complete_directories)'");
                case BOOL -> f.append(flag.optional() ? "" : " -x -a " + fishQuote(BOOL_WORDS));
                case PRESET -> f.append(" -x -a ").append(fishQuote(words(Presets.NAMES)));
                case COMMAND_RULE -> f.append(" -x -a '(__agent_sandbox_command_rules)'");
                case NONE -> f.append(flag.argument() != null ? " -x" : "");
            }
            f.append(" -n ").append(before).append(" -d ").append(fishQuote(flag.brief())).append('\n');
            if (flag.optional()) {
                // --network=<Tab>: the values, after '=' only (fish puts the "--network=" before them)
                f.append("complete -c agent-sandbox -f -l ").append(flag.longName().substring(2)).append(" -n ")
                        .append(fishQuote("__agent_sandbox_after_equals " + flag.longName()))
                        .append(" -a ").append(fishQuote(BOOL_WORDS)).append('\n');
            }
        }
        f.append("complete -c agent-sandbox -f -n '__agent_sandbox_bool_value' -a '(__agent_sandbox_bool_values)'"
                + " -d 'a boolean takes its value after ='\n");
        for (Reference.Command s : help.commands()) {
            if (s.name() == null) {
                continue;
            }
            f.append("complete -c agent-sandbox -f -n ").append(before).append(" -a ")
                    .append(s.name()).append(" -d ").append(fishQuote(s.brief().isEmpty() ? "subcommand" : s.brief()))
                    .append('\n');
            String in = fishQuote("__agent_sandbox_subcommand " + s.name());
            if (s.paths()) {
                f.append("complete -c agent-sandbox -F -n ").append(in).append('\n');
            }
            for (String flag : s.flags()) {
                f.append("complete -c agent-sandbox -f -n ").append(in)
                        .append(flag.startsWith("--") ? " -l " + flag.substring(2) : " -s " + flag.substring(1))
                        .append(flag.equals("-C") ? " -x -a '(__fish_complete_directories)'" : "").append('\n');
            }
        }
        f.append("complete -c agent-sandbox -n ").append(before)
                .append(" -a '(__fish_complete_command)' -d command\n");
        f.append("complete -c agent-sandbox -f -n '__agent_sandbox_command_index >/dev/null'"
                + " -a '(__agent_sandbox_command_completion)'\n");
        return f.toString();
    }

    /** A fish {@code case} line's patterns for these flags, each quoted. */
    private static String fishCase(StringBuilder flags) {
        StringBuilder b = new StringBuilder();
        for (String n : flags.toString().strip().split(" ")) {
            b.append(' ').append(fishQuote(n));
        }
        return b.toString();
    }
}
