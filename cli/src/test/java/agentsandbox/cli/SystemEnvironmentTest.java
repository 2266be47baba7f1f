// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SystemEnvironmentTest {

    @Test
    void Caller_Environment_Puts_Back_The_Java_Option_Variables_The_Launcher_Set_Aside() {
        Map<String, String> seen = Map.of(
                "PATH", "/bin",
                "AGENT_SANDBOX_CALLER_JAVA_TOOL_OPTIONS", "-Da=1",
                "AGENT_SANDBOX_CALLER__JAVA_OPTIONS", "",
                "AGENT_SANDBOX_CALLER_JDK_JAVA_OPTIONS", "--add-opens x/y=ALL-UNNAMED");

        assertThat(SystemEnvironment.callerEnvironment(seen)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "PATH", "/bin",
                "JAVA_TOOL_OPTIONS", "-Da=1",
                "_JAVA_OPTIONS", "",
                "JDK_JAVA_OPTIONS", "--add-opens x/y=ALL-UNNAMED"));
    }

    @Test
    void Caller_Environment_Is_Unchanged_When_Nothing_Was_Set_Aside() {
        Map<String, String> seen = Map.of("PATH", "/bin", "AGENT_SANDBOX_OTHER", "x");

        assertThat(SystemEnvironment.callerEnvironment(seen)).isEqualTo(seen);
    }

    @Test
    void Caller_Environment_Gives_Back_The_Callers_LC_ALL_Instead_Of_The_Launchers_UTF_8_Locale() {
        Map<String, String> had = Map.of("LC_ALL", "C.UTF-8", "AGENT_SANDBOX_CALLER_LC_ALL", "+C");
        Map<String, String> hadNone = Map.of("LC_ALL", "C.UTF-8", "AGENT_SANDBOX_CALLER_LC_ALL", "-");

        assertThat(SystemEnvironment.callerEnvironment(had)).isEqualTo(Map.of("LC_ALL", "C"));
        assertThat(SystemEnvironment.callerEnvironment(hadNone)).isEmpty();
    }

    @Test
    void The_User_Id_Is_The_One_The_Launcher_Passes_Else_The_Kernels() throws Exception {
        String fromProc = null;
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("Uid:")) {
                fromProc = line.substring(4).strip().split("\\s+")[0];
            }
        }
        String before = System.getProperty("agentsandbox.uid");
        try {
            System.clearProperty("agentsandbox.uid");
            assertThat(SystemEnvironment.uid()).isEqualTo(Integer.parseInt(fromProc));
            System.setProperty("agentsandbox.uid", "4242");
            assertThat(SystemEnvironment.uid()).isEqualTo(4242);
            // anything but a plain number is not the launcher's: the kernel's answer instead
            for (String bad : new String[] {"", "-1", "12a", "99999999999", "+5"}) {
                System.setProperty("agentsandbox.uid", bad);
                assertThat(SystemEnvironment.uid()).as(bad).isEqualTo(Integer.parseInt(fromProc));
            }
        } finally {
            if (before == null) {
                System.clearProperty("agentsandbox.uid");
            } else {
                System.setProperty("agentsandbox.uid", before);
            }
        }
    }
}
