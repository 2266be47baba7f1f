package agentsandbox.cli;

import agentsandbox.core.Environment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/** Reads the real process environment into the engine's {@link Environment} value. */
final class SystemEnvironment {
    private SystemEnvironment() {}

    static Environment read() {
        Map<String, String> env = System.getenv();
        return new Environment(
                home(env),
                Path.of(System.getProperty("user.dir")),
                env,
                tempDir(env),
                uid(),
                System.getProperty("os.name", "unknown"),
                installation());
    }

    /** {@code $HOME} when set to an absolute path, else the account's home directory. */
    static Path home(Map<String, String> env) {
        String h = env.get("HOME");
        if (h != null && h.startsWith("/")) {
            return Path.of(h);
        }
        String prop = System.getProperty("user.home");
        return prop == null || !prop.startsWith("/") ? null : Path.of(prop);
    }

    /** {@code $TMPDIR} when set to an absolute path, else {@code /tmp}. */
    static Path tempDir(Map<String, String> env) {
        String t = env.get("TMPDIR");
        return t != null && t.startsWith("/") ? Path.of(t) : Path.of("/tmp");
    }

    /** The real user id, from {@code /proc/self/status}; -1 when it cannot be read. */
    static int uid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    return Integer.parseInt(line.substring(4).strip().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc is missing: the OS check reports it
        }
        return -1;
    }

    /** The launcher and application directory, as the native launcher passes them. */
    static Environment.Installation installation() {
        String launcher = System.getProperty("agentsandbox.launcher");
        String home = System.getProperty("agentsandbox.home");
        if (launcher == null || home == null) {
            return null;
        }
        return new Environment.Installation(Path.of(launcher), Path.of(home));
    }
}
