// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import agentsandbox.core.Environment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GitViewsTest {
    @TempDir
    Path dir;

    private Environment env(String release, Map<String, String> variables, boolean installed) throws IOException {
        Path procSys = Files.createDirectories(dir.resolve("proc-sys/kernel"));
        Files.writeString(procSys.resolve("osrelease"), release + "\n");
        Environment.Installation installation = installed
                ? new Environment.Installation(dir.resolve("launcher"), dir.resolve("app"), null) : null;
        return new Environment(dir, dir, variables, dir, 1000, "Linux", installation, dir.resolve("proc-sys"));
    }

    @Test
    void Kernel_Releases_Are_Read_By_Major_And_Minor() {
        assertThat(GitViews.atLeast("5.11.0", 5, 11)).isTrue();
        assertThat(GitViews.atLeast("6.1.0-13-amd64", 5, 11)).isTrue();
        assertThat(GitViews.atLeast("5.10.199-1", 5, 11)).isFalse();
        assertThat(GitViews.atLeast("4.19", 5, 11)).isFalse();
        assertThat(GitViews.atLeast("6", 5, 11)).isTrue();
        assertThat(GitViews.atLeast("x.y", 5, 11)).isFalse();
        assertThat(GitViews.atLeast(null, 5, 11)).isFalse();
    }

    @Test
    void The_View_Needs_The_Launcher_A_Kernel_That_Allows_It_And_A_Run_Outside_Any_Sandbox() throws IOException {
        assertThat(GitViews.unavailable(env("6.1.0", Map.of(), true), false)).isNull();
        assertThat(GitViews.unavailable(env("5.10.0", Map.of(), true), false)).contains("5.10.0", "5.11");
        assertThat(GitViews.unavailable(env("6.1.0", Map.of(), false), false)).contains("no launcher");
        assertThat(GitViews.unavailable(env("6.1.0", Map.of(), true), true)).contains("inside another sandbox");
        assertThat(GitViews.unavailable(env("6.1.0", Map.of("AGENT_SANDBOX_GIT_VIEW", "off"), true), false))
                .contains("AGENT_SANDBOX_GIT_VIEW=off");
    }

    @Test
    void The_Repository_s_Common_Dir_Is_The_View_And_The_Notes_Say_Which_Mode() throws IOException {
        Path common = Files.createDirectories(dir.resolve("p/.git"));
        GitLayout layout = GitLayout.discover(dir.resolve("p")).orElse(null);
        List<String> notes = new ArrayList<>();
        if (layout == null) {
            Files.writeString(common.resolve("HEAD"), "ref: refs/heads/main\n");
            layout = GitLayout.discover(dir.resolve("p")).orElseThrow();
        }
        assertThat(GitViews.of(env("6.1.0", Map.of(), true), Optional.of(layout), false, notes))
                .containsExactly(layout.commonDir());
        assertThat(notes).singleElement().asString().contains("copy-on-write view");
        notes.clear();
        assertThat(GitViews.of(env("6.1.0", Map.of(), true), Optional.of(layout), true, notes)).isEmpty();
        assertThat(notes).singleElement().asString().contains("no copy-on-write view", "path by path");
        assertThat(GitViews.of(env("6.1.0", Map.of(), true), Optional.empty(), false, notes)).isEmpty();
    }

    /**
     * More repositories right below the project than there are views: the oldest git dirs
     * get them, so a clone of the user's made after the others gets none. Repositories an
     * earlier run's watch saw a sandbox make (directories renamed into repositories keep
     * their birth time) come after every other, and the user's clone has its view again. A
     * record holds only while the repository's .git is the one recorded.
     */
    @Test
    void Repositories_A_Sandbox_Made_Come_After_The_User_s_In_The_Views() throws Exception {
        Path project = dir.resolve("p");
        Files.createDirectories(project.resolve(".git"));
        Files.writeString(project.resolve(".git/HEAD"), "ref: refs/heads/main\n");
        List<Path> planted = new ArrayList<>();
        for (int i = 0; i < GitViews.MAX + 5; i++) {
            Path repo = project.resolve("old" + i);
            Files.createDirectories(repo.resolve(".git"));
            Files.writeString(repo.resolve(".git/HEAD"), "ref: refs/heads/main\n");
            planted.add(repo);
        }
        Thread.sleep(20); // born after every other one
        Path mine = project.resolve("mine");
        Files.createDirectories(mine.resolve(".git"));
        Files.writeString(mine.resolve(".git/HEAD"), "ref: refs/heads/main\n");
        GitLayout layout = GitLayout.discover(project).orElseThrow();
        Path state = Files.createDirectories(dir.resolve("state"));
        Path runs = Files.createDirectories(state.resolve("run"));
        Environment env = new Environment(dir, project, Map.of(), dir, 1000, "Linux",
                new Environment.Installation(dir.resolve("launcher"), dir.resolve("app"), null), views());

        List<Path> before = GitViews.of(env, Optional.of(layout), null, new ArrayList<>(),
                GitViews.look(env, Optional.of(layout), false, runs, ""));
        assertThat(before).hasSize(GitViews.MAX).doesNotContain(mine.resolve(".git"));

        MadeRepositories.record(state, planted);
        List<Path> after = GitViews.of(env, Optional.of(layout), null, new ArrayList<>(),
                GitViews.look(env, Optional.of(layout), false, runs, ""));
        assertThat(after).hasSize(GitViews.MAX).contains(mine.resolve(".git"));
        assertThat(after.get(1)).isEqualTo(mine.resolve(".git"));

        assertThat(MadeRepositories.made(state, planted.get(0))).isTrue();
        assertThat(MadeRepositories.made(state, mine)).isFalse();
        // another .git at a recorded path (the user removed the sandbox's, made one of their own)
        Path replaced = planted.get(0).resolve(".git");
        Files.move(replaced, dir.resolve("gone"));
        Files.createDirectories(replaced);
        assertThat(MadeRepositories.made(state, planted.get(0))).isFalse();
    }

    private Path views() throws IOException {
        Path procSys = Files.createDirectories(dir.resolve("proc-sys/kernel"));
        Files.writeString(procSys.resolve("osrelease"), "6.1.0\n");
        return dir.resolve("proc-sys");
    }
}
