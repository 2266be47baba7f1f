// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.util.ArrayList;
import java.util.List;

/** Coverage-guided fuzzing of the flag parser (Jazzer); see {@link JsoncFuzzTest}. */
class FlagsFuzzTest {
    private static final String[] WORDS = {"--", "-C", "-c", "--cwd", "--config", "--network", "--docker",
        "--dry-run", "--debug", "--ro", "--rw", "--exclude", "--cmd", "check", "--check", "-q", "-h", "-v",
        "--help", "--version", "=", "true", "false", "git=@git", "rm=false"};

    @FuzzTest(maxDuration = "20s")
    void Any_Argument_List_Parses_Or_Is_A_Usage_Error(FuzzedDataProvider data) {
        List<String> argv = new ArrayList<>();
        int n = data.consumeInt(0, 12);
        for (int i = 0; i < n; i++) {
            argv.add(data.consumeBoolean() ? data.pickValue(WORDS) + data.consumeString(8) : data.consumeString(24));
        }
        try {
            Args a = Flags.parse(argv);
            assertThat(a.mode()).isNotNull();
            if (a.mode() == Args.Mode.RUN) {
                assertThat(a.command()).isNotEmpty();
            }
        } catch (UsageException e) {
            assertThat(e.oneLine()).isNotBlank();
        }
    }
}
