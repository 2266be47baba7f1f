// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.nio.file.Path;

/**
 * A bound of the git checks that was reached: what lies beyond it was not looked at, so
 * the check cannot say that git will run nothing there.
 *
 * @param file where the bound was reached (the file or directory to look at)
 * @param what what was too large, too many or too deep, as a phrase that follows the path
 */
public record GitLimit(Path file, String what) {
    /** One line for the user: {@code FILE WHAT}. */
    public String describe() {
        return file + " " + what;
    }
}
