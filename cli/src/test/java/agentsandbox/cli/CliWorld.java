// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A temp HOME, project and TMPDIR for running the CLI in-process, with outputs captured.
 * The environment is fixed (no bwrap on PATH, no Docker socket) so that printed command
 * lines do not depend on the machine.
 */
final class CliWorld {
    final Path root;
    final Path home;
    final Path project;
    final Path tmp;
    final Map<String, String> env = new HashMap<>();
    /** Where the kernel's settings are read; a test may point it at a tree of its own. */
    Path procSys = Environment.PROC_SYS;

    CliWorld(Path dir) {
        try {
            root = dir.toRealPath();
            home = Files.createDirectories(root.resolve("home"));
            project = Files.createDirectories(home.resolve("project"));
            tmp = Files.createDirectories(root.resolve("tmp"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        env.put("HOME", home.toString());
        env.put("PATH", root.resolve("no-bin").toString());
        env.put("DOCKER_HOST", "unix://" + root.resolve("no-docker.sock"));
    }

    Path write(String relative, String content) {
        try {
            Path p = root.resolve(relative);
            Files.createDirectories(p.getParent());
            return Files.writeString(p, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path mkdir(String relative) {
        try {
            return Files.createDirectories(root.resolve(relative));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Environment environment() {
        return new Environment(home, project, env, tmp, 1000, "Linux", null, procSys);
    }

    record Result(int status, String out, String err) {}

    Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            status = new Cli(o, e, r -> {}).run(List.of(args), environment());
        }
        return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** A printed line with this world's paths and the per-run directory name made stable. */
    String normalize(String text) {
        return text.replace(root.toString(), "$W")
                .replaceAll("agent-sandbox/run/[0-9a-f]{16}", "agent-sandbox/run/RUN")
                // a host whose /etc/resolv.conf points into /run gets one more bind
                .replaceAll(" --ro-bind (/run/\\S+) \\1", "");
    }
}
