// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The training run for the startup cache, made when the app image is built: it takes
 * the paths a real start takes (flags, config files, presets, a git repository,
 * planning, {@code --dry-run}, {@code --debug}, and when the machine allows it one real
 * run under bwrap, started by the launcher's starter, with a guarded git call), so the
 * JVM can record the classes, their linking and the lambdas they use. Not used at run
 * time.
 *
 * <pre>{@code agent-sandbox --internal-train CONF WORKDIR}</pre>
 *
 * The launcher starts it with its own JVM options, class path and starter, recording
 * into CONF (dist/src/image/finish-image.sh). Every class the training loads is loaded
 * again at every start, needed or not (the cache loads all its classes up front): so it
 * takes only what starts do often. {@code --version} and {@code check} are left out (they
 * start processes through the JDK, which a run never does: the starter starts bwrap),
 * and so is a second real run (the starter serves one).
 */
public final class Training {
    private Training() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: Training WORKDIR");
            System.exit(2);
        }
        Path root = Path.of(args[0]).toAbsolutePath();
        Path home = Files.createDirectories(root.resolve("home"));
        Path project = Files.createDirectories(home.resolve("project"));
        Path tmp = Files.createDirectories(root.resolve("tmp"));
        Files.createDirectories(home.resolve(".ssh"));
        Files.createDirectories(home.resolve(".cache"));
        // a granted cache that no rule of the user's own names: seen through a copy-on-write
        // view, whose changes the end of a real run merges (homes.LayerMerge)
        Files.createDirectories(home.resolve(".npm"));
        Files.createDirectories(home.resolve("notes"));
        Files.writeString(home.resolve(".aws"), "");
        Path config = Files.createDirectories(home.resolve(".config/agent-sandbox"));
        Files.writeString(config.resolve("config.json"), "{\"filesystem\": {\"exclude\": [\"~/.netrc\"]}}\n");
        Files.writeString(project.resolve(".agent-sandbox.jsonc"), """
                {
                  // a project policy of the usual kind
                  "filesystem": {
                    "presets": ["!@lint/go", "@git-strict"],
                    "ro": ["docs/*/generated.md"],
                    "rw": ["~/.cache", "~/notes"],
                    "exclude": [".env", "secrets"],
                  },
                  "commands": {"rm": false},
                  "network": true,
                }
                """);
        for (String f : List.of("biome.json", "tsconfig.json", "pyproject.toml", ".editorconfig", ".env")) {
            Files.writeString(project.resolve(f), "{}\n");
        }
        Files.createDirectories(project.resolve("docs/a"));
        Files.writeString(project.resolve("docs/a/generated.md"), "x\n");
        Path git = Files.createDirectories(project.resolve(".git"));
        Files.createDirectories(git.resolve("hooks"));
        Files.createDirectories(git.resolve("refs/heads"));
        Files.createDirectories(git.resolve("refs/tags"));
        Files.writeString(git.resolve("HEAD"), "ref: refs/heads/main\n");
        // as git init writes it: a run reads the settings of every repository it looks at
        Files.writeString(git.resolve("config"), "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
                + "\tbare = false\n\tlogallrefupdates = true\n");
        Files.writeString(git.resolve("refs/heads/other"), "0000000000000000000000000000000000000000\n");

        Environment system = SystemEnvironment.read();
        Map<String, String> env = new HashMap<>(system.hostEnv());
        env.put("HOME", home.toString());
        env.put("TMPDIR", tmp.toString());
        env.remove("XDG_CONFIG_HOME");
        // A build may run as root, which agent-sandbox refuses: train as an ordinary user.
        int uid = system.uid() == 0 ? 65534 : system.uid();
        Environment e = new Environment(home, project, env, tmp, uid, system.osName(), system.installation());

        train(e);
        loadApplyClasses();
        // The build checks that the runtime's sockets get their random numbers the cheap way
        // (finish-image.sh names AgentSandboxUrandom, a module of the runtime, first in java.security).
        try {
            System.err.println("training: NativePRNGNonBlocking from "
                    + java.security.SecureRandom.getInstance("NativePRNGNonBlocking").getProvider().getName());
        } catch (java.security.NoSuchAlgorithmException missing) {
            System.err.println("training: " + missing);
        }
        // halt, as the tool ends (see Main): System.exit would set up the JDK's system logger
        // (it logs a Runtime.exit), whose classes the cache would then load at every start
        System.err.flush();
        Runtime.getRuntime().halt(0);
    }

    /**
     * The classes the host's apply of a commit made inside a sandbox loads (the index read
     * at the start of a run in a repository that has one, the objects brought in, the refs
     * moved, the kernel's word on the files written), which the training's one real run, with
     * no commit in it, never reaches. Loaded,
     * not run: a commit inside would bring the host's git (a first commit has no parent the
     * apply could walk to) and the process classes it is started with, which no run needs
     * otherwise. StartupIT runs a commit inside and fails on any of them from outside the cache.
     */
    static final List<String> APPLY_CLASSES = List.of(
            "agentsandbox.core.git.GitIndex",
            "agentsandbox.core.git.GitIndex$Entries",
            "agentsandbox.core.git.GitIndex$Entry",
            "agentsandbox.core.git.ObjectImport",
            "agentsandbox.core.git.ObjectIds",
            "agentsandbox.core.git.LinkFree",
            "agentsandbox.core.git.HostObjects",
            "agentsandbox.core.git.HostObjects$Loaded",
            "agentsandbox.core.git.HostObjects$Pack",
            "agentsandbox.core.git.AddedGitlinks",
            "agentsandbox.core.git.AddedGitlinks$Tree",
            "agentsandbox.core.git.HostGit$Result",
            // what the kernel tells the live watch of a work tree that changes (a commit inside)
            "agentsandbox.core.aftercheck.TreeGitDirs$Event",
            "java.util.zip.DataFormatException",
            "jdk.internal.util.HexDigits",
            "java.lang.Math$RandomNumberGeneratorHolder");

    private static void loadApplyClasses() {
        for (String name : APPLY_CLASSES) {
            try {
                Class.forName(name, false, Training.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError missing) {
                System.err.println("training: " + name + ": " + missing);
            }
        }
    }

    /** The runs of the training, in {@code e}: a machine that cannot run a sandbox still trains the rest. */
    private static void train(Environment e) {
        PrintStream sink = new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8);
        List<List<String>> runs = List.of(
                List.of("--help"),
                List.of("--dry-run", "--", "true"),
                List.of("--dry-run", "--network=false", "--ro", "~/notes", "--rw=/tmp", "--exclude", "secrets",
                        "--cmd", "npm=false,git=@git", "npm", "test"),
                List.of("--debug", "--dry-run", "-C", ".", "-c", ".agent-sandbox.jsonc", "sh", "-c", "echo hi"),
                List.of("--netwrk", "true"),
                // the config loosens (rw ~/notes): refused, trusted, then accepted by its hash
                List.of("--dry-run", "true"),
                List.of("trust"),
                List.of("--", "sh", "-c", "git --version >/dev/null; git checkout -q . 2>/dev/null; rm x 2>/dev/null;"
                        + " exit 0"));
        for (List<String> argv : runs) {
            try {
                int status = Main.cli(sink, System.err).run(argv, e);
                System.err.println("training: " + argv + ": exit " + status);
            } catch (RuntimeException failed) {
                // a machine without bwrap or user namespaces still trains everything before
                System.err.println("training: " + argv + ": " + failed);
            }
        }
    }
}
