// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The listing of the work tree for git dirs, the JDK's way (a test's JVM has no native
 * methods; the native listing and its watches are checked by launcher/test/launcher_test.c
 * and by GitViewIT's deep git dirs on the built image).
 */
class TreeGitDirsTest {
    @TempDir
    Path dir;

    @Test
    void Every_Directory_Holding_A_Head_Is_Found_Through_No_Link_And_Past_The_Skipped_Ones() throws Exception {
        Path top = Files.createDirectories(dir.resolve("project"));
        Files.createDirectories(top.resolve(".git"));
        Files.writeString(top.resolve(".git/HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(top.resolve("src/vendor/x/.git"));
        Files.writeString(top.resolve("src/vendor/x/.git/HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(top.resolve("src/lib/main"));
        Files.createSymbolicLink(top.resolve("src/lib/HEAD"), Path.of("refs/heads/main")); // git takes a link too
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.createSymbolicLink(top.resolve("src/away"), outside);

        TreeGitDirs tree = new TreeGitDirs(top, List.of(top.resolve(".git"), dir.resolve("elsewhere")));
        assertThat(tree.look()).containsExactlyInAnyOrder(top.resolve("src/vendor/x/.git"), top.resolve("src/lib"));
        assertThat(tree.told()).isFalse(); // no native methods: each look lists the tree again
        assertThat(tree.bound()).isNull();

        // made since the last look, and gone since
        Files.createDirectories(top.resolve("deep/er/bare"));
        Files.writeString(top.resolve("deep/er/bare/HEAD"), "ref: refs/heads/main\n");
        Files.delete(top.resolve("src/lib/HEAD"));
        assertThat(tree.look()).containsExactlyInAnyOrder(top.resolve("src/vendor/x/.git"),
                top.resolve("deep/er/bare"));
    }
}
