// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * agent-sandbox inside agent-sandbox: an inner sandbox can only tighten. The inner one
 * is started through the entry point every sandbox has.
 */
class NestedIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    static final String INNER = "/run/agent-sandbox/agent-sandbox";

    @BeforeEach
    void repository() {
        sandbox.write("a.txt", "committed\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");
        sandbox.write("a.txt", "uncommitted\n");
        sandbox.mkdirs("shared");
    }

    private static String q(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    @Test
    void An_Inner_Sandbox_Can_Make_A_Writable_Path_Read_Only() {
        sandbox.run("--", INNER, "--ro", "shared", "--", "sh", "-c", "touch shared/x")
                .fails().stderrContains("Read-only file system");
        sandbox.run("--", INNER, "--", "sh", "-c", "touch shared/y").succeeds();
        assertThat(sandbox.project("shared/y")).exists();
        assertThat(sandbox.project("shared/x")).doesNotExist();
    }

    @Test
    void An_Inner_Sandbox_Cannot_Make_A_Read_Only_Path_Writable() {
        sandbox.run("--ro", "shared", "--", INNER, "--rw", "shared", "--", "sh", "-c", "touch shared/x")
                .fails().stderrContains("Read-only file system");
        sandbox.mkdirs(sandbox.home().resolve("notes"));
        sandbox.run("--", INNER, "--rw", "~/notes", "--", "sh", "-c", "touch ~/notes/x")
                .fails().stderrContains("Read-only file system");
        assertThat(sandbox.project("shared/x")).doesNotExist();
        assertThat(sandbox.home().resolve("notes/x")).doesNotExist();
    }

    @Test
    void An_Inner_Sandbox_Cannot_Reveal_An_Excluded_Path() {
        sandbox.write("secret.txt", "s3cret\n");
        sandbox.run("--exclude", "secret.txt", "--", INNER, "--rw", "secret.txt", "--", "cat", "secret.txt")
                .fails().stderrContains("Permission denied").stdoutIsEmpty();
    }

    @Test
    void Unwrapping_Git_Inside_Leaves_The_Outer_Git_Guard_In_Force() {
        sandbox.run("--", INNER, "--cmd", "git=true", "--", "git", "checkout", "--", "a.txt")
                .fails().stderrContains("git checkout is not allowed in this sandbox");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("uncommitted\n");
    }

    @Test
    void An_Inner_Sandbox_Keeps_Outer_Blocks_And_Adds_Its_Own() {
        sandbox.write("victim.txt", "keep\n");
        sandbox.run("--cmd", "rm=false", "--", INNER, "--cmd", "rm=true", "--", "rm", "victim.txt")
                .fails().stderrContains("rm is blocked in this sandbox");
        sandbox.run("--", INNER, "--cmd", "cp=false", "--", "cp", "victim.txt", "copy.txt")
                .fails().stderrContains("cp is blocked in this sandbox");
        // the outer sandbox alone leaves cp alone
        sandbox.run("--", "cp", "victim.txt", "copy.txt").succeeds();
        assertThat(sandbox.project("victim.txt")).exists();
    }

    @Test
    void Network_Once_Off_Stays_Off() {
        sandbox.run("--network=false", "--", INNER, "--network=true", "--", "sh", "-c",
                        "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
                .succeeds().stdoutIs("lo\n");
    }

    /**
     * With the outer sandbox on its own network stack, an inner sandbox gets out through a
     * proxy of its own, and is held to its own allow-list there (npm's registry, as npm names it
     * when the test runs, reached with no list and refused with a list that does not name it).
     */
    @Test
    void An_Inner_Sandbox_Gets_Out_And_Holds_To_Its_Own_Allow_List() {
        String registry = sandbox.runOnHost("npm", "config", "get", "registry").succeeds().stdout().strip();
        assertThat(registry).as("npm's registry").startsWith("http");
        String fetch = "curl -sS -m 20 -o /dev/null -w '%{http_code}' " + registry;
        sandbox.run("--debug", "--", "sh", "-c", INNER + " -- sh -c " + q("echo inner $(" + fetch + ")") + "; "
                + INNER + " --allow-host only.example.org -- sh -c " + q("echo listed $(" + fetch + " 2>&1)"))
                .succeeds()
                .stderrContains("network: on, through a network stack of the sandbox's own")
                .stdoutContains("inner 200", "listed ")
                .stdoutDoesNotContain("listed 200");
    }

    @Test
    void Three_Levels_Deep_Every_Level_Keeps_Its_Rules() {
        String level3 = "ls >/dev/null; echo ls=$?; cp a.txt b.txt; echo cp=$?; rm -f a.txt; echo rm=$?;"
                + " git checkout -- a.txt; echo git=$?; touch shared/z; echo touch=$?; " + INNER + " check";
        String level2 = INNER + " --cmd ls=false -- sh -c " + q(level3);
        Result r = sandbox.run("--cmd", "rm=false", "--", INNER, "--cmd", "cp=false", "--ro", "shared", "--", "sh",
                "-c", level2).succeeds();
        assertThat(r.stdout()).isEqualTo("ls=1\ncp=1\nrm=1\ngit=1\ntouch=1\ninside sandbox\n");
        assertThat(r.stderr()).contains("ls is blocked", "cp is blocked", "rm is blocked",
                "git checkout is not allowed", "Read-only file system");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("uncommitted\n");
    }

    @Test
    void The_Outer_Runtime_Is_Reachable_From_The_Inner_One() {
        sandbox.run("--", INNER, "--", "sh", "-c", "test -e /run/agent-sandbox/outer/agent-sandbox && echo yes")
                .succeeds().stdoutIs("yes\n");
    }
}
