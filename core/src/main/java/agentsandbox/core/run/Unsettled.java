// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Files a sandbox planted that the host could not move aside after its run, remembered
 * until the user deals with them: the next run refuses to start while one is still there
 * as it was left, instead of running beside it.
 *
 * <p>The same holds for what the check of the git metadata after a run could not look at
 * (a bound it reached, see {@code GitAftercheck}): the next run refuses until the user has
 * looked, with the reason that was recorded.
 *
 * <p>The records live in agent-sandbox's state directory, which every sandbox sees empty
 * and cannot rename ({@link OwnState}): no sandbox can write, remove or forge one.
 */
public final class Unsettled {
    private Unsettled() {}

    private static Path dir(Path stateDir) {
        return stateDir.resolve("unsettled");
    }

    /** Remembers that {@code file}, as {@code identity} says it is now, could not be moved aside. */
    public static void record(Path stateDir, Path file, String identity) {
        record(stateDir, file, identity, null);
    }

    /**
     * Remembers that {@code file}, as {@code identity} says it is now, must be looked at
     * before the next run, for {@code reason} (one line, said when that run refuses).
     */
    public static void record(Path stateDir, Path file, String identity, String reason) {
        try {
            Path d = dir(stateDir);
            Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            String text = identity + "\n" + file + "\n"
                    + (reason == null ? "" : reason.replace('\n', ' ') + "\n");
            Path record = d.resolve(Integer.toHexString(file.toString().hashCode()) + "-"
                    + Long.toHexString(System.nanoTime()));
            RunDir.createFile(record, "rw-------", text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the line printed after the run still says what to check
        }
    }

    /**
     * Refuses to start while a remembered file is still there as it was left; forgets the
     * records of files that were removed, moved or changed since (by the user, outside).
     *
     * @throws SandboxException naming the first such file and the fix
     */
    public static void check(Path stateDir) {
        Path d = dir(stateDir);
        if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (DirectoryStream<Path> records = Files.newDirectoryStream(d)) {
            for (Path record : records) {
                String[] lines = Files.readString(record, StandardCharsets.UTF_8).split("\n");
                if (lines.length >= 3 && !lines[0].isEmpty() && lines[0].equals(ToolHomes.identity(Path.of(lines[1])))) {
                    throw new SandboxException("an earlier run left something to look at: " + lines[2],
                            "look at " + lines[1] + "; this run starts once it has changed or is gone, or once you"
                            + " have removed " + record + " to say that you have looked");
                }
                if (lines.length >= 2 && !lines[0].isEmpty() && lines[0].equals(ToolHomes.identity(Path.of(lines[1])))) {
                    throw new SandboxException(lines[1] + " was written by a sandbox, and agent-sandbox could not move it"
                            + " aside after that run: tools outside would obey it",
                            "check it, then remove it or move it away yourself (it is not run again until you do)");
                }
                Files.deleteIfExists(record);
            }
        } catch (IOException e) {
            // an unreadable record directory: nothing a sandbox could have made
        }
    }
}
