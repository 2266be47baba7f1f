// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's terminal: see term_relay.h.
 */
#define _GNU_SOURCE

#include "term_relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "util.h"

/* ---- the output filter ---- */

enum {
    GROUND,
    ESCAPE,         /* after ESC */
    ESCAPE_MORE,    /* ESC and intermediates: ESC ( B, ESC # 8 */
    CSI,            /* ESC [ ... */
    OSC,            /* ESC ] ... */
    OSC_ESCAPE,     /* ESC inside an OSC: ST or the start of another sequence */
    STRING,         /* DCS, APC, PM, SOS: dropped up to ST */
    STRING_ESCAPE,
    LEAD_C2         /* 0xC2, which starts the UTF-8 form of a C1 control */
};

/* Private modes followed so that what the sandbox left on is turned off at the end:
 * cursor keys, mouse reports, focus reports, bracketed paste, the alternate screen,
 * synchronized output; 25 (cursor shown) is followed the other way round. */
static const int TRACKED[] = {1, 9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 2004, 47, 1047, 1049,
                              2026, 25};
#define TRACKED_COUNT (sizeof TRACKED / sizeof TRACKED[0])
/* the modes whose reports come as input, and so may still be on their way at the end */
static int reports_input(int mode)
{
    return mode == 9 || (mode >= 1000 && mode <= 1006) || mode == 1015 || mode == 1016;
}

static size_t put(unsigned char *out, size_t at, const unsigned char *bytes, size_t n)
{
    memcpy(out + at, bytes, n);
    return at + n;
}

/* A private mode set (h) or reset (l): followed when it is one of TRACKED. */
static void follow_modes(struct term_filter *f, const unsigned char *params, size_t n, int set)
{
    long value = 0;
    int digits = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && params[i] >= '0' && params[i] <= '9') {
            if (value < 100000) {
                value = value * 10 + (params[i] - '0');
            }
            digits = 1;
            continue;
        }
        if (digits) {
            for (size_t t = 0; t < TRACKED_COUNT; t++) {
                if (TRACKED[t] == value) {
                    int on = TRACKED[t] == 25 ? !set : set;
                    if (on) {
                        f->modes |= 1UL << t;
                        if (reports_input(TRACKED[t])) {
                            f->answers_possible = 1;
                        }
                    } else {
                        f->modes &= ~(1UL << t);
                    }
                }
            }
        }
        value = 0;
        digits = 0;
    }
}

/* Whether every parameter of an ANSI mode set or reset is 4 or 20. */
static int ansi_modes_pass(const unsigned char *params, size_t n)
{
    long v = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && params[i] >= '0' && params[i] <= '9') {
            v = v < 100000 ? v * 10 + (params[i] - '0') : v;
            continue;
        }
        if (v != 4 && v != 20) {
            return 0;
        }
        v = 0;
    }
    return 1;
}

/* The private modes a sandbox may set and reset: those whose reports come as input are
 * TRACKED (and turned off at the end); the others only change how the terminal draws or
 * what keys send. Any other (VT52 mode 2, in-band resize reports 2048, palette reports 2031,
 * the next terminal's new ones) is dropped with its sequence. */
static const int PRIVATE_MODES[] = {3, 4, 5, 6, 7, 8, 12, 1007, 1034, 1035, 1036, 1037, 1039, 1042, 1043, 1048};

/* Whether every parameter of a private mode set or reset is one a sandbox may set. */
static int private_modes_pass(const unsigned char *params, size_t n)
{
    long v = 0;
    int digits = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && params[i] >= '0' && params[i] <= '9') {
            v = v < 100000 ? v * 10 + (params[i] - '0') : v;
            digits = 1;
            continue;
        }
        if (!digits) {
            return 0;
        }
        int known = 0;
        for (size_t t = 0; t < TRACKED_COUNT && !known; t++) {
            known = TRACKED[t] == v;
        }
        for (size_t t = 0; t < sizeof PRIVATE_MODES / sizeof PRIVATE_MODES[0] && !known; t++) {
            known = PRIVATE_MODES[t] == v;
        }
        if (!known) {
            return 0;
        }
        v = 0;
        digits = 0;
    }
    return 1;
}

/* Whether a whole control sequence ESC [ ... final passes; follows modes and queries. */
static int csi_passes(struct term_filter *f)
{
    const unsigned char *s = f->sequence;
    size_t n = f->length;
    unsigned char final = s[n - 1];
    unsigned char marker = 0;
    size_t start = 2;
    if (n > 3 && (s[2] == '<' || s[2] == '=' || s[2] == '>' || s[2] == '?')) {
        marker = s[2];
        start = 3;
    }
    unsigned char intermediate = 0;
    int intermediates = 0;
    size_t params_end = start;
    int params_empty_or_zero = 1;
    for (size_t i = start; i + 1 < n; i++) {
        if (s[i] >= 0x20 && s[i] <= 0x2f) {
            intermediate = s[i];
            intermediates++;
        } else if (intermediates > 0) {
            return 0; /* a parameter after an intermediate: not a sequence of any terminal */
        } else {
            params_end = i + 1;
            if (s[i] < 0x30 || s[i] > 0x3f || s[i] == '<' || s[i] == '=' || s[i] == '>' || s[i] == '?') {
                return 0;
            }
            if (s[i] != '0') {
                params_empty_or_zero = 0;
            }
        }
    }
    if (intermediates > 1) {
        return 0;
    }
    if (intermediates == 1) {
        if (marker == 0 && intermediate == ' ' && (final == 'q' || final == '@' || final == 'A')) {
            return 1; /* cursor style, scroll left and right */
        }
        if (marker == 0 && intermediate == '!' && final == 'p') {
            return 1; /* soft reset */
        }
        if (marker == 0 && intermediate == '"' && final == 'q') {
            return 1; /* character protection; not the conformance level (" p), which can turn on 8-bit controls */
        }
        if ((marker == 0 || marker == '?') && intermediate == '$' && final == 'p') {
            f->answers_possible = 1; /* a mode's state asked (DECRQM): a fixed answer */
            return 1;
        }
        return 0;
    }
    switch (marker) {
    case 0:
        if (final == 'c') {
            f->answers_possible = 1;
            if (params_empty_or_zero) {
                f->da1_queries++;
            }
            return 1;
        }
        if (final == 'n') {
            f->answers_possible = 1; /* status and cursor position reports */
            return 1;
        }
        if (final == 'h' || final == 'l') {
            /* only insert mode (4) and new-line mode (20): not the keyboard lock (2) or
             * the terminal's own echo (12) */
            return ansi_modes_pass(s + start, params_end - start);
        }
        /* drawing and editing; t (window operations, title reports), x (terminal
         * parameters report), i (printing), y, w, z, |, }, ~ and the rest are not passed */
        return strchr("@ABCDEFGHIJKLMPSTXZ`abdefgmqrsu", final) != NULL;
    case '?':
        if (final == 'h' || final == 'l') {
            /* not mode 2: VT52 mode would leave the caller's terminal speaking another
             * language, and this filter behind */
            if (!private_modes_pass(s + start, params_end - start)) {
                return 0;
            }
            follow_modes(f, s + start, params_end - start, final == 'h');
            return 1;
        }
        if (final == 'n' || final == 'u' || final == 'm') {
            f->answers_possible = 1; /* cursor position, keyboard flags, key modifiers asked */
            return 1;
        }
        return final == 's' || final == 'r' || final == 'J' || final == 'K';
    case '>':
        if (final == 'c' || final == 'q') {
            f->answers_possible = 1; /* secondary attributes, version (XTVERSION) */
            return 1;
        }
        if (final == 'u') {
            f->keyboard_pushes++;
            f->answers_possible = 1;
            return 1;
        }
        if (final == 'm' || final == 'n') {
            f->modify_keys = 1;
            return 1;
        }
        return final == 'p';
    case '<':
        if (final == 'u') {
            long count = 0;
            for (size_t i = start; i < params_end; i++) {
                if (s[i] >= '0' && s[i] <= '9' && count < 1000) {
                    count = count * 10 + (s[i] - '0');
                }
            }
            f->keyboard_pushes -= params_end == start ? 1 : (int)count;
            if (f->keyboard_pushes < 0) {
                f->keyboard_pushes = 0;
            }
            return 1;
        }
        return 0;
    case '=':
        if (final == 'c') {
            f->answers_possible = 1;
            return 1;
        }
        if (final == 'u') {
            f->keyboard_pushes += f->keyboard_pushes == 0;
            f->answers_possible = 1;
            return 1;
        }
        return 0;
    default:
        return 0;
    }
}

/* Whether a whole OSC passes: hyperlinks (8), colours set, asked and reset (4, 10-19,
 * 104, 110-119), prompt marks (133). Titles (0, 1, 2), the clipboard (52), the working
 * directory (7), notifications (9, 777), fonts (50) and every other are dropped. */
static int osc_passes(struct term_filter *f)
{
    long number = 0;
    size_t i = 2;
    for (; i < f->length && f->sequence[i] >= '0' && f->sequence[i] <= '9' && i < 8; i++) {
        number = number * 10 + (f->sequence[i] - '0');
    }
    if (i == 2 || (i < f->length && f->sequence[i] != ';' && f->sequence[i] != 0x07 && f->sequence[i] != 0x1b)) {
        return 0;
    }
    /* only printable ASCII up to the terminator: nothing a terminal could take for the
     * end of the string (a C1 ST, raw or in UTF-8) before the filter does */
    for (size_t k = 2; k < f->length; k++) {
        unsigned char b = f->sequence[k];
        int terminator = k + 1 == f->length || (k + 2 == f->length && b == 0x1b);
        if (!terminator && (b < 0x20 || b >= 0x7f)) {
            return 0;
        }
    }
    int colour = number == 4 || (number >= 10 && number <= 19) || number == 104 || (number >= 110 && number <= 119);
    if (colour) {
        for (size_t k = i; k < f->length; k++) {
            if (f->sequence[k] == '?') {
                f->answers_possible = 1;
            }
        }
    }
    return colour || number == 8 || number == 133;
}

size_t term_filter(struct term_filter *f, const unsigned char *in, size_t n, unsigned char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        switch (f->state) {
        case LEAD_C2:
            f->state = GROUND;
            if (c >= 0x80 && c <= 0x9f) {
                continue; /* a C1 control written in UTF-8: dropped with its lead byte */
            }
            out[o++] = 0xc2;
            if (c >= 0xa0 && c <= 0xbf) {
                out[o++] = c;
                continue;
            }
            break; /* c is taken as in GROUND below */
        case GROUND:
            break;
        case ESCAPE:
        case ESCAPE_MORE:
        case CSI:
        case OSC:
        case OSC_ESCAPE:
        case STRING:
        case STRING_ESCAPE:
            goto in_sequence;
        default:
            f->state = GROUND;
            break;
        }
        /* GROUND */
        if (c == 0x1b) {
            f->state = ESCAPE;
            f->sequence[0] = c;
            f->length = 1;
            f->overflow = 0;
            f->utf8_left = 0;
            continue;
        }
        if (c == 0x05) {
            continue; /* ENQ: the terminal would send its answerback */
        }
        if (c < 0x80) {
            f->utf8_left = 0;
            out[o++] = c;
            continue;
        }
        if (c <= 0xbf) {
            if (f->utf8_left > 0 && c >= f->utf8_low && c <= f->utf8_high) {
                f->utf8_left--;
                f->utf8_low = 0x80;
                f->utf8_high = 0xbf;
                out[o++] = c;
            } else {
                /* a byte no UTF-8 decoder takes here ends the character; a lone 0x80-0x9f is
                 * an 8-bit C1 control to a terminal not (or no longer) in UTF-8: dropped */
                f->utf8_left = 0;
                if (c >= 0xa0) {
                    out[o++] = c;
                }
            }
            continue;
        }
        if (c == 0xc2) {
            f->state = LEAD_C2;
            f->utf8_left = 0;
            continue;
        }
        if (c < 0xc2 || c > 0xf4) {
            f->utf8_left = 0; /* no UTF-8 character starts so: dropped */
            continue;
        }
        /* the first continuation's range as UTF-8 has it (RFC 3629): none of the bytes
         * 0x80-0x9f that an overlong form or a surrogate would need passes after E0, F0, F4 */
        f->utf8_left = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
        f->utf8_low = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        f->utf8_high = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        out[o++] = c;
        continue;

    in_sequence:
        /* C0 controls act in the middle of a sequence as outside it (except in strings);
         * CAN and SUB cancel it */
        if (c == 0x18 || c == 0x1a) {
            f->state = GROUND;
            out[o++] = c;
            continue;
        }
        if (f->state == STRING || f->state == STRING_ESCAPE) {
            if (f->state == STRING_ESCAPE && c == '\\') {
                f->state = GROUND;
            } else {
                f->state = c == 0x1b ? STRING_ESCAPE : STRING;
            }
            continue;
        }
        if (f->state == OSC || f->state == OSC_ESCAPE) {
            int end = (f->state == OSC && c == 0x07) || (f->state == OSC_ESCAPE && c == '\\');
            if (f->state == OSC_ESCAPE && !end) {
                /* ESC ended the OSC unfinished, and starts another sequence */
                f->state = ESCAPE;
                f->sequence[0] = 0x1b;
                f->length = 1;
                f->overflow = 0;
                i--;
                continue;
            }
            if (f->length < TERM_FILTER_MAX) {
                f->sequence[f->length++] = c;
            } else {
                f->overflow = 1;
            }
            if (end) {
                f->state = GROUND;
                if (!f->overflow && osc_passes(f)) {
                    o = put(out, o, f->sequence, f->length);
                }
            } else if (c == 0x1b) {
                f->state = OSC_ESCAPE;
            }
            continue;
        }
        if (c == 0x1b) {
            f->state = ESCAPE; /* an unfinished sequence dropped, another begins */
            f->sequence[0] = c;
            f->length = 1;
            f->overflow = 0;
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            if (c != 0x05 && c != 0x7f) {
                out[o++] = c;
            }
            continue;
        }
        if (c >= 0x80) {
            f->state = GROUND; /* not part of any sequence: the sequence is dropped */
            i--;
            continue;
        }
        if (f->length < TERM_FILTER_MAX) {
            f->sequence[f->length++] = c;
        } else {
            f->overflow = 1;
        }
        if (f->state == ESCAPE) {
            if (c == '[') {
                f->state = CSI;
            } else if (c == ']') {
                f->state = OSC;
            } else if (c == 'P' || c == '_' || c == '^' || c == 'X' || c == 'k') {
                /* device control strings (and tmux's passthrough), application and private
                 * messages, screen's and tmux's window names (ESC k) */
                f->state = STRING;
            } else if (c >= 0x20 && c <= 0x2f) {
                f->state = ESCAPE_MORE;
            } else {
                f->state = GROUND;
                if (c != 'Z') { /* ESC Z asks for the terminal's identity */
                    o = put(out, o, f->sequence, f->length);
                }
            }
            continue;
        }
        if (f->state == ESCAPE_MORE) {
            if (c >= 0x30) {
                f->state = GROUND;
                /* character sets (ESC ( B), line sizes and alignment (ESC # 8); not ESC SP G,
                 * which would make the terminal answer in 8-bit controls, nor ESC % @, which
                 * takes it out of UTF-8, where a lone 0x9d starts an OSC */
                if (!f->overflow && f->length <= 8 && strchr("()*+-./#", f->sequence[1]) != NULL) {
                    o = put(out, o, f->sequence, f->length);
                }
            }
            continue;
        }
        /* CSI */
        if (c >= 0x40 && c <= 0x7e) {
            f->state = GROUND;
            if (!f->overflow && f->length <= 256 && csi_passes(f)) {
                o = put(out, o, f->sequence, f->length);
            }
        }
    }
    return o;
}

size_t term_filter_reset(const struct term_filter *f, unsigned char *out, size_t capacity)
{
    size_t o = 0;
    char piece[32];
    for (size_t t = 0; t < TRACKED_COUNT; t++) {
        if (f->modes & (1UL << t)) {
            int n = snprintf(piece, sizeof piece, "\033[?%d%c", TRACKED[t], TRACKED[t] == 25 ? 'h' : 'l');
            if (n > 0 && o + (size_t)n <= capacity) {
                o = put(out, o, (const unsigned char *)piece, (size_t)n);
            }
        }
    }
    if (f->keyboard_pushes > 0) {
        int n = snprintf(piece, sizeof piece, "\033[<%du", f->keyboard_pushes > 99 ? 99 : f->keyboard_pushes);
        if (n > 0 && o + (size_t)n <= capacity) {
            o = put(out, o, (const unsigned char *)piece, (size_t)n);
        }
    }
    if (f->modify_keys && o + 4 <= capacity) {
        o = put(out, o, (const unsigned char *)"\033[>m", 4);
    }
    return o;
}

void term_answers_scan(struct term_answers *a, const unsigned char *in, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = in[i];
        switch (a->state) {
        case 1:
            a->state = c == '[' ? 2 : c == 0x1b ? 1 : 0;
            break;
        case 2:
            a->state = c == '?' ? 3 : c == 0x1b ? 1 : 0;
            break;
        case 3:
            if (c == 'c') {
                a->seen++;
                a->state = 0;
            } else if (!((c >= '0' && c <= '9') || c == ';')) {
                a->state = c == 0x1b ? 1 : 0;
            }
            break;
        default:
            a->state = c == 0x1b ? 1 : 0;
            break;
        }
    }
}

/* ---- the relay ---- */

/* The caller's terminal as it was, for term_relay_restore. */
static struct termios relay_saved;
static volatile sig_atomic_t relay_saved_fd = -1;
static volatile sig_atomic_t relay_raw;
static int relay_signals[2] = {-1, -1};

static void relay_on_signal(int signal_number)
{
    int saved = errno;
    unsigned char byte = (unsigned char)signal_number;
    if (relay_signals[1] >= 0 && write(relay_signals[1], &byte, 1) < 0) {
        /* the pipe is full: a wake-up is pending anyway */
    }
    errno = saved;
}

void term_relay_restore(void)
{
    if (relay_raw && relay_saved_fd >= 0) {
        tcsetattr(relay_saved_fd, TCSANOW, &relay_saved);
        relay_raw = 0;
    }
}

static int foreground(int fd)
{
    pid_t group = tcgetpgrp(fd);
    return group > 0 && group == getpgrp();
}

static void make_raw(struct term_relay *r)
{
    if (r->in < 0 || relay_raw || !foreground(r->in)) {
        return;
    }
    struct termios raw = relay_saved;
    cfmakeraw(&raw);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    if (tcsetattr(r->in, TCSANOW, &raw) == 0) {
        relay_raw = 1;
    }
}

static void copy_size(struct term_relay *r)
{
    struct winsize size;
    if (ioctl(r->out, TIOCGWINSZ, &size) == 0 || (r->in >= 0 && ioctl(r->in, TIOCGWINSZ, &size) == 0)) {
        ioctl(r->master, TIOCSWINSZ, &size);
    }
}

int term_relay_prepare(struct term_relay *r, char *reason, size_t capacity)
{
    memset(r, 0, sizeof *r);
    r->master = r->slave = r->in = r->out = -1;
    int any = -1;
    for (int fd = 2; fd >= 0; fd--) {
        r->on_tty[fd] = isatty(fd);
        if (r->on_tty[fd]) {
            any = fd;
        }
    }
    if (any < 0) {
        return 0;
    }
    r->in = r->on_tty[0] ? 0 : -1;
    r->out = r->on_tty[1] ? 1 : r->on_tty[2] ? 2 : 0;
    int model = r->in >= 0 ? r->in : r->out;
    r->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    const char *name = NULL;
    if (r->master < 0 || grantpt(r->master) != 0 || unlockpt(r->master) != 0 ||
        (name = ptsname(r->master)) == NULL) {
        snprintf(reason, capacity, "cannot give the sandbox a terminal of its own (%s): run it with stdin,"
                 " stdout and stderr redirected from and to files or pipes, or free a pseudo-terminal",
                 strerror(errno));
        if (r->master >= 0) {
            close(r->master);
        }
        return -1;
    }
    r->slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (r->slave < 0) {
        snprintf(reason, capacity, "cannot open the sandbox's terminal %s (%s): run it with stdin, stdout and"
                 " stderr redirected from and to files or pipes", name, strerror(errno));
        close(r->master);
        return -1;
    }
    struct termios mode;
    if (tcgetattr(model, &mode) == 0) {
        relay_saved = mode;
        relay_saved_fd = model;
        tcsetattr(r->slave, TCSANOW, &mode);
    }
    struct winsize size;
    if (ioctl(r->out, TIOCGWINSZ, &size) == 0 || ioctl(model, TIOCGWINSZ, &size) == 0) {
        ioctl(r->slave, TIOCSWINSZ, &size);
    }
    if (pipe2(relay_signals, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(reason, capacity, "cannot relay the sandbox's terminal: %s", strerror(errno));
        close(r->master);
        close(r->slave);
        return -1;
    }
    struct sigaction wake;
    memset(&wake, 0, sizeof wake);
    wake.sa_handler = relay_on_signal;
    sigemptyset(&wake.sa_mask);
    wake.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &wake, NULL);
    sigaction(SIGWINCH, &wake, NULL);
    sigaction(SIGCONT, &wake, NULL);
    r->active = 1;
    return 0;
}

void term_relay_child(struct term_relay *r)
{
    if (!r->active) {
        return;
    }
    for (int fd = 0; fd < 3; fd++) {
        if (r->on_tty[fd] && dup2(r->slave, fd) < 0) {
            die("cannot give the sandbox its terminal: %s", strerror(errno));
        }
    }
    close(r->slave);
    close(r->master);
    close(relay_signals[0]);
    close(relay_signals[1]);
}

/* The process group in the foreground of the sandbox's terminal, when it is stopped; else -1. */
static pid_t stopped_group(int master)
{
    pid_t group = -1;
    if (ioctl(master, TIOCGPGRP, &group) != 0 || group <= 0) {
        return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)group);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    char text[512];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) {
        return -1;
    }
    text[n] = '\0';
    char *end = strrchr(text, ')');
    return end != NULL && end[1] == ' ' && (end[2] == 'T' || end[2] == 't') ? group : -1;
}

/* Whether the keys hold the suspend character: the caller's, or the sandbox's terminal's. */
static int holds_suspend(int master, const unsigned char *keys, size_t length)
{
    unsigned char own = relay_saved.c_cc[VSUSP];
    struct termios inner;
    unsigned char theirs = tcgetattr(master, &inner) == 0 ? inner.c_cc[VSUSP] : own;
    for (size_t i = 0; i < length; i++) {
        if ((keys[i] == own || keys[i] == theirs) && keys[i] != _POSIX_VDISABLE) {
            return 1;
        }
    }
    return 0;
}

static int ended(pid_t child)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    return waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == child;
}

/* What the sandbox wrote, filtered, to the caller's terminal; 0 at its end (EIO). */
static int relay_output(struct term_relay *r, struct term_filter *f)
{
    static unsigned char buffer[65536];
    static unsigned char filtered[65536 + TERM_FILTER_MAX + 8];
    ssize_t n = read(r->master, buffer, sizeof buffer);
    if (n <= 0) {
        return n < 0 && (errno == EAGAIN || errno == EINTR) ? 1 : 0;
    }
    size_t length = term_filter(f, buffer, (size_t)n, filtered);
    if (length > 0 && write_all(r->out, (const char *)filtered, length) != 0) {
        /* the caller's terminal is gone: what the sandbox writes goes nowhere */
    }
    return 1;
}

void term_relay_run(struct term_relay *r, pid_t child)
{
    if (!r->active) {
        return;
    }
    close(r->slave);
    r->slave = -1;
    int flags = fcntl(r->master, F_GETFL);
    fcntl(r->master, F_SETFL, flags | O_NONBLOCK);
    static struct term_filter filter;
    struct term_answers answers;
    memset(&answers, 0, sizeof answers);
    make_raw(r);
    static unsigned char keys[4096];
    size_t keys_length = 0;
    size_t keys_sent = 0;
    int input_open = r->in >= 0;
    long watch_until = 0;
    for (;;) {
        struct pollfd fds[3];
        fds[0].fd = relay_signals[0];
        fds[0].events = POLLIN;
        fds[1].fd = r->master;
        fds[1].events = (short)(POLLIN | (keys_sent < keys_length ? POLLOUT : 0));
        fds[2].fd = input_open && relay_raw && keys_sent == keys_length ? r->in : -1;
        fds[2].events = POLLIN;
        int ready = poll(fds, 3, watch_until > 0 ? 20 : -1);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready > 0 && (fds[0].revents & POLLIN)) {
            unsigned char signals[64];
            ssize_t n = read(relay_signals[0], signals, sizeof signals);
            for (ssize_t k = 0; k < n; k++) {
                if (signals[k] == SIGWINCH) {
                    copy_size(r);
                } else if (signals[k] == SIGCONT) {
                    /* fg after a Ctrl-Z: the terminal raw again, the sandbox's job going on */
                    make_raw(r);
                    copy_size(r);
                    pid_t group = -1;
                    if (ioctl(r->master, TIOCGPGRP, &group) == 0 && group > 0) {
                        kill(-group, SIGCONT);
                    }
                }
            }
            if (ended(child)) {
                break;
            }
        }
        if (ready > 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            if (!relay_output(r, &filter) && ended(child)) {
                break;
            }
            if ((fds[1].revents & POLLHUP) && !(fds[1].revents & POLLIN)) {
                /* no slave open: nothing to read until the sandbox ends */
                if (ended(child)) {
                    break;
                }
                poll(fds, 1, 50);
            }
        }
        if (ready > 0 && (fds[1].revents & POLLOUT) && keys_sent < keys_length) {
            ssize_t n = write(r->master, keys + keys_sent, keys_length - keys_sent);
            if (n > 0) {
                keys_sent += (size_t)n;
            }
        }
        if (ready > 0 && fds[2].fd >= 0 && (fds[2].revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t n = read(r->in, keys, sizeof keys);
            if (n <= 0) {
                if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                    input_open = 0; /* the terminal is gone */
                }
            } else {
                keys_length = (size_t)n;
                keys_sent = 0;
                term_answers_scan(&answers, keys, keys_length);
                if (holds_suspend(r->master, keys, keys_length)) {
                    watch_until = now_millis() + 1000;
                }
                ssize_t w = write(r->master, keys, keys_length);
                if (w > 0) {
                    keys_sent = (size_t)w;
                }
            }
        }
        if (watch_until > 0) {
            /*
             * Ctrl-Z, as before: when the sandbox's foreground job stops (its terminal's
             * SIGTSTP, or a program such as vim stopping itself), what it wrote last is
             * shown, the caller's terminal is given back as it was, and the caller's job
             * stops too, so the shell shows it stopped; fg (SIGCONT) continues both.
             */
            if (stopped_group(r->master) > 0) {
                watch_until = 0;
                while (relay_output(r, &filter)) {
                    struct pollfd more = {r->master, POLLIN, 0};
                    if (poll(&more, 1, 20) <= 0 || (more.revents & POLLIN) == 0) {
                        break;
                    }
                }
                term_relay_restore();
                kill(0, SIGTSTP);
            } else if (now_millis() > watch_until) {
                watch_until = 0;
            }
        }
    }
    /* what the sandbox wrote last */
    while (relay_output(r, &filter)) {
        struct pollfd more = {r->master, POLLIN, 0};
        if (poll(&more, 1, 0) <= 0 || (more.revents & POLLIN) == 0) {
            break;
        }
    }
    unsigned char reset[256];
    size_t length = term_filter_reset(&filter, reset, sizeof reset);
    if (length > 0) {
        write_all(r->out, (const char *)reset, length);
    }
    /* No answer to the sandbox's questions is left for the caller's shell: the
     * terminal is asked for its attributes once more, and what it sends up to that
     * answer (answers come in order) is read and dropped. */
    if (filter.answers_possible && r->in >= 0 && relay_raw && input_open) {
        long wanted = filter.da1_queries + 1;
        if (write_all(r->out, "\033[c", 3) == 0) {
            long deadline = now_millis() + 500;
            while (answers.seen < wanted) {
                long left = deadline - now_millis();
                struct pollfd key = {r->in, POLLIN, 0};
                if (left <= 0 || poll(&key, 1, (int)left) <= 0) {
                    break;
                }
                ssize_t n = read(r->in, keys, sizeof keys);
                if (n <= 0) {
                    break;
                }
                term_answers_scan(&answers, keys, (size_t)n);
            }
        }
    }
    term_relay_restore();
    close(r->master);
    r->master = -1;
    signal(SIGWINCH, SIG_DFL);
    signal(SIGCONT, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
}
