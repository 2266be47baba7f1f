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
}
