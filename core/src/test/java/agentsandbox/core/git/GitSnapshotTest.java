// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GitSnapshotTest {
    @TempDir
    Path dir;

    private Path file(Path p, String text) throws IOException {
        Files.createDirectories(p.getParent());
        return Files.writeString(p, text);
    }

    @Test
    void Copies_Everything_But_Locks_And_Object_Stores_Which_Stay_Empty() throws Exception {
        Path git = dir.resolve("git");
        file(git.resolve("HEAD"), "ref: refs/heads/main\n");
        file(git.resolve("refs/heads/main"), "a".repeat(40) + "\n");
        file(git.resolve("refs/heads/main.lock"), "b".repeat(40) + "\n");
        file(git.resolve("index.lock"), "");
        file(git.resolve("packed-refs"), "# pack-refs\n");
        Path hook = file(git.resolve("hooks/pre-commit"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        file(git.resolve("hooks/pre-commit.sample"), "#!/bin/sh\n");
        file(git.resolve("info/exclude.sample"), "kept: not a hook\n");
        Path index = file(git.resolve("index"), "DIRC");
        Files.setLastModifiedTime(index, FileTime.fromMillis(1_000_000_000_000L));
        file(git.resolve("objects/ab/cdef"), "object");
        file(git.resolve("lfs/objects/x"), "large");
        Files.createSymbolicLink(git.resolve("link"), Path.of("refs"));
        // a submodule's git dir: its objects are a store of their own; a linked worktree's is not a git dir
        file(git.resolve("modules/sub/HEAD"), "ref: refs/heads/main\n");
        file(git.resolve("modules/sub/objects/12/3456"), "object");
        file(git.resolve("modules/sub/config"), "[core]\n");
        file(git.resolve("worktrees/wt/HEAD"), "ref: refs/heads/wt\n");
        file(git.resolve("worktrees/wt/objects"), "not a directory");

        Path copy = dir.resolve("copy");
        assertThat(GitSnapshot.copy(git, copy)).containsExactlyInAnyOrder("objects", "lfs", "modules/sub/objects");

        assertThat(copy.resolve("refs/heads/main")).hasContent("a".repeat(40));
        assertThat(copy.resolve("refs/heads/main.lock")).doesNotExist();
        assertThat(copy.resolve("index.lock")).doesNotExist();
        assertThat(copy.resolve("packed-refs")).hasContent("# pack-refs");
        assertThat(Files.isExecutable(copy.resolve("hooks/pre-commit"))).isTrue();
        assertThat(copy.resolve("hooks/pre-commit.sample")).doesNotExist();
        assertThat(copy.resolve("info/exclude.sample")).exists();
        assertThat(Files.getLastModifiedTime(copy.resolve("index")).toMillis()).isEqualTo(1_000_000_000_000L);
        assertThat(Files.readSymbolicLink(copy.resolve("link"))).isEqualTo(Path.of("refs"));
        for (String store : new String[] {"objects", "lfs", "modules/sub/objects"}) {
            assertThat(copy.resolve(store)).isEmptyDirectory();
        }
        assertThat(copy.resolve("modules/sub/config")).hasContent("[core]");
        assertThat(copy.resolve("worktrees/wt/objects")).hasContent("not a directory");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(copy, LinkOption.NOFOLLOW_LINKS)))
                .isEqualTo("rwx------");
    }

    @Test
    void A_Git_Dir_Beyond_The_Limit_Is_Refused() throws Exception {
        Path git = dir.resolve("git");
        file(git.resolve("HEAD"), "ref: refs/heads/main\n");
        Files.createDirectories(git.resolve("objects"));
        file(git.resolve("logs/HEAD"), "x".repeat(600_000));
        file(git.resolve("logs/refs/heads/main"), "x".repeat(600_000));
        assertThatThrownBy(() -> GitSnapshot.copy(git, dir.resolve("copy"), 1 << 20)).isInstanceOf(IOException.class)
                .hasMessage("more than 1 MiB outside its objects");
    }
}
