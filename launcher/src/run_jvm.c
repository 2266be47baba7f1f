// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher as the parent of the tool's JVM: see run_jvm.h.
 */
#define _GNU_SOURCE

#include "run_jvm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "starter.h"
#include "util.h"

/*
 * The JVM's own exit, after the run is done (its output written, bwrap ended), takes a
 * millisecond or more: a safepoint, its threads stopped one by one, the C library's
 * exit handlers. So the launcher stays the process the caller started and waits for,
 * and runs the JVM as its child; the JVM writes the tool's status, one byte, to a pipe
 * (STATUS_PROPERTY) when the run is done, and the launcher then kills it (SIGKILL:
 * there is nothing left for it to do), waits for it and for the starter, and exits with
 * that status. When the status is followed by STATUS_STARTER_REMOVING, the starter is
 * still removing the run's directories, which takes about as long as the JVM's end,
 * side by side: the launcher waits for it to finish rather than stopping it. Nothing
 * of the run outlives the tool but the `cat` that holds the live watch's inotify instance
 * (tree_watch.h), which reads a pipe the JVM held and ends right after it, so that the
 * kernel's grace period for freeing that instance is waited for there and not by the
 * caller; the JVM also dies with the launcher in any case (PR_SET_PDEATHSIG).
 *
 * Signals: the JVM is in the caller's process group, as bwrap and the command are, so
 * what a terminal sends the group (Ctrl-C, a hangup) reaches it directly, as before.
 * What a process sends the tool's pid alone (`kill PID`, an agent stopping a command)
 * reaches the launcher, which passes SIGINT, SIGTERM, SIGHUP and SIGQUIT (as SIGTERM)
 * on to the JVM (not the terminal's: those the JVM has got itself). A signal the caller
 * ignores (a background job's SIGINT, nohup's SIGHUP) stays ignored, for the launcher
 * and the JVM.
 * Without a status the JVM ended unexpectedly: the launcher ends as it did.
 */
static volatile sig_atomic_t launcher_jvm;
/* Whether the JVM handles SIGINT, SIGTERM and SIGHUP yet (STATUS_READY). */
static volatile sig_atomic_t launcher_jvm_ready;
/* Whether such a signal came before that, and the launcher stopped the JVM itself. */
static volatile sig_atomic_t launcher_stopped_early;

/* The starter, while the launcher waits for it to finish removing the run's directories. */
static volatile sig_atomic_t launcher_starter;

static const int PASSED_ON[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define PASSED_ON_COUNT (sizeof PASSED_ON / sizeof PASSED_ON[0])

static void pass_on(int signal_number, siginfo_t *info, void *context)
{
    (void)context;
    /* sent by a process (si_code <= 0), not by the terminal to the whole group; a
     * SIGQUIT as a SIGTERM: the JVM keeps SIGQUIT for its thread dump, and a process
     * asking the tool to quit wants the run ended */
    if (info != NULL && info->si_code <= 0 && launcher_jvm > 0) {
        if (launcher_jvm_ready) {
            kill((pid_t)launcher_jvm, signal_number == SIGQUIT ? SIGTERM : signal_number);
        } else {
            /* the JVM handles none yet (its own handling would print Java's words): no
             * sandbox runs before it does, and the tool ends here, with 130 */
            launcher_stopped_early = 1;
            kill((pid_t)launcher_jvm, SIGKILL);
        }
    }
    /* the JVM is gone, the starter still removing: whoever wants the tool to end now
     * (the terminal too) gets that, and the rest is left to the next run's sweep */
    if (launcher_starter > 0) {
        kill((pid_t)launcher_starter, STARTER_STOP);
    }
}

/* pidfd_open(2) and process_mrelease(2), which musl's headers may not name yet: the
 * same numbers on x86-64 and AArch64 (Linux 5.3 and 5.15) */
#if defined(__x86_64__) || defined(__aarch64__)
#define PIDFD_OPEN_CALL 434L
#define PROCESS_MRELEASE_CALL 448L
#endif

/* After a SIGKILL: frees the killed child's memory from this process too, beside the
 * child's own exit, which alone took 1.2 ms for the JVM (the kernel unmapping some 35 MB)
 * while the caller waited for the tool's end. Best effort: an older kernel, or a child
 * whose memory is already gone, is waited for as before. */
static void release_memory(pid_t killed)
{
#ifdef PROCESS_MRELEASE_CALL
    int pidfd = (int)syscall(PIDFD_OPEN_CALL, (long)killed, 0L);
    if (pidfd >= 0) {
        syscall(PROCESS_MRELEASE_CALL, (long)pidfd, 0L);
        close(pidfd);
    }
#else
    (void)killed;
#endif
}

__attribute__((noreturn))
void run_jvm(const char *java, char *const java_argv[], int status_pipe[2], pid_t starter)
{
    sigset_t passed;
    sigset_t before;
    sigemptyset(&passed);
    for (size_t i = 0; i < PASSED_ON_COUNT; i++) {
        sigaddset(&passed, PASSED_ON[i]);
    }
    /* held back until the child's pid is known: none is lost, none reaches nobody */
    sigprocmask(SIG_BLOCK, &passed, &before);
    pid_t launcher = getpid();
    pid_t jvm = fork();
    if (jvm <= 0) {
        /* the child; or, without one, this process becomes the JVM, which then writes its
         * status into a pipe nobody reads */
        sigprocmask(SIG_SETMASK, &before, NULL);
        if (jvm == 0 && !dies_with(launcher, SIGKILL)) {
            _exit(1);
        }
        if (fcntl(status_pipe[1], F_SETFD, 0) != 0) {
            die("cannot pass the status pipe to the JVM: %s", strerror(errno));
        }
        close(status_pipe[0]);
        execv(java, java_argv);
        die("cannot start %s: %s", java, strerror(errno));
    }
    launcher_jvm = (sig_atomic_t)jvm;
    close(status_pipe[1]);
    /* the JVM's descriptors are the JVM's: the starter's pipes, the lib directory */
    close_others(status_pipe[0], status_pipe[0]);
    for (size_t i = 0; i < PASSED_ON_COUNT; i++) {
        struct sigaction current;
        if (sigaction(PASSED_ON[i], NULL, &current) == 0 && current.sa_handler != SIG_IGN) {
            struct sigaction forward;
            memset(&forward, 0, sizeof forward);
            forward.sa_sigaction = pass_on;
            forward.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&forward.sa_mask);
            sigaction(PASSED_ON[i], &forward, NULL);
        }
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    unsigned char status = 0;
    int reported = 0;
    int starter_removing = 0;
    for (;;) {
        unsigned char said[3];
        ssize_t n = read(status_pipe[0], said, sizeof said);
        ssize_t first = 0;
        if (n >= 1 && !launcher_jvm_ready && said[0] == (unsigned char)STATUS_READY[0]) {
            launcher_jvm_ready = 1;
            first = 1;
        }
        if (n > first) {
            /* the run is done: the JVM is stopped at once, its own exit skipped */
            reported = 1;
            status = said[first];
            starter_removing = n - first == 2 && said[first + 1] == (unsigned char)STATUS_STARTER_REMOVING[0];
            kill(jvm, SIGKILL);
            release_memory(jvm);
            break;
        }
        if (n >= 1) {
            continue;
        }
        if (n == 0 || errno != EINTR) {
            break;
        }
    }
    int how;
    while (waitpid(jvm, &how, 0) < 0) {
        if (errno != EINTR) {
            _exit(1);
        }
    }
    launcher_jvm = 0;
    /* and the starter is gone too when the caller sees the end: nothing of the run
     * outlives the tool. When the JVM left it the removal of the run's directories (its
     * bwrap has ended), it ends by itself once that is done and the JVM's end closed its
     * pipe, which takes the same time as the JVM's own end; otherwise its work is done,
     * or of no use without the JVM, and it is stopped. */
    if (starter > 0) {
        if (starter_removing) {
            launcher_starter = (sig_atomic_t)starter;
        } else {
            kill(starter, STARTER_STOP);
        }
        while (waitpid(starter, NULL, 0) < 0 && errno == EINTR) {
        }
        launcher_starter = 0;
    }
    if (launcher_stopped_early && !reported) {
        _exit(130);
    }
    if (reported) {
        _exit(status);
    }
    if (WIFSIGNALED(how)) {
        /* ended by a signal: end by the same one, without a core file of the launcher's own */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
    }
    end_like(how);
}
