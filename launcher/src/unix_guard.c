// SPDX-License-Identifier: Apache-2.0
/*
 * The socket guard of the shared /tmp: see unix_guard.h.
 */
#define _GNU_SOURCE

#include "unix_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guard.h"
#include "seccomp_filter.h"
#include "util.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#else
#error "the socket guard knows the native architecture of x86-64, arm64 and riscv64 only"
#endif

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* At most this many bytes of one sendto(2) with an address are passed on at once: a
 * stream socket sends part (as the kernel may), a longer datagram is EMSGSIZE (UDP's
 * bound is 64 KiB, a Unix datagram's its send buffer, by default some 200 KiB). */
#define SEND_MAX (4 * 1024 * 1024)
/* At most this many bytes of a message's ancillary data, unless the kernel's own bound
 * (net.core.optmem_max, read at the first message) is lower: more is ENOBUFS, as from the
 * kernel. */
#define CONTROL_MAX (1024 * 1024)
/* At most this many pieces of one message (the kernel's UIO_MAXIOV): more is EMSGSIZE. */
#define PIECES_MAX 1024
/* At most this many descriptors in one message, as the kernel's SCM_MAX_FD: more is EINVAL. */
#define SCM_MAX_FD 253

/* The file systems of the shared /tmp: the guarded sockets are on them. */
static dev_t *guarded;
static int guarded_count;
/* Sockets the plan grants on those file systems, by identity. */
struct identity {
    dev_t dev;
    ino_t ino;
};
static struct identity *granted;
static int granted_count;
static int listener = -1;
/* Socket diagnostics sockets of nested sandboxes' network namespaces (register), by the
 * namespace's inode; the oldest goes first when there are more. */
#define NAMESPACES_MAX 32
static struct {
    int fd;
    ino_t ino;
} namespaces[NAMESPACES_MAX];
static int namespaces_count;
static int namespaces_next;

/* One call to answer: what the caller asked for, and what the guard made of it. */
struct call {
    __u64 id;
    int nr;
    int socket;             /* the caller's socket, taken */
    int file;               /* the Unix socket's file, opened as the caller finds it, or -1 */
    struct sockaddr_storage address;
    socklen_t address_length;
    char *data;             /* the bytes sent (sendmsg's pieces one after the other) */
    size_t data_length;
    int flags;
    char *control;          /* sendmsg's ancillary data, with the guard's own descriptors */
    size_t control_length;
    int passed[SCM_MAX_FD]; /* those descriptors, closed after the call */
    int passed_count;
    __u64 sent_length_at;   /* sendmmsg: where the first message's msg_len goes, or 0 */
    pid_t pid;              /* the caller */
};

/* A message header as the kernel reads it from the caller (its user_msghdr on a 64-bit
 * machine: the C library's own may differ, as musl's, whose lengths are ints with padding). */
struct caller_message {
    uint64_t name;
    int32_t name_length;
    uint64_t pieces;
    uint64_t piece_count;
    uint64_t control;
    uint64_t control_length;
    uint32_t flags;
};
/* sendmmsg's entries: such a header, then the message's msg_len (unsigned int). */
struct caller_entry {
    struct caller_message header;
    uint32_t length;
};
/* The header of one entry of a message's ancillary data, as the kernel reads it (its
 * struct cmsghdr on a 64-bit machine). */
struct caller_control {
    uint64_t length;
    int32_t level;
    int32_t type;
};
/* One piece of a message as the caller gives it (struct iovec on a 64-bit machine). */
struct caller_piece {
    uint64_t base;
    uint64_t length;
};

/* Frees a call and closes what it holds. */
static void release(struct call *call)
{
    if (call->socket >= 0) {
        close(call->socket);
    }
    if (call->file >= 0) {
        close(call->file);
    }
    for (int i = 0; i < call->passed_count; i++) {
        close(call->passed[i]);
    }
    free(call->data);
    free(call->control);
    free(call);
}

int unix_guard_wanted(void)
{
    return getenv(UNIX_GUARD_VARIABLE) != NULL;
}

/* ioctl(2) on the listener, through syscall(2): musl's ioctl takes the request as an int */
static int on_listener(unsigned long request, void *argument)
{
    return (int)syscall(SYS_ioctl, listener, request, argument);
}

static void answer(__u64 id, long long value, int error)
{
    struct seccomp_notif_resp response;
    memset(&response, 0, sizeof response);
    response.id = id;
    response.val = error != 0 ? 0 : value;
    response.error = error != 0 ? -error : 0;
    /* ENOENT: the caller is gone, or was interrupted and asks again */
    if (on_listener(SECCOMP_IOCTL_NOTIF_SEND, &response) != 0 && errno != ENOENT) {
        /* nothing else to do: the caller waits until it is interrupted */
    }
}

/* Whether the caller still waits for this answer (its pid still names it). */
static int waiting(__u64 id)
{
    __u64 copy = id;
    return on_listener(SECCOMP_IOCTL_NOTIF_ID_VALID, &copy) == 0;
}

/* A pidfd of the calling thread (or of its process), or -1. */
static int open_caller(pid_t pid)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0 && (errno == EINVAL || errno == ENOENT)) {
        /* a thread other than the leader: the thread itself (Linux 6.9), or its process */
        fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
        if (fd < 0) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
            FILE *status = fopen(path, "re");
            long group = -1;
            if (status != NULL) {
                char line[256];
                while (fgets(line, sizeof line, status) != NULL) {
                    if (sscanf(line, "Tgid: %ld", &group) == 1) {
                        break;
                    }
                }
                fclose(status);
            }
            fd = group > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)group, 0) : -1;
        }
    }
    return fd;
}

/* Reads length bytes at address in the caller's memory: 0, or -1. */
static int read_caller(pid_t pid, __u64 address, void *buffer, size_t length)
{
    if (length == 0) {
        return 0;
    }
    struct iovec local = {.iov_base = buffer, .iov_len = length};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = length};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)length ? 0 : -1;
}

/* openat2(2) in the caller's root: absolute links and ".." stay inside it. */
static int open_in_root(int root, const char *path)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT;
    int fd;
    int tries = 0;
    do {
        /* EAGAIN: a rename while ".." was looked up; the kernel asks to try again */
        fd = (int)syscall(SYS_openat2, root, path, &how, sizeof how);
    } while (fd < 0 && errno == EAGAIN && ++tries < 8);
    return fd;
}

/*
 * The file a Unix socket path names, as the caller would find it: an O_PATH descriptor,
 * or -1 with errno. An absolute path from the caller's root, a relative one from its
 * working directory (in its root), and /proc/self/fd/N[/NAME] through its descriptor N.
 */
static int open_as_caller(pid_t pid, int pidfd, const char *path)
{
    const char *fd_prefixes[] = {"/proc/self/fd/", "/proc/thread-self/fd/"};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(fd_prefixes[i]);
        if (strncmp(path, fd_prefixes[i], n) == 0 && path[n] >= '0' && path[n] <= '9') {
            char *end;
            long number = strtol(path + n, &end, 10);
            if ((*end != '\0' && *end != '/') || number > INT_MAX) {
                errno = ENOENT;
                return -1;
            }
            int taken = (int)syscall(SYS_pidfd_getfd, pidfd, (int)number, 0);
            if (taken < 0 || *end == '\0') {
                return taken;
            }
            int file = openat(taken, end + 1, O_PATH | O_CLOEXEC);
            int error = errno;
            close(taken);
            errno = error;
            return file;
        }
    }
    char where[64];
    snprintf(where, sizeof where, "/proc/%d/root", (int)pid);
    int root = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) {
        return -1;
    }
    int file;
    if (path[0] == '/') {
        file = open_in_root(root, path);
    } else {
        char cwd[PATH_MAX];
        char joined[PATH_MAX + 110];
        snprintf(where, sizeof where, "/proc/%d/cwd", (int)pid);
        ssize_t n = readlink(where, cwd, sizeof cwd - 1);
        if (n > 0 && cwd[0] == '/') {
            cwd[n] = '\0';
            int length = snprintf(joined, sizeof joined, "%s/%s", cwd, path);
            if (length < 0 || (size_t)length >= sizeof joined) {
                close(root);
                errno = ENAMETOOLONG;
                return -1;
            }
            file = open_in_root(root, joined);
        } else {
            /* a working directory outside the caller's root: from there */
            int dir = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
            file = dir < 0 ? -1 : openat(dir, path, O_PATH | O_CLOEXEC);
            if (dir >= 0) {
                int error = errno;
                close(dir);
                errno = error;
            }
        }
    }
    int error = errno;
    close(root);
    errno = error;
    return file;
}

static int is_guarded_device(dev_t dev)
{
    for (int i = 0; i < guarded_count; i++) {
        if (guarded[i] == dev) {
            return 1;
        }
    }
    return 0;
}

static int is_granted(dev_t dev, ino_t ino)
{
    for (int i = 0; i < granted_count; i++) {
        if (granted[i].dev == dev && granted[i].ino == ino) {
            return 1;
        }
    }
    return 0;
}

static void add_guarded(dev_t dev)
{
    if (is_guarded_device(dev)) {
        return;
    }
    /* every one of them, however many: one left out would be a file system unguarded */
    guarded = realloc(guarded, (size_t)(guarded_count + 1) * sizeof *guarded);
    if (guarded == NULL) {
        die("--share-tmp: out of memory");
    }
    guarded[guarded_count++] = dev;
}

static void add_granted(const char *path)
{
    struct stat info;
    if (stat(path, &info) != 0 || !S_ISSOCK(info.st_mode) || is_granted(info.st_dev, info.st_ino)) {
        return;
    }
    granted = realloc(granted, (size_t)(granted_count + 1) * sizeof *granted);
    if (granted == NULL) {
        die("--share-tmp: out of memory");
    }
    granted[granted_count].dev = info.st_dev;
    granted[granted_count].ino = info.st_ino;
    granted_count++;
}

/* Undoes mountinfo's octal escapes in place. */
static void unescape_octal(char *text)
{
    char *out = text;
    for (char *in = text; *in != '\0';) {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0'
            && in[3] <= '7') {
            *out++ = (char)(((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
            in += 4;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

/*
 * What the guard guards and grants, read from the sandbox as it is when the command
 * starts: the file systems of /tmp and of the directories mounted below it; the sockets
 * mounted on their own anywhere (the Docker socket, the ssh-agent relay, the gpg-agent's)
 * and agent-sandbox's runtime sockets (its own and, nested, the outer one's).
 */
static void read_plan(void)
{
    /* Yama's ptrace_scope 2 and 3 keep even a parent from taking its child's socket */
    FILE *yama = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = 0;
    if (yama != NULL) {
        if (fscanf(yama, "%d", &scope) != 1) {
            scope = 0;
        }
        fclose(yama);
    }
    if (scope >= 2) {
        die("--share-tmp needs to look at the sandbox's sockets, which kernel.yama.ptrace_scope=%d forbids"
            " (1 or 0 allows it): run without --share-tmp", scope);
    }
    struct stat info;
    if (stat("/tmp", &info) != 0 || !S_ISDIR(info.st_mode)) {
        die("--share-tmp: no /tmp to guard in the sandbox");
    }
    add_guarded(info.st_dev);
    FILE *mounts = fopen("/proc/self/mountinfo", "re");
    if (mounts == NULL) {
        die("--share-tmp: cannot read the sandbox's mounts: %s", strerror(errno));
    }
    char line[3 * PATH_MAX];
    while (fgets(line, sizeof line, mounts) != NULL) {
        /* ID PARENT MAJOR:MINOR ROOT MOUNT-POINT ... */
        char *fields[5];
        char *cursor = line;
        int count = 0;
        while (count < 5 && (fields[count] = strsep(&cursor, " ")) != NULL) {
            count++;
        }
        if (count < 5) {
            continue;
        }
        char *point = fields[4];
        unescape_octal(point);
        if (stat(point, &info) != 0) {
            continue;
        }
        if (S_ISSOCK(info.st_mode)) {
            add_granted(point);
        } else if (S_ISDIR(info.st_mode) && (strcmp(point, "/tmp") == 0 || strncmp(point, "/tmp/", 5) == 0)) {
            add_guarded(info.st_dev);
        }
    }
    fclose(mounts);
    add_granted(RUNTIME "/" GUARD_SOCKET);
    add_granted(NET_SOCKET);
    add_granted(RUNTIME "/" RUNTIME_OUTER "/" GUARD_SOCKET);
    add_granted(RUNTIME "/" RUNTIME_OUTER "/net/socket");
}

/*
 * Whether a socket of the sandbox's network namespace is bound to the file dev:ino (the
 * sandbox made it): 1, 0, or -1 when the kernel's socket diagnostics cannot tell.
 */
static int bound_in(int fd, dev_t dev, ino_t ino)
{
    struct {
        struct nlmsghdr header;
        struct unix_diag_req request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    /* only the supervisor's main thread asks */
    static __u32 sequence;
    message.header.nlmsg_seq = ++sequence;
    message.request.sdiag_family = AF_UNIX;
    message.request.udiag_states = ~0u;
    message.request.udiag_show = UDIAG_SHOW_VFS;
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        return -1;
    }
    /* the kernel's device number: 12 bits of major, 20 of minor */
    unsigned int want_major = major(dev);
    unsigned int want_minor = minor(dev);
    int found = 0;
    static long buffer[8192];
    for (;;) {
        /* a nested sandbox's socket is shared with its first program until it closes it, and
         * a process with CAP_NET_ADMIN in that namespace could send to it: only the kernel's
         * answers to this request count (port 0, this sequence number, Unix sockets) */
        struct sockaddr_nl from;
        socklen_t from_length = sizeof from;
        memset(&from, 0, sizeof from);
        ssize_t got = recvfrom(fd, buffer, sizeof buffer, 0, (struct sockaddr *)&from, &from_length);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return -1;
        }
        if (from_length < sizeof from || from.nl_family != AF_NETLINK || from.nl_pid != 0) {
            continue;
        }
        size_t length = (size_t)got;
        size_t offset = 0;
        while (offset + sizeof(struct nlmsghdr) <= length) {
            struct nlmsghdr *header = (struct nlmsghdr *)((char *)buffer + offset);
            if (header->nlmsg_len < sizeof *header || offset + header->nlmsg_len > length) {
                break;
            }
            if (header->nlmsg_seq != sequence) {
                offset += NLMSG_ALIGN(header->nlmsg_len);
                continue;
            }
            if (header->nlmsg_type == NLMSG_DONE) {
                return found;
            }
            if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY
                || header->nlmsg_len < NLMSG_ALIGN(sizeof *header) + sizeof(struct unix_diag_msg)
                || ((struct unix_diag_msg *)((char *)header + NLMSG_ALIGN(sizeof *header)))->udiag_family != AF_UNIX) {
                return -1;
            }
            size_t at = NLMSG_ALIGN(sizeof *header) + NLMSG_ALIGN(sizeof(struct unix_diag_msg));
            while (at + sizeof(struct rtattr) <= header->nlmsg_len) {
                struct rtattr *attribute = (struct rtattr *)((char *)header + at);
                if (attribute->rta_len < sizeof *attribute || at + attribute->rta_len > header->nlmsg_len) {
                    break;
                }
                if (attribute->rta_type == UNIX_DIAG_VFS
                    && attribute->rta_len >= RTA_LENGTH(sizeof(struct unix_diag_vfs))) {
                    struct unix_diag_vfs vfs;
                    memcpy(&vfs, (char *)attribute + RTA_LENGTH(0), sizeof vfs);
                    if (vfs.udiag_vfs_ino == ino && (vfs.udiag_vfs_dev >> 20) == want_major
                        && (vfs.udiag_vfs_dev & 0xfffffu) == want_minor) {
                        found = 1;
                    }
                }
                at += RTA_ALIGN(attribute->rta_len);
            }
            offset += NLMSG_ALIGN(header->nlmsg_len);
        }
    }
}

/* A socket diagnostics socket of this process's network namespace, or -1. */
static int diagnostics_socket(void)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    struct timeval second = {.tv_sec = 1, .tv_usec = 0};
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * Whether a socket of the sandbox is bound to the file dev:ino (the sandbox made it): one
 * of the sandbox's network namespace, or of a nested sandbox's that registered. 1, 0, or
 * -1 when the kernel's socket diagnostics cannot tell.
 */
static int bound_inside(dev_t dev, ino_t ino)
{
    int fd = diagnostics_socket();
    if (fd < 0) {
        return -1;
    }
    int found = bound_in(fd, dev, ino);
    close(fd);
    for (int i = 0; i < namespaces_count && found != 1; i++) {
        if (bound_in(namespaces[i].fd, dev, ino) == 1) {
            found = 1;
        }
    }
    return found;
}

/*
 * A nested sandbox's socket diagnostics socket, handed over (UNIX_GUARD_REGISTER): kept
 * when its network namespace is one the sandbox made (this process has CAP_NET_ADMIN over
 * it, as the owner of the user namespace above it, which it has over no namespace of the
 * host's nor over the sandbox's own). 0, or an errno.
 */
static int register_namespace(int socket_fd)
{
    int protocol;
    socklen_t size = sizeof protocol;
    if (getsockopt(socket_fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &size) != 0 || protocol != NETLINK_SOCK_DIAG) {
        return EPERM;
    }
    int ns = ioctl(socket_fd, SIOCGSKNS);
    if (ns < 0) {
        return EPERM;
    }
    struct stat info;
    int error = fstat(ns, &info) == 0 ? 0 : EPERM;
    close(ns);
    for (int i = 0; error == 0 && i < namespaces_count; i++) {
        if (namespaces[i].ino == info.st_ino) {
            return 0;
        }
    }
    int kept = error == 0 ? fcntl(socket_fd, F_DUPFD_CLOEXEC, 3) : -1;
    if (kept < 0) {
        return EPERM;
    }
    struct timeval second = {.tv_sec = 1, .tv_usec = 0};
    setsockopt(kept, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second);
    if (namespaces_count < NAMESPACES_MAX) {
        namespaces_count++;
    } else {
        close(namespaces[namespaces_next].fd);
    }
    namespaces[namespaces_next].fd = kept;
    namespaces[namespaces_next].ino = info.st_ino;
    namespaces_next = (namespaces_next + 1) % NAMESPACES_MAX;
    return 0;
}

/* In a nested sandbox whose guard the outer one's stands for: this network namespace's
 * socket diagnostics handed to the outer guard, so that the nested sandbox's own sockets
 * in /tmp count as the sandbox's there too. Without an outer guard, nothing happens. */
static void register_with_outer(void)
{
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) {
        return;
    }
    struct sockaddr_nl guard;
    memset(&guard, 0, sizeof guard);
    guard.nl_family = AF_NETLINK;
    guard.nl_pid = UNIX_GUARD_REGISTER;
    if (connect(fd, (struct sockaddr *)&guard, sizeof guard) != 0) {
        /* no guard outside (this one's /tmp holds no host socket then) */
    }
    close(fd);
}

/* Writes length bytes at address in the caller's memory: 0, or -1. */
static int write_caller(pid_t pid, __u64 address, const void *buffer, size_t length)
{
    struct iovec local = {.iov_base = (void *)buffer, .iov_len = length};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = length};
    return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)length ? 0 : -1;
}

/* The send the caller asked for, made with the guard's copies; what sendmsg(2) returns. */
static ssize_t send_copy(struct call *call, int more_flags)
{
    struct iovec piece = {.iov_base = call->data, .iov_len = call->data_length};
    struct msghdr message = {
        .msg_name = call->address_length > 0 ? &call->address : NULL,
        .msg_namelen = call->address_length,
        .msg_iov = &piece,
        .msg_iovlen = 1,
        .msg_control = call->control_length > 0 ? call->control : NULL,
        .msg_controllen = (socklen_t)call->control_length, /* at most CONTROL_MAX */
    };
    return sendmsg(call->socket, &message, call->flags | more_flags);
}

/* Answers a send's result: sendmmsg's is the count of messages sent (one, whose length goes
 * into its msg_len), the others' the count of bytes. */
static void answer_send(struct call *call, pid_t pid, ssize_t sent)
{
    if (sent < 0 && errno == EPIPE && (call->flags & MSG_NOSIGNAL) == 0) {
        /* the kernel's SIGPIPE would have gone to the guard, which ignores it: the caller
         * gets it, as from its own send */
        int error = errno;
        kill(pid, SIGPIPE);
        errno = error;
    }
    if (sent >= 0 && call->sent_length_at != 0) {
        unsigned int length = (unsigned int)sent;
        /* the message went: a msg_len the caller made unwritable is its own affair */
        (void)write_caller(pid, call->sent_length_at, &length, sizeof length);
        sent = 1;
    }
    answer(call->id, sent < 0 ? 0 : (long long)sent, sent < 0 ? errno : 0);
}

/* Makes the call on the caller's socket and answers with its result; frees the call. */
static void perform(struct call *call)
{
    if (call->nr == SYS_connect) {
        int result = connect(call->socket, (struct sockaddr *)&call->address, call->address_length);
        answer(call->id, 0, result < 0 ? errno : 0);
    } else {
        answer_send(call, call->pid, send_copy(call, 0));
    }
    release(call);
}

/*
 * The calls that may block (a blocking socket) are made by worker threads, so that a slow
 * connect holds up no other call. The workers stay (a thread's start and end cost far more
 * than the call here); a new one starts when none is idle, up to WORKERS_MAX. Beyond that
 * and QUEUE_MAX calls waiting for a worker, a blocking call is answered EAGAIN (as a full
 * backlog answers a non-blocking connect), never made by the thread that answers the rest.
 */
#define WORKERS_MAX 64
#define QUEUE_MAX 64
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_ready = PTHREAD_COND_INITIALIZER;
static struct call *queue[QUEUE_MAX];
static int queue_head;
static int queue_count;
static int workers;
static int idle;

static void *work(void *unused)
{
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&queue_lock);
        idle++;
        while (queue_count == 0) {
            pthread_cond_wait(&queue_ready, &queue_lock);
        }
        idle--;
        struct call *call = queue[queue_head];
        queue_head = (queue_head + 1) % QUEUE_MAX;
        queue_count--;
        pthread_mutex_unlock(&queue_lock);
        perform(call);
    }
    return NULL;
}

/* Hands the call to a worker: 0, or -1 when none can take it (the caller makes it then). */
static int hand_over(struct call *call)
{
    pthread_mutex_lock(&queue_lock);
    if (idle <= queue_count) {
        pthread_t thread;
        pthread_attr_t attributes;
        int started = workers < WORKERS_MAX && pthread_attr_init(&attributes) == 0;
        if (started) {
            started = pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED) == 0
                && pthread_attr_setstacksize(&attributes, 64 * 1024) == 0
                && pthread_create(&thread, &attributes, work, NULL) == 0;
            pthread_attr_destroy(&attributes);
        }
        if (!started || queue_count == QUEUE_MAX) {
            pthread_mutex_unlock(&queue_lock);
            return -1;
        }
        workers++;
    }
    queue[(queue_head + queue_count) % QUEUE_MAX] = call;
    queue_count++;
    pthread_cond_signal(&queue_ready);
    pthread_mutex_unlock(&queue_lock);
    return 0;
}

/*
 * Copies the message of a sendmsg(2) (or sendmmsg's first) at header_at into call: its
 * pieces into one buffer, its ancillary data with each descriptor passed (SCM_RIGHTS)
 * replaced by the guard's own copy of the caller's, and where its address is. 0, or the
 * errno the kernel would give.
 */
static int read_message(pid_t pid, int pidfd, __u64 header_at, int type, struct call *call, __u64 *address_at,
                        long long *address_length)
{
    struct caller_message header;
    if (read_caller(pid, header_at, &header, sizeof header) != 0) {
        return EFAULT;
    }
    *address_at = header.name;
    *address_length = header.name == 0 ? 0 : (long long)header.name_length;
    if (header.piece_count > PIECES_MAX) {
        return EMSGSIZE;
    }
    size_t count = (size_t)header.piece_count;
    struct caller_piece *pieces = calloc(count > 0 ? count : 1, sizeof *pieces);
    if (pieces == NULL) {
        return ENOMEM;
    }
    if (read_caller(pid, header.pieces, pieces, count * sizeof *pieces) != 0) {
        free(pieces);
        return EFAULT;
    }
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        if (pieces[i].length > SEND_MAX || total + pieces[i].length > SEND_MAX) {
            if (type != SOCK_STREAM) {
                free(pieces);
                return EMSGSIZE;
            }
            pieces[i].length = SEND_MAX - total; /* a stream sends part, as the kernel may */
        }
        total += (size_t)pieces[i].length;
    }
    call->data = malloc(total > 0 ? total : 1);
    if (call->data == NULL) {
        free(pieces);
        return ENOMEM;
    }
    for (size_t i = 0; i < count; i++) {
        if (read_caller(pid, pieces[i].base, call->data + call->data_length, (size_t)pieces[i].length) != 0) {
            free(pieces);
            return EFAULT;
        }
        call->data_length += (size_t)pieces[i].length;
    }
    free(pieces);
    if (header.control_length == 0) {
        return 0;
    }
    static size_t control_max;
    if (control_max == 0) {
        control_max = CONTROL_MAX;
        FILE *bound = fopen("/proc/sys/net/core/optmem_max", "re");
        unsigned long value;
        if (bound != NULL) {
            if (fscanf(bound, "%lu", &value) == 1 && value > 0 && value < CONTROL_MAX) {
                control_max = (size_t)value;
            }
            fclose(bound);
        }
    }
    if (header.control_length > control_max) {
        return ENOBUFS;
    }
    call->control_length = (size_t)header.control_length;
    call->control = malloc(call->control_length);
    if (call->control == NULL) {
        return ENOMEM;
    }
    if (read_caller(pid, header.control, call->control, call->control_length) != 0) {
        return EFAULT;
    }
    /* the caller's descriptor numbers mean nothing here: each becomes the guard's copy
     * (the entries walked as the kernel walks them: a header of the kernel's layout, then
     * the data, each entry aligned to 8 bytes) */
    size_t at = 0;
    while (call->control_length - at >= sizeof(struct caller_control)) {
        struct caller_control entry;
        memcpy(&entry, call->control + at, sizeof entry);
        if (entry.length < sizeof entry || entry.length > call->control_length - at) {
            return EINVAL;
        }
        if (entry.level == SOL_SOCKET && entry.type == SCM_RIGHTS) {
            size_t numbers = (size_t)(entry.length - sizeof entry) / sizeof(int);
            if (numbers > (size_t)(SCM_MAX_FD - call->passed_count)) {
                return EINVAL;
            }
            char *data = call->control + at + sizeof entry;
            for (size_t i = 0; i < numbers; i++) {
                int number;
                memcpy(&number, data + i * sizeof number, sizeof number);
                int own = (int)syscall(SYS_pidfd_getfd, pidfd, number, 0);
                if (own < 0) {
                    return EBADF;
                }
                call->passed[call->passed_count++] = own;
                memcpy(data + i * sizeof own, &own, sizeof own);
            }
        }
        size_t aligned = ((size_t)entry.length + 7) & ~(size_t)7;
        if (aligned >= call->control_length - at) {
            break;
        }
        at += aligned;
    }
    return 0;
}

/*
 * One call: the answer it gets, or the call made (at once, or in a thread of its own when
 * the socket blocks). 0 when it is dealt with, or an errno to answer with.
 */
static int handle(const struct seccomp_notif *notification, struct call *call)
{
    if (notification->data.arch != NATIVE_ARCH) {
        return ENOSYS;
    }
    call->nr = notification->data.nr;
    int sends_message = call->nr == SYS_sendmsg || call->nr == SYS_sendmmsg;
    if (call->nr != SYS_connect && call->nr != SYS_sendto && !sends_message) {
        return ENOSYS;
    }
    pid_t pid = (pid_t)notification->pid;
    call->pid = pid;
    int pidfd = open_caller(pid);
    if (pidfd < 0 || !waiting(notification->id)) {
        if (pidfd >= 0) {
            close(pidfd);
        }
        return EPERM;
    }
    int error = 0;
    call->socket = (int)syscall(SYS_pidfd_getfd, pidfd, (int)notification->data.args[0], 0);
    if (call->socket < 0) {
        error = errno == EBADF ? EBADF : EPERM;
        goto done;
    }
    int domain;
    int type;
    socklen_t size = sizeof domain;
    if (getsockopt(call->socket, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0
        || getsockopt(call->socket, SOL_SOCKET, SO_TYPE, &type, &size) != 0) {
        error = errno == ENOTSOCK ? ENOTSOCK : EPERM;
        goto done;
    }
    __u64 address_at;
    long long address_length;
    if (call->nr == SYS_connect) {
        address_at = notification->data.args[1];
        address_length = (long long)(int)notification->data.args[2];
    } else if (sends_message) {
        __u64 header_at = notification->data.args[1];
        if (call->nr == SYS_sendmmsg) {
            /* one message per call, as the kernel may send fewer than asked: the caller
             * sends the rest with the next */
            if ((unsigned int)notification->data.args[2] == 0) {
                answer(notification->id, 0, 0);
                release(call);
                close(pidfd);
                return 0;
            }
            call->sent_length_at = header_at + offsetof(struct caller_entry, length);
            call->flags = (int)notification->data.args[3];
        } else {
            call->flags = (int)notification->data.args[2];
        }
        error = read_message(pid, pidfd, header_at, type, call, &address_at, &address_length);
        if (error != 0) {
            goto done;
        }
    } else {
        address_at = notification->data.args[4];
        address_length = (long long)(int)notification->data.args[5];
        call->flags = (int)notification->data.args[3];
        size_t length = (size_t)notification->data.args[2];
        if (length > SEND_MAX) {
            if (type != SOCK_STREAM) {
                error = EMSGSIZE;
                goto done;
            }
            length = SEND_MAX;
        }
        call->data = malloc(length > 0 ? length : 1);
        if (call->data == NULL) {
            error = ENOMEM;
            goto done;
        }
        call->data_length = length;
        if (read_caller(pid, notification->data.args[1], call->data, length) != 0) {
            error = EFAULT;
            goto done;
        }
    }
    if (address_length < 0 || address_length > (long long)sizeof call->address) {
        error = EINVAL;
        goto done;
    }
    call->address_length = (socklen_t)address_length;
    if (read_caller(pid, address_at, &call->address, call->address_length) != 0) {
        error = EFAULT;
        goto done;
    }
    struct sockaddr_nl *netlink_address = (struct sockaddr_nl *)&call->address;
    if (domain == AF_NETLINK && call->nr == SYS_connect && call->address_length >= sizeof *netlink_address
        && netlink_address->nl_family == AF_NETLINK && netlink_address->nl_pid == UNIX_GUARD_REGISTER) {
        error = register_namespace(call->socket);
        if (error == 0) {
            answer(notification->id, 0, 0);
            release(call);
        }
        goto done;
    }
    struct sockaddr_un *unix_address = (struct sockaddr_un *)&call->address;
    size_t path_at = offsetof(struct sockaddr_un, sun_path);
    if (domain == AF_UNIX && (call->nr == SYS_connect || type == SOCK_DGRAM) && call->address_length > path_at
        && unix_address->sun_family == AF_UNIX && unix_address->sun_path[0] != '\0') {
        /* a path (not an abstract name, which the sandbox's network namespace holds) */
        if (call->address_length > sizeof *unix_address) {
            error = EINVAL;
            goto done;
        }
        char path[sizeof unix_address->sun_path + 1];
        size_t length = call->address_length - path_at;
        memcpy(path, unix_address->sun_path, length);
        path[length] = '\0';
        call->file = open_as_caller(pid, pidfd, path);
        if (call->file < 0) {
            error = errno;
            goto done;
        }
        struct stat info;
        if (fstat(call->file, &info) != 0 || !S_ISSOCK(info.st_mode)) {
            error = ECONNREFUSED;
            goto done;
        }
        if (is_guarded_device(info.st_dev) && !is_granted(info.st_dev, info.st_ino)
            && bound_inside(info.st_dev, info.st_ino) != 1) {
            /* the host's (or, nested, the outer sandbox's), wherever and whenever made */
            error = ECONNREFUSED;
            goto done;
        }
        /* the file opened and checked, not the path, which may name another by now */
        int n = snprintf(unix_address->sun_path, sizeof unix_address->sun_path, "/proc/self/fd/%d", call->file);
        call->address_length = (socklen_t)(path_at + (size_t)n + 1);
    }
    if (!waiting(notification->id)) {
        error = EPERM;
        goto done;
    }
    int flags = fcntl(call->socket, F_GETFL);
    int blocks = flags >= 0 && (flags & O_NONBLOCK) == 0 && (call->nr == SYS_connect || (call->flags & MSG_DONTWAIT) == 0);
    close(pidfd);
    if (blocks && call->nr != SYS_connect && type != SOCK_STREAM) {
        /* a datagram goes whole or not at all: sent at once when it can be, and only a
         * full send buffer makes a worker wait for room */
        ssize_t sent = send_copy(call, MSG_DONTWAIT);
        if (sent >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            answer_send(call, pid, sent);
            release(call);
            return 0;
        }
    }
    if (!blocks) {
        perform(call);
    } else if (hand_over(call) != 0) {
        /* every worker waits on a call of its own and the queue is full: made here, the call
         * would hold up every other, so the caller is told to try again */
        answer(call->id, 0, EAGAIN);
        release(call);
    }
    return 0;
done:
    close(pidfd);
    return error;
}

static void serve(const struct seccomp_notif_sizes *sizes)
{
    size_t notification_size = sizes->seccomp_notif > sizeof(struct seccomp_notif)
        ? sizes->seccomp_notif : sizeof(struct seccomp_notif);
    struct seccomp_notif *notification = calloc(1, notification_size);
    if (notification == NULL) {
        return;
    }
    memset(notification, 0, notification_size);
    if (on_listener(SECCOMP_IOCTL_NOTIF_RECV, notification) != 0) {
        /* ENOENT: the caller went before it was read. Any other failure, again and again,
         * would make this loop spin: the listener is closed, and the filtered calls fail */
        static int failures;
        if (errno != ENOENT && errno != EINTR && ++failures > 1000) {
            int fd = listener;
            listener = -1;
            close(fd);
        }
        free(notification);
        return;
    }
    struct call *call = calloc(1, sizeof *call);
    int error = ENOMEM;
    if (call != NULL) {
        call->id = notification->id;
        call->socket = -1;
        call->file = -1;
        error = handle(notification, call);
    }
    if (error != 0) {
        answer(notification->id, 0, error);
        if (call != NULL) {
            release(call);
        }
    }
    free(notification);
}

/* The parent: answers the command's calls until the command ends, then ends as it did.
 * It tells the command to go on (on channel) once it can. */
__attribute__((noreturn))
static void supervise(pid_t command, int channel)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTSTP, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* the command's orphans come here rather than to the sandbox's init: they stay this
     * process's descendants, which a kernel with Yama's ptrace_scope 1 asks of pidfd_getfd
     * and process_vm_readv (a daemon started inside, an ssh ControlMaster); reaped here */
    sigset_t children;
    sigemptyset(&children);
    sigaddset(&children, SIGCHLD);
    int child = -1;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0 || sigprocmask(SIG_BLOCK, &children, NULL) != 0
        || (child = signalfd(-1, &children, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        kill(command, SIGKILL);
        die("--share-tmp: cannot watch the command: %s", strerror(errno));
    }
    struct seccomp_notif_sizes sizes;
    memset(&sizes, 0, sizeof sizes);
    if (listener >= 0 && syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
        memset(&sizes, 0, sizeof sizes);
    }
    /* the caller and the guard handed the processor to each other directly (Linux 6.6):
     * each call waits less; without it, as before */
    if (listener >= 0 && syscall(SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) != 0) {
        /* an older kernel */
    }
    /* the command may go on */
    if (write(channel, "!", 1) != 1) {
        kill(command, SIGKILL);
        die("--share-tmp: cannot start the socket guard: %s", strerror(errno));
    }
    close(channel);
    for (;;) {
        struct pollfd watch[2] = {
            {.fd = child, .events = POLLIN},
            {.fd = listener, .events = POLLIN},
        };
        if (poll(watch, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            _exit(1);
        }
        if (watch[0].revents != 0) {
            struct signalfd_siginfo info;
            while (read(child, &info, sizeof info) == (ssize_t)sizeof info) {
                /* one for several children, maybe: waitpid below looks at them all */
            }
            for (;;) {
                int status;
                pid_t done = waitpid(-1, &status, WNOHANG);
                if (done == command && (WIFEXITED(status) || WIFSIGNALED(status))) {
                    end_like(status);
                }
                if (done == 0 || (done < 0 && errno == ECHILD)) {
                    break;
                }
                if (done < 0 && errno != EINTR) {
                    _exit(1);
                }
            }
        }
        if (listener >= 0 && (watch[1].revents & POLLIN) != 0) {
            serve(&sizes);
        } else if (listener >= 0 && (watch[1].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
            /* no process under the filter any more */
            int fd = listener;
            listener = -1;
            close(fd);
        }
    }
}

/* The child's report to the parent: the listener's number with 0, or -1 and an errno. It is
 * written, not sent with SCM_RIGHTS: the child's sendmsg(2) goes to the guard already. */
static void report(int channel, int fd, int error)
{
    int words[2] = {fd, error};
    if (write(channel, words, sizeof words) != (ssize_t)sizeof words) {
        _exit(1);
    }
}

/* The parent's side of report: the listener, taken from the child, or -1 with *error set. */
static int receive(int channel, pid_t child, int *error)
{
    int words[2];
    ssize_t got;
    do {
        got = read(channel, words, sizeof words);
    } while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof words) {
        *error = EPROTO;
        return -1;
    }
    *error = words[1];
    if (words[0] < 0) {
        return -1;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
    int fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, words[0], 0);
    *error = fd < 0 ? errno : 0;
    if (pidfd >= 0) {
        close(pidfd);
    }
    return fd;
}

void unix_guard_start(void)
{
    const char *value = getenv(UNIX_GUARD_VARIABLE);
    if (value == NULL) {
        return;
    }
    int nested = strcmp(value, UNIX_GUARD_NESTED) == 0;
    unsetenv(UNIX_GUARD_VARIABLE);
    /* neither this process nor the helper started before it can be traced or read by the
     * command (the command gets the flag back at its exec) */
    if (prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0) {
        die("--share-tmp: cannot protect the socket guard: %s", strerror(errno));
    }
    read_plan();
    int channel[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
        die("--share-tmp: cannot start the socket guard: %s", strerror(errno));
    }
    pid_t command = fork();
    if (command < 0) {
        die("--share-tmp: cannot start the socket guard: %s", strerror(errno));
    }
    if (command == 0) {
        close(channel[0]);
        int fd = install_guard_filter();
        int error = fd < 0 ? errno : 0;
        /* for the parent to take the listener (pidfd_getfd): nothing but this process and
         * the helper runs in the sandbox yet, and the command's exec sets the flag anyway */
        if (fd >= 0 && prctl(PR_SET_DUMPABLE, 1L, 0L, 0L, 0L) != 0) {
            _exit(1);
        }
        report(channel[1], fd, error);
        /* the parent has the listener (or gave up) when it answers */
        char byte;
        if (read(channel[1], &byte, 1) != 1 || byte != '!') {
            _exit(1);
        }
        if (fd >= 0) {
            close(fd);
        }
        close(channel[1]);
        return;
    }
    close(channel[1]);
    int error;
    listener = receive(channel[0], command, &error);
    if (listener < 0 && !(nested && error == EBUSY)) {
        kill(command, SIGKILL);
        if (error == EBUSY) {
            die("--share-tmp: another seccomp supervisor watches this process (EBUSY), so the host's sockets"
                " in /tmp cannot be guarded: run without --share-tmp");
        }
        die("--share-tmp needs Linux 5.6 or later to keep the host's sockets in /tmp out of reach"
            " (seccomp user notification: %s): run without --share-tmp", strerror(error));
    }
    if (listener < 0) {
        /* nested with EBUSY: the outer sandbox's guard answers this one's calls too */
        register_with_outer();
    }
    supervise(command, channel[0]);
}
