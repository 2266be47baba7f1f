// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.guard.GuardServer;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.rules.HostPattern;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The only way out of a sandbox with the network on. The sandbox has a network namespace
 * of its own: its own loopback, no route anywhere, and none of the host's loopback
 * services or abstract Unix sockets. Its first program listens on the sandbox's
 * {@code 127.0.0.1:}{@value Inside#PROXY_PORT} (set in {@code HTTP_PROXY}, {@code HTTPS_PROXY},
 * {@code ALL_PROXY}) and on each host port the user granted, and hands every connection
 * over the Unix socket {@code /run/agent-sandbox/net/socket} to this server, in the
 * agent-sandbox process outside, which connects in the host's network.
 *
 * <p>Wire: the first program sends one line, {@code P} (a proxy client follows) or
 * {@code H <port>} (a connection to a granted host port), then the bytes of the
 * connection. A proxy client speaks HTTP: {@code CONNECT host:port} opens a tunnel (any
 * port: TLS, ssh through {@code nc -X connect}, …); an absolute-form request
 * ({@code GET http://host/…}) is forwarded once, with {@code Connection: close}.
 *
 * <p>Destinations on this machine are refused, whatever name leads there: loopback,
 * the unspecified address, link-local (cloud metadata services), multicast and every
 * address of the host's own interfaces. The name is resolved here once and the checked
 * address is the one connected to. Every request is bounded: its head in size
 * ({@value #HEAD_LIMIT} bytes) and time, the connections in number
 * ({@value #MAX_CONNECTIONS}); a hostile or malformed one gets an error answer or a
 * closed connection.
 *
 * <p>With an allow-list ({@link HostPattern}), a request for a host the list does not name
 * is refused (403) by the name the client asked for, before anything is resolved, and kept
 * for the denial log ({@link #refusals()}).
 */
public final class NetworkProxy implements AutoCloseable {
    /** The first line of a connection from a proxy client (NET_PROXY_CLIENT in guard.h). */
    public static final String PROXY_CLIENT = "P";
    /** The first line's start, before the port, of a connection to a host port (NET_HOST_CLIENT). */
    public static final String HOST_CLIENT = "H ";
    /** The listen file's words for the proxy's port and a host port (NET_LISTEN_PROXY, NET_LISTEN_PORT). */
    public static final String LISTEN_PROXY = "proxy";
    public static final String LISTEN_PORT = "port";
    static final int MAX_CONNECTIONS = 256;
    static final int HEAD_LIMIT = 64 * 1024;
    static final long HEAD_TIMEOUT_MILLIS = 30_000;
    static final int CONNECT_TIMEOUT_MILLIS = 15_000;
    /** Most refusals kept for the denial log (the rest are counted). */
    public static final int MAX_REFUSALS = 1000;

    private final Path socket;
    private final Set<Integer> hostPorts;
    private final AtomicInteger active = new AtomicInteger();
    private final Object lock = new Object();
    private ServerSocketChannel server;
    private boolean closed;
    private volatile Set<InetAddress> local;
    private final List<String> allowHosts;
    private final List<String> refusals = new ArrayList<>();
    private int refused;

    public NetworkProxy(Path socket, List<Integer> hostPorts) {
        this(socket, hostPorts, List.of());
    }

    /** With {@code allowHosts} not empty, only the hosts it names are reachable ({@link HostPattern}). */
    public NetworkProxy(Path socket, List<Integer> hostPorts, List<String> allowHosts) {
        this.socket = socket;
        this.hostPorts = Set.copyOf(hostPorts);
        this.allowHosts = List.copyOf(allowHosts);
    }

    /**
     * The requests refused by the allow-list so far, {@code HOST:PORT<tab>WHY} each, at most
     * {@link #MAX_REFUSALS}; {@link #refusedCount()} counts them all.
     */
    public List<String> refusals() {
        synchronized (refusals) {
            return List.copyOf(refusals);
        }
    }

    /** How many requests the allow-list refused. */
    public int refusedCount() {
        synchronized (refusals) {
            return refused;
        }
    }

    /** Opens the socket and serves it in the background (see {@link GuardServer#listen()} on the cost). */
    public void listen() {
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                NetworkProxy.this.run();
            }
        }, "agent-sandbox-network");
        t.setDaemon(true);
        t.start();
    }

    private void run() {
        ServerSocketChannel ch;
        try {
            ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException e) {
            return; // the first program finds no socket: connections fail inside
        }
        synchronized (lock) {
            try {
                if (closed) {
                    ch.close();
                    return;
                }
                ch.bind(UnixDomainSocketAddress.of(socket));
                server = ch;
            } catch (IOException e) {
                quietly(ch);
                return;
            }
        }
        while (true) {
            SocketChannel client;
            try {
                client = ch.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (active.incrementAndGet() > MAX_CONNECTIONS) {
                active.decrementAndGet();
                quietly(client);
                continue;
            }
            Thread.ofVirtual().name("agent-sandbox-network-connection").start(() -> {
                try {
                    serve(client);
                } catch (IOException | RuntimeException e) {
                    // a broken connection ends only itself
                } finally {
                    quietly(client);
                    active.decrementAndGet();
                }
            });
        }
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            if (server != null) {
                quietly(server);
            }
        }
    }

    private void serve(SocketChannel client) throws IOException {
        Deadline deadline = Deadline.start(client, HEAD_TIMEOUT_MILLIS);
        try {
            ByteBuffer in = ByteBuffer.allocate(HEAD_LIMIT);
            String first = readLine(client, in, 32);
            if (first == null) {
                return;
            }
            if (first.startsWith(HOST_CLIENT)) {
                int port = port(first.substring(HOST_CLIENT.length()));
                if (!hostPorts.contains(port)) {
                    return;
                }
                SocketChannel remote = connectLoopback(port);
                if (remote == null) {
                    return;
                }
                deadline.cancel();
                pipe(client, remote, ByteBuffer.allocate(0));
                return;
            }
            if (!first.equals(PROXY_CLIENT)) {
                return;
            }
            proxy(client, in, deadline);
        } finally {
            deadline.cancel();
        }
    }

    private void proxy(SocketChannel client, ByteBuffer in, Deadline deadline) throws IOException {
        int headEnd = readHead(client, in);
        if (headEnd < 0) {
            answer(client, 431, "request head too large or incomplete");
            return;
        }
        String head = new String(in.array(), 0, headEnd, StandardCharsets.ISO_8859_1);
        Request request = Request.parse(head);
        if (request.refusal() != null) {
            answer(client, 400, request.refusal());
            return;
        }
        if (!allowHosts.isEmpty() && !HostPattern.allowed(allowHosts, request.host())) {
            String why = "not on the network's allow-list";
            synchronized (refusals) {
                refused++;
                if (refusals.size() < MAX_REFUSALS) {
                    // the host is the client's, printable (the request line has no control
                    // characters) and bounded by the head's size
                    refusals.add(request.host() + ":" + request.port() + "\t" + why + " (a proxy request, "
                            + java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS) + ")");
                }
            }
            answer(client, 403, request.host() + " is " + why + " (--allow-host, \"network\": {\"allow\": [...]})");
            return;
        }
        SocketChannel remote = connect(client, request);
        if (remote == null) {
            return;
        }
        deadline.cancel();
        if (request.originForm() == null) {
            writeAll(client, ByteBuffer.wrap("HTTP/1.1 200 Connection established\r\n\r\n"
                    .getBytes(StandardCharsets.ISO_8859_1)));
        } else {
            writeAll(remote, ByteBuffer.wrap(rewrite(head, request.method(), request.originForm(), request.version())
                    .getBytes(StandardCharsets.ISO_8859_1)));
        }
        // what the client sent after the head goes first
        ByteBuffer pending = ByteBuffer.allocate(in.position() - headEnd);
        pending.put(in.array(), headEnd, in.position() - headEnd).flip();
        pipe(client, remote, pending);
    }

    /**
     * The connection to the request's destination, once its name resolved here to an
     * address off this machine; null, with the client answered, when there is none.
     */
    private SocketChannel connect(SocketChannel client, Request request) throws IOException {
        InetAddress address;
        try {
            address = pick(request.host());
        } catch (IOException e) {
            answer(client, 502, "cannot resolve " + request.host());
            return null;
        }
        if (address == null) {
            answer(client, 403, request.host() + " is this machine; a sandbox reaches a host port only when it is"
                    + " granted (--host-port PORT)");
            return null;
        }
        SocketChannel remote = SocketChannel.open();
        try {
            remote.socket().connect(new InetSocketAddress(address, request.port()), CONNECT_TIMEOUT_MILLIS);
            return remote;
        } catch (IOException e) {
            quietly(remote);
            answer(client, 502, "cannot connect to " + request.host() + ":" + request.port() + ": " + e.getMessage());
            return null;
        }
    }

    /**
     * A proxy request's line, read: {@code CONNECT host:port} (a tunnel) or an absolute-form
     * {@code http://} request (forwarded once in origin form, {@code originForm} the path);
     * with {@code refusal} set, why it is not one the proxy serves.
     */
    record Request(String method, String host, int port, String originForm, String version, String refusal) {
        static Request refused(String why) {
            return new Request(null, null, -1, null, null, why);
        }

        static Request parse(String head) {
            int lineEnd = head.indexOf("\r\n");
            String line = head.substring(0, lineEnd < 0 ? head.length() : lineEnd);
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                if (c < 0x20 || c == 0x7f) {
                    // a control character (a bare LF among them) in the request line: malformed,
                    // and never echoed into a refusal
                    return refused("not an HTTP/1 proxy request");
                }
            }
            String[] words = line.split(" ");
            // a line that starts with a space has no method: split makes it an empty word
            if (words.length != 3 || words[0].isEmpty() || !words[2].startsWith("HTTP/1.")) {
                return refused("not an HTTP/1 proxy request");
            }
            String method = words[0];
            String target = words[1];
            Request r;
            if (method.equals("CONNECT")) {
                int colon = target.lastIndexOf(':');
                if (colon <= 0) {
                    return refused("CONNECT needs host:port");
                }
                r = new Request(method, unbracket(target.substring(0, colon)),
                        NetworkProxy.port(target.substring(colon + 1)), null, words[2], null);
            } else if (target.regionMatches(true, 0, "http://", 0, 7)) {
                r = absolute(method, target.substring(7), words[2]);
            } else {
                return refused("only CONNECT and http:// requests go through agent-sandbox's proxy");
            }
            return r.port() <= 0 || r.host().isEmpty() ? refused("bad destination " + target) : r;
        }

        /** An absolute-form request's destination: {@code rest} is the target after {@code http://}. */
        private static Request absolute(String method, String rest, String version) {
            int slash = rest.indexOf('/');
            String authority = slash < 0 ? rest : rest.substring(0, slash);
            String path = slash < 0 ? "/" : rest.substring(slash);
            int at = authority.lastIndexOf('@');
            authority = at < 0 ? authority : authority.substring(at + 1);
            int colon = authority.lastIndexOf(':');
            if (colon > 0 && authority.indexOf(']') < colon) {
                return new Request(method, unbracket(authority.substring(0, colon)),
                        NetworkProxy.port(authority.substring(colon + 1)), path, version, null);
            }
            return new Request(method, unbracket(authority), 80, path, version, null);
        }
    }

    /** The head with an origin-form request line, without proxy headers, closing after one exchange. */
    private static String rewrite(String head, String method, String path, String version) {
        StringBuilder out = new StringBuilder(method).append(' ').append(path).append(' ').append(version)
                .append("\r\n");
        String[] lines = head.split("\r\n");
        for (int i = 1; i < lines.length; i++) {
            String l = lines[i];
            if (l.isEmpty()) {
                continue;
            }
            String lower = l.toLowerCase(java.util.Locale.ROOT);
            if (lower.startsWith("proxy-") || lower.startsWith("connection:") || lower.startsWith("keep-alive:")) {
                continue;
            }
            out.append(l).append("\r\n");
        }
        return out.append("Connection: close\r\n\r\n").toString();
    }

    /** The first address of {@code host} that is not on this machine, or null when all are. */
    private InetAddress pick(String host) throws IOException {
        byte[] numeric = inetAton(host);
        InetAddress[] all = numeric != null ? new InetAddress[] {InetAddress.getByAddress(numeric)}
                : InetAddress.getAllByName(host);
        for (InetAddress a : all) {
            if (allowed(a)) {
                return a;
            }
        }
        return null;
    }

    /**
     * An IPv4 address written the way inet_aton(3) reads it, as curl, ping and the C library
     * do: one to four parts, each decimal, octal (a leading 0) or hexadecimal (0x), the last
     * one filling the bytes left ({@code 0177.1} is 127.0.0.1, {@code 0x7f000001} too). Java
     * reads some of these otherwise ({@code 0177.0.0.1} as 177.0.0.1) or not at all; the
     * proxy reads them as the client meant. Null when {@code host} is no such address.
     */
    static byte[] inetAton(String host) {
        String[] parts = host.split("\\.", -1);
        if (parts.length > 4) {
            return null;
        }
        long[] values = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            int radix = 10;
            if (p.length() > 1 && (p.startsWith("0x") || p.startsWith("0X"))) {
                radix = 16;
                p = p.substring(2);
            } else if (p.length() > 1 && p.startsWith("0")) {
                radix = 8;
                p = p.substring(1);
            }
            if (p.isEmpty() && radix != 16 || p.length() > 12) {
                return null;
            }
            long v = 0;
            for (int k = 0; k < p.length(); k++) {
                int d = Character.digit(p.charAt(k), radix);
                if (d < 0) {
                    return null;
                }
                v = v * radix + d;
            }
            values[i] = v;
        }
        long address = 0;
        for (int i = 0; i < values.length - 1; i++) {
            if (values[i] > 255) {
                return null;
            }
            address |= values[i] << (24 - 8 * i);
        }
        long last = values[values.length - 1];
        if (last >= 1L << (32 - 8 * (values.length - 1))) {
            return null;
        }
        address |= last;
        return new byte[] {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address};
    }

    /** Whether a destination is off this machine. */
    boolean allowed(InetAddress a) {
        if (a.isLoopbackAddress() || a.isAnyLocalAddress() || a.isLinkLocalAddress() || a.isMulticastAddress()) {
            return false;
        }
        byte[] b = a.getAddress();
        if (b.length == 4 && b[0] == 0) {
            return false; // 0.0.0.0/8 reaches the host itself
        }
        if (a instanceof Inet6Address && isIpv4Compatible(b)) {
            return false; // ::a.b.c.d, a deprecated spelling of IPv4 addresses
        }
        return !localAddresses().contains(a);
    }

    private static boolean isIpv4Compatible(byte[] b) {
        for (int i = 0; i < 12; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private Set<InetAddress> localAddresses() {
        Set<InetAddress> l = local;
        if (l == null) {
            l = new HashSet<>();
            try {
                Enumeration<NetworkInterface> nics = NetworkInterface.getNetworkInterfaces();
                while (nics != null && nics.hasMoreElements()) {
                    Enumeration<InetAddress> as = nics.nextElement().getInetAddresses();
                    while (as.hasMoreElements()) {
                        InetAddress a = as.nextElement();
                        l.add(a instanceof Inet6Address six ? InetAddress.getByAddress(six.getAddress()) : a);
                    }
                }
            } catch (SocketException | java.net.UnknownHostException e) {
                // without the list, loopback and the rest are still refused above
            }
            local = l;
        }
        return l;
    }

    private SocketChannel connectLoopback(int port) {
        for (InetAddress a : List.of(InetAddress.getLoopbackAddress(), loopback6())) {
            SocketChannel ch = null;
            try {
                ch = SocketChannel.open();
                ch.socket().connect(new InetSocketAddress(a, port), CONNECT_TIMEOUT_MILLIS);
                return ch;
            } catch (IOException e) {
                if (ch != null) {
                    quietly(ch);
                }
            }
        }
        return null;
    }

    private static InetAddress loopback6() {
        try {
            return InetAddress.getByAddress("localhost", new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Copies both ways until both sides are done; {@code pending} goes to {@code remote} first. */
    private static void pipe(SocketChannel client, SocketChannel remote, ByteBuffer pending) throws IOException {
        try {
            if (pending.hasRemaining()) {
                writeAll(remote, pending);
            }
            Thread back = Thread.ofVirtual().name("agent-sandbox-network-pipe").start(() -> copy(remote, client));
            copy(client, remote);
            try {
                back.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } finally {
            quietly(remote);
        }
    }

    private static void copy(SocketChannel from, SocketChannel to) {
        ByteBuffer b = ByteBuffer.allocate(32 * 1024);
        try {
            while (from.read(b) >= 0) {
                b.flip();
                writeAll(to, b);
                b.clear();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            quietly(from);
            quietly(to);
        }
    }

    private static void writeAll(ByteChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Reads up to and including the first {@code '\n'}, at most {@code max} bytes; the line without it, or null. */
    private static String readLine(SocketChannel ch, ByteBuffer in, int max) throws IOException {
        ByteBuffer one = ByteBuffer.allocate(1);
        StringBuilder sb = new StringBuilder();
        while (sb.length() <= max) {
            one.clear();
            if (ch.read(one) < 0) {
                return null;
            }
            char c = (char) (one.get(0) & 0xff);
            if (c == '\n') {
                return sb.toString();
            }
            sb.append(c);
        }
        return null;
    }

    /** Reads until the blank line that ends an HTTP head; its end offset in {@code in}, or -1. */
    private static int readHead(SocketChannel ch, ByteBuffer in) throws IOException {
        int scanned = 0;
        while (true) {
            byte[] a = in.array();
            for (int i = Math.max(3, scanned); i < in.position(); i++) {
                if (a[i] == '\n' && a[i - 1] == '\r' && a[i - 2] == '\n' && a[i - 3] == '\r') {
                    return i + 1;
                }
            }
            scanned = in.position();
            if (!in.hasRemaining() || ch.read(in) < 0) {
                return -1;
            }
        }
    }

    private static void answer(SocketChannel client, int status, String why) {
        String reason = switch (status) {
            case 400 -> "Bad Request";
            case 403 -> "Forbidden";
            case 431 -> "Request Header Fields Too Large";
            default -> "Bad Gateway";
        };
        String body = "agent-sandbox: " + why + "\n";
        String text = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain\r\nContent-Length: "
                + body.getBytes(StandardCharsets.UTF_8).length + "\r\nConnection: close\r\n\r\n" + body;
        try {
            writeAll(client, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        } catch (IOException e) {
            // the client is gone
        }
    }

    private static String unbracket(String host) {
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static int port(String s) {
        try {
            int v = Integer.parseInt(s);
            return v >= 1 && v <= 65535 && s.charAt(0) != '+' ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static void quietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // nothing more to do with it
        }
    }

    /** Closes a connection that has not sent its request head in time. */
    private static final class Deadline {
        private final Thread thread;

        private Deadline(Thread thread) {
            this.thread = thread;
        }

        static Deadline start(SocketChannel ch, long millis) {
            return new Deadline(Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(millis);
                    quietly(ch);
                } catch (InterruptedException e) {
                    // cancelled
                }
            }));
        }

        void cancel() {
            thread.interrupt();
        }
    }

    /** The lines the sandbox's first program reads from {@code net/listen}: where to listen, for what. */
    public static String listenFile(List<Integer> hostPorts, boolean proxy) {
        List<String> lines = new ArrayList<>();
        if (proxy) {
            lines.add(LISTEN_PROXY + " " + Inside.PROXY_PORT);
        }
        for (int p : hostPorts) {
            lines.add(LISTEN_PORT + " " + p);
        }
        return lines.isEmpty() ? "" : String.join("\n", lines) + "\n";
    }
}
