// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The denial log: what each run refused, kept on the host in
 * {@code $XDG_STATE_HOME/agent-sandbox/log/} ({@code ~/.local/state/agent-sandbox/log/} by
 * default), read by {@code agent-sandbox log}.
 *
 * <p>Only the agent-sandbox process that started the sandbox writes it, after the sandbox
 * has ended, from what host-side code saw: the git guard's refusals (decided on the host),
 * the checks after the run (files moved aside or reported), and, once wired, the network
 * proxy's or the DNS filter's refused destinations ({@link #network}, both host side). The whole state directory is hidden in
 * every sandbox (an empty file system of the sandbox's own is mounted over it, also under
 * {@code --rw ~}), so no sandbox can read, write, truncate or forge an entry; what a sandbox
 * chose (a refused git command line) is only ever data inside a JSON string.
 *
 * <p>One kind comes from inside: a blocked command is refused by the launcher in the
 * sandbox, which reports the call over the git guard's socket (the one channel from inside
 * to the host the run already has; see {@code GuardProtocol}). The host keeps such a report
 * only for a command the run blocks, bounded in number and length, after the host's own
 * entries, and marks it {@code "source":"sandbox"} ({@link #blocked}): a sandbox can add
 * at most what calling its blocked commands would add, never change or hide another entry.
 *
 * <p>One line of JSON per run ({@code runs.jsonl}), appended under a lock: the run's start
 * and end, the working directory, the command, the policy's digest, the exit status and the
 * refusals ({@link #MAX_ENTRIES} at most per run; {@code "refused"} counts them all). The file
 * is rotated at {@link #MAX_BYTES} to {@code runs.1.jsonl}, whose predecessor goes: the log
 * never takes more than twice that.
 */
final class DenialLog {
    private DenialLog() {}

    /** Rotation size of the log file. */
    static final long MAX_BYTES = 1024 * 1024;
    /** Most refusals one run's record holds (the rest are counted). */
    static final int MAX_ENTRIES = 200;
    /** Longest text of one refusal. */
    static final int MAX_TEXT = 1000;
    static final String FILE = "runs.jsonl";
    static final String OLD_FILE = "runs.1.jsonl";

    /**
     * One refusal.
     *
     * @param kind     {@code git}, {@code network}, {@code command} or {@code file}
     * @param what     what was refused (a command line, a destination, a file)
     * @param why      the rule, or what was done about it
     * @param reported true when the sandbox reported it (its word, not what the host saw)
     */
    record Entry(String kind, String what, String why, boolean reported) {
        /** A refusal the host saw or decided. */
        Entry(String kind, String what, String why) {
            this(kind, what, why, false);
        }

        /** {@code "host"} or {@code "sandbox"}: who says it happened. */
        String source() {
            return reported ? "sandbox" : "host";
        }
    }

    /** One run's record. */
    record Run(String id, Instant start, Instant end, String project, List<String> command, String policy,
            int status, int refused, List<Entry> entries) {}

    /** The log's directory, or empty when neither XDG_STATE_HOME nor HOME says where. */
    static Optional<Path> dir(Environment env) {
        String xdg = env.hostEnv().get("XDG_STATE_HOME");
        if (xdg != null && xdg.startsWith("/")) {
            return Optional.of(Path.of(xdg, "agent-sandbox", "log"));
        }
        return env.home() == null ? Optional.empty()
                : Optional.of(env.home().resolve(".local/state/agent-sandbox/log"));
    }

    /**
     * The hook for the network stack: refused destinations as it records them on the host,
     * one a line, {@code DESTINATION<tab>WHY} (bounded), as entries of kind {@code network}.
     * A missing file is no refusal. The file must be one no sandbox can write (in the run's
     * host-side directory).
     */
    static List<Entry> network(Path refusedDestinations) {
        String text = readBounded(refusedDestinations, MAX_BYTES);
        return text == null ? new ArrayList<>() : network(List.of(text.split("\n")));
    }

    /**
     * The network's refusals as the run's proxy or DNS filter kept them on the host,
     * {@code DESTINATION<tab>WHY} each, as entries of kind {@code network}.
     */
    static List<Entry> network(List<String> lines) {
        List<String> kept = new ArrayList<>();
        for (String line : lines) {
            if (!line.isEmpty()) {
                kept.add(line);
            }
        }
        return entries("network", kept);
    }

    /** The git guard's refusals ({@code COMMAND<tab>WHY}) as entries. */
    static List<Entry> git(List<String> refusals) {
        return entries("git", refusals);
    }

    /** {@code WHAT<tab>WHY} lines as entries of {@code kind} (no tab: all of it is what). */
    private static List<Entry> entries(String kind, List<String> lines) {
        List<Entry> out = new ArrayList<>();
        for (String line : lines) {
            int tab = line.indexOf('\t');
            out.add(new Entry(kind, tab < 0 ? line : line.substring(0, tab), tab < 0 ? "" : line.substring(tab + 1)));
        }
        return out;
    }

    /**
     * The sandbox's reports of calls of blocked commands ({@code NAME<tab>COMMAND LINE}, as
     * the run's guard kept them) as entries of kind {@code command}, marked as reported.
     */
    static List<Entry> blocked(List<String> reports) {
        List<Entry> out = new ArrayList<>();
        for (String r : reports) {
            int tab = r.indexOf('\t');
            String name = tab < 0 ? r : r.substring(0, tab);
            out.add(new Entry("command", tab < 0 ? r : r.substring(tab + 1),
                    name + " is blocked in this sandbox (its command rule is false)", true));
        }
        return out;
    }

    /** The record of a run as one JSON line (see docs/denial-log.md). */
    static String json(Run run) {
        StringBuilder b = new StringBuilder("{\"version\":").append(Json.VERSION)
                .append(",\"id\":").append(Json.quote(run.id()))
                .append(",\"start\":").append(Json.quote(iso(run.start())))
                .append(",\"end\":").append(Json.quote(iso(run.end())))
                .append(",\"project\":").append(Json.quote(run.project()))
                .append(",\"command\":").append(Json.array(run.command()))
                .append(",\"policy\":").append(Json.quote(run.policy()))
                .append(",\"status\":").append(run.status())
                .append(",\"refused\":").append(run.refused())
                .append(",\"entries\":[");
        for (int i = 0; i < run.entries().size(); i++) {
            Entry e = run.entries().get(i);
            b.append(i == 0 ? "" : ",").append("{\"kind\":").append(Json.quote(e.kind()))
                    .append(",\"what\":").append(Json.quote(cut(e.what())))
                    .append(",\"why\":").append(Json.quote(cut(e.why())))
                    .append(",\"source\":").append(Json.quote(e.source())).append('}');
        }
        return b.append("]}").toString();
    }

    /**
     * An instant as ISO 8601 in UTC, to the millisecond ({@code 2026-11-26T20:40:01.123Z}),
     * made by hand: {@link Instant#toString()} sets up java.time's formatters, and with them
     * the regex engine, at the end of every run (and LocalDateTime brings a handful of classes).
     */
    static String iso(Instant t) {
        long millis = t.toEpochMilli();
        long days = Math.floorDiv(millis, 86_400_000L);
        long ofDay = Math.floorMod(millis, 86_400_000L);
        // the civil date of a day count (proleptic Gregorian), without java.time's classes
        long z = days + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long doe = z - era * 146_097;
        long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        int day = (int) (doy - (153 * mp + 2) / 5 + 1);
        int month = (int) (mp < 10 ? mp + 3 : mp - 9);
        int year = (int) (yoe + era * 400 + (month <= 2 ? 1 : 0));
        StringBuilder b = new StringBuilder(24);
        pad(b, year, 4).append('-');
        pad(b, month, 2).append('-');
        pad(b, day, 2).append('T');
        pad(b, (int) (ofDay / 3_600_000), 2).append(':');
        pad(b, (int) (ofDay / 60_000 % 60), 2).append(':');
        pad(b, (int) (ofDay / 1000 % 60), 2).append('.');
        return pad(b, (int) (ofDay % 1000), 3).append('Z').toString();
    }

    private static StringBuilder pad(StringBuilder b, int value, int digits) {
        String s = Integer.toString(value);
        for (int i = s.length(); i < digits; i++) {
            b.append('0');
        }
        return b.append(s);
    }

    private static String cut(String s) {
        return s.length() > MAX_TEXT ? s.substring(0, MAX_TEXT) + "..." : s;
    }

    /**
     * Appends a run's record (its entries cut to {@link #MAX_ENTRIES}), rotating first when
     * the file has reached {@link #MAX_BYTES}. Refuses a log directory or file that is a
     * link or not the user's own.
     */
    static void append(Environment env, Run run) {
        Optional<Path> found = dir(env);
        if (found.isEmpty()) {
            return;
        }
        Path dir = found.get();
        List<Entry> kept = run.entries().size() > MAX_ENTRIES ? run.entries().subList(0, MAX_ENTRIES) : run.entries();
        byte[] line = (json(new Run(run.id(), run.start(), run.end(), run.project(), run.command(), run.policy(),
                run.status(), run.refused(), kept)) + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            createPrivateDirs(dir);
            Path file = dir.resolve(FILE);
            try (FileChannel ch = FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                    FileLock lock = ch.lock()) {
                if (ch.size() + line.length > MAX_BYTES && ch.size() > 0) {
                    // rotate under the lock: the full file goes aside, a new one starts
                    Files.move(file, dir.resolve(OLD_FILE), StandardCopyOption.REPLACE_EXISTING,
                            StandardCopyOption.ATOMIC_MOVE);
                    try (FileChannel fresh = FileChannel.open(file, java.util.Set.of(StandardOpenOption.CREATE_NEW,
                            StandardOpenOption.WRITE, StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS),
                            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
                        writeAll(fresh, line);
                    }
                } else {
                    writeAll(ch, line);
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new SandboxException("cannot write the denial log in " + dir + ": " + e.getMessage(),
                    "check that the directory is yours and writable");
        }
    }

    private static void writeAll(FileChannel ch, byte[] bytes) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
    }

    private static void createPrivateDirs(Path dir) throws IOException {
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory");
        }
        Path parent = dir.getParent();
        if (parent != null) {
            createPrivateDirs(parent);
        }
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw e;
            }
        }
    }

    /** Every run's record, oldest first (the rotated file, then the current one); bad lines skipped. */
    static List<Run> read(Environment env) {
        List<Run> runs = new ArrayList<>();
        Optional<Path> dir = dir(env);
        if (dir.isEmpty()) {
            return runs;
        }
        for (String name : List.of(OLD_FILE, FILE)) {
            String text = readBounded(dir.get().resolve(name), 2 * MAX_BYTES);
            if (text == null) {
                continue;
            }
            for (String line : text.split("\n")) {
                Run r = parse(line);
                if (r != null) {
                    runs.add(r);
                }
            }
        }
        return runs;
    }

    private static Run parse(String line) {
        try {
            Jsonc.Value v = Jsonc.parse(line);
            if (!(v instanceof Jsonc.Obj o)) {
                return null;
            }
            List<String> command = new ArrayList<>();
            for (Jsonc.Value c : ((Jsonc.Arr) o.members().get("command").value()).items()) {
                command.add(((Jsonc.Str) c).value());
            }
            List<Entry> entries = new ArrayList<>();
            for (Jsonc.Value e : ((Jsonc.Arr) o.members().get("entries").value()).items()) {
                Jsonc.Obj eo = (Jsonc.Obj) e;
                Jsonc.Member source = eo.members().get("source");
                entries.add(new Entry(str(eo, "kind"), str(eo, "what"), str(eo, "why"),
                        source != null && source.value() instanceof Jsonc.Str s && s.value().equals("sandbox")));
            }
            return new Run(str(o, "id"), Instant.parse(str(o, "start")), Instant.parse(str(o, "end")),
                    str(o, "project"), command, str(o, "policy"), num(o, "status"), num(o, "refused"), entries);
        } catch (Jsonc.SyntaxError | RuntimeException e) {
            return null;
        }
    }

    private static String str(Jsonc.Obj o, String key) {
        return ((Jsonc.Str) o.members().get(key).value()).value();
    }

    private static int num(Jsonc.Obj o, String key) {
        return Integer.parseInt(((Jsonc.Num) o.members().get(key).value()).text());
    }

    /** A regular file's text (never a link or a FIFO), up to a bound; null when there is none. */
    private static String readBounded(Path file, long max) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile()) {
                return null;
            }
            try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                return new String(in.readNBytes((int) Math.min(max, Integer.MAX_VALUE - 8)), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return null;
        }
    }
}
