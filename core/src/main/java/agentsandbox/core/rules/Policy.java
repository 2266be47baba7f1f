// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A layered policy: the built-in defaults followed by the layers the caller adds,
 * lowest priority first. Build one with {@link #builder()}; the defaults layer
 * ({@code @all}, {@code git=@git}, network on, docker off) is always first.
 *
 * @param layers      all layers, defaults first
 * @param configFiles config files that were loaded; they are read-only inside the sandbox
 */
public record Policy(List<PolicyLayer> layers, List<Path> configFiles) {

    public Policy {
        layers = List.copyOf(layers);
        configFiles = List.copyOf(configFiles);
    }

    /** The built-in defaults layer. */
    public static PolicyLayer defaults() {
        return PolicyLayer.builder(Layer.PRESET, "defaults")
                .command("git", new CommandRule.Preset("@git"))
                .network(true)
                .docker(false)
                .build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Network access after merging: the last layer that sets it wins. */
    public boolean network() {
        Boolean v = null;
        for (PolicyLayer l : layers) {
            if (l.network() != null) {
                v = l.network();
            }
        }
        return v == null || v;
    }

    /** Docker socket access after merging: the last layer that sets it wins. */
    public boolean docker() {
        Boolean v = null;
        for (PolicyLayer l : layers) {
            if (l.docker() != null) {
                v = l.docker();
            }
        }
        return v != null && v;
    }

    /** Whether {@code /tmp} is the host's temp dir: the last layer that sets it wins (default: private). */
    public boolean shareTmp() {
        return last(Flag.SHARE_TMP);
    }

    /** Whether the caller's ssh-agent is reachable: the last layer that sets it wins (default: no). */
    public boolean sshAgent() {
        return last(Flag.SSH_AGENT);
    }

    /**
     * With the ssh-agent reachable, the comments of the only keys the sandbox may use, as the
     * last layer that sets {@code sshAgent} names them; empty for every key.
     */
    public List<String> sshAgentKeys() {
        List<String> keys = List.of();
        for (PolicyLayer l : layers) {
            if (l.sshAgent() != null) {
                keys = l.sshAgentKeys();
            }
        }
        return keys;
    }

    /** The host loopback ports the sandbox may reach, every layer's, in order, without repeats. */
    public List<Integer> hostPorts() {
        java.util.Set<Integer> ports = new java.util.LinkedHashSet<>();
        for (PolicyLayer l : layers) {
            ports.addAll(l.hostPorts());
        }
        return List.copyOf(ports);
    }

    /**
     * The network's allow-list: every layer's entries, in order, without repeats (a host
     * any layer names is reachable); empty when no layer names one, and every host is.
     */
    public List<String> allowHosts() {
        java.util.Set<String> hosts = new java.util.LinkedHashSet<>();
        for (PolicyLayer l : layers) {
            hosts.addAll(l.allowHosts());
        }
        return List.copyOf(hosts);
    }

    /** Whether the caller's gpg-agent is reachable: the last layer that sets it wins (default: no). */
    public boolean gpgAgent() {
        return last(Flag.GPG_AGENT);
    }

    /** The resource bounds after merging (the last layer that sets each wins), defaults filled in. */
    public Bounds bounds() {
        Bounds merged = Bounds.NONE;
        for (PolicyLayer l : layers) {
            merged = l.bounds().over(merged);
        }
        return merged.withDefaults();
    }

    private enum Flag { SHARE_TMP, SSH_AGENT, GPG_AGENT }

    private boolean last(Flag flag) {
        Boolean v = null;
        for (PolicyLayer l : layers) {
            Boolean here = switch (flag) {
                case SHARE_TMP -> l.shareTmp();
                case SSH_AGENT -> l.sshAgent();
                case GPG_AGENT -> l.gpgAgent();
            };
            if (here != null) {
                v = here;
            }
        }
        return v != null && v;
    }

    /** Command rules after merging: a later layer overrides a name an earlier one set. */
    public Map<String, CommandRule> commands() {
        Map<String, CommandRule> merged = new LinkedHashMap<>();
        for (PolicyLayer l : layers) {
            merged.putAll(l.commands());
        }
        return Collections.unmodifiableMap(merged);
    }

    public static final class Builder {
        private final List<PolicyLayer> layers = new ArrayList<>(List.of(defaults()));
        private final List<Path> configFiles = new ArrayList<>();

        private Builder() {}

        /** Adds a layer; layers must be added lowest priority first. */
        public Builder layer(PolicyLayer layer) {
            PolicyLayer last = layers.getLast();
            if (layer.layer().compareTo(last.layer()) < 0) {
                throw new IllegalArgumentException(
                        "layer " + layer.layer() + " added after higher-priority " + last.layer());
            }
            layers.add(layer);
            return this;
        }

        /** Records a config file that was loaded (made read-only inside the sandbox). */
        public Builder configFile(Path file) {
            configFiles.add(file);
            return this;
        }

        public Policy build() {
            return new Policy(layers, configFiles);
        }
    }
}
