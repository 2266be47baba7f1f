// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code agent-sandbox log [--project DIR] [--since WHEN] [--all] [--json]}: what runs
 * refused, from the denial log ({@link DenialLog}). Without a filter, the last run; with
 * {@code --project} (runs in DIR or below it) or {@code --since} (a time, or an age such as
 * 2h), every run that matches; {@code --all}, every run the log holds.
 */
final class LogCommand {
    private LogCommand() {}

    static int run(List<String> argv, Environment env, PrintStream out) {
        if (Sandbox.isInside()) {
            throw new SandboxException("log is not available inside a sandbox (the log is hidden in every"
                    + " sandbox)", "run agent-sandbox log outside any sandbox");
        }
        boolean json = false;
        boolean all = false;
        Path project = null;
        Instant since = null;
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            String value = null;
            String name = a;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                name = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            switch (name) {
                case "--json" -> json = true;
                case "--all" -> all = true;
                case "--project", "--since" -> {
                    if (value == null) {
                        if (i + 1 >= argv.size()) {
                            throw new UsageException(name + " needs a value", USAGE);
                        }
                        value = argv.get(++i);
                    }
                    if (name.equals("--project")) {
                        project = env.workDir().resolve(value.equals("~") || value.startsWith("~/")
                                ? env.home() + value.substring(1) : value).normalize();
                        try {
                            project = project.toRealPath();
                        } catch (java.io.IOException e) {
                            // a project that is gone still has its runs in the log
                        }
                    } else {
                        since = since(value, Instant.now());
                    }
                }
                default -> throw new UsageException("log takes --project DIR, --since WHEN, --all and --json (got '"
                        + a + "')", USAGE);
            }
        }
        List<DenialLog.Run> runs = DenialLog.read(env);
        List<DenialLog.Run> shown = new ArrayList<>();
        for (DenialLog.Run r : runs) {
            if ((project == null || Path.of(r.project()).startsWith(project))
                    && (since == null || !r.end().isBefore(since))) {
                shown.add(r);
            }
        }
        if (!all && project == null && since == null && !shown.isEmpty()) {
            shown = List.of(shown.getLast());
        }
        if (json) {
            StringBuilder b = new StringBuilder("{\"version\":" + Json.VERSION + ",\"runs\":[");
            for (int i = 0; i < shown.size(); i++) {
                b.append(i == 0 ? "" : ",").append(DenialLog.json(shown.get(i)));
            }
            out.println(b.append("]}"));
            return 0;
        }
        if (shown.isEmpty()) {
            out.println(runs.isEmpty() ? "no runs recorded yet (" + DenialLog.dir(env).map(Path::toString)
                    .orElse("no log directory: HOME is not set") + ")" : "no run matches");
            return 0;
        }
        DateTimeFormatter time = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
        ZoneId zone = ZoneId.systemDefault();
        for (int i = 0; i < shown.size(); i++) {
            DenialLog.Run r = shown.get(i);
            out.println((i == 0 ? "" : "\n") + "run " + r.id() + ", " + time.format(r.start().atZone(zone)) + " to "
                    + time.format(r.end().atZone(zone)) + ", exit " + r.status() + ", in " + shown(r.project(), env)
                    + ": " + SandboxException.printable(String.join(" ", r.command())));
            out.println("  policy sha256 " + r.policy());
            if (r.refused() == 0) {
                out.println("  nothing refused");
            }
            for (DenialLog.Entry e : r.entries()) {
                out.println("  " + e.kind() + " ".repeat(Math.max(1, 9 - e.kind().length()))
                        + SandboxException.printable(e.what()) + (e.why().isEmpty() ? ""
                        : ": " + SandboxException.printable(e.why())) + (e.reported() ? " [reported by the sandbox]" : ""));
            }
            if (r.refused() > r.entries().size()) {
                out.println("  ... and " + (r.refused() - r.entries().size()) + " more refusals, counted but not kept");
            }
        }
        return 0;
    }

    private static final String USAGE = "usage: agent-sandbox log [--project DIR] [--since WHEN] [--all] [--json]";

    private static String shown(String path, Environment env) {
        Path p = Path.of(path);
        return env.home() != null && p.startsWith(env.home()) ? "~/" + env.home().relativize(p) : path;
    }

    /**
     * A time: an age ({@code 30m}, {@code 2h}, {@code 7d}) back from now, an ISO instant, or a
     * local date and time ({@code 2026-11-26T20:00}, {@code 2026-11-26}).
     */
    static Instant since(String value, Instant now) {
        if (value.length() >= 2 && Character.isDigit(value.charAt(0))) {
            char unit = value.charAt(value.length() - 1);
            String digits = value.substring(0, value.length() - 1);
            if (digits.chars().allMatch(Character::isDigit) && digits.length() <= 9) {
                long n = Long.parseLong(digits);
                switch (unit) {
                    case 's' -> {
                        return now.minus(Duration.ofSeconds(n));
                    }
                    case 'm' -> {
                        return now.minus(Duration.ofMinutes(n));
                    }
                    case 'h' -> {
                        return now.minus(Duration.ofHours(n));
                    }
                    case 'd' -> {
                        return now.minus(Duration.ofDays(n));
                    }
                    default -> {
                        // not an age: a date below
                    }
                }
            }
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            // a local time below
        }
        try {
            return LocalDateTime.parse(value).atZone(ZoneId.systemDefault()).toInstant();
        } catch (DateTimeParseException e) {
            // a date below
        }
        try {
            return java.time.LocalDate.parse(value).atStartOfDay(ZoneId.systemDefault()).toInstant();
        } catch (DateTimeParseException e) {
            throw new UsageException("--since " + value + ": expected an age (30m, 2h, 7d) or a time"
                    + " (2026-11-26, 2026-11-26T20:00)", USAGE);
        }
    }
}
