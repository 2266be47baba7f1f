// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Doctor;
import agentsandbox.core.Environment;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * {@code agent-sandbox --version}: the version, the commit the app was built from, the
 * Java runtime it runs on and the bwrap it would use.
 */
final class VersionReport {
    private VersionReport() {}

    /** Written into the app image when it is built: {@code commit=<hash>[-modified]}. */
    static final String BUILD_INFO = "lib/build.properties";

    static String text(Environment env) {
        StringBuilder b = new StringBuilder();
        b.append("agent-sandbox ").append(Flags.version()).append('\n');
        b.append("commit: ").append(commit(env)).append('\n');
        b.append("java runtime: ").append(System.getProperty("java.runtime.version", "unknown"));
        String vendor = System.getProperty("java.vendor");
        if (vendor != null) {
            b.append(" (").append(vendor).append(')');
        }
        b.append('\n');
        Path bwrap = Doctor.findBwrap(env);
        if (bwrap == null) {
            b.append("bwrap: not found on PATH\n");
        } else {
            String version = Doctor.bwrapVersion(bwrap);
            b.append("bwrap: ").append(bwrap).append(", ")
                    .append(version == null ? "does not report a version" : "bubblewrap " + version).append('\n');
        }
        return b.toString();
    }

    private static String commit(Environment env) {
        if (env.installation() == null) {
            return "unknown (not an installed app)";
        }
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(env.installation().appHome().resolve(BUILD_INFO))) {
            p.load(in);
        } catch (IOException e) {
            return "unknown";
        }
        return p.getProperty("commit", "unknown");
    }
}
