// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How a sandbox with the network on reaches out: through a user-mode network stack of its
 * own (slirp4netns, from the distribution), so that DNS, TCP and UDP work for every program
 * as on the host, or, where no stack can run, through agent-sandbox's HTTP(S) proxy
 * ({@link NetworkProxy}), which only programs that honour the proxy variables use.
 *
 * <p>The stack needs its program and a {@code /dev/net/tun} the user may open: distributions'
 * udev rules make it mode 0666; some build machines and containers leave it 0600. The
 * launcher attaches the stack to the sandbox's network namespace (launcher/src/net_stack.c),
 * with the host's loopback, its own addresses and link-local addresses blocked inside.
 *
 * <p>{@value #CHOICE} chooses: unset, the {@code slirp4netns} on {@code PATH} when the
 * system allows it, else the proxy; {@code proxy}, the proxy; an absolute path, that
 * program as the stack (an error when it is not one).
 *
 * @param program  the stack's program, or null for the proxy
 * @param fallback why the proxy is used (null with a stack, or when the user chose it)
 * @param fix      what gives the stack, with {@code fallback}
 */
public record NetStack(Path program, String fallback, String fix) {
    /** The variable that chooses the way out. */
    public static final String CHOICE = "AGENT_SANDBOX_NETWORK_STACK";
    /** The value of {@link #CHOICE} that asks for the proxy. */
    public static final String PROXY = "proxy";
    /** The variable that names the stack to the launcher that starts bwrap (NET_STACK_VARIABLE in guard.h). */
    public static final String LAUNCHER_VARIABLE = "AGENT_SANDBOX_NET_STACK";
    /** The stack's resolver, as the sandbox sees it (NET_STACK_RESOLVER). */
    public static final String RESOLVER = "10.0.2.3";
    /**
     * With an allow-list, the sandbox's resolver: the launcher's DNS filter, on the sandbox's
     * loopback (NET_FILTER_RESOLVER in guard.h).
     */
    public static final String FILTER_RESOLVER = "127.0.0.53";
    /** The variable that gives the launcher the allow-list, comma-separated (NET_ALLOW_VARIABLE). */
    public static final String LAUNCHER_ALLOW = "AGENT_SANDBOX_NET_ALLOW";
    /** The variable that names the file of the filter's refusals to the launcher (NET_REFUSED_VARIABLE). */
    public static final String LAUNCHER_REFUSED = "AGENT_SANDBOX_NET_REFUSED";
    /** The stack's program as distributions install it. */
    public static final String PROGRAM = "slirp4netns";

    /** Whether the sandbox gets the stack. */
    public boolean stack() {
        return program != null;
    }

    /** The way out on this machine, with {@code tun} as the tun device. */
    /** The proxy, chosen rather than fallen back to: nothing to fix. */
    public static final NetStack PROXY_CHOSEN = new NetStack(null, null, null);

    public static NetStack choose(Environment env, Path tun) {
        String choice = env.env(CHOICE).orElse("");
        if (choice.equals(PROXY)) {
            return PROXY_CHOSEN;
        }
        Path program;
        if (!choice.isEmpty()) {
            program = Path.of(choice);
            if (!program.isAbsolute() || !Files.isRegularFile(program) || !Files.isExecutable(program)) {
                throw new SandboxException(CHOICE + "=" + choice + " is not an executable program given by its"
                        + " absolute path", "set it to the path of slirp4netns, to " + PROXY
                                + " for the proxy, or unset it");
            }
        } else {
            program = HostPrograms.find(env.env("PATH").orElse(null), PROGRAM, env.uid());
            if (program == null) {
                Path writable = HostPrograms.untrusted(env.env("PATH").orElse(null), PROGRAM, env.uid());
                return new NetStack(null, writable != null ? PROGRAM + " is on your PATH only at " + writable
                        + ", in a directory you can write, where a sandbox may have put it"
                        : PROGRAM + " is not installed", "install it: sudo apt-get install"
                        + " slirp4netns (or your distribution's package of that name)");
            }
        }
        if (!Files.exists(tun)) {
            return new NetStack(null, "there is no " + tun, "load the tun module: sudo modprobe tun");
        }
        if (!Files.isReadable(tun) || !Files.isWritable(tun)) {
            return new NetStack(null, tun + " is not usable by this user",
                    "make it usable as distributions do: sudo chmod 0666 " + tun);
        }
        return new NetStack(program, null, null);
    }

    /** The way out on this machine. */
    public static NetStack choose(Environment env) {
        return choose(env, Path.of("/dev/net/tun"));
    }

    /**
     * The sandbox's {@code /etc/resolv.conf} with the stack, when the host's cannot serve
     * inside: one that names a resolver on the host's loopback (127.0.0.53 of
     * systemd-resolved, a local dnsmasq) is unreachable from the sandbox, so its
     * nameserver lines become the stack's resolver, which asks the host's. Null when the
     * host's file serves as it is.
     */
    public static String resolvConf(String hostFile) {
        return resolvConf(hostFile, false);
    }

    /**
     * {@link #resolvConf(String)}, or with {@code filter} (an allow-list), always a file whose
     * only resolver is the DNS filter ({@value #FILTER_RESOLVER}), the host's other lines kept.
     */
    public static String resolvConf(String hostFile, boolean filter) {
        if (filter) {
            StringBuilder out = new StringBuilder("nameserver " + FILTER_RESOLVER + "\n");
            for (String line : (hostFile == null ? "" : hostFile).split("\n")) {
                String t = line.strip();
                if (!t.isEmpty() && !t.startsWith("nameserver")) {
                    out.append(line).append('\n');
                }
            }
            return out.toString();
        }
        if (hostFile == null) {
            return null;
        }
        StringBuilder out = new StringBuilder();
        boolean loopback = false;
        boolean named = false;
        for (String line : hostFile.split("\n")) {
            String t = line.strip();
            if (t.startsWith("nameserver")) {
                String address = t.substring("nameserver".length()).strip();
                loopback |= address.startsWith("127.") || address.equals("::1");
                if (!named) {
                    out.append("nameserver ").append(RESOLVER).append('\n');
                    named = true;
                }
                continue;
            }
            out.append(line).append('\n');
        }
        return loopback ? out.toString() : null;
    }
}
