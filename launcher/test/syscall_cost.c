// SPDX-License-Identifier: Apache-2.0
/*
 * For bench/run.sh: what the sandbox's seccomp filter costs per system call. Times a
 * million calls each of getppid (a call the filter allows whatever its arguments: the
 * kernel caches that answer and skips the filter), ioctl FIONREAD (the filter looks at
 * the request) and socket(AF_UNIX) with close (the filter looks at the family), and
 * prints the nanoseconds per call, one line each: NAME NS. Run it outside a sandbox and
 * inside one; the difference is the filter's.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CALLS 1000000L

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return 1;
    }
    double start = now();
    for (long i = 0; i < CALLS; i++) {
        syscall(SYS_getppid);
    }
    printf("getppid %.1f\n", (now() - start) / (double)CALLS);
    start = now();
    for (long i = 0; i < CALLS; i++) {
        int n;
        ioctl(fds[0], FIONREAD, &n);
    }
    printf("ioctl %.1f\n", (now() - start) / (double)CALLS);
    start = now();
    for (long i = 0; i < CALLS / 10; i++) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        if (s >= 0) {
            close(s);
        }
    }
    printf("socket+close %.1f\n", (now() - start) / (double)(CALLS / 10));
    return 0;
}
