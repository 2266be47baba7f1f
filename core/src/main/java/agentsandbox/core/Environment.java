// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.run.BwrapStarter;

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
 * @param procSys      where the kernel's settings are read ({@code /proc/sys}; a test
 *                     may give a directory laid out like it)
 */
public record Environment(
        Path home,
        Path workDir,
        Map<String, String> hostEnv,
        Path tempDir,
        int uid,
        String osName,
        Installation installation,
        Path procSys) {

    /** The kernel's settings directory of a real machine. */
    public static final Path PROC_SYS = Path.of("/proc/sys");
    /** The system property in which the launcher passes the caller's real user id (UID_PROPERTY in guard.h). */
    public static final String UID_PROPERTY = "agentsandbox.uid";
    /**
     * The system property in which the launcher names the descriptor the tool's exit status
     * goes to, one byte, before the JVM halts (STATUS_PROPERTY in guard.h).
     */
    public static final String STATUS_PROPERTY = "agentsandbox.status";
    /**
     * Written after the status byte when the launcher's starter is still removing the run's
     * directories: the launcher then waits for it (STATUS_STARTER_REMOVING in guard.h).
     */
    public static final char STATUS_STARTER_REMOVING = 'R';
    /**
     * Written before any status, once, when the JVM's handlers for SIGINT, SIGTERM and SIGHUP
     * are in place: the launcher passes those signals on only from then on (STATUS_READY in
     * guard.h).
     */
    public static final char STATUS_READY = '!';

    /** An environment that reads the kernel's settings from {@link #PROC_SYS}. */
    public Environment(Path home, Path workDir, Map<String, String> hostEnv, Path tempDir, int uid, String osName,
            Installation installation) {
        this(home, workDir, hostEnv, tempDir, uid, osName, installation, PROC_SYS);
    }

    public Environment {
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(tempDir, "tempDir");
        Objects.requireNonNull(osName, "osName");
        Objects.requireNonNull(procSys, "procSys");
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
        return new Environment(home, dir, hostEnv, tempDir, uid, osName, installation, procSys);
    }

    /** A copy that reads the kernel's settings from another directory. */
    public Environment withProcSys(Path dir) {
        return new Environment(home, workDir, hostEnv, tempDir, uid, osName, installation, dir);
    }

    /**
     * Where agent-sandbox is installed: the launcher executable that becomes
     * {@code /run/agent-sandbox/agent-sandbox} inside the sandbox, and the application
     * directory (jars, runtime) bound at {@code /run/agent-sandbox/app}.
     */
    public record Installation(Path launcher, Path appHome, String starter) {
        /**
         * @param starter how the launcher names the starter it forked for this JVM (see
         *                {@link BwrapStarter}), or {@code null} when there is none
         */
        public Installation {
            Objects.requireNonNull(launcher, "launcher");
            Objects.requireNonNull(appHome, "appHome");
        }

        /** The system property by which the launcher names its starter (STARTER_PROPERTY in guard.h). */
        public static final String STARTER_PROPERTY = "agentsandbox.starter";
        /** The system property by which the launcher names itself (LAUNCHER_PROPERTY in guard.h). */
        public static final String LAUNCHER_PROPERTY = "agentsandbox.launcher";
        /** The system property by which the launcher names the application directory (HOME_PROPERTY in guard.h). */
        public static final String HOME_PROPERTY = "agentsandbox.home";
        /**
         * The launcher sets the caller's variables that would configure the tool's own JVM
         * aside under this prefix plus their name (CALLER_VARIABLE_PREFIX in guard.h).
         */
        public static final String CALLER_VARIABLE_PREFIX = "AGENT_SANDBOX_CALLER_";

        /** An installation without a starter. */
        public Installation(Path launcher, Path appHome) {
            this(launcher, appHome, null);
        }
    }
}
