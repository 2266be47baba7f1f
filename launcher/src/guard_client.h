// SPDX-License-Identifier: Apache-2.0
/*
 * One conversation with the git guard: over its Unix socket, or, where Unix sockets
 * are forbidden, over pipes to the in-sandbox guard (GuardFallback); the request
 * collected and sent in one write, the answer read line by line against a deadline.
 */
#ifndef AGENT_SANDBOX_GUARD_CLIENT_H
#define AGENT_SANDBOX_GUARD_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

#include "guard.h"
#include "wrapper.h"

/* One conversation with the guard: over its socket, or over pipes to the in-sandbox guard. */
struct guard {
    int in;         /* read the guard's questions and answer here */
    int out;        /* send the request and answers here */
    pid_t helper;   /* the in-sandbox guard's JVM, or 0 */
    long deadline;  /* CLOCK_MONOTONIC milliseconds by which the answer must have come */
    char buffer[4096];
    size_t start;
    size_t end;
    /* what is to be sent, collected so that a request leaves in one write: every
     * write wakes the guard's host side, and every wake-up costs a round of its work */
    char pending[16384];
    size_t pending_length;
};

/* Says the guard is unavailable, and why, and that the command is refused; exits 1. */
__attribute__((format(printf, 2, 3), noreturn))
void guard_refuses(const struct rule *rule, const char *format, ...);

/* Sends what was collected. */
void flush_guard(const struct rule *rule, struct guard *g);

/* Collects bytes to send; they leave with flush_guard (or earlier, when many). */
void send_bytes(const struct rule *rule, struct guard *g, const char *data, size_t length);

/* Collects a NUL-ended field. */
void send_field(const struct rule *rule, struct guard *g, const char *text);

/* Collects a count as a decimal field. */
void send_count(const struct rule *rule, struct guard *g, size_t count);

/* Reads one '\n'-terminated line from the guard; 0 at end of stream. */
int read_line(const struct rule *rule, struct guard *g, char line[GUARD_MAX_LINE]);

/* Whether an error from socket() or connect() means Unix sockets are forbidden here
 * (an agent's own sandbox), rather than that the guard is missing. */
int sockets_forbidden(int error);

/* Reports a call of a blocked command to the guard's host side, for the denial log: best
 * effort, silent, within GUARD_REPORT_MILLIS; nothing when the sandbox has no guard socket. */
void report_blocked(const struct rule *rule, int argc, char *argv[]);

/* Ends the in-sandbox guard, if any, and closes the conversation. */
void end_guard(struct guard *g);

#endif
