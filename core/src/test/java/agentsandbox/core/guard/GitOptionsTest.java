// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GitOptionsTest {
    /** A made-up subcommand with one option of every kind. */
    private static final GitOptions SPEC = GitOptions.of("""
            a|all f|force force-with-lease? force-if-includes m|message= S|gpg-sign? n|no-verify d|delete D|
            C|= contains^ v|verbose stat no-stat
            """);

    private static GitOptions.Parsed parse(String args) {
        return SPEC.parse(args == null ? List.of() : List.of(args.split(" ")));
    }

    private static List<String> list(String commaSeparated) {
        return commaSeparated == null ? List.of() : Arrays.asList(commaSeparated.split(","));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // args          | options                  | positionals
        "-f              | force                    |",
        "-fd             | force,delete             |",
        "-df             | delete,force             |",
        "-afn            | all,force,no-verify      |",
        "-fDa            | force,-D,all             |",
        "-D x            | -D                       | x",
        "-zf             | -z,force                 |",
        "-f -d x         | force,delete             | x",
    })
    void Reads_Combined_Short_Flags_Each_On_Its_Own(String args, String options, String positionals) {
        GitOptions.Parsed p = parse(args);
        assertThat(p.options()).containsExactlyInAnyOrderElementsOf(list(options));
        assertThat(p.positionals()).containsExactlyElementsOf(list(positionals));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // a required value: attached, after =, or the next argument whatever it looks like
        "-mmsg -f               | message,force   |",
        "-m msg x               | message         | x",
        "-am msg                | all,message     |",
        "-ma                    | message         |",
        "-mn                    | message         |",
        "-m -n                  | message         |",
        "-m --force             | message         |",
        "--message=-n           | message         |",
        "--message=a=b -f       | message,force   |",
        "--message -n           | message         |",
        "--message --force x    | message         | x",
        "--mess -n              | message         |",
        "--message              | message         |",
        "-m                     | message         |",
        "-C3 -n                 | -C,no-verify    |",
        "-C -n                  | -C              |",
        "-fC -n                 | force,-C        |",
        // an optional value: only attached
        "-S -n                  | gpg-sign,no-verify |",
        "-Skey -n               | gpg-sign,no-verify |",
        "-Sn                    | gpg-sign        |",
        "--gpg-sign key         | gpg-sign        | key",
        "--gpg-sign=key         | gpg-sign        |",
        "--force-with-lease main | force-with-lease | main",
        "--force-with-lease=main:abc | force-with-lease |",
        // a value when one follows that is not an option
        "--contains HEAD x      | contains        | x",
        "--contains -f x        | contains,force  | x",
        "--contains             | contains        |",
        // a negated option takes no value
        "--no-message x         | no-message      | x",
    })
    void Reads_Option_Values_The_Way_Git_Does(String args, String options, String positionals) {
        GitOptions.Parsed p = parse(args);
        assertThat(p.options()).containsExactlyInAnyOrderElementsOf(list(options));
        assertThat(p.positionals()).containsExactlyElementsOf(list(positionals));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        // exact names win over longer ones they are a prefix of
        "--force          | force",
        "--stat           | stat",
        // unique prefixes
        "--force-w        | force-with-lease",
        "--force-i        | force-if-includes",
        "--del            | delete",
        "--d              | delete",
        "--verb           | verbose",
        // ambiguous prefixes count as every candidate (git refuses to guess)
        "--forc           | force,force-with-lease,force-if-includes",
        "--fo             | force,force-with-lease,force-if-includes",
        "--force-         | force-with-lease,force-if-includes",
        "--v              | verbose,verify",
        "--no-forc        | no-force,no-force-with-lease,no-force-if-includes",
        // unknown options are kept as written
        "--bogus          | bogus",
        "--bogus=1        | bogus",
        "--forc-w         | forc-w",
    })
    void Reads_Long_Option_Prefixes_Like_Git(String arg, String options) {
        assertThat(parse(arg).options()).containsExactlyInAnyOrderElementsOf(list(options));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "--no-force        | no-force",
        "--no-all          | no-all",
        "--no-del          | no-delete",
        "--no-verify       | no-verify",
        "--no-verif        | no-verify",
        "--no-ver          | no-verify,no-verbose",
        "--no-stat         | no-stat",
        // --verify is the negation of an option declared as no-verify
        "--verify          | verify",
        "--veri            | verify",
        "--no-no-verify    | verify",
    })
    void Reads_Negations_Like_Git(String arg, String options) {
        assertThat(parse(arg).options()).containsExactlyInAnyOrderElementsOf(list(options));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "x -f y                   | force        | x,y",
        "x y --force              | force        | x,y",
        "x -- -f --force          |              | x,-f,--force",
        "-- -f                    |              | -f",
        "-f -- x --               | force        | x,--",
        "x --end-of-options -f    |              | x,-f",
        "-m -- -f                 | message,force |",
        "-                        |              | -",
    })
    void Reads_Options_After_Positionals_Until_Double_Dash(String args, String options, String positionals) {
        GitOptions.Parsed p = parse(args);
        assertThat(p.options()).containsExactlyInAnyOrderElementsOf(list(options));
        assertThat(p.positionals()).containsExactlyElementsOf(list(positionals));
    }

    @Test
    void Reads_An_Empty_Command_Line() {
        assertThat(parse(null)).isEqualTo(new GitOptions.Parsed(Set.of(), List.of(), java.util.Map.of()));
    }

    @Test
    void Has_Tells_Whether_An_Option_Was_Given() {
        GitOptions.Parsed p = parse("-nm msg");
        assertThat(p.has("no-verify")).isTrue();
        assertThat(p.has("message")).isTrue();
        assertThat(p.has("force")).isFalse();
    }
}
