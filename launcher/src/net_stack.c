// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's own network stack: see net_stack.h.
 *
 * bwrap makes the sandbox's namespaces, says the pid of the sandbox's first process on
 * --info-fd and waits on --block-fd before it sets the sandbox up. Meanwhile the attacher
 * (this file, a child of the process that becomes bwrap, ended with it) does, in order:
 *
 *  1. finds the user namespace that owns the sandbox's network namespace (bwrap nests
 *     the sandbox's processes one user namespace deeper, where only the user is mapped;
 *     the owner maps root, which slirp4netns's own sandbox needs to become);
 *  2. starts the anchor, a process in that user and network namespace, with every
 *     capability there: once bwrap has brought the sandbox's loopback up (nothing here
 *     changes the namespace beside bwrap's own setup of it), it adds a "prohibit" route for each address of the host's own
 *     interfaces, for link-local 169.254.0.0/16 (cloud metadata) and for fd00:ec2::254,
 *     so that no connection from inside leaves for them; the sandbox's processes never
 *     get a capability in that namespace to take the routes away;
 *  3. starts the stack, slirp4netns, against the anchor (it enters the anchor's
 *     namespaces, makes tap0, and confines itself: --enable-sandbox --enable-seccomp),
 *     with the host's loopback out of its reach (--disable-host-loopback) and an exit
 *     descriptor whose other end only the attacher holds;
 *  4. once the stack says it is ready, lets bwrap go on.
 *
 * The sandbox reaches the host's loopback, its own addresses and link-local addresses
 * through none of this. When a step fails, the attacher writes one line to its stderr
 * (bwrap's setup log, which the tool reports) and kills the sandbox before bwrap could go
 * on: a command never runs with a half-made network.
 */
#define _GNU_SOURCE

#include "net_stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/netlink.h>
#include <linux/nsfs.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "util.h"

/* At most this many addresses of the host's interfaces are blocked; more is an error. */
#define BLOCKED_MAX 256

struct blocked {
    int family;
    unsigned char prefix;
    unsigned char address[16];
};

static pid_t sandbox_pid = -1;
static pid_t bwrap_pid = -1;

/* One line on stderr (bwrap's setup log), the sandbox and bwrap killed, and the end:
 * bwrap never goes on without the stack. */
__attribute__((format(printf, 1, 2), noreturn))
static void fail(const char *format, ...)
{
    /* the line first: the tool reads the log as soon as bwrap has ended */
    char line[512];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    dprintf(STDERR_FILENO, "%s: cannot start the sandbox's network: %s\n", PROGRAM, line);
    if (sandbox_pid > 0) {
        kill(sandbox_pid, SIGKILL);
    }
    if (getppid() == bwrap_pid) {
        kill(bwrap_pid, SIGKILL); /* only bwrap: once it is gone, the parent is another process */
    }
    _exit(1);
}

/* The sandbox's first pid from bwrap's --info-fd ({"child-pid": N, ...}), or -1 when
 * bwrap ended first (its log says why). */
static pid_t read_child_pid(int info)
{
    char text[1024];
    size_t used = 0;
    for (;;) {
        ssize_t n = read(info, text + used, sizeof text - 1 - used);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        used += (size_t)n;
        text[used] = '\0';
        if (strchr(text, '}') != NULL || used == sizeof text - 1) {
            break;
        }
    }
    text[used] = '\0';
    const char *key = strstr(text, "\"child-pid\"");
    if (key == NULL) {
        return -1;
    }
    const char *colon = strchr(key, ':');
    if (colon == NULL) {
        return -1;
    }
    long pid = strtol(colon + 1, NULL, 10);
    return pid > 0 && pid < 1L << 30 ? (pid_t)pid : -1;
}

/* Every address of the host's interfaces but its loopback's, and the link-local and
 * metadata ranges; the count. */
static size_t host_addresses(struct blocked *out)
{
    size_t count = 0;
    out[count++] = (struct blocked){.family = AF_INET, .prefix = 16, .address = {169, 254}};
    struct blocked metadata6 = {.family = AF_INET6, .prefix = 128};
    inet_pton(AF_INET6, "fd00:ec2::254", metadata6.address);
    out[count++] = metadata6;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) {
        fail("cannot list the host's addresses: %s", strerror(errno));
    }
    for (struct ifaddrs *a = all; a != NULL; a = a->ifa_next) {
        if (a->ifa_addr == NULL) {
            continue;
        }
        struct blocked b = {.family = a->ifa_addr->sa_family};
        if (b.family == AF_INET) {
            b.prefix = 32;
            memcpy(b.address, &((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr, 4);
            if (b.address[0] == 127) {
                continue; /* the sandbox's own loopback has these */
            }
        } else if (b.family == AF_INET6) {
            b.prefix = 128;
            memcpy(b.address, &((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr, 16);
            static const unsigned char loopback6[16] = {[15] = 1};
            if (memcmp(b.address, loopback6, 16) == 0 || (b.address[0] == 0xfe && (b.address[1] & 0xc0) == 0x80)) {
                continue; /* ::1 is the sandbox's own; link-local ones never leave the link */
            }
        } else {
            continue;
        }
        if (count == BLOCKED_MAX) {
            fail("the host has more than %d addresses to keep out of the sandbox", BLOCKED_MAX - 2);
        }
        out[count++] = b;
    }
    freeifaddrs(all);
    return count;
}

/* Adds a "prohibit" route for b in this process's network namespace: 0, or an errno. */
static int prohibit(int netlink, const struct blocked *b, unsigned int sequence)
{
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        char attributes[64];
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_type = RTM_NEWROUTE;
    request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = (unsigned char)b->family;
    request.route.rtm_dst_len = b->prefix;
    request.route.rtm_table = RT_TABLE_MAIN;
    request.route.rtm_protocol = RTPROT_STATIC;
    request.route.rtm_scope = RT_SCOPE_UNIVERSE;
    request.route.rtm_type = RTN_PROHIBIT;
    size_t length = b->family == AF_INET ? 4 : 16;
    struct rtattr *destination = (struct rtattr *)(void *)request.attributes;
    destination->rta_type = RTA_DST;
    destination->rta_len = (unsigned short)RTA_LENGTH(length);
    memcpy(RTA_DATA(destination), b->address, length);
    request.header.nlmsg_len = (unsigned int)(NLMSG_LENGTH(sizeof request.route) + RTA_ALIGN(destination->rta_len));
    if (send(netlink, &request, request.header.nlmsg_len, 0) < 0) {
        return errno;
    }
    char answer[512];
    for (;;) {
        ssize_t n = recv(netlink, answer, sizeof answer, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
            return n < 0 ? errno : EPROTO;
        }
        struct nlmsghdr *h = (struct nlmsghdr *)(void *)answer;
        if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq != sequence) {
            continue;
        }
        int error = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
        return error == EEXIST ? 0 : error; /* an address on two interfaces */
    }
}

/* Whether the sandbox's loopback is up, as bwrap brings it up while it sets the sandbox up
 * (before it waits on --block-fd); waits for it up to NET_LOOPBACK_MILLIS. The stack and
 * the routes come after, never beside bwrap's own changes to the namespace. */
#define NET_LOOPBACK_MILLIS 10000
static int loopback_up(void)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        return 0;
    }
    for (int waited = 0; waited < NET_LOOPBACK_MILLIS; waited++) {
        struct ifreq request;
        memset(&request, 0, sizeof request);
        memcpy(request.ifr_name, "lo", 3);
        if (ioctl(s, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags & IFF_UP) != 0) {
            close(s);
            return 1;
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    close(s);
    return 0;
}

/* The anchor: in the sandbox's network namespace, as the owner of its user namespace,
 * blocks the host's addresses, says "ok" (or why not) on status, and stays until hold ends. */
__attribute__((noreturn))
static void anchor(int user, int net, const struct blocked *blocked, size_t count, int status, int hold)
{
    char why[256] = "ok";
    if (setns(user, CLONE_NEWUSER) != 0 || setns(net, CLONE_NEWNET) != 0) {
        snprintf(why, sizeof why, "cannot enter the sandbox's network namespace: %s", strerror(errno));
    } else if (!loopback_up()) {
        snprintf(why, sizeof why, "the sandbox's loopback did not come up");
    } else {
        int netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (netlink < 0) {
            snprintf(why, sizeof why, "cannot open a netlink socket: %s", strerror(errno));
        }
        for (size_t i = 0; netlink >= 0 && i < count; i++) {
            int error = prohibit(netlink, &blocked[i], (unsigned int)i + 1);
            if (error != 0) {
                char text[INET6_ADDRSTRLEN];
                inet_ntop(blocked[i].family, blocked[i].address, text, sizeof text);
                snprintf(why, sizeof why, "cannot block %s/%d inside the sandbox: %s", text, blocked[i].prefix,
                         strerror(error));
                break;
            }
        }
    }
    if (write_all(status, why, strlen(why)) != 0) {
        _exit(1);
    }
    close(status);
    char byte;
    while (read(hold, &byte, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
}

/* Starts the stack against the anchor; its pid. ready and quit are its ends of the pipes. */
static pid_t start_stack(const char *stack, pid_t anchor_pid, int ready, int quit)
{
    pid_t attacher = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    if (!dies_with(attacher, SIGKILL)) {
        _exit(127);
    }
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    close_others(ready, quit);
    if (fcntl(ready, F_SETFD, 0) != 0 || fcntl(quit, F_SETFD, 0) != 0) {
        _exit(127);
    }
    char ready_option[32];
    char quit_option[32];
    char target[32];
    snprintf(ready_option, sizeof ready_option, "--ready-fd=%d", ready);
    snprintf(quit_option, sizeof quit_option, "--exit-fd=%d", quit);
    snprintf(target, sizeof target, "%d", (int)anchor_pid);
    char *argv[] = {(char *)stack, (char *)"--configure", (char *)"--mtu=" NET_STACK_MTU,
                    (char *)"--disable-host-loopback", (char *)"--enable-sandbox", (char *)"--enable-seccomp",
                    ready_option, quit_option, target, (char *)NET_STACK_DEVICE, NULL};
    char *no_environment[] = {NULL};
    execve(stack, argv, no_environment);
    _exit(127);
}

/* The attacher: see the top of this file. */
__attribute__((noreturn))
static void attach(const char *stack, int info, int block)
{
    sandbox_pid = read_child_pid(info);
    close(info);
    if (sandbox_pid < 0) {
        _exit(0); /* bwrap ended before it made the sandbox: its log says why */
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)sandbox_pid);
    int net = open(path, O_RDONLY | O_CLOEXEC);
    if (net < 0) {
        fail("cannot open %s: %s", path, strerror(errno));
    }
    int user = ioctl(net, NS_GET_USERNS);
    if (user < 0) {
        fail("cannot find the owner of the sandbox's network namespace: %s", strerror(errno));
    }
    static struct blocked blocked[BLOCKED_MAX];
    size_t count = host_addresses(blocked);

    int status[2];
    int hold[2];
    if (pipe2(status, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) {
        fail("cannot make a pipe: %s", strerror(errno));
    }
    pid_t attacher = getpid();
    pid_t anchor_pid = fork();
    if (anchor_pid == 0) {
        if (!dies_with(attacher, SIGKILL)) {
            _exit(1);
        }
        close(status[0]);
        close(hold[1]);
        anchor(user, net, blocked, count, status[1], hold[0]);
    }
    if (anchor_pid < 0) {
        fail("cannot start a process: %s", strerror(errno));
    }
    close(status[1]);
    close(hold[0]);
    char why[257];
    ssize_t got;
    size_t used = 0;
    while ((got = read(status[0], why + used, sizeof why - 1 - used)) != 0) {
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 || (used += (size_t)got) == sizeof why - 1) {
            break;
        }
    }
    why[used] = '\0';
    close(status[0]);
    if (strcmp(why, "ok") != 0) {
        fail("%s", used > 0 ? why : "the process that blocks the host's addresses ended");
    }

    int ready[2];
    int quit[2];
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(quit, O_CLOEXEC) != 0) {
        fail("cannot make a pipe: %s", strerror(errno));
    }
    pid_t stack_pid = start_stack(stack, anchor_pid, ready[1], quit[0]);
    if (stack_pid < 0) {
        fail("cannot start %s: %s", stack, strerror(errno));
    }
    close(ready[1]);
    close(quit[0]);
    char byte;
    ssize_t n;
    while ((n = read(ready[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) {
        int wstatus = 0;
        waitpid(stack_pid, &wstatus, 0);
        if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127) {
            fail("cannot run %s", stack);
        }
        fail("%s ended before the network was up (status %d); see `agent-sandbox doctor`, or set"
             " AGENT_SANDBOX_NETWORK_STACK=proxy for the proxy", stack,
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus));
    }
    close(ready[0]);
    close(hold[1]); /* the anchor's work is done: the stack holds the namespace now */
    waitpid(anchor_pid, NULL, 0);
    if (write_all(block, "1", 1) != 0) {
        fail("cannot let bwrap go on: %s", strerror(errno));
    }
    close(block);
    /* the stack's exit descriptor (quit[1]) ends with this process, which ends with bwrap */
    while (waitpid(stack_pid, NULL, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
}

char *const *attach_net_stack(char *const *argv, char **env)
{
    static const char prefix[] = NET_STACK_VARIABLE "=";
    const char *stack = NULL;
    size_t kept = 0;
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], prefix, sizeof prefix - 1) == 0) {
            stack = env[i] + sizeof prefix - 1;
        } else {
            env[kept++] = env[i];
        }
    }
    env[kept] = NULL;
    if (stack == NULL) {
        return argv;
    }
    if (stack[0] != '/') {
        die("%s must name the stack's program by its absolute path", NET_STACK_VARIABLE);
    }
    /* bwrap writes the info end and reads the block end; the attacher has the others */
    int info[2];
    int block[2];
    if (pipe2(info, O_CLOEXEC) != 0 || pipe2(block, O_CLOEXEC) != 0) {
        die("cannot make a pipe: %s", strerror(errno));
    }
    if (fcntl(info[1], F_SETFD, 0) != 0 || fcntl(block[0], F_SETFD, 0) != 0) {
        die("cannot pass a pipe to bwrap: %s", strerror(errno));
    }
    pid_t bwrap = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        die("cannot start a process: %s", strerror(errno));
    }
    if (pid == 0) {
        if (!dies_with(bwrap, SIGKILL)) {
            _exit(1);
        }
        bwrap_pid = bwrap;
        close(info[1]);
        close(block[0]);
        /* nothing of the caller's but the standard streams (stderr: bwrap's setup log) */
        close_others(info[0], block[1]);
        attach(stack, info[0], block[1]);
    }
    close(info[0]);
    close(block[1]);
    size_t count = 0;
    while (argv[count] != NULL) {
        count++;
    }
    char **out = calloc(count + 5, sizeof *out);
    static char info_fd[16];
    static char block_fd[16];
    if (out == NULL) {
        die("out of memory");
    }
    snprintf(info_fd, sizeof info_fd, "%d", info[1]);
    snprintf(block_fd, sizeof block_fd, "%d", block[0]);
    out[0] = argv[0];
    out[1] = (char *)"--info-fd";
    out[2] = info_fd;
    out[3] = (char *)"--block-fd";
    out[4] = block_fd;
    for (size_t i = 1; i <= count; i++) {
        out[i + 4] = argv[i];
    }
    return out;
}
