// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;

import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The launcher's starter: a child the native launcher forks before it starts this
 * JVM, waiting on a pipe to start bwrap (see {@code serve_start} in the launcher's starter.c).
 * Starting a process from the interpreted JVM is the dearest step of a run; handing
 * the starter the command line costs a write. The launcher names the starter in the
 * system property {@link #PROPERTY} as {@code <request fd>,<reply fd>}; the
 * descriptors are reached through {@code /proc/self/fd}.
 *
 * <p>A run asks it once. Whatever stops it from being used (no such property, the
 * pipe gone, an environment that is not text) leaves the caller to start bwrap
 * itself, with the same result.
 */
public final class BwrapStarter {
    /** The system property the launcher sets (STARTER_PROPERTY in guard.h). */
    public static final String PROPERTY = Environment.Installation.STARTER_PROPERTY;
    /** Most bytes of a request (STARTER_MAX_REQUEST in guard.h). */
    public static final int MAX_REQUEST = 64 * 1024 * 1024;
    /** Most paths of one removal (STARTER_MAX_REMOVE_PATHS in guard.h). */
    public static final int MAX_REMOVE_PATHS = 16;
    /** Most bytes of one removal's paths (STARTER_MAX_REMOVE_BYTES in guard.h). */
    public static final int MAX_REMOVE_BYTES = 65536;

    /** Most bytes of an allow-list the launcher takes, its entries joined by ',' (NET_ALLOW_MAX in guard.h). */
    public static final int MAX_NETWORK_ALLOW = 65536;
    /** Most bytes of an early network request's body: the stack's path (PATH_MAX), the list, two NULs. */
    static final int MAX_NETWORK_REQUEST = 4096 + MAX_NETWORK_ALLOW + 2;

    /** Whether this JVM's starter was taken: it starts one bwrap. */
    private static boolean taken;

    private final int requests;
    private final int replies;

    private BwrapStarter(int requests, int replies) {
        this.requests = requests;
        this.replies = replies;
    }

    /**
     * This JVM's starter, as the launcher named it in {@code value}, the first time it
     * is asked for; null after that, and when there is none or the value is malformed.
     */
    public static synchronized BwrapStarter take(String value) {
        if (taken) {
            return null;
        }
        BwrapStarter starter = parse(value);
        taken = starter != null;
        return starter;
    }

    /**
     * Asks the starter named in {@code value}, unless it was taken already, to start the run's
     * network stack ({@code stack}, with the allow-list {@code allowHosts}, empty for none)
     * before bwrap's request (STARTER_NETWORK in guard.h). No reply: a stack that could not
     * start is started again, and reported, with bwrap. Does nothing when the request cannot
     * be sent.
     */
    public static synchronized void startNetwork(String value, Path stack, List<String> allowHosts) {
        BwrapStarter starter = taken ? null : parse(value);
        byte[] request = networkRequest(stack, allowHosts);
        if (starter == null || request == null) {
            return; // the launcher that starts bwrap starts it, or says why not
        }
        try (FileOutputStream out = new FileOutputStream("/proc/self/fd/" + starter.requests)) {
            out.write(request); // one write: the starter never reads half a request
        } catch (IOException e) {
            // the starter is gone: bwrap's request finds that out
        }
    }

    /** The early network request's bytes; null when it cannot be sent (the stack starts with bwrap then). */
    public static byte[] networkRequest(Path stack, List<String> allowHosts) {
        ByteArrayOutputStream body = new ByteArrayOutputStream(256);
        if (!add(body, stack.toString()) || !add(body, String.join(",", allowHosts))
                || body.size() > MAX_NETWORK_REQUEST) {
            return null;
        }
        ByteArrayOutputStream all = new ByteArrayOutputStream(body.size() + 16);
        all.writeBytes(("network " + body.size() + "\n").getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(body.toByteArray());
        return all.toByteArray();
    }

    static BwrapStarter parse(String value) {
        if (value == null) {
            return null;
        }
        String[] parts = value.split(",", -1);
        if (parts.length != 2) {
            return null;
        }
        try {
            int requests = Integer.parseInt(parts[0]);
            int replies = Integer.parseInt(parts[1]);
            return requests > 2 && replies > 2 ? new BwrapStarter(requests, replies) : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Has bwrap started with {@code argv} and exactly {@code env}, its stderr on
     * {@code log} until the command starts (as {@code --internal-start-bwrap} does), in
     * {@code /}, with this process's stdin, stdout and stderr.
     *
     * @return the running bwrap, or null when the starter cannot be used (the caller
     *         starts bwrap itself)
     * @throws IOException when the starter took the request and could not start bwrap
     */
    public Bwrap start(Path log, List<String> argv, Map<String, String> env) throws IOException {
        byte[] request = request(log, argv, env);
        if (request == null) {
            return null;
        }
        InputStream in = null;
        FileOutputStream out = null;
        try {
            // buffered: the starter writes each reply line at once, read then in one call
            // (a call per byte cost the end of every run a system call per character)
            in = new java.io.BufferedInputStream(new FileInputStream("/proc/self/fd/" + replies), 256);
            out = new FileOutputStream("/proc/self/fd/" + requests);
            out.write(request);
        } catch (IOException e) {
            closeQuietly(in);
            closeQuietly(out);
            return null; // the starter is gone before it took the request
        }
        String reply = readLine(in);
        if (reply != null && reply.startsWith("started ")) {
            try {
                return new Started(Long.parseLong(reply.substring(8)), in, out);
            } catch (NumberFormatException e) {
                // told something else: below
            }
        }
        closeQuietly(out);
        in.close();
        throw new IOException(reply != null && reply.startsWith("failed ") ? reply.substring(7)
                : "the launcher's starter did not start it");
    }

    /** The request's bytes; null when a word or variable cannot be passed as text. */
    static byte[] request(Path log, List<String> argv, Map<String, String> env) {
        ByteArrayOutputStream body = new ByteArrayOutputStream(64 * 1024);
        if (!add(body, log.toString())) {
            return null;
        }
        for (String word : argv) {
            if (!add(body, word)) {
                return null;
            }
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            // a variable the JVM could not read as UTF-8 keeps its bytes only through ProcessBuilder
            if (e.getKey().indexOf('=') >= 0 || e.getKey().isEmpty() || !add(body, e.getKey() + "=" + e.getValue())) {
                return null;
            }
        }
        byte[] header = (argv.size() + " " + env.size() + " " + body.size() + "\n").getBytes(StandardCharsets.US_ASCII);
        if (argv.isEmpty() || body.size() > MAX_REQUEST) {
            return null;
        }
        ByteArrayOutputStream all = new ByteArrayOutputStream(header.length + body.size());
        all.writeBytes(header);
        all.writeBytes(body.toByteArray());
        return all.toByteArray();
    }

    private static boolean add(ByteArrayOutputStream out, String text) {
        if (text.indexOf('\0') >= 0 || text.indexOf('\uFFFD') >= 0) {
            return false;
        }
        out.writeBytes(text.getBytes(StandardCharsets.UTF_8));
        out.write(0);
        return true;
    }

    private static void closeQuietly(java.io.Closeable c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                // a pipe's end: nothing to lose
            }
        }
    }

    /**
     * The request that has the starter remove {@code trees} after bwrap's end (see
     * {@code serve_removals} in the launcher's starter.c); null when a path cannot be sent as text.
     */
    public static byte[] removal(List<Path> trees) {
        ByteArrayOutputStream body = new ByteArrayOutputStream(512);
        for (Path p : trees) {
            if (!p.isAbsolute() || !add(body, p.toString())) {
                return null;
            }
        }
        if (trees.isEmpty() || trees.size() > MAX_REMOVE_PATHS || body.size() > MAX_REMOVE_BYTES) {
            return null;
        }
        ByteArrayOutputStream all = new ByteArrayOutputStream(body.size() + 32);
        all.writeBytes(("remove " + trees.size() + " " + body.size() + "\n").getBytes(StandardCharsets.US_ASCII));
        all.writeBytes(body.toByteArray());
        return all.toByteArray();
    }

    /** One reply line without its line break; null at the end of the pipe. */
    private static String readLine(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            if (b == '\n') {
                return line.toString();
            }
            if (line.length() < 256) {
                line.append((char) b);
            }
        }
    }

    /** bwrap as the starter's child: its end read from the replies. */
    private static final class Started implements Bwrap {
        private final long bwrap;
        private final InputStream replies;
        private final FileOutputStream requests;
        private boolean reading;
        private Integer status;
        /** Whether the starter still reads requests: it does after telling bwrap's end. */
        private boolean listening;
        /** Whether a removal was asked for and its reply is still to be read. */
        private boolean removing;

        Started(long bwrap, InputStream replies, FileOutputStream requests) {
            this.bwrap = bwrap;
            this.replies = replies;
            this.requests = requests;
        }

        @Override
        public long pid() {
            return bwrap;
        }

        @Override
        public int waitFor() throws InterruptedException {
            synchronized (this) {
                while (status == null && reading) {
                    wait();
                }
                if (status != null) {
                    return status;
                }
                reading = true;
            }
            int s = readStatus();
            synchronized (this) {
                status = s;
                notifyAll();
            }
            return s;
        }

        private int readStatus() {
            try {
                String line = readLine(replies);
                if (line != null && line.startsWith("exit ")) {
                    int s = Integer.parseInt(line.substring(5));
                    listening = true;
                    return s;
                }
                if (line != null && line.startsWith("signal ")) {
                    int s = 128 + Integer.parseInt(line.substring(7));
                    listening = true;
                    return s;
                }
            } catch (IOException | NumberFormatException e) {
                // below
            }
            // the starter was killed (the caller's kill), and bwrap with it
            closeQuietly(replies);
            closeQuietly(requests);
            return 128 + 9;
        }

        @Override
        public synchronized boolean requestRemoval(List<Path> trees) {
            if (!listening) {
                return false;
            }
            listening = false; // one removal: the run's directories, at its end
            byte[] request = removal(trees);
            try {
                if (request != null) {
                    requests.write(request);
                    removing = true;
                    return true;
                }
            } catch (IOException e) {
                // below
            }
            closeQuietly(replies);
            closeQuietly(requests);
            return false;
        }

        @Override
        public synchronized boolean removed() {
            if (!removing) {
                return false;
            }
            removing = false;
            try {
                String reply = readLine(replies);
                return reply != null && reply.startsWith("removed ");
            } catch (IOException e) {
                return false;
            } finally {
                closeQuietly(replies);
                closeQuietly(requests);
            }
        }

        @Override
        public synchronized boolean waitFor(long millis) throws InterruptedException {
            long end = System.nanoTime() + millis * 1_000_000;
            while (status == null) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                wait(Math.max(1, left / 1_000_000));
            }
            return true;
        }

        @Override
        public void terminate() {
            signal(false);
        }

        @Override
        public void kill() {
            signal(true);
        }

        /**
         * bwrap's pid stays bwrap's while this JVM runs (the starter does not reap it),
         * so a signal to it never reaches another process.
         */
        private void signal(boolean kill) {
            ProcessHandle.of(bwrap).ifPresent(kill ? ProcessHandle::destroyForcibly : ProcessHandle::destroy);
        }
    }
}
