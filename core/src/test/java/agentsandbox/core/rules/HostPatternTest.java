// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class HostPatternTest {
    @Test
    void Names_And_Globs_Are_Kept_In_Lower_Case_Without_The_Trailing_Dot() {
        assertThat(HostPattern.validate("Registry.Example.ORG.")).isEqualTo("registry.example.org");
        assertThat(HostPattern.validate("*.example.org")).isEqualTo("*.example.org");
        assertThat(HostPattern.validate("_dmarc.example-1.org")).isEqualTo("_dmarc.example-1.org");
        assertThat(HostPattern.validate("localhost")).isEqualTo("localhost");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "http://x|a URL",
        "a b|' ' is not a letter",
        "*|would allow every host",
        "''|empty",
        "1.2.3.4|an IP address",
        "0x7f.1|an IP address",
        "127.1|an IP address",
        "::1|':' is not a letter",
        "[::1]|'[' is not a letter",
        "example.org:443|':' is not a letter",
        "a.*.org|only stands as the whole first part",
        "*example.org|only stands as the whole first part",
        "**.example.org|only stands as the whole first part",
        "a..b|1 to 63 characters",
        ".|1 to 63 characters",
        "-a.org|no part starts or ends with -",
        "example.org/path|'/' is not a letter",
    })
    void What_Is_No_Host_Name_Says_Why_In_One_Line(String entry, String why) {
        assertThatThrownBy(() -> HostPattern.validate(entry)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(why).hasMessageNotContaining("\n");
    }

    @Test
    void A_Control_Character_Is_Named_Not_Printed() {
        assertThatThrownBy(() -> HostPattern.validate("a\u001b[31m.org")).hasMessageContaining("\\u001b")
                .hasMessageNotContaining("\u001b");
    }

    @Test
    void Too_Long_A_Name_Or_Label_Is_Refused() {
        assertThatThrownBy(() -> HostPattern.validate("a".repeat(64) + ".org")).hasMessageContaining("63");
        String name = ("a".repeat(63) + ".").repeat(4);
        assertThatThrownBy(() -> HostPattern.validate(name + "org")).hasMessageContaining("253");
    }

    @ParameterizedTest
    @ValueSource(strings = {"example.org", "EXAMPLE.org.", "a.example.org", "a.b.example.org", "other.net"})
    void Listed_Names_And_Names_Below_A_Glob_Are_Allowed(String host) {
        assertThat(HostPattern.allowed(List.of("example.org", "*.example.org", "other.net"), host)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"badexample.org", "example.org.evil.net", "x.other.net", "org", "", ".", "1.2.3.4"})
    void Other_Names_Are_Not(String host) {
        assertThat(HostPattern.allowed(List.of("example.org", "*.example.org", "other.net"), host)).isFalse();
    }

    @Test
    void A_Glob_Does_Not_Name_The_Domain_Itself() {
        assertThat(HostPattern.allowed(List.of("*.example.org"), "example.org")).isFalse();
    }

    @Test
    void Lists_Add_Up_Across_Layers_And_Only_A_Second_List_Loosens() {
        PolicyLayer global = PolicyLayer.builder(Layer.GLOBAL, "global").allowHost("example.org").build();
        PolicyLayer project = PolicyLayer.builder(Layer.PROJECT, "project").allowHost("*.example.net").build();
        Policy both = Policy.builder().layer(global).layer(project).build();
        assertThat(both.allowHosts()).containsExactly("example.org", "*.example.net");
        // no path rules in the layer: its paths are not resolved, so no environment is needed
        assertThat(Loosening.of(both, project, null)).containsExactly(
                "network.allow [*.example.net] (more hosts than [example.org])");
        Policy first = Policy.builder().layer(project).build();
        assertThat(Loosening.of(first, project, null)).isEmpty();
    }
}
