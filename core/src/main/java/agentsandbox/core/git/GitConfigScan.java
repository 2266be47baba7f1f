package agentsandbox.core.git;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Finds, in a git config file (or {@code .gitmodules}), the settings with which git runs
 * a command of the file's choosing: {@code core.fsmonitor}, hooks paths, pagers and
 * editors, filter, diff and merge drivers, {@code !} aliases, submodule {@code update =
 * !cmd}, {@code ext::} URLs, includes (they pull in another file), and their kin.
 *
 * <p>The parser follows git's syntax where it matters for this (sections
 * {@code [a]}, {@code [a "b"]}, {@code [a.b]}, a key after the header on the same
 * line, comments, quotes, line continuations) and leans towards reporting: a key it
 * cannot place is judged by its name alone.
 */
public final class GitConfigScan {
    private GitConfigScan() {}

    /** One setting: {@code section[.subsection].key}, as git spells it in lower case (subsection kept). */
    public record Setting(String section, String subsection, String key, String value) {
        public String name() {
            return section + (subsection == null ? "" : "." + subsection) + "." + key;
        }
    }

    /** Whole sections whose every key runs something or decides what runs. */
    private static final Set<String> RUNNING_SECTIONS = Set.of(
            "alias", "pager", "filter", "credential", "gpg", "difftool", "mergetool", "guitool", "man",
            "browser", "sendemail", "hook", "url", "protocol", "instaweb", "trailer", "tar");

    /** Keys, in any section, that name a program, a command or a file that holds commands. */
    private static final Set<String> RUNNING_KEYS = Set.of(
            "fsmonitor", "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "command",
            "cmd", "textconv", "driver", "external", "program", "helper", "uploadpack", "receivepack",
            "packobjectshook", "alternaterefscommand", "difffilter", "path", "vcs",
            "templatedir", "proxycommand");

    private static final Set<String> BOOLEANS = Set.of(
            "", "true", "false", "yes", "no", "on", "off", "1", "0");

    /** The settings of {@code data} that make git run something, in file order. */
    public static List<Setting> running(byte[] data) {
        List<Setting> out = new ArrayList<>();
        for (Setting s : parse(new String(data, StandardCharsets.UTF_8))) {
            if (runs(s)) {
                out.add(s);
            }
        }
        return out;
    }

    static boolean runs(Setting s) {
        String value = s.value() == null ? "" : s.value().strip();
        if (value.startsWith("ext::") || value.contains("::")) {
            return true; // a remote helper or the ext transport: a URL that is a command
        }
        if (RUNNING_SECTIONS.contains(s.section())) {
            return true;
        }
        switch (s.section()) {
            case "core" -> {
                if (s.key().equals("fsmonitor")) {
                    return !BOOLEANS.contains(value.toLowerCase(Locale.ROOT));
                }
                if (s.key().equals("path")) {
                    return false;
                }
            }
            case "submodule" -> {
                return s.key().equals("update") ? value.startsWith("!") || value.isEmpty()
                        : RUNNING_KEYS.contains(s.key()) && !s.key().equals("path");
            }
            case "include", "includeif" -> {
                return true;
            }
            case "remote" -> {
                return RUNNING_KEYS.contains(s.key()) || s.key().equals("url") && value.contains("::")
                        || s.key().equals("pushurl") && value.contains("::");
            }
            case "diff", "merge", "sequence", "interactive", "uploadpack", "web", "ssh" -> {
                return RUNNING_KEYS.contains(s.key()) || s.key().equals("editor");
            }
            default -> {
                // judged by the key's name below
            }
        }
        return RUNNING_KEYS.contains(s.key());
    }

    /** Every setting of a config file's text. */
    static List<Setting> parse(String text) {
        List<Setting> out = new ArrayList<>();
        String section = "";
        String subsection = null;
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                i++;
            } else if (c == '#' || c == ';') {
                i = lineEnd(text, i);
            } else if (c == '[') {
                int close = text.indexOf(']', i);
                if (close < 0) {
                    close = lineEnd(text, i);
                }
                String header = text.substring(i + 1, Math.min(close, n)).strip();
                int quote = header.indexOf('"');
                if (quote >= 0) {
                    section = header.substring(0, quote).strip().toLowerCase(Locale.ROOT);
                    subsection = unquote(header.substring(quote));
                } else {
                    int dot = header.indexOf('.');
                    section = (dot < 0 ? header : header.substring(0, dot)).toLowerCase(Locale.ROOT);
                    subsection = dot < 0 ? null : header.substring(dot + 1).toLowerCase(Locale.ROOT);
                }
                i = close + 1;
            } else {
                int start = i;
                while (i < n && isKeyChar(text.charAt(i))) {
                    i++;
                }
                String key = text.substring(start, i).toLowerCase(Locale.ROOT);
                if (key.isEmpty()) {
                    // not a key: git would refuse the file; skip the line
                    i = lineEnd(text, i);
                    continue;
                }
                while (i < n && (text.charAt(i) == ' ' || text.charAt(i) == '\t')) {
                    i++;
                }
                String value = null;
                if (i < n && text.charAt(i) == '=') {
                    StringBuilder v = new StringBuilder();
                    i = value(text, i + 1, v);
                    value = v.toString();
                } else {
                    i = lineEnd(text, i);
                }
                out.add(new Setting(section, subsection, key, value));
            }
        }
        return out;
    }

    private static boolean isKeyChar(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-';
    }

    private static int lineEnd(String text, int i) {
        int nl = text.indexOf('\n', i);
        return nl < 0 ? text.length() : nl + 1;
    }

    /** Reads a value the way git does: quotes, escapes, continuations, comments. */
    private static int value(String text, int i, StringBuilder v) {
        boolean quoted = false;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == '\n') {
                return i + 1;
            }
            if (c == '\\' && i + 1 < n) {
                char next = text.charAt(i + 1);
                if (next == '\n') {
                    i += 2;
                    continue;
                }
                if (next == '\r' && i + 2 < n && text.charAt(i + 2) == '\n') {
                    i += 3;
                    continue;
                }
                v.append(switch (next) {
                    case 'n' -> '\n';
                    case 't' -> '\t';
                    case 'b' -> '\b';
                    default -> next;
                });
                i += 2;
                continue;
            }
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && (c == '#' || c == ';')) {
                return lineEnd(text, i);
            } else {
                v.append(c);
            }
            i++;
        }
        return i;
    }

    private static String unquote(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                b.append(s.charAt(++i));
            } else if (c == '"') {
                break;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
