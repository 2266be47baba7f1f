// SPDX-License-Identifier: Apache-2.0
/*
 * The wrapper of git: see git_guard.h.
 */
#define _GNU_SOURCE

#include "git_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "guard_client.h"
#include "util.h"

/* The environment variables that change what git does, which repository it uses or
 * which programs it finds. */
static int matters_to_git(const char *entry)
{
    return strncmp(entry, "GIT_", 4) == 0 || strncmp(entry, "HOME=", 5) == 0
        || strncmp(entry, "XDG_CONFIG_HOME=", 16) == 0 || strncmp(entry, "PATH=", 5) == 0;
}

/* Reads the parent process's command line: its words, NUL-separated, and their count. */
size_t parent_cmdline(pid_t parent, char *text, size_t capacity, size_t *length)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)parent);
    *length = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    while (*length < capacity) {
        ssize_t n = read(fd, text + *length, capacity - *length);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        *length += (size_t)n;
    }
    close(fd);
    if (*length == capacity) {
        *length = 0; /* longer than the limit: unknown, so nothing counts as git's own call */
        return 0;
    }
    if (*length > 0 && text[*length - 1] != '\0') {
        text[(*length)++] = '\0';
    }
    size_t words = 0;
    for (size_t i = 0; i < *length; i++) {
        words += text[i] == '\0';
    }
    return words;
}

/*
 * Runs the real git with the TAB-separated arguments, in this process's directory and
 * environment, for at most GUARD_GIT_MILLIS: the answer is "<exit status> <output>",
 * status -1 when git gave none in time. Written into out (GUARD_MAX_GIT_OUTPUT + 32).
 */
void run_git_question(const char *real, char *arguments, char *out, size_t capacity)
{
    char *git_argv[66];
    size_t n = 0;
    git_argv[n++] = (char *)"git";
    for (char *cursor = arguments; cursor != NULL && n < 65;) {
        git_argv[n++] = (char *)next_field(&cursor);
    }
    git_argv[n] = NULL;
    int output[2];
    snprintf(out, capacity, "-1 ");
    if (pipe2(output, O_CLOEXEC) != 0) {
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(output[0]);
        close(output[1]);
        return;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(output[1], 1) < 0 || dup2(null, 2) < 0) {
            _exit(127);
        }
        execv(real, git_argv);
        _exit(127);
    }
    close(output[1]);
    size_t prefix;
    char *text = out + 16;
    size_t room = capacity - 17 < GUARD_MAX_GIT_OUTPUT ? capacity - 17 : GUARD_MAX_GIT_OUTPUT;
    size_t got = 0;
    long deadline = now_millis() + GUARD_GIT_MILLIS;
    int timed_out = 0;
    for (;;) {
        long left = deadline - now_millis();
        struct pollfd p = {.fd = output[0], .events = POLLIN, .revents = 0};
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            timed_out = 1;
            break;
        }
        char discard[4096];
        ssize_t r = got < room ? read(output[0], text + got, room - got) : read(output[0], discard, sizeof discard);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        if (got < room) {
            got += (size_t)r;
        }
    }
    close(output[0]);
    if (timed_out) {
        kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = !timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    for (size_t i = 0; i < got; i++) {
        if (text[i] == '\0') {
            text[i] = '\n'; /* git prints no NUL here; never let one end the field early */
        }
    }
    char head[16];
    int head_length = snprintf(head, sizeof head, "%d ", code);
    prefix = (size_t)head_length;
    memmove(out + prefix, text, got);
    memcpy(out, head, prefix);
    out[prefix + got] = '\0';
}

/* Sends the request: the fields GuardProtocol.java reads. */
void send_request(const struct rule *rule, struct guard *g, int argc, char *argv[])
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL) {
        cwd[0] = '\0';
    }
    /* Which program started this one, and what it was asked: the guard tells git's own
     * calls (git stash running git reset --hard) from commands git runs for the caller. */
    pid_t parent = getppid();
    char parent_link[64];
    char parent_exe[PATH_MAX];
    snprintf(parent_link, sizeof parent_link, "/proc/%ld/exe", (long)parent);
    ssize_t parent_length = readlink(parent_link, parent_exe, sizeof parent_exe - 1);
    parent_exe[parent_length > 0 ? parent_length : 0] = '\0';
    static char parent_text[GUARD_MAX_PARENT_CMDLINE + 1];
    size_t parent_bytes = 0;
    size_t parent_words = parent_cmdline(parent, parent_text, GUARD_MAX_PARENT_CMDLINE, &parent_bytes);

    send_field(rule, g, GUARD_MAGIC);
    send_field(rule, g, cwd);
    send_field(rule, g, parent_exe);
    send_count(rule, g, parent_words);
    if (parent_bytes > 0) {
        send_bytes(rule, g, parent_text, parent_bytes);
    }
    send_count(rule, g, (size_t)argc);
    for (int i = 0; i < argc; i++) {
        send_field(rule, g, argv[i]);
    }
    /* every entry in environment order, duplicates included: the guard reads the first, as git does */
    size_t count = 0;
    for (char **e = environ; *e != NULL; e++) {
        count += matters_to_git(*e) ? 1 : 0;
    }
    send_count(rule, g, count);
    for (char **e = environ; *e != NULL; e++) {
        if (matters_to_git(*e)) {
            send_field(rule, g, *e);
        }
    }
    flush_guard(rule, g);
}

__attribute__((noreturn))
void run_guarded(const struct rule *rule, int argc, char *argv[])
{
    char real[PATH_MAX];
    real_binary(rule, real);
    struct guard g;
    memset(&g, 0, sizeof g);
    /* a guard that went away must be a refusal, not a death by SIGPIPE */
    struct sigaction ignore;
    struct sigaction previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);
    g.in = -1;
    g.out = -1;
    g.deadline = now_millis() + GUARD_TIMEOUT_SECONDS * 1000L;
    send_request(rule, &g, argc, argv);

    char line[GUARD_MAX_LINE];
    static char answer[GUARD_MAX_GIT_OUTPUT + 32];
    for (int questions = 0;; questions++) {
        if (!read_line(rule, &g, line)) {
            end_guard(&g);
            guard_refuses(rule, "the guard closed the connection without an answer");
        }
        if (strcmp(line, "A") == 0) {
            end_guard(&g);
            sigaction(SIGPIPE, &previous, NULL);
            execv(real, argv);
            die("cannot run %s (%s): %s", rule->name, real, strerror(errno));
        }
        if (strncmp(line, "D ", 2) == 0) {
            end_guard(&g);
            fprintf(stderr, PROGRAM ": %s\n", line + 2);
            exit(1);
        }
        if (questions >= GUARD_MAX_QUESTIONS) {
            break;
        }
        if (strncmp(line, "R ", 2) == 0) {
            /* Resolve a path as this process sees it; an empty answer when it does not resolve. */
            char resolved[PATH_MAX];
            if (realpath(line + 2, resolved) == NULL) {
                resolved[0] = '\0';
            }
            send_field(rule, &g, resolved);
            flush_guard(rule, &g);
            continue;
        }
        if (strncmp(line, "G ", 2) == 0) {
            run_git_question(real, line + 2, answer, sizeof answer);
            send_field(rule, &g, answer);
            flush_guard(rule, &g);
            continue;
        }
        break;
    }
    end_guard(&g);
    guard_refuses(rule, "unexpected answer");
}
