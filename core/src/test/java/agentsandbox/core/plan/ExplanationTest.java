// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.Plan;
import agentsandbox.core.run.RunLayout;
import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The record a run leaves for {@code explain} inside: which entry decides a path, and its text form. */
class ExplanationTest {
    private static Explanation.Entry entry(String path, Explanation.Shows shows, Access access, Origin origin,
            String written, List<Explanation.Why> lost) {
        return new Explanation.Entry(Path.of(path), shows, null, new Explanation.Why(access, origin, written, true),
                lost);
    }

    private static final Origin BUILT_IN = new Origin(Layer.PRESET, "sandbox");

    private static Explanation sample() {
        Origin flags = new Origin(Layer.FLAG, "flags");
        return new Explanation(Path.of("/home/u/app"), Path.of("/home/u"),
                List.of(new Explanation.Config(Layer.GLOBAL, Path.of("/home/u/.config/agent-sandbox/config.json"),
                        "not found")),
                List.of(entry("/", Explanation.Shows.ROOT, Access.RO, BUILT_IN, "/", List.of()),
                        entry("/home/u/app", Explanation.Shows.HOST, Access.RW, Origin.preset("@base"), "/home/u/app",
                                List.of()),
                        entry("/home/u/app/a\tb\nc\\d", Explanation.Shows.UNREADABLE_FILE, Access.EXCLUDE, flags,
                                "a\tb\nc\\d", List.of(new Explanation.Why(Access.RW, flags, "a*", false))),
                        // a later mount covers an earlier, deeper one
                        entry("/home/u/app/x/y", Explanation.Shows.HOST, Access.RW, flags, "x/y", List.of()),
                        entry("/home/u/app/x", Explanation.Shows.OWN_STATE, Access.EXCLUDE, BUILT_IN, "x",
                                List.of())));
    }

    @Test
    void The_Last_Entry_At_Or_Above_A_Path_Decides_It() {
        Explanation e = sample();
        assertThat(e.decide(Path.of("/usr/bin")).shows()).isEqualTo(Explanation.Shows.ROOT);
        assertThat(e.decide(Path.of("/home/u/app/src")).access()).isEqualTo(Access.RW);
        assertThat(e.decide(Path.of("/home/u/app/x/y/z")).shows()).isEqualTo(Explanation.Shows.OWN_STATE);
    }

    @Test
    void Text_Form_Reads_Back_Equal_Whatever_The_Names_Hold() {
        Explanation e = sample();
        assertThat(Explanation.parse(e.format())).isEqualTo(e);
        assertThat(e.format()).startsWith("agent-sandbox policy 1\n").doesNotContain("a\tb");
    }

    @Test
    void A_Record_That_Is_Not_One_Is_Refused_With_Its_Line() {
        String good = sample().format();
        assertThatThrownBy(() -> Explanation.parse("agent-sandbox policy 2\n")).hasMessageContaining("line 1");
        assertThatThrownBy(() -> Explanation.parse(good + "entry\t/x\n")).hasMessageContaining("line 11: 'entry' has 2 fields");
        assertThatThrownBy(() -> Explanation.parse(good.replace("\tro\tpreset", "\tmaybe\tpreset")))
                .hasMessageContaining("unknown access");
        assertThatThrownBy(() -> Explanation.parse(good + "over\trw\tflag\tflags\tx\\q\texact\n"))
                .hasMessageContaining("unknown escape");
        assertThatThrownBy(() -> Explanation.parse("agent-sandbox policy 1\nworkdir\t/a\n"))
                .hasMessageContaining("incomplete");
    }

    @Test
    void A_Plan_Records_Every_Decision_Also_Those_Without_A_Mount(@org.junit.jupiter.api.io.TempDir Path tmp) {
        TestWorld w = new TestWorld(tmp);
        w.file("home/notes/a.txt");
        Plan p = w.plan(w.env(), TestWorld.flags().ro("~/notes").build());
        Explanation e = p.explanation();
        Explanation.Entry notes = e.decide(w.home.resolve("notes/a.txt"));
        // ro under the ro home needs no mount, but it is the rule that decides
        assertThat(notes.why().origin().layer()).isEqualTo(Layer.FLAG);
        assertThat(notes.why().written()).isEqualTo("~/notes");
        assertThat(e.decide(Path.of("/tmp/x")).shows()).isEqualTo(Explanation.Shows.PRIVATE_TMP);
        assertThat(e.decide(Inside.POLICY).shows()).isEqualTo(Explanation.Shows.RUNTIME);
        assertThat(e.decide(RunLayout.stateDir(w.env()).resolve("run")).shows()).isEqualTo(Explanation.Shows.OWN_STATE);
        assertThat(p.mounts()).anyMatch(m -> m.target().equals(Inside.POLICY) && m.access() == Access.RO);
    }
}
