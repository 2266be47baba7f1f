// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Presets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --help}, the man page and the completions are made from one source
 * ({@link Reference}): every flag and subcommand that {@code --help} prints is in each
 * of them, also one added later; the man page holds the full text; the help fits a
 * terminal of 80 columns and 40 rows.
 */
class ManualTest {
    @TempDir
    Path dir;

    /** The flags a reader of the help text sees: every word that looks like one. */
    private static Set<String> flagsIn(String help) {
        Set<String> flags = new LinkedHashSet<>();
        Matcher m = Pattern.compile("(?<![\\w-])(--?[A-Za-z][A-Za-z-]*)").matcher(help);
        while (m.find()) {
            flags.add(m.group(1));
        }
        return flags;
    }

    private String help() {
        CliWorld.Result r = new CliWorld(dir).run("--help");
        assertThat(r.status()).isZero();
        return r.out();
    }

    private static void assertEveryFlagEverywhere(Reference ref, String help) {
        Set<String> flags = flagsIn(help);
        String man = Manual.man(ref, "1.2.3");
        String bash = Manual.bash(ref);
        String zsh = Manual.zsh(ref);
        String fish = Manual.fish(ref);
        for (String flag : flags) {
            assertThat(man).as("man page has " + flag).contains("\\fB" + flag.replace("-", "\\-") + "\\fR");
            assertThat(bash).as("bash completion has " + flag).containsPattern("[' |]" + Pattern.quote(flag) + "[ '|)]");
            assertThat(zsh).as("zsh completion has " + flag).containsPattern("[ ')]" + Pattern.quote(flag) + "[\\[=+ ;\\n]");
            String fishForm = flag.startsWith("--") ? " -l " + flag.substring(2) : " -s " + flag.substring(1);
            assertThat(fish).as("fish completion has " + flag).containsPattern(Pattern.quote(fishForm) + "[ \\n]");
        }
    }

    /** The reference with one more flag, as a change would add it. */
    private static Reference withOption(Reference.Option added) {
        Reference r = Reference.current();
        List<Reference.Option> options = new ArrayList<>(r.options());
        options.add(options.size() - 2, added);
        return new Reference(r.summary(), r.commands(), options, r.helpNotes(), r.description(), r.sections());
    }

    @Test
    void The_Help_Fits_80_Columns_And_40_Rows() {
        String help = help();
        assertThat(help).isEqualTo(Reference.current().help()).endsWith("\n");
        String[] lines = help.split("\n", -1);
        assertThat(lines.length - 1).as("lines of --help").isLessThanOrEqualTo(40);
        for (String line : lines) {
            assertThat(line.length()).as("columns of: " + line).isLessThanOrEqualTo(80);
            assertThat(line).as("no tab or trailing space").doesNotContain("\t").isEqualTo(line.stripTrailing());
        }
    }

    /**
     * {@code agent-sandbox SUBCOMMAND --help} (or {@code -h}) prints that subcommand's usage and
     * its paragraph of the man page on stdout, exit 0, within 80 columns; with anything more
     * it stays the subcommand's own usage error.
     */
    @Test
    void Each_Subcommand_Has_Its_Own_Help() {
        for (String name : List.of("check", "trust", "doctor", "explain", "changes", "log")) {
            for (String flag : List.of("--help", "-h")) {
                CliWorld.Result r = new CliWorld(dir).run(name, flag);
                assertThat(r.status()).as(name + " " + flag + ": " + r.err()).isZero();
                assertThat(r.out()).as(name + " " + flag).startsWith("usage: agent-sandbox ")
                        .contains(name).contains("All flags: agent-sandbox --help");
                assertThat(r.out().lines().count()).as(name + " " + flag + " lines").isGreaterThan(3);
                for (String line : r.out().split("\n")) {
                    assertThat(line.length()).as(name + " " + flag + " line: " + line).isLessThanOrEqualTo(80);
                }
                assertThat(r.err()).isEmpty();
            }
        }
        CliWorld.Result more = new CliWorld(dir).run("doctor", "--help", "x");
        assertThat(more.status()).isEqualTo(1);
        assertThat(more.err()).contains("doctor takes no arguments");
    }

    @Test
    void Every_Flag_Of_The_Help_Is_In_The_Man_Page_And_Each_Completion() {
        String help = help();
        assertThat(flagsIn(help)).as("flags found in --help").contains("--help", "--cwd", "-C", "--network", "--cmd", "-q");
        assertEveryFlagEverywhere(Reference.current(), help);
    }

    @Test
    void Every_Subcommand_Of_The_Help_Is_In_Each_Completion_And_The_Man_Page() {
        Reference ref = Reference.current();
        List<String> names = new ArrayList<>();
        for (Reference.Command c : ref.commands()) {
            if (c.name() != null) {
                names.add(c.name());
            }
        }
        assertThat(names).containsExactly("check", "trust", "doctor", "explain", "changes", "log");
        String help = help();
        String man = Manual.man(ref, "1");
        for (String name : names) {
            assertThat(help).containsPattern("agent-sandbox (\\[flags\\] )?" + name);
            assertThat(man).containsPattern("\\\\fBagent-sandbox\\\\fR (\\[flags\\] )?" + name);
            assertThat(man).contains(".TP\n\\fB" + name + "\\fR");
            assertThat(Manual.bash(ref)).containsPattern("COMPREPLY=\\(\\$\\(compgen -W '[^']*\\b" + name + "\\b");
            assertThat(Manual.bash(ref)).contains("            " + name + ") ");
            assertThat(Manual.zsh(ref)).contains("'" + name + ":");
            assertThat(Manual.fish(ref)).contains(" -a " + name + " ");
        }
    }

    @Test
    void The_Man_Page_Holds_The_Full_Text_Of_Every_Flag_And_Subcommand_And_The_Reference_Sections() {
        Reference ref = Reference.current();
        String man = Manual.man(ref, "1");
        for (Reference.Option o : ref.options()) {
            assertThat(man).contains(Manual.roff(o.details().isEmpty() ? o.brief().substring(1) : o.details()));
        }
        for (Reference.Command c : ref.commands()) {
            assertThat(man).contains(Manual.roff(c.details()));
        }
        for (String section : List.of("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "CONFIGURATION",
                "PRESETS", "FILES", "ENVIRONMENT", "EXIT STATUS", "EXAMPLES", "SEE ALSO")) {
            assertThat(man).contains(".SH " + section + "\n");
        }
        for (String preset : Presets.NAMES) {
            assertThat(man).as("man page describes " + preset).contains(Manual.roff(preset));
        }
    }

    @Test
    void Explain_Takes_The_Run_Flags_Before_It_And_Completes_Paths_After_It() {
        Reference ref = Reference.current();
        Reference.Command explain = ref.commands().stream().filter(c -> "explain".equals(c.name()))
                .findFirst().orElseThrow();
        assertThat(explain.paths()).isTrue();
        assertThat(Manual.bash(ref)).contains("explain) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;");
        assertThat(Manual.fish(ref)).contains("complete -c agent-sandbox -F -n '__agent_sandbox_subcommand explain'");
        assertThat(Manual.zsh(ref)).contains("explain) _files ;;");
        assertThat(Manual.man(ref, "1")).contains(".TP\n\\fBexplain\\fR \\fIPATH\\fR...\n")
                .contains(".TP\n\\fBtrust\\fR [\\fB\\-C\\fR \\fIDIR\\fR]\n");
    }

    @Test
    void Presets_Complete_Where_A_Flag_Takes_One() {
        Reference ref = withOption(new Reference.Option(List.of("--preset"), "PRESET", false, "turn a preset on", ""));
        for (String preset : Presets.NAMES) {
            assertThat(Manual.bash(ref)).contains(preset);
            assertThat(Manual.zsh(ref)).contains(preset);
            assertThat(Manual.fish(ref)).contains(preset);
        }
    }

    @Test
    void A_Flag_Added_To_The_Reference_Reaches_The_Help_The_Man_Page_And_Completions() {
        Reference ref = withOption(new Reference.Option(List.of("--example-port"), "PORT", false,
                "reach this port of the host (repeatable)", "Let the sandbox reach this port of the host."));
        String help = ref.help();
        assertThat(help).contains("      --example-port PORT ").contains("reach this port of the host (repeatable)\n");
        assertThat(flagsIn(help)).contains("--example-port");
        assertEveryFlagEverywhere(ref, help);
        assertThat(Manual.man(ref, "1")).contains("\\fB\\-\\-example\\-port\\fR \\fIPORT\\fR\n"
                + "Let the sandbox reach this port of the host.");
    }

    @Test
    void The_Reference_Knows_Each_Flag_Argument() {
        Reference ref = Reference.current();
        Reference.Option network = ref.options().stream().filter(o -> o.longName().equals("--network")).findFirst()
                .orElseThrow();
        assertThat(network.optional()).isTrue();
        assertThat(network.argument()).isEqualTo("BOOL");
        assertThat(network.longForm()).isEqualTo("--network[=BOOL]");
        Reference.Option cwd = ref.options().stream().filter(o -> o.longName().equals("--cwd")).findFirst().orElseThrow();
        assertThat(cwd.names()).containsExactly("-C", "--cwd");
        assertThat(cwd.optional()).isFalse();
        assertThat(cwd.longForm()).isEqualTo("--cwd PATH");
        Reference.Option cmd = ref.options().stream().filter(o -> o.longName().equals("--cmd")).findFirst().orElseThrow();
        assertThat(cmd.details()).endsWith("Repeatable, also comma-separated: --cmd git=true,rm=false.");
    }

    @Test
    void Roff_Text_Cannot_Start_A_Request_Or_Keep_A_Raw_Backslash() {
        assertThat(Manual.roff(".SH x")).isEqualTo("\\&.SH x");
        assertThat(Manual.roff("'x")).isEqualTo("\\&'x");
        assertThat(Manual.roff("a\\b-c")).isEqualTo("a\\eb\\-c");
    }
}
