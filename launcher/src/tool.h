// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher as `agent-sandbox`, outside a sandbox or in one: answers `check` without
 * a JVM, refuses what the JVM cannot start from, finds the application directory and
 * starts the bundled Java running the command line tool (see run_jvm.h), the starter
 * forked beside it (starter.h).
 */
#ifndef AGENT_SANDBOX_TOOL_H
#define AGENT_SANDBOX_TOOL_H

/* `check`, `check -q`, `--check`, `--check -q`: nothing else takes the fast path. */
int is_check(int argc, char *argv[], int *quiet);

/* Whether a string is valid UTF-8 as Java decodes it: no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
int is_utf8(const char *text);

/* The launcher as `agent-sandbox`: answer `check`, or hand everything to Java. */
__attribute__((noreturn))
void run_tool(int argc, char *argv[]);

#endif
