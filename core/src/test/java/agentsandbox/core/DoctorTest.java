// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each thing that stops sandboxes, shown to the doctor through the environment: a
 * program named bwrap on PATH that behaves like a real one of some version, or like one
 * the kernel blocks, and a directory laid out like {@code /proc/sys}.
 */
class DoctorTest {
    @TempDir
    Path tmp;

    private static final String WORKING = "case \"$1\" in --version) echo 'bubblewrap 0.8.0' ;; *) exit 0 ;; esac";

    private Path bin(String bwrapScript) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("bin-" + Math.abs(bwrapScript.hashCode())));
        Path p = dir.resolve("bwrap");
        Files.writeString(p, "#!/bin/sh\n" + bwrapScript + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return dir;
    }

    /** A kernel settings tree; a healthy machine's unless settings say otherwise (null removes one). */
    private Path procSys(String... settings) throws IOException {
        Path dir = Files.createTempDirectory(tmp, "proc-sys-");
        Map<String, String> values = new java.util.LinkedHashMap<>();
        values.put("user/max_user_namespaces", "63000");
        values.put("kernel/unprivileged_userns_clone", "1");
        values.put("kernel/seccomp/actions_avail", "kill_process kill_thread trap errno user_notif trace log allow");
        values.put("dev/tty/legacy_tiocsti", "0");
        values.put("kernel/osrelease", "6.1.0-13-amd64");
        for (int i = 0; i < settings.length; i += 2) {
            values.put(settings[i], settings[i + 1]);
        }
        for (Map.Entry<String, String> e : values.entrySet()) {
            if (e.getValue() != null) {
                Path f = dir.resolve(e.getKey());
                Files.createDirectories(f.getParent());
                Files.writeString(f, e.getValue() + "\n");
            }
        }
        return dir;
    }

    private Environment env(Path bin, Path procSys) throws IOException {
        Path home = Files.createDirectories(tmp.resolve("home"));
        return new Environment(home, home, Map.of("PATH", bin.toString()), tmp, 1000, "Linux",
                new Environment.Installation(tmp.resolve("launcher"), tmp.resolve("app"), null), procSys);
    }

    private static Doctor.Check check(List<Doctor.Check> checks, String name) {
        return checks.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no check named " + name + " in " + checks));
    }

    private static List<Doctor.Check> problems(List<Doctor.Check> checks) {
        return checks.stream().filter(c -> c.status() == Doctor.Status.PROBLEM).toList();
    }

    @Test
    void A_Healthy_Machine_Has_Every_Check_Ok() throws IOException {
        Path bin = bin(WORKING);
        Files.writeString(bin.resolve("slirp4netns"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(bin.resolve("slirp4netns"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path tun = Files.writeString(tmp.resolve("tun"), "");
        List<Doctor.Check> checks = Doctor.machine(env(bin, procSys()), tun);
        assertThat(checks).allSatisfy(c -> assertThat(c.status()).as(c.toString()).isEqualTo(Doctor.Status.OK));
        assertThat(checks).extracting(Doctor.Check::name).containsExactly("system", "user", "home", "bwrap",
                "user namespaces", "AppArmor", "seccomp", "TIOCSTI", "bounds", "git view", "network", "home views",
                "trial sandbox");
        assertThat(check(checks, "network").finding()).contains("a network stack of the sandbox's own");
        assertThat(check(checks, "bwrap").finding()).contains("bubblewrap 0.8.0");
        assertThat(check(checks, "bounds").finding()).contains("--tmp-size", "--max-procs", "--max-memory",
                "per process", "cgroup v2");
    }

    @Test
    void The_Git_View_Is_A_Warning_Where_The_Kernel_Has_None() throws IOException {
        Doctor.Check view = check(Doctor.machine(env(bin(WORKING), procSys("kernel/osrelease", "5.10.0"))),
                "git view");
        assertThat(view.status()).isEqualTo(Doctor.Status.WARNING);
        assertThat(view.finding()).contains("path by path", "5.10.0");
    }

    @Test
    void Without_A_Usable_Tun_Device_The_Network_Is_The_Proxy_With_The_Fix() throws IOException {
        Path bin = bin(WORKING);
        Files.writeString(bin.resolve("slirp4netns"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(bin.resolve("slirp4netns"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Doctor.Check network = check(Doctor.machine(env(bin, procSys()), tmp.resolve("no-tun")), "network");
        assertThat(network.status()).isEqualTo(Doctor.Status.WARNING);
        assertThat(network.finding()).contains("proxy", "there is no " + tmp.resolve("no-tun"), "not Java");
        assertThat(network.fix()).contains("modprobe tun");
    }

    @Test
    void Missing_Bwrap_Is_A_Problem_With_The_Install_Command() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        List<Doctor.Check> checks = Doctor.machine(env(empty, procSys()));
        Doctor.Check bwrap = check(checks, "bwrap");
        assertThat(bwrap.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(bwrap.finding()).contains("bwrap not found on PATH");
        assertThat(bwrap.fix()).contains("apt-get install bubblewrap");
        assertThat(check(checks, "trial sandbox").finding()).contains("not tried");
        assertThat(problems(checks)).as("the missing bwrap counts once").hasSize(1);
    }

    @Test
    void A_Bwrap_Only_In_A_Directory_The_User_Can_Write_Is_A_Problem_That_Says_Where() throws IOException {
        Path mine = Files.createDirectories(tmp.resolve("mine"));
        Files.writeString(mine.resolve("bwrap"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(mine.resolve("bwrap"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(mine, PosixFilePermissions.fromString("rwxrwxrwx")); // anyone writes it
        Doctor.Check bwrap = check(Doctor.machine(env(mine, procSys())), "bwrap");
        assertThat(bwrap.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(bwrap.finding()).contains("only at " + mine.resolve("bwrap"), "a directory you can write");
    }

    @Test
    void A_Bwrap_Older_Than_The_Options_We_Use_Is_A_Problem() throws IOException {
        List<Doctor.Check> checks = Doctor.machine(env(bin(WORKING.replace("0.8.0", "0.4.1")), procSys()));
        Doctor.Check bwrap = check(checks, "bwrap");
        assertThat(bwrap.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(bwrap.finding()).contains("0.4.1").contains("older than 0.5.0");
        assertThat(bwrap.fix()).contains("upgrade bubblewrap");
    }

    @Test
    void A_Bwrap_That_Is_Not_Bubblewrap_Is_A_Problem() throws IOException {
        Doctor.Check bwrap = check(Doctor.machine(env(bin("exit 1"), procSys())), "bwrap");
        assertThat(bwrap.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(bwrap.finding()).contains("is not bubblewrap");
    }

    @Test
    void Disabled_User_Namespaces_Are_Problems_With_The_Sysctl_That_Fixes_Them() throws IOException {
        List<Doctor.Check> max = Doctor.machine(env(bin(WORKING), procSys("user/max_user_namespaces", "0")));
        assertThat(check(max, "user namespaces").status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(check(max, "user namespaces").fix()).contains("sysctl -w user.max_user_namespaces=")
                .contains("/etc/sysctl.d/");

        List<Doctor.Check> clone = Doctor.machine(env(bin(WORKING), procSys("kernel/unprivileged_userns_clone", "0")));
        assertThat(check(clone, "user namespaces").status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(check(clone, "user namespaces").finding()).contains("kernel.unprivileged_userns_clone = 0");
        assertThat(check(clone, "user namespaces").fix()).contains("sysctl -w kernel.unprivileged_userns_clone=1");
    }

    @Test
    void AppArmor_Blocking_Bwrap_Is_A_Problem_With_The_Profile_That_Fixes_It() throws IOException {
        String blocked = "case \"$1\" in --version) echo 'bubblewrap 0.9.0' ;;"
                + " *) echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1 ;; esac";
        List<Doctor.Check> checks = Doctor.machine(env(bin(blocked),
                procSys("kernel/apparmor_restrict_unprivileged_userns", "1")));
        Doctor.Check appArmor = check(checks, "AppArmor");
        assertThat(appArmor.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(appArmor.fix()).contains("/etc/apparmor.d/bwrap").contains("userns,")
                .contains("flags=(unconfined)").contains("systemctl reload apparmor")
                .contains("kernel.apparmor_restrict_unprivileged_userns=0");
        Doctor.Check trial = check(checks, "trial sandbox");
        assertThat(trial.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(trial.finding()).contains("setting up uid map: Permission denied");
    }

    @Test
    void AppArmor_Restriction_With_Bwrap_Allowed_Is_Fine() throws IOException {
        List<Doctor.Check> checks = Doctor.machine(env(bin(WORKING),
                procSys("kernel/apparmor_restrict_unprivileged_userns", "1")));
        assertThat(check(checks, "AppArmor").status()).isEqualTo(Doctor.Status.OK);
        assertThat(check(checks, "AppArmor").finding()).contains("allows them to bwrap");
        assertThat(problems(checks)).isEmpty();
    }

    @Test
    void A_Bwrap_That_Fails_Without_AppArmor_Names_Its_Own_Message() throws IOException {
        String failing = "case \"$1\" in --version) echo 'bubblewrap 0.8.0' ;;"
                + " *) echo 'bwrap: No permissions to creating new namespace' >&2; exit 1 ;; esac";
        Doctor.Check trial = check(Doctor.machine(env(bin(failing), procSys())), "trial sandbox");
        assertThat(trial.status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(trial.finding()).contains("No permissions to creating new namespace");
        assertThat(trial.fix()).contains("user.max_user_namespaces");
    }

    @Test
    void Missing_Seccomp_Is_A_Warning_Not_A_Problem() throws IOException {
        List<Doctor.Check> checks = Doctor.machine(env(bin(WORKING), procSys("kernel/seccomp/actions_avail", null)));
        assertThat(check(checks, "seccomp").status()).isEqualTo(Doctor.Status.WARNING);
        assertThat(check(checks, "seccomp").finding()).contains("/dev/tty");
        assertThat(problems(checks)).isEmpty();
    }

    @Test
    void Legacy_Tiocsti_On_Is_A_Warning_With_The_Sysctl() throws IOException {
        List<Doctor.Check> on = Doctor.machine(env(bin(WORKING), procSys("dev/tty/legacy_tiocsti", "1")));
        assertThat(check(on, "TIOCSTI").status()).isEqualTo(Doctor.Status.WARNING);
        assertThat(check(on, "TIOCSTI").fix()).contains("sysctl -w dev.tty.legacy_tiocsti=0");
        assertThat(problems(on)).isEmpty();

        List<Doctor.Check> old = Doctor.machine(env(bin(WORKING), procSys("dev/tty/legacy_tiocsti", null)));
        assertThat(check(old, "TIOCSTI").status()).isEqualTo(Doctor.Status.OK);
    }

    @Test
    void No_Home_Root_Or_Another_System_Are_Problems() throws IOException {
        Environment good = env(bin(WORKING), procSys());
        Environment noHome = new Environment(null, good.workDir(), good.hostEnv(), tmp, 1000, "Linux", null,
                good.procSys());
        assertThat(check(Doctor.machine(noHome), "home").status()).isEqualTo(Doctor.Status.PROBLEM);
        assertThat(check(Doctor.machine(noHome), "home").fix()).contains("HOME");

        Environment goneHome = new Environment(tmp.resolve("gone"), good.workDir(), good.hostEnv(), tmp, 1000, "Linux",
                null, good.procSys());
        assertThat(check(Doctor.machine(goneHome), "home").finding()).contains("does not exist");

        Environment root = new Environment(good.home(), good.workDir(), good.hostEnv(), tmp, 0, "Linux", null,
                good.procSys());
        assertThat(check(Doctor.machine(root), "user").status()).isEqualTo(Doctor.Status.PROBLEM);

        Environment mac = new Environment(good.home(), good.workDir(), good.hostEnv(), tmp, 1000, "Mac OS X", null,
                good.procSys());
        assertThat(check(Doctor.machine(mac), "system").finding()).contains("only on Linux");
    }

    @Test
    void Versions_Compare_By_Number() {
        assertThat(Doctor.compareVersions("0.10.0", "0.9.1")).isPositive();
        assertThat(Doctor.compareVersions("0.5.0", "0.5")).isZero();
        assertThat(Doctor.compareVersions("0.4.1", "0.5.0")).isNegative();
        assertThat(Doctor.compareVersions("0.11.0-rc1", "0.11.0")).isZero();
    }
}
