// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.nio.file.Path;

/**
 * A rule applied to one existing, symlink-resolved path: a contender for that path's
 * access level.
 *
 * @param path   the resolved target path
 * @param source the host path to mount there (equal to {@code path} except for the
 *               host temp dir mounted at {@code /tmp})
 * @param access the level the rule asks for
 * @param origin where the rule came from
 * @param exact  true when the rule named this path exactly (not through a glob)
 * @param rule   the rule as written, for messages
 * @param directory whether {@code path} is a directory, when resolution already looked
 *               (a glob over a large directory would otherwise stat every match again);
 *               null when not known
 */
public record Candidate(Path path, Path source, Access access, Origin origin, boolean exact, String rule,
        Boolean directory) {
    public Candidate(Path path, Path source, Access access, Origin origin, boolean exact, String rule) {
        this(path, source, access, origin, exact, rule, null);
    }
}
