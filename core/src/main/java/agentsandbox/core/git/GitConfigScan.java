// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import agentsandbox.core.host.HostRead;
import agentsandbox.core.rules.Resolver;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Finds, in a git config file (or {@code .gitmodules}), the settings with which git runs
 * a command of the file's choosing, and follows the files it includes as git does.
 *
 * <p>The file is read exactly as git reads it ({@link GitConfigFile}). A setting counts
 * when git runs what it names, in any spelling git accepts (names are compared as git
 * compares them: section and key without regard to case, subsection as written), and, to
 * lean towards reporting, when its key has the name of such a setting in any section:
 *
 * <ul>
 * <li>every key of {@link #RUNNING_SECTIONS} ({@code alias.*} with or without {@code !},
 *     {@code filter.*.clean/smudge/process}, {@code credential[.URL].helper},
 *     {@code gpg[.FORMAT].program}, {@code pager.*}, {@code hook.*.command},
 *     {@code include.path}, {@code includeIf.*.path}, {@code url.*.insteadOf},
 *     {@code protocol.*.allow}, …);</li>
 * <li>{@code core.fsmonitor} other than a boolean, {@code core.hooksPath},
 *     {@code core.sshCommand}, {@code core.pager}, {@code core.editor},
 *     {@code core.gitProxy}, {@code core.askPass}, {@code core.alternateRefsCommand},
 *     {@code sequence.editor}, {@code interactive.diffFilter}, {@code diff.external},
 *     {@code diff.*.textconv}, {@code diff.*.command}, {@code merge.*.driver},
 *     {@code gc.recentObjectsHook}, {@code uploadpack.packObjectsHook},
 *     {@code imap.tunnel}, {@code help/web/instaweb.browser},
 *     {@code remote.*.uploadpack/receivepack/vcs}, {@code init.templateDir};</li>
 * <li>{@code submodule.*.update} that starts with {@code !};</li>
 * <li>any value with {@code ::} ({@code ext::} and other remote helpers).</li>
 * </ul>
 */
public final class GitConfigScan {
    private GitConfigScan() {}

    /** git's own bound on nested includes ({@code MAX_INCLUDE_DEPTH}). */
    public static final int MAX_INCLUDE_DEPTH = 10;

    /**
     * One setting, named as git names it: section and key lowered, subsection as written.
     *
     * @param value null for a key without {@code =} (git's boolean true)
     */
    public record Setting(String section, String subsection, String key, String value) {
        public String name() {
            if (section.isEmpty() && subsection == null) {
                return key; // before any section
            }
            return section + (subsection == null ? "" : "." + subsection) + "." + key;
        }

        /** From git's full name: section to the first dot, key after the last. */
        static Setting of(String name, String value) {
            int first = name.indexOf('.');
            int last = name.lastIndexOf('.');
            if (first < 0) {
                return new Setting("", null, name, value); // a key before any section
            }
            return new Setting(name.substring(0, first), first == last ? null : name.substring(first + 1, last),
                    name.substring(last + 1), value);
        }
    }

    /** A setting that runs something, and the file it is in. */
    public record Found(Path file, Setting setting) {}

    /**
     * What a config file and the files it includes hold.
     *
     * @param running  the settings that make git run something, in the order git reads them
     * @param included every file an include names (read or not: one that is missing now
     *                 is read by git once it exists)
     * @param limits   what could not be followed as git follows it
     */
    public record Scan(List<Found> running, Set<Path> included, List<GitLimit> limits, long bytesRead) {}

    /** Whole sections whose every key runs something or decides what runs. */
    private static final Set<String> RUNNING_SECTIONS = Set.of(
            "alias", "pager", "filter", "credential", "gpg", "difftool", "mergetool", "guitool", "man",
            "browser", "sendemail", "hook", "url", "protocol", "instaweb", "trailer", "tar", "include",
            "includeif");

    /** Keys, in any section, that name a program, a command or a file that holds commands. */
    private static final Set<String> RUNNING_KEYS = Set.of(
            "fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "command",
            "cmd", "textconv", "driver", "external", "program", "helper", "uploadpack", "receivepack",
            "packobjectshook", "alternaterefscommand", "difffilter", "vcs", "templatedir", "proxycommand",
            "recentobjectshook", "tunnel", "browser");

    private static final Set<String> BOOLEANS = Set.of(
            "", "true", "false", "yes", "no", "on", "off", "1", "0");

    /** The settings of {@code data} that make git run something, in file order (includes not followed). */
    public static List<Setting> running(byte[] data) {
        List<Setting> out = new ArrayList<>();
        for (Setting s : GitConfigFile.parse(data).entries()) {
            if (runs(s)) {
                out.add(s);
            }
        }
        return out;
    }

    static boolean runs(Setting s) {
        String value = s.value() == null ? "" : s.value().strip();
        if (value.contains("::")) {
            return true; // a remote helper or the ext transport: a URL that is a command
        }
        if (RUNNING_SECTIONS.contains(s.section())) {
            return true;
        }
        switch (s.section()) {
            case "core" -> {
                if (s.key().equals("fsmonitor")) {
                    // no value is true: the built-in daemon; a value that is no boolean is a command
                    return s.value() != null && !BOOLEANS.contains(value.toLowerCase(Locale.ROOT));
                }
            }
            case "submodule" -> {
                if (s.key().equals("update")) {
                    return value.startsWith("!");
                }
            }
            case "remote" -> {
                return RUNNING_KEYS.contains(s.key());
            }
            default -> {
                // judged by the key's name below
            }
        }
        return RUNNING_KEYS.contains(s.key());
    }

    /**
     * The settings that run something in {@code file} and in the files it includes, followed
     * as git follows them: {@code include.path} and {@code includeIf.COND.path} (every
     * condition counts as true: which one holds depends on the command), relative to the
     * including file's directory, {@code ~/} from {@code home}, only when the file exists,
     * at most {@link #MAX_INCLUDE_DEPTH} deep.
     *
     * @param home the user's home for {@code ~/}, or null when unknown (then such an
     *             include is a limit)
     */
    public static Scan scan(Path file, Path home) {
        return scan(file, home, MAX_INCLUDED_BYTES);
    }

    /**
     * {@link #scan(Path, Path)}, reading at most {@code maxBytes} of config in all (the file
     * and what it includes; {@link #MAX_INCLUDED_BYTES} at most): past that, a limit.
     */
    public static Scan scan(Path file, Path home, long maxBytes) {
        long max = Math.min(maxBytes, MAX_INCLUDED_BYTES);
        long[] readBytes = {0};
        List<Found> running = new ArrayList<>();
        Set<Path> included = new LinkedHashSet<>();
        List<GitLimit> limits = new ArrayList<>();
        // git reads a config through a link; what is not a regular file is the caller's to report
        Path real = Files.isSymbolicLink(file) ? Resolver.realPath(file) : file;
        byte[] data = real == null ? null : HostRead.bytes(real, GitDirs.MAX_SMALL);
        if (data != null) {
            java.util.Map<Object, Integer> read = new java.util.HashMap<>();
            Object self = identity(real);
            if (self != null) {
                read.put(self, 0);
            }
            readBytes[0] = data.length;
            follow(file, data, home, 0, running, included, limits, read, readBytes, max);
        } else if (real != null && Files.isRegularFile(real)) {
            limits.add(new GitLimit(file, sizeOf(real) > GitDirs.MAX_SMALL
                    ? "is larger than " + GitDirs.MAX_SMALL + " bytes: the files it includes were not looked at"
                    : "was written while it was read: what it sets and includes was not looked at"));
        }
        return new Scan(List.copyOf(running), included, List.copyOf(limits), readBytes[0]);
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (java.io.IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
    }

    /** At most this many files are read for one config and what it includes. */
    public static final int MAX_INCLUDED_FILES = 1_000;
    /** At most this many bytes are read for one config and what it includes. */
    public static final long MAX_INCLUDED_BYTES = 4L << 20;

    /** A file's identity (device and inode), or null when it cannot be told. */
    private static Object identity(Path p) {
        try {
            java.util.Map<String, Object> a = Files.readAttributes(p, "unix:dev,ino");
            return a.get("dev") + ":" + a.get("ino");
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * Follows the includes of {@code file} ({@code data}), at {@code depth}. Git reads a file
     * again wherever it is included; what it finds there is the same each time, so each file
     * is read once here, at the shallowest depth it was reached so far ({@code read}): ten
     * files that each include the next ten times would otherwise be ten billion reads.
     */
    private static void follow(Path file, byte[] data, Path home, int depth, List<Found> running,
            Set<Path> included, List<GitLimit> limits, java.util.Map<Object, Integer> read, long[] readBytes,
            long max) {
        for (Setting s : GitConfigFile.parse(data).entries()) {
            if (runs(s)) {
                running.add(new Found(file, s));
            }
            if (!isInclude(s) || s.value() == null) {
                continue; // a bare include.path is an error for git: it stops there
            }
            Path target = includeTarget(file, s.value(), home);
            if (target == null) {
                limits.add(new GitLimit(file, "includes " + s.value() + ", a path that agent-sandbox cannot"
                        + " resolve as git does"));
                continue;
            }
            included.add(target);
            if (!Files.exists(target)) {
                continue; // git reads it once it exists: watched, nothing to read now
            }
            if (depth + 1 > MAX_INCLUDE_DEPTH) {
                limits.add(new GitLimit(file, "includes files more than " + MAX_INCLUDE_DEPTH
                        + " deep (git refuses such a chain)"));
                return;
            }
            // git follows links here; the host reads the file they lead to, never a FIFO. Known
            // by the file's identity, not its name: a thousand hard links are one file
            Path real = Resolver.realPath(target);
            Object identity = real == null ? null : identity(real);
            Integer before = identity == null ? null : read.get(identity);
            if (before != null && before <= depth + 1) {
                continue; // read already, no deeper than here
            }
            if (identity != null) {
                read.put(identity, depth + 1);
            }
            if (read.size() > MAX_INCLUDED_FILES) {
                limits.add(new GitLimit(file, "includes more than " + MAX_INCLUDED_FILES + " files: the rest were not"
                        + " looked at"));
                return;
            }
            byte[] more = real == null ? null : HostRead.bytes(real, GitDirs.MAX_SMALL);
            if (more != null && (readBytes[0] += more.length) > max) {
                limits.add(new GitLimit(file, "includes more than " + max + " bytes of config"
                        + (max < MAX_INCLUDED_BYTES ? " (what is left of what one look reads)" : "")
                        + ": the rest were not looked at"));
                return;
            }
            if (more == null) {
                limits.add(new GitLimit(target, "is included by " + file + " and is not a regular file of at most "
                        + GitDirs.MAX_SMALL + " bytes"));
                continue;
            }
            follow(target, more, home, depth + 1, running, included, limits, read, readBytes, max);
        }
    }

    /** {@code include.path} or {@code includeIf.COND.path}, exactly as git matches them. */
    static boolean isInclude(Setting s) {
        return s.key().equals("path") && (s.section().equals("include") && s.subsection() == null
                || s.section().equals("includeif") && s.subsection() != null);
    }

    /**
     * The file git includes for {@code value} in {@code including}: {@code ~/} and
     * {@code ~} from {@code home}, absolute as it is, relative from the including file's
     * directory; null where git's expansion cannot be repeated here ({@code ~user/},
     * {@code %(prefix)/}, no home).
     */
    static Path includeTarget(Path including, String value, Path home) {
        String v = value;
        if (v.isEmpty()) {
            return null;
        }
        if (v.startsWith("%(prefix)/")) {
            return null;
        }
        if (v.startsWith("~")) {
            if (home == null || !(v.equals("~") || v.startsWith("~/"))) {
                return null;
            }
            try {
                return Path.of(home + v.substring(1)).normalize();
            } catch (java.nio.file.InvalidPathException e) {
                return null;
            }
        }
        Path p;
        try {
            p = Path.of(v);
        } catch (java.nio.file.InvalidPathException e) {
            return null;
        }
        return (p.isAbsolute() ? p : including.toAbsolutePath().getParent().resolve(p)).normalize();
    }
}
