package agentsandbox.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * The help text ({@link Flags#USAGE}) read back as parts, so that the man page and the
 * shell completions are made from the very text {@code --help} prints and cannot drift
 * from it. Used when the app image is built ({@link Manual}), never when a command runs.
 *
 * <p>The text is blocks separated by blank lines: the title ({@code agent-sandbox: what
 * it does}); {@code usage:} with one line per form, where a line whose second word is
 * not a flag names a subcommand; one or more blocks headed {@code ...flags:} whose
 * lines start with the flag's names (an argument after the last name,
 * {@code [=ARG]} when the argument is optional), two or more spaces, and the
 * description, continued on more deeply indented lines; blocks headed by a word and a
 * colon ({@code exit status: ...}); and plain paragraphs.
 *
 * @param summary     the title after {@code agent-sandbox: }
 * @param usage       the usage lines, without indentation
 * @param subcommands the subcommands named by the usage lines
 * @param flagGroups  the flag blocks, in order
 * @param paragraphs  the plain paragraphs, in order
 * @param sections    the blocks headed by a word and a colon other than usage and flags
 */
record HelpText(
        String summary,
        List<String> usage,
        List<Subcommand> subcommands,
        List<FlagGroup> flagGroups,
        List<String> paragraphs,
        List<Section> sections) {

    static final String PROGRAM = "agent-sandbox";

    /**
     * A subcommand.
     *
     * @param name  as typed
     * @param flags the flags its usage line shows ({@code -q})
     * @param note  the usage line's remark after the synopsis, or empty
     * @param paths whether it takes paths ({@code PATH...} after its name)
     */
    record Subcommand(String name, List<String> flags, String note, boolean paths) {}

    /**
     * A flag.
     *
     * @param names       its spellings, short first ({@code -C}, {@code --cwd})
     * @param argument    the argument's placeholder ({@code PATH}), or null
     * @param optional    the argument is optional and given only with {@code =}
     * @param description the description, one line
     */
    record Flag(List<String> names, String argument, boolean optional, String description) {
        /** The long name, or the first. */
        String longName() {
            for (String n : names) {
                if (n.startsWith("--")) {
                    return n;
                }
            }
            return names.get(0);
        }

        /** The first line of the description up to a parenthesis: short enough for a completion menu. */
        String brief() {
            int paren = description.indexOf(" (");
            return paren > 0 ? description.substring(0, paren) : description;
        }
    }

    /** @param title the header before {@code flags:}, e.g. "flags" */
    record FlagGroup(String title, List<Flag> flags) {}

    /** @param title its header; @param lines its text, without the header, indentation removed */
    record Section(String title, List<String> lines) {}

    /** The help text of this build. */
    static HelpText current() {
        return parse(Flags.USAGE);
    }

    static HelpText parse(String text) {
        List<List<String>> blocks = blocks(text);
        if (blocks.isEmpty() || !blocks.get(0).get(0).startsWith(PROGRAM + ": ")) {
            throw new IllegalArgumentException("the help text does not start with '" + PROGRAM + ": <summary>'");
        }
        String summary = blocks.get(0).get(0).substring(PROGRAM.length() + 2).strip();
        List<String> usage = new ArrayList<>();
        List<Subcommand> subcommands = new ArrayList<>();
        List<FlagGroup> groups = new ArrayList<>();
        List<String> paragraphs = new ArrayList<>();
        List<Section> sections = new ArrayList<>();
        for (List<String> block : blocks.subList(1, blocks.size())) {
            String first = block.get(0);
            String header = header(first);
            if ("usage".equals(header)) {
                for (String line : block.subList(1, block.size())) {
                    usage.add(line.strip());
                    Subcommand s = subcommand(line.strip());
                    if (s != null) {
                        subcommands.add(s);
                    }
                }
            } else if (header != null && header.endsWith("flags") && first.strip().endsWith(":")) {
                groups.add(new FlagGroup(header, flags(block.subList(1, block.size()))));
            } else if (header != null) {
                List<String> lines = new ArrayList<>();
                String rest = first.strip().substring(header.length() + 1).strip();
                if (!rest.isEmpty()) {
                    lines.add(rest);
                }
                for (String line : block.subList(1, block.size())) {
                    lines.add(line.strip());
                }
                sections.add(new Section(header, lines));
            } else {
                StringBuilder p = new StringBuilder();
                for (String line : block) {
                    p.append(p.isEmpty() ? "" : " ").append(line.strip());
                }
                paragraphs.add(p.toString());
            }
        }
        if (usage.isEmpty() || groups.isEmpty()) {
            throw new IllegalArgumentException("the help text lacks a 'usage:' or a 'flags:' block");
        }
        return new HelpText(summary, usage, subcommands, groups, paragraphs, sections);
    }

    /** Every flag of every group. */
    List<Flag> flags() {
        List<Flag> all = new ArrayList<>();
        for (FlagGroup g : flagGroups) {
            all.addAll(g.flags());
        }
        return all;
    }

    private static List<List<String>> blocks(String text) {
        List<List<String>> blocks = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String line : text.split("\n", -1)) {
            if (line.isBlank()) {
                if (!current.isEmpty()) {
                    blocks.add(current);
                    current = new ArrayList<>();
                }
            } else {
                current.add(line.stripTrailing());
            }
        }
        if (!current.isEmpty()) {
            blocks.add(current);
        }
        return blocks;
    }

    /** "exit status" for "exit status: ...", or null when the line is not headed by lower-case words and a colon. */
    private static String header(String line) {
        if (line.startsWith(" ")) {
            return null;
        }
        int colon = line.indexOf(':');
        if (colon <= 0) {
            return null;
        }
        String h = line.substring(0, colon);
        for (int i = 0; i < h.length(); i++) {
            char c = h.charAt(i);
            if (!(c >= 'a' && c <= 'z') && c != ' ' && c != '-') {
                return null;
            }
        }
        return h;
    }

    private static Subcommand subcommand(String line) {
        if (!line.startsWith(PROGRAM + " ")) {
            return null;
        }
        String rest = line.substring(PROGRAM.length() + 1);
        String note = "";
        int gap = rest.indexOf("  ");
        if (gap > 0) {
            note = rest.substring(gap).strip();
            rest = rest.substring(0, gap);
        }
        String[] words = rest.strip().split(" ");
        int first = 0;
        if (words[0].equals("[flags]") && words.length > 1) {
            first = 1; // a subcommand that takes the run's flags before it
        }
        String name = words[first];
        if (name.isEmpty() || name.startsWith("-") || name.startsWith("[") || name.startsWith("<")) {
            return null;
        }
        List<String> flags = new ArrayList<>();
        boolean paths = false;
        for (int i = first + 1; i < words.length; i++) {
            paths |= words[i].startsWith("PATH");
            String w = words[i].replace("[", "").replace("]", "");
            for (String alternative : w.split("\\|")) {
                if (alternative.startsWith("-") && alternative.length() > 1) {
                    flags.add(alternative);
                }
            }
        }
        return new Subcommand(name, List.copyOf(flags), note, paths);
    }

    /** A flag's argument as the help writes it: PATH, PORT, NAME=VALUE. */
    private static boolean isPlaceholder(String word) {
        if (word.isEmpty() || word.charAt(0) < 'A' || word.charAt(0) > 'Z') {
            return false;
        }
        for (int i = 0; i < word.length(); i++) {
            char c = word.charAt(i);
            if (!(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') && c != '_' && c != '=' && c != '-') {
                return false;
            }
        }
        return true;
    }

    private static List<Flag> flags(List<String> lines) {
        List<Flag> flags = new ArrayList<>();
        for (String line : lines) {
            String s = line.strip();
            if (!s.startsWith("-")) {
                if (flags.isEmpty()) {
                    throw new IllegalArgumentException("a flag description without a flag: " + s);
                }
                Flag last = flags.remove(flags.size() - 1);
                String d = last.description().isEmpty() ? s : last.description() + " " + s;
                flags.add(new Flag(last.names(), last.argument(), last.optional(), d));
                continue;
            }
            // The names, each but the last followed by ", "; then the argument when the last
            // name has one (one space and a word in capitals, or [=ARG] attached); then the
            // description, after any number of spaces.
            List<String> names = new ArrayList<>();
            String argument = null;
            boolean optional = false;
            int at = 0;
            while (true) {
                int end = at;
                while (end < s.length() && s.charAt(end) != ' ' && s.charAt(end) != ',') {
                    end++;
                }
                String name = s.substring(at, end);
                int bracket = name.indexOf("[=");
                if (bracket > 0 && name.endsWith("]")) {
                    argument = name.substring(bracket + 2, name.length() - 1);
                    optional = true;
                    name = name.substring(0, bracket);
                }
                names.add(name);
                if (s.startsWith(", -", end)) {
                    at = end + 2;
                    continue;
                }
                at = end;
                break;
            }
            if (argument == null && at < s.length() && s.charAt(at) == ' ' && at + 1 < s.length()
                    && s.charAt(at + 1) != ' ') {
                int end = s.indexOf(' ', at + 1);
                String word = s.substring(at + 1, end < 0 ? s.length() : end);
                if (isPlaceholder(word)) {
                    argument = word;
                    at = end < 0 ? s.length() : end;
                }
            }
            String description = s.substring(at).strip();
            flags.add(new Flag(List.copyOf(names), argument, optional, description));
        }
        return flags;
    }
}
