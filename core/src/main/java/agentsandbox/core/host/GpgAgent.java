// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.rules.Access;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code --gpg-agent}: signing and decrypting through the caller's gpg-agent, never its
 * key files.
 *
 * <p>The sandbox gets the agent's <em>restricted</em> socket ({@code S.gpg-agent.extra},
 * the one GnuPG made for forwarding to machines one trusts less), shown where gpg inside
 * looks for the standard one: {@code S.gpg-agent} in the GnuPG home. Through it the
 * agent signs and decrypts, asking for the passphrase on the host as usual, but will not
 * export keys or take preset passphrases. The GnuPG home inside is a fresh owner-only
 * directory holding read-only the public parts gpg needs (the public keyring, the trust
 * database, the configuration); the private keys and revocation certificates stay out.
 */
public final class GpgAgent {
    private GpgAgent() {}

    /** The files of the GnuPG home that gpg needs to sign and verify; none holds a secret key. */
    static final List<String> PUBLIC_FILES = List.of("pubring.kbx", "pubring.gpg", "trustdb.gpg", "gpg.conf",
            "common.conf", "tofu.db", "dirmngr.conf", "sshcontrol");

    /**
     * @param home   the GnuPG home, the same path inside and out
     * @param socket the agent's restricted socket on the host
     */
    public record Found(Path home, Path socket) {}

    /**
     * Finds the caller's agent, asking {@code gpgconf} where its sockets are (and starting
     * the agent when it is not running).
     *
     * @throws SandboxException when there is no gpg, or no agent can be reached
     */
    public static Found find(Environment env) {
        String homeVar = env.env("GNUPGHOME").filter(v -> v.startsWith("/")).orElse(null);
        Path home = homeVar != null ? Path.of(homeVar) : env.home() == null ? null : env.home().resolve(".gnupg");
        if (home == null) {
            throw new SandboxException("--gpg-agent: there is no home directory, so no GnuPG home",
                    "set GNUPGHOME, or run without --gpg-agent");
        }
        Path gpgconf = onPath(env, "gpgconf");
        if (gpgconf == null) {
            throw new SandboxException("--gpg-agent: gpgconf not found on PATH, so there is no gpg-agent to reach",
                    "install GnuPG (sudo apt-get install -y gnupg), or run without --gpg-agent");
        }
        Path socket = ask(env, gpgconf, "--list-dirs", "agent-extra-socket");
        if (socket != null && !isSocket(socket)) {
            ask(env, gpgconf, "--launch", "gpg-agent");
        }
        if (socket == null || !isSocket(socket)) {
            throw new SandboxException("--gpg-agent: gpg-agent's restricted socket " + (socket == null ? ""
                    : socket + " ") + "is not there (is the agent running, with its extra socket?)",
                    "start it with gpgconf --launch gpg-agent, or run without --gpg-agent");
        }
        return new Found(home, socket);
    }

    /** The mounts that show the agent and the public parts of the GnuPG home. */
    public static List<Mount> mounts(Found gpg) {
        Origin o = new Origin(Layer.FLAG, "--gpg-agent");
        List<Mount> out = new ArrayList<>();
        out.add(Mount.of(Mount.Kind.PRIVATE_DIR, null, gpg.home(), Access.RW, o));
        for (String name : PUBLIC_FILES) {
            Path p = gpg.home().resolve(name);
            if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                out.add(Mount.of(Mount.Kind.READ_ONLY, p, p, Access.RO, o));
            }
        }
        out.add(Mount.of(Mount.Kind.READ_WRITE, gpg.socket(), gpg.home().resolve("S.gpg-agent"), Access.RW, o));
        return out;
    }

    private static boolean isSocket(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return (mode & 0170000) == 0140000;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    private static Path onPath(Environment env, String name) {
        return HostPrograms.find(env.env("PATH").orElse(null), name, env.uid());
    }

    /** Runs gpgconf; its first line of output as a path (gpgconf escapes ':' and '%' as %XX), or null. */
    private static Path ask(Environment env, Path gpgconf, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(gpgconf.toString());
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Map<String, String> e = pb.environment();
        e.clear();
        e.putAll(env.hostEnv());
        try {
            Process p = pb.start();
            byte[] out = p.getInputStream().readNBytes(4096);
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            String line = new String(out, StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
            return p.exitValue() == 0 && line.startsWith("/") ? Path.of(unescape(line)) : null;
        } catch (IOException e1) {
            return null;
        } catch (InterruptedException e2) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length() && s.substring(i + 1, i + 3).matches("[0-9a-fA-F]{2}")) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
