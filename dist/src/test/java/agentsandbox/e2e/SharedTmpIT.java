// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --share-tmp}: the host's temp dir at /tmp, without the host's sockets in it,
 * however deep they are.
 */
class SharedTmpIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** A host listener on a Unix socket at the path given, which greets whoever connects. */
    private static final String LISTENER = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen()
            while True:
                c, _ = s.accept()
                try:
                    c.sendall(b'hello from the host')
                except OSError:
                    pass
                c.close()
            """;

    /** Connects to each path given and prints what it read, or "refused". */
    private static final String CONNECT = """
            import socket, sys
            for path in sys.argv[1:]:
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(path)
                    print(path, s.recv(100).decode())
                except OSError as e:
                    print(path, "refused", e.strerror)
            """;

    @Test
    void A_Host_Socket_Below_Subdirectories_Of_The_Shared_Tmp_Is_Unreachable_And_The_Files_Around_It_Are_Shared() {
        Path tmp = sandbox.tmp();
        Path deep = tmp.resolve("a/b/sock");
        Path deeper = tmp.resolve("p/q/r/s/sock");
        sandbox.write(tmp.resolve("a/b/notes.txt"), "shared notes\n");
        sandbox.write(tmp.resolve("p/q/file"), "x\n");
        sandbox.mkdirs(tmp.resolve("p/q/r/s"));
        SandboxCli.Started one = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, deep.toString());
        SandboxCli.Started two = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, deeper.toString());
        try {
            awaitPath(deep);
            awaitPath(deeper);
            // the control: on the host both answer
            sandbox.runOnHost("python3", "-c", CONNECT, deep.toString(), deeper.toString()).succeeds()
                    .stdoutContains(deep + " hello from the host", deeper + " hello from the host");
            sandbox.run("--share-tmp", "--", "sh", "-c", "cat /tmp/a/b/notes.txt; python3 -c \"$1\" /tmp/a/b/sock"
                            + " /tmp/p/q/r/s/sock " + deep + " " + deeper + "; echo made > /tmp/p/q/from-inside",
                            "sh", CONNECT)
                    .succeeds().stdoutContains("shared notes\n", "/tmp/a/b/sock refused", "/tmp/p/q/r/s/sock refused")
                    .stdoutDoesNotContain("hello from the host");
            assertThat(tmp.resolve("p/q/from-inside")).hasContent("made");
        } finally {
            stop(one);
            stop(two);
        }
    }

    /** Ends a host listener; one that has ended already (its socket path refused) is fine here. */
    private static void stop(SandboxCli.Started listener) {
        if (listener.isAlive()) {
            listener.signal("KILL");
        }
    }

    private static void awaitPath(Path p) {
        for (int i = 0; i < 200 && !Files.exists(p); i++) {
            try {
                Thread.sleep(25);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        assertThat(p).as("the host's socket").exists();
    }
}
