// SPDX-License-Identifier: Apache-2.0
/*
 * Build-time generator of the sandbox's seccomp filter. It is run once by the
 * Makefile, on the build machine, with libseccomp (Debian's libseccomp-dev): it
 * builds the filter from the lists below, has libseccomp compile it to classic
 * BPF for the native architecture and its 32-bit companion, and prints the program
 * as a C header (seccomp_program.h) that seccomp_filter.c embeds. The launcher
 * links nothing of libseccomp and installs the embedded program with one prctl:
 * nothing is read, resolved or compiled when a sandbox starts.
 *
 * The filter is a list of what is allowed. A system call not named below (one a
 * newer kernel adds, or one of the rarely used families) fails with ENOSYS, as if
 * the kernel did not have it, so programs take their fallback. The groups the
 * README names as refused get a plain error of their own (EPERM, or ENOSYS where a
 * fallback is the point), so that a refusal reads as one.
 *
 * Usage: seccomp-gen > seccomp_program.h
 */
#define _GNU_SOURCE

#include <errno.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* What every program needs, and what the sandbox lets it do: files, memory,
 * processes, signals, time, IPC, sockets (their families filtered below), and,
 * for nesting, namespaces, mount, pivot_root, chroot, setns, seccomp and Landlock. */
static const char *const ALLOWED[] = {
    /* files and descriptors */
    "read", "write", "open", "openat", "openat2", "close", "close_range", "creat", "lseek", "_llseek",
    "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2",
    "stat", "fstat", "lstat", "newfstatat", "statx", "stat64", "fstat64", "lstat64", "fstatat64",
    "statfs", "fstatfs", "statfs64", "fstatfs64", "access", "faccessat", "faccessat2",
    "dup", "dup2", "dup3", "pipe", "pipe2", "fcntl", "fcntl64", "flock", "fsync", "fdatasync", "syncfs",
    "sync", "sync_file_range", "sync_file_range2", "arm_sync_file_range", "truncate", "ftruncate",
    "truncate64", "ftruncate64", "fallocate", "fadvise64", "fadvise64_64", "arm_fadvise64_64", "readahead",
    "getdents", "getdents64", "getcwd", "chdir", "fchdir", "rename", "renameat", "renameat2",
    "mkdir", "mkdirat", "rmdir", "link", "linkat", "unlink", "unlinkat", "symlink", "symlinkat",
    "readlink", "readlinkat", "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat",
    "chown32", "fchown32", "lchown32", "umask", "utime", "utimes", "futimesat", "utimensat",
    "utimensat_time64", "mknod", "mknodat", "setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr",
    "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    "sendfile", "sendfile64", "splice", "tee", "vmsplice", "copy_file_range", "ioctl",
    "select", "_newselect", "pselect6", "pselect6_time64", "poll", "ppoll", "ppoll_time64",
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2",
    "eventfd", "eventfd2", "signalfd", "signalfd4", "timerfd_create", "timerfd_settime", "timerfd_gettime",
    "timerfd_settime64", "timerfd_gettime64", "inotify_init", "inotify_init1", "inotify_add_watch",
    "inotify_rm_watch", "memfd_create",
    /* POSIX asynchronous I/O (not io_uring) */
    "io_setup", "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64", "io_submit",
    "io_cancel",
    /* memory */
    "brk", "mmap", "mmap2", "munmap", "mremap", "mprotect", "msync", "mincore", "madvise", "mlock", "mlock2",
    "munlock", "mlockall", "munlockall", "remap_file_pages", "membarrier", "pkey_alloc", "pkey_free",
    "pkey_mprotect",
    /* processes and threads */
    "clone", "clone3", "fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4", "waitid",
    "waitpid", "kill", "tkill", "tgkill", "getpid", "gettid", "getppid", "getpgid", "setpgid", "getpgrp",
    "getsid", "setsid", "set_tid_address", "set_robust_list", "get_robust_list", "futex", "futex_time64",
    "futex_waitv", "rseq", "restart_syscall", "arch_prctl", "set_thread_area", "get_thread_area",
    "set_tls", "cacheflush", "breakpoint", "prctl", "seccomp", "uname", "sethostname", "setdomainname",
    "getuid", "geteuid", "getgid", "getegid", "getuid32", "geteuid32", "getgid32", "getegid32",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "getresuid", "getresgid",
    "setfsuid", "setfsgid", "getgroups", "setgroups", "setuid32", "setgid32", "setreuid32", "setregid32",
    "setresuid32", "setresgid32", "getresuid32", "getresgid32", "setfsuid32", "setfsgid32", "getgroups32",
    "setgroups32", "capget", "capset", "getrlimit", "setrlimit", "ugetrlimit", "prlimit64", "getrusage",
    "times", "sysinfo", "getpriority", "setpriority", "nice", "sched_yield", "sched_setparam",
    "sched_getparam", "sched_setscheduler", "sched_getscheduler", "sched_get_priority_max",
    "sched_get_priority_min", "sched_rr_get_interval", "sched_rr_get_interval_time64",
    "sched_setaffinity", "sched_getaffinity", "sched_setattr", "sched_getattr", "ioprio_get", "ioprio_set",
    "getcpu", "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    /* debuggers (gdb, strace): only this sandbox's processes are in sight */
    "ptrace", "process_vm_readv", "process_vm_writev",
    /* signals, timers, clocks (reading) */
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending", "rt_sigtimedwait",
    "rt_sigtimedwait_time64", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "rt_sigsuspend", "sigaltstack",
    "sigaction", "sigprocmask", "sigreturn", "sigpending", "sigsuspend", "signal", "pause", "alarm",
    "nanosleep", "clock_nanosleep", "clock_nanosleep_time64", "getitimer", "setitimer", "timer_create",
    "timer_settime", "timer_gettime", "timer_settime64", "timer_gettime64", "timer_getoverrun", "timer_delete",
    "clock_gettime", "clock_gettime64", "clock_getres", "clock_getres_time64", "gettimeofday", "time",
    "getrandom",
    /* System V and POSIX IPC (the sandbox's own IPC namespace) */
    "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semtimedop_time64", "semctl",
    "msgget", "msgsnd", "msgrcv", "msgctl", "ipc", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedsend_time64", "mq_timedreceive", "mq_timedreceive_time64", "mq_notify", "mq_getsetattr",
    /* sockets: socket() itself is filtered by family below */
    "connect", "accept", "accept4", "bind", "listen", "shutdown", "getsockname", "getpeername",
    "socketpair", "setsockopt", "getsockopt", "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg",
    "recvmmsg", "recvmmsg_time64", "send", "recv",
    /* nesting: a sandbox inside (bubblewrap, Codex's) makes namespaces, mounts, and filters */
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
    "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
};

/* Newer than this libseccomp's tables: by number, the same on every architecture
 * since the numbers were unified (424 and up). */
static const int ALLOWED_NUMBERS[] = {
    451, /* cachestat */
    452, /* fchmodat2 */
    453, /* map_shadow_stack */
    454, /* futex_wake */
    455, /* futex_wait */
    456, /* futex_requeue */
    462, /* mseal */
    463, /* setxattrat */
    464, /* getxattrat */
    465, /* listxattrat */
    466, /* removexattrat */
    468, /* file_getattr */
    469, /* file_setattr */
};

/* Refused with EPERM: the groups the README lists. */
static const char *const REFUSED[] = {
    /* kernel keyrings: not namespaced by path; the caller's keys are linkable */
    "add_key", "request_key", "keyctl",
    /* BPF programs and performance counters */
    "bpf", "perf_event_open",
    /* user-mode page-fault handling, the usual tool of kernel race exploits */
    "userfaultfd",
    /* the kernel itself: modules, kexec, reboot, swap, accounting, quotas, logs, clocks */
    "init_module", "finit_module", "delete_module", "create_module", "get_kernel_syms", "query_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "_sysctl", "syslog", "settimeofday", "clock_settime", "clock_settime64", "clock_adjtime",
    "clock_adjtime64", "adjtimex", "stime", "iopl", "ioperm", "vhangup", "nfsservctl", "lookup_dcookie",
    "uselib", "ustat", "sysfs",
    /* NUMA placement and page migration (move_pages) */
    "mbind", "set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages", "set_mempolicy_home_node",
    /* file handles (open_by_handle_at walks past the mounts), fanotify */
    "name_to_handle_at", "open_by_handle_at", "fanotify_init", "fanotify_mark",
    /* x86 segment and vm86 calls, secret memory, other processes' memory management */
    "modify_ldt", "vm86", "vm86old", "memfd_secret", "kcmp", "process_madvise", "process_mrelease",
};

/* Refused with ENOSYS: programs take their fallback (io_uring to threads or epoll,
 * libmount's new mount API to mount(2)). */
static const char *const ABSENT[] = {
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "fsopen", "fsconfig", "fsmount", "fspick", "open_tree", "move_mount", "mount_setattr",
};
static const int ABSENT_NUMBERS[] = {
    457, /* statmount */
    458, /* listmount */
    467, /* open_tree_attr */
};

/* Socket families allowed (Flatpak's list less AF_UNSPEC): all others EAFNOSUPPORT. */
static const int FAMILIES[] = {AF_UNIX, AF_INET, AF_INET6};
/* Netlink protocols allowed: routes and addresses, socket diagnostics (ss), audit
 * (login tools), device events. All others (netfilter, xfrm, generic, ...) EPROTONOSUPPORT. */
static const int NETLINK_PROTOCOLS[] = {NETLINK_ROUTE, NETLINK_SOCK_DIAG, NETLINK_AUDIT, NETLINK_KOBJECT_UEVENT};
/* personality(2) values allowed: Linux, 32-bit Linux, and the query. Others EPERM. */
static const uint32_t PERSONALITIES[] = {0x0u, 0x8u, 0xffffffffu};

static scmp_filter_ctx filter;

static void fail(const char *what, const char *name, int rc)
{
    fprintf(stderr, "seccomp-gen: %s %s: %s\n", what, name, strerror(-rc));
    exit(1);
}

/* Adds a rule for a syscall by name; a name this architecture does not have is skipped. */
static void by_name(uint32_t action, const char *name)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) {
        return;
    }
    int rc = seccomp_rule_add(filter, action, nr, 0);
    /* EACCES: the action is the filter's default already (ENOSYS) */
    if (rc != 0 && rc != -EOPNOTSUPP && rc != -EACCES) {
        fail("rule for", name, rc);
    }
}

/* Calls too new for this libseccomp: they keep the filter's default (ENOSYS). */
static int too_new;

static void by_number(uint32_t action, int nr)
{
    int rc = seccomp_rule_add(filter, action, nr, 0);
    if (rc != 0 && rc != -EACCES) {
        too_new++;
    }
}

/* A rule on the low 32 bits of one or two arguments (the kernel reads them as int). */
static void on_args(uint32_t action, const char *name, unsigned count, unsigned arg0, uint32_t value0,
    unsigned arg1, uint32_t value1)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) {
        return;
    }
    int rc;
    if (seccomp_arch_exist(filter, SCMP_ARCH_X86) == 0 && strcmp(name, "socket") == 0) {
        /* libseccomp sees socket(2) there as the socketcall multiplexer, whose arguments
         * hide the family: no socket rule, and 32-bit x86 programs get no sockets */
        return;
    }
    if (count == 1) {
        rc = seccomp_rule_add(filter, action, nr, 1, SCMP_CMP(arg0, SCMP_CMP_MASKED_EQ, 0xffffffffu, value0));
    } else {
        rc = seccomp_rule_add(filter, action, nr, 2, SCMP_CMP(arg0, SCMP_CMP_MASKED_EQ, 0xffffffffu, value0),
            SCMP_CMP(arg1, SCMP_CMP_MASKED_EQ, 0xffffffffu, value1));
    }
    if (rc != 0) {
        fail("argument rule for", name, rc);
    }
}

static int listed(const int *values, size_t n, int value)
{
    for (size_t i = 0; i < n; i++) {
        if (values[i] == value) {
            return 1;
        }
    }
    return 0;
}

/* The filter's rules for one architecture. */
static scmp_filter_ctx rules_for(uint32_t arch)
{
    filter = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
    if (filter == NULL) {
        fprintf(stderr, "seccomp-gen: seccomp_init failed\n");
        exit(1);
    }
    /* x32 (on x86-64) is not added: its calls get the bad-architecture action */
    seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(ENOSYS));
    if (arch != seccomp_arch_native()) {
        int rc = seccomp_arch_add(filter, arch);
        if (rc == 0) {
            rc = seccomp_arch_remove(filter, SCMP_ARCH_NATIVE);
        }
        if (rc != 0) {
            fail("architecture", "compat", rc);
        }
    }
    for (size_t i = 0; i < COUNT(ALLOWED); i++) {
        by_name(SCMP_ACT_ALLOW, ALLOWED[i]);
    }
    for (size_t i = 0; i < COUNT(ALLOWED_NUMBERS); i++) {
        by_number(SCMP_ACT_ALLOW, ALLOWED_NUMBERS[i]);
    }
    for (size_t i = 0; i < COUNT(REFUSED); i++) {
        by_name(SCMP_ACT_ERRNO(EPERM), REFUSED[i]);
    }
    for (size_t i = 0; i < COUNT(ABSENT); i++) {
        by_name(SCMP_ACT_ERRNO(ENOSYS), ABSENT[i]);
    }
    for (size_t i = 0; i < COUNT(ABSENT_NUMBERS); i++) {
        by_number(SCMP_ACT_ERRNO(ENOSYS), ABSENT_NUMBERS[i]);
    }
    /* socket(2) by family; netlink by protocol. Every family number the kernel
     * knows has a rule of its own, so no two rules overlap. */
    for (int family = 0; family < 64; family++) {
        if (listed(FAMILIES, COUNT(FAMILIES), family)) {
            on_args(SCMP_ACT_ALLOW, "socket", 1, 0, (uint32_t)family, 0, 0);
        } else if (family == AF_NETLINK) {
            for (int protocol = 0; protocol < 32; protocol++) {
                uint32_t action = listed(NETLINK_PROTOCOLS, COUNT(NETLINK_PROTOCOLS), protocol)
                    ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EPROTONOSUPPORT);
                on_args(action, "socket", 2, 0, (uint32_t)family, 2, (uint32_t)protocol);
            }
        } else {
            on_args(SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, 0, (uint32_t)family, 0, 0);
        }
    }
    for (size_t i = 0; i < COUNT(PERSONALITIES); i++) {
        on_args(SCMP_ACT_ALLOW, "personality", 1, 0, PERSONALITIES[i], 0, 0);
    }
    return filter;
}

/* A new filter that allows every call, of arch alone: the rules added to it are the
 * exceptions (the second and third filters). */
static void allowing_filter(uint32_t arch)
{
    filter = seccomp_init(SCMP_ACT_ALLOW);
    if (filter == NULL) {
        fprintf(stderr, "seccomp-gen: seccomp_init failed\n");
        exit(1);
    }
    seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
    if (arch != seccomp_arch_native()) {
        int rc = seccomp_arch_add(filter, arch);
        if (rc == 0) {
            rc = seccomp_arch_remove(filter, SCMP_ARCH_NATIVE);
        }
        if (rc != 0) {
            fail("architecture", "compat", rc);
        }
    }
}

/* The second filter, stacked on the first: everything allowed but TIOCSTI and
 * TIOCLINUX (see seccomp_filter.c). A filter of its own because libseccomp lets an
 * unconditional rule (ioctl allowed, above) win over a conditional one on the same
 * call; the kernel applies the stricter answer of the two filters. */
static scmp_filter_ctx terminal_rules_for(uint32_t arch)
{
    allowing_filter(arch);
    on_args(SCMP_ACT_ERRNO(EPERM), "ioctl", 1, 1, (uint32_t)TIOCSTI, 0, 0);
    on_args(SCMP_ACT_ERRNO(EPERM), "ioctl", 1, 1, (uint32_t)TIOCLINUX, 0, 0);
    return filter;
}

/* The third filter, only with the shared /tmp (unix_guard.c): connect(2), sendto(2) with
 * an address, and every sendmsg(2) and sendmmsg(2) (whose address is in memory, out of a
 * filter's sight) go to the sandbox's socket guard, which looks at the socket and the
 * address and answers for the kernel. Everything else is allowed (the first filter
 * decides). On the compat architecture all four go to the guard, which refuses them:
 * libseccomp sees 32-bit x86's sockets through socketcall(2), whose arguments are in
 * memory. */
static scmp_filter_ctx guard_rules_for(uint32_t arch)
{
    allowing_filter(arch);
    const char *const calls[] = {"connect", "sendto", "sendmsg", "sendmmsg"};
    for (size_t i = 0; i < COUNT(calls); i++) {
        int nr = seccomp_syscall_resolve_name(calls[i]);
        if (nr == __NR_SCMP_ERROR) {
            continue;
        }
        int rc;
        if (arch == seccomp_arch_native() && strcmp(calls[i], "sendto") == 0) {
            /* sendto without an address (send(2) as most C libraries make it) is left alone */
            rc = seccomp_rule_add(filter, SCMP_ACT_NOTIFY, nr, 1, SCMP_A4(SCMP_CMP_NE, 0));
        } else {
            rc = seccomp_rule_add(filter, SCMP_ACT_NOTIFY, nr, 0);
        }
        if (rc != 0) {
            fail("guard rule for", calls[i], rc);
        }
    }
    return filter;
}

/* Prints the filter's program as a C array NAME of NAME_LENGTH instructions. */
static void print_program(scmp_filter_ctx ctx, const char *name)
{
    FILE *bpf = tmpfile();
    if (bpf == NULL || seccomp_export_bpf(ctx, fileno(bpf)) != 0) {
        fprintf(stderr, "seccomp-gen: cannot export the filter\n");
        exit(1);
    }
    long size = ftell(bpf);
    rewind(bpf);
    if (size <= 0 || size % (long)sizeof(struct sock_filter) != 0) {
        fprintf(stderr, "seccomp-gen: unexpected program size %ld\n", size);
        exit(1);
    }
    printf("#define %s_LENGTH %ld\n", name, size / (long)sizeof(struct sock_filter));
    printf("static const struct sock_filter %s[%s_LENGTH] = {\n", name, name);
    struct sock_filter instruction;
    while (fread(&instruction, sizeof instruction, 1, bpf) == 1) {
        printf("    {0x%04x, %u, %u, 0x%08xu},\n", instruction.code, instruction.jt, instruction.jf, instruction.k);
    }
    printf("};\n");
    fclose(bpf);
}

int main(void)
{
    uint32_t native = seccomp_arch_native();
    uint32_t compat = native == SCMP_ARCH_X86_64 ? SCMP_ARCH_X86 : native == SCMP_ARCH_AARCH64 ? SCMP_ARCH_ARM : 0;
    scmp_filter_ctx all = rules_for(native);
    int unknown = too_new;
    if (compat != 0) {
        int rc = seccomp_merge(all, rules_for(compat));
        if (rc != 0) {
            fail("merge of", "the compat architecture", rc);
        }
    }
    if (unknown > 0) {
        fprintf(stderr, "seccomp-gen: note: %d newer system calls are unknown to libseccomp %u.%u: ENOSYS inside\n",
            unknown, seccomp_version()->major, seccomp_version()->minor);
    }
    /* a binary tree of the syscall numbers rather than one long chain */
    if (seccomp_attr_set(all, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0) {
        fprintf(stderr, "seccomp-gen: note: this libseccomp cannot build a binary tree; the filter is a chain\n");
    }
    scmp_filter_ctx terminal = terminal_rules_for(native);
    if (compat != 0) {
        int rc = seccomp_merge(terminal, terminal_rules_for(compat));
        if (rc != 0) {
            fail("merge of", "the compat architecture", rc);
        }
    }
    scmp_filter_ctx guard = guard_rules_for(native);
    if (compat != 0) {
        int rc = seccomp_merge(guard, guard_rules_for(compat));
        if (rc != 0) {
            fail("merge of", "the compat architecture", rc);
        }
    }
    printf("/* Generated by seccomp-gen (seccomp_gen.c) with libseccomp %u.%u.%u: do not edit. */\n",
        seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro);
    print_program(all, "SANDBOX_FILTER");
    print_program(terminal, "TERMINAL_FILTER");
    print_program(guard, "GUARD_FILTER");
    seccomp_release(guard);
    seccomp_release(terminal);
    seccomp_release(all);
    return 0;
}
