// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.PolicyLayer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class FlagsTest {
    private static Args parse(String... argv) {
        return Flags.parse(List.of(argv));
    }

    @Test
    void No_Arguments_Means_Usage_Error() {
        assertThat(parse().mode()).isEqualTo(Args.Mode.USAGE);
    }

    @Test
    void Flags_Stop_At_The_First_Non_Flag() {
        Args a = parse("--network=false", "npm", "install", "--save-dev", "-h", "--", "--ro", "x");
        assertThat(a.mode()).isEqualTo(Args.Mode.RUN);
        assertThat(a.network()).isFalse();
        assertThat(a.command()).containsExactly("npm", "install", "--save-dev", "-h", "--", "--ro", "x");
        assertThat(a.ro()).isEmpty();
    }

    @Test
    void Double_Dash_Ends_The_Flags() {
        assertThat(parse("--", "--version").command()).containsExactly("--version");
        assertThat(parse("--dry-run", "--", "check").command()).containsExactly("check");
        assertThat(parse("--dry-run", "--", "check").mode()).isEqualTo(Args.Mode.RUN);
    }

    @Test
    void Values_With_Space_Or_Equals() {
        Args a = parse("--ro", "a", "--ro=b", "--rw", "c", "--rw=d", "--exclude", "e", "--exclude=f",
                "-C", "dir", "--config=cfg.json", "true");
        assertThat(a.ro()).containsExactly("a", "b");
        assertThat(a.rw()).containsExactly("c", "d");
        assertThat(a.exclude()).containsExactly("e", "f");
        assertThat(a.cwd()).isEqualTo("dir");
        assertThat(a.config()).isEqualTo("cfg.json");
        assertThat(parse("-c", "x.json", "true").config()).isEqualTo("x.json");
        assertThat(parse("--cwd=sub", "true").cwd()).isEqualTo("sub");
        assertThat(parse("-Csub", "true").cwd()).isEqualTo("sub");
    }

    @Test
    void A_Value_May_Itself_Look_Like_A_Flag() {
        assertThat(parse("--ro", "--weird-dir", "true").ro()).containsExactly("--weird-dir");
    }

    @ParameterizedTest
    @CsvSource({"--network,true", "--network=true,true", "--network=1,true", "--network=false,false",
            "--network=0,false"})
    void Booleans_Accept_True_False_One_Zero(String flag, boolean expected) {
        assertThat(parse(flag, "x").network()).isEqualTo(expected);
        assertThat(parse(flag.replace("network", "docker"), "x").docker()).isEqualTo(expected);
    }

    @Test
    void A_Bare_Boolean_Takes_No_Separate_Value() {
        Args a = parse("--network", "true");
        assertThat(a.network()).isTrue();
        assertThat(a.command()).containsExactly("true");
    }

    @Test
    void Unset_Booleans_Stay_Unset_So_Config_Can_Decide() {
        Args a = parse("true");
        assertThat(a.network()).isNull();
        assertThat(a.docker()).isNull();
        assertThat(a.dryRun()).isFalse();
        assertThat(a.debug()).isFalse();
    }

    @Test
    void Allow_Host_Is_Repeatable_And_Comma_Separated_And_Turns_The_Network_On() {
        Args a = parse("--allow-host", "Example.org,*.example.net", "--allow-host=other.org", "ls");
        assertThat(a.allowHosts()).containsExactly("example.org", "*.example.net", "other.org");
        assertThat(a.flagLayer().allowHosts()).containsExactly("example.org", "*.example.net", "other.org");
        assertThat(a.flagLayer().network()).isTrue();
        assertThat(parse("--network=false", "--allow-host", "x.org", "ls").flagLayer().network()).isFalse();
        assertThat(parse("ls").flagLayer().network()).isNull();
        assertThatThrownBy(() -> parse("--allow-host", "x.org,1.2.3.4", "ls")).isInstanceOf(UsageException.class)
                .hasMessageStartingWith("--allow-host 1.2.3.4: an IP address");
    }

    @Test
    void Cmd_Is_Repeatable_And_Comma_Separated() {
        Args a = parse("--cmd", "git=true,rm=false", "--cmd=npm=~/bin/guard.sh", "--cmd", "git=@git", "x");
        assertThat(a.commands()).containsOnlyKeys("git", "rm", "npm");
        assertThat(a.commands().get("git")).isEqualTo(new CommandRule.Preset("@git"));
        assertThat(a.commands().get("rm")).isEqualTo(new CommandRule.Blocked());
        assertThat(a.commands().get("npm")).isEqualTo(new CommandRule.Script("~/bin/guard.sh"));
    }

    @Test
    void Help_And_Version_Win_Wherever_They_Appear_Among_Flags() {
        assertThat(parse("-h").mode()).isEqualTo(Args.Mode.HELP);
        assertThat(parse("--network=false", "--help").mode()).isEqualTo(Args.Mode.HELP);
        assertThat(parse("-v").mode()).isEqualTo(Args.Mode.VERSION);
        assertThat(parse("--version").mode()).isEqualTo(Args.Mode.VERSION);
    }

    @Test
    void Check_Subcommand_And_Flag() {
        assertThat(parse("check").mode()).isEqualTo(Args.Mode.CHECK);
        assertThat(parse("check").quiet()).isFalse();
        assertThat(parse("check", "-q").quiet()).isTrue();
        assertThat(parse("--check").mode()).isEqualTo(Args.Mode.CHECK);
        assertThat(parse("--check", "-q").quiet()).isTrue();
        assertThat(parse("-q", "--check").quiet()).isTrue();
    }

    @Test
    void The_Flag_Layer_Carries_Every_Rule() {
        PolicyLayer l = parse("--ro", "a", "--rw", "b", "--exclude", "c", "--cmd", "rm=false",
                "--network=false", "--docker", "x").flagLayer();
        assertThat(l.layer()).isEqualTo(Layer.FLAG);
        assertThat(l.source()).isEqualTo("flags");
        assertThat(l.ro()).containsExactly("a");
        assertThat(l.rw()).containsExactly("b");
        assertThat(l.exclude()).containsExactly("c");
        assertThat(l.commands()).containsEntry("rm", new CommandRule.Blocked());
        assertThat(l.network()).isFalse();
        assertThat(l.docker()).isTrue();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--netwrk --x                 | unknown flag '--netwrk'",
        "-x true                      | unknown flag '-x'",
        "--ro                         | --ro needs a value",
        "-C                           | -C needs a value",
        "--network=yes true           | --network=yes: expected true, false, 1 or 0",
        "--network=false              | no command given",
        "--dry-run --                 | no command after '--'",
        "--help=1                     | --help takes no value",
        "--cmd git true               | expected NAME=VALUE",
        "--cmd git=@nope true         | unknown command preset '@nope'",
        "--cmd =true true             | empty command name",
        "--cmd a/b=true true          | invalid command name 'a/b'",
        "--cmd git= true              | empty command rule",
        "--ro src/[ab true            | --ro src/[ab:",
        "-q true                      | -q only applies to check",
        "check now                    | check takes only -q",
        "--check ls                   | --check takes no command",
    })
    void Usage_Errors_Name_The_Problem(String argv, String message) {
        assertThatThrownBy(() -> parse(argv.trim().split(" +")))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining(message);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--networ       | --network",
        "--netwrok      | --network",
        "--netwrok=off  | --network",
        "-network       | --network",
        "--dryrun       | --dry-run",
        "--exlude       | --exclude",
        "--exclud       | --exclude",
        "--sharetmp     | --share-tmp",
    })
    void Unknown_Flag_Names_The_Flag_It_Most_Likely_Meant_In_The_Same_Line(String flag, String meant) {
        assertThatThrownBy(() -> parse(flag, "true")).isInstanceOf(UsageException.class)
                .hasMessage("unknown flag '" + flag + "', did you mean " + meant + "?");
    }

    @ParameterizedTest
    @ValueSource(strings = {"-x", "--r", "--zzzzzz", "--verbose", "-Z"})
    void Unknown_Flag_Far_From_Every_Flag_Or_Between_Two_Suggests_None(String flag) {
        assertThatThrownBy(() -> parse(flag, "true")).isInstanceOf(UsageException.class)
                .hasMessage("unknown flag '" + flag + "'");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--network | false | false",
        "--network | 0     | 0",
        "--network | off   | false",
        "--network | no    | false",
        "--docker  | true  | true",
        "--docker  | yes   | true",
        "--share-tmp | on  | true",
        "--ssh-agent | 1   | 1",
    })
    void Bare_Policy_Boolean_Before_A_Boolean_Word_Runs_That_Word_As_Specified_With_A_Hint(String flag,
            String word, String meant) {
        Args a = parse(flag, word, "claude");
        assertThat(a.mode()).isEqualTo(Args.Mode.RUN);
        assertThat(a.command()).containsExactly(word, "claude");
        assertThat(a.hints()).containsExactly(flag + " " + word + " runs the command \"" + word
                + "\" (a flag takes a BOOL only after =); did you mean " + flag + "=" + meant + "?");
    }

    @Test
    void Ssh_Agent_Takes_A_Boolean_Or_The_Comments_Of_Keys() {
        Args all = parse("--ssh-agent", "--", "git", "push");
        assertThat(all.sshAgent()).isTrue();
        assertThat(all.sshAgentKeys()).isEmpty();
        Args named = parse("--ssh-agent=work,deploy key", "--", "git", "push");
        assertThat(named.sshAgent()).isTrue();
        assertThat(named.sshAgentKeys()).containsExactly("work", "deploy key");
        assertThat(named.flagLayer().sshAgentKeys()).containsExactly("work", "deploy key");
        Args off = parse("--ssh-agent=work", "--ssh-agent=false", "--", "true");
        assertThat(off.sshAgent()).isFalse();
        assertThat(off.sshAgentKeys()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"--ssh-agent=,", "--ssh-agent=work,", "--ssh-agent=,work", "--ssh-agent=a,a"})
    void Ssh_Agent_With_An_Empty_Or_Repeated_Comment_Is_One_Usage_Line(String flag) {
        assertThatThrownBy(() -> parse(flag, "--", "true")).isInstanceOf(UsageException.class)
                .hasMessageStartingWith(flag + ": expected true, false, or the comments of keys")
                .hasMessageNotContaining("\n");
    }

    @Test
    void No_Hint_For_Values_With_Equals_Other_Commands_Or_The_Run_Switches() {
        assertThat(parse("--network=false", "claude").hints()).isEmpty();
        assertThat(parse("--network", "claude").hints()).isEmpty();
        assertThat(parse("--network", "--", "false").hints()).isEmpty();
        assertThat(parse("--dry-run", "true").hints()).isEmpty();
        assertThat(parse("--debug", "false").hints()).isEmpty();
        assertThat(parse("--network", "True").hints()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"--cwd=", "--ro="})
    void Empty_Values_Are_Refused(String flag) {
        assertThatThrownBy(() -> parse(flag, "true")).isInstanceOf(UsageException.class)
                .hasMessageContaining("non-empty value");
    }

    @Test
    void Usage_Names_Every_Flag() {
        String help = Reference.current().help();
        for (String flag : List.of("--help", "--version", "--check", "--cwd", "--config", "--network",
                "--docker", "--dry-run", "--debug", "--ro", "--rw", "--exclude", "--cmd")) {
            assertThat(help).contains(flag);
        }
    }

    /** The parser and the documentation know the same long flags (--quiet is check's -q, shown as -q). */
    @Test
    void Every_Long_Flag_The_Parser_Knows_Is_Documented_And_No_Other() {
        List<String> documented = new java.util.ArrayList<>();
        for (Reference.Option o : Reference.current().options()) {
            documented.add(o.longName());
        }
        List<String> parsed = new java.util.ArrayList<>(Flags.LONG_FLAGS);
        parsed.remove("--quiet");
        assertThat(documented).containsExactlyInAnyOrderElementsOf(parsed);
    }

    @Test
    void Version_Comes_From_The_Build() {
        assertThat(Flags.version()).matches("\\d+\\.\\d+\\.\\d+.*");
    }
}
