// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's own network stack: slirp4netns attached to a network namespace made for the
 * sandbox before bwrap starts, with the host's own addresses blocked inside it before the
 * command runs.
 */
#ifndef AGENT_SANDBOX_NET_STACK_H
#define AGENT_SANDBOX_NET_STACK_H

#include <stddef.h>

/*
 * Starts the stack for the coming run: the holder, a child (dying with this process) that
 * makes the sandbox's user and network namespaces, blocks the host's addresses in them,
 * attaches slirp4netns (stack, by its absolute path) and, with an allow-list (allow, "" for
 * none), serves as the DNS filter. The starter calls it as soon as the tool knows the run's
 * network, before bwrap starts; attach_net_stack calls it otherwise. 0, or -1 with why.
 */
int net_stack_start(const char *stack, const char *allow, char *why, size_t why_size);

/* In a process that does not become bwrap: closes the ends of the started stack that the
 * process that does inherited. */
void net_stack_forget(void);

/* Ends the started stack's processes (bwrap has ended). */
void net_stack_stop(void);

/*
 * bwrap's command line for the holder's namespaces: argv with its --unshare-all (among the
 * leading flags that take no value) in the place of --cap-drop ALL and all that --unshare-all
 * means but --unshare-net (any leading --unshare-net gone too). NULL when argv has no such
 * --unshare-all.
 */
char **net_stack_argv(char *const *argv);

/*
 * Called by the process about to become bwrap (exec_bwrap), after its stderr is the setup
 * log (log). When the environment names a stack (NET_STACK_VARIABLE, taken out of it with
 * NET_ALLOW_VARIABLE and NET_REFUSED_VARIABLE), starts it unless it was started for this
 * run already, tells the holder this pid, log and the record of refused names, and enters
 * the holder's namespaces; NET_GATE_VARIABLE goes into env in the place of the stack's
 * variable (the sandbox's first program waits on that gate until the stack is ready).
 * Returns the command line to exec: argv itself without a stack; with one, net_stack_argv's
 * (bwrap runs as root of the holder's user namespace, and would keep every capability).
 */
char *const *attach_net_stack(char *const *argv, char **env, const char *log);

#endif
