// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.PolicyLayer;

import java.util.ArrayList;
import java.util.List;

/**
 * Settings that cancel each other out, said in one line each rather than dropped without a
 * word. Both on the command line, they are a usage error: the user asked for two things that
 * cannot both hold. Where one of them comes from a config file (a host port of the global
 * config, and --network=false for one run), the run goes ahead as the stricter setting says,
 * after one line on stderr.
 */
final class Conflicts {
    private Conflicts() {}

    /**
     * The conflicts of a merged policy: lines to print before the run.
     *
     * @throws UsageException when both sides of one were given as flags
     */
    static List<String> of(Policy policy) {
        List<String> out = new ArrayList<>();
        if (policy.network()) {
            return out;
        }
        PolicyLayer off = lastNetworkSetting(policy);
        String offSpelled = off == null ? "the network off" : "the network off (" + where(off, "--network=false",
                "\"network\": false") + ")";
        for (PolicyLayer l : policy.layers()) {
            if (l.hostPorts().isEmpty()) {
                continue;
            }
            String ports = join(l.hostPorts());
            String portSpelled = where(l, "--host-port " + ports, "\"hostPorts\": [" + ports + "]");
            if (l.layer() == Layer.FLAG && off != null && off.layer() == Layer.FLAG) {
                throw new UsageException("--host-port " + ports + " and --network=false contradict each other: with"
                        + " the network off no host port can be reached", "leave out one of them");
            }
            out.add(portSpelled + " is ignored with " + offSpelled + ": no host port can be reached");
        }
        for (PolicyLayer l : policy.layers()) {
            if (l.allowHosts().isEmpty()) {
                continue;
            }
            String hosts = String.join(",", l.allowHosts());
            if (l.layer() == Layer.FLAG && off != null && off.layer() == Layer.FLAG) {
                throw new UsageException("--allow-host " + hosts + " and --network=false contradict each other: with"
                        + " the network off no host can be reached", "leave out one of them");
            }
            out.add(where(l, "--allow-host " + hosts, "\"network\": {\"allow\": [...]}") + " is ignored with "
                    + offSpelled + ": no host can be reached");
        }
        if (policy.docker()) {
            PolicyLayer docker = lastDockerSetting(policy);
            String dockerSpelled = docker == null ? "Docker" : where(docker, "--docker", "\"docker\": true");
            out.add(dockerSpelled + " with " + offSpelled + ": the Docker daemon still reaches the network for the"
                    + " sandbox (docker run, docker build), so the network is not really off");
        }
        return out;
    }

    private static PolicyLayer lastNetworkSetting(Policy policy) {
        PolicyLayer last = null;
        for (PolicyLayer l : policy.layers()) {
            if (l.network() != null) {
                last = l;
            }
        }
        return last;
    }

    private static PolicyLayer lastDockerSetting(Policy policy) {
        PolicyLayer last = null;
        for (PolicyLayer l : policy.layers()) {
            if (l.docker() != null) {
                last = l;
            }
        }
        return last;
    }

    /** A setting as its layer spells it: the flag, or the config entry and its file. */
    private static String where(PolicyLayer l, String flag, String entry) {
        return switch (l.layer()) {
            case FLAG -> flag;
            case PRESET -> entry + " (built-in)";
            default -> entry + " in " + l.source();
        };
    }

    private static String join(List<Integer> ports) {
        StringBuilder b = new StringBuilder();
        for (int p : ports) {
            b.append(b.isEmpty() ? "" : ",").append(p);
        }
        return b.toString();
    }
}
