// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Reads the real process environment into the engine's {@link Environment} value. */
final class SystemEnvironment {
    private SystemEnvironment() {}

    /**
     * Variables that configure every JVM. The native launcher moves the caller's values
     * aside, under {@link #CALLER_VARIABLE_PREFIX} + name, so that they do not apply to
     * this tool's own JVM; {@link #callerEnvironment} puts them back for the command.
     */
    static final List<String> CALLER_JAVA_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS");
    static final String CALLER_VARIABLE_PREFIX = Environment.Installation.CALLER_VARIABLE_PREFIX;

    /**
     * The native launcher runs this tool's JVM with {@code LC_ALL=C.UTF-8}, so that
     * arguments, variables and file names are read as UTF-8 whatever the caller's locale,
     * and sets the caller's own LC_ALL aside here: {@code +} and the value, or {@code -}
     * when the caller had none.
     */
    static final String CALLER_LC_ALL = CALLER_VARIABLE_PREFIX + "LC_ALL";

    static Environment read() {
        Map<String, String> env = callerEnvironment(System.getenv());
        return new Environment(
                home(env),
                Path.of(System.getProperty("user.dir")),
                env,
                tempDir(env),
                uid(),
                System.getProperty("os.name", "unknown"),
                installation());
    }

    /** The environment as the caller had it, before the launcher moved the JVM option variables aside. */
    static Map<String, String> callerEnvironment(Map<String, String> env) {
        Map<String, String> caller = new HashMap<>(env);
        for (String name : CALLER_JAVA_VARIABLES) {
            String value = caller.remove(CALLER_VARIABLE_PREFIX + name);
            if (value != null) {
                caller.put(name, value);
            }
        }
        String lcAll = caller.remove(CALLER_LC_ALL);
        if (lcAll != null && lcAll.startsWith("+")) {
            caller.put("LC_ALL", lcAll.substring(1));
        } else if (lcAll != null) {
            caller.remove("LC_ALL");
        }
        return caller;
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

    /**
     * The real user id: as the native launcher passes it ({@link Environment#UID_PROPERTY}),
     * else from {@code /proc/self/status}; -1 when it cannot be read.
     */
    static int uid() {
        int passed = decimal(System.getProperty(Environment.UID_PROPERTY));
        if (passed >= 0) {
            return passed;
        }
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    // "Uid:\t<real>\t<effective>…": the first number
                    String rest = line.substring(4).strip();
                    int end = 0;
                    while (end < rest.length() && Character.isDigit(rest.charAt(end))) {
                        end++;
                    }
                    return Integer.parseInt(rest.substring(0, end));
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or /proc is missing: the OS check reports it
        }
        return -1;
    }

    /** A non-negative decimal int, or -1 when {@code s} is not one. */
    static int decimal(String s) {
        try {
            int v = Integer.parseInt(s);
            return v >= 0 && s.charAt(0) != '+' ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The launcher and application directory, as the native launcher passes them. */
    static Environment.Installation installation() {
        String launcher = System.getProperty(Environment.Installation.LAUNCHER_PROPERTY);
        String home = System.getProperty(Environment.Installation.HOME_PROPERTY);
        if (launcher == null || home == null) {
            return null;
        }
        return new Environment.Installation(Path.of(launcher), Path.of(home),
                System.getProperty(Environment.Installation.STARTER_PROPERTY));
    }
}
