// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Expected outputs kept as files, one per case ({@code -Dgolden.update=true} rewrites them). */
final class Golden {
    private Golden() {}

    /** Checks {@code actual} against {@code dir/name.txt}, after rewriting it when asked to. */
    static void check(Path dir, String name, String actual) throws IOException {
        Path expected = dir.resolve(name + ".txt");
        if (Boolean.getBoolean("golden.update")) {
            Files.writeString(expected, actual);
        }
        assertThat(actual).isEqualTo(Files.readString(expected, StandardCharsets.UTF_8));
    }

    /** The cases that have a file in {@code dir}. */
    static Set<String> names(Path dir) throws IOException {
        Set<String> files = new TreeSet<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> files.add(p.getFileName().toString().replaceFirst("\\.txt$", "")));
        }
        return files;
    }
}
