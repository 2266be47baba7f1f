// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import static org.assertj.core.api.Assertions.assertThat;

import agentsandbox.core.Environment;
import agentsandbox.core.Plan;
import agentsandbox.core.TestWorld;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Which directories of the home a plan sees through copy-on-write views, and what stays the host's. */
class HomeViewsTest {
    @TempDir
    Path tmp;

    private static Environment env(TestWorld w, Map<String, String> vars) {
        return new Environment(w.home, w.project, vars, w.tmp, 1000, "Linux",
                new Environment.Installation(w.file("app/bin/agent-sandbox"), w.root.resolve("app")));
    }

    @Test
    void Granted_Directories_Are_Views_Over_The_Hosts_Read_Only_Ones_And_No_Host_File_Below_Is_Writable()
            throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".cache"));
        Files.createDirectories(w.home.resolve(".claude"));
        Files.writeString(w.home.resolve(".claude/.claude.json"), "{}");
        Files.createSymbolicLink(w.home.resolve(".claude.json"), Path.of(".claude/.claude.json"));
        Files.createDirectories(w.home.resolve(".local/share/agent-sandbox/homes"));

        Plan p = w.plan(env(w, Map.of("PATH", "/usr/bin:/bin")));

        assertThat(p.homeViews()).extracting(HomeViews.View::rel).contains(".cache", ".claude");
        String line = p.shellLine();
        assertThat(line).doesNotContain("--bind-try " + w.home.resolve(".cache"))
                .doesNotContain("--bind-try " + w.home.resolve(".claude"))
                .doesNotContain("--bind " + w.home.resolve(".claude"))
                .contains(w.home.resolve(".local/share/agent-sandbox/homes") + " /run/agent-sandbox-homes")
                .contains("--cap-add CAP_SYS_ADMIN");
        assertThat(String.join("\n", p.notes())).contains("home: " + w.home.resolve(".cache")
                + " is a copy-on-write view inside");
    }

    @Test
    void A_Granted_Single_File_Outside_Any_View_Is_Read_Only() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".claude"));
        Files.writeString(w.home.resolve(".claude.json"), "{}");

        Plan p = w.plan(env(w, Map.of("PATH", "/usr/bin:/bin", "CLAUDE_CONFIG_DIR", w.home.resolve("x").toString())));

        assertThat(p.shellLine()).doesNotContain("--bind-try " + w.home.resolve(".claude.json"))
                .doesNotContain("--bind " + w.home.resolve(".claude.json"));
        assertThat(String.join("\n", p.notes())).contains(w.home.resolve(".claude.json")
                + " is read-only: a single file has no copy-on-write view");
    }

    @Test
    void The_Fallback_Grants_The_Hosts_Directories_Writable() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Files.createDirectories(w.home.resolve(".cache"));

        Plan p = w.plan(env(w, Map.of("PATH", "/usr/bin:/bin", HomeLayers.OFF_VARIABLE, "off")));

        assertThat(p.homeViews()).isEmpty();
        assertThat(p.shellLine()).contains("--bind-try " + w.home.resolve(".cache") + " " + w.home.resolve(".cache"))
                .doesNotContain("/run/agent-sandbox-homes");
        assertThat(String.join("\n", p.notes())).contains("home: no copy-on-write views (AGENT_SANDBOX_HOME_VIEW=off)");
    }
}
