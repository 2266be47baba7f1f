// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A path pattern as written in config or flags: {@code ~} or {@code ~/…} is the home
 * directory, an absolute path is taken as written, anything else is relative to the
 * effective working directory. {@code *}, {@code ?} and {@code […]} match within one
 * path segment; there is no {@code **}. Unlike a shell, {@code *} also matches names
 * that start with a dot, so {@code config/*}{@code /secrets.json} cannot be dodged by a
 * hidden directory. A backslash makes the next character literal.
 */
public final class PathPattern {
    private final String text;
    private final List<Segment> segments;
    private final Anchor anchor;

    enum Anchor { HOME, ROOT, WORKDIR }

    /**
     * One path segment: literal text, or a compiled glob. A glob with one {@code *} and
     * nothing else special ({@code *}, {@code *.log}, {@code .env*}) also keeps its text
     * before and after the star, and matches without the regex engine: such a rule may be
     * tried on every name of a directory with tens of thousands of files.
     */
    record Segment(String literal, Pattern glob, String before, String after) {
        boolean isGlob() {
            return literal == null;
        }

        boolean matches(String name) {
            if (before != null) {
                return name.length() >= before.length() + after.length() && name.startsWith(before)
                        && name.endsWith(after);
            }
            return glob.matcher(name).matches();
        }
    }

    private final boolean glob;

    private PathPattern(String text, Anchor anchor, List<Segment> segments) {
        this.text = text;
        this.anchor = anchor;
        this.segments = segments;
        boolean any = false;
        for (Segment s : segments) {
            any |= s.isGlob();
        }
        this.glob = any;
    }

    /**
     * Parses a pattern.
     *
     * @throws IllegalArgumentException with a message that names the problem
     */
    public static PathPattern parse(String text) {
        if (text.isEmpty()) {
            throw new IllegalArgumentException("empty path");
        }
        if (text.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("path contains a NUL character");
        }
        Anchor anchor;
        String rest;
        if (text.equals("~")) {
            anchor = Anchor.HOME;
            rest = "";
        } else if (text.startsWith("~/")) {
            anchor = Anchor.HOME;
            rest = text.substring(2);
        } else if (text.startsWith("/")) {
            anchor = Anchor.ROOT;
            rest = text.substring(1);
        } else {
            anchor = Anchor.WORKDIR;
            rest = text;
        }
        List<Segment> segs = new ArrayList<>();
        for (String raw : rest.split("/")) {
            if (raw.isEmpty() || raw.equals(".")) {
                continue;
            }
            segs.add(segment(text, raw));
        }
        return new PathPattern(text, anchor, List.copyOf(segs));
    }

    /** Checks a pattern without keeping it. */
    public static void validate(String text) {
        parse(text);
    }

    private static Segment segment(String whole, String raw) {
        if (raw.contains("**")) {
            throw new IllegalArgumentException("invalid glob '" + whole
                    + "': there is no ** (* matches within one path segment)");
        }
        // a literal segment, or a glob with one star and nothing else special: no regex
        if (raw.indexOf('\\') < 0 && raw.indexOf('?') < 0 && raw.indexOf('[') < 0 && raw.indexOf(']') < 0) {
            int star = raw.indexOf('*');
            if (star < 0) {
                return new Segment(raw, null, null, null);
            }
            if (raw.indexOf('*', star + 1) < 0) {
                return new Segment(null, null, raw.substring(0, star), raw.substring(star + 1));
            }
        }
        StringBuilder regex = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        boolean glob = false;
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            switch (c) {
                case '\\' -> {
                    if (i + 1 >= raw.length()) {
                        throw new IllegalArgumentException("invalid glob '" + whole + "': trailing backslash");
                    }
                    char n = raw.charAt(++i);
                    literal.append(n);
                    regex.append(Pattern.quote(String.valueOf(n)));
                }
                case '*' -> {
                    glob = true;
                    regex.append("[^/]*");
                }
                case '?' -> {
                    glob = true;
                    regex.append("[^/]");
                }
                case '[' -> {
                    int end = classEnd(raw, i);
                    if (end < 0) {
                        throw new IllegalArgumentException("invalid glob '" + whole + "': unclosed [");
                    }
                    glob = true;
                    regex.append(charClass(whole, raw.substring(i + 1, end)));
                    i = end;
                }
                case ']' -> throw new IllegalArgumentException("invalid glob '" + whole + "': ] without [");
                default -> {
                    literal.append(c);
                    regex.append(Pattern.quote(String.valueOf(c)));
                }
            }
        }
        if (!glob) {
            return new Segment(literal.toString(), null, null, null);
        }
        return new Segment(null, Pattern.compile(regex.toString(), Pattern.DOTALL), null, null);
    }

    /** Index of the ] closing the class opened at {@code open}, or -1. */
    private static int classEnd(String s, int open) {
        int i = open + 1;
        if (i < s.length() && (s.charAt(i) == '!' || s.charAt(i) == '^')) {
            i++;
        }
        if (i < s.length() && s.charAt(i) == ']') {
            i++; // a leading ] is a member
        }
        for (; i < s.length(); i++) {
            if (s.charAt(i) == ']') {
                return i;
            }
        }
        return -1;
    }

    private static String charClass(String whole, String body) {
        StringBuilder out = new StringBuilder("[");
        int i = 0;
        if (!body.isEmpty() && (body.charAt(0) == '!' || body.charAt(0) == '^')) {
            out.append('^');
            i = 1;
        }
        for (; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == '-' && i > 0 && i < body.length() - 1) {
                char lo = body.charAt(i - 1);
                char hi = body.charAt(i + 1);
                if (lo > hi) {
                    throw new IllegalArgumentException("invalid glob '" + whole + "': the range " + lo + "-" + hi
                            + " is backwards");
                }
                out.append('-');
            } else if (Character.isLetterOrDigit(c)) {
                out.append(c);
            } else {
                out.append('\\').append(c);
            }
        }
        return out.append(']').toString();
    }

    /** The pattern as written. */
    public String text() {
        return text;
    }

    /** True when any segment is a glob. */
    public boolean isGlob() {
        return glob;
    }

    /** True when the pattern starts with {@code ~}. */
    public boolean needsHome() {
        return anchor == Anchor.HOME;
    }

    /**
     * The existing paths this pattern names, lexically absolute and not yet
     * symlink-resolved, sorted. A literal pattern gives its one path when it exists; a
     * glob gives every match. Nothing is returned for what does not exist.
     *
     * @param home    the home directory (required when {@link #needsHome()})
     * @param workDir the effective working directory
     */
    public List<Path> expand(Path home, Path workDir) {
        Path base = switch (anchor) {
            case HOME -> home;
            case ROOT -> Path.of("/");
            case WORKDIR -> workDir;
        };
        if (base == null) {
            return List.of();
        }
        // normal from the start: every segment then adds a name or takes one away ("." and
        // empty ones are dropped when parsed), so every match is normal as it is made
        List<Path> current = List.of(base.normalize());
        for (Segment seg : segments) {
            List<Path> next = new ArrayList<>();
            for (Path dir : current) {
                if (!seg.isGlob()) {
                    next.add(seg.literal().equals("..") ? parentOf(dir) : dir.resolve(seg.literal()));
                    continue;
                }
                if (Files.isDirectory(dir)) {
                    list(dir, seg, next);
                }
            }
            current = next;
        }
        // entries just listed exist (one that goes meanwhile fails its resolution later);
        // a literal last segment is looked up
        boolean listed = !segments.isEmpty() && segments.get(segments.size() - 1).isGlob();
        List<Path> out = new ArrayList<>();
        for (Path p : current) {
            if (listed || Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                out.add(p);
            }
        }
        return out;
    }

    /** Whether file names read as text keep their bytes: then a listing can be names. */
    private static final boolean NAMES_ARE_UTF8 = "UTF-8".equals(System.getProperty("sun.jnu.encoding"));

    /**
     * Adds the entries of {@code dir} that {@code seg} matches, in the order of their
     * names (listings come in no particular order; the matches' order decides which one
     * an error names and the order of --debug's lines).
     *
     * <p>The names come as text from one native call ({@link java.io.File#list()}), and
     * only the matches become paths, sorted by name: a path for every entry, sorted by
     * its whole bytes, cost a rule over a directory of 20 000 files a quarter of its
     * planning. A name whose bytes are not UTF-8 has no text form that names the file: a
     * directory with one is listed as paths, which keep the bytes.
     */
    private static void list(Path dir, Segment seg, List<Path> next) {
        String[] names = NAMES_ARE_UTF8 ? dir.toFile().list() : null;
        if (names != null) {
            List<String> matched = new ArrayList<>();
            boolean exact = true;
            for (String name : names) {
                if (name.indexOf('\uFFFD') >= 0) {
                    exact = false;
                    break;
                }
                if (seg.matches(name)) {
                    matched.add(name);
                }
            }
            if (exact) {
                sortNames(matched);
                for (String name : matched) {
                    next.add(dir.resolve(name));
                }
                return;
            }
        }
        List<Path> matched = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path e : entries) {
                if (seg.matches(e.getFileName().toString())) {
                    matched.add(e);
                }
            }
        } catch (IOException | SecurityException e) {
            // an unreadable directory matches nothing, like a missing one
        }
        matched.sort(null);
        next.addAll(matched);
    }

    /**
     * Sorts names in {@link String#compareTo} order, quickly in the interpreter: each
     * name's first six characters (when they are ASCII) and its place are packed into a
     * number, the numbers are sorted with no method call per comparison, and only names
     * that share those six characters are then compared the usual way among themselves.
     * Sorting the 20 000 names of one directory by comparing them took a tenth of a
     * plan's time.
     */
    static void sortNames(List<String> names) {
        int n = names.size();
        if (n < 32 || n > 1 << 20) {
            names.sort(null);
            return;
        }
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            String name = names.get(i);
            int length = name.length();
            long key = 0;
            for (int k = 0; k < 6; k++) {
                int c = k < length ? name.charAt(k) : 0; // a shorter name sorts first, as compareTo has it
                if (c >= 128) {
                    names.sort(null);
                    return;
                }
                key = key << 7 | c;
            }
            keys[i] = key << 20 | i; // 42 bits of characters, 20 of place: positive, so sorted as numbers
        }
        java.util.Arrays.sort(keys);
        String[] sorted = new String[n];
        for (int i = 0; i < n; i++) {
            sorted[i] = names.get((int) (keys[i] & ((1 << 20) - 1)));
        }
        for (int start = 0; start < n;) {
            int end = start + 1;
            while (end < n && keys[end] >>> 20 == keys[start] >>> 20) {
                end++;
            }
            if (end - start > 1) {
                java.util.Arrays.sort(sorted, start, end);
            }
            start = end;
        }
        for (int i = 0; i < n; i++) {
            names.set(i, sorted[i]);
        }
    }

    private static Path parentOf(Path dir) {
        Path p = dir.getParent();
        return p == null ? dir : p;
    }

    @Override
    public String toString() {
        return text;
    }
}
