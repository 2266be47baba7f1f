// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.Environment;
import agentsandbox.core.run.Execution;
import agentsandbox.core.Plan;
import agentsandbox.core.run.Preparation;
import agentsandbox.core.SandboxException;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Answers the native launcher's question "may this git command run?" for one sandbox,
 * on the host, on a Unix socket bound into the sandbox under {@code /run/agent-sandbox/guard/}
 * (the conversation: {@link GuardProtocol}).
 *
 * <p>Every request is treated as hostile. One thread reads requests from every
 * connection without blocking, each bounded in size ({@link GuardProtocol#MAX_REQUEST})
 * and in time ({@link GuardProtocol#CONNECTION_MILLIS}), at most {@link #MAX_CONNECTIONS}
 * open at once (the oldest is closed for a new one). It answers a complete request
 * itself when the decision needs no question to the launcher and no look at a file
 * (most requests: a worker's hand-off costs a git call more than the decision);
 * {@link #WORKERS} threads decide the others, at most {@link #MAX_WAITING} waiting (more
 * are closed unanswered). A
 * malformed request is answered with a refusal; a connection that breaks any bound is
 * closed, and the launcher refuses. Nothing the sandbox wrote is read on the host and no
 * program is started for a request.
 *
 * <p>The socket also takes the launcher's reports that a blocked command was called
 * ({@link GuardProtocol.Report}): the only channel from inside to the denial log. They are
 * answered in the reader, kept only for a command this sandbox blocks, at most
 * {@link #MAX_RECORDED} (all counted), each line cut; a malformed report closes its
 * connection and is not kept. The log marks them as reported by the sandbox.
 */
public final class GuardServer implements AutoCloseable {
    static final int MAX_CONNECTIONS = 64;
    static final int WORKERS = 2;
    static final int MAX_WAITING = 32;

    private final Path socket;
    private final GuardProbe.TempView view;
    /** The names of the commands this sandbox blocks: the only ones a report may name. */
    private final java.util.Set<String> blocked;
    private final Thread reader;
    private final Thread[] workers = new Thread[WORKERS];
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>();
    private final ArrayDeque<Connection> open = new ArrayDeque<>();
    private final Object lock = new Object();
    /** Told of each git command the guard let run (the git views' apply, see LiveApply); null for nobody. */
    private volatile Runnable onAllowed;
    private Selector selector;
    private boolean closed;
    /** The git commands refused so far, at most {@link #MAX_RECORDED}, for the denial log. */
    private final List<String> refused = new ArrayList<>(); // under itself
    private int refusedCount; // under refused
    /** Most refusals kept per run; beyond it they are only counted. */
    public static final int MAX_RECORDED = 1000;
    /** The blocked commands the sandbox reported as called, at most {@link #MAX_RECORDED}. */
    private final List<String> reported = new ArrayList<>(); // under itself
    private int reportedCount; // under reported

    /** A connection being read. */
    private static final class Connection {
        final SocketChannel channel;
        final GuardProtocol.RequestReader reader = new GuardProtocol.RequestReader(true);
        final long deadline;

        Connection(SocketChannel channel, long deadline) {
            this.channel = channel;
            this.deadline = deadline;
        }
    }

    /** A complete request waiting for a worker. */
    private record Pending(SocketChannel channel, GitGuard.Request request, String malformed, long deadline,
            GuardProtocol.Report report) {
        Pending(SocketChannel channel, GitGuard.Request request, String malformed, long deadline) {
            this(channel, request, malformed, deadline, null);
        }
    }

    private GuardServer(Path socket, GuardProbe.TempView view, java.util.Set<String> blocked) {
        this.socket = socket;
        this.view = view;
        this.blocked = java.util.Set.copyOf(blocked);
        this.reader = new Thread(new Runnable() {
            @Override
            public void run() {
                GuardServer.this.run();
            }
        }, "agent-sandbox-git-guard");
        this.reader.setDaemon(true);
    }

    /** A guard on this socket path with this view of the sandbox, not yet listening. */
    static GuardServer on(Path socket, GuardProbe.TempView view) {
        return new GuardServer(socket, view, java.util.Set.of());
    }

    /** A guard on this socket path that also takes reports of these blocked commands. */
    static GuardServer on(Path socket, GuardProbe.TempView view, java.util.Set<String> blocked) {
        return new GuardServer(socket, view, blocked);
    }

    /** The guard for the plan's socket, not yet listening: see {@link #listen()}. */
    public static GuardServer prepare(Environment env, Plan plan) {
        Path socket = plan.guardSocket();
        if (socket.toString().getBytes(StandardCharsets.UTF_8).length > 100) {
            throw new SandboxException("the git guard's socket path " + socket + " is too long for a Unix socket",
                    "set TMPDIR to a shorter directory");
        }
        return new GuardServer(socket, new GuardProbe.HostView(plan.mounts(), plan.tmpSource(), env.hostEnv()),
                Wrappers.blockedNames(plan.mounts()));
    }

    /**
     * Whom to tell, from the guard's threads, each time a git command is let run: the host
     * then applies the sandbox's git work right after it, not at its next look.
     */
    public void onAllowed(Runnable r) {
        onAllowed = r;
    }

    private void allowed(GitGuard.Decision d) {
        Runnable r = onAllowed;
        if (r != null && d instanceof GitGuard.Decision.Allow) {
            r.run();
        }
    }

    /**
     * Opens the socket and answers on it, in the background, once bwrap runs (the
     * launcher waits for the socket to appear). What the JVM's first Unix socket costs
     * was paid while the plan was made (see {@link Preparation}).
     */
    public void listen() {
        reader.start();
    }

    private void run() {
        Selector s = null;
        ServerSocketChannel ch = null;
        boolean bound = false;
        try {
            s = Selector.open();
            ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            synchronized (lock) {
                if (closed) {
                    return;
                }
                ch.bind(UnixDomainSocketAddress.of(socket), 256);
                bound = true;
                ch.configureBlocking(false);
                ch.register(s, SelectionKey.OP_ACCEPT);
                selector = s;
            }
            readLoop(s, ch);
        } catch (IOException | RuntimeException e) {
            // the launcher finds no socket, or a closed one, and refuses to run git
        } finally {
            // however the thread ends (stopped, or failed), nothing of it stays open
            if (ch != null) {
                closeQuietly(ch);
            }
            if (s != null) {
                try {
                    s.close();
                } catch (IOException e) {
                    // nothing to do
                }
            }
            if (bound) {
                Execution.deleteQuietly(socket);
            }
        }
    }

    private void readLoop(Selector s, ServerSocketChannel ch) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(16 * 1024);
        while (true) {
            s.select(500);
            if (!s.isOpen() || isClosed()) { // stopped: run() closes the socket
                return;
            }
            List<Pending> complete = new ArrayList<>();
            Iterator<SelectionKey> keys = s.selectedKeys().iterator();
            while (keys.hasNext()) {
                SelectionKey key = keys.next();
                keys.remove();
                if (!key.isValid()) {
                    continue;
                }
                if (key.isAcceptable()) {
                    accept(s, ch, buffer, complete);
                } else if (key.isReadable()) {
                    read(key, buffer, complete);
                }
            }
            if (!complete.isEmpty()) {
                // deregisters the cancelled keys first: a worker may then make a channel
                // blocking, and a channel closed while still registered closes the long way
                // (the JDK reads its SO_LINGER, whose classes would then be in the startup
                // cache or not depending on when the launcher's request arrived)
                s.selectNow();
                for (Iterator<Pending> it = complete.iterator(); it.hasNext();) {
                    if (answeredAtOnce(it.next())) {
                        it.remove();
                    }
                }
                if (!complete.isEmpty()) {
                    handOver(complete);
                }
            }
            expire(s);
        }
    }

    private void accept(Selector s, ServerSocketChannel ch, ByteBuffer buffer, List<Pending> complete)
            throws IOException {
        // one per wake-up: the selector reports the socket again while more are waiting
        SocketChannel client = ch.accept();
        if (client == null) {
            return;
        }
        client.configureBlocking(false);
        Connection c = new Connection(client, System.nanoTime() / 1_000_000 + GuardProtocol.CONNECTION_MILLIS);
        // The launcher writes its request right after connecting: usually it is here
        // already, and then the connection never goes through the selector at all.
        Pending done = readSome(c, buffer);
        if (done == ENDED) {
            closeQuietly(client);
            return;
        }
        if (done != null) {
            complete.add(done);
            return;
        }
        if (open.size() >= MAX_CONNECTIONS) {
            Connection oldest = open.pollFirst();
            closeQuietly(oldest.channel);
        }
        client.register(s, SelectionKey.OP_READ, c);
        open.addLast(c);
    }

    private void read(SelectionKey key, ByteBuffer buffer, List<Pending> complete) {
        Connection c = (Connection) key.attachment();
        Pending done = readSome(c, buffer);
        if (done == ENDED) {
            drop(key, c);
        } else if (done != null) {
            key.cancel();
            open.remove(c);
            complete.add(done);
        }
    }

    /** What {@link #readSome} returns for a connection that ended or failed: close it. */
    private static final Pending ENDED = new Pending(null, null, null, 0);

    /**
     * One read from a connection: its complete request (or what is malformed in it), null
     * while the request is incomplete, {@link #ENDED} when the connection ended first.
     */
    private static Pending readSome(Connection c, ByteBuffer buffer) {
        buffer.clear();
        try {
            int n = c.channel.read(buffer);
            if (n < 0) {
                return ENDED;
            }
            GitGuard.Request request = c.reader.feed(buffer.array(), 0, n);
            if (request == null) {
                GuardProtocol.Report report = c.reader.report();
                return report == null ? null : new Pending(c.channel, null, null, c.deadline, report);
            }
            return new Pending(c.channel, request, null, c.deadline);
        } catch (GuardProtocol.Malformed e) {
            if (c.reader.isReport()) {
                return ENDED; // a broken report is no refusal of git: closed, not kept
            }
            return new Pending(c.channel, null, e.getMessage(), c.deadline);
        } catch (IOException e) {
            return ENDED;
        }
    }

    /**
     * Answers a complete request here, in the reader, when its decision needs nothing
     * but the request (most do: {@code git status}, {@code git commit}): no question to the
     * launcher, no file looked at. The answer is one short line into a socket nobody has
     * written to yet, which takes it whole without blocking. Anything else goes to a
     * worker, which decides again from the start (the decision is a pure function of the
     * request and the answers to its questions, so both reach the same one).
     *
     * @return whether the request was answered (or its connection closed)
     */
    private boolean answeredAtOnce(Pending p) {
        if (p.report() != null) {
            answerReport(p);
            return true;
        }
        if (p.request() == null) {
            return false;
        }
        GitGuard.Decision d;
        try {
            d = GitGuard.decide(p.request(), new WithoutQuestions(view, p.request().cwd()));
        } catch (WithoutQuestions.Needed e) {
            return false;
        } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
            closeQuietly(p.channel()); // the launcher sees the connection close and refuses
            return true;
        }
        if (d instanceof GitGuard.Decision.Deny deny) {
            record(String.join(" ", p.request().argv()), deny.message());
        }
        try (SocketChannel ch = p.channel()) {
            // a partial write cannot happen into an empty socket buffer; if it did, the
            // launcher would read no complete line and refuse
            ch.write(ByteBuffer.wrap(GuardProtocol.Conversation.answerLine(d)));
            allowed(d);
        } catch (IOException e) {
            // the launcher went away or sees the connection close and refuses
        }
        return true;
    }

    /**
     * Keeps a report that a blocked command was called, when the sandbox blocks a command
     * of that name, and says so in one line ({@code A}, or {@code D} and why not).
     */
    private void answerReport(Pending p) {
        GuardProtocol.Report r = p.report();
        boolean kept = blocked.contains(r.name());
        if (kept) {
            synchronized (reported) {
                reportedCount++;
                if (reported.size() < MAX_RECORDED) {
                    // the sandbox's text, bounded, with no tab in it: data for the log, never run
                    String line = r.line().length() > GuardProtocol.REPORT_LINE
                            ? r.line().substring(0, GuardProtocol.REPORT_LINE) + "..." : r.line();
                    reported.add(r.name() + "\t" + line.replace('\t', ' '));
                }
            }
        }
        try (SocketChannel ch = p.channel()) {
            ch.write(ByteBuffer.wrap((kept ? "A\n" : "D no such blocked command here\n")
                    .getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
            // the launcher went away: its command is blocked all the same
        }
    }

    /**
     * The blocked commands the sandbox reported as called, in order, each {@code NAME<tab>LINE}
     * (the command's name as this sandbox's rule has it, and the command line as the sandbox
     * sent it): at most {@link #MAX_RECORDED}; {@link #reportedCount()} counts them all.
     */
    public List<String> reportedBlocked() {
        synchronized (reported) {
            return List.copyOf(reported);
        }
    }

    /** How many calls of blocked commands the sandbox reported. */
    public int reportedCount() {
        synchronized (reported) {
            return reportedCount;
        }
    }

    /**
     * The view of a request's decision in the reader: what the request itself says and
     * the sandbox's temp dir and environment; a question to the launcher or a look at a
     * file stops the decision there ({@link Needed}) and a worker takes it.
     */
    private static final class WithoutQuestions implements GitGuard.Probe {
        /** Thrown when the decision needs the launcher or the file system; one instance, no stack. */
        static final class Needed extends RuntimeException {
            static final Needed INSTANCE = new Needed();

            private Needed() {
                super(null, null, false, false);
            }
        }

        private final GuardProbe.TempView view;
        private final String cwd;

        WithoutQuestions(GuardProbe.TempView view, String cwd) {
            this.view = view;
            this.cwd = cwd;
        }

        @Override
        public java.util.Optional<String> realPath(String path) {
            if (path.equals(cwd)) {
                return java.util.Optional.of(cwd); // as GuardProbe: getcwd() gives it resolved
            }
            throw Needed.INSTANCE;
        }

        @Override
        public GitGuard.GitRun git(List<String> args) {
            throw Needed.INSTANCE;
        }

        @Override
        public boolean inPrivateTemp(String resolved) {
            return view.inPrivateTemp(resolved);
        }

        @Override
        public String sandboxEnv(String name) {
            return view.sandboxEnv(name);
        }
    }

    /**
     * The workers, started by the reader when it first hands a request over: most runs
     * never need one, and two thread starts would cost every run's start while bwrap sets
     * the sandbox up.
     */
    private void startWorkers() {
        for (int i = 0; i < WORKERS; i++) {
            if (workers[i] == null) {
                workers[i] = new Thread(this::work, "agent-sandbox-git-guard-worker");
                workers[i].setDaemon(true);
                workers[i].start();
            }
        }
    }

    private void handOver(List<Pending> complete) {
        startWorkers();
        synchronized (waiting) {
            for (Pending p : complete) {
                if (waiting.size() >= MAX_WAITING) {
                    closeQuietly(p.channel());
                } else {
                    waiting.addLast(p);
                }
            }
            waiting.notifyAll();
        }
    }

    private void drop(SelectionKey key, Connection c) {
        key.cancel();
        open.remove(c);
        closeQuietly(c.channel);
    }

    private void expire(Selector s) {
        long now = System.nanoTime() / 1_000_000;
        while (!open.isEmpty() && open.peekFirst().deadline <= now) {
            Connection c = open.pollFirst();
            SelectionKey key = c.channel.keyFor(s);
            if (key != null) {
                key.cancel();
            }
            closeQuietly(c.channel);
        }
    }

    private void work() {
        while (true) {
            Pending p;
            synchronized (waiting) {
                while (waiting.isEmpty()) {
                    if (isClosed()) {
                        return;
                    }
                    try {
                        waiting.wait(500);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                p = waiting.pollFirst();
            }
            answer(p);
        }
    }

    private boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    private void record(String command, String why) {
        synchronized (refused) {
            refusedCount++;
            if (refused.size() < MAX_RECORDED) {
                // the command line as the sandbox sent it (bounded): data for the log, never run
                refused.add((command.length() > 500 ? command.substring(0, 500) + "..." : command) + "\t" + why);
            }
        }
    }

    /**
     * The git commands this guard refused, in order, each {@code COMMAND<tab>WHY}: at most
     * {@link #MAX_RECORDED}; {@link #refusedCount()} counts them all.
     */
    public List<String> refusals() {
        synchronized (refused) {
            return List.copyOf(refused);
        }
    }

    /** How many git commands this guard refused. */
    public int refusedCount() {
        synchronized (refused) {
            return refusedCount;
        }
    }

    /** Decides one request; the channel is closed when the time is up, whatever the worker is doing. */
    private void answer(Pending p) {
        SocketChannel ch = p.channel();
        long left = p.deadline() - System.nanoTime() / 1_000_000;
        if (left <= 0) {
            closeQuietly(ch);
            return;
        }
        try (ch) {
            ch.configureBlocking(true);
            // the time limit is set when the guard first waits for the launcher (a question):
            // until then nothing here can block, and most requests ask nothing
            GuardProtocol.Conversation c = new GuardProtocol.Conversation(
                    new BufferedInputStream(Channels.newInputStream(ch), 1024), Channels.newOutputStream(ch))
                    .beforeFirstQuestion(new Runnable() {
                        @Override
                        public void run() {
                            Deadlines.INSTANCE.closeAt(ch, Math.max(1, p.deadline() - System.nanoTime() / 1_000_000));
                        }
                    });
            GitGuard.Decision d = p.request() == null
                    ? new GitGuard.Decision.Deny("the git guard received a malformed request (" + p.malformed() + ")")
                    : GitGuard.decide(p.request(), new GuardProbe(c, view, p.request()));
            if (d instanceof GitGuard.Decision.Deny deny) {
                record(p.request() == null ? "git (a malformed request)" : String.join(" ", p.request().argv()),
                        deny.message());
            }
            c.decide(d);
            allowed(d);
        } catch (IOException | RuntimeException | StackOverflowError | OutOfMemoryError e) {
            // the launcher sees the connection close and refuses, failing closed
        }
    }

    /** One timer thread that closes channels whose time is up. */
    private enum Deadlines {
        INSTANCE;

        private final java.util.Timer timer = new java.util.Timer("agent-sandbox-git-guard-deadlines", true);

        void closeAt(SocketChannel ch, long millis) {
            timer.schedule(new java.util.TimerTask() {
                @Override
                public void run() {
                    closeQuietly(ch);
                }
            }, millis);
        }
    }

    private static void closeQuietly(java.nio.channels.Channel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closing does not fail in a way that matters here
        }
    }

    /**
     * Stops answering, and returns at once: requests not yet taken by a worker are closed
     * unanswered, and the reading thread closes the socket and removes its file when it
     * wakes up (closing a selector another thread waits in would wait for that thread,
     * at the end of every run). {@link #close()} waits for that.
     */
    public void stop() {
        synchronized (lock) {
            closed = true;
            if (selector != null) {
                selector.wakeup();
            }
        }
        synchronized (waiting) {
            for (Pending p : waiting) {
                closeQuietly(p.channel());
            }
            waiting.clear();
            waiting.notifyAll();
        }
    }

    /** {@link #stop()}, then waits (a second at most) until the socket is closed and gone. */
    @Override
    public void close() {
        stop();
        boolean interrupted = false;
        try {
            reader.join(1000);
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
