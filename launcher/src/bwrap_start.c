// SPDX-License-Identifier: Apache-2.0
/*
 * bwrap started with its setup messages apart: see bwrap_start.h.
 */
#define _GNU_SOURCE

#include "bwrap_start.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "mount_check.h"
#include "net_stack.h"
#include "util.h"

/*
 * bwrap's messages while it sets the sandbox up, and only those, stay off the
 * caller's terminal, so that agent-sandbox can report a failed setup in one line
 * of its own, with bwrap's words in it, instead of bwrap's raw line and its own.
 * The command's stderr must stay the caller's very descriptor (a terminal stays a
 * terminal, nothing buffers or reorders it), so nothing may sit in between: bwrap
 * starts with stderr on LOG, a file in the run directory (on the host, hidden in
 * the sandbox), and the caller's stderr at another descriptor that bwrap passes
 * on untouched. The sandbox's first program (restore_stderr) writes STARTED_MARK
 * to LOG and moves the caller's stderr back to 2 before anything else. After bwrap
 * ends, the tool reads LOG: without the mark, the command never started and what
 * is there is bwrap's reason; with it, the status is the command's own. The JVM
 * cannot hand a child a descriptor beyond 0, 1 and 2, hence this face of the
 * launcher, which execs bwrap (same pid, so signals and --die-with-parent are as
 * before). */
__attribute__((noreturn))
void exec_bwrap(const char *log_path, char *const bwrap_argv[], char *const env[], int alive, int terminal)
{
    int caller = fcntl(STDERR_FILENO, F_DUPFD, 3); /* not close-on-exec: bwrap passes it on */
    if (caller < 0) {
        die("cannot keep stderr for the command: %s", strerror(errno));
    }
    if (alive >= 0) {
        int passed = fcntl(alive, F_DUPFD, 3); /* not close-on-exec either */
        if (passed < 0) {
            die("cannot pass the run's liveness to the sandbox: %s", strerror(errno));
        }
        close(alive);
        alive = passed;
    }
    int log = open(log_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (log < 0) {
        die("cannot open %s: %s", log_path, strerror(errno));
    }
    /* the environment given, without any STDERR_VARIABLE or ALIVE_VARIABLE of its own,
     * and ours */
    static const char prefix[] = STDERR_VARIABLE "=";
    static const char alive_prefix[] = ALIVE_VARIABLE "=";
    static const char terminal_prefix[] = TERMINAL_VARIABLE "=";
    size_t count = 0;
    while (env[count] != NULL) {
        count++;
    }
    char **bwrap_env = calloc(count + 4, sizeof *bwrap_env);
    if (bwrap_env == NULL) {
        die("out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(env[i], prefix, sizeof prefix - 1) != 0 &&
            strncmp(env[i], alive_prefix, sizeof alive_prefix - 1) != 0 &&
            strncmp(env[i], terminal_prefix, sizeof terminal_prefix - 1) != 0) {
            bwrap_env[n++] = env[i];
        }
    }
    char variable[sizeof prefix + 16];
    snprintf(variable, sizeof variable, "%s%d", prefix, caller);
    bwrap_env[n++] = variable;
    char alive_variable[sizeof alive_prefix + 16];
    if (alive >= 0) {
        snprintf(alive_variable, sizeof alive_variable, "%s%d", alive_prefix, alive);
        bwrap_env[n++] = alive_variable;
    }
    if (terminal) {
        bwrap_env[n++] = (char *)TERMINAL_VARIABLE "=1";
    }
    bwrap_env[n] = NULL;
    if (dup2(log, STDERR_FILENO) < 0) {
        die("cannot prepare bwrap's stderr: %s", strerror(errno));
    }
    close(log);
    /* the identity of every mount's source as found now, for the sandbox's first
     * program to find again at the mount's target (mount_check.h); a failure goes into
     * LOG, the reason the sandbox did not start */
    char run_dir[PATH_MAX];
    format_path(run_dir, "%s", log_path);
    strip_last_component(run_dir);
    char reason[PATH_MAX + 256];
    if (mount_identify(run_dir, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    /* the sandbox's own network stack, when the tool asks for one: its namespaces entered,
     * its holder told where to write a failure (into LOG too) */
    char *const *argv_to_run = attach_net_stack(bwrap_argv, bwrap_env, log_path);
    execve(argv_to_run[0], argv_to_run, bwrap_env);
    /* into LOG: the tool reports it as the reason the sandbox did not start */
    die("cannot run %s: %s", bwrap_argv[0], strerror(errno));
}

__attribute__((noreturn))
void start_bwrap(int argc, char *argv[])
{
    if (argc < 4) {
        die("%s takes a log file and bwrap's command line", START_BWRAP);
    }
    /* bwrap dies with the tool from here on, as the starter's bwrap dies with the starter:
     * its own --die-with-parent takes effect only once it has set itself up, and a tool
     * killed before that would leave the sandbox (and its network) running, adopted */
    if (!dies_with(getppid(), SIGKILL)) {
        die("the tool that starts bwrap ended");
    }
    exec_bwrap(argv[2], &argv[3], environ, -1, 0);
}
