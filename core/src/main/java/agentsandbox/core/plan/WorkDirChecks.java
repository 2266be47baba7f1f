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

    /**
     * A working directory in the home that the shell reached ({@code pwd}, the caller's PWD)
     * through a symbolic link in a directory the user can write (so a sandbox could have made
     * it), which leads out of that directory, is refused: a project's {@code packages/web}
     * swapped for a link to {@code ~/.config} would make the next run there give the sandbox
     * that directory. A link to elsewhere than the home (a workspace on another disk), one
     * that stays below its own directory, and one in a directory of the system's (the way to
     * a home that is itself a link) are taken as they are; so is a PWD that names another
     * directory than {@code real} (stale, or {@code -C} given).
     */
    static void notThroughALinkOutOfItsDirectory(String pwd, Path real, Path home) {
        if (pwd == null || !pwd.startsWith("/") || home == null || pwd.equals(real.toString())) {
            return; // no PWD, or the shell's path is the real one: no link on the way
        }
        Path homeReal = Resolver.realPath(home);
        Path logical = Path.of(pwd).normalize();
        if (homeReal == null || !real.startsWith(homeReal) || !real.equals(Resolver.realPath(logical))) {
            return;
        }
        Path at = logical.getRoot();
        for (Path part : logical) {
            at = at.resolve(part);
            if (!java.nio.file.Files.isSymbolicLink(at)) {
                continue;
            }
            Path holder = Resolver.realPath(at.getParent());
            if (holder != null && java.nio.file.Files.isWritable(holder) && !real.startsWith(holder)) {
                throw new SandboxException("the working directory " + real + " is reached through the link " + at
                        + ", which leads out of " + at.getParent() + ": a sandbox may have made it, and this run would"
                        + " make " + real + " writable; nothing ran",
                        "if you mean that directory, cd into it by its own path (cd -P .) and start again");
            }
        }
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
