// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.plan.Planner;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Chooses one winner per path. A deeper path beats a shallower one by being mounted
 * later (see {@link Planner}); among the rules for the same resolved path:
 * an exact pattern beats a glob, then the later layer wins, then the most restrictive
 * level wins.
 */
public final class Specificity {
    private Specificity() {}

    /** Orders contenders for one path, weakest first, so the last one wins. */
    static final Comparator<Candidate> STRENGTH = new Comparator<>() {
        // exact beats glob, then the later layer, then the more restrictive level
        @Override
        public int compare(Candidate a, Candidate b) {
            int c = Boolean.compare(a.exact(), b.exact());
            if (c == 0) {
                c = a.origin().layer().compareTo(b.origin().layer());
            }
            return c != 0 ? c : a.access().compareTo(b.access());
        }
    };

    /** A path's winning rule and the rules it overrode. */
    public record Decision(Candidate winner, List<Candidate> overridden) {
        public Path path() {
            return winner.path();
        }
    }

    @SuppressWarnings("unchecked")
    public static List<Decision> decide(List<Candidate> candidates) {
        // a path's one candidate, or the list of its several: most paths have one (a glob
        // over 20 000 files makes 20 000 of them), and a list for each cost a tenth of a plan
        Map<Path, Object> byPath = new LinkedHashMap<>(candidates.size() * 4 / 3 + 16);
        for (Candidate c : candidates) {
            Object before = byPath.putIfAbsent(c.path(), c);
            if (before instanceof Candidate first) {
                List<Candidate> several = new ArrayList<>(4);
                several.add(first);
                several.add(c);
                byPath.put(c.path(), several);
            } else if (before != null) {
                ((List<Candidate>) before).add(c);
            }
        }
        List<Decision> out = new ArrayList<>(byPath.size());
        for (Object value : byPath.values()) {
            if (value instanceof Candidate single) {
                out.add(new Decision(single, List.of()));
                continue;
            }
            List<Candidate> contenders = (List<Candidate>) value;
            Candidate winner = contenders.get(0);
            for (Candidate c : contenders) {
                if (STRENGTH.compare(c, winner) > 0) {
                    winner = c;
                }
            }
            List<Candidate> others = new ArrayList<>(contenders.size() - 1);
            for (Candidate c : contenders) {
                if (c != winner) {
                    others.add(c);
                }
            }
            out.add(new Decision(winner, others));
        }
        return out;
    }
}
