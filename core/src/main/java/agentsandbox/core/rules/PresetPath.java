// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.nio.file.Path;

/** One absolute path a preset names, with the access level it gives. */
public record PresetPath(Path path, Access access) {}
