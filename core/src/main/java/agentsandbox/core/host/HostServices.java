// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.Resolver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The host services a plan shows or hides besides the session's sockets ({@link HostSockets})
 * and the gpg-agent ({@link GpgAgent}): the caller's ssh-agent, the directory that holds
 * {@code /etc/resolv.conf}'s target, Docker's socket, and the variables that point clients
 * at the network proxy.
 */
public final class HostServices {
    private HostServices() {}

    /** The variables that point clients at the proxy. */
    public static final List<String> PROXY_VARIABLES = List.of("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
            "http_proxy", "https_proxy", "all_proxy");
    /** What clients reach without the proxy. */
    public static final String NO_PROXY = "localhost,127.0.0.1,::1";

    /** The caller's ssh-agent socket, for {@code --ssh-agent}. */
    public static Path sshAgentSocket(Environment env) {
        String v = env.env("SSH_AUTH_SOCK").orElse("");
        if (v.isEmpty()) {
            throw new SandboxException("--ssh-agent: SSH_AUTH_SOCK is not set, so there is no ssh-agent to reach",
                    "start one (eval \"$(ssh-agent)\" && ssh-add), or run without --ssh-agent");
        }
        Path p = HostSockets.socketNamedBy("SSH_AUTH_SOCK", v);
        if (p == null) {
            throw new SandboxException("--ssh-agent: SSH_AUTH_SOCK=" + v + " is not a socket",
                    "start the agent again (eval \"$(ssh-agent)\"), or run without --ssh-agent");
        }
        return p;
    }

    /** When /etc/resolv.conf is a symlink into /run, the directory that holds its target. */
    public static Optional<Path> resolvConfDir() {
        Path conf = Path.of("/etc/resolv.conf");
        if (!Files.isSymbolicLink(conf)) {
            return Optional.empty();
        }
        Path real = Resolver.realPath(conf);
        if (real == null || !real.startsWith("/run") || real.getParent() == null) {
            return Optional.empty();
        }
        return Optional.of(real.getParent());
    }

    /** The host's /etc/resolv.conf, or null when it cannot be read. */
    public static String readResolvConf() {
        try {
            return Files.readString(Path.of("/etc/resolv.conf"), java.nio.charset.StandardCharsets.ISO_8859_1);
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    /** The Docker socket bound in with {@code docker} on; with it off, every Docker socket found made unreachable. */
    public static List<Mount> dockerMounts(boolean docker, Environment env, List<String> notes) {
        String host = env.env("DOCKER_HOST").orElse("");
        Path socket = host.startsWith("unix://") ? Path.of(host.substring("unix://".length()))
                : Path.of("/var/run/docker.sock");
        Path real = Resolver.realPath(socket);
        Origin origin = new Origin(Layer.PRESET, docker ? "docker on" : "docker off");
        if (docker) {
            if (real == null) {
                throw new SandboxException("Docker is enabled but there is no Docker socket at " + socket,
                        "start Docker, set DOCKER_HOST=unix:///path/to/docker.sock, or run without --docker");
            }
            notes.add("docker: socket " + real + " bound in");
            return List.of(Mount.of(Mount.Kind.READ_WRITE, real, real, Access.RW, origin));
        }
        List<Mount> out = new ArrayList<>();
        List<Path> sockets = new ArrayList<>();
        if (real != null) {
            sockets.add(real);
        }
        // Docker Desktop and rootless Docker keep theirs in the home or the runtime dir
        if (env.home() != null) {
            Path desktop = Resolver.realPath(env.home().resolve(".docker/run/docker.sock"));
            if (desktop != null && !sockets.contains(desktop)) {
                sockets.add(desktop);
            }
        }
        if (sockets.isEmpty()) {
            notes.add("docker: off (no socket at " + socket + ")");
        }
        for (Path p : sockets) {
            // also under the fresh /run: a socket path there must not come back by a rule
            notes.add("docker: off, /dev/null bound over " + p);
            out.add(Mount.of(Mount.Kind.NULL_DEVICE, null, p, Access.EXCLUDE, origin));
        }
        return out;
    }
}
