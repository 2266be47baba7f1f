// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.text;

import agentsandbox.core.rules.Presets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DidYouMeanTest {
    private static final List<String> FLAGS = List.of("--network", "--docker", "--dry-run", "--debug", "--ro",
            "--rw", "--exclude", "--cmd", "--cwd", "--config");

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "none", value = {
        "--netwrok | --network",    // two neighbours swapped
        "--networ  | --network",    // a unique prefix
        "--netwrk  | --network",    // one left out
        "--dockerr | --docker",     // one too many
        "--dry_run | --dry-run",    // one changed
        "--r       | none",         // --ro and --rw are as near
        "--c       | none",         // --cmd, --cwd, --config start with it
        "--verbose | none",         // far from everything
        "--network | none",         // not a typo at all
        "x         | none",
    })
    void Suggests_The_One_Near_Name_Or_None(String typed, String meant) {
        assertThat(DidYouMean.closest(typed, FLAGS)).isEqualTo(meant);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "ab   | ba   | 1",
        "abc  | abc  | 0",
        "kitten | sitting | 3",
        "''   | abc  | 3",
    })
    void Distance_Counts_Insertions_Deletions_Changes_And_Swaps(String a, String b, int distance) {
        assertThat(DidYouMean.distance(a, b)).isEqualTo(distance);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "@lint/pyhton | did you mean @lint/python?",
        "!@gti        | did you mean !@git?",
        "lint/ts      | did you mean @lint/ts?",
    })
    void Unknown_Preset_Names_The_Preset_It_Most_Likely_Meant(String toggle, String suggestion) {
        assertThatThrownBy(() -> Presets.validateToggle(toggle))
                .hasMessageStartingWith("unknown preset '" + toggle + "' (" + suggestion + " known: @all,");
    }
}
