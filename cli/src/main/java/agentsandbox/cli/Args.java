package agentsandbox.cli;

import agentsandbox.core.CommandRule;
import agentsandbox.core.Layer;
import agentsandbox.core.PolicyLayer;
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
 * @param hostPorts {@code --host-port} ports in order
 * @param dryRun   {@code --dry-run}
 * @param debug    {@code --debug}
 * @param ro       {@code --ro} paths in order
 * @param rw       {@code --rw} paths in order
 * @param exclude  {@code --exclude} paths in order
 * @param commands {@code --cmd} rules in order; a later rule for the same name wins
 * @param command  the command and its arguments (empty unless mode is RUN)
 * @param hints    lines to show on stderr before running: spellings that parse, but
 *                 likely not as meant
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
        List<Integer> hostPorts,
        boolean dryRun,
        boolean debug,
        List<String> ro,
        List<String> rw,
        List<String> exclude,
        Map<String, CommandRule> commands,
        List<String> command,
        List<String> hints) {

    enum Mode { HELP, VERSION, CHECK, TRUST, DOCTOR, RUN }

    /** The flags as the highest-priority policy layer. */
    PolicyLayer flagLayer() {
        PolicyLayer.Builder b = PolicyLayer.builder(Layer.FLAG, "flags");
        ro.forEach(b::ro);
        rw.forEach(b::rw);
        exclude.forEach(b::exclude);
        commands.forEach(b::command);
        hostPorts.forEach(b::hostPort);
        return b.network(network).docker(docker).shareTmp(shareTmp).sshAgent(sshAgent).build();
    }
}
