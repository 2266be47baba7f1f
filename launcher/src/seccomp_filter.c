// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's seccomp filter: see seccomp_filter.h.
 */
#define _GNU_SOURCE

#include "seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

#include "guard.h"
#include "util.h"

/*
 * A process that shares the caller's terminal could push characters into its
 * input queue with the TIOCSTI ioctl (TIOCLINUX can paste on a virtual
 * console); the caller's shell would read and run them after the sandbox ends,
 * outside it. A seccomp filter refuses both ioctls with EPERM, for the command
 * and everything it starts, and leaves the terminal otherwise untouched: job
 * control, /dev/tty and interactive programs keep working. Only the low 32 bits
 * of the request are compared, since the kernel ignores the others.
 */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
#define X32 0x40000000u
/* ioctl, then add_key, request_key, keyctl: x86-64, then x32 */
static const unsigned NATIVE_IOCTLS[] = {16u, X32 | 514u};
static const unsigned NATIVE_KEY_CALLS[] = {248u, 249u, 250u, X32 | 248u, X32 | 249u, X32 | 250u};
/* i386 */
static const unsigned COMPAT_IOCTLS[] = {54u};
static const unsigned COMPAT_KEY_CALLS[] = {286u, 287u, 288u};
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
static const unsigned NATIVE_IOCTLS[] = {29u};
static const unsigned NATIVE_KEY_CALLS[] = {217u, 218u, 219u};
static const unsigned COMPAT_IOCTLS[] = {54u};
static const unsigned COMPAT_KEY_CALLS[] = {309u, 310u, 311u};
#else
#error "agent-sandbox's seccomp filter knows x86-64 and AArch64 only"
#endif
#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* A BPF program built with forward jumps to named places, resolved at the end. */
enum place { NEXT, COMPAT, IOCTL_REQUEST, ALLOW, REFUSE, PLACES };
struct program {
    struct sock_filter code[48];
    unsigned char true_place[48];
    unsigned char false_place[48];
    unsigned short at[PLACES];
    unsigned short length;
};

static void emit(struct program *p, struct sock_filter statement, enum place yes, enum place no)
{
    if (p->length >= COUNT(p->code)) {
        die("seccomp filter too long");
    }
    p->true_place[p->length] = (unsigned char)yes;
    p->false_place[p->length] = (unsigned char)no;
    p->code[p->length++] = statement;
}

static void load(struct program *p, unsigned offset)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), NEXT, NEXT);
}

static void jump_if(struct program *p, unsigned value, enum place yes, enum place no)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 0), yes, no);
}

static void give(struct program *p, unsigned action)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action), NEXT, NEXT);
}

static void mark(struct program *p, enum place place)
{
    p->at[place] = p->length;
}

static unsigned char offset_to(const struct program *p, unsigned short from, enum place place)
{
    if (place == NEXT) {
        return 0;
    }
    if (p->at[place] <= from) {
        die("seccomp filter: backward jump");
    }
    return (unsigned char)(p->at[place] - from - 1);
}

static void syscalls(struct program *p, const unsigned *ioctls, size_t n_ioctls, const unsigned *keys, size_t n_keys)
{
    load(p, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < n_ioctls; i++) {
        jump_if(p, ioctls[i], IOCTL_REQUEST, NEXT);
    }
    for (size_t i = 0; i < n_keys; i++) {
        jump_if(p, keys[i], REFUSE, NEXT);
    }
    give(p, SECCOMP_RET_ALLOW);
}

/*
 * The sandbox's seccomp filter, for the command and everything it starts:
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
    struct program p;
    memset(&p, 0, sizeof p);
    load(&p, offsetof(struct seccomp_data, arch));
    jump_if(&p, NATIVE_ARCH, NEXT, COMPAT);
    syscalls(&p, NATIVE_IOCTLS, COUNT(NATIVE_IOCTLS), NATIVE_KEY_CALLS, COUNT(NATIVE_KEY_CALLS));
    mark(&p, COMPAT);
    jump_if(&p, COMPAT_ARCH, NEXT, ALLOW);
    syscalls(&p, COMPAT_IOCTLS, COUNT(COMPAT_IOCTLS), COMPAT_KEY_CALLS, COUNT(COMPAT_KEY_CALLS));
    mark(&p, IOCTL_REQUEST);
    load(&p, offsetof(struct seccomp_data, args) + sizeof(__u64)); /* request, low half */
    jump_if(&p, TIOCSTI, REFUSE, NEXT);
    jump_if(&p, TIOCLINUX, REFUSE, NEXT);
    mark(&p, ALLOW);
    give(&p, SECCOMP_RET_ALLOW);
    mark(&p, REFUSE);
    give(&p, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    for (unsigned short i = 0; i < p.length; i++) {
        if (BPF_CLASS(p.code[i].code) == BPF_JMP) {
            p.code[i].jt = offset_to(&p, i, (enum place)p.true_place[i]);
            p.code[i].jf = offset_to(&p, i, (enum place)p.false_place[i]);
        }
    }
    struct sock_fprog program = {
        .len = p.length,
        .filter = p.code,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        return -1;
    }
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0L, 0L);
}
