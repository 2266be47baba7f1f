// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.rules.Access;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.rules.Origin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The guard's wire protocol, as the launcher speaks it, without a socket or a sandbox. */
class GuardProtocolTest {
    private static byte[] request(String... fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String f : fields) {
            out.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }

    private static GitGuard.Request read(byte[] bytes) throws Exception {
        return GuardProtocol.readRequest(new ByteArrayInputStream(bytes));
    }

    @Test
    void Reads_The_Launchers_Request_With_The_Parents_Command_Line() throws Exception {
        GitGuard.Request r = read(request("AGS2", "/p", "/run/agent-sandbox/real/1/git", "2", "git", "stash",
                "3", "git", "reset", "--hard", "1", "HOME=/home/u"));
        assertThat(r.cwd()).isEqualTo("/p");
        assertThat(r.parentArgv()).containsExactly("git", "stash");
        assertThat(r.argv()).containsExactly("git", "reset", "--hard");
        assertThat(r.env()).isEqualTo(Map.of("HOME", "/home/u"));
    }

    @Test
    void The_First_Occurrence_Of_A_Variable_Counts_As_For_Git() throws Exception {
        GitGuard.Request r = read(request("AGS2", "/p", "", "0", "2", "git", "co", "6",
                "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=alias.co", "GIT_CONFIG_VALUE_0=checkout",
                "GIT_CONFIG_COUNT=0", "HOME=/home/u", "HOME=/elsewhere"));
        assertThat(r.env()).containsEntry("GIT_CONFIG_COUNT", "1").containsEntry("HOME", "/home/u");
    }

    /** The socket delivers a request in pieces cut anywhere, a character's bytes included. */
    @Test
    void A_Request_Cut_Anywhere_Reads_As_The_Whole() throws Exception {
        byte[] whole = request("AGS2", "/p/grüß", "", "1", "sh", "3", "git", "commit", "-m größer", "1", "HOME=/h");
        GitGuard.Request expected = read(whole);
        assertThat(expected.argv()).containsExactly("git", "commit", "-m größer");
        for (int cut = 0; cut <= whole.length; cut++) {
            GuardProtocol.RequestReader reader = new GuardProtocol.RequestReader();
            GitGuard.Request first = reader.feed(whole, 0, cut);
            GitGuard.Request r = cut == whole.length ? first : reader.feed(whole, cut, whole.length - cut);
            assertThat(r).as("cut at %d", cut).isEqualTo(expected);
        }
        GuardProtocol.RequestReader oneByOne = new GuardProtocol.RequestReader();
        GitGuard.Request last = null;
        for (int i = 0; i < whole.length; i++) {
            last = oneByOne.feed(whole, i, 1);
        }
        assertThat(last).isEqualTo(expected);
    }

    @Test
    void A_Report_Is_Read_Only_Where_Reports_Are_Taken() throws Exception {
        byte[] report = request("AGSB", "rm", "rm -rf /");
        GuardProtocol.RequestReader reader = new GuardProtocol.RequestReader(true);
        assertThat(reader.feed(report, 0, report.length)).isNull();
        assertThat(reader.report()).isEqualTo(new GuardProtocol.Report("rm", "rm -rf /"));
        // the in-sandbox guard's pipe takes requests only
        assertThatThrownBy(() -> read(report)).isInstanceOf(GuardProtocol.Malformed.class);
        GuardProtocol.RequestReader bounded = new GuardProtocol.RequestReader(true);
        byte[] big = request("AGSB", "rm", "x".repeat(GuardProtocol.MAX_REPORT));
        assertThatThrownBy(() -> bounded.feed(big, 0, big.length)).isInstanceOf(GuardProtocol.Malformed.class);
        assertThat(bounded.isReport()).isTrue();
    }

    @Test
    void Refuses_Requests_That_Break_The_Protocol() {
        assertThatThrownBy(() -> read(request("AGS1", "/p"))).isInstanceOf(GuardProtocol.Malformed.class);
        assertThatThrownBy(() -> read(request("AGS2", "/p", "", "x"))).isInstanceOf(GuardProtocol.Malformed.class);
        assertThatThrownBy(() -> read(request("AGS2", "/p", "", "0", "0", "0")))
                .isInstanceOf(GuardProtocol.Malformed.class);
        assertThatThrownBy(() -> read(request("AGS2", "/p", "", "99999999")))
                .isInstanceOf(GuardProtocol.Malformed.class);
        assertThatThrownBy(() -> read(request("AGS2", "/p", "", "0", "1")))
                .isInstanceOf(GuardProtocol.Malformed.class);
        byte[] huge = new byte[GuardProtocol.MAX_REQUEST + 10];
        System.arraycopy(request("AGS2"), 0, huge, 0, 5);
        java.util.Arrays.fill(huge, 5, huge.length, (byte) 'a');
        assertThatThrownBy(() -> read(huge)).isInstanceOf(GuardProtocol.Malformed.class);
    }

    @Test
    void Asks_Questions_And_Reads_Answers_Bounded() throws Exception {
        ByteArrayOutputStream questions = new ByteArrayOutputStream();
        byte[] answers = request("/real/path", "0 value\n", "");
        GuardProtocol.Conversation c = new GuardProtocol.Conversation(new ByteArrayInputStream(answers), questions);
        assertThat(c.realPath("/p/x")).contains("/real/path");
        assertThat(c.git(List.of("config", "--get", "alias.x"))).isEqualTo(new GitGuard.GitRun(0, "value\n"));
        assertThat(c.realPath("/gone")).isEmpty();
        assertThat(c.git(List.of("a\tb"))).isEqualTo(GitGuard.GitRun.NONE);
        c.decide(new GitGuard.Decision.Deny("no\nway"));
        assertThat(questions.toString(StandardCharsets.UTF_8))
                .isEqualTo("R /p/x\nG config\t--get\talias.x\nR /gone\nD no way\n");
    }

    @Test
    void The_Host_Maps_A_Path_Through_The_Mount_That_Shows_It() {
        Path tmpSource = Path.of("/run/user/1000/agent-sandbox-1/tmp");
        Origin o = Origin.preset("test");
        List<Mount> mounts = List.of(
                new Mount(Mount.Kind.READ_WRITE, Path.of("/home/u/p"), Path.of("/home/u/p"), Access.RW, o),
                new Mount(Mount.Kind.READ_WRITE, Path.of("/tmp/project"), Path.of("/tmp/project"), Access.RW, o));
        GuardProbe.HostView view = new GuardProbe.HostView(mounts, tmpSource, Map.of());
        assertThat(view.inPrivateTemp("/tmp/scratch/.git")).isTrue();
        assertThat(view.inPrivateTemp("/tmp")).isTrue();
        // a project in the host's /tmp, bound below the sandbox's /tmp, is not throw-away
        assertThat(view.inPrivateTemp("/tmp/project")).isFalse();
        assertThat(view.inPrivateTemp("/tmp/project/.git")).isFalse();
        assertThat(view.inPrivateTemp("/home/u/p")).isFalse();
        assertThat(view.hostLocation(Path.of("/tmp/project/a"))).isEqualTo(Path.of("/tmp/project/a"));
    }

    @Test
    void Inside_The_Deepest_Mount_At_Tmp_Is_The_Private_Temp_Dir() {
        GuardProbe.InsideView view = new GuardProbe.InsideView(List.of("/", "/tmp", "/tmp/project", "/home/u"),
                Map.of());
        assertThat(view.inPrivateTemp("/tmp/x/.git")).isTrue();
        assertThat(view.inPrivateTemp("/tmp/project/.git")).isFalse();
        assertThat(view.inPrivateTemp("/home/u/x")).isFalse();
        assertThat(new GuardProbe.InsideView(List.of("/"), Map.of()).inPrivateTemp("/tmp/x")).isFalse();
    }
}
