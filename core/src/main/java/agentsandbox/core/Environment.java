package agentsandbox.core;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything the engine knows about the world it runs in. The core never reads
 * {@code System.getenv()}, {@code user.dir} or {@code user.home} itself: the caller
 * (the CLI, a test, an embedding program) builds one of these.
 *
 * @param home         the user's home directory, or {@code null} when there is none
 * @param workDir      the effective working directory (absolute)
 * @param hostEnv      the caller's environment, passed unchanged to the command
 * @param tempDir      the host temp dir ({@code $TMPDIR}, else {@code /tmp})
 * @param uid          the caller's user id
 * @param osName       the operating system name (as {@code os.name} reports it)
 * @param installation where agent-sandbox itself is installed, or {@code null} when
 *                     embedded without an installation (the in-sandbox entry point is
 *                     then a plain marker file)
 */
public record Environment(
        Path home,
        Path workDir,
        Map<String, String> hostEnv,
        Path tempDir,
        int uid,
        String osName,
        Installation installation) {

    public Environment {
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(tempDir, "tempDir");
        Objects.requireNonNull(osName, "osName");
        hostEnv = Map.copyOf(hostEnv);
        if (!workDir.isAbsolute()) {
            throw new IllegalArgumentException("workDir must be absolute: " + workDir);
        }
    }

    /** The value of a host environment variable. */
    public Optional<String> env(String name) {
        return Optional.ofNullable(hostEnv.get(name));
    }

    /** A copy with another working directory (used for {@code --cwd}). */
    public Environment withWorkDir(Path dir) {
        return new Environment(home, dir, hostEnv, tempDir, uid, osName, installation);
    }

    /**
     * Where agent-sandbox is installed: the launcher executable that becomes
     * {@code /run/agent-sandbox/agent-sandbox} inside the sandbox, and the application
     * directory (jars, runtime) bound at {@code /run/agent-sandbox/app}.
     */
    public record Installation(Path launcher, Path appHome) {
        public Installation {
            Objects.requireNonNull(launcher, "launcher");
            Objects.requireNonNull(appHome, "appHome");
        }
    }
}
