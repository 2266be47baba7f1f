// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PathPatternTest {
    @TempDir
    Path tmp;

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "src/[abc|unclosed [",
        "a/**/b|there is no **",
        "**|there is no **",
        "trailing\\|trailing backslash",
        "a]b|] without [",
        "x[z-a]|the range z-a is backwards",
        "x[,-\"]|the range ,-\" is backwards",
    })
    void Rejects_Invalid_Globs_With_A_Message_Naming_The_Problem(String pattern, String message) {
        assertThatThrownBy(() -> PathPattern.parse(pattern))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .hasMessageContaining(pattern);
    }

    @Test
    void Rejects_Empty_Pattern() {
        assertThatThrownBy(() -> PathPattern.parse("")).hasMessageContaining("empty");
    }

    @Test
    void Star_Matches_Within_One_Segment_Only() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/packages/a/biome.json");
        w.file("home/project/packages/b/biome.json");
        w.file("home/project/packages/b/deeper/biome.json");
        assertThat(PathPattern.parse("packages/*/biome.json").expand(w.home, w.project))
                .containsExactly(w.project.resolve("packages/a/biome.json"), w.project.resolve("packages/b/biome.json"));
    }

    @Test
    void Star_Also_Matches_Hidden_Names() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/config/.hidden/secrets.json");
        w.file("home/project/config/prod/secrets.json");
        assertThat(PathPattern.parse("config/*/secrets.json").expand(w.home, w.project)).hasSize(2);
    }

    @Test
    void Question_Mark_And_Classes_Match_One_Character() {
        TestWorld w = new TestWorld(tmp);
        for (String n : new String[] {"a1", "b1", "c1", "ab"}) {
            w.file("home/project/" + n);
        }
        assertThat(PathPattern.parse("?1").expand(w.home, w.project)).hasSize(3);
        assertThat(PathPattern.parse("[ab]1").expand(w.home, w.project)).hasSize(2);
        assertThat(PathPattern.parse("[!ab]1").expand(w.home, w.project))
                .containsExactly(w.project.resolve("c1"));
        assertThat(PathPattern.parse("[a-b]?").expand(w.home, w.project)).hasSize(3);
    }

    @Test
    void Tilde_Is_Home_And_Absolute_Is_As_Written_And_Relative_Is_Against_Workdir() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/.aws/credentials");
        w.file("home/project/.env");
        assertThat(PathPattern.parse("~/.aws").expand(w.home, w.project)).containsExactly(w.home.resolve(".aws"));
        assertThat(PathPattern.parse("~").expand(w.home, w.project)).containsExactly(w.home);
        assertThat(PathPattern.parse(".env").expand(w.home, w.project)).containsExactly(w.project.resolve(".env"));
        assertThat(PathPattern.parse(w.home + "/.aws/credentials").expand(w.home, w.project))
                .containsExactly(w.home.resolve(".aws/credentials"));
        assertThat(PathPattern.parse("../.aws").expand(w.home, w.project)).containsExactly(w.home.resolve(".aws"));
    }

    @Test
    void Missing_Paths_And_Empty_Globs_Give_Nothing() {
        TestWorld w = new TestWorld(tmp);
        assertThat(PathPattern.parse("nope").expand(w.home, w.project)).isEmpty();
        assertThat(PathPattern.parse("nope/*/x").expand(w.home, w.project)).isEmpty();
        assertThat(PathPattern.parse("*.none").expand(w.home, w.project)).isEmpty();
    }

    @Test
    void Environment_Variables_Are_Not_Expanded() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/$HOME");
        assertThat(PathPattern.parse("$HOME").expand(w.home, w.project)).containsExactly(w.project.resolve("$HOME"));
    }

    @Test
    void Backslash_Makes_Glob_Characters_Literal() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/a*b");
        w.file("home/project/axb");
        PathPattern p = PathPattern.parse("a\\*b");
        assertThat(p.isGlob()).isFalse();
        assertThat(p.expand(w.home, w.project)).containsExactly(w.project.resolve("a*b"));
    }

    /** The quick sort of a listing's names gives exactly the order String.compareTo gives. */
    @Test
    void Names_Sort_As_Strings_Compare() {
        java.util.Random random = new java.util.Random(7);
        String alphabet = "ab.-_0129AZ~ é\u00ff\u4e2d";
        for (int round = 0; round < 200; round++) {
            int n = random.nextInt(300);
            java.util.Set<String> unique = new java.util.LinkedHashSet<>();
            boolean ascii = random.nextInt(4) != 0;
            while (unique.size() < n) {
                StringBuilder name = new StringBuilder(random.nextBoolean() ? "common-prefix" : "");
                int length = 1 + random.nextInt(9);
                for (int i = 0; i < length; i++) {
                    name.append(alphabet.charAt(random.nextInt(ascii ? alphabet.length() - 3 : alphabet.length())));
                }
                unique.add(name.toString());
            }
            List<String> names = new java.util.ArrayList<>(unique);
            List<String> expected = new java.util.ArrayList<>(names);
            expected.sort(null);
            PathPattern.sortNames(names);
            assertThat(names).as("round %d", round).isEqualTo(expected);
        }
        List<String> numbers = new java.util.ArrayList<>();
        for (int i = 20000; i >= 1; i--) {
            numbers.add(Integer.toString(i));
        }
        List<String> expected = new java.util.ArrayList<>(numbers);
        expected.sort(null);
        PathPattern.sortNames(numbers);
        assertThat(numbers).isEqualTo(expected);
    }
}
