// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's own network stack: slirp4netns attached to the network namespace bwrap
 * makes, with the host's own addresses blocked inside it before the command runs.
 */
#ifndef AGENT_SANDBOX_NET_STACK_H
#define AGENT_SANDBOX_NET_STACK_H

/*
 * Called by the process about to become bwrap (exec_bwrap), after its stderr is the setup
 * log. When the environment names a stack (NET_STACK_VARIABLE, taken out of it), starts
 * the process that attaches the stack once bwrap has made the namespaces, adds bwrap's
 * --info-fd to its command line and NET_GATE_VARIABLE to env (in the place of the stack's
 * variable): the sandbox's first program waits on that gate until the stack is ready.
 * Returns the command line to exec (argv itself without a stack).
 */
char *const *attach_net_stack(char *const *argv, char **env);

#endif
