// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The guard's serving side on a real Unix socket, without a sandbox: bounded, and always an answer or a close. */
class GuardServerTest {
    @TempDir
    Path dir;

    private static final GuardProbe.TempView NOWHERE = new GuardProbe.TempView() {
        @Override
        public boolean inPrivateTemp(String resolved) {
            return false;
        }

        @Override
        public String sandboxEnv(String name) {
            return null;
        }
    };

    private static byte[] request(String... fields) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String f : fields) {
            out.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            out.write(0);
        }
        return out.toByteArray();
    }

    private static SocketChannel connect(Path socket) throws Exception {
        for (int i = 0; i < 200; i++) {
            if (Files.exists(socket)) {
                SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    ch.connect(UnixDomainSocketAddress.of(socket));
                    return ch;
                } catch (java.net.ConnectException e) {
                    ch.close(); // backlog full: try again, as the launcher does
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("the guard never listened");
    }

    /** Sends the bytes and reads the first answer line, or "closed". */
    private static String ask(Path socket, byte[] bytes) throws Exception {
        try (SocketChannel ch = connect(socket)) {
            ByteBuffer out = ByteBuffer.wrap(bytes);
            while (out.hasRemaining()) {
                ch.write(out);
            }
            ByteBuffer in = ByteBuffer.allocate(4096);
            StringBuilder line = new StringBuilder();
            while (ch.read(in) >= 0) {
                in.flip();
                while (in.hasRemaining()) {
                    char c = (char) in.get();
                    if (c == '\n') {
                        return line.toString();
                    }
                    line.append(c);
                }
                in.clear();
            }
            return "closed";
        } catch (IOException e) {
            return "closed";
        }
    }

    private static long guardThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("agent-sandbox-git-guard")).count();
    }

    @Test
    void Answers_Requests_While_Flooded_With_Idle_Connections_On_A_Fixed_Set_Of_Threads() throws Exception {
        Path socket = dir.resolve("socket");
        try (GuardServer server = GuardServer.on(socket, NOWHERE)) {
            server.listen();
            List<SocketChannel> idle = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                SocketChannel ch = connect(socket);
                ch.write(ByteBuffer.wrap(request("AGS2", "/p")));
                idle.add(ch);
            }
            long threads = guardThreads();

            assertThat(ask(socket, request("AGS2", "/p", "", "0", "2", "git", "status", "0"))).isEqualTo("A");
            assertThat(ask(socket, request("AGS2", "/p", "", "0", "3", "git", "branch", "-D", "0")))
                    .startsWith("D git branch -D is not allowed");
            assertThat(ask(socket, request("AGS1", "/p"))).startsWith("D the git guard received a malformed request");
            assertThat(ask(socket, request("AGS2", "/p", "", "x"))).startsWith("D ");
            assertThat(threads).isLessThanOrEqualTo(2 + GuardServer.WORKERS);
            for (SocketChannel ch : idle) {
                ch.close();
            }
        }
        assertThat(Files.exists(socket)).isFalse();
    }

    /**
     * The reports of blocked commands' calls are the sandbox's word: kept only for a command
     * the sandbox blocks, bounded in number and length, never as a git refusal; a broken or
     * oversized report is closed and kept nowhere.
     */
    @Test
    void Keeps_Bounded_Reports_Of_Blocked_Commands_Only() throws Exception {
        Path socket = dir.resolve("socket");
        try (GuardServer server = GuardServer.on(socket, NOWHERE, java.util.Set.of("rm"))) {
            server.listen();
            assertThat(ask(socket, request("AGSB", "rm", "rm -rf /\u001b[2J\tx"))).isEqualTo("A");
            assertThat(ask(socket, request("AGSB", "curl", "curl evil"))).startsWith("D ");
            assertThat(ask(socket, request("AGSB", "rm", "x".repeat(GuardProtocol.MAX_REPORT)))).isEqualTo("closed");
            assertThat(ask(socket, request("AGSB", "rm", "rm a", "more"))).isEqualTo("closed");
            assertThat(ask(socket, request("AGSB", "rm", "r".repeat(GuardProtocol.REPORT_LINE + 500))))
                    .isEqualTo("A");
            for (int i = 0; i < GuardServer.MAX_RECORDED + 20; i++) {
                assertThat(ask(socket, request("AGSB", "rm", "rm " + i))).isEqualTo("A");
            }
            List<String> kept = server.reportedBlocked();
            assertThat(kept).hasSize(GuardServer.MAX_RECORDED);
            assertThat(kept.get(0)).isEqualTo("rm\trm -rf /\u001b[2J x");
            assertThat(kept.get(1)).hasSize("rm\t".length() + GuardProtocol.REPORT_LINE + "...".length());
            assertThat(server.reportedCount()).isEqualTo(GuardServer.MAX_RECORDED + 22);
            assertThat(server.refusals()).isEmpty();
            assertThat(server.refusedCount()).isZero();
            // and git requests are answered as before
            assertThat(ask(socket, request("AGS2", "/p", "", "0", "2", "git", "status", "0"))).isEqualTo("A");
        }
    }

    @Test
    void A_Launcher_That_Never_Answers_A_Question_Is_Cut_Off_In_Time() throws Exception {
        Path socket = dir.resolve("socket");
        try (GuardServer server = GuardServer.on(socket, NOWHERE)) {
            server.listen();
            // an unknown subcommand makes the guard ask the real git about an alias; nobody answers
            try (SocketChannel ch = connect(socket)) {
                ch.write(ByteBuffer.wrap(request("AGS2", "/p", "", "0", "2", "git", "frobnicate", "0")));
                ByteBuffer in = ByteBuffer.allocate(4096);
                assertThat(ch.read(in)).isPositive(); // the question
                assertThat(new String(in.array(), 0, in.position(), StandardCharsets.UTF_8))
                        .startsWith("G config\t--get\talias.frobnicate\n");
                long start = System.nanoTime();
                in.clear();
                while (ch.read(in) >= 0) {
                    in.clear();
                }
                long waited = (System.nanoTime() - start) / 1_000_000;
                assertThat(waited).isLessThan(GuardProtocol.CONNECTION_MILLIS + 3000);
            }
            // and the guard still answers others
            assertThat(ask(socket, request("AGS2", "/p", "", "0", "2", "git", "status", "0"))).isEqualTo("A");
        }
    }

    /**
     * A refusal that may still be allowed (a repository in the sandbox's temp dir) needs
     * git's answer: the reader cannot decide it alone and a worker decides it from the
     * start, asking the launcher; the answer decides.
     */
    @Test
    void A_Decision_That_Needs_The_Launchers_Answer_Is_Made_With_It() throws Exception {
        GuardProbe.TempView temp = new GuardProbe.TempView() {
            @Override
            public boolean inPrivateTemp(String resolved) {
                return resolved.startsWith("/tmp/");
            }

            @Override
            public String sandboxEnv(String name) {
                return null;
            }
        };
        Path socket = dir.resolve("socket");
        try (GuardServer server = GuardServer.on(socket, temp)) {
            server.listen();
            for (String where : List.of("/tmp/r/.git", "/home/u/r/.git")) {
                try (SocketChannel ch = connect(socket)) {
                    ch.write(ByteBuffer.wrap(request("AGS2", "/tmp/r", "", "0", "4", "git", "branch", "-D", "x", "0")));
                    ByteBuffer in = ByteBuffer.allocate(4096);
                    assertThat(ch.read(in)).isPositive();
                    assertThat(new String(in.array(), 0, in.position(), StandardCharsets.UTF_8))
                            .startsWith("G rev-parse\t--path-format=absolute\t--git-dir");
                    String top = where.substring(0, where.length() - "/.git".length());
                    ch.write(ByteBuffer.wrap(request("0 " + where + "\n" + where + "\n" + top + "\n")));
                    String line;
                    // then where each of them resolves to: as named
                    while ((line = readLine(ch)).startsWith("R ")) {
                        ch.write(ByteBuffer.wrap(request(line.substring(2))));
                    }
                    if (where.startsWith("/tmp/")) {
                        assertThat(line).as(where).isEqualTo("A");
                    } else {
                        assertThat(line).as(where).startsWith("D git branch -D is not allowed");
                    }
                }
            }
        }
    }

    /** One line from the guard, byte by byte, without its newline; "closed" at the end of the stream. */
    private static String readLine(SocketChannel ch) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        StringBuilder line = new StringBuilder();
        while (true) {
            one.clear();
            if (ch.read(one) < 0) {
                return "closed";
            }
            char c = (char) one.get(0);
            if (c == '\n') {
                return line.toString();
            }
            line.append(c);
        }
    }

    /**
     * Plays the launcher for one request: answers each question as a sandbox where
     * {@code x} is an alias of {@code checkout} and no program {@code git-x} exists would,
     * and returns every line the guard sent, its answer last.
     */
    private static List<String> transcript(Path socket, byte[] request) throws Exception {
        List<String> lines = new ArrayList<>();
        try (SocketChannel ch = connect(socket)) {
            ch.write(ByteBuffer.wrap(request));
            while (true) {
                String line = readLine(ch);
                lines.add(line);
                if (line.startsWith("G ")) {
                    String answer = line.contains("alias.x") ? "0 checkout\n"
                            : line.contains("--list-cmds") ? "0 add\ncommit\n" : "128 ";
                    ch.write(ByteBuffer.wrap(request(answer)));
                } else if (line.startsWith("R ")) {
                    ch.write(ByteBuffer.wrap(request("")));
                } else {
                    return lines;
                }
            }
        }
    }

    /**
     * The host side never looks at a host path a request names: a request whose PATH
     * points at a directory the sandbox cannot see (say ~/.ssh) gets the same questions
     * and the same answer whether {@code DIR/git-x} exists there or not.
     */
    @Test
    void A_Request_Learns_Nothing_Of_Host_Files_From_Its_Path() throws Exception {
        Path hidden = Files.createDirectories(dir.resolve("hidden"));
        Path socket = dir.resolve("socket");
        byte[] request = request("AGS2", "/p", "", "0", "2", "git", "x", "1", "PATH=" + hidden);
        try (GuardServer server = GuardServer.on(socket, NOWHERE)) {
            server.listen();
            List<String> without = transcript(socket, request);
            Path program = Files.writeString(hidden.resolve("git-x"), "#!/bin/sh\n");
            program.toFile().setExecutable(true);
            List<String> with = transcript(socket, request);

            assertThat(with).isEqualTo(without);
            assertThat(without.get(without.size() - 1)).startsWith("D git checkout is not allowed");
        }
    }

    @Test
    void Maps_Nothing_When_Plan_Has_No_Temp_Source() {
        assertThat(new GuardProbe.HostView(List.of(), null, Map.of()).inPrivateTemp("/tmp/x")).isFalse();
    }
}
