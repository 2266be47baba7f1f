// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's first program: the launcher started as COMMAND_START, in place of the
 * command. It checks the mounts, gives the command the caller's stderr back, seals the
 * terminal and the keyrings, starts the helper and becomes the command.
 */
#ifndef AGENT_SANDBOX_COMMAND_START_H
#define AGENT_SANDBOX_COMMAND_START_H

/* The first program: from the mount checks to the exec of the command. */
__attribute__((noreturn))
void start_command(int argc, char *argv[]);

#endif
