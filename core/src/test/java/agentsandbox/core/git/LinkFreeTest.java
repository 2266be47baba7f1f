// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Directories of a git dir opened through no link, for the apply's writes. */
class LinkFreeTest {
    @TempDir
    Path dir;

    @Test
    void Missing_Directories_Are_Made_And_Writes_Land_In_Them() throws Exception {
        Path root = Files.createDirectories(dir.resolve("git"));
        try (SecureDirectoryStream<Path> d = LinkFree.open(root, "logs/refs/heads/feature")) {
            d.newByteChannel(Path.of("x"), Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)).close();
        }
        assertThat(root.resolve("logs/refs/heads/feature/x")).isRegularFile();
    }

    /** A directory on the way that is a link (to another repository's refs, say) fails the open: nothing is written there. */
    @Test
    void A_Link_On_The_Way_Fails_The_Open() throws Exception {
        Path root = Files.createDirectories(dir.resolve("git"));
        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere/heads"));
        Files.createDirectories(root.resolve("refs"));
        Files.createSymbolicLink(root.resolve("refs/heads"), elsewhere);
        assertThatThrownBy(() -> LinkFree.open(root, "refs/heads")).isInstanceOf(java.io.IOException.class);
        assertThatThrownBy(() -> LinkFree.open(root, "refs/heads/deeper")).isInstanceOf(java.io.IOException.class);
        assertThat(elsewhere.resolve("deeper")).doesNotExist();
        assertThat(Files.isSymbolicLink(root.resolve("refs/heads"))).isTrue();
        assertThat(Files.exists(root.resolve("refs/heads"), LinkOption.NOFOLLOW_LINKS)).isTrue();
    }

    /**
     * A file written whole into a directory made where missing, with the mode asked (less the
     * umask) and no temporary file left; a link on the way fails it, with nothing written
     * where the link leads. (A test's JVM has none of the tool's native methods: this is the
     * JDK's way, launcher_test.c tests the native one with the same cases.)
     */
    @Test
    void A_File_Is_Written_Whole_Below_The_Root_And_Never_Through_A_Link() throws Exception {
        Path root = Files.createDirectories(dir.resolve("git"));
        LinkFree.replace(root, "objects/ab", "tmp_obj_", "hello".getBytes(), "cdef", 0444);
        Path object = root.resolve("objects/ab/cdef");
        assertThat(object).hasContent("hello");
        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(object)))
                .isEqualTo("r--r--r--");
        try (var files = Files.list(object.getParent())) {
            assertThat(files.toList()).containsExactly(object);
        }
        LinkFree.replace(root, "", "index.t", "one".getBytes(), "index", 0666);
        LinkFree.replace(root, "", "index.t", "two!".getBytes(), "index", 0666);
        assertThat(root.resolve("index")).hasContent("two!");

        Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
        Files.createSymbolicLink(root.resolve("objects/cd"), elsewhere);
        assertThatThrownBy(() -> LinkFree.replace(root, "objects/cd", "tmp_obj_", "x".getBytes(), "ef", 0444))
                .isInstanceOf(java.io.IOException.class);
        try (var files = Files.list(elsewhere)) {
            assertThat(files.toList()).isEmpty();
        }
    }
}
