package agentsandbox.cli;

import agentsandbox.core.rules.Presets;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The man page and the completions are made from the help text: every flag and
 * subcommand that {@code --help} prints is in each of them, also one added later.
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

    private static void assertEveryFlagEverywhere(HelpText parsed, String help) {
        Set<String> flags = flagsIn(help);
        String man = Manual.man(parsed, "1.2.3");
        String bash = Manual.bash(parsed);
        String zsh = Manual.zsh(parsed);
        String fish = Manual.fish(parsed);
        for (String flag : flags) {
            assertThat(man).as("man page has " + flag).contains("\\fB" + flag.replace("-", "\\-") + "\\fR");
            assertThat(bash).as("bash completion has " + flag).containsPattern("[' |]" + Pattern.quote(flag) + "[ '|)]");
            assertThat(zsh).as("zsh completion has " + flag).containsPattern("[ ')]" + Pattern.quote(flag) + "[\\[=+ ;\\n]");
            String fishForm = flag.startsWith("--") ? " -l " + flag.substring(2) : " -s " + flag.substring(1);
            assertThat(fish).as("fish completion has " + flag).containsPattern(Pattern.quote(fishForm) + "[ \\n]");
        }
    }

    @Test
    void Every_Flag_Of_The_Help_Is_In_The_Man_Page_And_Each_Completion() {
        String help = help();
        assertThat(flagsIn(help)).as("flags found in --help").contains("--help", "--cwd", "-C", "--network", "--cmd", "-q");
        assertEveryFlagEverywhere(HelpText.parse(help), help);
    }

    @Test
    void Every_Subcommand_Of_The_Help_Is_In_Each_Completion_And_The_Man_Page() {
        HelpText parsed = HelpText.parse(help());
        assertThat(parsed.subcommands()).extracting(HelpText.Subcommand::name).contains("check", "doctor");
        for (HelpText.Subcommand s : parsed.subcommands()) {
            // a subcommand after the run's flags: agent-sandbox [flags] explain PATH...
            assertThat(Manual.man(parsed, "1")).containsPattern("\\\\fBagent-sandbox\\\\fR (\\[flags\\] )?"
                    + s.name());
            assertThat(Manual.bash(parsed)).containsPattern("subcommands='[^']*\\b" + s.name() + "\\b");
            assertThat(Manual.zsh(parsed)).contains("'" + s.name() + ":");
            assertThat(Manual.fish(parsed)).contains(" -a " + s.name() + " ");
        }
    }

    @Test
    void Explain_Takes_The_Run_Flags_Before_It_And_Completes_Paths_After_It() {
        HelpText parsed = HelpText.current();
        HelpText.Subcommand explain = parsed.subcommands().stream().filter(s -> s.name().equals("explain"))
                .findFirst().orElseThrow();
        assertThat(explain.paths()).isTrue();
        assertThat(Manual.bash(parsed)).contains("explain) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;");
        assertThat(Manual.zsh(parsed)).contains("explain) _files ;;");
        assertThat(Manual.fish(parsed)).contains("complete -c agent-sandbox -F -n '__fish_seen_subcommand_from explain'");
        assertThat(Manual.man(parsed, "1")).contains(".SH EXPLAIN");
    }

    @Test
    void Presets_Complete_Where_A_Flag_Takes_One() {
        String help = Flags.USAGE.replace("  -h, --help ",
                "      --preset PRESET    turn a preset on\n  -h, --help ");
        HelpText parsed = HelpText.parse(help);
        for (String preset : Presets.NAMES) {
            assertThat(Manual.bash(parsed)).contains(preset);
            assertThat(Manual.zsh(parsed)).contains(preset);
            assertThat(Manual.fish(parsed)).contains(preset);
        }
    }

    @Test
    void A_Flag_Added_To_The_Help_Reaches_The_Man_Page_And_Completions_Unchanged() {
        String help = Flags.USAGE.replace("      --dry-run ",
                "      --example-port PORT let the sandbox reach this port of the host\n"
                        + "                         (repeatable)\n      --dry-run ");
        HelpText parsed = HelpText.parse(help);
        HelpText.Flag added = parsed.flags().stream().filter(f -> f.names().contains("--example-port")).findFirst()
                .orElseThrow();
        assertThat(added.argument()).isEqualTo("PORT");
        assertThat(added.description()).isEqualTo("let the sandbox reach this port of the host (repeatable)");
        assertEveryFlagEverywhere(parsed, help);
        assertThat(Manual.man(parsed, "1")).contains("\\fB\\-\\-example\\-port\\fR \\fIPORT\\fR\n"
                + "let the sandbox reach this port of the host (repeatable)");
    }

    @Test
    void A_Description_One_Space_After_A_Long_Flag_Is_Still_Its_Description() {
        String help = Flags.USAGE.replace("      --dry-run ",
                "      --share-tmp[=BOOL] /tmp is the host's temp dir, not a private one (default false)\n"
                        + "      --ssh-agent[=BOOL] let the sandbox use your ssh-agent (default false)\n"
                        + "      --proxy-port PORT The proxy's port\n      --dry-run ");
        HelpText parsed = HelpText.parse(help);
        HelpText.Flag shareTmp = parsed.flags().stream().filter(f -> f.names().contains("--share-tmp")).findFirst()
                .orElseThrow();
        assertThat(shareTmp.names()).containsExactly("--share-tmp");
        assertThat(shareTmp.optional()).isTrue();
        assertThat(shareTmp.description()).isEqualTo("/tmp is the host's temp dir, not a private one (default false)");
        HelpText.Flag proxy = parsed.flags().stream().filter(f -> f.names().contains("--proxy-port")).findFirst()
                .orElseThrow();
        assertThat(proxy.argument()).isEqualTo("PORT");
        assertThat(proxy.description()).isEqualTo("The proxy's port");
        assertEveryFlagEverywhere(parsed, help);
    }

    @Test
    void The_Help_Text_Parses_Into_Its_Parts() {
        HelpText parsed = HelpText.current();
        assertThat(parsed.summary()).isEqualTo("run a command in a bubblewrap sandbox");
        HelpText.Flag network = parsed.flags().stream().filter(f -> f.longName().equals("--network")).findFirst()
                .orElseThrow();
        assertThat(network.optional()).isTrue();
        assertThat(network.argument()).isEqualTo("BOOL");
        HelpText.Flag cwd = parsed.flags().stream().filter(f -> f.longName().equals("--cwd")).findFirst().orElseThrow();
        assertThat(cwd.names()).containsExactly("-C", "--cwd");
        assertThat(cwd.optional()).isFalse();
        HelpText.Flag cmd = parsed.flags().stream().filter(f -> f.longName().equals("--cmd")).findFirst().orElseThrow();
        assertThat(cmd.description()).endsWith("(repeatable, also comma-separated: --cmd git=true,rm=false)");
        assertThat(parsed.sections()).extracting(HelpText.Section::title).contains("exit status");
    }

    @Test
    void Roff_Text_Cannot_Start_A_Request_Or_Keep_A_Raw_Backslash() {
        assertThat(Manual.roff(".SH x")).isEqualTo("\\&.SH x");
        assertThat(Manual.roff("'x")).isEqualTo("\\&'x");
        assertThat(Manual.roff("a\\b-c")).isEqualTo("a\\eb\\-c");
    }
}
