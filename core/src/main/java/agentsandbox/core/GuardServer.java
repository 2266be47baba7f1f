package agentsandbox.core;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Answers the native launcher's question "may this git command run?" for one sandbox.
 * It runs in the agent-sandbox process that waits for bwrap, outside the sandbox, on a
 * Unix socket bound into the sandbox under {@code /run/agent-sandbox/guard/}.
 *
 * <p>Protocol, all requests bounded: the launcher sends {@code AGS1}, the working
 * directory, its parent process's executable, the argument count and arguments, the count and {@code NAME=VALUE} of the
 * environment variables that matter to git, each NUL-terminated. The server may ask
 * {@code R <path>\n} any number of times (bounded) to have a path resolved as the
 * sandboxed process sees it; the launcher answers with the resolved path and a NUL (an
 * empty answer when it does not resolve). The final answer is {@code A\n} (run git) or
 * {@code D <message>\n} (refuse). Anything else, a timeout or a closed socket makes the
 * launcher refuse.
 */
final class GuardServer implements AutoCloseable {
    static final String MAGIC = "AGS1";
    /** Largest request accepted: a git command line with a big environment fits easily. */
    static final int MAX_REQUEST = 1 << 20;
    static final int MAX_FIELDS = 100_000;
    static final int MAX_PATH_QUESTIONS = 16;
    /** A connection that has not finished by then is closed (the launcher then refuses). */
    static final long CONNECTION_TIMEOUT_MILLIS = 15_000;

    private final Path socket;
    private final Environment env;
    private final Path tmpSource;
    private final List<Mount> mounts;
    private final Thread acceptor;
    private final Object lock = new Object();
    private ServerSocketChannel server;
    private boolean closed;

    private GuardServer(Path socket, Environment env, Plan plan) {
        this.socket = socket;
        this.env = env;
        this.tmpSource = plan.tmpSource();
        this.mounts = plan.mounts();
        this.acceptor = new Thread(this::run, "agent-sandbox-git-guard");
        this.acceptor.setDaemon(true);
    }

    /** The guard for the plan's socket, not yet listening: see {@link #listen()}. */
    static GuardServer prepare(Environment env, Plan plan) {
        Path socket = plan.guardSocket();
        if (socket.toString().getBytes(StandardCharsets.UTF_8).length > 100) {
            throw new SandboxException("the git guard's socket path " + socket + " is too long for a Unix socket",
                    "set TMPDIR to a shorter directory");
        }
        return new GuardServer(socket, env, plan);
    }

    /**
     * Opens the socket and answers on it, in the background. Opening the JVM's first
     * Unix socket initialises its security providers (well over 10 ms of CPU), more
     * than bwrap needs to set up the sandbox; started once bwrap runs, this work does
     * not compete with starting it. The launcher waits for the socket to appear.
     */
    void listen() {
        acceptor.start();
    }

    private void run() {
        ServerSocketChannel ch;
        try {
            ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        } catch (IOException e) {
            return; // the launcher finds no socket and refuses to run git
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
                closeQuietly(ch);
                return;
            }
        }
        acceptLoop(ch);
    }

    private static void closeQuietly(ServerSocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closing a listening socket does not fail in a way that matters here
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (timeouts != null) {
                timeouts.cancel();
            }
        }
        synchronized (lock) {
            closed = true;
            if (server != null) {
                closeQuietly(server);
                Execution.deleteQuietly(socket);
            }
        }
    }

    private void acceptLoop(ServerSocketChannel server) {
        while (true) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return;
                }
                continue;
            }
            Thread t = new Thread(() -> serve(client), "agent-sandbox-git-guard-call");
            t.setDaemon(true);
            t.start();
        }
    }

    /** Closes connections that take too long; created with the first connection. */
    private java.util.Timer timeouts;

    private synchronized java.util.Timer timeouts() {
        if (timeouts == null) {
            timeouts = new java.util.Timer("agent-sandbox-git-guard-timeouts", true);
        }
        return timeouts;
    }

    private void serve(SocketChannel client) {
        java.util.TimerTask expire = new java.util.TimerTask() {
            @Override
            public void run() {
                try {
                    client.close();
                } catch (IOException e) {
                    // already closed
                }
            }
        };
        timeouts().schedule(expire, CONNECTION_TIMEOUT_MILLIS);
        try (client) {
            Connection c = new Connection(client);
            GitGuard.Request request = c.readRequest();
            GitGuard.Decision d;
            if (request == null) {
                d = new GitGuard.Decision.Deny("the git guard received a malformed request");
            } else {
                d = GitGuard.decide(request, new HostProbe(c, request));
            }
            String answer = d instanceof GitGuard.Decision.Deny deny
                    ? "D " + deny.message().replace('\n', ' ') + "\n"
                    : "A\n";
            c.write(answer);
        } catch (IOException | RuntimeException e) {
            // the launcher sees the connection close and refuses, failing closed
        } finally {
            expire.cancel();
        }
    }

    /** Reading NUL-terminated fields and writing answers on one connection. */
    private static final class Connection {
        private final SocketChannel ch;
        private final ByteBuffer buf = ByteBuffer.allocate(8192);
        private int total;

        Connection(SocketChannel ch) {
            this.ch = ch;
            buf.flip();
        }

        /** The next NUL-terminated field, or null at end of stream or over the size limit. */
        String field() throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            while (true) {
                while (buf.hasRemaining()) {
                    byte b = buf.get();
                    if (b == 0) {
                        return out.toString(StandardCharsets.UTF_8);
                    }
                    if (++total > MAX_REQUEST) {
                        return null;
                    }
                    out.write(b);
                }
                buf.clear();
                int n = ch.read(buf);
                buf.flip();
                if (n < 0) {
                    return null;
                }
            }
        }

        GitGuard.Request readRequest() throws IOException {
            if (!MAGIC.equals(field())) {
                return null;
            }
            String cwd = field();
            String parentExe = field();
            Integer argc = count();
            if (cwd == null || parentExe == null || argc == null) {
                return null;
            }
            List<String> argv = new ArrayList<>();
            for (int i = 0; i < argc; i++) {
                String a = field();
                if (a == null) {
                    return null;
                }
                argv.add(a);
            }
            Integer envc = count();
            if (envc == null) {
                return null;
            }
            Map<String, String> environment = new LinkedHashMap<>();
            for (int i = 0; i < envc; i++) {
                String kv = field();
                if (kv == null) {
                    return null;
                }
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    environment.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
            if (argv.isEmpty()) {
                return null;
            }
            return new GitGuard.Request(argv, cwd.isEmpty() ? "/" : cwd, environment, parentExe);
        }

        private Integer count() throws IOException {
            String s = field();
            if (s == null) {
                return null;
            }
            try {
                int n = Integer.parseInt(s);
                return n >= 0 && n <= MAX_FIELDS ? n : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }

        void write(String s) throws IOException {
            ByteBuffer out = ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
            while (out.hasRemaining()) {
                ch.write(out);
            }
        }
    }

    /** The guard's view of the sandbox, from outside it. */
    private final class HostProbe implements GitGuard.Probe {
        private final Connection c;
        private final Map<String, Optional<String>> resolved = new HashMap<>();
        private int questions;

        HostProbe(Connection c, GitGuard.Request request) {
            this.c = c;
            // the launcher sends its working directory as getcwd() gives it: already resolved
            resolved.put(request.cwd(), Optional.of(request.cwd()));
        }

        @Override
        public Optional<String> realPath(String path) {
            Optional<String> known = resolved.get(path);
            if (known != null) {
                return known;
            }
            if (++questions > MAX_PATH_QUESTIONS || path.indexOf('\n') >= 0 || path.indexOf('\0') >= 0) {
                return Optional.empty();
            }
            Optional<String> answer;
            try {
                c.write("R " + path + "\n");
                String r = c.field();
                answer = r == null || r.isEmpty() ? Optional.empty() : Optional.of(r);
            } catch (IOException e) {
                answer = Optional.empty();
            }
            resolved.put(path, answer);
            return answer;
        }

        /**
         * The mount that shows a (resolved) path inside the sandbox: the deepest policy
         * mount above it, else null for the read-only root.
         */
        private Mount mountOf(Path inside) {
            Mount best = null;
            for (Mount m : mounts) {
                if (inside.startsWith(m.target())
                        && (best == null || m.target().getNameCount() > best.target().getNameCount())) {
                    best = m;
                }
            }
            return best;
        }

        /** Where a path inside the sandbox lives on the host, through the mount that shows it. */
        private Path host(String inside) {
            Path p = Path.of(inside);
            Mount m = mountOf(p);
            if (m == null || m.source() == null || m.kind() != Mount.Kind.READ_WRITE && m.kind() != Mount.Kind.READ_ONLY) {
                return p;
            }
            return m.source().resolve(m.target().relativize(p).toString());
        }

        /** Whether a resolved inside path is shown by the temp-dir mount ({@code /tmp}) itself. */
        private boolean shownByTemp(String inside) {
            Mount m = mountOf(Path.of(inside));
            return m != null && m.target().equals(Path.of(GitGuard.TEMP)) && m.source() != null;
        }

        private boolean inHostTemp(Path p) {
            try {
                Path real = p.toRealPath();
                return real.startsWith(tmpSource.toRealPath());
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public boolean throwAwayRepository(String dir, String gitDir) {
            if (!shownByTemp(dir) || (gitDir != null && !shownByTemp(gitDir))) {
                return false; // under /tmp by name, but another mount (a project, say) shows it
            }
            if (gitDir != null) {
                Path g = host(gitDir);
                Path common = g;
                try {
                    Path commondir = g.resolve("commondir");
                    if (Files.isRegularFile(commondir)) {
                        common = g.resolve(Files.readString(commondir).strip()).normalize();
                    }
                } catch (IOException e) {
                    return false;
                }
                return inHostTemp(g) && (!Files.exists(common) || inHostTemp(common));
            }
            Path hostDir = host(dir);
            Optional<GitLayout> layout = GitLayout.discover(hostDir);
            if (layout.isEmpty()) {
                return true; // no repository: git creates one here or fails
            }
            GitLayout l = layout.get();
            return inHostTemp(l.workTree()) && inHostTemp(l.gitDir()) && inHostTemp(l.commonDir());
        }

        @Override
        public Optional<String> alias(String dir, String name) {
            Path hostDir = host(dir);
            List<String> cmd = List.of("git", "config", "--get", "alias." + name);
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().clear();
            for (String var : List.of("HOME", "XDG_CONFIG_HOME", "PATH", "LANG")) {
                env.env(var).ifPresent(v -> pb.environment().put(var, v));
            }
            if (Files.isDirectory(hostDir)) {
                pb.directory(hostDir.toFile());
            }
            pb.redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            try {
                Process p = pb.start();
                byte[] out = p.getInputStream().readNBytes(64 * 1024);
                if (!p.waitFor(5, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return Optional.empty();
                }
                String value = new String(out, StandardCharsets.UTF_8).strip();
                return p.exitValue() == 0 && !value.isEmpty() ? Optional.of(value) : Optional.empty();
            } catch (IOException e) {
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }

        @Override
        public boolean externalCommand(String name) {
            if (name.contains("/")) {
                return false;
            }
            List<Path> dirs = new ArrayList<>();
            dirs.add(Path.of("/usr/lib/git-core"));
            for (String d : env.env("PATH").orElse("").split(":")) {
                if (d.startsWith("/")) {
                    dirs.add(Path.of(d));
                }
            }
            for (Path d : dirs) {
                Path p = d.resolve("git-" + name);
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public String sandboxEnv(String name) {
            return env.hostEnv().get(name);
        }
    }
}
