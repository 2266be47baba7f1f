// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.nio.file.Path;

/**
 * One filesystem rule before resolution: either a literal absolute path (what presets
 * produce) or a pattern as written in config or flags.
 *
 * @param literal the absolute path, for preset rules; {@code null} for patterns
 * @param pattern the pattern as written; {@code null} for literal rules
 * @param access  the level the rule gives
 * @param origin  where the rule came from
 * @param source  the host path to mount at {@code literal}, when it differs (the host
 *                temp dir mounted at {@code /tmp}); {@code null} otherwise
 */
public record Rule(Path literal, String pattern, Access access, Origin origin, Path source) {

    public static Rule literal(Path path, Access access, Origin origin) {
        return new Rule(path, null, access, origin, null);
    }

    public static Rule pattern(String pattern, Access access, Origin origin) {
        return new Rule(null, pattern, access, origin, null);
    }

    /** How the rule was written, for messages. */
    String written() {
        return literal != null ? literal.toString() : pattern;
    }
}
