// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Checks that the machine can run a sandbox at all, each with an actionable message. */
public final class Preflight {
    private Preflight() {}

    public static final String INSTALL_HINT =
            "install bubblewrap: 'sudo apt-get install bubblewrap' (Debian/Ubuntu), "
                    + "'sudo dnf install bubblewrap' (Fedora), 'sudo pacman -S bubblewrap' (Arch)";

    /** The bwrap executable on the caller's PATH, in a directory no sandbox can write ({@link HostPrograms}), or null. */
    public static Path findBwrap(Environment env) {
        return HostPrograms.find(env.env("PATH").orElse(null), "bwrap", env.uid());
    }

    public static void checkCanRun(Environment env) {
        if (!env.osName().toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            throw new SandboxException("agent-sandbox runs only on Linux (this is " + env.osName() + ")",
                    "bubblewrap needs Linux namespaces");
        }
        if (env.uid() == 0) {
            throw new SandboxException("refusing to run as root",
                    "run it as your normal user; root inside a sandbox defeats its purpose");
        }
        if (findBwrap(env) == null) {
            Path writable = HostPrograms.untrusted(env.env("PATH").orElse(null), "bwrap", env.uid());
            if (writable != null) {
                throw new SandboxException("bwrap is on your PATH only at " + writable + ", in a directory you can"
                        + " write, where a sandbox may have put it: agent-sandbox runs no program from there", INSTALL_HINT);
            }
            throw new SandboxException("bwrap not found on PATH", INSTALL_HINT);
        }
        checkUserNamespaces(env.procSys());
    }

    /** Fails when a kernel setting certainly forbids unprivileged user namespaces. */
    static void checkUserNamespaces(Path procSys) {
        if ("0".equals(read(procSys.resolve("user/max_user_namespaces")))) {
            throw new SandboxException("user namespaces are disabled (user.max_user_namespaces = 0)",
                    "enable them: 'sudo sysctl -w user.max_user_namespaces=15000', and make it permanent in /etc/sysctl.d/");
        }
        if ("0".equals(read(procSys.resolve("kernel/unprivileged_userns_clone")))) {
            throw new SandboxException(
                    "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
                    "enable them: 'sudo sysctl -w kernel.unprivileged_userns_clone=1', and make it permanent in /etc/sysctl.d/");
        }
    }

    /**
     * Explains why bwrap could not create a sandbox, after it failed. Returns null when a
     * minimal sandbox does start (then the failure was the command's own).
     */
    public static SandboxException explainFailure(Path bwrap, Path procSys) {
        ProcessBuilder pb = new ProcessBuilder(bwrap.toString(), "--unshare-user", "--ro-bind", "/", "/", "--",
                "/bin/true");
        pb.redirectErrorStream(true);
        pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        String output;
        int status;
        try {
            Process p = pb.start();
            output = new String(p.getInputStream().readNBytes(4096), StandardCharsets.UTF_8).strip();
            status = p.waitFor();
        } catch (IOException e) {
            return new SandboxException("bwrap could not be started: " + e.getMessage(), INSTALL_HINT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        if (status == 0) {
            return null;
        }
        String first = output.lines().findFirst().orElse("no message");
        if ("1".equals(read(procSys.resolve("kernel/apparmor_restrict_unprivileged_userns")))) {
            return new SandboxException("bwrap cannot create a user namespace: AppArmor restricts unprivileged"
                    + " user namespaces (" + first + ")",
                    "give bwrap a profile that allows user namespaces, /etc/apparmor.d/bwrap containing"
                            + " 'abi <abi/4.0>, include <tunables/global> profile bwrap /usr/bin/bwrap"
                            + " flags=(unconfined) { userns, }', then 'sudo systemctl reload apparmor';"
                            + " or lift the restriction for everything:"
                            + " 'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0'");
        }
        return new SandboxException("bwrap cannot create a sandbox (" + first + ")",
                "check that unprivileged user namespaces are enabled (sysctl user.max_user_namespaces,"
                        + " kernel.unprivileged_userns_clone), that no AppArmor/SELinux policy blocks bwrap,"
                        + " and that you are not inside a container that forbids nested namespaces");
    }

    /** A short kernel setting, or null when it is missing (asked on every start: no exception then). */
    private static String read(Path p) {
        String text = HostRead.kernelFile(p, 64);
        return text == null ? null : text.strip();
    }
}
