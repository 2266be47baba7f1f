// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The sandbox's resource bounds, as one layer says them (a field is {@code null} when the
 * layer does not say) or as they apply after merging (every field set).
 *
 * <ul>
 * <li>{@code tmpSize}: the size of the private {@code /tmp}, in bytes. It is a file system of
 *     the sandbox's own in memory (tmpfs), so a full {@code /tmp} gives ENOSPC inside and never
 *     fills the host's disk. Default 2 GiB (what is written there is in memory, or swap, only
 *     as long as it is there).</li>
 * <li>{@code maxProcs}: how many processes and threads the sandbox's user may have at once
 *     inside it (RLIMIT_NPROC, which the kernel counts per user namespace: the sandbox's own
 *     and every namespace made inside it). Default 4096.</li>
 * <li>{@code maxMemory}: how much memory one process may allocate (RLIMIT_DATA). Without a
 *     cgroup of agent-sandbox's own, no bound holds for the sandbox as a whole. Default: half
 *     of the machine's memory.</li>
 * </ul>
 *
 * @param tmpSize   bytes, or null
 * @param maxProcs  a count, or null
 * @param maxMemory bytes, or null
 */
public record Bounds(Long tmpSize, Long maxProcs, Long maxMemory) {

    /** No layer says anything. */
    public static final Bounds NONE = new Bounds(null, null, null);

    /** The smallest private /tmp: what tools put there as they start. */
    public static final long MIN_TMP_SIZE = 1L << 20;
    /** The fewest processes a sandbox starts with (bwrap's init, the command, the helper), and room to run. */
    public static final long MIN_PROCS = 16;
    /** The least memory a process may have: a shell, a compiler's driver start with less. */
    public static final long MIN_MEMORY = 64L << 20;

    private static final long DEFAULT_PROCS = 4096;
    private static final long DEFAULT_TMP = 2L << 30;

    /** This layer's values where it has them, else {@code under}'s. */
    public Bounds over(Bounds under) {
        return new Bounds(tmpSize != null ? tmpSize : under.tmpSize,
                maxProcs != null ? maxProcs : under.maxProcs,
                maxMemory != null ? maxMemory : under.maxMemory);
    }

    /** These bounds with the defaults where none is given (memory: the machine's, from /proc/meminfo). */
    public Bounds withDefaults() {
        long memory = maxMemory == null ? machineMemory() : 0;
        return new Bounds(tmpSize != null ? tmpSize : DEFAULT_TMP,
                maxProcs != null ? maxProcs : DEFAULT_PROCS,
                maxMemory != null ? maxMemory : Math.max(MIN_MEMORY, memory / 2));
    }

    /** The machine's memory in bytes (MemTotal), or 8 GiB when /proc/meminfo cannot be read. */
    static long machineMemory() {
        try {
            String text = Files.readString(Path.of("/proc/meminfo"), StandardCharsets.US_ASCII);
            int at = text.indexOf("MemTotal:");
            if (at >= 0) {
                long kib = 0;
                boolean digits = false;
                for (int i = at + "MemTotal:".length(); i < text.length(); i++) {
                    char c = text.charAt(i);
                    if (c >= '0' && c <= '9') {
                        kib = kib * 10 + (c - '0');
                        digits = true;
                    } else if (digits || c == '\n') {
                        break;
                    }
                }
                if (digits && kib > 0) {
                    return kib * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        return 8L << 30;
    }

    /**
     * A size: a whole number of bytes, or with a suffix K, M, G or T (powers of 1024, an
     * optional trailing B or iB): {@code 512M}, {@code 2G}, {@code 1048576}.
     *
     * @param what the flag or key, for the message
     * @param min  the smallest accepted
     * @throws IllegalArgumentException with one line saying what is wrong and how to fix it
     */
    public static long parseSize(String what, String text, long min) {
        String t = text.strip();
        int end = t.length();
        String upper = t.toUpperCase(java.util.Locale.ROOT);
        if (upper.endsWith("IB")) {
            end -= 2;
        } else if (upper.endsWith("B") && end >= 2 && !Character.isDigit(upper.charAt(end - 2))) {
            end -= 1;
        }
        int shift = 0;
        if (end > 0) {
            switch (upper.charAt(end - 1)) {
                case 'K' -> shift = 10;
                case 'M' -> shift = 20;
                case 'G' -> shift = 30;
                case 'T' -> shift = 40;
                default -> shift = -1;
            }
            if (shift >= 0) {
                end--;
            } else {
                shift = 0;
            }
        }
        long number = digits(t.substring(0, end));
        if (number < 0 || number > (Long.MAX_VALUE >> shift)) {
            throw new IllegalArgumentException(what + " " + text + ": expected a size such as 512M or 2G"
                    + " (bytes, or K, M, G, T)");
        }
        long bytes = number << shift;
        if (bytes < min) {
            throw new IllegalArgumentException(what + " " + text + ": too small, a sandbox needs at least "
                    + human(min) + "; give " + human(min) + " or more");
        }
        return bytes;
    }

    /**
     * A count of processes, at least {@link #MIN_PROCS}.
     *
     * @throws IllegalArgumentException with one line saying what is wrong and how to fix it
     */
    public static long parseCount(String what, String text) {
        long n = digits(text.strip());
        if (n < 0) {
            throw new IllegalArgumentException(what + " " + text + ": expected a whole number of processes,"
                    + " such as 1024");
        }
        if (n < MIN_PROCS) {
            throw new IllegalArgumentException(what + " " + text + ": too few, a sandbox needs at least " + MIN_PROCS
                    + " processes to start its command; give " + MIN_PROCS + " or more");
        }
        return n;
    }

    /** The value of a string of ASCII digits, or -1 (empty, a sign, anything else, too long). */
    private static long digits(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return -1;
        }
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }

    /** A size for people: 4G, 512M, 1536K, or bytes. */
    public static String human(long bytes) {
        String[] units = {"T", "G", "M", "K"};
        int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            long unit = 1L << shifts[i];
            if (bytes >= unit && bytes % unit == 0) {
                return (bytes >> shifts[i]) + units[i];
            }
        }
        return Long.toString(bytes);
    }
}
