// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Resolver;
import agentsandbox.core.run.RunLayout;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where agent-sandbox puts its own things inside every sandbox. The launcher's
 * {@code guard.h} names the same paths; the contract test holds both to one value.
 */
public final class Inside {
    private Inside() {}

    /** The sandbox's own runtime directory; also the marker that says "inside". */
    public static final Path RUNTIME = Resolver.RESERVED;
    /** The entry point present in every sandbox. */
    public static final Path ENTRY_POINT = RUNTIME.resolve("agent-sandbox");
    /** Where the application directory is mounted inside. */
    public static final Path APP = RUNTIME.resolve("app");
    /**
     * The sandbox's first program: the launcher, started under this name in place of the
     * command, installs a seccomp filter that refuses the TIOCSTI and TIOCLINUX ioctls
     * (pushing input into the caller's terminal, which the caller's shell would run
     * after the sandbox ends) and then execs the command, same pid and arguments.
     */
    public static final Path COMMAND_START = RUNTIME.resolve("exec");
    /**
     * Where the command is, one NUL-terminated word after another, when it has more
     * arguments than bwrap's command line takes; {@link #COMMAND_START} started without
     * a command reads it from there.
     */
    public static final Path SPILLED_COMMAND = RUNTIME.resolve("command");
    /**
     * The bounds the sandbox's first program applies before it becomes the command, and
     * takes away: "MAX_PROCS MAX_MEMORY" (a count, bytes). See {@code command_start.c}.
     */
    public static final String LIMITS_VARIABLE = "AGENT_SANDBOX_LIMITS";
    /**
     * Set with {@code --share-tmp}: the sandbox's first program guards the host's sockets in
     * the shared {@code /tmp} ({@code unix_guard.h}) and takes the variable away. Its value is
     * "1", or {@link #SOCKET_GUARD_NESTED} inside another sandbox, whose guard may hold already.
     */
    public static final String SOCKET_GUARD_VARIABLE = "AGENT_SANDBOX_SOCKET_GUARD";
    /** The value of {@link #SOCKET_GUARD_VARIABLE} in a nested sandbox. */
    public static final String SOCKET_GUARD_NESTED = "nested";
    /**
     * The run's {@link Explanation} (what it shows at each path, and why), read-only: what
     * {@code agent-sandbox explain} reads inside. Written by the host side before bwrap
     * starts and never read back there.
     */
    public static final Path POLICY = RUNTIME.resolve("policy");
    /**
     * The identities of the plan's mounts, which the sandbox's first program checks before
     * the command starts ({@link MountChecks}).
     */
    public static final Path MOUNTS = RUNTIME.resolve("mounts");
    /** What the sandbox's first program mounts as the git dirs' copy-on-write views ({@code git.GitViews}). */
    public static final Path GIT_VIEWS = RUNTIME.resolve(RunLayout.GIT_VIEWS);
    /**
     * Where the layers of those views are until the first program has mounted them (then it
     * unmounts them): outside {@link #RUNTIME}, which bwrap makes read-only with all below it.
     */
    public static final Path GIT_LAYERS = Path.of("/run/agent-sandbox-git");
    /** Where the first program finds the home's layers (HOME_LAYERS in guard.h), unmounted like {@link #GIT_LAYERS}. */
    public static final Path HOME_LAYERS = Path.of("/run/agent-sandbox-homes");
    /** Where the network proxy's socket and the first program's listen file are inside. */
    public static final Path NET = RUNTIME.resolve(RunLayout.NET);
    /** The network proxy's socket inside (NET_SOCKET in guard.h). */
    public static final Path NET_SOCKET = NET.resolve(RunLayout.SOCKET);
    /** What the sandbox's first program listens on for the network (NET_LISTEN in guard.h). */
    public static final Path NET_LISTEN = NET.resolve(RunLayout.LISTEN);
    /**
     * A variable set in every sandbox for a shell prompt to show ({@link #PROMPT}), so that a
     * person sees where their shell runs. Display only: anything inside can change or unset
     * it; {@code agent-sandbox check} is the answer that cannot be fooled.
     */
    public static final String PROMPT_VARIABLE = "AGENT_SANDBOX_PROMPT";
    /**
     * A variable set in a sandbox whose network has an allow-list: its entries, comma-separated.
     * Display only: the proxy or the DNS filter outside decides, not this.
     */
    public static final String NETWORK_ALLOW_VARIABLE = "AGENT_SANDBOX_NETWORK_ALLOW";
    /** The value of {@link #PROMPT_VARIABLE}: a prefix for PS1. */
    public static final String PROMPT = "(sandbox) ";

    /**
     * The port of the network proxy on the sandbox's loopback (set in HTTP_PROXY and the like),
     * which no host port can take.
     */
    public static final int PROXY_PORT = 3128;
    /** Where the sandbox's private temp dir is, inside. */
    public static final Path TMP = Path.of("/tmp");

    /** True when this process runs inside an agent-sandbox sandbox. */
    public static boolean isInside() {
        // following links: no exception for the missing entry point outside (asked a few
        // times a start); only root could put a dangling link there outside a sandbox
        return Files.exists(ENTRY_POINT);
    }
}
