// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpecificityTest {
    private static Candidate c(String spec) {
        // "<layer> <access> <exact|glob>"
        String[] f = spec.split(" ");
        return new Candidate(Path.of("/p"), Path.of("/p"), Access.valueOf(f[1].toUpperCase()),
                new Origin(Layer.valueOf(f[0].toUpperCase()), f[0]), f[2].equals("exact"), "p");
    }

    @ParameterizedTest(name = "{0} vs {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
        // exact beats glob, whatever the layer or level
        "flag rw glob|preset ro exact|preset ro exact",
        "project exclude glob|global rw exact|global rw exact",
        // then the later layer wins
        "preset ro exact|project rw exact|project rw exact",
        "global exclude exact|project rw exact|project rw exact",
        "project ro exact|flag rw exact|flag rw exact",
        "global rw glob|flag ro glob|flag ro glob",
        // then, within one layer, exclude > ro > rw
        "project rw exact|project ro exact|project ro exact",
        "project exclude exact|project ro exact|project exclude exact",
        "flag rw glob|flag exclude glob|flag exclude glob",
    })
    void Same_Path_Winner_Follows_Exact_Then_Layer_Then_Restrictiveness(String a, String b, String winner) {
        for (List<Candidate> order : List.of(List.of(c(a), c(b)), List.of(c(b), c(a)))) {
            Specificity.Decision d = Specificity.decide(order).getFirst();
            assertThat(d.winner()).isEqualTo(c(winner));
            assertThat(d.overridden()).hasSize(1);
        }
    }
}
