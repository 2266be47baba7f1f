// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.util.List;
import java.util.Locale;

/**
 * An entry of the network's allow-list ({@code --allow-host}, {@code "network": {"allow": [...]}}):
 * a host name ({@code example.org}, which matches only itself) or a glob of one
 * ({@code *.example.org}, which matches every name below example.org, at any depth, but not
 * example.org itself). Names compare without case and without a trailing dot.
 *
 * <p>Not entries: a URL ({@code http://x}), anything with a port, a space or another
 * character that no host name has, {@code *} alone or a {@code *} anywhere but as the whole
 * first label, and IP addresses (also in the spellings {@code inet_aton} reads, such as
 * {@code 0x7f.1}): the list names hosts, and an address is reachable when a listed name
 * resolves to it.
 */
public final class HostPattern {
    private HostPattern() {}

    /** The longest host name DNS carries (without the trailing dot). */
    public static final int MAX_NAME = 253;

    /**
     * The entry as the list keeps it (lower case, no trailing dot).
     *
     * @throws IllegalArgumentException saying what is wrong with it
     */
    public static String validate(String entry) {
        String e = entry.toLowerCase(Locale.ROOT);
        if (e.endsWith(".") && e.length() > 1) {
            e = e.substring(0, e.length() - 1);
        }
        if (e.contains("://")) {
            throw new IllegalArgumentException("a URL, not a host name; write only the host, such as example.org");
        }
        if (e.isEmpty()) {
            throw new IllegalArgumentException("empty; write a host name such as example.org");
        }
        if (e.equals("*")) {
            throw new IllegalArgumentException("* would allow every host; leave the allow-list out for that");
        }
        String name = e.startsWith("*.") ? e.substring(2) : e;
        if (name.length() > MAX_NAME) {
            throw new IllegalArgumentException("longer than the " + MAX_NAME + " characters of a host name");
        }
        String[] labels = name.split("\\.", -1);
        for (String label : labels) {
            if (label.isEmpty() || label.length() > 63) {
                throw new IllegalArgumentException("not a host name: each part between dots has 1 to 63 characters");
            }
            for (int i = 0; i < label.length(); i++) {
                char c = label.charAt(i);
                if (c == '*') {
                    throw new IllegalArgumentException("a * only stands as the whole first part, as in *.example.org");
                }
                boolean ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_';
                if (!ok) {
                    throw new IllegalArgumentException("not a host name: '" + printable(c) + "' is not a letter, digit"
                            + " or -");
                }
            }
            if (label.startsWith("-") || label.endsWith("-")) {
                throw new IllegalArgumentException("not a host name: no part starts or ends with -");
            }
        }
        if (numeric(labels)) {
            throw new IllegalArgumentException("an IP address; the allow-list names hosts (an address is reachable"
                    + " when a listed name resolves to it)");
        }
        return e;
    }

    /** Whether the last label reads as a number, as in an IPv4 address in any of inet_aton's spellings. */
    private static boolean numeric(String[] labels) {
        String last = labels[labels.length - 1];
        if (last.startsWith("0x") && last.length() > 2) {
            last = last.substring(2);
            for (int i = 0; i < last.length(); i++) {
                if (Character.digit(last.charAt(i), 16) < 0) {
                    return false;
                }
            }
            return true;
        }
        for (int i = 0; i < last.length(); i++) {
            if (last.charAt(i) < '0' || last.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    private static String printable(char c) {
        return c < 0x20 || c == 0x7f || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c);
    }

    /** Whether {@code host} (a name as a client asked for it) is on the list of validated entries. */
    public static boolean allowed(List<String> patterns, String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        for (String p : patterns) {
            if (p.startsWith("*.")) {
                String suffix = p.substring(1); // ".example.org"
                if (h.length() > suffix.length() && h.endsWith(suffix)) {
                    return true;
                }
            } else if (h.equals(p)) {
                return true;
            }
        }
        return false;
    }
}
