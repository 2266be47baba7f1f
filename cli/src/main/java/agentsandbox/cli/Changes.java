// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;
import agentsandbox.core.homes.HomeChanges;
import agentsandbox.core.homes.LayerMerge;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.util.List;

/**
 * {@code agent-sandbox changes}: what sandboxes changed over the host's directories of the
 * home ({@link HomeChanges}), shown, compared, taken to the host or discarded.
 */
final class Changes {
    private Changes() {}

    /** The words after {@code changes}, checked: an action and its paths. */
    static void check(List<String> rest) {
        if (rest.isEmpty()) {
            return;
        }
        String action = rest.get(0);
        switch (action) {
            case "list" -> {
                if (rest.size() > 1) {
                    throw new UsageException("changes list takes no arguments (got '" + rest.get(1) + "')");
                }
            }
            case "diff", "take" -> {
                if (rest.size() < 2) {
                    throw new UsageException("changes " + action + " needs a path",
                            "usage: agent-sandbox changes " + action + " PATH...");
                }
            }
            case "discard" -> {
                if (rest.size() < 2) {
                    throw new UsageException("changes discard needs a path, or --all for every change",
                            "usage: agent-sandbox changes discard PATH... | --all");
                }
                if (rest.contains("--all") && rest.size() > 2) {
                    throw new UsageException("changes discard takes either paths or --all, not both");
                }
            }
            default -> throw new UsageException("unknown action '" + action + "' of changes",
                    "usage: agent-sandbox changes [list | diff PATH... | take PATH... | discard PATH... | --all]");
        }
    }

    static int run(List<String> rest, Environment env, PrintStream out, PrintStream err) {
        String action = rest.isEmpty() ? "list" : rest.get(0);
        List<String> paths = rest.isEmpty() ? List.of() : rest.subList(1, rest.size());
        switch (action) {
            case "diff" -> {
                for (String p : paths) {
                    diff(env, p, out);
                }
                return 0;
            }
            case "take" -> {
                for (String p : paths) {
                    for (String line : HomeChanges.take(env, p)) {
                        out.println(shown(line));
                    }
                }
                return 0;
            }
            case "discard" -> {
                if (paths.equals(List.of("--all"))) {
                    for (String line : HomeChanges.discardAll(env)) {
                        out.println(shown(line));
                    }
                } else {
                    for (String p : paths) {
                        out.println(shown(HomeChanges.discard(env, p)));
                    }
                }
                return 0;
            }
            default -> {
                List<HomeChanges.Change> changes = HomeChanges.list(env);
                if (changes.isEmpty()) {
                    out.println("no changes: sandboxes see your home's directories as they are");
                    return 0;
                }
                for (HomeChanges.Change c : changes) {
                    out.printf("%-8s %9s  ~/%s%s%s%s%n", c.kind().name().toLowerCase(java.util.Locale.ROOT),
                            c.kind() == HomeChanges.Kind.DELETED ? "-" : size(c.size()), shown(c.rel()),
                            c.directory() ? "/" : "",
                            c.linkTarget() != null ? "  (a symbolic link to " + shown(c.linkTarget()) + ")" : "",
                            c.risky() ? "  (code or settings)" : "");
                }
                err.println("agent-sandbox: these changes are seen by sandboxes only; review one with"
                        + " 'agent-sandbox changes diff PATH', then take it to the host or discard it");
                return 0;
            }
        }
    }

    private static String size(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024) {
            return (bytes / 1024) + " KiB";
        }
        return (bytes / (1024 * 1024)) + " MiB";
    }

    /** The layer's version against the host's, as {@code diff -u} shows it (a directory: {@code diff -ruN}). */
    private static void diff(Environment env, String path, PrintStream out) {
        HomeChanges.Located at = HomeChanges.locate(env, path);
        if (LayerMerge.whiteout(at.layerPath())) {
            out.println("~/" + shown(at.rel()) + ": deleted in the sandboxes' layer");
            return;
        }
        String link = HomeChanges.linkTarget(at.layerPath());
        if (link != null) {
            // what it points at is not its content: a link to ~/.bashrc would show the host's file
            out.println("~/" + shown(at.rel()) + ": a symbolic link in the sandboxes' layer, to " + shown(link));
            return;
        }
        boolean directory = Files.isDirectory(at.layerPath(), LinkOption.NOFOLLOW_LINKS);
        String host = Files.exists(at.hostPath(), LinkOption.NOFOLLOW_LINKS) ? at.hostPath().toString() : "/dev/null";
        // from the system's directories only: the project's own bin directories on PATH are the sandboxes' to write
        java.nio.file.Path diff = agentsandbox.core.host.HostPrograms.find((String) null, "diff",
                agentsandbox.core.host.HostPrograms.processUid());
        if (diff == null) {
            throw new SandboxException("no diff in " + agentsandbox.core.host.HostPrograms.DEFAULT_PATH
                    + " owned by the system", "install diffutils with your distribution's package manager");
        }
        ProcessBuilder pb = new ProcessBuilder(diff.toString(), directory ? "-ruN" : "-u", "--no-dereference", "--label",
                "host: ~/" + at.rel(),
                "--label", "sandboxes: ~/" + at.rel(), host, at.layerPath().toString()).redirectErrorStream(true);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            out.print(shownLines(p.getInputStream().readAllBytes()));
            out.flush();
            int status = p.waitFor();
            if (status > 1) {
                throw new SandboxException("diff could not compare ~/" + at.rel() + " (status " + status + ")",
                        "check that diff (diffutils) is installed");
            }
        } catch (IOException e) {
            throw new SandboxException("cannot run diff: " + e.getMessage(), "install diffutils");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * What a sandbox wrote (a file's name, a link's target), as one line the terminal shows
     * and does not obey: its control characters as escapes ({@link SandboxException#printable}).
     */
    static String shown(String text) {
        return SandboxException.printable(text);
    }

    /**
     * The output of diff, whose lines hold what a sandbox wrote, as lines the terminal shows
     * and does not obey: each line's control characters as escapes, tabs kept.
     */
    static String shownLines(byte[] output) {
        String text = new String(output, java.nio.charset.StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(text.length());
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            String line = text.substring(start, end < 0 ? text.length() : end);
            int from = 0;
            for (int tab = line.indexOf('\t'); tab >= 0; tab = line.indexOf('\t', from)) {
                b.append(SandboxException.printable(line.substring(from, tab))).append('\t');
                from = tab + 1;
            }
            b.append(SandboxException.printable(line.substring(from)));
            b.append('\n');
            start = end < 0 ? text.length() : end + 1;
        }
        return b.toString();
    }
}
