// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where no native method is registered (a test's JVM): the JDK's digest answers SHA-1 on the
 * part of the array asked for, and the JDK's comparison where two ranges differ; no directory
 * is pinned, and no program is run. The native methods are checked by
 * the launcher's own tests (launcher/test/launcher_test.c) and by the built image's
 * end-to-end tests (every apply, and GitViewIT's renamed nested repository).
 */
class NativeTest {
    @TempDir
    Path dir;

    @Test
    void Without_The_Native_Methods_The_JDK_Answers_And_Nothing_Is_Pinned() throws Exception {
        byte[] data = "abcdef".getBytes(StandardCharsets.US_ASCII);
        assertThat(HexFormat.of().formatHex(Native.sha1(data, 3))).isEqualTo("a9993e364706816aba3e25717850c26c9cd0d89d");
        assertThat(Native.isNative()).isFalse();
        byte[] other = "abcxef".getBytes(StandardCharsets.US_ASCII);
        assertThat(Native.mismatch(data, 0, other, 0, 6)).isEqualTo(3);
        assertThat(Native.mismatch(data, 4, other, 4, 2)).isEqualTo(-1);
        assertThat(Native.mismatch(data, 1, other, 0, 3)).isEqualTo(0);
        assertThat(Native.pinned(dir)).isNull();
        // the caller runs the program the JDK's way
        assertThat(Native.run(java.util.List.of("true"), java.util.Map.of("PATH", "/usr/bin:/bin"), dir, 1000))
                .isNull();
    }
}
