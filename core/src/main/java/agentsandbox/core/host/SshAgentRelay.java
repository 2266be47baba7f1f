// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code --ssh-agent}: the caller's ssh-agent, for listing keys and signing only.
 *
 * <p>The sandbox never reaches the agent's own socket. It gets this relay's, on the host in
 * the run's sockets directory and shown inside at the path of {@code SSH_AUTH_SOCK}, so the
 * variable keeps its value. Each connection from inside gets a connection of its own to the
 * agent; of the agent protocol's requests, only "list identities" (11) and "sign" (13) go
 * through. Adding, removing, locking, unlocking, smartcard keys and every extension are
 * answered {@code SSH_AGENT_FAILURE} (5) by the relay without a word to the agent, so
 * {@code ssh-add -D} or {@code ssh-add KEY} inside fail as with an agent that refuses.
 * With key comments named ({@code --ssh-agent=work,deploy}) the list shows only the keys
 * with those comments, and a request to sign with another key is refused.
 *
 * <p>Every message from inside is bounded ({@link #MAX_MESSAGE}), and so is the number of
 * connections open at once ({@link #MAX_CONNECTIONS}); nothing inside is trusted.
 *
 * <p>Debian's {@code ssh-agent-filter} does the same job; agent-sandbox relays itself so that
 * the relay lives and ends with the run (no daemon to start, find and stop), needs nothing
 * installed, and refuses with the agent protocol's own failure.
 */
public final class SshAgentRelay implements AutoCloseable {
    /** The agent protocol's numbers (draft-miller-ssh-agent). */
    static final int FAILURE = 5;
    static final int REQUEST_IDENTITIES = 11;
    static final int IDENTITIES_ANSWER = 12;
    static final int SIGN_REQUEST = 13;
    static final int MAX_MESSAGE = 256 * 1024;
    static final int MAX_CONNECTIONS = 32;

    /**
     * What a run relays.
     *
     * @param agent  the caller's agent socket on the host
     * @param socket the relay's socket on the host (bound in at {@code agent}'s path)
     * @param keys   the comments of the keys the sandbox may use; empty for every key
     */
    public record Spec(Path agent, Path socket, List<String> keys) {
        public Spec {
            keys = List.copyOf(keys);
        }
    }

    /** A key the agent holds. */
    public record Identity(byte[] blob, String comment) {}

    private final Spec spec;
    private final ServerSocketChannel server;
    private final AtomicInteger open = new AtomicInteger();
    private volatile boolean closed;

    private SshAgentRelay(Spec spec, ServerSocketChannel server) {
        this.spec = spec;
        this.server = server;
    }

    /**
     * The keys the named comments select, checked against the agent now: a comment that
     * names no key is an error that lists the agent's keys.
     */
    public static void checkKeys(Path agent, List<String> comments) {
        if (comments.isEmpty()) {
            return;
        }
        List<Identity> held;
        try {
            held = identities(agent);
        } catch (IOException e) {
            throw new SandboxException("--ssh-agent: cannot ask the ssh-agent at " + agent + " for its keys ("
                    + e.getMessage() + ")", "check that the agent runs (ssh-add -l), or run without --ssh-agent");
        }
        List<String> have = new ArrayList<>();
        for (Identity i : held) {
            have.add(i.comment());
        }
        for (String c : comments) {
            if (!have.contains(c)) {
                throw new SandboxException("--ssh-agent: no key in your ssh-agent has the comment \"" + c + "\" ("
                        + (have.isEmpty() ? "it holds no key" : "its keys: " + String.join(", ", have)) + ")",
                        "name keys by their comment as ssh-add -l shows it, or use --ssh-agent without keys");
            }
        }
    }

    /** The agent's keys, asked on a connection of its own. */
    public static List<Identity> identities(Path agent) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(agent))) {
            return identities(ch);
        }
    }

    private static List<Identity> identities(SocketChannel agent) throws IOException {
        write(agent, new byte[] {REQUEST_IDENTITIES});
        byte[] answer = read(agent);
        if (answer == null || answer.length == 0 || answer[0] != IDENTITIES_ANSWER) {
            throw new IOException("the agent did not list its keys");
        }
        return parseIdentities(answer);
    }

    static List<Identity> parseIdentities(byte[] answer) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(answer, 1, answer.length - 1);
        long count = Integer.toUnsignedLong(b.getInt());
        if (count > MAX_MESSAGE) {
            throw new IOException("the agent's list is not one");
        }
        List<Identity> out = new ArrayList<>();
        try {
            for (long k = 0; k < count; k++) {
                byte[] blob = string(b);
                byte[] comment = string(b);
                out.add(new Identity(blob, new String(comment, StandardCharsets.UTF_8)));
            }
        } catch (RuntimeException e) {
            throw new IOException("the agent's list is not one");
        }
        return out;
    }

    private static byte[] string(ByteBuffer b) {
        int length = b.getInt();
        if (length < 0 || length > b.remaining()) {
            throw new IllegalArgumentException("string beyond the message");
        }
        byte[] s = new byte[length];
        b.get(s);
        return s;
    }

    /** Binds the relay's socket (before bwrap starts: it is bound in) and answers on it in the background. */
    public static SshAgentRelay start(Spec spec) {
        try {
            Files.deleteIfExists(spec.socket());
            ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            server.bind(UnixDomainSocketAddress.of(spec.socket()), 64);
            SshAgentRelay relay = new SshAgentRelay(spec, server);
            Thread t = new Thread(new Runnable() {
                @Override
                public void run() {
                    relay.accept();
                }
            }, "agent-sandbox-ssh-agent");
            t.setDaemon(true);
            t.start();
            return relay;
        } catch (IOException e) {
            throw new SandboxException("--ssh-agent: cannot open the relay's socket " + spec.socket() + ": "
                    + e.getMessage(), "run without --ssh-agent, or set XDG_RUNTIME_DIR to a directory of your own");
        }
    }

    private void accept() {
        while (!closed) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (open.incrementAndGet() > MAX_CONNECTIONS) {
                open.decrementAndGet();
                closeQuietly(client);
                continue;
            }
            Thread t = new Thread(new Runnable() {
                @Override
                public void run() {
                    try {
                        serve(client);
                    } finally {
                        open.decrementAndGet();
                        closeQuietly(client);
                    }
                }
            }, "agent-sandbox-ssh-agent-connection");
            t.setDaemon(true);
            t.start();
        }
    }

    /** One connection from inside, with one of its own to the agent, request by request. */
    private void serve(SocketChannel client) {
        SocketChannel agent = null;
        try {
            while (!closed) {
                byte[] request = read(client);
                if (request == null) {
                    return;
                }
                int type = request.length == 0 ? -1 : request[0] & 0xff;
                if (type != REQUEST_IDENTITIES && type != SIGN_REQUEST) {
                    write(client, new byte[] {FAILURE});
                    continue;
                }
                if (agent == null) {
                    agent = SocketChannel.open(UnixDomainSocketAddress.of(spec.agent()));
                }
                if (type == SIGN_REQUEST && !spec.keys().isEmpty() && !allowed(agent, request)) {
                    write(client, new byte[] {FAILURE});
                    continue;
                }
                write(agent, request);
                byte[] answer = read(agent);
                if (answer == null) {
                    return;
                }
                if (type == REQUEST_IDENTITIES && !spec.keys().isEmpty() && answer.length > 0
                        && answer[0] == IDENTITIES_ANSWER) {
                    answer = selected(parseIdentities(answer));
                }
                write(client, answer);
            }
        } catch (IOException | RuntimeException e) {
            // the connection ends; the client sees its end, as with an agent gone
        } finally {
            if (agent != null) {
                closeQuietly(agent);
            }
        }
    }

    /** Whether the key a sign request names is one of the selected keys the agent holds. */
    private boolean allowed(SocketChannel agent, byte[] request) throws IOException {
        byte[] blob;
        try {
            blob = string(ByteBuffer.wrap(request, 1, request.length - 1));
        } catch (RuntimeException e) {
            return false;
        }
        for (Identity i : identities(agent)) {
            if (spec.keys().contains(i.comment()) && Arrays.equals(i.blob(), blob)) {
                return true;
            }
        }
        return false;
    }

    /** An identities answer with the selected keys only. */
    private byte[] selected(List<Identity> all) {
        List<Identity> kept = new ArrayList<>();
        int size = 5;
        for (Identity i : all) {
            if (spec.keys().contains(i.comment())) {
                kept.add(i);
                size += 8 + i.blob().length + i.comment().getBytes(StandardCharsets.UTF_8).length;
            }
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        b.put((byte) IDENTITIES_ANSWER).putInt(kept.size());
        for (Identity i : kept) {
            byte[] comment = i.comment().getBytes(StandardCharsets.UTF_8);
            b.putInt(i.blob().length).put(i.blob()).putInt(comment.length).put(comment);
        }
        return b.array();
    }

    /** One message (its body), or null at the end of the stream. */
    private static byte[] read(SocketChannel ch) throws IOException {
        ByteBuffer length = ByteBuffer.allocate(4);
        if (!fill(ch, length, true)) {
            return null;
        }
        int n = length.flip().getInt();
        if (n < 0 || n > MAX_MESSAGE) {
            throw new IOException("a message of " + Integer.toUnsignedLong(n) + " bytes");
        }
        ByteBuffer body = ByteBuffer.allocate(n);
        if (!fill(ch, body, false)) {
            throw new IOException("a message cut short");
        }
        return body.array();
    }

    private static boolean fill(SocketChannel ch, ByteBuffer b, boolean endAllowed) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                if (endAllowed && b.position() == 0) {
                    return false;
                }
                throw new IOException("a message cut short");
            }
        }
        return true;
    }

    private static void write(SocketChannel ch, byte[] body) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4 + body.length);
        b.putInt(body.length).put(body).flip();
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing to do
        }
    }

    /** Stops answering and removes the socket. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        try {
            Files.deleteIfExists(spec.socket());
        } catch (IOException e) {
            // the run's directory goes with it
        }
    }
}
