// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.SandboxException;


/** A mistake on the command line: an unknown flag, a missing value, no command. */
final class UsageException extends SandboxException {
    UsageException(String message) {
        super(message, "see agent-sandbox --help");
    }

    UsageException(String message, String hint) {
        super(message, hint);
    }
}
