// SPDX-License-Identifier: Apache-2.0
/*
 * The starter and subreaper: see starter.h.
 */
#define _GNU_SOURCE

#include "starter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bwrap_start.h"
#include "net_stack.h"
#include "guard.h"
#include "remove_tree.h"
#include "starter_request.h"
#include "term_relay.h"
#include "util.h"

/*
 * Starting a process is the dearest step of a run for the JVM, which runs
 * interpreted (ProcessBuilder's first start, the exec of its spawn helper, a
 * reaper thread): over ten milliseconds on a small machine, while the launcher
 * forks in a fraction of one. So the launcher, before it starts the JVM, forks
 * the starter: a child that waits on a pipe for the run's one request (bwrap's
 * log file, command line and environment), starts bwrap as start_bwrap does, says
 * bwrap's pid, and says how bwrap ended. The tool finds the pipes through the
 * STARTER_PROPERTY system property; when it runs no sandbox it just exits, and the
 * starter reads the end of the pipe and exits too.
 *
 * The starter dies with the launcher (PR_SET_PDEATHSIG), as the JVM does, and bwrap
 * with the starter (--die-with-parent), as bwrap died with the tool before. The
 * terminal's SIGINT, SIGQUIT and SIGHUP reach the JVM and bwrap as before and are the
 * JVM's to act on: the starter ignores them, and passes a SIGTERM of its own on to
 * bwrap. The JVM signals bwrap by its pid, which stays bwrap's while the tool runs:
 * the starter learns how bwrap ended without reaping it, and stays until the launcher
 * ends.
 *
 * Request: "<words> <variables> <bytes>\n", then <bytes> bytes: the log file,
 * bwrap's words and the environment's variables, each ended by a NUL byte.
 * Replies, a line each: "started <pid>", then "exit <status>" or "signal <number>";
 * or "failed <reason>".
 */
static volatile sig_atomic_t starter_bwrap;
static volatile sig_atomic_t starter_terminated;

/* The children of this (single-threaded) process, from /proc; at most max of them. */
static size_t read_children(pid_t *children, size_t max)
{
    int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    char text[1024];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    size_t count = 0;
    long value = 0;
    int digits = 0;
    for (ssize_t i = 0; i <= length && count < max; i++) {
        if (i < length && text[i] >= '0' && text[i] <= '9') {
            value = value * 10 + (text[i] - '0');
            digits = 1;
        } else if (digits) {
            children[count++] = (pid_t)value;
            value = 0;
            digits = 0;
        }
    }
    return count;
}

/*
 * The tool is gone, or ends: bwrap is killed, and so is each process of bwrap's that this
 * subreaper adopts once bwrap is gone (the sandbox's init, when bwrap was killed while it
 * set the sandbox up: the init then waits for bwrap's word forever, before it could ask
 * to die with bwrap), and the starter's own helpers; then the starter ends. Only
 * async-signal-safe calls.
 */
static void starter_on_stop(int signal_number)
{
    (void)signal_number;
    term_relay_restore();
    if (starter_bwrap > 0) {
        kill((pid_t)starter_bwrap, SIGKILL);
    }
    for (int round = 0; round < 1000; round++) {
        pid_t children[64];
        size_t count = read_children(children, sizeof children / sizeof children[0]);
        for (size_t i = 0; i < count; i++) {
            kill(children[i], SIGKILL);
        }
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) {
            break;
        }
    }
    _exit(0);
}

static void starter_on_term(int signal_number)
{
    (void)signal_number;
    starter_terminated = 1;
    if (starter_bwrap > 0) {
        kill((pid_t)starter_bwrap, SIGTERM);
    }
}

/* One reply line: "<word> <number>", or "failed <reason>" when reason is given. */
static void starter_reply(int replies, const char *word, long value, const char *reason)
{
    char line[128];
    int length = reason != NULL ? snprintf(line, sizeof line, "failed %s\n", reason)
                                : snprintf(line, sizeof line, "%s %ld\n", word, value);
    if (length > 0 && (size_t)length < sizeof line && write_all(replies, line, (size_t)length) != 0) {
        _exit(0); /* the tool is gone */
    }
}

/* The requests that follow bwrap's end: "remove", answered "removed <paths>" when
 * every path is gone, "failed <reason>" when not (the tool then removes them itself).
 * Returns at the end of the pipe. */
static void serve_removals(int requests, int replies)
{
    for (;;) {
        char header[64];
        size_t used = 0;
        for (;;) {
            if (used == sizeof header - 1 || read_fully(requests, header + used, 1) != 0) {
                return;
            }
            if (header[used] == '\n') {
                break;
            }
            used++;
        }
        header[used] = '\0';
        unsigned long numbers[2];
        size_t word = strlen(STARTER_REMOVE);
        if (strncmp(header, STARTER_REMOVE " ", word + 1) != 0 ||
            parse_numbers(header + word + 1, numbers, 2, STARTER_MAX_REMOVE_BYTES) != 0 || numbers[0] == 0 ||
            numbers[0] > STARTER_MAX_REMOVE_PATHS) {
            starter_reply(replies, NULL, 0, "the request is not one");
            return;
        }
        static char bytes[STARTER_MAX_REMOVE_BYTES];
        char *paths[STARTER_MAX_REMOVE_PATHS];
        if (read_fully(requests, bytes, numbers[1]) != 0 ||
            split_strings(bytes, numbers[1], paths, numbers[0]) != 0) {
            starter_reply(replies, NULL, 0, "the request is not one");
            return;
        }
        /* each tree in a process of its own: a directory's removal waits mostly on the
         * file system (freeing and discarding its block), so trees removed side by side
         * take the time of the longest, not of all */
        int failed = 0;
        pid_t starter = getpid();
        pid_t helpers[STARTER_MAX_REMOVE_PATHS];
        size_t started = 0;
        for (size_t i = 0; i + 1 < numbers[0]; i++) {
            pid_t helper = fork();
            if (helper == 0) {
                /* stopped with the starter (the launcher stops it when the tool is told to end):
                 * what is left then, its owner record with it, is the next run's to sweep */
                if (!dies_with(starter, SIGKILL)) {
                    _exit(1);
                }
                _exit(remove_tree(paths[i]) == 0 ? 0 : 1);
            }
            if (helper < 0) {
                failed |= remove_tree(paths[i]) != 0;
            } else {
                helpers[started++] = helper;
            }
        }
        failed |= remove_tree(paths[numbers[0] - 1]) != 0;
        for (size_t i = 0; i < started; i++) {
            int status;
            while (waitpid(helpers[i], &status, 0) < 0) {
                if (errno != EINTR) {
                    status = 1;
                    break;
                }
            }
            failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        }
        starter_reply(replies, failed ? NULL : "removed", (long)numbers[0], failed ? "not all removed" : NULL);
    }
}

/* The network's early start (STARTER_NETWORK): the request's bytes after its header
 * (length). Whatever fails here is tried again, and reported, when bwrap starts. */
static void serve_network(int requests, const char *length)
{
    unsigned long numbers[1];
    if (parse_numbers(length, numbers, 1, PATH_MAX + NET_ALLOW_MAX + 2) != 0) {
        _exit(0); /* not a request */
    }
    static char bytes[PATH_MAX + NET_ALLOW_MAX + 2];
    char *fields[2];
    if (read_fully(requests, bytes, numbers[0]) != 0 || split_strings(bytes, numbers[0], fields, 2) != 0) {
        _exit(0);
    }
    char why[300];
    (void)net_stack_start(fields[0], fields[1], why, sizeof why);
}

__attribute__((noreturn))
static void serve_start(int requests, int replies, pid_t tool)
{
    struct sigaction stop;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = starter_on_stop;
    sigfillset(&stop.sa_mask);
    sigaction(STARTER_STOP, &stop, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || !dies_with(tool, STARTER_STOP)) {
        _exit(0);
    }
    close_others(requests, replies);
    /* bwrap gets what a child of the JVM got: SIGINT, SIGQUIT, SIGPIPE and SIGTERM as by
     * default (the JVM handles them), SIGHUP as the caller left it (ignored under nohup) */
    static const int changed[] = {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTERM};
    struct sigaction callers[sizeof changed / sizeof changed[0]];
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    struct sigaction term;
    memset(&term, 0, sizeof term);
    term.sa_handler = starter_on_term;
    sigemptyset(&term.sa_mask);
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        sigaction(changed[i], changed[i] == SIGTERM ? &term : &ignore, &callers[i]);
    }

    char header[64];
    for (;;) {
        size_t used = 0;
        for (;;) {
            if (used == sizeof header - 1 || read_fully(requests, header + used, 1) != 0) {
                _exit(0); /* the tool ran no sandbox, or sent what is not a request */
            }
            if (header[used] == '\n') {
                break;
            }
            used++;
        }
        header[used] = '\0';
        if (strncmp(header, STARTER_NETWORK " ", sizeof STARTER_NETWORK) != 0) {
            break; /* bwrap's */
        }
        serve_network(requests, header + sizeof STARTER_NETWORK);
    }
    unsigned long numbers[3];
    if (parse_starter_header(header, numbers, STARTER_MAX_REQUEST) != 0 || numbers[0] == 0) {
        starter_reply(replies, NULL, 0, "the request is not one");
        _exit(0);
    }
    char *bytes = malloc(numbers[2] + 1);
    char **words = calloc(numbers[0] + 1, sizeof *words);
    char **variables = calloc(numbers[1] + 1, sizeof *variables);
    char *log = NULL;
    if (bytes == NULL || words == NULL || variables == NULL) {
        starter_reply(replies, NULL, 0, "out of memory");
        _exit(0);
    }
    if (read_fully(requests, bytes, numbers[2]) != 0 ||
        split_starter_request(bytes, numbers[2], &log, words, numbers[0], variables, numbers[1]) != 0) {
        starter_reply(replies, NULL, 0, "the request is not one");
        _exit(0);
    }

    sigset_t term_only;
    sigset_t before;
    sigemptyset(&term_only);
    sigaddset(&term_only, SIGTERM);
    sigprocmask(SIG_BLOCK, &term_only, &before);
    /* the run's liveness: the sandbox gets the read end, the starter keeps the other (see
     * take_alive); no pipe, no watch (bwrap's --die-with-parent still holds) */
    int alive[2] = {-1, -1};
    if (pipe2(alive, O_CLOEXEC) != 0) {
        alive[0] = alive[1] = -1;
    }
    /* a terminal of the sandbox's own when the caller's is one (term_relay.h) */
    struct term_relay relay;
    char reason[512];
    if (term_relay_prepare(&relay, reason, sizeof reason) != 0) {
        starter_reply(replies, NULL, 0, reason);
        _exit(0);
    }
    pid_t starter = getpid();
    pid_t child = fork();
    if (child == 0) {
        /* bwrap dies with the starter from its first instruction on, as the starter dies
         * with the launcher: bwrap's own --die-with-parent takes effect only once bwrap has
         * set itself up, and a tool killed before that would leave it running, adopted */
        if (!dies_with(starter, SIGKILL)) {
            _exit(127);
        }
        struct sigaction by_default;
        memset(&by_default, 0, sizeof by_default);
        by_default.sa_handler = SIG_DFL;
        sigemptyset(&by_default.sa_mask);
        for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
            sigaction(changed[i], changed[i] == SIGHUP ? &callers[i] : &by_default, NULL);
        }
        sigprocmask(SIG_SETMASK, &before, NULL);
        if (chdir("/") != 0) {
            die("cannot enter /: %s", strerror(errno));
        }
        term_relay_child(&relay);
        exec_bwrap(log, words, variables, alive[0], relay.active);
    }
    if (alive[0] >= 0) {
        close(alive[0]);
    }
    net_stack_forget(); /* bwrap's process took its ends of the stack */
    if (child < 0) {
        starter_reply(replies, NULL, 0, strerror(errno));
        _exit(0);
    }
    starter_bwrap = (sig_atomic_t)child;
    if (starter_terminated) {
        kill(child, SIGTERM);
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    starter_reply(replies, "started", (long)child, NULL);
    /* the sandbox's terminal relayed until bwrap ends; the caller's terminal then as it was */
    term_relay_run(&relay, child);
    /* bwrap's end, without reaping it: its pid stays bwrap's (a zombie's) until the tool
     * is gone, so the tool's signals to that pid can never reach another process */
    siginfo_t info;
    memset(&info, 0, sizeof info);
    while (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) < 0) {
        if (errno != EINTR) {
            _exit(0);
        }
    }
    if (info.si_code == CLD_EXITED) {
        starter_reply(replies, "exit", (long)info.si_status, NULL);
    } else {
        starter_reply(replies, "signal", (long)info.si_status, NULL);
    }
    net_stack_stop(); /* after the tool knows: it goes on meanwhile */
    serve_removals(requests, replies);
    for (;;) {
        char rest;
        ssize_t n = read(requests, &rest, 1);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            _exit(0); /* the tool has ended */
        }
    }
}

/* Forks the starter; on success, property is the JVM option that names it, and the
 * result the starter's pid (0 without a starter). */
pid_t fork_starter(char *property, size_t capacity)
{
    int requests[2];
    int replies[2];
    if (pipe2(requests, O_CLOEXEC) != 0) {
        return 0;
    }
    if (pipe2(replies, O_CLOEXEC) != 0) {
        close(requests[0]);
        close(requests[1]);
        return 0;
    }
    pid_t tool = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(requests[1]);
        close(replies[0]);
        serve_start(requests[0], replies[1], tool);
    }
    close(requests[0]);
    close(replies[1]);
    /* the tool's ends stay open across its exec into the JVM */
    if (pid < 0 || fcntl(requests[1], F_SETFD, 0) != 0 || fcntl(replies[0], F_SETFD, 0) != 0) {
        close(requests[1]);
        close(replies[0]);
        return 0;
    }
    snprintf(property, capacity, "-D%s=%d,%d", STARTER_PROPERTY, requests[1], replies[0]);
    return pid;
}
