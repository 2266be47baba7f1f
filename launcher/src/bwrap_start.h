// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher as bwrap's starter: bwrap with its setup messages going to a log file
 * and the caller's stderr kept for the command.
 */
#ifndef AGENT_SANDBOX_BWRAP_START_H
#define AGENT_SANDBOX_BWRAP_START_H

/* Becomes bwrap (execve, same pid) with its stderr on the file log_path, the caller's
 * stderr passed on at the descriptor STDERR_VARIABLE names, alive (-1: none) at the one
 * ALIVE_VARIABLE names, TERMINAL_VARIABLE set when terminal is not 0 (the sandbox's
 * terminal is the run's own pseudo-terminal), and the mounts' identities written beside
 * log_path. */
__attribute__((noreturn))
void exec_bwrap(const char *log_path, char *const bwrap_argv[], char *const env[], int alive, int terminal);

/* `agent-sandbox START_BWRAP LOG bwrap ...`: exec_bwrap for the tool. */
__attribute__((noreturn))
void start_bwrap(int argc, char *argv[]);

#endif
