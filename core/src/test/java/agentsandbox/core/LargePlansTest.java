// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.PathPattern;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Rule;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What makes rules that match thousands of files cheap to plan (globs with one star
 * matched without the regex engine, parents resolved once, per-path notes only for
 * --debug) must not change what is planned.
 */
class LargePlansTest {
    @TempDir
    Path tmp;

    private static List<String> names(List<Path> paths) {
        List<String> out = new ArrayList<>();
        for (Path p : paths) {
            out.add(p.getFileName().toString());
        }
        return out;
    }

    @Test
    void Globs_With_One_Star_Match_What_The_Glob_Says() {
        TestWorld w = new TestWorld(tmp);
        for (String n : List.of("a.log", ".log", "log", "x.log.gz", ".env", ".env.local", "env", "ab", "axb", "a",
                "b", "a*b", "A.LOG")) {
            w.file("home/project/d/" + n);
        }
        Path d = w.project.resolve("d");
        assertThat(names(PathPattern.parse("d/*").expand(w.home, w.project))).hasSize(13);
        assertThat(names(PathPattern.parse("d/*.log").expand(w.home, w.project))).containsExactly(".log", "a.log");
        assertThat(names(PathPattern.parse("d/.env*").expand(w.home, w.project))).containsExactly(".env", ".env.local");
        assertThat(names(PathPattern.parse("d/a*b").expand(w.home, w.project))).containsExactly("a*b", "ab", "axb");
        assertThat(names(PathPattern.parse("d/a*").expand(w.home, w.project)))
                .containsExactly("a", "a*b", "a.log", "ab", "axb");
        // not one plain star: the regex, with the same meaning
        assertThat(names(PathPattern.parse("d/*.log*").expand(w.home, w.project)))
                .containsExactly(".log", "a.log", "x.log.gz");
        assertThat(names(PathPattern.parse("d/a\\*b").expand(w.home, w.project))).containsExactly("a*b");
        assertThat(names(PathPattern.parse("d/?*").expand(w.home, w.project))).hasSize(13);
        assertThat(d).isDirectory();
    }

    @Test
    void Matches_Below_A_Linked_Directory_Resolve_To_Their_Real_Paths() throws IOException {
        TestWorld w = new TestWorld(tmp);
        w.file("elsewhere/data/one.txt");
        w.file("elsewhere/data/two.txt");
        w.file("elsewhere/target.txt");
        Files.createSymbolicLink(w.project.resolve("linked"), w.root.resolve("elsewhere/data"));
        Files.createSymbolicLink(w.root.resolve("elsewhere/data/three.txt"), w.root.resolve("elsewhere/target.txt"));
        Plan p = w.plan(TestWorld.flags().ro("linked/*").build());
        List<Path> targets = new ArrayList<>();
        for (Mount m : p.mounts()) {
            targets.add(m.target());
        }
        assertThat(targets).contains(w.root.resolve("elsewhere/data/one.txt"), w.root.resolve("elsewhere/data/two.txt"),
                w.root.resolve("elsewhere/target.txt"));
        assertThat(targets).doesNotContain(w.project.resolve("linked/one.txt"), w.root.resolve("elsewhere/data/three.txt"));
    }

    @Test
    void Planning_Without_Per_Path_Notes_Makes_The_Same_Sandbox() throws IOException {
        TestWorld w = new TestWorld(tmp);
        for (int i = 0; i < 50; i++) {
            w.file("home/project/logs/" + i + ".log");
            w.file("home/project/src/m" + (i % 5) + "/f" + i + ".txt");
        }
        w.dir("home/project/logs/sub.log");
        w.file("home/project/.env");
        Files.createSymbolicLink(w.project.resolve("logs/link.log"), w.project.resolve(".env"));
        Policy.Builder b = Policy.builder();
        b.layer(TestWorld.flags().exclude("logs/*.log").ro("src/*/f1*.txt").rw("src/m2").exclude("src/*").build());
        Policy policy = b.build();
        Plan detailed = Sandbox.plan(policy, w.env(), List.of("true"), true);
        Plan quiet = Sandbox.plan(policy, w.env(), List.of("true"), false);
        assertThat(withoutRunDir(quiet)).isEqualTo(withoutRunDir(detailed));
        assertThat(quiet.mounts().size()).isEqualTo(detailed.mounts().size()).isGreaterThan(50);
        assertThat(String.join("\n", detailed.notes())).contains("resolve exclude logs/*.log");
        assertThat(String.join("\n", quiet.notes())).doesNotContain("resolve exclude logs/*.log");
    }

    /**
     * A glob with thousands of matches has their lookups shared by two threads: each
     * match still gets its own kind (directory or not) and links resolve.
     */
    @Test
    void Thousands_Of_Matches_Are_Each_Looked_Up_As_Themselves() throws IOException {
        TestWorld w = new TestWorld(tmp);
        int files = Resolver.SHARED_LOOKUPS + 7;
        for (int i = 0; i < files; i++) {
            w.file("home/project/big/f" + i);
        }
        for (int i = 0; i < 5; i++) {
            w.dir("home/project/big/d" + (i * 997));
        }
        w.file("home/project/.env");
        Files.createSymbolicLink(w.project.resolve("big/zz-link"), w.project.resolve(".env"));
        List<Candidate> found = new Resolver(w.env(), new ArrayList<>(), java.util.Set.of(), List.of(), false)
                .resolve(List.of(Rule.pattern("big/*", Access.EXCLUDE, new Origin(Layer.FLAG, "flags"))));

        assertThat(found).hasSize(files + 5 + 1);
        Path big = w.project.resolve("big").toRealPath();
        for (Candidate c : found) {
            String name = c.path().getFileName().toString();
            if (c.path().startsWith(big)) {
                assertThat(c.directory()).as(name).isEqualTo(name.startsWith("d"));
            } else {
                assertThat(c.path()).isEqualTo(w.project.resolve(".env").toRealPath());
                assertThat(c.directory()).as("a link's target is not looked at as the link").isNull();
            }
        }
    }

    private static List<String> withoutRunDir(Plan p) {
        List<String> out = new ArrayList<>();
        for (String a : p.argv()) {
            out.add(a.replace(p.runtimeDir().toString(), "RUN"));
        }
        return out;
    }
}
