import java.nio.file.Path;
import java.util.List;

/** Runs a command in a sandbox from Java: no network, .env hidden, the project writable. */
public class RunInSandbox {
    public static void main(String[] args) throws Exception {
        Path project = Path.of(args.length > 0 ? args[0] : ".").toAbsolutePath();
        Environment env = new Environment(
                Path.of(System.getenv("HOME")), project, System.getenv(),
                Path.of(System.getenv().getOrDefault("TMPDIR", "/tmp")),
                (Integer) java.nio.file.Files.getAttribute(Path.of("/proc/self"), "unix:uid"),
                System.getProperty("os.name"), null);
        Policy policy = Policy.builder()
                .layer(PolicyLayer.builder(Layer.PROJECT, "example")
                        .exclude(".env")
                        .network(false)
                        .build())
                .build();
        Plan plan = Sandbox.plan(policy, env, List.of("sh", "-c", "echo sandboxed > out.txt; cat .env"));
        int status = Sandbox.start(plan, env).waitFor();
        System.out.println("exit status " + status);
    }
}
