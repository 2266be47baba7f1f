// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The conversation between the native launcher (a wrapped git, inside the sandbox) and
 * the guard, over the guard's Unix socket or, where the sandboxed process may not use
 * Unix sockets, over pipes to a guard the launcher starts inside the sandbox.
 *
 * <p>The launcher sends, each field ended by a NUL byte: {@link #MAGIC}, its working
 * directory, its parent process's executable, the count and words of the parent's
 * command line, the count and words of its own, the count and {@code NAME=VALUE}
 * entries of the environment variables that matter to git, in environment order. The
 * guard may then ask, at most {@link #MAX_QUESTIONS} times:
 * <ul>
 * <li>{@code R <path>\n}: the launcher answers the path resolved as it sees it, or an empty
 *     field when it does not resolve;
 * <li>{@code G <arg>\t<arg>…\n}: the launcher runs the real git with these arguments, in
 *     its directory and environment, for at most {@link #GIT_MILLIS} ms, and answers
 *     {@code <exit status> <first MAX_GIT_OUTPUT bytes of its output>} ({@code -1} when git
 *     gave no answer in time).
 * </ul>
 * The answer is {@code A\n} (run git) or {@code D <message>\n} (refuse). Anything else,
 * a timeout or a closed connection make the launcher refuse. {@code launcher/src/guard.h}
 * holds the launcher's copy of every constant here; a test checks that they agree.
 *
 * <p>The same socket takes a second kind of message, over the socket only: a report that a
 * blocked command was called ({@link Report}), for the denial log. The launcher at the
 * blocked command's path sends {@link #REPORT_MAGIC}, the command's name and its command
 * line (cut by the launcher to {@link #REPORT_LINE} bytes), each ended by a NUL byte, at
 * most {@link #MAX_REPORT} bytes in all, and waits a moment for one line. A report is the
 * sandbox's word, not something the host saw: the guard keeps it only when the name is
 * one of the commands its sandbox blocks, bounded, and the log marks it as reported by the
 * sandbox. Nothing the sandbox sends can do more than a call of the blocked command could.
 */
public final class GuardProtocol {
    private GuardProtocol() {}

    public static final String MAGIC = "AGS2";
    /** The first field of a report that a blocked command was called. */
    public static final String REPORT_MAGIC = "AGSB";
    /** Largest report accepted, all fields together. */
    public static final int MAX_REPORT = 4096;
    /** The launcher cuts a blocked command's line to this many bytes before it reports it. */
    public static final int REPORT_LINE = 1000;
    /** How long the launcher gives a report: connecting, sending and one line back. */
    public static final int REPORT_MILLIS = 1000;
    /** Largest request accepted: a git command line with a big environment fits easily. */
    public static final int MAX_REQUEST = 1 << 20;
    /** Most words in one count (arguments, parent's arguments, environment entries). */
    static final int MAX_FIELDS = 100_000;
    /** Most questions the guard asks per request. */
    public static final int MAX_QUESTIONS = 16;
    /** Longest answer line the launcher reads. */
    public static final int MAX_LINE = 8192;
    /** Most bytes of git's output the launcher passes on. */
    public static final int MAX_GIT_OUTPUT = 65_536;
    /** How long the launcher lets the real git answer a question. */
    public static final int GIT_MILLIS = 3000;
    /** How long the launcher waits for the whole answer. */
    public static final int LAUNCHER_TIMEOUT_SECONDS = 20;
    /** How long a connection may take on the host before it is closed (the launcher then refuses). */
    public static final int CONNECTION_MILLIS = 15_000;
    /** How long the launcher waits for the socket to appear after the sandbox starts. */
    public static final int CONNECT_MILLIS = 3000;

    /**
     * A report from inside that a blocked command was called.
     *
     * @param name the command's name, as the launcher read it from the rule
     * @param line its command line, as the sandbox sent it (at most {@link #REPORT_LINE} bytes)
     */
    record Report(String name, String line) {}

    /**
     * Reads a request incrementally from bytes as they arrive: {@link #feed} returns the
     * request once complete, null while more is needed; a malformed or oversized request
     * throws {@link Malformed}. A reader that takes reports ({@link #RequestReader(boolean)})
     * also reads a {@link Report}: {@link #feed} then returns null and {@link #report()} the
     * report once complete.
     */
    static final class RequestReader {
        private final boolean reports;
        private Report report;
        private final ByteArrayOutputStream field = new ByteArrayOutputStream();
        private final List<String> fields = new ArrayList<>();
        private int total;
        /** Fields still to come before the structure is known; -1 when done. */
        private int stage;
        private int parentArgc = -1;
        private int argc = -1;
        private int envc = -1;

        /** A reader of requests only (the in-sandbox guard's pipe). */
        RequestReader() {
            this(false);
        }

        /** A reader of requests, and of reports when {@code reports}. */
        RequestReader(boolean reports) {
            this.reports = reports;
        }

        /** The report read, once complete; null for a request, or while incomplete. */
        Report report() {
            return report;
        }

        /** Whether the message is a report (known from its first field on). */
        boolean isReport() {
            return reports && !fields.isEmpty() && REPORT_MAGIC.equals(fields.get(0));
        }

        /** Takes the next bytes; the request once complete. */
        GitGuard.Request feed(byte[] bytes, int offset, int length) throws Malformed {
            // field by field, not byte by byte: this runs in the interpreter at every git call
            int end = offset + length;
            int start = offset;
            for (int i = offset; i < end; i++) {
                if (bytes[i] != 0) {
                    continue;
                }
                take(i + 1 - start);
                String text;
                if (field.size() == 0) {
                    text = new String(bytes, start, i - start, StandardCharsets.UTF_8);
                } else {
                    field.write(bytes, start, i - start);
                    text = field.toString(StandardCharsets.UTF_8);
                    field.reset();
                }
                fields.add(text);
                start = i + 1;
                if (isReport()) {
                    if (fields.size() == 3) {
                        if (start != end) {
                            throw new Malformed("bytes after the report");
                        }
                        report = new Report(fields.get(1), fields.get(2));
                        return null;
                    }
                    continue;
                }
                GitGuard.Request r = advance();
                if (r != null) {
                    if (start != end) {
                        throw new Malformed("bytes after the request");
                    }
                    return r;
                }
            }
            take(end - start);
            field.write(bytes, start, end - start);
            return null;
        }

        private void take(int bytes) throws Malformed {
            total += bytes;
            if (report != null) {
                throw new Malformed("bytes after the report");
            }
            if (total > (isReport() ? MAX_REPORT : MAX_REQUEST)) {
                throw new Malformed("request too long");
            }
        }

        private GitGuard.Request advance() throws Malformed {
            int n = fields.size();
            if (n == 1 && !MAGIC.equals(fields.get(0))) {
                throw new Malformed("not a guard request");
            }
            if (n == 4) {
                parentArgc = count(fields.get(3));
            }
            if (parentArgc >= 0 && n == 5 + parentArgc) {
                argc = count(fields.get(n - 1));
                if (argc == 0) {
                    throw new Malformed("no command");
                }
            }
            if (argc >= 0 && n == 6 + parentArgc + argc) {
                envc = count(fields.get(n - 1));
            }
            if (envc >= 0 && n == 6 + parentArgc + argc + envc) {
                return build();
            }
            return null;
        }

        private GitGuard.Request build() {
            String cwd = fields.get(1);
            String parentExe = fields.get(2);
            List<String> parentArgv = fields.subList(4, 4 + parentArgc);
            int a = 5 + parentArgc;
            List<String> argv = fields.subList(a, a + argc);
            Map<String, String> env = new LinkedHashMap<>();
            for (String kv : fields.subList(a + argc + 1, fields.size())) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    // git reads the first occurrence of a variable (getenv), and so does the guard
                    env.putIfAbsent(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
            return new GitGuard.Request(argv, cwd.isEmpty() ? "/" : cwd, env, parentExe, parentArgv);
        }

        private static int count(String s) throws Malformed {
            int n;
            try {
                n = Integer.parseInt(s);
            } catch (NumberFormatException e) {
                throw new Malformed("bad count");
            }
            if (n < 0 || s.charAt(0) == '+') {
                throw new Malformed("bad count");
            }
            if (n > MAX_FIELDS) {
                throw new Malformed("count too large");
            }
            return n;
        }
    }

    /** A request that breaks the protocol. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    /** Reads a whole request from a stream (the in-sandbox guard's pipe). */
    static GitGuard.Request readRequest(InputStream in) throws IOException, Malformed {
        RequestReader reader = new RequestReader();
        byte[] buffer = new byte[8192];
        while (true) {
            int n = in.read(buffer);
            if (n < 0) {
                throw new Malformed("end of stream inside the request");
            }
            // feed byte by byte up to the end of the request: the launcher sends nothing more unasked
            GitGuard.Request r = reader.feed(buffer, 0, n);
            if (r != null) {
                return r;
            }
        }
    }

    /** The guard's side of the questions and the final answer, on one connection. */
    static final class Conversation {
        private final InputStream in;
        private final OutputStream out;
        private int questions;
        private Runnable beforeFirstQuestion;

        Conversation(InputStream in, OutputStream out) {
            this.in = in;
            this.out = out;
        }

        /**
         * What to do before the first question, the first read from the launcher (the
         * server sets its deadline there: an answer alone is a small write into an empty
         * socket, which cannot block).
         */
        Conversation beforeFirstQuestion(Runnable r) {
            beforeFirstQuestion = r;
            return this;
        }

        /** The path resolved inside, or empty. */
        Optional<String> realPath(String path) {
            if (path.indexOf('\n') >= 0 || path.indexOf('\0') >= 0 || !ask("R " + path + "\n")) {
                return Optional.empty();
            }
            String r = answer();
            return r == null || r.isEmpty() ? Optional.empty() : Optional.of(r);
        }

        /** What the real git printed inside, with these arguments. */
        GitGuard.GitRun git(List<String> args) {
            StringBuilder line = new StringBuilder("G");
            for (int i = 0; i < args.size(); i++) {
                String a = args.get(i);
                if (a.indexOf('\t') >= 0 || a.indexOf('\n') >= 0 || a.indexOf('\0') >= 0) {
                    return GitGuard.GitRun.NONE;
                }
                line.append(i == 0 ? ' ' : '\t').append(a);
            }
            if (!ask(line.append('\n').toString())) {
                return GitGuard.GitRun.NONE;
            }
            String r = answer();
            if (r == null) {
                return GitGuard.GitRun.NONE;
            }
            int space = r.indexOf(' ');
            try {
                int status = Integer.parseInt(space < 0 ? r : r.substring(0, space));
                return new GitGuard.GitRun(status, space < 0 ? "" : r.substring(space + 1));
            } catch (NumberFormatException e) {
                return GitGuard.GitRun.NONE;
            }
        }

        void decide(GitGuard.Decision d) throws IOException {
            out.write(answerLine(d));
            out.flush();
        }

        /** The line that tells the launcher the decision. */
        static byte[] answerLine(GitGuard.Decision d) {
            String answer = d instanceof GitGuard.Decision.Deny deny
                    ? "D " + clean(deny.message()) + "\n"
                    : "A\n";
            return answer.getBytes(StandardCharsets.UTF_8);
        }

        private static String clean(String message) {
            String m = message.replace('\n', ' ').replace('\0', ' ');
            byte[] bytes = m.getBytes(StandardCharsets.UTF_8);
            return bytes.length < MAX_LINE - 8 ? m : m.substring(0, Math.min(m.length(), (MAX_LINE - 8) / 4));
        }

        private boolean ask(String question) {
            if (++questions > MAX_QUESTIONS || question.length() > MAX_LINE / 4) {
                return false;
            }
            if (questions == 1 && beforeFirstQuestion != null) {
                beforeFirstQuestion.run();
            }
            try {
                out.write(question.getBytes(StandardCharsets.UTF_8));
                out.flush();
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        /** The next NUL-terminated answer, or null at end of stream or over the size limit. */
        private String answer() {
            ByteArrayOutputStream field = new ByteArrayOutputStream();
            try {
                while (true) {
                    int b = in.read();
                    if (b < 0 || field.size() > MAX_GIT_OUTPUT + 16) {
                        return null;
                    }
                    if (b == 0) {
                        return field.toString(StandardCharsets.UTF_8);
                    }
                    field.write(b);
                }
            } catch (IOException e) {
                return null;
            }
        }
    }
}
