// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Candidate;
import agentsandbox.core.rules.Specificity;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The paths inside at which a host path can be seen: a rule holds on every one of them. */
public final class Views {
    private Views() {}

    /**
     * The decisions at and below {@code source}, repeated below {@code target}: a host
     * directory shown at a second path gets every rule at both (a rule holds on every view).
     */
    public static List<Specificity.Decision> mirror(List<Specificity.Decision> decisions, Path source, Path target) {
        List<Specificity.Decision> out = new ArrayList<>();
        for (Specificity.Decision d : decisions) {
            Candidate w = d.winner();
            if (w.source().startsWith(source) && w.source().equals(w.path())) {
                Path at = target.resolve(source.relativize(w.path()).toString());
                out.add(new Specificity.Decision(new Candidate(at, w.source(), w.access(), w.origin(), w.exact(),
                        w.rule()), d.overridden()));
            }
        }
        return out;
    }

    /**
     * Every path inside at which a host path can be reached: its own, unless a fresh file
     * system or another host directory is shown there ({@code /run}, a private
     * {@code /tmp}), and the same place below every mount that shows a host directory at
     * another path (a shared temp dir at {@code /tmp}).
     */
    public static List<Path> of(Path host, List<Mount> mounts) {
        List<Path> out = new ArrayList<>();
        // the host path and its parents: a mount at one of them covers it (a set lookup per
        // mount rather than a comparison; a plan can have tens of thousands of mounts)
        Set<Path> covering = new HashSet<>();
        for (Path p = host; p != null; p = p.getParent()) {
            covering.add(p);
        }
        Mount shows = null; // the mount whose content is seen at the host path: the deepest, then the last
        for (Mount m : mounts) {
            if (m.isView() && host.startsWith(m.source())) {
                out.add(m.target().resolve(m.source().relativize(host).toString()));
            }
            if (covering.contains(m.target()) && m.kind() != Mount.Kind.REMOUNT_READ_ONLY
                    && (shows == null || m.target().getNameCount() >= shows.target().getNameCount())) {
                shows = m;
            }
        }
        boolean own = shows == null || shows.kind() == Mount.Kind.ROOT
                || (shows.kind() == Mount.Kind.READ_ONLY || shows.kind() == Mount.Kind.READ_WRITE) && !shows.isView();
        if (own) {
            out.add(0, host);
        }
        return out;
    }
}
