// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.host.NetStack;

import agentsandbox.core.plan.BwrapCommand;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Bounds;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxPlanTest {
    @TempDir
    Path tmp;

    private static String line(Plan p) {
        return p.shellLine();
    }

    /** The argv with the per-run directory name replaced, for comparisons. */
    private static String stable(Plan p) {
        return p.shellLine().replace(p.runtimeDir().getFileName().toString(), "RUN");
    }

    @Test
    void Fixed_Part_Comes_First_With_Root_Before_Dev_And_Proc() {
        TestWorld w = new TestWorld(tmp);
        List<String> argv = w.plan().argv();
        // without an installed launcher to seal the terminal, a session of its own does
        assertThat(argv.subList(1, 13)).containsExactly("--die-with-parent", "--unshare-all",
                "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/run");
        assertThat(argv.subList(argv.size() - 4, argv.size()))
                .containsExactly("--chdir", w.project.toString(), "--", "true");
    }

    @Test
    void Network_Never_Shares_The_Hosts_Namespace_And_On_Goes_Through_The_Proxy() {
        TestWorld w = new TestWorld(tmp);
        Path launcher = w.file("app/bin/agent-sandbox");
        // the proxy by choice: where no network stack can run, the same plan is made
        Environment env = new Environment(w.home, w.project, Map.of(NetStack.CHOICE, NetStack.PROXY), w.tmp, 1000,
                "Linux", new Environment.Installation(launcher, w.root.resolve("app")));
        Plan off = w.plan(env, TestWorld.flags().network(false).build());
        Plan on = w.plan(env, TestWorld.project().network(false).build(), TestWorld.flags().network(true).build());
        assertThat(w.plan().netSocket()).as("without the launcher nothing connects to a proxy").isNull();
        assertThat(off.argv()).doesNotContain("--share-net");
        assertThat(on.argv()).doesNotContain("--share-net");
        assertThat(off.netSocket()).isNull();
        assertThat(off.shellLine()).doesNotContain("HTTPS_PROXY");
        assertThat(on.netSocket()).isEqualTo(Path.of("/tmp/agent-sandbox-1000", on.runtimeDir().getFileName()
                .toString(), "net/socket"));
        assertThat(on.shellLine()).contains("--ro-bind " + on.netSocket().getParent() + " /run/agent-sandbox/net")
                .contains("--setenv HTTPS_PROXY http://127.0.0.1:3128").contains("--setenv no_proxy localhost,");
        assertThat(on.netStack()).isNull();
    }

    @Test
    void Host_Session_Variables_Are_Not_Passed_On_And_Their_Sockets_Are_Hidden() throws Exception {
        TestWorld w = new TestWorld(tmp);
        Path socketDir = w.dir("home/.local/state/x");
        Path socket = socketDir.resolve("x.sock");
        try (java.nio.channels.ServerSocketChannel ch = java.nio.channels.ServerSocketChannel.open(
                java.net.StandardProtocolFamily.UNIX)) {
            ch.bind(java.net.UnixDomainSocketAddress.of(socket));
            Environment env = new Environment(w.home, w.project, Map.of("TMUX", "/tmp/tmux-1000/default,1,0",
                    "DISPLAY", ":0", "MY_SOCKET", socket.toString(), "DBUS_SESSION_BUS_ADDRESS",
                    "unix:path=" + socket + ",guid=1", "HOME", w.home.toString()), w.tmp, 1000, "Linux", null);
            String s = line(w.plan(env));
            assertThat(s).contains("--unsetenv TMUX", "--unsetenv DISPLAY", "--unsetenv MY_SOCKET",
                    "--unsetenv DBUS_SESSION_BUS_ADDRESS", "--ro-bind /dev/null " + socket).doesNotContain(
                    "--unsetenv HOME");
        }
    }

    @Test
    void Tmp_Is_Private_Unless_Shared_And_Then_Every_Rule_Holds_At_Tmp_Too() {
        TestWorld w = new TestWorld(tmp);
        w.file("tmp/proj/.env");
        Plan own = w.plan();
        // a file system in memory of the run's own, bounded: nothing of the host's disk
        assertThat(line(own)).containsPattern("--size [0-9]+ --tmpfs /tmp ")
                .doesNotContain(" " + own.runtimeDir().resolve("tmp") + " ");
        assertThat(own.tmpSource()).isEqualTo(own.runtimeDir().resolve("tmp"));
        Plan bounded = w.plan(TestWorld.flags().bounds(new Bounds(8L << 20, 64L, 1L << 30)).build());
        // the process and memory bounds go to the launcher, which this world has not
        assertThat(line(bounded)).contains("--size 8388608 --tmpfs /tmp ").doesNotContain(Inside.LIMITS_VARIABLE);
        Plan shared = w.plan(TestWorld.flags().shareTmp(true).exclude(w.tmp + "/proj/.env").build());
        String s = line(shared);
        assertThat(s).contains("--bind " + w.tmp + " /tmp").contains("--ro-bind " + shared.hiddenFile() + " "
                + w.tmp.resolve("proj/.env")).contains("--ro-bind " + shared.hiddenFile() + " /tmp/proj/.env");
        assertThat(shared.tmpSource()).isEqualTo(w.tmp);
    }

    @Test
    void Agent_Sandboxs_Own_State_Is_Hidden_Whatever_The_Rules() {
        TestWorld w = new TestWorld(tmp);
        Plan p = w.plan(TestWorld.flags().rw("~").build());
        Path state = w.home.resolve(".local/state/agent-sandbox");
        String s = line(p);
        assertThat(p.runtimeDir().startsWith(state)).isTrue();
        assertThat(s.indexOf("--tmpfs " + state)).isGreaterThan(s.indexOf("--bind-try " + w.home + " " + w.home));
    }

    @Test
    void Same_Inputs_Give_The_Same_Line_But_For_The_Runtime_Directory_Name() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/biome.json");
        w.file("home/project/packages/a/x.json");
        w.file("home/project/packages/b/x.json");
        w.dir("home/.cache");
        PolicyLayer l = TestWorld.project().ro("packages/*/x.json").exclude(".env").rw("~/.cache").build();
        Plan a = w.plan(l);
        Plan b = w.plan(l);
        assertThat(a.runtimeDir()).isNotEqualTo(b.runtimeDir());
        assertThat(a.runtimeDir().getParent()).isEqualTo(w.home.resolve(".local/state/agent-sandbox/run"));
        assertThat(stable(a)).isEqualTo(stable(b));
    }

    @Test
    void Default_Plan_Mounts_Workdir_Rw_Hides_Secrets_And_Gives_A_Private_Tmp() {
        TestWorld w = new TestWorld(tmp);
        w.dir("home/.ssh");
        w.file("home/.aws");
        Plan p = w.plan();
        String s = stable(p);
        Path run = p.runtimeDir().resolveSibling("RUN");
        assertThat(s).contains("--bind-try " + w.project + " " + w.project);
        assertThat(s).contains("--tmpfs " + w.home.resolve(".ssh"));
        assertThat(s).contains("--ro-bind " + run + "/hidden " + w.home.resolve(".aws"));
        assertThat(s).containsPattern("--size [0-9]+ --tmpfs /tmp ");
        assertThat(s).contains("--setenv TMPDIR /tmp");
        assertThat(s).doesNotContain(" " + w.tmp + " ");
    }

    @Test
    void Plan_Is_Minimal_Ro_Under_The_Ro_Root_Is_Not_Mounted() {
        TestWorld w = new TestWorld(tmp);
        Plan p = w.plan(TestWorld.flags().ro("/usr/share").build());
        assertThat(p.mounts()).noneMatch(m -> m.target().equals(Path.of("/usr/share")));
        assertThat(p.notes()).anyMatch(n -> n.contains("/usr/share") && n.contains("unchanged"));
    }

    @Test
    void Paths_Under_Tmp_Are_Mounted_Because_Tmp_Is_Private() {
        // The test world lives under /tmp: inside the sandbox /tmp is a private one, so
        // the home must be bound explicitly.
        TestWorld w = new TestWorld(tmp);
        assertThat(w.home.startsWith("/tmp")).isTrue();
        assertThat(w.plan().mounts()).anyMatch(m -> m.target().equals(w.home) && m.access() == Access.RO);
    }

    @Test
    void Plan_Is_Minimal_Rw_Under_Rw_And_Ro_Under_Ro_Bind_Are_Dropped() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/sub/file");
        w.file("home/shared/lib/x");
        Plan p = w.plan(TestWorld.project().rw("sub").ro("~/shared").rw("~/shared/lib").ro("~/shared/lib/x")
                .build());
        List<Path> targets = p.mounts().stream().map(Mount::target).toList();
        assertThat(targets).doesNotContain(w.project.resolve("sub"), w.home.resolve("shared"));
        assertThat(targets).contains(w.home.resolve("shared/lib"), w.home.resolve("shared/lib/x"));
    }

    @Test
    void Deeper_Path_Beats_Shallower_By_Being_Mounted_After_It() {
        TestWorld w = new TestWorld(tmp);
        w.dir("home/.config/nvim");
        Plan p = w.plan(TestWorld.project().exclude("~/.config").rw("~/.config/nvim").build());
        String s = line(p);
        int shallow = s.indexOf("--tmpfs " + w.home.resolve(".config") + " ");
        int deep = s.indexOf("--bind-try " + w.home.resolve(".config/nvim"));
        assertThat(shallow).isPositive();
        assertThat(deep).isGreaterThan(shallow);
    }

    @Test
    void Mounts_Are_Ordered_Shallow_To_Deep() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/a/b/c/d");
        w.file("home/project/z");
        Plan p = w.plan(TestWorld.project().ro("a/b/c/d").ro("z").ro("a/b").exclude("a/b/c").build());
        List<Integer> depths = p.mounts().stream().filter(m -> m.origin().layer() == Layer.PROJECT)
                .map(m -> m.target().getNameCount()).toList();
        assertThat(depths).hasSize(4).isSorted();
    }

    @Test
    void Exact_Pattern_Beats_Glob_For_The_Same_Path() {
        TestWorld w = new TestWorld(tmp);
        w.file("home/project/a.json");
        Plan p = w.plan(TestWorld.project().rw("a.json").build(), TestWorld.flags().ro("*.json").build());
        // exact rw (project) wins over glob ro (flags): rw under the rw workdir needs no mount
        assertThat(p.mounts()).noneMatch(m -> m.target().equals(w.project.resolve("a.json")));
        assertThat(p.notes()).anyMatch(n -> n.contains("a.json") && n.contains("overrides ro"));
    }

    @Test
    void Symlinks_Are_Resolved_And_The_Rule_Applies_To_The_Target() throws Exception {
        TestWorld w = new TestWorld(tmp);
        Path target = w.file("real/secret.txt");
        Files.createSymbolicLink(w.project.resolve("link.txt"), target);
        Plan p = w.plan(TestWorld.project().exclude("link.txt").build());
        assertThat(p.mounts()).anyMatch(m -> m.target().equals(target) && m.kind() == Mount.Kind.UNREADABLE_FILE);
    }

    @Test
    void Missing_Paths_And_Empty_Globs_Are_Skipped_Silently() {
        TestWorld w = new TestWorld(tmp);
        Plan p = w.plan(TestWorld.project().ro("nope").exclude("*.missing").rw("~/nothing/*").build());
        assertThat(p.notes()).anyMatch(n -> n.contains("nope") && n.contains("does not exist"));
        assertThat(p.notes()).anyMatch(n -> n.contains("*.missing") && n.contains("matches nothing"));
    }

    @Test
    void Workdir_Inside_An_Excluded_Path_Is_Refused_Whatever_Deeper_Rules_Say() {
        TestWorld w = new TestWorld(tmp);
        Path sub = w.dir("home/project/secret/work");
        assertThatThrownBy(() -> w.plan(w.env(sub), TestWorld.project().exclude(w.project + "/secret")
                .rw(sub.toString()).build()))
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("lies inside the excluded path");
        assertThatThrownBy(() -> w.plan(TestWorld.project().exclude(".").build()))
                .hasMessageContaining("is excluded");
    }

    @Test
    void Reserved_Runtime_Path_Is_Refused_Whether_Or_Not_It_Exists() {
        TestWorld w = new TestWorld(tmp);
        assertThatThrownBy(() -> w.plan(TestWorld.flags().ro("/run/agent-sandbox/x").build()))
                .hasMessageContaining("reserved");
        assertThatThrownBy(() -> w.plan(TestWorld.flags().rw("/run/agent-sandbox").build()))
                .hasMessageContaining("reserved");
    }

    @Test
    void Rules_In_Proc_Are_Refused_Whether_Or_Not_The_Path_Exists_In_Flags_And_Config_Alike() {
        TestWorld w = new TestWorld(tmp);
        for (String path : List.of("/proc/self/environ", "/proc/self", "/proc", "/proc/sys/kernel",
                "/proc/no-such-entry", "/proc/*/environ")) {
            assertThatThrownBy(() -> w.plan(TestWorld.flags().exclude(path).build()))
                    .as(path).isInstanceOf(SandboxException.class)
                    .hasMessageStartingWith("--exclude " + path)
                    .hasMessageContaining("/proc in the sandbox is its own process file system");
            assertThatThrownBy(() -> w.plan(TestWorld.project().ro(path).build()))
                    .as(path).hasMessageStartingWith("project.json: rule 'ro " + path + "'")
                    .hasMessageContaining("/proc in the sandbox is its own process file system");
        }
    }

    @Test
    void Rule_Reaching_Proc_Through_A_Link_Names_The_Link_And_Where_It_Leads() throws Exception {
        TestWorld w = new TestWorld(tmp);
        Path link = Files.createSymbolicLink(w.project.resolve("env"), Path.of("/proc/self/environ"));
        assertThatThrownBy(() -> w.plan(TestWorld.flags().exclude("env").build()))
                .hasMessageStartingWith("--exclude env is a link to /proc/")
                .hasMessageContaining("/environ: /proc in the sandbox is its own process file system");
        assertThat(link).isSymbolicLink();
    }

    @Test
    void Rules_Replacing_The_Sandboxs_Own_Dev_Run_Or_Root_Are_Refused_Below_Them_Allowed() {
        TestWorld w = new TestWorld(tmp);
        for (String path : List.of("/dev", "/run")) {
            for (PolicyLayer l : List.of(TestWorld.flags().ro(path).build(), TestWorld.flags().rw(path).build(),
                    TestWorld.flags().exclude(path).build())) {
                assertThatThrownBy(() -> w.plan(l)).as(path)
                        .hasMessageContaining(path + " in the sandbox is a fresh file system of its own");
            }
        }
        assertThatThrownBy(() -> w.plan(TestWorld.flags().rw("/").build()))
                .hasMessage("--rw /: / is the host root, read-only in every sandbox: a rule on / itself would also"
                        + " cover the sandbox's own /dev, /proc and /run");
        assertThatThrownBy(() -> w.plan(TestWorld.flags().exclude("/").build())).hasMessageContaining("host root");
        // below them, and in /sys, rules bind what they name
        String s = line(w.plan(TestWorld.flags().rw("/dev/null").exclude("/sys/kernel").ro("/").build()));
        assertThat(s).contains("--bind-try /dev/null /dev/null").contains("--tmpfs /sys/kernel");
        assertThat(s).as("ro / is what the root is: not bound again over /dev, /proc, /run")
                .doesNotContain("--ro-bind-try / /");
        assertThat(line(w.plan(TestWorld.flags().ro("/").ro("/dev/null").build())))
                .as("a rule below a fresh file system still binds, whatever is above it")
                .contains("--ro-bind-try /dev/null /dev/null");
    }

    @Test
    void Working_Directory_That_Base_Cannot_Make_Writable_Is_Refused_With_The_Fix() {
        TestWorld w = new TestWorld(tmp);
        assertThatThrownBy(() -> w.plan(w.env(Path.of("/"))))
                .isInstanceOf(SandboxException.class)
                .hasMessage("the working directory is /, and preset @base makes the working directory writable:"
                        + " here, the whole machine")
                .extracting(e -> ((SandboxException) e).hint())
                .isEqualTo("cd into a project directory first, or name one with -C DIR");
        assertThatThrownBy(() -> w.plan(w.env(Path.of("/proc/self"))))
                .hasMessageStartingWith("the working directory /proc/")
                .hasMessageContaining("cannot be made writable (preset @base): /proc in the sandbox");
        assertThatThrownBy(() -> w.plan(w.env(Path.of("/run"))))
                .hasMessageContaining("the working directory /run cannot be made writable");
        Plan without = w.plan(w.env(Path.of("/")), TestWorld.project().preset("!@base").build());
        assertThat(String.join(" ", without.argv())).doesNotContain("--bind-try / /").endsWith("--chdir / -- true");
    }

    @Test
    void Missing_Home_With_Base_Is_Refused_But_Fine_Without_Base() {
        TestWorld w = new TestWorld(tmp);
        Environment noHome = new Environment(tmp.resolve("gone"), w.project, Map.of(), w.tmp, 1000, "Linux", null);
        assertThatThrownBy(() -> w.plan(noHome)).hasMessageContaining("home directory");
        Plan p = w.plan(noHome, TestWorld.project().preset("!@all").preset("@lint/ts").build());
        assertThat(p.argv()).doesNotContain("TMPDIR");
    }

    @Test
    void Loaded_Config_Files_And_Project_Configs_Stay_Read_Only() {
        TestWorld w = new TestWorld(tmp);
        Path projectConfig = w.file("home/project/.agent-sandbox.json");
        Path elsewhere = w.file("home/project/conf/custom.json");
        Policy policy = Policy.builder().configFile(elsewhere).build();
        Plan p = Sandbox.plan(policy, w.env(), List.of("true"));
        assertThat(p.mounts()).anyMatch(m -> m.target().equals(projectConfig) && m.access() == Access.RO);
        assertThat(p.mounts()).anyMatch(m -> m.target().equals(elsewhere) && m.access() == Access.RO);
    }

    @Test
    void Config_Files_In_A_Shared_Temp_Dir_Stay_Read_Only_Where_It_Appears_At_Tmp() {
        TestWorld w = new TestWorld(tmp);
        Path config = w.file("tmp/conf/custom.json");
        Policy policy = Policy.builder().configFile(config).layer(TestWorld.flags().shareTmp(true).build()).build();
        Plan p = Sandbox.plan(policy, w.env(), List.of("true"));
        assertThat(p.mounts()).anyMatch(m -> config.equals(m.source())
                && m.target().equals(Path.of("/tmp/conf/custom.json")) && m.access() == Access.RO);
        String s = line(p);
        assertThat(s.indexOf("--ro-bind " + config + " /tmp/conf/custom.json"))
                .isGreaterThan(s.indexOf("--bind " + w.tmp + " /tmp"));
    }

    @Test
    void Runtime_Is_Reserved_And_Read_Only_With_The_Entry_Point() {
        TestWorld w = new TestWorld(tmp);
        Path launcher = w.file("app/bin/agent-sandbox");
        Environment env = new Environment(w.home, w.project, Map.of(), w.tmp, 1000, "Linux",
                new Environment.Installation(launcher, w.root.resolve("app")));
        String s = line(w.plan(env, TestWorld.flags().command("git", new CommandRule.Unwrapped()).build()));
        assertThat(s).contains("--tmpfs /run/agent-sandbox --ro-bind " + launcher
                + " /run/agent-sandbox/agent-sandbox --ro-bind " + w.root.resolve("app")
                + " /run/agent-sandbox/app --symlink agent-sandbox /run/agent-sandbox/exec --ro-bind "
                + w.home.resolve(".local/state/agent-sandbox/run"));
        assertThat(s).containsPattern("/run/([0-9a-f]{16})/policy /run/agent-sandbox/policy --ro-bind "
                + "[^ ]*/run/\\1/mounts /run/agent-sandbox/mounts --ro-bind [^ ]*/run/\\1/git-views"
                + " /run/agent-sandbox/git-views --bind [^ ]*/homes /run/agent-sandbox-homes --ro-bind"
                + " /tmp/agent-sandbox-1000/");
        assertThat(s).contains("/net /run/agent-sandbox/net --remount-ro /run/agent-sandbox");
    }

    @Test
    void Command_Too_Long_For_Bwrap_Is_Spilled_To_The_Runtime_When_The_Launcher_Can_Read_It() {
        TestWorld w = new TestWorld(tmp);
        Path launcher = w.file("app/bin/agent-sandbox");
        Environment env = new Environment(w.home, w.project, Map.of(), w.tmp, 1000, "Linux",
                new Environment.Installation(launcher, w.root.resolve("app")));
        List<String> command = new java.util.ArrayList<>(List.of("echo"));
        for (int i = 0; i < BwrapCommand.MAX_ARGS; i++) {
            command.add("word " + i);
        }

        Plan spilled = Sandbox.plan(Policy.builder().build(), env, command);
        assertThat(spilled.spilledCommand()).isEqualTo(command);
        assertThat(spilled.argv().size()).isLessThan(BwrapCommand.MAX_ARGS);
        assertThat(String.join(" ", spilled.argv())).contains("--ro-bind " + spilled.runtimeDir().resolve("command")
                + " /run/agent-sandbox/command --remount-ro /run/agent-sandbox ");
        assertThat(spilled.argv()).endsWith("--chdir", w.project.toString(), "--", "/run/agent-sandbox/exec");

        Plan plain = Sandbox.plan(Policy.builder().build(), env, command.subList(0, 100));
        assertThat(plain.spilledCommand()).isEmpty();
        assertThat(plain.argv()).endsWith("word 98");

        // without the launcher nothing inside can read the file: a clear error instead
        assertThatThrownBy(() -> Sandbox.plan(Policy.builder().build(), w.env(), command))
                .isInstanceOf(SandboxException.class).hasMessageContaining("more than bwrap accepts");
    }

    @Test
    void With_The_Launcher_Installed_It_Starts_The_Command_And_The_Terminal_Stays_The_Callers() {
        TestWorld w = new TestWorld(tmp);
        Path launcher = w.file("app/bin/agent-sandbox");
        Environment env = new Environment(w.home, w.project, Map.of(), w.tmp, 1000, "Linux",
                new Environment.Installation(launcher, w.root.resolve("app")));
        List<String> argv = w.plan(env, TestWorld.flags().build()).argv();
        assertThat(argv).doesNotContain("--new-session");
        assertThat(argv.subList(argv.size() - 5, argv.size()))
                .containsExactly("--chdir", w.project.toString(), "--", "/run/agent-sandbox/exec", "true");
    }

    @Test
    void Docker_On_Without_A_Socket_Is_An_Error() {
        TestWorld w = new TestWorld(tmp);
        Environment env = new Environment(w.home, w.project, Map.of("DOCKER_HOST", "unix://" + tmp + "/none.sock"),
                w.tmp, 1000, "Linux", null);
        assertThatThrownBy(() -> w.plan(env, TestWorld.flags().docker(true).build()))
                .hasMessageContaining("no Docker socket");
    }

    @Test
    void Docker_Off_Masks_An_Existing_Socket_With_Dev_Null() {
        TestWorld w = new TestWorld(tmp);
        Path sock = w.file("docker.sock");
        Environment env = new Environment(w.home, w.project, Map.of("DOCKER_HOST", "unix://" + sock), w.tmp, 1000,
                "Linux", null);
        assertThat(line(w.plan(env))).contains("--ro-bind /dev/null " + sock);
        assertThat(line(w.plan(env, TestWorld.flags().docker(true).build()))).contains("--bind-try " + sock + " " + sock);
    }
}
