// SPDX-License-Identifier: Apache-2.0
/*
 * no-unix-sockets COMMAND [ARG...]: runs COMMAND under a seccomp filter that fails
 * socket(AF_UNIX, ...) and socketpair(AF_UNIX, ...) with EPERM, the way the
 * sandboxes of Codex and Claude Code forbid Unix sockets. A test helper.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "x86-64 and AArch64 only"
#endif

int main(int argc, char *argv[])
{
    if (argc < 2) {
        fputs("usage: no-unix-sockets COMMAND [ARG...]\n", stderr);
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socketpair, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (unsigned)offsetof(struct seccomp_data, args)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog program = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0L, 0L) != 0) {
        fprintf(stderr, "no-unix-sockets: cannot install the filter: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[1], &argv[1]);
    fprintf(stderr, "no-unix-sockets: cannot run %s: %s\n", argv[1], strerror(errno));
    return 127;
}
