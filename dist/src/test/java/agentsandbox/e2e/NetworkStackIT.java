// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With the network on, every program gets out as on the host, with no proxy settings: the
 * sandbox's own network stack carries DNS, TCP and UDP. Each test runs a real client in a
 * fresh home with default settings against the registries this machine's own tools name:
 * npm's registry from {@code npm config get registry}, Maven's central repository from
 * Maven's own super POM, both found when the test runs.
 */
class NetworkStackIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** npm's registry, as npm itself says. */
    private URI npmRegistry() {
        return npmRegistry(sandbox);
    }

    /** npm's registry, as npm itself says (asked on the host through {@code sandbox}). */
    static URI npmRegistry(SandboxCli sandbox) {
        String url = sandbox.runOnHost("npm", "config", "get", "registry").succeeds().stdout().strip();
        assertThat(url).as("npm's registry").startsWith("http");
        return URI.create(url);
    }

    /** The repository Maven uses with no settings of the user's: central, from the super POM of Maven's own jar. */
    static URI mavenCentral() throws IOException {
        Path home = null;
        Process p = new ProcessBuilder("mvn", "--version").redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
            if (line.startsWith("Maven home: ")) {
                home = Path.of(line.substring("Maven home: ".length()).strip());
            }
        }
        assertThat(home).as("Maven's home, from mvn --version:\n" + text).isNotNull();
        try (DirectoryStream<Path> jars = Files.newDirectoryStream(home.resolve("lib"), "maven-model-builder-*.jar")) {
            for (Path jar : jars) {
                try (ZipFile zip = new ZipFile(jar.toFile())) {
                    var entry = zip.getEntry("org/apache/maven/model/pom-4.0.0.xml");
                    try (InputStream in = zip.getInputStream(entry)) {
                        String pom = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                        int start = pom.indexOf("<url>", pom.indexOf("<repositories>")) + "<url>".length();
                        return URI.create(pom.substring(start, pom.indexOf("</url>", start)).strip());
                    }
                }
            }
        }
        throw new AssertionError("no maven-model-builder jar in " + home.resolve("lib"));
    }

    @Test
    void Names_Resolve_Inside_For_Every_Program() {
        String host = npmRegistry().getHost();
        sandbox.run("--", "getent", "hosts", host).succeeds().stdoutContains(host);
    }

    @Test
    void A_Raw_Tcp_Connection_Gets_Out_With_No_Proxy_Variables() {
        URI registry = npmRegistry();
        int port = registry.getPort() > 0 ? registry.getPort() : registry.getScheme().equals("https") ? 443 : 80;
        sandbox.run("--", "env", "-u", "HTTPS_PROXY", "-u", "https_proxy", "-u", "ALL_PROXY", "-u", "all_proxy",
                "python3", "-c", """
                        import socket, sys
                        s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=20)
                        print("connected to", s.getpeername()[1])
                        """, registry.getHost(), Integer.toString(port)).succeeds()
                .stdoutIs("connected to " + port + "\n");
    }

    @Test
    void Java_s_HttpClient_Fetches_With_No_Proxy_Settings() {
        sandbox.write("Fetch.java", """
                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;

                public class Fetch {
                    public static void main(String[] args) throws Exception {
                        HttpResponse<Void> r = HttpClient.newHttpClient().send(
                                HttpRequest.newBuilder(URI.create(args[0])).build(),
                                HttpResponse.BodyHandlers.discarding());
                        System.out.println("status " + r.statusCode());
                    }
                }
                """);
        sandbox.run("--", "java", "Fetch.java", npmRegistry().resolve("/is-number").toString()).succeeds()
                .stdoutIs("status 200\n");
    }

    @Test
    void Maven_Downloads_From_Central_In_A_Fresh_Home() throws IOException {
        URI central = mavenCentral();
        // the test user's passwd entry has no home: Java's user.home is told the one HOME names
        // (a fresh home downloads the dependency plugin first: as long on the host, over a minute at times)
        Result r = sandbox.command("--", "sh", "-c", "exec mvn -B -ntp -Duser.home=\"$HOME\" dependency:get"
                + " -Dartifact=junit:junit:4.13.2 -Dtransitive=false").start()
                .waitFor(java.time.Duration.ofMinutes(5)).succeeds();
        r.stdoutContains("BUILD SUCCESS");
        // into the sandboxes' copy-on-write layer of ~/.m2: the next sandbox has it
        sandbox.run("--", "sh", "-c", "test -s ~/.m2/repository/junit/junit/4.13.2/junit-4.13.2.jar && echo downloaded")
                .succeeds().stdoutIs("downloaded\n");
        sandbox.run("--", "getent", "hosts", central.getHost()).succeeds().stdoutContains(central.getHost());
    }

    @Test
    void Npm_Installs_A_Small_Package_In_A_Fresh_Home() {
        npmRegistry();
        sandbox.write("package.json", "{\"name\": \"probe\", \"version\": \"1.0.0\", \"private\": true}");
        sandbox.run("--", "npm", "install", "--no-audit", "--no-fund", "is-number@7.0.0").succeeds();
        assertThat(sandbox.project("node_modules/is-number/package.json")).content().contains("\"version\": \"7.0.0\"");
    }
}
