// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.Environment;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Path resolution: {@code ~}, relative paths and globs expanded, symlinks resolved,
 * missing paths dropped. Every step is noted for {@code --debug}.
 */
public final class Resolver {
    /** Where the sandbox keeps its own runtime; no policy rule may touch it. */
    public static final Path RESERVED = Path.of("/run/agent-sandbox");
    /** The sandbox's own process file system; no policy rule may touch it either. */
    static final Path PROC = Path.of("/proc");
    private static final Path ROOT = Path.of("/");
    /** Fresh file systems of the sandbox's own: rules may add host paths below them, not replace them. */
    private static final List<Path> OWN_FILE_SYSTEMS = List.of(Path.of("/dev"), Path.of("/run"));

    private final Environment env;
    private final List<String> notes;
    private final java.util.Set<Path> created;
    private final List<Path> writable;
    /** Whether every match gets a note (for --debug); the others are noted in any case. */
    private final boolean detail;

    /**
     * @param created  paths the run creates before the sandbox starts: resolved as if they existed
     * @param writable directories some rule makes writable (resolved): a symlink in one of them
     *                 may have been planted by an earlier sandbox, so no read-only or writable
     *                 rule follows it (see {@link #plantedLink})
     */
    public Resolver(Environment env, List<String> notes, java.util.Set<Path> created, List<Path> writable, boolean detail) {
        this(env, notes, created, writable, detail, new java.util.HashMap<>());
    }

    private Resolver(Environment env, List<String> notes, java.util.Set<Path> created, List<Path> writable,
            boolean detail, java.util.Map<Path, Path> literals) {
        this.env = env;
        this.notes = notes;
        this.created = created;
        this.writable = writable;
        this.detail = detail;
        this.literals = literals;
    }

    /**
     * This resolver for the writable directories that {@link #writableRoots} found: the
     * rules' literal paths it resolved on the way are not resolved again.
     */
    public Resolver withWritable(List<Path> writable) {
        return new Resolver(env, notes, created, writable, detail, literals);
    }

    /**
     * The rules' literal paths resolved by this plan, null for a missing one: every writable
     * grant is resolved for {@link #writableRoots} and again as a rule, a system call and the
     * interpreter's path work each, at every start.
     */
    private final java.util.Map<Path, Path> literals;

    /**
     * This resolver with {@code literal} taken to resolve to {@code real}, as found once for
     * the whole plan (the working directory: every rule on it means the same directory).
     */
    public Resolver resolvedAs(Path literal, Path real) {
        literals.put(literal, real);
        workReal = real;
        return this;
    }

    /**
     * The working directory, resolved once for the plan ({@link #resolvedAs}): it has no
     * link on its path, so a link found there later can only be a concurrent swap.
     */
    private Path workReal;

    /**
     * For a rule resolved through a link: the walk finds every link on the way, and one at
     * the working directory or above it (the repository's git dir above a subdirectory, the
     * project's own rules) stops the run (see {@link #walk}); the walk must end where the
     * kernel's resolution did. Rules of every level, hidden ones included: a swap must not
     * move an exclusion away from the file it hides either.
     */
    private void checkLinkedPath(Path p, Path real) {
        if (workReal != null && !real.equals(p)) {
            walk(p, false);
            sameWalk(p, real);
        }
    }

    private Path realLiteral(Path p) {
        Path real = literals.get(p);
        if (real == null && !literals.containsKey(p)) {
            real = realPath(p);
            literals.put(p, real);
        }
        return real;
    }

    public List<Candidate> resolve(List<Rule> rules) {
        List<Candidate> out = new ArrayList<>();
        for (Rule r : rules) {
            if (r.literal() != null) {
                resolveLiteral(r, out);
            } else {
                resolvePattern(r, out);
            }
        }
        return out;
    }

    private void resolveLiteral(Rule r, List<Candidate> out) {
        Path real = realLiteral(r.literal());
        if (real == null && created.contains(r.literal())) {
            real = createdPath(r.literal());
        }
        if (real == null) {
            return; // presets name many paths that a given machine does not have
        }
        if (!real.equals(r.literal()) && r.access() != Access.EXCLUDE && !namedByUser(r)) {
            Path link = plantedLink(r.literal());
            if (link != null) {
                skipPlanted(r, r.literal(), link);
                return;
            }
            sameWalk(r.literal(), real);
        } else {
            checkLinkedPath(r.literal(), real);
        }
        checkTarget(r, real, real);
        Path source = r.source() == null ? real : realPath(r.source());
        if (source == null) {
            notes.add("skip " + r.written() + " (" + r.origin() + "): " + r.source() + " does not exist");
            return;
        }
        out.add(new Candidate(r.source() == null ? real : r.literal(), source, r.access(), r.origin(), true,
                r.written()));
    }

    private void resolvePattern(Rule r, List<Candidate> out) {
        PathPattern p;
        try {
            p = PathPattern.parse(r.pattern());
        } catch (IllegalArgumentException e) {
            throw new SandboxException(r.origin().source() + ": " + e.getMessage());
        }
        checkBelowReserved(r, lexical(r.pattern()));
        if (p.needsHome() && env.home() == null) {
            notes.add("skip " + r.access().word() + " " + r.pattern() + " (" + r.origin()
                    + "): there is no home directory");
            return;
        }
        List<Path> matches = p.expand(env.home(), env.workDir());
        if (matches.isEmpty()) {
            notes.add("skip " + r.access().word() + " " + r.pattern() + " (" + r.origin() + "): "
                    + (p.isGlob() ? "the glob matches nothing" : "does not exist"));
            return;
        }
        boolean exact = !p.isGlob();
        java.nio.file.attribute.BasicFileAttributes[] looked = lookUp(matches);
        for (int i = 0; i < matches.size(); i++) {
            Path m = matches.get(i);
            Boolean[] directory = new Boolean[1];
            Path real = looked == null ? resolved(m, directory) : resolved(m, directory, looked[i]);
            if (real == null) {
                notes.add("skip " + r.access().word() + " " + m + " (" + r.origin() + "): dangling symlink");
                continue;
            }
            if (!real.equals(m) && r.access() != Access.EXCLUDE && !namedByUser(r)) {
                Path link = plantedLink(m);
                if (link != null) {
                    skipPlanted(r, m, link);
                    continue;
                }
                sameWalk(m, real);
            } else {
                checkLinkedPath(m, real);
            }
            checkTarget(r, m, real);
            checkNameRepresentable(r, m, real);
            if (detail) {
                String how = real.equals(m) ? "" : " (symlink to " + real + ")";
                notes.add("resolve " + r.access().word() + " " + r.pattern() + " (" + r.origin() + ") -> " + m + how);
            }
            out.add(new Candidate(real, real, r.access(), r.origin(), exact, r.pattern(), directory[0]));
        }
    }

    /** The lexical absolute form of a pattern, up to its first glob segment. */
    private Path lexical(String pattern) {
        String fixed = pattern;
        int glob = indexOfGlob(pattern);
        if (glob >= 0) {
            int slash = pattern.lastIndexOf('/', glob);
            fixed = slash < 0 ? "" : pattern.substring(0, slash);
        }
        if (fixed.equals("~") || fixed.startsWith("~/")) {
            // "~" or "~/rest": the rest below the home
            String rest = fixed.length() > 1 ? fixed.substring(2) : "";
            return env.home() == null ? null : env.home().resolve(rest).normalize();
        }
        return env.workDir().resolve(fixed).normalize();
    }

    private static int indexOfGlob(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '*' || c == '?' || c == '[') {
                return i;
            }
        }
        return -1;
    }

    /**
     * Before anything is looked up: a rule written for a path at or below the reserved
     * runtime or {@code /proc} is refused whether or not that path exists (as the rule is
     * written, up to its first glob; {@code /proc/self/...} names agent-sandbox's own
     * process on the host, which may well exist).
     */
    private static void checkBelowReserved(Rule r, Path lexical) {
        if (lexical != null && (lexical.startsWith(RESERVED) || lexical.startsWith(PROC))) {
            String clause = indexOfGlob(r.written()) >= 0 ? " lies in " + lexical
                    : lexical.toString().equals(r.written()) ? "" : " targets " + lexical;
            throw refused(r, clause, lexical, refusal(lexical, r.access()));
        }
    }

    /** After resolution: the path the rule would mount at ({@code real}) must be one a rule may change. */
    private static void checkTarget(Rule r, Path match, Path real) {
        String why = refusal(real, r.access());
        if (why != null) {
            String clause = real.toString().equals(r.written()) ? ""
                    : indexOfGlob(r.written()) >= 0 ? " matches " + match + (match.equals(real) ? "" : ", a link to " + real)
                    : match.equals(real) ? " targets " + real
                    : " is a link to " + real;
            throw refused(r, clause, real, why);
        }
    }

    /**
     * Why no rule may give {@code access} to {@code p}, or {@code null} when one may.
     * bwrap would fail on most of these with a message of its own ("Can't mkdir
     * parents for /proc/1234/environ", "Can't mkdir /run/agent-sandbox"), or worse,
     * succeed: a bind of a host {@code /proc/PID} shows a host process inside, and
     * anything mounted in {@code /proc} keeps nested sandboxes from mounting a {@code /proc}
     * of their own. Rules below {@code /dev} and {@code /run} (a host device such as
     * {@code /dev/kvm}, a directory under {@code /run/user}) and anywhere in {@code /sys}
     * work and stay allowed; {@code ro /} is what the root already is and changes nothing.
     */
    public static String refusal(Path p, Access access) {
        if (p.startsWith(RESERVED)) {
            return RESERVED + " is reserved for agent-sandbox's own runtime";
        }
        if (p.startsWith(PROC)) {
            return "/proc in the sandbox is its own process file system, which rules cannot change (host paths"
                    + " there name host processes; /proc/self is agent-sandbox itself)";
        }
        if (p.equals(ROOT) && access != Access.RO) {
            return "/ is the host root, read-only in every sandbox: a rule on / itself would also cover the"
                    + " sandbox's own /dev, /proc and /run";
        }
        if (OWN_FILE_SYSTEMS.contains(p)) {
            return p + " in the sandbox is a fresh file system of its own (" + (p.endsWith("dev")
                    ? "null, zero, random, tty, pts, shm" : "holding its runtime at " + RESERVED)
                    + "), which rules can add host paths below but not replace";
        }
        return null;
    }

    private static SandboxException refused(Rule r, String clause, Path target, String why) {
        String rule = r.pattern() != null && r.origin().layer() == Layer.FLAG && r.origin().source().equals("flags")
                ? "--" + r.access().word() + " " + r.written()
                : r.origin().source() + ": rule '" + r.access().word() + " " + r.written() + "'";
        String hint = target.equals(ROOT) ? "name the directories the command needs instead"
                : target.startsWith(RESERVED) || target.startsWith(PROC) ? "remove the rule"
                : "name the paths below " + target + " that the command needs instead"
                        + (target.endsWith("dev") ? ", e.g. --rw /dev/dri" : "");
        return new SandboxException(rule + clause + ": " + why, hint);
    }

    /**
     * A path whose name is not valid UTF-8 cannot be written on bwrap's command line: its
     * text form names another file (or none). Skipping it would silently drop the rule
     * (an excluded secret would stay readable), so it is an error.
     */
    private static void checkNameRepresentable(Rule r, Path match, Path real) {
        // bytes that are not UTF-8 read as U+FFFD; only then is the full check needed
        if (real.toString().indexOf('\uFFFD') >= 0 && !Path.of(real.toString()).equals(real)) {
            throw new SandboxException(r.origin().source() + ": rule '" + r.written() + "' matches " + match
                    + ", whose path is not valid UTF-8, so agent-sandbox cannot pass it to bwrap",
                    "rename it, or write the rule so that it does not match it");
        }
    }

    /**
     * The directories the rules make writable, as written and resolved (more of them only
     * means fewer links followed): a glob's fixed part stands for all it may match.
     */
    public List<Path> writableRoots(List<Rule> rules) {
        java.util.Set<Path> roots = new java.util.LinkedHashSet<>();
        for (Rule r : rules) {
            if (r.access() != Access.RW) {
                continue;
            }
            Path base = r.literal() != null ? r.literal() : lexical(r.pattern());
            if (base == null) {
                continue;
            }
            roots.add(base);
            Path real = r.literal() != null ? realLiteral(base) : realPath(base);
            if (real != null) {
                roots.add(real);
            }
        }
        return List.copyOf(roots);
    }

    /**
     * A rule given as a flag follows every link, as specified: the user names the path for
     * this run, now. Rules that stay (presets, the config files' protection, the global and
     * the project config) name places that may lie inside writable directories, where a
     * sandbox can put a link after the rule was written (or trusted); those follow only
     * links the host made.
     */
    private static boolean namedByUser(Rule r) {
        return r.origin().layer() == Layer.FLAG && !r.origin().source().equals("config protection");
    }

    private void skipPlanted(Rule r, Path path, Path link) {
        notes.add("skip " + r.access().word() + " " + path + " (" + r.origin() + "): it leads through the symlink "
                + link + ", in a directory sandboxes can write, so a sandbox may have planted it");
    }

    /**
     * The first symlink on the way to {@code p} that lies in a directory a rule makes
     * writable, or null when there is none. Such a link is the sandbox's to make: one run
     * plants {@code ~/.m2/settings.xml -> ../.ssh/id_rsa}, and the next would show the key
     * where a read-only rule on that name points. Hiding follows any link (it only
     * restricts); showing and opening up follow only links the host made.
     */
    Path plantedLink(Path p) {
        return walk(p, true);
    }

    /**
     * Resolves {@code p} one component at a time, noting where it ends in {@link #walked};
     * returns the first link found in a writable directory when {@code stopAtPlanted}
     * (leaving {@link #walked} null), else follows it like any other.
     */
    private Path walk(Path p, boolean stopAtPlanted) {
        walked = null;
        if (writable.isEmpty() && workReal == null) {
            walked = realPath(p); // no directory is writable: no link on the way can be planted
            return null;
        }
        java.util.ArrayDeque<String> todo = new java.util.ArrayDeque<>();
        for (Path c : p) {
            todo.addLast(c.toString());
        }
        Path current = ROOT;
        int links = 0;
        while (!todo.isEmpty()) {
            String c = todo.pollFirst();
            if (c.isEmpty() || c.equals(".")) {
                continue;
            }
            if (c.equals("..")) {
                current = current.getParent() == null ? current : current.getParent();
                continue;
            }
            Path next = current.resolve(c);
            if (!Files.isSymbolicLink(next)) {
                current = next;
                continue;
            }
            if (workReal != null && workReal.startsWith(next)) {
                throw new SandboxException(next + " " + MountChecks.CHANGED + " (the working directory, or a directory"
                        + " above it, is a symbolic link now): a concurrent process put a link in its place; nothing"
                        + " ran, start again");
            }
            for (Path w : stopAtPlanted ? writable : List.<Path>of()) {
                if (current.startsWith(w)) {
                    return next;
                }
            }
            Path target;
            try {
                target = Files.readSymbolicLink(next);
            } catch (IOException e) {
                return next;
            }
            if (++links > 40) {
                return next;
            }
            List<String> parts = new ArrayList<>();
            for (Path t : target) {
                parts.add(t.toString());
            }
            for (int i = parts.size() - 1; i >= 0; i--) {
                todo.addFirst(parts.get(i));
            }
            if (target.isAbsolute()) {
                current = ROOT;
            }
        }
        walked = current;
        return null;
    }

    /** Where the last {@link #plantedLink} walk that found no planted link ended. */
    private Path walked;

    /**
     * The path was resolved twice, once by the kernel and once by {@link #plantedLink}'s
     * walk, which decided that no link on the way was planted: both must end at the same
     * file. Otherwise a concurrent process swapped a link in or out meanwhile, and the
     * first resolution may have gone through a link the walk would have refused.
     */
    private void sameWalk(Path p, Path real) {
        if (walked == null || !real.equals(walked)) {
            throw new SandboxException(p + " " + MountChecks.CHANGED + " (it led to " + real + ", then elsewhere): a"
                    + " concurrent process put a link in its place or took one away; nothing ran, start again");
        }
    }

    /** Where a path the run will create will be: its nearest existing parent, resolved, and the rest. */
    public static Path createdPath(Path p) {
        Path rest = p.getFileName();
        for (Path parent = p.getParent(); parent != null; parent = parent.getParent()) {
            Path real = realPath(parent);
            if (real != null) {
                return real.resolve(rest);
            }
            rest = parent.getFileName().resolve(rest);
        }
        return null;
    }

    /**
     * Resolved directories, for {@link #resolved}: a glob's matches share their parents, and
     * resolving each match from the root again would cost a system call per component per
     * match (20 000 matches of one {@code --exclude '*'} make that a second).
     */
    private final java.util.Map<Path, Path> resolvedDirs = new java.util.HashMap<>();

    /**
     * {@link #realPath}, with the parent's resolution remembered: a match that is not a
     * symlink itself is its resolved parent plus its name, one {@code lstat} each. That
     * lstat also tells whether it is a directory: put in {@code directory[0]} (left null
     * when the lookup did not tell).
     */
    private Path resolved(Path p, Boolean[] directory) {
        return resolved(p, directory, lstat(p));
    }

    /** {@link #resolved(Path, Boolean[])} with the path's {@code lstat} made already ({@code a}; null when it failed). */
    private Path resolved(Path p, Boolean[] directory, java.nio.file.attribute.BasicFileAttributes a) {
        Path parent = p.getParent();
        Path name = p.getFileName();
        Path normal = p.normalize();
        if (parent == null || name == null || !p.isAbsolute() || normal != p && !p.equals(normal)) {
            return realPath(p);
        }
        if (a == null) {
            return null;
        }
        if (a.isSymbolicLink()) {
            return realPath(p);
        }
        directory[0] = a.isDirectory();
        Path realParent = resolvedDirs.get(parent);
        if (realParent == null) {
            realParent = realPath(parent);
            if (realParent == null) {
                return realPath(p); // removed meanwhile: whatever the kernel says now
            }
            resolvedDirs.put(parent, realParent);
        }
        return realParent.resolve(name);
    }

    private static java.nio.file.attribute.BasicFileAttributes lstat(Path p) {
        try {
            return Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException | SecurityException e) {
            return null;
        }
    }

    /**
     * Whether {@code p} is a directory and not a link to one, as {@code Files.isDirectory(p,
     * NOFOLLOW_LINKS)} answers, but without the exception that answer costs for a missing path:
     * a stat first (no exception), the lstat only for a directory.
     */
    public static boolean isRealDirectory(Path p) {
        return Files.isDirectory(p) && !Files.isSymbolicLink(p);
    }

    /** From this many matches of one glob on, their lookups are shared with a second thread. */
    public static final int SHARED_LOOKUPS = 4096;

    /**
     * The {@code lstat} of every match (null for one that failed), made by this thread and
     * a helper, half each, for a glob with {@link #SHARED_LOOKUPS} matches or more (a rule
     * over a directory of 20 000 files: the lookups are most of its interpreted work, and
     * a machine has a second core); null for fewer, which are looked up one by one.
     */
    static java.nio.file.attribute.BasicFileAttributes[] lookUp(List<Path> matches) {
        int n = matches.size();
        if (n < SHARED_LOOKUPS) {
            return null;
        }
        java.nio.file.attribute.BasicFileAttributes[] out = new java.nio.file.attribute.BasicFileAttributes[n];
        int half = n / 2;
        Thread helper = new Thread(new Runnable() {
            @Override
            public void run() {
                for (int i = half; i < n; i++) {
                    out[i] = lstat(matches.get(i));
                }
            }
        }, "agent-sandbox-lookups");
        helper.setDaemon(true);
        helper.start();
        for (int i = 0; i < half; i++) {
            out[i] = lstat(matches.get(i));
        }
        try {
            helper.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null; // looked up one by one instead
        }
        return out;
    }

    /** The symlink-resolved path, or null when it does not exist (or is a dangling symlink). */
    public static Path realPath(Path p) {
        // Following links, as toRealPath does: false for a missing path and a dangling link
        // alike, and without the exception (dear in the interpreter) that an lstat of a
        // missing path costs.
        if (!Files.exists(p)) {
            return null;
        }
        try {
            return p.toRealPath();
        } catch (IOException | SecurityException e) {
            return null;
        }
    }
}
