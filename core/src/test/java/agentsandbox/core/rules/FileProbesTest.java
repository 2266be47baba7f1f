// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start asks the file system about hundreds of paths, most of them missing; the
 * cheap forms it asks with (no exception for a missing path) must answer exactly as the
 * forms they replace, for every kind of entry a home or a project holds.
 */
class FileProbesTest {
    @TempDir
    Path tmp;

    private List<Path> everyKind() throws IOException {
        Path dir = Files.createDirectory(tmp.resolve("dir"));
        Path file = Files.writeString(tmp.resolve("file"), "x");
        Path linkToDir = Files.createSymbolicLink(tmp.resolve("link-to-dir"), dir);
        Path linkToFile = Files.createSymbolicLink(tmp.resolve("link-to-file"), file);
        Path dangling = Files.createSymbolicLink(tmp.resolve("dangling"), tmp.resolve("nothing"));
        Path loop = Files.createSymbolicLink(tmp.resolve("loop"), tmp.resolve("loop"));
        Path missing = tmp.resolve("missing");
        Path belowMissing = tmp.resolve("missing/below");
        Path belowFile = tmp.resolve("file/below");
        Path belowLinkToDir = Files.createDirectory(dir.resolve("sub"));
        return List.of(dir, file, linkToDir, linkToFile, dangling, loop, missing, belowMissing, belowFile,
                linkToDir.resolve("sub"), belowLinkToDir);
    }

    @Test
    void Is_Real_Directory_Answers_As_IsDirectory_Without_Following_Links() throws IOException {
        for (Path p : everyKind()) {
            assertThat(Resolver.isRealDirectory(p)).as(p.toString())
                    .isEqualTo(Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS));
        }
        assertThat(Resolver.isRealDirectory(tmp.resolve("dir"))).isTrue();
        assertThat(Resolver.isRealDirectory(tmp.resolve("link-to-dir"))).isFalse();
    }

    @Test
    void Real_Path_Is_The_Resolved_Path_Or_Null_For_What_Does_Not_Resolve() throws IOException {
        for (Path p : everyKind()) {
            Path expected;
            try {
                expected = p.toRealPath();
            } catch (IOException e) {
                expected = null;
            }
            assertThat(Resolver.realPath(p)).as(p.toString()).isEqualTo(expected);
        }
        assertThat(Resolver.realPath(tmp.resolve("dangling"))).isNull();
        assertThat(Resolver.realPath(tmp.resolve("link-to-file"))).isEqualTo(tmp.resolve("file").toRealPath());
    }
}
