// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's terminal: a pseudo-terminal of agent-sandbox's own between the
 * command and the caller's terminal, relayed by the starter through a filter.
 *
 * When the caller's stdin, stdout or stderr is a terminal, the sandbox never gets that
 * terminal: each of those descriptors becomes the slave side of a new pseudo-terminal,
 * which the sandbox's first program makes its controlling terminal (a session of its
 * own). The starter copies keys in and output out. Output goes through term_filter:
 * what draws (text, colours, cursor movement, the alternate screen, mouse and paste
 * modes) passes; what makes the terminal act beyond the screen or answer with words
 * the sandbox chose (clipboard writes, titles, window operations, device strings,
 * answerback) is dropped. Queries whose answer is the terminal's own fixed words
 * (device attributes, cursor position, version, modes, colours) pass, because TUIs
 * wait for them; when the sandbox ends, the starter asks the terminal once more and
 * reads everything up to that answer, so no answer is left for the caller's shell.
 * A mode the sandbox turned on that makes the terminal send input (mouse, focus,
 * keyboard protocols) is turned off again at the end.
 *
 * Descriptors that are not terminals stay the caller's own, as before.
 */
#ifndef AGENT_SANDBOX_TERM_RELAY_H
#define AGENT_SANDBOX_TERM_RELAY_H

#include <stddef.h>
#include <sys/types.h>

/* The longest escape sequence kept whole to be judged; longer ones are dropped. */
#define TERM_FILTER_MAX 4096

/* The output filter's state across reads. */
struct term_filter {
    int state;
    size_t length;
    int overflow;
    int utf8_left;
    unsigned char utf8_low;  /* the range of the next continuation byte (the first one after a */
    unsigned char utf8_high; /* lead byte is narrower: no overlong form, surrogate or beyond U+10FFFF) */
    unsigned long modes;     /* tracked private modes the sandbox set, one bit each */
    int keyboard_pushes;     /* kitty keyboard protocol levels pushed */
    int modify_keys;         /* xterm modifyOtherKeys/modifyCursorKeys changed */
    long da1_queries;        /* primary device attribute queries passed */
    int answers_possible;    /* a query passed or an input-generating mode was set */
    unsigned char sequence[TERM_FILTER_MAX];
};

/* Filters n bytes of the sandbox's output into out (room for n + TERM_FILTER_MAX + 8);
 * returns how many bytes to write. */
size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out);

/* The bytes that turn off what the sandbox left on (at most 256); returns their count. */
size_t term_filter_reset(const struct term_filter *f, unsigned char *out, size_t capacity);

/* Counts primary device attribute answers (ESC [ ? ... c) in the terminal's input. */
struct term_answers {
    int state;
    long seen;
};
void term_answers_scan(struct term_answers *a, const unsigned char *in, size_t n);

/* The relay of one run. */
struct term_relay {
    int active;
    int master;
    int slave;
    int in;          /* the caller's terminal to read keys from, or -1 */
    int out;         /* the caller's terminal to write to */
    int on_tty[3];   /* which of 0, 1, 2 are terminals (and get the slave) */
};

/* Before the fork: whether any of 0, 1, 2 is a terminal and, if so, the pseudo-terminal
 * opened and set up like the caller's. 0 when there is nothing to relay or the relay is
 * ready, -1 with a reason. */
int term_relay_prepare(struct term_relay *r, char *reason, size_t capacity);

/* In the child, before bwrap: the slave on each descriptor that was a terminal. */
void term_relay_child(struct term_relay *r);

/* In the starter: relays until the child (bwrap) has ended (without reaping it), then
 * gives the caller's terminal back as it was, without a pending answer. */
void term_relay_run(struct term_relay *r, pid_t child);

/* From a signal handler: the caller's terminal back as it was (async-signal-safe). */
void term_relay_restore(void);

#endif
