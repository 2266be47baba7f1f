package agentsandbox.cli;

import agentsandbox.core.Doctor;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code agent-sandbox doctor}: the machine's checks ({@link Doctor}) and the config
 * files', one screen, each problem with its fix. Exit status 0 only when a sandbox can
 * run here.
 */
final class DoctorReport {
    private DoctorReport() {}

    static int run(Environment env, String explicitConfig, PrintStream out, PrintStream err) {
        List<Doctor.Check> checks = new ArrayList<>(Doctor.machine(env));
        checks.addAll(configs(env, explicitConfig));
        int problems = 0;
        int width = 0;
        for (Doctor.Check c : checks) {
            width = Math.max(width, c.name().length());
        }
        for (Doctor.Check c : checks) {
            String mark = switch (c.status()) {
                case OK -> "ok     ";
                case WARNING -> "warning";
                case PROBLEM -> "PROBLEM";
            };
            problems += c.status() == Doctor.Status.PROBLEM ? 1 : 0;
            out.println(mark + "  " + pad(c.name(), width) + "  " + SandboxException.printable(c.finding()));
            if (!c.fix().isEmpty()) {
                out.println(" ".repeat(7 + 2 + width + 2) + "fix: " + SandboxException.printable(c.fix()));
            }
        }
        if (problems > 0) {
            err.println("agent-sandbox: " + problems + (problems == 1 ? " problem stops" : " problems stop")
                    + " sandboxes on this machine (fix what is marked PROBLEM above, then run agent-sandbox doctor again)");
            return 1;
        }
        out.println("sandboxes can run here");
        return 0;
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }

    /** The config files a run here would read: valid or not, and for a project config, trusted or not. */
    static List<Doctor.Check> configs(Environment env, String explicitConfig) {
        ConfigReader.Loaded loaded;
        try {
            loaded = ConfigReader.load(env, explicitConfig);
        } catch (SandboxException e) {
            return List.of(new Doctor.Check("config", Doctor.Status.PROBLEM, e.getMessage(),
                    e.hint() == null ? "correct the file (every run here stops on it)" : e.hint()));
        }
        List<Doctor.Check> checks = new ArrayList<>();
        for (int i = 0; i < loaded.files().size(); i++) {
            Path file = loaded.files().get(i);
            PolicyLayer layer = loaded.layers().get(i);
            if (layer.layer() == Layer.GLOBAL) {
                checks.add(new Doctor.Check("global config", Doctor.Status.OK, file + ": valid", ""));
            } else if (explicitConfig != null) {
                checks.add(new Doctor.Check("config (-c)", Doctor.Status.OK, file + ": valid, your own choice", ""));
            } else if (trusted(env, file)) {
                checks.add(new Doctor.Check("project config", Doctor.Status.OK, file + ": valid, trusted", ""));
            } else {
                checks.add(new Doctor.Check("project config", Doctor.Status.OK, file
                        + ": valid, not trusted (it may only tighten the policy; run agent-sandbox trust to accept it)",
                        ""));
            }
        }
        if (checks.isEmpty()) {
            checks.add(new Doctor.Check("config", Doctor.Status.OK, "no config files here (the defaults apply)", ""));
        }
        return checks;
    }

    /**
     * Whether the user trusted this config file as it is now: the trust store
     * ({@code $XDG_STATE_HOME/agent-sandbox/trust}, {@code ~/.local/state/...} by default)
     * holds a file named by the SHA-256 of the config's absolute path, containing the
     * SHA-256 of its content.
     */
    static boolean trusted(Environment env, Path config) {
        String state = env.env("XDG_STATE_HOME").orElse("");
        Path stateHome;
        if (state.startsWith("/")) {
            stateHome = Path.of(state);
        } else if (env.home() != null) {
            stateHome = env.home().resolve(".local/state");
        } else {
            return false;
        }
        try {
            Path absolute = config.toAbsolutePath().normalize();
            Path record = stateHome.resolve("agent-sandbox/trust")
                    .resolve(sha256(absolute.toString().getBytes(StandardCharsets.UTF_8)));
            if (!Files.isRegularFile(record)) {
                return false;
            }
            String recorded = Files.readString(record, StandardCharsets.US_ASCII).strip();
            return recorded.equals(sha256(Files.readAllBytes(absolute)));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static String sha256(byte[] data) {
        return Sha256.hex(data);
    }
}
