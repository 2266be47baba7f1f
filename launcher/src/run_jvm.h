// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher as the parent of the tool's JVM: it passes signals on, takes the tool's
 * status from a pipe, stops the JVM without its own exit and ends with that status.
 */
#ifndef AGENT_SANDBOX_RUN_JVM_H
#define AGENT_SANDBOX_RUN_JVM_H

#include <sys/types.h>

/* Runs java_argv as this process's child, the tool's status coming through status_pipe
 * (STATUS_PROPERTY), and ends as the tool ended; the starter (0: none) is stopped, or
 * waited for when it still removes the run's directories. */
__attribute__((noreturn))
void run_jvm(const char *java, char *const java_argv[], int status_pipe[2], pid_t starter);

#endif
