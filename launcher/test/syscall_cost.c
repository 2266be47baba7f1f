// SPDX-License-Identifier: Apache-2.0
/*
 * For bench/run.sh: what the sandbox's seccomp filter costs per system call. Times a
 * million calls each of getppid (a call the filter allows whatever its arguments: the
 * kernel caches that answer and skips the filter), ioctl FIONREAD (the filter looks at
 * the request) and socket(AF_UNIX) with close (the filter looks at the family), and
 * prints the nanoseconds per call, one line each: NAME NS. Then what the socket guard
 * of the shared /tmp (--share-tmp) answers for: a connect(2) to a Unix socket of its own
 * in $TMPDIR (or /tmp) and to a TCP listener on 127.0.0.1 (each with the socket's
 * creation, the accept and the closes around it), a sendto(2) with an address to a UDP
 * socket on 127.0.0.1, and a sendmsg(2) on a connected one. Run it outside a sandbox and inside one; the difference is
 * the filter's (and, with --share-tmp, the guard's).
 */
#define _GNU_SOURCE

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CALLS 1000000L
#define CONNECTS 10000L

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Times CONNECTS connects to the listener at address (socket, connect, accept, closes). */
static int time_connects(const char *name, int family, const struct sockaddr *address, socklen_t length)
{
    int listener = socket(family, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, address, length) != 0 || listen(listener, 16) != 0) {
        perror(name);
        return 1;
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    getsockname(listener, (struct sockaddr *)&bound, &bound_length);
    double start = now();
    for (long i = 0; i < CONNECTS; i++) {
        int s = socket(family, SOCK_STREAM, 0);
        if (s < 0 || connect(s, (struct sockaddr *)&bound, bound_length) != 0) {
            perror(name);
            return 1;
        }
        int accepted = accept(listener, NULL, NULL);
        close(accepted);
        close(s);
    }
    printf("%s %.1f\n", name, (now() - start) / (double)CONNECTS);
    close(listener);
    return 0;
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

    struct sockaddr_un unix_address;
    memset(&unix_address, 0, sizeof unix_address);
    unix_address.sun_family = AF_UNIX;
    const char *tmp = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(unix_address.sun_path, sizeof unix_address.sun_path, "%s/syscall-cost-%ld.sock", tmp, (long)getpid());
    int failed = time_connects("connect-unix", AF_UNIX, (struct sockaddr *)&unix_address, sizeof unix_address);
    unlink(unix_address.sun_path);
    struct sockaddr_in loopback;
    memset(&loopback, 0, sizeof loopback);
    loopback.sin_family = AF_INET;
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    failed = failed || time_connects("connect-tcp", AF_INET, (struct sockaddr *)&loopback, sizeof loopback);
    if (failed) {
        return 1;
    }

    int receiver = socket(AF_INET, SOCK_DGRAM, 0);
    int sender = socket(AF_INET, SOCK_DGRAM, 0);
    socklen_t length = sizeof loopback;
    if (receiver < 0 || sender < 0 || bind(receiver, (struct sockaddr *)&loopback, sizeof loopback) != 0
        || getsockname(receiver, (struct sockaddr *)&loopback, &length) != 0) {
        perror("sendto-udp");
        return 1;
    }
    char byte = 'x';
    start = now();
    for (long i = 0; i < CONNECTS; i++) {
        if (sendto(sender, &byte, 1, 0, (struct sockaddr *)&loopback, sizeof loopback) != 1
            || recv(receiver, &byte, 1, 0) != 1) {
            perror("sendto-udp");
            return 1;
        }
    }
    printf("sendto-udp %.1f\n", (now() - start) / (double)CONNECTS);

    /* sendmsg(2) on a connected socket, which the guard answers too (its address is in memory) */
    if (connect(sender, (struct sockaddr *)&loopback, sizeof loopback) != 0) {
        perror("sendmsg-udp");
        return 1;
    }
    struct iovec piece = {.iov_base = &byte, .iov_len = 1};
    struct msghdr message = {.msg_iov = &piece, .msg_iovlen = 1};
    start = now();
    for (long i = 0; i < CONNECTS; i++) {
        if (sendmsg(sender, &message, 0) != 1 || recv(receiver, &byte, 1, 0) != 1) {
            perror("sendmsg-udp");
            return 1;
        }
    }
    printf("sendmsg-udp %.1f\n", (now() - start) / (double)CONNECTS);
    return 0;
}
