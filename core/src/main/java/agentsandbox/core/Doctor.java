// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.git.GitViews;
import agentsandbox.core.homes.HomeLayers;
import agentsandbox.core.homes.HomeViews;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.host.NetStack;
import agentsandbox.core.host.Preflight;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What stops sandboxes on this machine, each finding with its fix: the checks of
 * {@code agent-sandbox doctor} that concern the machine (system, user, home, bwrap,
 * kernel settings, a trial sandbox). Kernel settings are read from
 * {@link Environment#procSys()} and bwrap is the one on the environment's PATH, so each
 * failure can be shown with a directory laid out like {@code /proc/sys} and a program
 * named bwrap.
 */
public final class Doctor {
    private Doctor() {}

    /** The oldest bubblewrap with every option agent-sandbox passes ({@code --perms} came in 0.5.0). */
    public static final String MINIMUM_BWRAP = "0.5.0";

    /** How a check came out. */
    public enum Status {
        /** fine */
        OK,
        /** sandboxes run, but something is worth changing */
        WARNING,
        /** sandboxes cannot run until this is fixed */
        PROBLEM
    }

    /**
     * One check.
     *
     * @param name    what was checked, a word or two
     * @param status  how it came out
     * @param finding what was found, one line
     * @param fix     how to fix it, or empty when there is nothing to do
     */
    public record Check(String name, Status status, String finding, String fix) {
        static Check ok(String name, String finding) {
            return new Check(name, Status.OK, finding, "");
        }
    }

    /** The bwrap on the environment's PATH, or null. */
    public static Path findBwrap(Environment env) {
        return Preflight.findBwrap(env);
    }

    /**
     * The version bwrap reports ({@code 0.8.0} from {@code bubblewrap 0.8.0}), or null
     * when it does not run or says something else.
     */
    public static String bwrapVersion(Path bwrap) {
        ProcessBuilder pb = new ProcessBuilder(bwrap.toString(), "--version");
        pb.redirectErrorStream(true);
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readNBytes(256), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(5, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            if (p.exitValue() != 0 || !out.startsWith("bubblewrap ")) {
                return null;
            }
            String v = out.substring("bubblewrap ".length()).strip();
            int end = v.indexOf('\n');
            return end < 0 ? v : v.substring(0, end).strip();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Compares dotted versions numerically ({@code 0.10.0} after {@code 0.9.1}); a non-number part counts as 0. */
    static int compareVersions(String a, String b) {
        String[] x = a.split("\\.");
        String[] y = b.split("\\.");
        for (int i = 0; i < Math.max(x.length, y.length); i++) {
            int c = Integer.compare(number(x, i), number(y, i));
            if (c != 0) {
                return c;
            }
        }
        return 0;
    }

    private static int number(String[] parts, int i) {
        if (i >= parts.length) {
            return 0;
        }
        String p = parts[i];
        int end = 0;
        while (end < p.length() && end < 9 && Character.isDigit(p.charAt(end))) {
            end++;
        }
        return end == 0 ? 0 : Integer.parseInt(p.substring(0, end));
    }

    /** Every machine check, in the order a reader fixes them. */
    public static List<Check> machine(Environment env) {
        return machine(env, Path.of("/dev/net/tun"));
    }

    /** Every machine check, with {@code tun} as the tun device. */
    static List<Check> machine(Environment env, Path tun) {
        List<Check> checks = new ArrayList<>();
        boolean linux = env.osName().toLowerCase(Locale.ROOT).contains("linux");
        checks.add(linux ? Check.ok("system", env.osName())
                : new Check("system", Status.PROBLEM, "agent-sandbox runs only on Linux (this is " + env.osName() + ")",
                        "run it on Linux: bubblewrap needs Linux namespaces"));
        checks.add(env.uid() == 0
                ? new Check("user", Status.PROBLEM, "running as root, which agent-sandbox refuses",
                        "run it as your normal user; root inside a sandbox defeats its purpose")
                : Check.ok("user", "uid " + env.uid()));
        checks.add(home(env));
        Path bwrap = findBwrap(env);
        Check bwrapCheck = bwrap(env, bwrap);
        checks.add(bwrapCheck);
        Check namespaces = userNamespaces(env.procSys());
        checks.add(namespaces);
        String restrict = read(env.procSys().resolve("kernel/apparmor_restrict_unprivileged_userns"));
        Check trial = null;
        if (linux && bwrapCheck.status() != Status.PROBLEM && namespaces.status() != Status.PROBLEM) {
            trial = trial(bwrap, env.procSys());
        }
        checks.add(appArmor(restrict, trial));
        checks.add(seccomp(env.procSys()));
        checks.add(tiocsti(env.procSys()));
        checks.add(bounds(env.procSys(), Path.of("/sys/fs/cgroup"), Path.of("/proc/self/cgroup")));
        checks.add(gitView(env));
        checks.add(network(env, tun));
        checks.add(homeView(env));
        checks.add(trial != null ? trial
                : new Check("trial sandbox", Status.WARNING, "not tried: fix the problems above first", ""));
        return checks;
    }

    /** Which protection the project's git dir gets: a copy-on-write view, or path by path. */
    static Check gitView(Environment env) {
        String why = GitViews.unavailable(env, Inside.isInside());
        return why == null
                ? Check.ok("git view", "the project's git dir is a copy-on-write view inside; the host takes only"
                        + " new objects and ref updates that lose no commit")
                : new Check("git view", Status.WARNING, "the project's git dir is protected path by path (" + why + ")",
                        "a kernel 5.11 or later and the installed agent-sandbox give the copy-on-write view");
    }

    /** How a sandbox with the network on gets out: its own network stack, or the proxy and what that loses. */
    static Check network(Environment env, Path tun) {
        NetStack stack;
        try {
            stack = NetStack.choose(env, tun);
        } catch (SandboxException e) {
            return new Check("network", Status.PROBLEM, e.getMessage(), e.hint());
        }
        if (stack.stack() && !Files.isRegularFile(tun)) {
            // the mode allows it; whether the device opens (a container's device rules may not)
            try (java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(tun,
                    java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
                // opened: nothing is made until a program asks the device for an interface
            } catch (IOException | RuntimeException e) {
                return new Check("network", Status.PROBLEM, tun + " cannot be opened (" + e.getMessage() + "), so a"
                        + " sandbox with the network on cannot start its network stack", "let this user open " + tun
                        + " (in a container: pass the device in), or set " + NetStack.CHOICE + "=" + NetStack.PROXY
                        + " for the proxy");
            }
        }
        if (stack.stack()) {
            return Check.ok("network", "a network stack of the sandbox's own (" + stack.program() + "): DNS, TCP and"
                    + " UDP for every program; the host's loopback, its own addresses and link-local addresses"
                    + " unreachable");
        }
        if (stack.fallback() == null) {
            return Check.ok("network", "agent-sandbox's proxy, as " + NetStack.CHOICE + "=" + NetStack.PROXY
                    + " asks: only programs that use HTTP_PROXY get out");
        }
        return new Check("network", Status.WARNING, "agent-sandbox's proxy, since " + stack.fallback()
                + ": only programs that use HTTP_PROXY get out (not Java, Maven, Gradle, ssh, getent)", stack.fix());
    }

    /**
     * Which protection the home's granted directories get: copy-on-write views, or the
     * fallback. The layers' file system must keep the overlay's marks (user extended
     * attributes): a file is marked there and read back.
     */
    static Check homeView(Environment env) {
        String why = HomeViews.unavailable(env, Inside.isInside());
        Path root = HomeLayers.root(env);
        if (why == null && root != null) {
            why = HomeLayers.unusable(root);
        }
        return why == null
                ? Check.ok("home views", "what @caches and @agents grant is copy-on-write: sandboxes' changes stay in "
                        + root + " (agent-sandbox changes lists them); no program outside a sandbox sees them")
                : new Check("home views", Status.WARNING, "fallback: what @caches and @agents grant is the host's,"
                        + " writable, with code and settings kept read-only path by path (" + why + "); a sandbox can"
                        + " still leave data there that host tools read", "a kernel 5.11 or later, the installed"
                        + " agent-sandbox and a home on a local file system (ext4, xfs, btrfs) give copy-on-write homes");
    }

    private static Check home(Environment env) {
        if (env.home() == null) {
            return new Check("home", Status.PROBLEM, "no home directory (HOME is not set)",
                    "set HOME to your home directory, or turn the @base preset off in the config ("
                            + "\"presets\": [\"!@base\"])");
        }
        if (!Files.isDirectory(env.home())) {
            return new Check("home", Status.PROBLEM, "the home directory " + env.home() + " does not exist",
                    "create it, or set HOME to your home directory");
        }
        return Check.ok("home", env.home().toString());
    }

    private static Check bwrap(Environment env, Path bwrap) {
        if (bwrap == null) {
            Path writable = agentsandbox.core.host.HostPrograms.untrusted(env.env("PATH").orElse(null), "bwrap",
                    env.uid());
            if (writable != null) {
                return new Check("bwrap", Status.PROBLEM, "bwrap is on PATH only at " + writable + ", in a directory"
                        + " you can write, where a sandbox may have put it: agent-sandbox runs no program from there",
                        Preflight.INSTALL_HINT);
            }
            return new Check("bwrap", Status.PROBLEM, "bwrap not found on PATH ("
                    + env.env("PATH").orElse("PATH unset") + ")", Preflight.INSTALL_HINT);
        }
        String version = bwrapVersion(bwrap);
        if (version == null) {
            return new Check("bwrap", Status.PROBLEM, bwrap + " does not run or is not bubblewrap ("
                    + bwrap + " --version did not print 'bubblewrap VERSION')",
                    "reinstall bubblewrap: " + Preflight.INSTALL_HINT);
        }
        if (compareVersions(version, MINIMUM_BWRAP) < 0) {
            return new Check("bwrap", Status.PROBLEM, bwrap + " is bubblewrap " + version + ", older than "
                    + MINIMUM_BWRAP + " (agent-sandbox needs its --perms option)",
                    "upgrade bubblewrap to " + MINIMUM_BWRAP + " or newer (sudo apt-get install --only-upgrade bubblewrap,"
                            + " or build it from https://github.com/containers/bubblewrap)");
        }
        return Check.ok("bwrap", bwrap + ", bubblewrap " + version);
    }

    static Check userNamespaces(Path procSys) {
        String max = read(procSys.resolve("user/max_user_namespaces"));
        if ("0".equals(max)) {
            return new Check("user namespaces", Status.PROBLEM, "disabled (user.max_user_namespaces = 0)",
                    "sudo sysctl -w user.max_user_namespaces=15000, and put user.max_user_namespaces=15000"
                            + " in /etc/sysctl.d/90-agent-sandbox.conf to keep it");
        }
        if ("0".equals(read(procSys.resolve("kernel/unprivileged_userns_clone")))) {
            return new Check("user namespaces", Status.PROBLEM,
                    "disabled for unprivileged users (kernel.unprivileged_userns_clone = 0)",
                    "sudo sysctl -w kernel.unprivileged_userns_clone=1, and put kernel.unprivileged_userns_clone=1"
                            + " in /etc/sysctl.d/90-agent-sandbox.conf to keep it");
        }
        return Check.ok("user namespaces", max == null ? "enabled" : "enabled (user.max_user_namespaces = " + max + ")");
    }

    /** The AppArmor profile that lets bwrap create user namespaces when the kernel restricts them. */
    static final String APPARMOR_PROFILE = "abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap"
            + " flags=(unconfined) { userns, include if exists <local/bwrap> }";

    private static Check appArmor(String restrict, Check trial) {
        if (!"1".equals(restrict)) {
            return Check.ok("AppArmor", restrict == null ? "no user namespace restriction in this kernel"
                    : "does not restrict user namespaces (kernel.apparmor_restrict_unprivileged_userns = " + restrict + ")");
        }
        if (trial != null && trial.status() == Status.OK) {
            return Check.ok("AppArmor", "restricts unprivileged user namespaces, and allows them to bwrap");
        }
        return new Check("AppArmor", trial == null ? Status.WARNING : Status.PROBLEM,
                "restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"
                        + (trial == null ? "" : " and bwrap has no profile that allows them"),
                "write /etc/apparmor.d/bwrap containing '" + APPARMOR_PROFILE
                        + "' (adjust /usr/bin/bwrap to where bwrap is), then sudo systemctl reload apparmor;"
                        + " or lift the restriction for every program:"
                        + " sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0");
    }

    private static Check seccomp(Path procSys) {
        String actions = read(procSys.resolve("kernel/seccomp/actions_avail"));
        if (actions != null && (" " + actions + " ").contains(" errno ")) {
            return Check.ok("seccomp", "available: sandboxed commands cannot push input into your terminal (TIOCSTI)");
        }
        return new Check("seccomp", Status.WARNING,
                "seccomp filters are unavailable (no errno action in kernel.seccomp.actions_avail): sandboxed"
                        + " commands run in a session of their own instead, so they have no /dev/tty",
                "use a kernel built with CONFIG_SECCOMP_FILTER (every distribution kernel is)");
    }

    /**
     * What bounds a sandbox's resources here. /tmp (a tmpfs of --tmp-size) and the process
     * count (RLIMIT_NPROC, which the kernel counts per user namespace) hold everywhere; memory
     * is bounded per process (RLIMIT_DATA). A bound on the sandbox's memory as a whole needs a
     * cgroup v2 subtree delegated to the user, which is said when there is one.
     */
    static Check bounds(Path procSys, Path cgroupRoot, Path selfCgroup) {
        String inotify = read(procSys.resolve("fs/inotify/max_user_instances"));
        String finding = "/tmp in memory of at most --tmp-size; processes at most --max-procs per sandbox (its user"
                + " namespace's RLIMIT_NPROC); memory at most --max-memory per process (RLIMIT_DATA), not for the"
                + " sandbox as a whole; inotify instances shared with your other programs"
                + (inotify == null ? "" : " (" + inotify + " for your user)");
        String delegated = delegatedCgroup(cgroupRoot, selfCgroup);
        if (delegated != null) {
            return new Check("bounds", Status.OK, finding + "; a cgroup v2 subtree is delegated to you (" + delegated
                    + "), which agent-sandbox does not use yet", "");
        }
        boolean unified = Files.exists(cgroupRoot.resolve("cgroup.controllers"));
        return new Check("bounds", Status.OK, finding + "; no cgroup v2 subtree is delegated to you ("
                + (unified ? "the cgroup of this process is not yours to write" : "cgroup v2 is not the only hierarchy")
                + ")", "");
    }

    /** The cgroup v2 directory of this process when it is writable (delegated to the user), or null. */
    private static String delegatedCgroup(Path cgroupRoot, Path selfCgroup) {
        String self = read(selfCgroup);
        if (self == null || !Files.exists(cgroupRoot.resolve("cgroup.controllers"))) {
            return null;
        }
        for (String line : self.split("\n")) {
            if (line.startsWith("0::/")) {
                Path dir = cgroupRoot.resolve(line.substring(4));
                return Files.isWritable(dir) && Files.isWritable(dir.resolve("cgroup.procs")) ? dir.toString() : null;
            }
        }
        return null;
    }

    private static Check tiocsti(Path procSys) {
        String legacy = read(procSys.resolve("dev/tty/legacy_tiocsti"));
        if ("1".equals(legacy)) {
            return new Check("TIOCSTI", Status.WARNING,
                    "legacy TIOCSTI is on (dev.tty.legacy_tiocsti = 1): programs outside a sandbox can push input"
                            + " into terminals; sandboxed commands are still stopped by agent-sandbox",
                    "sudo sysctl -w dev.tty.legacy_tiocsti=0, and put dev.tty.legacy_tiocsti=0 in"
                            + " /etc/sysctl.d/90-agent-sandbox.conf to keep it");
        }
        return Check.ok("TIOCSTI", legacy == null
                ? "this kernel always allows it; agent-sandbox stops it for sandboxed commands"
                : "legacy TIOCSTI is off (dev.tty.legacy_tiocsti = " + legacy + ")");
    }

    /** Starts a sandbox with the namespaces and mounts every run uses, running /bin/true. */
    static Check trial(Path bwrap, Path procSys) {
        List<String> argv = List.of(bwrap.toString(), "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run", "--", "/bin/true");
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.redirectErrorStream(true);
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        String output;
        try {
            Process p = pb.start();
            output = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Check("trial sandbox", Status.PROBLEM, "bwrap did not finish within 10 s", "");
            }
            if (p.exitValue() == 0) {
                return Check.ok("trial sandbox", "bwrap started a sandbox and ran /bin/true in it");
            }
        } catch (IOException e) {
            return new Check("trial sandbox", Status.PROBLEM, "bwrap could not be started: " + e.getMessage(),
                    Preflight.INSTALL_HINT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Check("trial sandbox", Status.PROBLEM, "interrupted", "");
        }
        SandboxException why = Preflight.explainFailure(bwrap, procSys);
        String first = SandboxException.printable(output.lines().findFirst().orElse("no message"));
        if (why != null) {
            return new Check("trial sandbox", Status.PROBLEM, why.getMessage(), why.hint() == null ? "" : why.hint());
        }
        return new Check("trial sandbox", Status.PROBLEM, "bwrap creates a user namespace but not a whole sandbox ("
                + first + ")", "if this runs in a container, allow it to mount /proc and create namespaces"
                        + " (for Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined)");
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.US_ASCII).strip();
        } catch (IOException | SecurityException e) {
            return null;
        }
    }
}
