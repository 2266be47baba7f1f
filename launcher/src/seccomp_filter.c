// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's seccomp filter: see seccomp_filter.h. The program itself is made at
 * build time by seccomp_gen.c with libseccomp and embedded here (seccomp_program.h,
 * generated into the build directory): the launcher links nothing of libseccomp.
 */
#define _GNU_SOURCE

#include "seccomp_filter.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_program.h"

/*
 * The sandbox's seccomp filters, for the command and everything it starts (the lists
 * and the reason for each are in seccomp_gen.c and the README). Two programs,
 * stacked: the list of allowed system calls, and the terminal's. Among the refusals:
 * - TIOCSTI and TIOCLINUX are refused: a process sharing the caller's terminal
 *   could push characters into its input queue, which the caller's shell would
 *   read and run after the sandbox ends, outside it. Only the low 32 bits of the
 *   request are compared, since the kernel ignores the others. Job control,
 *   /dev/tty and interactive programs keep working.
 * - add_key, request_key and keyctl are refused: the kernel keyrings are not
 *   namespaced by path, and a key of the host (the caller's session keyring is
 *   linkable by its owner) could be read, changed, or planted to outlive the run.
 */
int install_filter(void)
{
    struct sock_fprog sandbox = {
        .len = SANDBOX_FILTER_LENGTH,
        .filter = (struct sock_filter *)SANDBOX_FILTER,
    };
    struct sock_fprog terminal = {
        .len = TERMINAL_FILTER_LENGTH,
        .filter = (struct sock_filter *)TERMINAL_FILTER,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        return -1;
    }
    /* the terminal's first: without it, nothing is installed and the caller falls back */
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &terminal, 0L, 0L) != 0) {
        return -1;
    }
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sandbox, 0L, 0L);
}

int install_guard_filter(void)
{
    struct sock_fprog guard = {
        .len = GUARD_FILTER_LENGTH,
        .filter = (struct sock_filter *)GUARD_FILTER,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        return -1;
    }
    /* once the guard has a call, only a signal that ends the caller interrupts it (Linux
     * 5.19): a call the guard made is never made again by a restart after a signal handler,
     * which would answer "already connected" (a third of the connects under a 0.2 ms timer) */
    int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
        SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &guard);
    if (fd < 0 && errno == EINVAL) {
        fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &guard);
    }
    return fd;
}
