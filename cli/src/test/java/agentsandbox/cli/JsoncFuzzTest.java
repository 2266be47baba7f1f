// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Layer;
import agentsandbox.core.SandboxException;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.file.Path;

/**
 * Coverage-guided fuzzing of the config reader (Jazzer). Without {@code JAZZER_FUZZ=1}
 * these run once per input kept under {@code src/test/resources/.../JsoncFuzzTestInputs}
 * (crashes found earlier become such inputs); {@code scripts/fuzz.sh} fuzzes them.
 */
class JsoncFuzzTest {
    private static final Path FILE = Path.of("/fuzz/.agent-sandbox.jsonc");

    @FuzzTest(maxDuration = "20s")
    void Any_Text_Parses_Or_Fails_With_A_Position(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        try {
            Jsonc.parse(text);
        } catch (Jsonc.SyntaxError e) {
            assertThat(e.getMessage()).isNotBlank();
            assertThat(e.line).isPositive();
            assertThat(e.column).isPositive();
        }
    }

    @FuzzTest(maxDuration = "20s")
    void Any_Config_Bytes_Load_Or_Fail_With_One_Clean_Line(byte[] bytes) {
        try {
            ConfigReader.parse(FILE, bytes, Layer.PROJECT);
        } catch (ConfigException e) {
            assertThat(e.oneLine()).startsWith(FILE + ":").doesNotContain("\n");
        } catch (SandboxException e) {
            throw new AssertionError("config errors must be ConfigExceptions naming the file", e);
        }
    }
}
