package agentsandbox.core;

import java.nio.file.Path;

/** One absolute path a preset names, with the access level it gives. */
record PresetPath(Path path, Access access) {}
