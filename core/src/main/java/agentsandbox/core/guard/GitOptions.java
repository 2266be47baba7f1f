// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The options one git subcommand accepts, and a parser that reads its arguments the
 * way git's parse-options does: combined short flags ({@code -fdx}), attached and
 * separate values ({@code -mmsg}, {@code -m msg}), {@code --opt=value}, unambiguous
 * long-option prefixes ({@code --forc}), {@code --no-} negations, options after
 * positionals, and {@code --} or {@code --end-of-options} ending the options.
 *
 * <p>The spec lists every option that takes a value (so a value is never mistaken for
 * a flag) and every option a guard rule looks at. Other options may be missing: an
 * option this spec does not know is kept as written, and a prefix that matches several
 * options counts as all of them, so a rule errs on the side of refusing.
 */
final class GitOptions {
    /** How an option takes a value. */
    enum Arity {
        /** a flag */
        NONE,
        /** always a value: attached, after {@code =}, or the next argument */
        REQUIRED,
        /** a value only when attached ({@code -S<keyid>}) or after {@code =} */
        OPTIONAL,
        /** a value when one follows that is not an option ({@code --contains [<commit>]}) */
        NEXT_IF_PRESENT
    }

    private record Option(String name, Character shortName, Arity arity) {}

    private final Map<String, Option> longs = new HashMap<>();
    private final Map<Character, Option> shorts = new HashMap<>();
    private final List<String> longNames = new ArrayList<>();

    /**
     * Builds a spec from a compact text: entries separated by spaces, each
     * {@code [s|]long[suffix]} where {@code s} is the short letter, and the suffix is
     * {@code =} (required value), {@code ?} (optional value) or {@code ^} (value when
     * one follows). A lone short option is written {@code s|}, or {@code s|=} when it
     * takes a value.
     */
    /**
     * The entries of a spec, split at runs of ASCII whitespace.
     */
    private static List<String> words(String spec) {
        List<String> out = new ArrayList<>();
        int start = -1;
        for (int i = 0; i <= spec.length(); i++) {
            char c = i < spec.length() ? spec.charAt(i) : ' ';
            boolean space = c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
            if (space && start >= 0) {
                out.add(spec.substring(start, i));
                start = -1;
            } else if (!space && start < 0) {
                start = i;
            }
        }
        return out;
    }

    static GitOptions of(String spec) {
        GitOptions o = new GitOptions();
        for (String entry : words(spec)) {
            Character s = null;
            String rest = entry;
            if (entry.length() >= 2 && entry.charAt(1) == '|') {
                s = entry.charAt(0);
                rest = entry.substring(2);
            }
            Arity arity = Arity.NONE;
            if (rest.endsWith("=")) {
                arity = Arity.REQUIRED;
            } else if (rest.endsWith("?")) {
                arity = Arity.OPTIONAL;
            } else if (rest.endsWith("^")) {
                arity = Arity.NEXT_IF_PRESENT;
            }
            String name = arity == Arity.NONE ? rest : rest.substring(0, rest.length() - 1);
            Option opt = new Option(name.isEmpty() ? null : name, s, arity);
            if (s != null) {
                o.shorts.put(s, opt);
            }
            if (!name.isEmpty()) {
                o.longs.put(name, opt);
                o.longNames.add(name);
            }
        }
        return o;
    }

    /**
     * What a command line said.
     *
     * @param options     every option given, by canonical name: the long name, or
     *                    {@code -x} for a short option without one; a negated flag
     *                    appears as {@code no-name} unless the option's own name starts
     *                    with {@code no-}, in which case its positive form appears
     * @param positionals the non-option arguments, in order
     * @param values      the values given to options that take one, by canonical name, in order
     */
    record Parsed(Set<String> options, List<String> positionals, Map<String, List<String>> values) {
        boolean has(String name) {
            return options.contains(name);
        }

        /** Every value given to an option, in order; empty when none was. */
        List<String> values(String name) {
            return values.getOrDefault(name, List.of());
        }
    }

    /** Parses the arguments after the subcommand. */
    Parsed parse(List<String> args) {
        Set<String> seen = new LinkedHashSet<>();
        Map<String, List<String>> values = new HashMap<>();
        List<String> positionals = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--") || a.equals("--end-of-options")) {
                positionals.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (a.startsWith("--")) {
                i = parseLong(args, i, seen, values);
            } else if (a.startsWith("-") && a.length() > 1) {
                i = parseShorts(args, i, seen, values);
            } else {
                positionals.add(a);
            }
        }
        return new Parsed(seen, positionals, values);
    }

    private static void value(Map<String, List<String>> values, String name, String value) {
        List<String> list = values.get(name);
        if (list == null) {
            list = new ArrayList<>();
            values.put(name, list);
        }
        list.add(value);
    }

    private int parseLong(List<String> args, int i, Set<String> seen, Map<String, List<String>> values) {
        String body = args.get(i).substring(2);
        int eq = body.indexOf('=');
        String name = eq < 0 ? body : body.substring(0, eq);
        boolean attached = eq >= 0;

        List<Match> matches = match(name);
        if (matches.isEmpty()) {
            seen.add(name);
            return i;
        }
        int consumed = i;
        for (Match m : matches) {
            seen.add(m.canonical);
            if (attached) {
                value(values, m.canonical, body.substring(eq + 1));
            } else if (matches.size() == 1 && !m.negated) {
                Option o = m.option;
                if (o.arity == Arity.REQUIRED && i + 1 < args.size()) {
                    consumed = i + 1;
                    value(values, m.canonical, args.get(consumed));
                } else if (o.arity == Arity.NEXT_IF_PRESENT && i + 1 < args.size()
                        && !args.get(i + 1).startsWith("-")) {
                    consumed = i + 1;
                    value(values, m.canonical, args.get(consumed));
                }
            }
        }
        return consumed;
    }

    private record Match(Option option, String canonical, boolean negated) {}

    /** Exact name first; else every option the text is a prefix of, negations included. */
    private List<Match> match(String name) {
        List<Match> out = new ArrayList<>();
        Option exact = longs.get(name);
        if (exact != null) {
            out.add(new Match(exact, exact.name, false));
            return out;
        }
        if (name.startsWith("no-")) {
            Option positive = longs.get(name.substring(3));
            if (positive != null) {
                // "--no-no-verify" is "--verify"
                String canonical = positive.name.startsWith("no-") ? positive.name.substring(3) : "no-" + positive.name;
                out.add(new Match(positive, canonical, true));
                return out;
            }
        } else {
            Option negatedNo = longs.get("no-" + name);
            if (negatedNo != null) {
                // "--verify" negates an option declared as "no-verify"
                out.add(new Match(negatedNo, name, true));
                return out;
            }
        }
        if (name.isEmpty()) {
            return out;
        }
        for (String candidate : longNames) {
            if (candidate.startsWith(name)) {
                out.add(new Match(longs.get(candidate), candidate, false));
            }
            if (name.startsWith("no-") && !candidate.startsWith("no-") && ("no-" + candidate).startsWith(name)) {
                out.add(new Match(longs.get(candidate), "no-" + candidate, true));
            }
            if (!name.startsWith("no-") && candidate.startsWith("no-") && candidate.substring(3).startsWith(name)) {
                // "--veri" abbreviates "--verify", the negation of "no-verify"
                out.add(new Match(longs.get(candidate), candidate.substring(3), true));
            }
        }
        return out;
    }

    private int parseShorts(List<String> args, int i, Set<String> seen, Map<String, List<String>> values) {
        String a = args.get(i);
        for (int k = 1; k < a.length(); k++) {
            char c = a.charAt(k);
            Option o = shorts.get(c);
            if (o == null) {
                seen.add("-" + c);
                continue;
            }
            String name = o.name != null ? o.name : "-" + c;
            seen.add(name);
            if (o.arity == Arity.NONE) {
                continue;
            }
            if (k + 1 < a.length()) {
                value(values, name, a.substring(k + 1)); // value attached: -mmsg, -S<keyid>
                return i;
            }
            if (o.arity == Arity.REQUIRED && i + 1 < args.size()
                    || o.arity == Arity.NEXT_IF_PRESENT && i + 1 < args.size() && !args.get(i + 1).startsWith("-")) {
                value(values, name, args.get(i + 1));
                return i + 1;
            }
            return i;
        }
        return i;
    }
}
