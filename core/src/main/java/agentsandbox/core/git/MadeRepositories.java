// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * The repositories right below a project that a sandbox made: a {@code .git} that appeared,
 * or took another's place, while a run lasted (its live watch saw it, {@code GitLiveWatch}).
 * The views of a run go to at most {@link GitViews#MAX} git dirs, the repositories right
 * below first, oldest git dir first; a sandbox that turns old directories into repositories
 * (a rename keeps a directory's birth time) would otherwise push the user's own clones there
 * out of the views, and with the views their history's protection. Repositories remembered
 * here come after every other one.
 *
 * <p>A record is the {@code .git}'s identity (device and inode, which a rename keeps) and its
 * path, in agent-sandbox's state directory, which every sandbox sees empty and cannot rename
 * ({@code OwnState}): no sandbox can write, remove or forge one. One is looked up by name, so
 * any number of records costs a run nothing until its project has more repositories right
 * below than it has views.
 */
public final class MadeRepositories {
    private MadeRepositories() {}

    /** At most this many repositories are remembered from one run. */
    public static final int MAX_PER_RUN = 10_000;

    private static Path dir(Path stateDir) {
        return stateDir.resolve("made-repositories");
    }

    /** Remembers the repositories {@code repos} (their work trees, each with a {@code .git}) as a sandbox's. */
    public static void record(Path stateDir, List<Path> repos) {
        if (repos.isEmpty()) {
            return;
        }
        try {
            Path d = dir(stateDir);
            Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            int n = 0;
            for (Path repo : repos) {
                if (++n > MAX_PER_RUN) {
                    break;
                }
                String text = text(repo);
                if (text == null) {
                    continue; // gone meanwhile
                }
                Path record = d.resolve(name(text));
                if (Files.exists(record, LinkOption.NOFOLLOW_LINKS)) {
                    continue;
                }
                try {
                    agentsandbox.core.run.RunDir.createFile(record, "rw-------", text.getBytes(StandardCharsets.UTF_8));
                } catch (java.nio.file.FileAlreadyExistsException made) {
                    // recorded by a run that ended at the same moment
                }
            }
        } catch (IOException | RuntimeException e) {
            // not remembered: its repositories compete for views by age alone
        }
    }

    /** Whether repository {@code repo} (its work tree) is remembered as a sandbox's, as it is now. */
    public static boolean made(Path stateDir, Path repo) {
        String text = text(repo);
        if (text == null) {
            return false;
        }
        Path record = dir(stateDir).resolve(name(text));
        try {
            byte[] held = Files.readAllBytes(record);
            return new String(held, StandardCharsets.UTF_8).equals(text);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** A record's content for {@code repo} now: its {@code .git}'s identity and its path; null when it has none. */
    private static String text(Path repo) {
        try {
            BasicFileAttributes a = Files.readAttributes(repo.resolve(".git"), BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            Object key = a.fileKey();
            return key == null ? null : key + "\n" + repo + "\n";
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** A record's name: two hashes of its content (the content itself is compared on reading). */
    private static String name(String text) {
        int half = text.length() / 2;
        return Integer.toHexString(text.hashCode()) + "-" + Integer.toHexString(text.substring(half).hashCode());
    }
}
