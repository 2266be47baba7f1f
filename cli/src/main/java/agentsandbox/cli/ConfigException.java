// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.SandboxException;

import java.nio.file.Path;

/** A config file that cannot be used; the message starts with {@code file[:line:column]:}. */
final class ConfigException extends SandboxException {
    ConfigException(Path file, String message) {
        super(printable(file + ": " + message));
    }

    ConfigException(Path file, String message, String hint) {
        super(printable(file + ": " + message), hint);
    }

    ConfigException(Path file, int line, int column, String message) {
        super(printable(file + ":" + line + ":" + column + ": " + message));
    }
}
