// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checks before a sandbox starts. Kernel settings are read from a directory laid out
 * like {@code /proc/sys}, so each refusal can be shown on any machine; the failing bwrap
 * is a program that fails the way a bwrap blocked by the kernel does.
 */
class PreflightTest {
    @TempDir
    Path tmp;

    private Environment env(String path, int uid, String os) {
        return new Environment(tmp, tmp, Map.of("PATH", path), tmp, uid, os, null);
    }

    private Path executable(String name, String script) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("bin"));
        Path p = dir.resolve(name);
        Files.writeString(p, "#!/bin/sh\n" + script + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private Path procSys(String... settings) throws IOException {
        Path dir = Files.createTempDirectory(tmp, "proc-sys-");
        for (int i = 0; i < settings.length; i += 2) {
            Path f = dir.resolve(settings[i]);
            Files.createDirectories(f.getParent());
            Files.writeString(f, settings[i + 1] + "\n");
        }
        return dir;
    }

    @Test
    void Refuses_Other_Systems_Than_Linux() {
        assertThatThrownBy(() -> Preflight.checkCanRun(env("/usr/bin", 1000, "Mac OS X")))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("only on Linux").hasMessageContaining("Mac OS X");
    }

    @Test
    void Refuses_Root() {
        assertThatThrownBy(() -> Preflight.checkCanRun(env("/usr/bin", 0, "Linux")))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("root");
    }

    /**
     * A program agent-sandbox runs on the host is taken only from a directory no sandbox of
     * the user can have written: not one the user owns (a project's .venv/bin), nor one below
     * such a directory, nor one its group or anyone can write (unless sticky, like /tmp, where
     * the entry below is judged by its own owner); the checks say where the other one is.
     */
    @Test
    void A_Program_In_A_Directory_The_User_Can_Write_Is_Not_Run() throws Exception {
        int user = 4242;
        Path project = Files.createDirectories(tmp.resolve("project"));
        Path venv = Files.createDirectories(project.resolve(".venv/bin"));
        Path planted = venv.resolve("bwrap");
        Files.writeString(planted, "#!/bin/sh\ntouch pwned\n");
        Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path system = executable("bwrap", "exit 0").getParent(); // root's, in a sticky /tmp
        String path = venv + ":" + system;

        // the project is the user's: its .venv/bin and all below are skipped, even where root owns them
        Files.setOwner(project, project.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("4242"));
        assertThat(HostPrograms.find(path, "bwrap", user)).isEqualTo(system.resolve("bwrap").toRealPath());
        assertThat(HostPrograms.find(venv.toString(), "bwrap", user)).isNull();
        assertThat(HostPrograms.trustedPath(path, user)).isEqualTo(system.toString());
        SandboxException e = catchSandbox(() -> Preflight.checkCanRun(env(venv.toString(), user, "Linux")));
        assertThat(e.getMessage()).contains("only at " + planted).contains("a directory you can write");
        assertThat(e.oneLine()).contains("apt-get install bubblewrap");

        // nor from a directory its group or anyone can write, nor through a link into one
        Path shared = Files.createDirectories(tmp.resolve("shared"));
        Files.copy(planted, shared.resolve("bwrap"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        assertThat(HostPrograms.find(shared.toString(), "bwrap", user)).isNull();
        Path linked = Files.createDirectories(tmp.resolve("linked"));
        Files.createSymbolicLink(linked.resolve("bwrap"), planted);
        assertThat(HostPrograms.find(linked.toString(), "bwrap", user)).isNull();
        assertThat(Preflight.findBwrap(env(linked + ":" + system, user, "Linux")))
                .isEqualTo(system.resolve("bwrap").toRealPath());
    }

    @Test
    void Missing_Bwrap_Says_How_To_Install_It() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        SandboxException e = catchSandbox(() -> Preflight.checkCanRun(env(empty.toString(), 1000, "Linux")));
        assertThat(e.getMessage()).contains("bwrap not found");
        assertThat(e.oneLine()).contains("apt-get install bubblewrap");
    }

    @Test
    void Bwrap_Is_Found_On_The_Callers_Path_Skipping_Relative_Entries() throws IOException {
        Path bwrap = executable("bwrap", "exit 0");
        assertThat(Preflight.findBwrap(env("relative:" + bwrap.getParent(), 1000, "Linux"))).isEqualTo(bwrap);
        assertThat(Preflight.findBwrap(env("bin", 1000, "Linux"))).isNull();
    }

    @Test
    void Disabled_User_Namespaces_Are_Named_With_The_Fix() throws IOException {
        Path maxOff = procSys("user/max_user_namespaces", "0");
        SandboxException max = catchSandbox(() -> Preflight.checkUserNamespaces(maxOff));
        assertThat(max.oneLine()).contains("user.max_user_namespaces = 0").contains("sysctl -w");

        Path cloneOff = procSys("user/max_user_namespaces", "1000", "kernel/unprivileged_userns_clone", "0");
        SandboxException clone = catchSandbox(() -> Preflight.checkUserNamespaces(cloneOff));
        assertThat(clone.oneLine()).contains("kernel.unprivileged_userns_clone = 0").contains("sysctl -w");
    }

    @Test
    void Usual_Settings_And_Missing_Files_Pass() throws IOException {
        assertThatCode(() -> Preflight.checkUserNamespaces(procSys(
                "user/max_user_namespaces", "63000", "kernel/unprivileged_userns_clone", "1"))).doesNotThrowAnyException();
        assertThatCode(() -> Preflight.checkUserNamespaces(tmp.resolve("nowhere"))).doesNotThrowAnyException();
    }

    @Test
    void A_Blocked_Bwrap_Under_AppArmor_Is_Explained_With_The_Fix() throws IOException {
        Path bwrap = executable("bwrap", "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1");
        SandboxException e = Preflight.explainFailure(bwrap,
                procSys("kernel/apparmor_restrict_unprivileged_userns", "1"));
        assertThat(e).isNotNull();
        assertThat(e.oneLine()).contains("AppArmor").contains("setting up uid map: Permission denied")
                .contains("apparmor_restrict_unprivileged_userns=0");
    }

    @Test
    void A_Blocked_Bwrap_Elsewhere_Lists_The_Usual_Causes() throws IOException {
        Path bwrap = executable("bwrap", "echo 'bwrap: No permissions to creating new namespace' >&2; exit 1");
        SandboxException e = Preflight.explainFailure(bwrap, procSys());
        assertThat(e).isNotNull();
        assertThat(e.oneLine()).contains("No permissions to creating new namespace")
                .contains("user.max_user_namespaces").contains("AppArmor");
    }

    @Test
    void A_Working_Bwrap_Means_The_Failure_Was_The_Commands_Own() throws IOException {
        assertThat(Preflight.explainFailure(executable("bwrap", "exit 0"), procSys())).isNull();
    }

    private static SandboxException catchSandbox(Runnable r) {
        try {
            r.run();
        } catch (SandboxException e) {
            return e;
        }
        throw new AssertionError("expected a SandboxException");
    }
}
