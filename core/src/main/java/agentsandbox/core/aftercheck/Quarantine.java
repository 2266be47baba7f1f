// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.rules.Resolver;
import agentsandbox.core.run.ToolHomes;
import agentsandbox.core.run.Unsettled;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The settings files and init scripts of a granted cache that a run watched
 * ({@link ToolHomes.Watched}): one a sandbox created or replaced is moved aside after the
 * run, since the tool outside would obey it.
 */
public final class Quarantine {
    private Quarantine() {}

    /**
     * After the run: each watched file the sandbox created is renamed to
     * {@code NAME.agent-sandbox-<time>} (not followed, not read), so that the tool outside
     * does not obey it unseen.
     */
    public static List<String> moveAside(ToolHomes.Setup setup, Path stateDir) {
        List<String> out = new ArrayList<>();
        for (ToolHomes.Watched w : setup.watched()) {
            Path p = w.path();
            String now = ToolHomes.identity(p);
            if (now.isEmpty() || now.equals(w.before()) || !w.directory().equals(Resolver.realPath(p.getParent()))) {
                continue; // unchanged, or its directory now leads elsewhere (a planted link): not ours
            }
            try {
                Path aside = StateWatch.moveAsideRestoringWrite(p);
                out.add((w.before().isEmpty() ? "the sandbox created " : "while the sandbox ran, something replaced ")
                        + p + ", which the tool outside would obey: moved to " + aside
                        + "; check it before you put it back");
            } catch (IOException e) {
                out.add("the sandbox created or replaced " + p + ", which the tool outside would obey, and it could"
                        + " not be moved aside (" + ToolHomes.reason(e) + "): check it before you run that tool; agent-sandbox"
                        + " does not start again until it is gone");
                Unsettled.record(stateDir, p, now);
            }
        }
        return out;
    }
}
