// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.Environment;
import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateWatchTest {
    @TempDir
    Path tmp;

    @Test
    void A_State_Or_Config_Directory_Replaced_During_The_Run_Is_Moved_Aside() throws IOException {
        TestWorld w = new TestWorld(tmp);
        Environment env = new Environment(w.home, w.project, Map.of(), w.tmp, 1000, "Linux", null);
        Path state = Files.createDirectories(w.home.resolve(".local/state/agent-sandbox/trust"));
        Files.createDirectories(w.home.resolve(".config"));
        StateWatch watch = StateWatch.before(env);
        assertThat(watch.after()).as("nothing changed").isEmpty();

        // what a sandbox with the home writable can do: rename a parent, make its own
        Files.move(w.home.resolve(".local/state"), w.home.resolve(".local/state.x"));
        Files.createDirectories(state);
        Files.writeString(state.resolve("forged"), "trust me");
        Files.createDirectories(w.home.resolve(".config/agent-sandbox"));
        Files.writeString(w.home.resolve(".config/agent-sandbox/config.json"), "{}");

        List<String> lines = watch.after();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("state directory").contains("was replaced");
        assertThat(lines.get(1)).contains("global config directory").contains("was made");
        assertThat(w.home.resolve(".local/state/agent-sandbox")).doesNotExist();
        assertThat(w.home.resolve(".config/agent-sandbox")).doesNotExist();
        assertThat(w.home.resolve(".local/state.x/agent-sandbox/trust")).isDirectory();
    }
}
