// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Bounds;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.PolicyLayer;

import java.util.List;
import java.util.Map;

/**
 * The parsed command line.
 *
 * @param mode     what to do
 * @param quiet    {@code check -q}
 * @param cwd      {@code --cwd}, or {@code null}
 * @param config   {@code --config}, or {@code null}
 * @param network  {@code --network}, or {@code null} when not given
 * @param docker   {@code --docker}, or {@code null} when not given
 * @param shareTmp {@code --share-tmp}, or {@code null} when not given
 * @param sshAgent {@code --ssh-agent}, or {@code null} when not given
 * @param sshAgentKeys the key comments of {@code --ssh-agent=COMMENT,...}; empty for every key
 * @param gpgAgent {@code --gpg-agent}, or {@code null} when not given
 * @param hostPorts {@code --host-port} ports in order
 * @param allowHosts {@code --allow-host} entries in order (validated); with any, the network is on
 *                 unless {@code --network=false} says otherwise
 * @param dryRun   {@code --dry-run}
 * @param debug    {@code --debug}
 * @param ro       {@code --ro} paths in order
 * @param rw       {@code --rw} paths in order
 * @param exclude  {@code --exclude} paths in order
 * @param commands {@code --cmd} rules in order; a later rule for the same name wins
 * @param command  the command and its arguments; for EXPLAIN, the paths to explain (empty otherwise)
 * @param hints    lines to show on stderr before running: spellings that parse, but
 *                 likely not as meant
 * @param json     {@code --json}: machine-readable output (dry run, explain, doctor, log)
 */
record Args(
        Mode mode,
        boolean quiet,
        String cwd,
        String config,
        Boolean network,
        Boolean docker,
        Boolean shareTmp,
        Boolean sshAgent,
        List<String> sshAgentKeys,
        Boolean gpgAgent,
        List<Integer> hostPorts,
        List<String> allowHosts,
        boolean dryRun,
        boolean debug,
        List<String> ro,
        List<String> rw,
        List<String> exclude,
        Map<String, CommandRule> commands,
        List<String> command,
        List<String> hints,
        Bounds bounds, boolean json) {

    enum Mode { HELP, SUBCOMMAND_HELP, USAGE, VERSION, CHECK, TRUST, DOCTOR, EXPLAIN, CHANGES, LOG, RUN }

    /** Whether any flag that changes a run's policy was given (not --debug, --dry-run). */
    boolean hasPolicyFlags() {
        return cwd != null || config != null || network != null || docker != null || shareTmp != null
                || sshAgent != null || gpgAgent != null || !hostPorts.isEmpty() || !allowHosts.isEmpty() || !ro.isEmpty() || !rw.isEmpty() || !exclude.isEmpty()
                || !commands.isEmpty() || !bounds.equals(Bounds.NONE);
    }

    /** The flags as the highest-priority policy layer. */
    PolicyLayer flagLayer() {
        PolicyLayer.Builder b = PolicyLayer.builder(Layer.FLAG, "flags");
        for (String p : ro) {
            b.ro(p);
        }
        for (String p : rw) {
            b.rw(p);
        }
        for (String p : exclude) {
            b.exclude(p);
        }
        for (Map.Entry<String, CommandRule> e : commands.entrySet()) {
            b.command(e.getKey(), e.getValue());
        }
        for (int port : hostPorts) {
            b.hostPort(port);
        }
        for (String h : allowHosts) {
            b.allowHost(h);
        }
        return b.network(network != null || allowHosts.isEmpty() ? network : Boolean.TRUE).docker(docker).shareTmp(shareTmp).sshAgent(sshAgent).sshAgentKeys(sshAgentKeys).gpgAgent(gpgAgent)
                .bounds(bounds).build();
    }
}
