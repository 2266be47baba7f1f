// SPDX-License-Identifier: Apache-2.0
/*
 * A program run to its end, its output taken: what the tool's JVM would otherwise do with the
 * JDK's process classes, which its startup cache does not hold (their first use loads and
 * sets them up, some 20 ms of an interpreted JVM on a small machine).
 */
#ifndef AGENT_SANDBOX_SPAWN_H
#define AGENT_SANDBOX_SPAWN_H

#include <stddef.h>

/* The program could not be started (why: errno), or did not end in time (killed). */
#define SPAWN_NOT_RUN (-1)
#define SPAWN_TIMED_OUT (-2)

/*
 * Runs argv (NULL-ended; argv[0] a path, or a name looked up in the PATH of env) with exactly
 * env (NULL-ended), in dir, stdin on /dev/null, stdout and stderr together into out (the first
 * capacity bytes kept in out, *used of them, the rest read and dropped), and waits for its
 * end, at most timeout_millis. Returns its exit status, 128 + the signal that ended it,
 * SPAWN_NOT_RUN (errno says why) or SPAWN_TIMED_OUT. Nothing else of the caller's reaches the
 * program: no other descriptor, no blocked or ignored signal.
 */
int spawn_and_wait(char *const argv[], char *const env[], const char *dir, long timeout_millis, char *out,
                   size_t capacity, size_t *used);

#endif
