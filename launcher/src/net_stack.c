// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's own network stack: see net_stack.h.
 *
 * bwrap makes the sandbox's namespaces, brings the sandbox's loopback up, says the pid of
 * the sandbox's first process on --info-fd and sets the sandbox up. Meanwhile the
 * attacher (this file, a child of the process that becomes bwrap, ended with it) does, in
 * order:
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
 *  4. once the host's addresses are blocked and the stack says it is ready (and, with an
 *     allow-list, the DNS filter serves), opens the gate: the sandbox's first program,
 *     which bwrap starts meanwhile, waits on it (NET_GATE_VARIABLE) before the command
 *     runs. All of this goes on while bwrap sets the sandbox up.
 *
 * With an allow-list (NET_ALLOW_VARIABLE), the anchor stays: once the stack is up, it
 * replaces the default route by a "prohibit" one (and blocks the stack's own resolver and
 * gateway), then serves DNS on the sandbox's loopback (NET_FILTER_RESOLVER, which the
 * sandbox's resolv.conf names) as the DNS filter: a name on the list is asked of the
 * host's resolver (through a socket made in the host's namespace before the anchor left
 * it) and each IPv4 address of the answer gets a route through the stack before the
 * answer goes back (never one the anchor blocks: see routable); any other name is answered NXDOMAIN and written, once, to the run's
 * record (NET_REFUSED_VARIABLE, opened on the host side before). So only the addresses of
 * allowed names are reachable, for every program. Before it reads anything from the
 * sandbox, the anchor confines itself (confine_filter): an empty root, and only
 * CAP_NET_ADMIN of its capabilities.
 *
 * The sandbox reaches the host's loopback, its own addresses and link-local addresses
 * through none of this. When a step fails, the attacher writes one line to its stderr
 * (bwrap's setup log, which the tool reports) and kills the sandbox and bwrap without
 * opening the gate: a command never runs with a half-made network.
 */
#define _GNU_SOURCE

#include "net_stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/nsfs.h>
#include <linux/rtnetlink.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "net_filter.h"
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

/* With an allow-list: the list, and the descriptors the filter gets from the host side. */
static const char *allow_list;
static const char *refused_path;
struct filter {
    int upstream; /* a UDP socket of the host's namespace, connected to the host's resolver */
    int record;   /* the run's record of refused names, opened for appending */
    int status;   /* where the anchor says "ok" (or why not) once the filter serves */
};

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

static int acknowledged(int netlink, unsigned int sequence);

/* Changes a route (RTM_NEWROUTE with flags, or RTM_DELROUTE) of type for b in this process's
 * network namespace, through gateway (IPv4) on the device oif when oif is not 0: 0, or an
 * errno (EEXIST taken as done). */
static int route(int netlink, int command, unsigned short flags, unsigned char type, const struct blocked *b,
                 int oif, const unsigned char *gateway, unsigned int sequence)
{
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        char attributes[64];
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_type = (unsigned short)command;
    request.header.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | NLM_F_ACK | flags);
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = (unsigned char)b->family;
    request.route.rtm_dst_len = b->prefix;
    request.route.rtm_table = RT_TABLE_MAIN;
    request.route.rtm_protocol = RTPROT_STATIC;
    request.route.rtm_scope = RT_SCOPE_UNIVERSE;
    request.route.rtm_type = type;
    if (command == RTM_DELROUTE) {
        request.route.rtm_protocol = 0; /* any route of the destination, whoever made it */
        request.route.rtm_scope = RT_SCOPE_NOWHERE;
    }
    size_t length = b->family == AF_INET ? 4 : 16;
    size_t used = 0;
    if (b->prefix > 0) {
        struct rtattr *destination = (struct rtattr *)(void *)request.attributes;
        destination->rta_type = RTA_DST;
        destination->rta_len = (unsigned short)RTA_LENGTH(length);
        memcpy(RTA_DATA(destination), b->address, length);
        used += RTA_ALIGN(destination->rta_len);
    }
    if (oif != 0) {
        struct rtattr *device = (struct rtattr *)(void *)(request.attributes + used);
        device->rta_type = RTA_OIF;
        device->rta_len = (unsigned short)RTA_LENGTH(sizeof oif);
        memcpy(RTA_DATA(device), &oif, sizeof oif);
        used += RTA_ALIGN(device->rta_len);
        struct rtattr *via = (struct rtattr *)(void *)(request.attributes + used);
        via->rta_type = RTA_GATEWAY;
        via->rta_len = (unsigned short)RTA_LENGTH(4);
        memcpy(RTA_DATA(via), gateway, 4);
        used += RTA_ALIGN(via->rta_len);
        request.route.rtm_flags = RTNH_F_ONLINK;
    }
    request.header.nlmsg_len = (unsigned int)(NLMSG_LENGTH(sizeof request.route) + used);
    if (send(netlink, &request, request.header.nlmsg_len, 0) < 0) {
        return errno;
    }
    return acknowledged(netlink, sequence);
}

/* The kernel's answer to the netlink request of sequence: 0, or an errno (EEXIST taken as
 * done: an address on two interfaces). */
static int acknowledged(int netlink, unsigned int sequence)
{
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

/* Makes address (IPv4) one of this namespace's own, on device: what is sent to it, on any
 * interface, stays inside the namespace. 0, or an errno. */
static int own_address(int netlink, int device, const unsigned char *address, unsigned int sequence)
{
    struct {
        struct nlmsghdr header;
        struct ifaddrmsg a;
        char attributes[32];
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_type = RTM_NEWADDR;
    request.header.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    request.header.nlmsg_seq = sequence;
    request.a.ifa_family = AF_INET;
    request.a.ifa_prefixlen = 32;
    request.a.ifa_scope = RT_SCOPE_HOST;
    request.a.ifa_index = (unsigned int)device;
    struct rtattr *local = (struct rtattr *)(void *)request.attributes;
    local->rta_type = IFA_LOCAL;
    local->rta_len = (unsigned short)RTA_LENGTH(4);
    memcpy(RTA_DATA(local), address, 4);
    request.header.nlmsg_len = (unsigned int)(NLMSG_LENGTH(sizeof request.a) + RTA_ALIGN(local->rta_len));
    if (send(netlink, &request, request.header.nlmsg_len, 0) < 0) {
        return errno;
    }
    return acknowledged(netlink, sequence);
}

/* Adds a "prohibit" route for b: 0, or an errno. */
static int prohibit(int netlink, const struct blocked *b, unsigned int sequence)
{
    return route(netlink, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, RTN_PROHIBIT, b, 0, NULL, sequence);
}

/* Whether the sandbox's loopback is up, as bwrap brings it up first when it sets the
 * sandbox up (its last change to the namespace); waits for it up to NET_LOOPBACK_MILLIS.
 * The stack and the routes come after, never beside bwrap's own changes to the namespace. */
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

/* The stack's gateway and resolver, as the sandbox sees them. */
static const unsigned char stack_gateway[4] = {10, 0, 2, 2};
static const unsigned char stack_resolver[4] = {10, 0, 2, 3};

/* At most this many addresses of allowed names get a route; later ones stay unreachable. */
#define ROUTES_MAX 8192
/* At most this many refused names are recorded per run, each once. */
#define RECORDED_MAX 1000
/* Queries waiting for the host's resolver; the oldest goes when more come. */
#define PENDING_MAX 64
#define PENDING_MILLIS 5000

/* Confines the filter before it reads anything from the sandbox: an empty root of its own
 * (the directory of a process's fd info, gone with it), no way back to root's capabilities,
 * and only CAP_NET_ADMIN (routes) kept. 0, or an errno. */
static int confine_filter(void)
{
    if (chroot("/proc/self/fdinfo") != 0 || chdir("/") != 0) {
        return errno;
    }
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
                                     | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) != 0) {
        return errno;
    }
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    data[0].effective = data[0].permitted = 1U << CAP_NET_ADMIN;
    if (syscall(SYS_capset, &header, data) != 0) {
        return errno;
    }
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
}

/* The record of a refused name: one line, each name once (among the last ones), bounded. */
static void record_refusal(int record, const char *name)
{
    static char recent[32][DNS_NAME_MAX];
    static unsigned int next;
    static unsigned int recorded;
    for (unsigned int i = 0; i < 32; i++) {
        if (strcmp(recent[i], name) == 0) {
            return;
        }
    }
    snprintf(recent[next++ % 32], DNS_NAME_MAX, "%s", name);
    if (recorded >= RECORDED_MAX) {
        return;
    }
    recorded++;
    char when[32] = "";
    time_t now = time(NULL);
    struct tm t;
    if (gmtime_r(&now, &t) != NULL) {
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &t);
    }
    char line[DNS_NAME_MAX + 128];
    int length = snprintf(line, sizeof line, "%s\tnot on the network's allow-list (a DNS query, %s)\n", name, when);
    if (length > 0 && (size_t)length < sizeof line) {
        (void)write_all(record, line, (size_t)length);
    }
}

struct pending {
    int used;
    uint16_t id;        /* ours, toward the host's resolver */
    uint8_t client_id[2];
    long since;
    struct sockaddr_in client;
};

/* A query id toward the host's resolver: unpredictable, so no answer is taken for another. */
static uint16_t next_id(void)
{
    static uint64_t state;
    if (state == 0) {
        if (syscall(SYS_getrandom, &state, sizeof state, 0) != (long)sizeof state || state == 0) {
            state = (uint64_t)now_millis() * 0x9e3779b97f4a7c15ULL | 1;
        }
    }
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint16_t)(state >> 24);
}

/* Whether IPv4 address a is in net/prefix. */
static int ipv4_in(const unsigned char a[4], const unsigned char net[4], unsigned int prefix)
{
    for (unsigned int bit = 0; bit < prefix; bit++) {
        unsigned char mask = (unsigned char)(0x80u >> (bit % 8));
        if ((a[bit / 8] & mask) != (net[bit / 8] & mask)) {
            return 0;
        }
    }
    return 1;
}

/* Whether an address a DNS answer gave may get a route through the stack: never one the
 * anchor blocked (the host's own, link-local and so the cloud metadata service: a route for
 * one address would win over the "prohibit" route of its range), nor one of the ranges no
 * host outside has (this network, loopback, the stack's own, multicast, reserved). */
static int routable(const unsigned char a[4], const struct blocked *blocked, size_t count)
{
    static const struct {
        unsigned char net[4];
        unsigned int prefix;
    } never[] = {{{0, 0, 0, 0}, 8}, {{127, 0, 0, 0}, 8}, {{10, 0, 2, 0}, 24}, {{224, 0, 0, 0}, 4},
                 {{240, 0, 0, 0}, 4}};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        if (ipv4_in(a, never[i].net, never[i].prefix)) {
            return 0;
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (blocked[i].family == AF_INET && ipv4_in(a, blocked[i].address, blocked[i].prefix)) {
            return 0;
        }
    }
    return 1;
}

/* The DNS filter (see the top of this file): serves listen until the anchor is killed. */
__attribute__((noreturn))
static void serve_filter(int listen_socket, const struct filter *f, int netlink, int device,
                         const struct blocked *blocked, size_t count)
{
    static struct pending pending[PENDING_MAX];
    static uint8_t message[DNS_MESSAGE_MAX];
    static uint32_t routed[ROUTES_MAX]; /* the addresses routed so far, each once */
    unsigned int routes = 0;
    unsigned int sequence = 1000;
    for (;;) {
        struct pollfd fds[2] = {{.fd = listen_socket, .events = POLLIN}, {.fd = f->upstream, .events = POLLIN}};
        if (poll(fds, 2, 1000) < 0 && errno != EINTR) {
            _exit(1);
        }
        long now = now_millis();
        for (size_t i = 0; i < PENDING_MAX; i++) {
            if (pending[i].used && now - pending[i].since > PENDING_MILLIS) {
                pending[i].used = 0; /* the client asks again */
            }
        }
        if ((fds[0].revents & POLLIN) != 0) {
            struct sockaddr_in from;
            socklen_t from_length = sizeof from;
            ssize_t n = recvfrom(listen_socket, message, sizeof message, MSG_DONTWAIT, (struct sockaddr *)&from,
                                 &from_length);
            char name[DNS_NAME_MAX];
            size_t end = 0;
            int kind = n > 0 ? dns_query_name(message, (size_t)n, name, &end) : -1;
            if (kind < 0 || from_length != sizeof from) {
                /* not a query the filter reads: no answer */
            } else if (kind == 1 || !dns_name_allowed(allow_list, name)) {
                record_refusal(f->record, name);
                size_t length = dns_refuse(message, end);
                (void)sendto(listen_socket, message, length, MSG_DONTWAIT, (struct sockaddr *)&from, from_length);
            } else {
                size_t slot = 0;
                for (size_t i = 0; i < PENDING_MAX; i++) {
                    if (!pending[i].used) {
                        slot = i;
                        break;
                    }
                    if (pending[i].since < pending[slot].since) {
                        slot = i;
                    }
                }
                struct pending *p = &pending[slot];
                p->used = 1;
                p->id = next_id();
                memcpy(p->client_id, message, 2);
                p->since = now;
                p->client = from;
                message[0] = (uint8_t)(p->id >> 8);
                message[1] = (uint8_t)p->id;
                (void)send(f->upstream, message, (size_t)n, MSG_DONTWAIT);
            }
        }
        if ((fds[1].revents & POLLIN) != 0) {
            ssize_t n = recv(f->upstream, message, sizeof message, MSG_DONTWAIT);
            if (n < DNS_HEADER) {
                continue;
            }
            uint16_t id = (uint16_t)(message[0] << 8 | message[1]);
            struct pending *p = NULL;
            for (size_t i = 0; i < PENDING_MAX; i++) {
                if (pending[i].used && pending[i].id == id) {
                    p = &pending[i];
                    break;
                }
            }
            if (p == NULL) {
                continue;
            }
            p->used = 0;
            uint8_t addresses[64][4];
            int answered = dns_answer_addresses(message, (size_t)n, addresses, 64);
            for (int i = 0; i < answered && routes < ROUTES_MAX; i++) {
                if (!routable(addresses[i], blocked, count)) {
                    continue; /* stays behind its "prohibit" route, as without the list */
                }
                uint32_t key;
                memcpy(&key, addresses[i], 4);
                int known = 0;
                for (unsigned int k = 0; k < routes && !known; k++) {
                    known = routed[k] == key;
                }
                struct blocked to = {.family = AF_INET, .prefix = 32};
                memcpy(to.address, addresses[i], 4);
                if (!known && route(netlink, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, RTN_UNICAST, &to, device,
                                    stack_gateway, sequence++) == 0) {
                    routed[routes++] = key;
                }
            }
            memcpy(message, p->client_id, 2);
            (void)sendto(listen_socket, message, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&p->client,
                         sizeof p->client);
        }
    }
}

/* With the stack up: the default routes become "prohibit", the stack's gateway and resolver
 * are blocked, and the filter's socket is bound. Its descriptor, or -1 with why set. */
static int start_filter(int netlink, int *device, char *why, size_t why_size)
{
    *device = (int)if_nametoindex(NET_STACK_DEVICE);
    if (*device == 0) {
        snprintf(why, why_size, "the stack made no %s", NET_STACK_DEVICE);
        return -1;
    }
    struct blocked every4 = {.family = AF_INET, .prefix = 0};
    struct blocked every6 = {.family = AF_INET6, .prefix = 0};
    for (unsigned int i = 0; i < 16; i++) {
        if (route(netlink, RTM_DELROUTE, 0, 0, &every4, 0, NULL, 500 + i) != 0) {
            break; /* no default route left */
        }
    }
    struct blocked gateway = {.family = AF_INET, .prefix = 32};
    memcpy(gateway.address, stack_gateway, 4);
    struct blocked resolver = {.family = AF_INET, .prefix = 32};
    memcpy(resolver.address, stack_resolver, 4);
    const struct blocked *blocks[] = {&every4, &gateway, &resolver};
    for (size_t i = 0; i < 3; i++) {
        int error = prohibit(netlink, blocks[i], 600 + (unsigned int)i);
        if (error != 0) {
            snprintf(why, why_size, "cannot refuse the addresses off the allow-list: %s", strerror(error));
            return -1;
        }
    }
    (void)prohibit(netlink, &every6, 610); /* the stack has no IPv6 route anyway */
    /* A socket bound to the device (SO_BINDTODEVICE, or IP_PKTINFO's interface, no privilege
     * needed) goes past the routes: the kernel takes a destination it finds no route for as
     * on the link. Of the addresses on the link, the stack answers for its gateway (the host's
     * loopback there is off) and its resolver, which would answer every name, unlisted and
     * unlogged. So the resolver's address becomes this namespace's own: nothing sent to it
     * reaches the stack. */
    int own = own_address(netlink, *device, stack_resolver, 620);
    if (own != 0) {
        snprintf(why, why_size, "cannot keep the stack's resolver out of reach: %s", strerror(own));
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(53)};
    inet_pton(AF_INET, NET_FILTER_RESOLVER, &at.sin_addr);
    if (s < 0 || bind(s, (struct sockaddr *)&at, sizeof at) != 0) {
        snprintf(why, why_size, "cannot serve DNS at %s inside the sandbox: %s", NET_FILTER_RESOLVER, strerror(errno));
        return -1;
    }
    return s;
}

/* The anchor: in the sandbox's network namespace, as the owner of its user namespace,
 * blocks the host's addresses, says "ok" (or why not) on status, and stays until hold ends;
 * with a filter, on a byte from hold it starts the filter, says so on the filter's status
 * and serves it. */
__attribute__((noreturn))
static void anchor(int user, int net, const struct blocked *blocked, size_t count, int status, int hold,
                   const struct filter *f)
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
    ssize_t got;
    while ((got = read(hold, &byte, 1)) < 0 && errno == EINTR) {
    }
    if (f == NULL || got != 1 || strcmp(why, "ok") != 0) {
        _exit(0);
    }
    int netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    int device = 0;
    int listen_socket = netlink < 0 ? -1 : start_filter(netlink, &device, why, sizeof why);
    if (netlink < 0) {
        snprintf(why, sizeof why, "cannot open a netlink socket: %s", strerror(errno));
    } else if (listen_socket >= 0) {
        int error = confine_filter();
        if (error != 0) {
            snprintf(why, sizeof why, "cannot drop the DNS filter's capabilities: %s", strerror(error));
            listen_socket = -1;
        }
    }
    if (write_all(f->status, why, strlen(why)) != 0 || listen_socket < 0) {
        _exit(1);
    }
    close(f->status);
    serve_filter(listen_socket, f, netlink, device, blocked, count);
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

/* A UDP socket of this (the host's) network namespace, connected to the host's first
 * resolver in /etc/resolv.conf (127.0.0.1 when it names none), as the C library would ask. */
static int host_resolver(void)
{
    char text[4096];
    char address[64] = "127.0.0.1";
    int fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof text - 1);
    if (fd >= 0) {
        close(fd);
    }
    text[n > 0 ? n : 0] = '\0';
    for (char *line = text; line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (next != NULL) {
            *next++ = '\0';
        }
        if (strncmp(line, "nameserver", 10) == 0 && (line[10] == ' ' || line[10] == '\t')) {
            char *a = line + 10;
            a += strspn(a, " \t");
            size_t length = strcspn(a, " \t\r%");
            if (length > 0 && length < sizeof address) {
                memcpy(address, a, length);
                address[length] = '\0';
                break;
            }
        }
        line = next;
    }
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons(53)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(53)};
    int s;
    if (inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
        s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, (struct sockaddr *)&v4, sizeof v4) == 0) {
            return s;
        }
    } else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
        s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s >= 0 && connect(s, (struct sockaddr *)&v6, sizeof v6) == 0) {
            return s;
        }
    } else {
        fail("the host's resolver %s in /etc/resolv.conf is not an address", address);
    }
    fail("cannot reach the host's resolver %s: %s", address, strerror(errno));
}

/* Reads a process's status line ("ok" or why not) from fd until it closes. */
static void read_status(int fd, char why[257])
{
    ssize_t got;
    size_t used = 0;
    while ((got = read(fd, why + used, 256 - used)) != 0) {
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0 || (used += (size_t)got) == 256) {
            break;
        }
    }
    why[used] = '\0';
    close(fd);
}

/* The attacher: see the top of this file. */
__attribute__((noreturn))
static void attach(const char *stack, int info, int gate)
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
    struct filter filter;
    int filter_status[2] = {-1, -1};
    if (allow_list != NULL) {
        filter.upstream = host_resolver();
        filter.record = open(refused_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (filter.record < 0) {
            fail("cannot open the record of refused names %s: %s", refused_path, strerror(errno));
        }
        if (pipe2(filter_status, O_CLOEXEC) != 0) {
            fail("cannot make a pipe: %s", strerror(errno));
        }
        filter.status = filter_status[1];
    }
    pid_t attacher = getpid();
    pid_t anchor_pid = fork();
    if (anchor_pid == 0) {
        if (!dies_with(attacher, SIGKILL)) {
            _exit(1);
        }
        close(status[0]);
        close(hold[1]);
        if (allow_list != NULL) {
            close(filter_status[0]);
        }
        anchor(user, net, blocked, count, status[1], hold[0], allow_list != NULL ? &filter : NULL);
    }
    if (anchor_pid < 0) {
        fail("cannot start a process: %s", strerror(errno));
    }
    close(status[1]);
    close(hold[0]);
    if (allow_list != NULL) {
        close(filter_status[1]);
        close(filter.upstream);
        close(filter.record);
    }
    char why[257];
    read_status(status[0], why);
    if (strcmp(why, "ok") != 0) {
        fail("%s", why[0] != '\0' ? why : "the process that blocks the host's addresses ended");
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
    if (allow_list != NULL) {
        /* the stack is up: the anchor takes its routes away and becomes the DNS filter */
        if (write_all(hold[1], "f", 1) != 0) {
            fail("cannot start the DNS filter: %s", strerror(errno));
        }
        read_status(filter_status[0], why);
        if (strcmp(why, "ok") != 0) {
            fail("%s", why[0] != '\0' ? why : "the DNS filter ended");
        }
    } else {
        close(hold[1]); /* the anchor's work is done: the stack holds the namespace now */
        waitpid(anchor_pid, NULL, 0);
    }
    if (write_all(gate, "1", 1) != 0) {
        fail("cannot let the command run: %s", strerror(errno));
    }
    close(gate);
    /* the stack's exit descriptor (quit[1]) ends with this process, which ends with bwrap */
    while (waitpid(stack_pid, NULL, 0) < 0 && errno == EINTR) {
    }
    _exit(0);
}

char *const *attach_net_stack(char *const *argv, char **env)
{
    static const char prefix[] = NET_STACK_VARIABLE "=";
    static const char allow_prefix[] = NET_ALLOW_VARIABLE "=";
    static const char refused_prefix[] = NET_REFUSED_VARIABLE "=";
    static const char gate_prefix[] = NET_GATE_VARIABLE "=";
    const char *stack = NULL;
    size_t kept = 0;
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], prefix, sizeof prefix - 1) == 0) {
            stack = env[i] + sizeof prefix - 1;
        } else if (strncmp(env[i], allow_prefix, sizeof allow_prefix - 1) == 0) {
            allow_list = env[i] + sizeof allow_prefix - 1;
        } else if (strncmp(env[i], refused_prefix, sizeof refused_prefix - 1) == 0) {
            refused_path = env[i] + sizeof refused_prefix - 1;
        } else if (strncmp(env[i], gate_prefix, sizeof gate_prefix - 1) == 0) {
            /* only the gate made below passes */
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
    if (allow_list != NULL && allow_list[0] == '\0') {
        allow_list = NULL;
    }
    if (allow_list != NULL && (refused_path == NULL || refused_path[0] != '/')) {
        die("%s must name the record of refused names by its absolute path", NET_REFUSED_VARIABLE);
    }
    /* bwrap writes the info end, the sandbox's first program reads the gate; the attacher
     * has the other ends */
    int info[2];
    int gate[2];
    if (pipe2(info, O_CLOEXEC) != 0 || pipe2(gate, O_CLOEXEC) != 0) {
        die("cannot make a pipe: %s", strerror(errno));
    }
    if (fcntl(info[1], F_SETFD, 0) != 0 || fcntl(gate[0], F_SETFD, 0) != 0) {
        die("cannot pass a pipe to bwrap: %s", strerror(errno));
    }
    /* in the place of the stack's variable, taken out above */
    static char gate_variable[sizeof gate_prefix + 16];
    snprintf(gate_variable, sizeof gate_variable, "%s%d", gate_prefix, gate[0]);
    env[kept++] = gate_variable;
    env[kept] = NULL;
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
        close(gate[0]);
        /* nothing of the caller's but the standard streams (stderr: bwrap's setup log) */
        close_others(info[0], gate[1]);
        attach(stack, info[0], gate[1]);
    }
    close(info[0]);
    close(gate[1]);
    size_t count = 0;
    while (argv[count] != NULL) {
        count++;
    }
    char **out = calloc(count + 3, sizeof *out);
    static char info_fd[16];
    if (out == NULL) {
        die("out of memory");
    }
    snprintf(info_fd, sizeof info_fd, "%d", info[1]);
    out[0] = argv[0];
    out[1] = (char *)"--info-fd";
    out[2] = info_fd;
    for (size_t i = 1; i <= count; i++) {
        out[i + 2] = argv[i];
    }
    return out;
}
