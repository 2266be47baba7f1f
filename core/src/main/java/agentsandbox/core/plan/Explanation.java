// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.Environment;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;
import agentsandbox.core.Sandbox;
import agentsandbox.core.rules.Specificity;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a run's sandbox shows at each path, and the rule that decided it: the record behind
 * {@code agent-sandbox explain}. Every plan has one ({@link Plan#explanation()}); a run
 * writes it ({@link #format()}) into its run directory before bwrap starts, bound
 * read-only at {@link Inside#POLICY}, so that {@code explain} inside a sandbox answers
 * for the sandbox it runs in. Inside it is for display only: nothing is decided from it,
 * and the host side never reads it back.
 *
 * @param workDir the run's working directory
 * @param home    the home directory, or {@code null}
 * @param configs the config files of the run: loaded, or where they would be read
 * @param entries in mount order: the last entry at or above a path decides what the
 *                sandbox shows there (a later mount covers an earlier one); the first is
 *                always the read-only root
 */
public record Explanation(Path workDir, Path home, List<Config> configs, List<Entry> entries) {

    /** The first line of the record; another version is refused rather than misread. */
    static final String HEADER = "agent-sandbox policy 1";
    /** A record larger than this is refused (a real one is a few kilobytes). */
    public static final int MAX_BYTES = 4 * 1024 * 1024;

    public Explanation {
        configs = List.copyOf(configs);
        entries = List.copyOf(entries);
    }

    /** What the sandbox shows at an entry's path. */
    public enum Shows {
        /** The host's root, read-only. */
        ROOT,
        /** The host's own content at this path, by a rule. */
        HOST,
        /** Another host path's content ({@link Entry#view()}), such as a shared temp dir at {@code /tmp}. */
        VIEW,
        /** The run's private temp dir at {@code /tmp}. */
        PRIVATE_TMP,
        /** An excluded directory: empty. */
        EMPTY_DIR,
        /** An excluded file: there, unreadable. */
        UNREADABLE_FILE,
        /** agent-sandbox's own state: an empty file system of the sandbox's own. */
        OWN_STATE,
        /** A host session's socket, or a directory of them, out of reach. */
        SOCKET,
        /** The Docker socket: {@code /dev/null} unless Docker is on. */
        DOCKER,
        /** A wrapped command's path: agent-sandbox's launcher. */
        LAUNCHER,
        /** A fresh {@code /run} of the sandbox's own. */
        FRESH,
        /** The sandbox's own {@code /dev}. */
        DEVICES,
        /** The sandbox's own {@code /proc}. */
        PROCESSES,
        /** The sandbox's runtime, {@code /run/agent-sandbox}. */
        RUNTIME
    }

    /**
     * A rule that asked for a path's access.
     *
     * @param access  the level it asks for
     * @param origin  its layer and source (a preset, a config file, {@code flags})
     * @param written the rule as written (a pattern, or the path a preset names)
     * @param exact   whether it names the path itself rather than through a glob
     */
    public record Why(Access access, Origin origin, String written, boolean exact) {}

    /**
     * One path with a decision of its own.
     *
     * @param path       the path inside the sandbox
     * @param shows      what appears there
     * @param view       the host path shown there when it is another one ({@link Shows#VIEW}), else null
     * @param why        the deciding rule
     * @param overridden the rules for the same path that lost
     */
    public record Entry(Path path, Shows shows, Path view, Why why, List<Why> overridden) {
        public Entry {
            overridden = List.copyOf(overridden);
        }

        public Access access() {
            return why.access();
        }
    }

    /**
     * A config file of the run.
     *
     * @param layer  {@link Layer#GLOBAL} or {@link Layer#PROJECT}
     * @param file   the file, or where it would be read
     * @param status {@code loaded}, {@code not found}, or what the CLI knows (trusted, given with -c)
     */
    public record Config(Layer layer, Path file, String status) {}

    /** The entry that decides what the sandbox shows at {@code path} (absolute, symlinks resolved). */
    public Entry decide(Path path) {
        Entry found = null;
        for (Entry e : entries) {
            if (path.startsWith(e.path())) {
                found = e;
            }
        }
        return found;
    }

    /** The config file of a layer, or null. */
    public Config config(Layer layer) {
        for (Config c : configs) {
            if (c.layer() == layer) {
                return c;
            }
        }
        return null;
    }

    /** A copy with other config files (the CLI knows which were trusted). */
    public Explanation withConfigs(List<Config> other) {
        return new Explanation(workDir, home, other, entries);
    }

    // ------------------------------------------------------------------ made from a plan

    /**
     * The explanation of a plan's mounts. The policy's mounts ({@code policyFrom} to
     * {@code policyTo}) stand for every decision, those that need no mount of their own
     * included (a read-only path under a read-only one still has a rule that decides it).
     */
    public static Explanation of(Environment env, Policy policy, List<Mount> mounts, int policyFrom, int policyTo,
            List<Specificity.Decision> decisions, Path privateTmp, Origin ownState, Origin sessionSockets) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < mounts.size(); i++) {
            if (i == policyFrom) {
                policyEntries(decisions, privateTmp, entries);
            }
            if (i >= policyFrom && i < policyTo) {
                continue;
            }
            Entry e = mountEntry(mounts.get(i), env, ownState, sessionSockets);
            if (e != null) {
                entries.add(e);
            }
        }
        if (policyFrom >= mounts.size()) {
            policyEntries(decisions, privateTmp, entries);
        }
        List<Config> configs = new ArrayList<>();
        for (PolicyLayer l : policy.layers()) {
            if (l.layer() == Layer.GLOBAL || l.layer() == Layer.PROJECT) {
                configs.add(new Config(l.layer(), Path.of(l.source()), "loaded"));
            }
        }
        return new Explanation(env.workDir(), env.home(), configs, entries);
    }

    private static void policyEntries(List<Specificity.Decision> decisions, Path privateTmp, List<Entry> out) {
        List<Specificity.Decision> sorted = new ArrayList<>(decisions);
        sorted.sort(new java.util.Comparator<Specificity.Decision>() {
            @Override
            public int compare(Specificity.Decision a, Specificity.Decision b) {
                return Planner.DEPTH_ORDER.compare(a.path(), b.path());
            }
        });
        for (Specificity.Decision d : sorted) {
            Candidate w = d.winner();
            Shows shows;
            Path view = null;
            if (privateTmp != null && w.path().equals(Inside.TMP) && w.source().equals(privateTmp)) {
                shows = Shows.PRIVATE_TMP;
            } else if (!w.source().equals(w.path())) {
                shows = Shows.VIEW;
                view = w.source();
            } else if (w.access() == Access.EXCLUDE) {
                shows = Files.isDirectory(w.path()) ? Shows.EMPTY_DIR : Shows.UNREADABLE_FILE;
            } else {
                shows = Shows.HOST;
            }
            List<Why> lost = new ArrayList<>(d.overridden().size());
            for (Candidate c : d.overridden()) {
                lost.add(why(c));
            }
            out.add(new Entry(w.path(), shows, view, why(w), lost));
        }
    }

    private static Why why(Candidate c) {
        return new Why(c.access(), c.origin(), c.rule(), c.exact());
    }

    /** The entry for a mount that no policy rule made, or null for what the runtime entry covers. */
    private static Entry mountEntry(Mount m, Environment env, Origin ownState, Origin sessionSockets) {
        Path t = m.target();
        if (t.startsWith(Inside.RUNTIME) && !t.equals(Inside.RUNTIME)) {
            return null; // the runtime's own files: the entry for the runtime answers for them
        }
        Shows shows;
        if (m.origin() == ownState) {
            shows = Shows.OWN_STATE;
        } else if (m.origin() == sessionSockets) {
            shows = Shows.SOCKET;
        } else if (m.origin().source().startsWith("docker ")) {
            shows = Shows.DOCKER;
        } else {
            shows = switch (m.kind()) {
                case ROOT -> Shows.ROOT;
                case DEVICES -> Shows.DEVICES;
                case PROCESSES -> Shows.PROCESSES;
                case FRESH_DIR -> t.equals(Inside.RUNTIME) ? Shows.RUNTIME : Shows.FRESH;
                case READ_ONLY, READ_WRITE -> env.installation() != null
                        && m.source().equals(env.installation().launcher()) ? Shows.LAUNCHER
                        : m.isView() ? Shows.VIEW : Shows.HOST;
                case EMPTY_DIR -> Shows.EMPTY_DIR;
                case PRIVATE_DIR -> Shows.FRESH;
                case BOUNDED_TMP -> Shows.PRIVATE_TMP;
                case UNREADABLE_FILE -> Shows.UNREADABLE_FILE;
                case NULL_DEVICE -> Shows.SOCKET;
                case SYMLINK, SEARCH_ONLY_DIR, REMOUNT_READ_ONLY -> null;
            };
            if (shows == null) {
                return null;
            }
        }
        return new Entry(t, shows, shows == Shows.VIEW ? m.source() : null,
                new Why(m.access(), m.origin(), t.toString(), true), List.of());
    }

    // ------------------------------------------------------------------ the record's text

    /**
     * The record as text: a header line, then one line per fact, fields separated by tabs;
     * a tab, line break, carriage return or backslash in a field is written {@code \t},
     * {@code \n}, {@code \r}, {@code \\}.
     *
     * <pre>
     * agent-sandbox policy 1
     * workdir  PATH
     * home     PATH                  (empty when there is none)
     * config   LAYER PATH STATUS
     * entry    PATH SHOWS VIEW ACCESS LAYER SOURCE WRITTEN EXACT
     * over     ACCESS LAYER SOURCE WRITTEN EXACT      (a rule the entry above beat)
     * </pre>
     */
    public String format() {
        StringBuilder sb = new StringBuilder(HEADER).append('\n');
        line(sb, "workdir", workDir.toString());
        line(sb, "home", home == null ? "" : home.toString());
        for (Config c : configs) {
            line(sb, "config", c.layer().word(), c.file().toString(), c.status());
        }
        for (Entry e : entries) {
            Why w = e.why();
            line(sb, "entry", e.path().toString(), e.shows().name().toLowerCase(java.util.Locale.ROOT),
                    e.view() == null ? "" : e.view().toString(), w.access().word(), w.origin().layer().word(),
                    w.origin().source(), w.written(), w.exact() ? "exact" : "glob");
            for (Why o : e.overridden()) {
                line(sb, "over", o.access().word(), o.origin().layer().word(), o.origin().source(), o.written(),
                        o.exact() ? "exact" : "glob");
            }
        }
        return sb.toString();
    }

    /** Whether a field holds nothing {@link #line} escapes. */
    private static boolean plain(String f) {
        for (int k = 0; k < f.length(); k++) {
            char c = f.charAt(k);
            if (c == '\\' || c == '\t' || c == '\n' || c == '\r') {
                return false;
            }
        }
        return true;
    }

    private static void line(StringBuilder sb, String... fields) {
        for (int i = 0; i < fields.length; i++) {
            if (i > 0) {
                sb.append('\t');
            }
            String f = fields[i];
            if (plain(f)) {
                sb.append(f); // one copy, not a call per character (every start writes this record)
                continue;
            }
            for (int k = 0; k < f.length(); k++) {
                char c = f.charAt(k);
                switch (c) {
                    case '\\' -> sb.append("\\\\");
                    case '\t' -> sb.append("\\t");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    default -> sb.append(c);
                }
            }
        }
        sb.append('\n');
    }

    /**
     * Reads a record that {@link #format()} wrote.
     *
     * @throws IllegalArgumentException naming the line that is not one
     */
    public static Explanation parse(String text) {
        String[] lines = text.split("\n", -1);
        if (!lines[0].equals(HEADER)) {
            throw new IllegalArgumentException("line 1: expected '" + HEADER + "'");
        }
        Path workDir = null;
        Path home = null;
        List<Config> configs = new ArrayList<>();
        List<Entry> entries = new ArrayList<>();
        List<Why> over = new ArrayList<>();
        Entry pending = null;
        for (int n = 1; n < lines.length; n++) {
            if (lines[n].isEmpty() && n == lines.length - 1) {
                break;
            }
            List<String> f = fields(lines[n], n + 1);
            try {
                switch (f.get(0)) {
                    case "workdir" -> workDir = path(f, 2);
                    case "home" -> home = count(f, 2).get(1).isEmpty() ? null : path(f, 2);
                    case "config" -> configs.add(new Config(layer(count(f, 4).get(1)), Path.of(f.get(2)), f.get(3)));
                    case "entry" -> {
                        if (pending != null) {
                            entries.add(new Entry(pending.path(), pending.shows(), pending.view(), pending.why(), over));
                            over = new ArrayList<>();
                        }
                        count(f, 9);
                        Path p = path(f.subList(0, 2), 2);
                        Shows shows = Shows.valueOf(f.get(2).toUpperCase(java.util.Locale.ROOT));
                        Path view = f.get(3).isEmpty() ? null : Path.of(f.get(3));
                        pending = new Entry(p, shows, view, why(f.subList(4, 9)), List.of());
                    }
                    case "over" -> {
                        if (pending == null) {
                            throw new IllegalArgumentException("a rule that lost, before any entry");
                        }
                        over.add(why(count(f, 6).subList(1, 6)));
                    }
                    default -> throw new IllegalArgumentException("unknown line '" + f.get(0) + "'");
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("line " + (n + 1) + ": " + e.getMessage(), e);
            }
        }
        if (pending != null) {
            entries.add(new Entry(pending.path(), pending.shows(), pending.view(), pending.why(), over));
        }
        if (workDir == null || entries.isEmpty() || !entries.get(0).path().equals(Path.of("/"))) {
            throw new IllegalArgumentException("incomplete: no working directory or no root entry");
        }
        return new Explanation(workDir, home, configs, entries);
    }

    private static List<String> fields(String line, int number) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\t') {
                out.add(cur.toString());
                cur.setLength(0);
            } else if (c == '\\') {
                if (++i >= line.length()) {
                    throw new IllegalArgumentException("line " + number + ": a backslash at the end");
                }
                switch (line.charAt(i)) {
                    case '\\' -> cur.append('\\');
                    case 't' -> cur.append('\t');
                    case 'n' -> cur.append('\n');
                    case 'r' -> cur.append('\r');
                    default -> throw new IllegalArgumentException("line " + number + ": unknown escape \\"
                            + line.charAt(i));
                }
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    private static List<String> count(List<String> f, int n) {
        if (f.size() != n) {
            throw new IllegalArgumentException("'" + f.get(0) + "' has " + f.size() + " fields, not " + n);
        }
        return f;
    }

    private static Path path(List<String> f, int n) {
        Path p = Path.of(count(f, n).get(1));
        if (!p.isAbsolute()) {
            throw new IllegalArgumentException("not an absolute path: " + f.get(1));
        }
        return p;
    }

    /** access, layer, source, written, exact|glob. */
    private static Why why(List<String> f) {
        Access access = switch (f.get(0)) {
            case "rw" -> Access.RW;
            case "ro" -> Access.RO;
            case "exclude" -> Access.EXCLUDE;
            default -> throw new IllegalArgumentException("unknown access '" + f.get(0) + "'");
        };
        boolean exact = switch (f.get(4)) {
            case "exact" -> true;
            case "glob" -> false;
            default -> throw new IllegalArgumentException("expected exact or glob, not '" + f.get(4) + "'");
        };
        return new Why(access, new Origin(layer(f.get(1)), f.get(2)), f.get(3), exact);
    }

    private static Layer layer(String word) {
        for (Layer l : Layer.values()) {
            if (l.word().equals(word)) {
                return l;
            }
        }
        throw new IllegalArgumentException("unknown layer '" + word + "'");
    }
}
