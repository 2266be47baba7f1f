// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The rules of one configuration layer, as written: a config file, the command-line
 * flags, or the built-in defaults. Paths stay unresolved patterns here; they are
 * resolved against the effective working directory when a plan is made.
 *
 * @param layer    the layer's priority
 * @param source   where it came from, for messages: a file path, {@code "flags"}, {@code "defaults"}
 * @param presets  preset toggles in order ({@code "@lint/ts"}, {@code "!@git"})
 * @param ro       read-only patterns
 * @param rw       read-write patterns
 * @param exclude  hidden patterns
 * @param commands command rules, in insertion order
 * @param network  network access, or {@code null} when this layer does not say
 * @param docker   Docker socket access, or {@code null} when this layer does not say
 * @param shareTmp whether {@code /tmp} is the host's temp dir instead of a private one, or
 *                 {@code null} when this layer does not say
 * @param sshAgent whether the caller's ssh-agent socket is reachable, or {@code null}
 * @param gpgAgent whether the caller's gpg-agent is reachable (its restricted socket), or {@code null}
 * @param hostPorts host loopback ports the sandbox may reach (concatenated across layers)
 * @param sshAgentKeys with {@code sshAgent} on, the comments of the only keys the sandbox may
 *                 use; empty for every key the agent holds
 * @param bounds   the resource bounds this layer sets ({@link Bounds#NONE} when none)
 * @param allowHosts the network's allow-list entries this layer names ({@link HostPattern}),
 *                 concatenated across layers; empty when it names none
 */
public record PolicyLayer(
        Layer layer,
        String source,
        List<String> presets,
        List<String> ro,
        List<String> rw,
        List<String> exclude,
        Map<String, CommandRule> commands,
        Boolean network,
        Boolean docker,
        Boolean shareTmp,
        Boolean sshAgent,
        Boolean gpgAgent,
        List<Integer> hostPorts,
        List<String> sshAgentKeys, Bounds bounds, List<String> allowHosts) {

    public PolicyLayer {
        bounds = bounds == null ? Bounds.NONE : bounds;
        Objects.requireNonNull(layer, "layer");
        Objects.requireNonNull(source, "source");
        presets = List.copyOf(presets);
        ro = List.copyOf(ro);
        rw = List.copyOf(rw);
        exclude = List.copyOf(exclude);
        commands = Collections.unmodifiableMap(new LinkedHashMap<>(commands));
        hostPorts = List.copyOf(hostPorts);
        sshAgentKeys = List.copyOf(sshAgentKeys);
        allowHosts = allowHosts == null ? List.of() : List.copyOf(allowHosts);
    }

    /** The origin every rule of this layer carries. */
    public Origin origin() {
        return new Origin(layer, source);
    }

    public static Builder builder(Layer layer, String source) {
        return new Builder(layer, source);
    }

    /** Mutable builder; config readers and flag parsers fill one while reading. */
    public static final class Builder {
        private final Layer layer;
        private final String source;
        private final List<String> presets = new ArrayList<>();
        private final List<String> ro = new ArrayList<>();
        private final List<String> rw = new ArrayList<>();
        private final List<String> exclude = new ArrayList<>();
        private final Map<String, CommandRule> commands = new LinkedHashMap<>();
        private Boolean network;
        private Boolean docker;
        private Boolean shareTmp;
        private Boolean sshAgent;
        private Boolean gpgAgent;
        private final List<Integer> hostPorts = new ArrayList<>();
        private final List<String> sshAgentKeys = new ArrayList<>();
        private Bounds bounds = Bounds.NONE;
        private final List<String> allowHosts = new ArrayList<>();

        private Builder(Layer layer, String source) {
            this.layer = Objects.requireNonNull(layer, "layer");
            this.source = Objects.requireNonNull(source, "source");
        }

        public Builder preset(String toggle) {
            presets.add(toggle);
            return this;
        }

        public Builder ro(String pattern) {
            ro.add(pattern);
            return this;
        }

        public Builder rw(String pattern) {
            rw.add(pattern);
            return this;
        }

        public Builder exclude(String pattern) {
            exclude.add(pattern);
            return this;
        }

        public Builder path(Access access, String pattern) {
            return switch (access) {
                case RO -> ro(pattern);
                case RW -> rw(pattern);
                case EXCLUDE -> exclude(pattern);
            };
        }

        public Builder command(String name, CommandRule rule) {
            commands.put(name, rule);
            return this;
        }

        public Builder network(Boolean value) {
            network = value;
            return this;
        }

        public Builder docker(Boolean value) {
            docker = value;
            return this;
        }

        public Builder shareTmp(Boolean value) {
            shareTmp = value;
            return this;
        }

        public Builder sshAgent(Boolean value) {
            sshAgent = value;
            return this;
        }

        /** The comments of the only keys of the agent the sandbox may use. */
        public Builder sshAgentKeys(List<String> comments) {
            sshAgentKeys.clear();
            sshAgentKeys.addAll(comments);
            return this;
        }

        public Builder gpgAgent(Boolean value) {
            gpgAgent = value;
            return this;
        }

        /** A host loopback port the sandbox may reach (1 to 65535). */
        public Builder hostPort(int port) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is not between 1 and 65535");
            }
            hostPorts.add(port);
            return this;
        }

        /**
         * An entry of the network's allow-list.
         *
         * @throws IllegalArgumentException when it is not a host name or a glob of one
         */
        public Builder allowHost(String entry) {
            String e = HostPattern.validate(entry);
            if (!allowHosts.contains(e)) {
                allowHosts.add(e);
            }
            return this;
        }

        /** Resource bounds; a null field leaves that bound to the layers below. */
        public Builder bounds(Bounds value) {
            bounds = value.over(bounds);
            return this;
        }

        public PolicyLayer build() {
            return new PolicyLayer(layer, source, presets, ro, rw, exclude, commands, network, docker,
                    shareTmp, sshAgent, gpgAgent, hostPorts, sshAgentKeys, bounds, allowHosts);
        }
    }
}
