// SPDX-License-Identifier: Apache-2.0
/*
 * The wrapper of git (a rule of kind "git"): sends the guard the request
 * (GuardProtocol.java), answers its questions (a path resolved here, git run here) and
 * execs the real git or refuses.
 */
#ifndef AGENT_SANDBOX_GIT_GUARD_H
#define AGENT_SANDBOX_GIT_GUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "guard_client.h"
#include "wrapper.h"

/* Reads the parent process's command line: its words, NUL-separated, and their count. */
size_t parent_cmdline(pid_t parent, char *text, size_t capacity, size_t *length);

/*
 * Runs the real git with the TAB-separated arguments, in this process's directory and
 * environment, for at most GUARD_GIT_MILLIS: the answer is "<exit status> <output>",
 * status -1 when git gave none in time. Written into out (GUARD_MAX_GIT_OUTPUT + 32).
 */
void run_git_question(const char *real, char *arguments, char *out, size_t capacity);

/* Sends the request: the fields GuardProtocol.java reads. */
void send_request(const struct rule *rule, struct guard *g, int argc, char *argv[]);

/* Asks the guard, answers its questions, and execs the real git or refuses. */
__attribute__((noreturn))
void run_guarded(const struct rule *rule, int argc, char *argv[]);

#endif
