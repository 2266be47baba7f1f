// SPDX-License-Identifier: Apache-2.0
/*
 * The conversation with the git guard: see guard_client.h.
 */
#define _GNU_SOURCE

#include "guard_client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "util.h"

__attribute__((format(printf, 2, 3), noreturn))
void guard_refuses(const struct rule *rule, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, PROGRAM ": %s guard unavailable (", rule->name);
    vfprintf(stderr, format, args);
    fprintf(stderr, "); refusing to run %s\n", rule->name);
    va_end(args);
    exit(1);
}

static int connect_guard(const struct rule *rule);
static void start_fallback(const struct rule *rule, struct guard *g);

/* The guard is reached when the first bytes leave, not before: the request is put
 * together first, so that it follows the connection at once (the guard's host side
 * then reads it in the same wake-up as the connection, most of the time). */
static void open_guard(const struct rule *rule, struct guard *g)
{
    if (g->out >= 0) {
        return;
    }
    int fd = connect_guard(rule);
    if (fd >= 0) {
        g->in = fd;
        g->out = fd;
    } else {
        start_fallback(rule, g);
    }
}

/* Sends what was collected. */
void flush_guard(const struct rule *rule, struct guard *g)
{
    open_guard(rule, g);
    if (g->pending_length > 0 && write_all(g->out, g->pending, g->pending_length) != 0) {
        guard_refuses(rule, "cannot send: %s", strerror(errno));
    }
    g->pending_length = 0;
}

/* Collects bytes to send; they leave with flush_guard (or earlier, when many). */
void send_bytes(const struct rule *rule, struct guard *g, const char *data, size_t length)
{
    if (g->pending_length + length > sizeof g->pending) {
        flush_guard(rule, g);
    }
    if (length > sizeof g->pending) {
        open_guard(rule, g);
        if (write_all(g->out, data, length) != 0) {
            guard_refuses(rule, "cannot send: %s", strerror(errno));
        }
        return;
    }
    memcpy(g->pending + g->pending_length, data, length);
    g->pending_length += length;
}

void send_field(const struct rule *rule, struct guard *g, const char *text)
{
    send_bytes(rule, g, text, strlen(text) + 1);
}

void send_count(const struct rule *rule, struct guard *g, size_t count)
{
    char number[32];
    snprintf(number, sizeof number, "%zu", count);
    send_field(rule, g, number);
}

/* The next byte from the guard: -1 at end of stream, -2 when the time is up. */
static int guard_byte(struct guard *g)
{
    if (g->start < g->end) {
        return (unsigned char)g->buffer[g->start++];
    }
    for (;;) {
        long left = g->deadline - now_millis();
        if (left <= 0) {
            return -2;
        }
        struct pollfd p = {.fd = g->in, .events = POLLIN, .revents = 0};
        int ready = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready == 0) {
            return -2;
        }
        ssize_t n = ready < 0 ? -1 : read(g->in, g->buffer, sizeof g->buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        g->start = 1;
        g->end = (size_t)n;
        return (unsigned char)g->buffer[0];
    }
}

/* Reads one '\n'-terminated line from the guard; 0 at end of stream. */
int read_line(const struct rule *rule, struct guard *g, char line[GUARD_MAX_LINE])
{
    size_t n = 0;
    for (;;) {
        int c = guard_byte(g);
        if (c == -2) {
            guard_refuses(rule, "no answer within %d seconds", GUARD_TIMEOUT_SECONDS);
        }
        if (c == -1) {
            return 0;
        }
        if (c == '\n') {
            line[n] = '\0';
            return 1;
        }
        if (n + 1 >= GUARD_MAX_LINE) {
            guard_refuses(rule, "answer too long");
        }
        line[n++] = (char)c;
    }
}

/* Whether an error from socket() or connect() means Unix sockets are forbidden here
 * (an agent's own sandbox), rather than that the guard is missing. */
int sockets_forbidden(int error)
{
    return error == EPERM || error == EACCES || error == EAFNOSUPPORT || error == ENOSYS;
}

/* Connects to the guard's socket: the descriptor, or -1 when Unix sockets are forbidden. */
static int connect_guard(const struct rule *rule)
{
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    int length = snprintf(address.sun_path, sizeof address.sun_path, "%s/" GUARD_SOCKET, rule->runtime);
    if (length < 0 || (size_t)length >= sizeof address.sun_path) {
        guard_refuses(rule, "socket path too long");
    }
    /* The guard starts with the sandbox; give it a moment if it is not listening yet. */
    for (int waited = 0;; waited += 5) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            if (sockets_forbidden(errno)) {
                return -1;
            }
            guard_refuses(rule, "cannot create a socket: %s", strerror(errno));
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            struct timeval timeout = {.tv_sec = GUARD_TIMEOUT_SECONDS, .tv_usec = 0};
            if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
                guard_refuses(rule, "cannot set a timeout: %s", strerror(errno));
            }
            return fd;
        }
        int error = errno;
        close(fd);
        if (sockets_forbidden(error)) {
            return -1;
        }
        if ((error != ENOENT && error != ECONNREFUSED) || waited >= GUARD_CONNECT_MILLIS) {
            guard_refuses(rule, "cannot connect to %s: %s", address.sun_path, strerror(error));
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Starts the in-sandbox guard: the bundled Java runtime running the same rules, talking
 * the same protocol over two pipes. */
static void start_fallback(const struct rule *rule, struct guard *g)
{
    char java[PATH_MAX];
    char jar[PATH_MAX];
    format_path(java, "%s/" GUARD_JAVA, rule->runtime);
    format_path(jar, "%s/" GUARD_JAR, rule->runtime);
    int to_guard[2];
    int from_guard[2];
    if (pipe2(to_guard, O_CLOEXEC) != 0 || pipe2(from_guard, O_CLOEXEC) != 0) {
        guard_refuses(rule, "Unix sockets are forbidden here and no pipe could be made: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        guard_refuses(rule, "Unix sockets are forbidden here and no process could be started: %s",
            strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(to_guard[0], 0) < 0 || dup2(from_guard[1], 1) < 0 || null < 0 || dup2(null, 2) < 0) {
            _exit(127);
        }
        char *const java_argv[] = {
            java, (char *)"-XX:+UseSerialGC", (char *)"-XX:TieredStopAtLevel=1", (char *)"-XX:-UsePerfData",
            (char *)"-Xshare:auto", (char *)"-Xlog:disable", (char *)"-cp", jar, (char *)GUARD_FALLBACK_CLASS,
            (char *)rule->home, (char *)rule->xdg_config_home, NULL,
        };
        char *const java_env[] = {(char *)"LC_ALL=C.UTF-8", (char *)"PATH=/usr/bin:/bin", NULL};
        execve(java, java_argv, java_env);
        _exit(127);
    }
    close(to_guard[0]);
    close(from_guard[1]);
    g->out = to_guard[1];
    g->in = from_guard[0];
    g->helper = pid;
}

/* Ends the in-sandbox guard, if any, and closes the conversation. */
void end_guard(struct guard *g)
{
    close(g->out);
    if (g->in != g->out) {
        close(g->in);
    }
    if (g->helper > 0) {
        kill(g->helper, SIGKILL);
        while (waitpid(g->helper, NULL, 0) < 0 && errno == EINTR) {
        }
        g->helper = 0;
    }
}

/* Appends text to a report, cut at its room; the report keeps a NUL at its end. */
static void report_append(char *report, size_t *length, size_t room, const char *text)
{
    for (const char *p = text; *p != '\0' && *length < room; p++) {
        report[(*length)++] = *p;
    }
}

void report_blocked(const struct rule *rule, int argc, char *argv[])
{
    long deadline = now_millis() + GUARD_REPORT_MILLIS;
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    int length = snprintf(address.sun_path, sizeof address.sun_path, "%s/" GUARD_SOCKET, rule->runtime);
    if (length < 0 || (size_t)length >= sizeof address.sun_path) {
        return;
    }
    char dir[sizeof address.sun_path];
    memcpy(dir, address.sun_path, sizeof dir);
    strip_last_component(dir);
    if (!is_directory(dir)) {
        return; /* no guard socket in this sandbox (an outer runtime of an older version) */
    }
    /* the report: magic, name, command line, each ended by a NUL byte */
    static char report[GUARD_MAX_REPORT];
    size_t n = 0;
    report_append(report, &n, sizeof report - 1, GUARD_REPORT_MAGIC);
    report[n++] = '\0';
    report_append(report, &n, sizeof report - GUARD_REPORT_LINE - 2, rule->name);
    report[n++] = '\0';
    size_t line_start = n;
    report_append(report, &n, line_start + GUARD_REPORT_LINE, rule->name);
    for (int i = 1; i < argc && n < line_start + GUARD_REPORT_LINE; i++) {
        report_append(report, &n, line_start + GUARD_REPORT_LINE, " ");
        report_append(report, &n, line_start + GUARD_REPORT_LINE, argv[i]);
    }
    report[n++] = '\0';

    int fd = -1;
    for (;;) {
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return;
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            break;
        }
        int error = errno;
        close(fd);
        if ((error != ENOENT && error != ECONNREFUSED && error != EINTR) || now_millis() >= deadline) {
            return;
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    for (size_t sent = 0; sent < n;) {
        ssize_t w = send(fd, report + sent, n - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            close(fd);
            return;
        }
        sent += (size_t)w;
    }
    /* one line back means the host has it: the sandbox may end right after */
    char answer[64];
    for (;;) {
        long left = deadline - now_millis();
        struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
        int ready = left <= 0 ? 0 : poll(&p, 1, (int)left);
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            break;
        }
        ssize_t r = read(fd, answer, sizeof answer);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0 || memchr(answer, '\n', (size_t)r) != NULL) {
            break;
        }
    }
    close(fd);
}
