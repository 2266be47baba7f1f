// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.Environment;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.SandboxException;
import agentsandbox.core.TestWorld;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Finding what a command rule overlays, in a temp tree of PATH directories. */
class WrappersTest {
    @TempDir
    Path tmp;

    private TestWorld w;
    private Path bin;
    private Path usrBin;
    private Path launcher;

    private void world() throws IOException {
        w = new TestWorld(tmp);
        bin = w.dir("bin");
        usrBin = w.dir("usr/bin");
        launcher = executable(w.root.resolve("app/bin/agent-sandbox"));
    }

    private static Path executable(Path p) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, "#!/bin/sh\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private Environment env(boolean installed) {
        return new Environment(w.home, w.project, Map.of("PATH", bin + ":" + usrBin + ":relative"), w.tmp, 1000,
                "Linux", installed ? new Environment.Installation(launcher, w.root.resolve("app")) : null);
    }

    private List<Wrappers.Wrapper> discover(Environment env, List<String> notes, PolicyLayer... layers) {
        Policy.Builder b = Policy.builder();
        for (PolicyLayer l : layers) {
            b.layer(l);
        }
        return Wrappers.discover(b.build(), env, null, notes);
    }

    private static PolicyLayer rule(String name, CommandRule rule) {
        return TestWorld.flags().command(name, rule).build();
    }

    @Test
    void Every_Path_On_PATH_Is_Found_Once_With_Symlinks_Resolved() throws IOException {
        world();
        Path real = executable(usrBin.resolve("tool"));
        Files.createSymbolicLink(bin.resolve("tool"), real);
        Path other = executable(w.root.resolve("opt/tool"));
        Files.createSymbolicLink(w.dir("more").resolve("tool"), other);

        List<Path> found = Wrappers.locations("tool", new Environment(w.home, w.project,
                Map.of("PATH", bin + ":" + usrBin + ":" + w.root.resolve("more")), w.tmp, 1000, "Linux", null));

        assertThat(found).containsExactly(real, other);
    }

    @Test
    void A_Non_Executable_File_Is_Not_A_Command() throws IOException {
        world();
        Files.writeString(bin.resolve("tool"), "data");
        assertThat(Wrappers.locations("tool", env(true))).isEmpty();
    }

    @Test
    void Blocked_Command_Overlays_Every_Path_And_Exposes_No_Real_Binary() throws IOException {
        world();
        Path a = executable(bin.resolve("rm"));
        Path b = executable(usrBin.resolve("rm"));
        List<String> notes = new ArrayList<>();

        List<Wrappers.Wrapper> ws = discover(env(true), notes, rule("git", new CommandRule.Unwrapped()),
                rule("rm", new CommandRule.Blocked()));

        assertThat(ws).singleElement().satisfies(x -> {
            assertThat(x.name()).isEqualTo("rm");
            assertThat(x.overlaid()).containsExactly(a, b);
            assertThat(x.realSlot()).isNull();
            assertThat(x.instruction()).isEqualTo("block\trm\t-\t-");
        });
        List<String> args = Mount.render(Wrappers.runtimeMounts(ws, null));
        assertThat(String.join(" ", args)).doesNotContain("/run/agent-sandbox/real");
        assertThat(Mount.render(Wrappers.overlayMounts(ws, launcher))).containsExactly(
                "--ro-bind", launcher.toString(), a.toString(), "--ro-bind", launcher.toString(), b.toString());
        assertThat(notes).anyMatch(n -> n.contains("command git: no wrapper"));
    }

    @Test
    void Script_Rule_Binds_The_Real_Binary_In_A_Search_Only_Directory() throws IOException {
        world();
        Path npm = executable(usrBin.resolve("npm"));
        Path guard = executable(w.home.resolve("bin/npm-guard.sh"));

        List<Wrappers.Wrapper> ws = discover(env(true), new ArrayList<>(), rule("git", new CommandRule.Unwrapped()),
                rule("npm", new CommandRule.Script("~/bin/npm-guard.sh")));

        Wrappers.Wrapper x = ws.get(0);
        assertThat(x.script()).isEqualTo(guard);
        assertThat(x.realSlot()).isEqualTo("real/1/npm");
        assertThat(x.instruction()).isEqualTo("script\tnpm\treal/1/npm\t" + guard);
        assertThat(Mount.render(Wrappers.runtimeMounts(ws, null))).containsSubsequence(
                "--perms", "0111", "--dir", "/run/agent-sandbox/cmd",
                "--perms", "0111", "--dir", "/run/agent-sandbox/real",
                "--symlink", x.instruction(), "/run/agent-sandbox/cmd/" + Wrappers.lookupName(npm),
                "--perms", "0111", "--dir", "/run/agent-sandbox/real/1",
                "--ro-bind", npm.toString(), "/run/agent-sandbox/real/1/npm");
    }

    @Test
    void Missing_Or_Non_Executable_Scripts_Are_Errors_Before_Anything_Runs() throws IOException {
        world();
        executable(usrBin.resolve("npm"));
        assertThatThrownBy(() -> discover(env(true), new ArrayList<>(), rule("npm", new CommandRule.Script("~/nope.sh"))))
                .isInstanceOf(SandboxException.class).hasMessageContaining("does not exist");
        Path plain = w.home.resolve("plain.sh");
        Files.writeString(plain, "#!/bin/sh\n");
        assertThatThrownBy(() -> discover(env(true), new ArrayList<>(), rule("npm", new CommandRule.Script("~/plain.sh"))))
                .isInstanceOf(SandboxException.class).hasMessageContaining("not executable");
    }

    @Test
    void A_Command_Found_Nowhere_Has_Nothing_To_Overlay() throws IOException {
        world();
        List<String> notes = new ArrayList<>();
        assertThat(discover(env(true), notes, rule("git", new CommandRule.Unwrapped()),
                rule("nonesuch", new CommandRule.Blocked()))).isEmpty();
        assertThat(notes).anyMatch(n -> n.contains("command nonesuch: not found on PATH"));
    }

    @Test
    void Without_A_Launcher_Only_Default_Rules_May_Go_Unapplied() throws IOException {
        world();
        executable(usrBin.resolve("rm"));
        executable(usrBin.resolve("git"));
        List<String> notes = new ArrayList<>();
        assertThat(discover(env(false), notes)).isEmpty();
        assertThat(notes).anyMatch(n -> n.contains("default rule @git not applied"));
        assertThatThrownBy(() -> discover(env(false), new ArrayList<>(), rule("rm", new CommandRule.Blocked())))
                .isInstanceOf(SandboxException.class).hasMessageContaining("needs the agent-sandbox launcher");
    }

    @Test
    void Git_Guard_Adds_The_Guard_Directory() throws IOException {
        world();
        executable(usrBin.resolve("git"));
        List<Wrappers.Wrapper> ws = discover(env(true), new ArrayList<>());
        Wrappers.Wrapper git = ws.stream().filter(x -> x.name().equals("git")).findFirst().orElseThrow();
        assertThat(git.needsGuard()).isTrue();
        assertThat(git.overlaid()).contains(usrBin.resolve("git"));
        Path guardDir = w.tmp.resolve("run/guard");
        assertThat(Mount.render(Wrappers.runtimeMounts(ws, guardDir))).containsSubsequence(
                "--ro-bind", guardDir.toString(), "/run/agent-sandbox/guard");
    }

    @Test
    void Lookup_Names_Escape_Slashes_And_Percent_Signs() {
        assertThat(Wrappers.lookupName(Path.of("/usr/bin/git"))).isEqualTo("%2Fusr%2Fbin%2Fgit");
        assertThat(Wrappers.lookupName(Path.of("/opt/a%2Fb/x"))).isEqualTo("%2Fopt%2Fa%252Fb%2Fx");
    }
}
