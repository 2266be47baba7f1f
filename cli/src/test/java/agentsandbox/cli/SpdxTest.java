// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every source file of the repository names its license in its first lines, as
 * {@code scripts/spdx.sh} puts it there (run it after adding files). The same set of files:
 * Java, C, shell, zsh and fish scripts, Makefiles, poms, and scripts without an extension
 * that start with {@code #!}; build output and git's own directory left out.
 */
class SpdxTest {
    private static final String ID = "SPDX-License-Identifier: Apache-2.0";

    /** The repository: the first directory above this module's with the parent pom and LICENSE. */
    private static Path repository() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !(Files.isRegularFile(dir.resolve("LICENSE")) && Files.isRegularFile(dir.resolve("pom.xml"))
                && Files.isDirectory(dir.resolve("launcher")))) {
            dir = dir.getParent();
        }
        assertThat(dir).as("the repository above " + Path.of("").toAbsolutePath()).isNotNull();
        return dir;
    }

    private static boolean isSource(Path file) throws IOException {
        String name = file.getFileName().toString();
        if (name.endsWith(".java") || name.endsWith(".c") || name.endsWith(".h") || name.endsWith(".sh")
                || name.endsWith(".zsh") || name.endsWith(".fish") || name.equals("Makefile") || name.equals("pom.xml")) {
            return true;
        }
        if (name.contains(".") || Files.size(file) < 2) {
            return false;
        }
        byte[] start = new byte[2];
        try (var in = Files.newInputStream(file)) {
            return in.read(start) == 2 && start[0] == '#' && start[1] == '!';
        }
    }

    @Test
    void Every_Source_File_Names_Its_License_In_Its_First_Lines() throws IOException {
        Path repo = repository();
        assertThat(Files.readString(repo.resolve("LICENSE"))).contains("Apache License").contains("Version 2.0");
        assertThat(repo.resolve("NOTICE")).isRegularFile();
        List<Path> sources = new ArrayList<>();
        List<String> without = new ArrayList<>();
        try (Stream<Path> all = Files.walk(repo)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                String rel = repo.relativize(p).toString();
                if (rel.startsWith(".git") && !rel.startsWith(".gitignore") || rel.contains("/target/")
                        || rel.startsWith("target/") || rel.contains("node_modules/") || !Files.isRegularFile(p)
                        || Files.isSymbolicLink(p) || !isSource(p)) {
                    continue;
                }
                sources.add(p);
                List<String> head = Files.readAllLines(p, StandardCharsets.ISO_8859_1);
                if (!String.join("\n", head.subList(0, Math.min(3, head.size()))).contains(ID)) {
                    without.add(rel);
                }
            }
        }
        assertThat(sources.size()).as("source files found").isGreaterThan(200);
        assertThat(without).as("source files without '" + ID + "' (run scripts/spdx.sh)").isEmpty();
    }
}
