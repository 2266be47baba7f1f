// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a user who does not build gets: the tar.gz, unpacked and installed by the
 * install.sh inside it into a clean prefix, and the .deb, installed with dpkg; each
 * then runs a sandbox as an unprivileged user, has a man page and completions that
 * know every flag {@code --help} prints, and uninstalls without a trace.
 */
class PackagesIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** Tools only, never a JDK or Maven: what a user who installs a package has. */
    private static final String PLAIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin";

    private record Ran(int status, String output) {}

    /** Runs a host command as the test JVM's user, with a plain PATH and no JAVA_HOME. */
    private static Ran host(Path dir, String... command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().remove("JAVA_HOME");
        pb.environment().remove("MAVEN_OPTS");
        pb.environment().put("PATH", PLAIN_PATH);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as(String.join(" ", command) + " finishes").isTrue();
        return new Ran(p.exitValue(), output);
    }

    private static Ran succeeds(Path dir, String... command) throws IOException, InterruptedException {
        Ran r = host(dir, command);
        assertThat(r.status()).as(String.join(" ", command) + " output: " + r.output()).isZero();
        return r;
    }

    /** A package the build made beside the app image (the image the tests run is a copy elsewhere). */
    private static Path built(String glob) throws IOException {
        String image = System.getProperty("agentsandbox.image");
        assertThat(image).as("system property agentsandbox.image (set by the Maven build)").isNotBlank();
        try (Stream<Path> files = Files.list(Path.of(image).toAbsolutePath().getParent())) {
            List<Path> matches = files.filter(p -> p.getFileSystem().getPathMatcher("glob:" + glob)
                    .matches(p.getFileName())).toList();
            assertThat(matches).as("one " + glob + " beside the app image (made by dist/src/image/package.sh)")
                    .hasSize(1);
            return matches.get(0);
        }
    }

    /** The flags the installed command's --help names: every word that looks like one. */
    private Set<String> helpFlags(Path command) {
        String help = sandbox.command("--help").executable(command).run().succeeds().stdout();
        Set<String> flags = new LinkedHashSet<>();
        Matcher m = Pattern.compile("(?<![\\w-])(--?[A-Za-z][A-Za-z-]*)").matcher(help);
        while (m.find()) {
            flags.add(m.group(1));
        }
        assertThat(flags).contains("--help", "--network", "-C", "-q");
        return flags;
    }

    /** The man page renders without a warning and names every flag; each completion loads and names every flag. */
    private void assertManPageAndCompletions(Path command, String manPage, Path bash, Path zsh, Path fish)
            throws IOException, InterruptedException {
        Path dir = sandbox.world();
        Ran rendered = succeeds(dir, "sh", "-c", "groff -man -ww -z " + Result.quote(manPage) + " 2>&1");
        assertThat(rendered.output()).as("groff warnings").isEmpty();
        String man = succeeds(dir, "sh", "-c", "MANWIDTH=200 man -l " + Result.quote(manPage) + " | col -b").output();
        succeeds(dir, "bash", "-n", bash.toString());
        succeeds(dir, "zsh", "-n", zsh.toString());
        succeeds(dir, "fish", "--no-execute", fish.toString());
        String bashText = Files.readString(bash);
        String zshText = Files.readString(zsh);
        String fishText = Files.readString(fish);
        for (String flag : helpFlags(command)) {
            assertThat(man).as("man page names " + flag).containsPattern("(?<![\\w-])" + Pattern.quote(flag) + "(?![\\w-])");
            assertThat(bashText).as("bash completion names " + flag).containsPattern("[' |]" + Pattern.quote(flag) + "[ '|)]");
            assertThat(zshText).as("zsh completion names " + flag).containsPattern("[ ')]" + Pattern.quote(flag) + "[\\[=+ ;\\n]");
            String fishForm = flag.startsWith("--") ? " -l " + flag.substring(2) : " -s " + flag.substring(1);
            assertThat(fishText).as("fish completion names " + flag).containsPattern(Pattern.quote(fishForm) + "[ \\n]");
        }
        // bash completes a flag and a subcommand the way a user types them
        String completed = succeeds(dir, "bash", "-c", "source " + Result.quote(bash.toString())
                + "; COMP_LINE='agent-sandbox --netw'; COMP_POINT=${#COMP_LINE}; _agent_sandbox; echo \"${COMPREPLY[*]}\";"
                + " COMP_LINE='agent-sandbox docto'; COMP_POINT=${#COMP_LINE}; _agent_sandbox; echo \"${COMPREPLY[*]}\"")
                .output();
        assertThat(completed).startsWith("--network --network=\n").contains("doctor");
        String fishCompleted = succeeds(dir, "fish", "-c", "source " + Result.quote(fish.toString())
                + "; complete -C 'agent-sandbox --dry'").output();
        assertThat(fishCompleted).startsWith("--dry-run");
    }

    /** The smoke test as the unprivileged test user: the host read-only, the project writable, doctor content. */
    private void assertRunsSandboxes(Path command) {
        sandbox.command("--", "sh", "-c", "echo hi > /usr/x").executable(command).run()
                .fails().stderrContains("Read-only file system");
        assertThat(Path.of("/usr/x")).doesNotExist();
        sandbox.command("--", "sh", "-c", "echo hi > x").executable(command).run().succeeds();
        assertThat(sandbox.read(sandbox.project().resolve("x"))).isEqualTo("hi\n");
        sandbox.command("doctor").executable(command).run().succeeds().stdoutContains("sandboxes can run here");
        sandbox.command("--version").executable(command).run().succeeds()
                .stdoutContains("commit: ", "java runtime: 25", "bwrap: /");
    }

    private static List<String> tree(Path root) throws IOException {
        List<String> entries = new ArrayList<>();
        try (Stream<Path> all = Files.walk(root)) {
            all.filter(p -> !p.equals(root)).forEach(p -> entries.add(root.relativize(p).toString()));
        }
        return entries;
    }

    @Test
    void The_Tarball_Installs_Into_A_Clean_Prefix_Runs_And_Uninstalls_Without_A_Trace() throws Exception {
        Path tarball = built("agent-sandbox-*-linux-*.tar.gz");
        Path unpacked = Files.createDirectory(sandbox.world().resolve("unpacked"));
        succeeds(unpacked, "tar", "-xzf", tarball.toString());
        Path prefix = sandbox.world().resolve("prefix");
        Files.createDirectory(prefix, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));

        Ran installed = succeeds(unpacked, "bash", unpacked.resolve("agent-sandbox/install.sh").toString(),
                "--prefix", prefix.toString());

        assertThat(installed.output()).startsWith("installed agent-sandbox ")
                .contains(prefix + "/bin/agent-sandbox", prefix + "/share/man/man1/agent-sandbox.1", "--uninstall");
        assertThat(installed.output().lines().count()).as("a few lines").isLessThanOrEqualTo(8);
        assertThat(installed.output()).doesNotContain("warning", "\u001b");
        Path command = prefix.resolve("bin/agent-sandbox");
        assertRunsSandboxes(command);
        Ran manPath = succeeds(sandbox.world(), "man", "-M", prefix.resolve("share/man").toString(), "-w", "agent-sandbox");
        assertThat(Path.of(manPath.output().strip()).toRealPath()).as("man finds the page through the prefix's link")
                .isEqualTo(prefix.resolve("share/man/man1/agent-sandbox.1").toRealPath());
        assertManPageAndCompletions(command, prefix.resolve("share/man/man1/agent-sandbox.1").toString(),
                prefix.resolve("share/bash-completion/completions/agent-sandbox"),
                prefix.resolve("share/zsh/site-functions/_agent-sandbox"),
                prefix.resolve("share/fish/vendor_completions.d/agent-sandbox.fish"));

        Ran removed = succeeds(sandbox.world(), "bash", prefix.resolve("lib/agent-sandbox/install.sh").toString(),
                "--uninstall");

        assertThat(removed.output()).contains("removed agent-sandbox from " + prefix);
        assertThat(tree(prefix)).as("the prefix after uninstalling").isEmpty();
    }

    @Test
    void Uninstalling_Keeps_What_The_Prefix_Had_Before() throws Exception {
        Path prefix = sandbox.world().resolve("prefix");
        Path ownMan = prefix.resolve("share/man/man1/other.1");
        Files.createDirectories(ownMan.getParent());
        Files.writeString(ownMan, ".TH OTHER 1\n");
        Files.createDirectories(prefix.resolve("bin"));
        succeeds(sandbox.world(), "bash", sandbox.image().resolve("install.sh").toString(), "--prefix", prefix.toString());

        succeeds(sandbox.world(), "bash", prefix.resolve("lib/agent-sandbox/install.sh").toString(), "--uninstall");

        assertThat(tree(prefix)).containsExactlyInAnyOrder("share", "share/man", "share/man/man1",
                "share/man/man1/other.1", "bin");
    }

    @Test
    void The_Deb_Depends_On_Bubblewrap_Installs_With_Dpkg_Runs_And_Removes_Cleanly() throws Exception {
        Path deb = built("agent-sandbox_*.deb");
        Path dir = sandbox.world();
        assertThat(succeeds(dir, "dpkg-deb", "-f", deb.toString(), "Depends").output()).startsWith("bubblewrap");
        assertThat(succeeds(dir, "dpkg-deb", "-f", deb.toString(), "Package").output().strip()).isEqualTo("agent-sandbox");
        assumeTrue(sandbox.testsRunAsRoot(), "dpkg -i needs root: the package test runs as root, as in CI");
        Ran before = host(dir, "dpkg-query", "-W", "-f=${Status}", "agent-sandbox");
        assertThat(before.output()).as("agent-sandbox is not installed as a package before the test")
                .doesNotContain("install ok installed");

        try {
            succeeds(dir, "dpkg", "-i", deb.toString());
            Path command = Path.of("/usr/bin/agent-sandbox");
            assertRunsSandboxes(command);
            assertThat(succeeds(dir, "dpkg", "-L", "agent-sandbox").output()).contains(
                    "/usr/lib/agent-sandbox/bin/agent-sandbox\n", "/usr/bin/agent-sandbox\n",
                    "/usr/share/man/man1/agent-sandbox.1.gz\n", "/usr/share/bash-completion/completions/agent-sandbox\n",
                    "/usr/share/zsh/vendor-completions/_agent-sandbox\n",
                    "/usr/share/fish/vendor_completions.d/agent-sandbox.fish\n");
            // The files as the package holds them (a dpkg configured to leave out man pages
            // would not install them).
            Path content = Files.createDirectory(dir.resolve("deb-content"));
            succeeds(dir, "dpkg-deb", "-x", deb.toString(), content.toString());
            Path man = content.resolve("usr/share/man/man1/agent-sandbox.1");
            succeeds(dir, "sh", "-c", "gzip -dc " + Result.quote(man + ".gz") + " > " + Result.quote(man.toString()));
            assertManPageAndCompletions(command, man.toString(),
                    content.resolve("usr/share/bash-completion/completions/agent-sandbox"),
                    content.resolve("usr/share/zsh/vendor-completions/_agent-sandbox"),
                    content.resolve("usr/share/fish/vendor_completions.d/agent-sandbox.fish"));
        } finally {
            host(dir, "dpkg", "--purge", "agent-sandbox");
        }
        assertThat(host(dir, "dpkg-query", "-W", "-f=${Status}", "agent-sandbox").output())
                .doesNotContain("install ok installed");
        for (String gone : List.of("/usr/bin/agent-sandbox", "/usr/lib/agent-sandbox",
                "/usr/share/man/man1/agent-sandbox.1.gz", "/usr/share/bash-completion/completions/agent-sandbox",
                "/usr/share/zsh/vendor-completions/_agent-sandbox", "/usr/share/fish/vendor_completions.d/agent-sandbox.fish",
                "/usr/share/doc/agent-sandbox")) {
            assertThat(Path.of(gone)).as(gone + " after dpkg --purge").doesNotExist();
        }
    }
}
