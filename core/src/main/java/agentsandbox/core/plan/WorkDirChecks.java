// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.SandboxException;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Specificity;

import java.nio.file.Path;
import java.util.List;

/** The working directories no plan can have. */
final class WorkDirChecks {
    private WorkDirChecks() {}

    /**
     * {@code @base} makes the working directory writable. Started in {@code /} that would be
     * the whole machine, with the host's {@code /dev}, {@code /proc} and {@code /run} over the
     * sandbox's own (bwrap then fails to create {@code /run/agent-sandbox} in the host's
     * {@code /run}). No reading of "the project" makes {@code /} one, and quietly leaving it
     * read-only would break the promise that the working directory is writable: so the
     * run is refused, with the fix. The same goes for the other paths no rule may make
     * writable ({@link Resolver#refusal}): {@code /proc/...}, {@code /dev}, {@code /run}.
     */
    static void canBeWritable(Path real) {
        String why = Resolver.refusal(real, Access.RW);
        if (why == null) {
            return;
        }
        throw new SandboxException(real.getNameCount() == 0
                ? "the working directory is /, and preset @base makes the working directory writable: here, the"
                        + " whole machine"
                : "the working directory " + real + " cannot be made writable (preset @base): " + why,
                "cd into a project directory first, or name one with -C DIR");
    }

    /** A working directory that a rule hides is refused: the command could not run there. */
    static void notExcluded(Path workDir, Path real, List<Specificity.Decision> decisions) {
        for (Specificity.Decision d : decisions) {
            Candidate w = d.winner();
            if (w.access() == Access.EXCLUDE && real.startsWith(w.path())) {
                throw new SandboxException("the working directory " + workDir
                        + (real.equals(w.path()) ? " is excluded" : " lies inside the excluded path " + w.path())
                        + " (" + w.origin() + ")",
                        "run agent-sandbox from another directory, or remove the exclude rule");
            }
        }
    }
}
