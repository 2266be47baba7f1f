// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.host.SshAgentRelay;
import agentsandbox.core.homes.HomeViews;
import agentsandbox.core.git.GitViews;
import agentsandbox.core.plan.Explanation;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.run.RunDir;
import agentsandbox.core.text.ShellQuote;
import agentsandbox.core.run.ToolHomes;

import java.nio.file.Path;
import java.util.List;

/**
 * The resolved sandbox for one command: the policy mounts with the rule that decided
 * each, the complete bwrap command line, and the notes that explain how it was reached.
 * Making a plan creates nothing; {@link Sandbox#start} does.
 *
 * @param argv       the full command line, starting with the bwrap executable
 * @param mounts     every mount the run makes, in bwrap's order: the fixed ones, the policy
 *                   shallow to deep, what no rule may open up, Docker, the runtime
 * @param runtimeDir the per-run directory on the host (see {@link RunDir}; created at start, removed after)
 * @param hiddenFile the empty mode-000 file inside {@code runtimeDir} that stands in for excluded files
 * @param notes      human-readable decisions, for {@code --debug}
 * @param bwrap      the bwrap executable, or null when none was found (a plan can still be printed)
 * @param guardSocket where the git guard listens on the host (inside {@code runtimeDir}), or null
 *                   when no command has the {@code @git} rule or is blocked (the guard also takes
 *                   the reports of blocked commands' calls)
 * @param tmpSource  the host directory that is {@code /tmp} inside the sandbox
 * @param spilledCommand the command with its arguments when they are too many for bwrap's
 *                   command line: written to {@code runtimeDir} at start, read by the
 *                   sandbox's first program; empty when the command is on the command line
 * @param netSocket  where the network proxy listens on the host (inside {@code runtimeDir}), or null
 *                   when the network is off (or is the outer sandbox's)
 * @param hostPorts  host loopback ports the proxy connects to on request
 * @param homeSetup  what the run creates in the home before the sandbox starts: the
 *                   missing directories of the tools it starts (see {@link ToolHomes})
 * @param explanation what the sandbox shows at each path and why; written for {@code explain} inside
 * @param checkedWorkDir the working directory (symlinks resolved) that the sandbox's first
 *                   program checks and enters before the command starts ({@link MountChecks}),
 *                   or null
 * @param gitViews   the git dirs the sandbox sees through a copy-on-write view ({@link GitViews}),
 *                   whose layers the host applies after the run; empty for none
 * @param gitPresets whether {@code @git} or {@code @git-strict} is on: the git dirs are watched while the run
 *                   lasts ({@link agentsandbox.core.aftercheck.GitLiveWatch})
 * @param homeViews  the home's directories the sandbox sees through a copy-on-write view
 *                   ({@link HomeViews}); empty for none
 * @param gitOnlyBranch with {@code @git-strict}, the one ref the host takes from the views
 *                   ({@code refs/heads/NAME} of the branch checked out when the plan was made); null for all
 * @param netStack   the network stack's program that the launcher attaches to the sandbox
 *                   ({@link agentsandbox.core.host.NetStack}); null for the proxy, or no network
 * @param resolvConf the sandbox's /etc/resolv.conf with the stack, written to the run; null for the host's
 * @param sshAgent   with {@code --ssh-agent}, the relay between the sandbox and the caller's agent
 *                   ({@link SshAgentRelay}), started with the run; null without
 * @param allowHosts the network's allow-list ({@link agentsandbox.core.rules.HostPattern}) that this
 *                   run's proxy or DNS filter applies; empty for every host (or no network of its own)
 */
public record Plan(List<String> argv, List<Mount> mounts, Path runtimeDir, Path hiddenFile, List<String> notes,
        Path bwrap, Path guardSocket, Path tmpSource, List<String> spilledCommand, Path netSocket,
        List<Integer> hostPorts, ToolHomes.Setup homeSetup, Explanation explanation, Path checkedWorkDir, List<Path> gitViews, String gitOnlyBranch,
        Path netStack, String resolvConf, SshAgentRelay.Spec sshAgent, List<HomeViews.View> homeViews,
        boolean gitPresets, List<String> allowHosts) {

    public Plan {
        argv = List.copyOf(argv);
        spilledCommand = List.copyOf(spilledCommand);
        mounts = List.copyOf(mounts);
        notes = List.copyOf(notes);
        hostPorts = List.copyOf(hostPorts);
        gitViews = List.copyOf(gitViews);
        homeViews = List.copyOf(homeViews);
        allowHosts = allowHosts == null ? List.of() : List.copyOf(allowHosts);
    }

    /** A copy with another explanation (the CLI adds what it knows of the config files). */
    public Plan withExplanation(Explanation e) {
        return new Plan(argv, mounts, runtimeDir, hiddenFile, notes, bwrap, guardSocket, tmpSource, spilledCommand,
                netSocket, hostPorts, homeSetup, e, checkedWorkDir, gitViews, gitOnlyBranch, netStack, resolvConf, sshAgent, homeViews, gitPresets,
                allowHosts);
    }

    /** The command line as one shell-quoted line that can be pasted into a shell. */
    public String shellLine() {
        return ShellQuote.join(argv);
    }
}
