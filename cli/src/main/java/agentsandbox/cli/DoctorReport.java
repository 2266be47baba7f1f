// SPDX-License-Identifier: Apache-2.0
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

    static int run(Environment env, String explicitConfig, boolean json, PrintStream out, PrintStream err) {
        List<Doctor.Check> checks = new ArrayList<>(Doctor.machine(env));
        checks.addAll(configs(env, explicitConfig));
        if (json) {
            return json(checks, out);
        }
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

    /**
     * {@code doctor --json}: {@code {"version": 1, "canRun": BOOL, "checks": [{"name", "status"
     * ("ok", "warning" or "problem"), "finding", "fix"}]}} on one line; the exit status as without
     * --json.
     */
    private static int json(List<Doctor.Check> checks, PrintStream out) {
        StringBuilder b = new StringBuilder();
        boolean canRun = true;
        for (Doctor.Check c : checks) {
            canRun &= c.status() != Doctor.Status.PROBLEM;
            b.append(b.isEmpty() ? "" : ",").append("{\"name\":").append(Json.quote(c.name()))
                    .append(",\"status\":").append(Json.quote(c.status().name().toLowerCase(java.util.Locale.ROOT)))
                    .append(",\"finding\":").append(Json.quote(c.finding()))
                    .append(",\"fix\":").append(Json.quote(c.fix())).append('}');
        }
        out.println("{\"version\":" + Json.VERSION + ",\"canRun\":" + canRun + ",\"checks\":[" + b + "]}");
        return canRun ? 0 : 1;
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
            } else {
                checks.add(project(env, loaded, file));
            }
        }
        if (checks.isEmpty()) {
            checks.add(new Doctor.Check("config", Doctor.Status.OK, "no config files here (the defaults apply)", ""));
        }
        return checks;
    }

    /**
     * The project config as a run here takes it: trusted; untrusted and only tightening
     * (fine); or untrusted and loosening, which stops every run here until the user trusts
     * it: a problem, with the fix.
     */
    private static Doctor.Check project(Environment env, ConfigReader.Loaded loaded, Path file) {
        Trust.Status status = Trust.status(env, file, loaded.projectBytes());
        if (status == Trust.Status.TRUSTED) {
            return new Doctor.Check("project config", Doctor.Status.OK, file + ": valid, trusted", "");
        }
        agentsandbox.core.rules.Policy.Builder builder = agentsandbox.core.rules.Policy.builder();
        for (PolicyLayer layer : loaded.layers()) {
            builder.layer(layer);
        }
        List<String> loosens = agentsandbox.core.rules.Loosening.of(builder.build(), loaded.project(), env);
        if (loosens.isEmpty()) {
            return new Doctor.Check("project config", Doctor.Status.OK, file
                    + ": valid, not trusted, which is fine: it only tightens the policy", "");
        }
        String why = status == Trust.Status.CHANGED ? "changed since it was trusted" : "not trusted";
        return new Doctor.Check("project config", Doctor.Status.PROBLEM, file + ": " + why + ", and it loosens the"
                + " policy (" + Cli.summary(loosens) + "), so every run here stops on it",
                "review it, then run: agent-sandbox trust -C " + env.workDir() + " (or name a config with -c)");
    }

    private static String sha256(byte[] data) {
        return Sha256.hex(data);
    }
}
