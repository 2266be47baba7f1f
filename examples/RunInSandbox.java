// SPDX-License-Identifier: Apache-2.0
import agentsandbox.core.Environment;
import agentsandbox.core.Plan;
import agentsandbox.core.Sandbox;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.run.Execution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs a command in a sandbox from Java: no network, .env hidden, the project writable.
 * Arguments: the project (default: the current directory), then the command (default: one
 * that writes out.txt and tries to read .env).
 */
public class RunInSandbox {
    public static void main(String[] args) throws Exception {
        Path project = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath();
        Environment env = new Environment(
                Path.of(System.getenv("HOME")), project, System.getenv(),
                Path.of(System.getenv().getOrDefault("TMPDIR", "/tmp")),
                (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"),
                System.getProperty("os.name"), null);
        Policy policy = Policy.builder()
                .layer(PolicyLayer.builder(Layer.PROJECT, "example")
                        .exclude(".env")
                        .network(false)
                        .build())
                .build();
        List<String> command = args.length > 1 ? List.of(args).subList(1, args.length)
                : List.of("sh", "-c", "echo sandboxed > out.txt; cat .env");
        Plan plan = Sandbox.plan(policy, env, command);
        try (Execution run = Sandbox.start(plan, env)) {
            int status = run.waitFor();
            // what the run left that the host would obey later: git hooks and configs it
            // planted, settings files of granted caches (moved aside)
            for (String finding : run.findings()) {
                System.err.println("after the run: " + finding);
            }
            System.out.println("exit status " + status);
        }
    }
}
