// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's helper beside the command, started by its first program: the network's
 * forwarder to the host and the watch that ends the sandbox with the run.
 */
#ifndef AGENT_SANDBOX_NET_HELPER_H
#define AGENT_SANDBOX_NET_HELPER_H

/* Starts the sandbox's helper (serve_helper) when there is work for it: the network's
 * listeners (NET_LISTEN exists when the sandbox has the network on), the watch of `alive`. */
void start_helper(int alive);

#endif
