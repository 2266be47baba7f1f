// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's own network stack: see net_stack.h.
 *
 * The holder, a child of the starter (or of the process that becomes bwrap, without one),
 * does, in order:
 *
 *  1. in the host's namespaces: lists the host's own addresses, opens (with an allow-list) a
 *     socket to the host's resolver, and forks the stack's process, which waits;
 *  2. makes the sandbox's user namespace (the user as root there, which bwrap and
 *     slirp4netns's own sandbox need) and network namespace, brings its loopback up and adds
 *     a "prohibit" route for each address of the host's own interfaces, for link-local
 *     169.254.0.0/16 (cloud metadata) and for fd00:ec2::254, so that no connection from
 *     inside leaves for them; says "ok" (or why not) to the process that becomes bwrap,
 *     which enters both namespaces and runs bwrap there, as that namespace's root, with
 *     --unshare-user (so the sandbox's processes never get a capability in the namespace
 *     that owns the routes) and without --unshare-net;
 *  3. lets the stack's process become slirp4netns, against the holder (it enters the
 *     holder's namespaces, makes tap0, and confines itself: --enable-sandbox
 *     --enable-seccomp), with the host's loopback out of its reach (--disable-host-loopback)
 *     and an exit descriptor whose other end only the holder holds;
 *  4. once the stack says it is ready, with an allow-list: replaces the default route by a
 *     "prohibit" one (and blocks the stack's own resolver and gateway) and becomes the DNS
 *     filter, on the sandbox's loopback (NET_FILTER_RESOLVER, which the sandbox's
 *     resolv.conf names): a name on the list is asked of the host's resolver (through the
 *     socket of step 1) and each IPv4 address of the answer gets a route through the stack
 *     before the answer goes back (never one the holder blocks: see routable); any other name
 *     is answered NXDOMAIN and written, once, to the run's record (NET_REFUSED_VARIABLE);
 *  5. confines itself (an empty root, and no capability but the filter's CAP_NET_ADMIN) and
 *     opens the gate: the sandbox's first program waits on it (NET_GATE_VARIABLE) before the
 *     command runs. Only then does anything of the sandbox's reach the holder.
 *
 * The starter starts the holder as soon as the tool knows the run's network (STARTER_NETWORK
 * in guard.h), while the tool still plans the run, so bwrap usually finds the stack ready.
 * The sandbox reaches the host's loopback, its own addresses and link-local addresses
 * through none of this. When a step fails, the holder writes one line to bwrap's setup log
 * (which the tool reports) and kills bwrap without opening the gate: a command never runs
 * with a half-made network.
 */
#define _GNU_SOURCE

#include "net_stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
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
#include "starter_request.h"
#include "util.h"

/* How long the stack may take to say it is ready (it takes some 10 ms; a loaded machine more). */
#define NET_READY_MILLIS 20000

/* At most this many addresses of the host's interfaces are blocked; more is an error. */
#define BLOCKED_MAX 256

struct blocked {
    int family;
    unsigned char prefix;
    unsigned char address[16];
};

/* The holder's: what the process that becomes bwrap tells it (see read_go). */
static int go_fd = -1;
static int went;
static pid_t bwrap_pid = -1;
static char log_path[PATH_MAX];
static char refused_path[PATH_MAX];

/* With an allow-list: the list, and the descriptors the filter gets from the host side. */
static const char *allow_list;
struct filter {
    int upstream; /* a UDP socket of the host's namespace, connected to the host's resolver */
    int record;   /* the run's record of refused names, opened for appending */
};

/* Waits for the word of the process that becomes bwrap: its pid, its setup log and the
 * record of refused names (empty without an allow-list), each ended by a NUL. 0, or -1
 * when it never comes (the run gave up before bwrap). */
static int read_go(void)
{
    if (went) {
        return 0;
    }
    char text[16 + 2 * PATH_MAX];
    size_t used = 0;
    int nuls = 0;
    while (nuls < 3 && used < sizeof text) {
        ssize_t n = read(go_fd, text + used, sizeof text - used);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        for (ssize_t i = 0; i < n; i++) {
            nuls += text[used + (size_t)i] == '\0';
        }
        used += (size_t)n;
    }
    if (nuls != 3) {
        return -1;
    }
    char *fields[3];
    if (split_strings(text, used, fields, 3) != 0) {
        return -1;
    }
    long pid = strtol(fields[0], NULL, 10);
    if (pid <= 0 || strlen(fields[1]) >= sizeof log_path || strlen(fields[2]) >= sizeof refused_path) {
        return -1;
    }
    bwrap_pid = (pid_t)pid;
    memcpy(log_path, fields[1], strlen(fields[1]) + 1);
    memcpy(refused_path, fields[2], strlen(fields[2]) + 1);
    went = 1;
    return 0;
}

/* One line in bwrap's setup log, bwrap (and so the sandbox) killed, and the end: bwrap
 * never goes on without the stack, and the gate closes without a byte. */
__attribute__((format(printf, 1, 2), noreturn))
static void fail(const char *format, ...)
{
    char line[512];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (read_go() != 0) {
        _exit(1); /* no bwrap to stop, nobody to tell */
    }
    /* the line first: the tool reads the log as soon as bwrap has ended */
    int log = open(log_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (log >= 0) {
        dprintf(log, "%s: cannot start the sandbox's network: %s\n", PROGRAM, line);
        close(log);
    }
    kill(bwrap_pid, SIGKILL);
    _exit(1);
}

/* Every address of the host's interfaces, loopback, and the link-local and metadata ranges;
 * the count, or 0 with why. */
static size_t host_addresses(struct blocked *out, char *why, size_t why_size)
{
    size_t count = 0;
    out[count++] = (struct blocked){.family = AF_INET, .prefix = 16, .address = {169, 254}};
    struct blocked metadata6 = {.family = AF_INET6, .prefix = 128};
    inet_pton(AF_INET6, "fd00:ec2::254", metadata6.address);
    out[count++] = metadata6;
    /* Loopback too, in the main table: the local table, which the kernel looks at first,
     * keeps the sandbox's own loopback working, but a socket bound to the stack's device
     * skips the local routes (their device is lo) and would leave through the stack for a
     * 127.x address, which the stack connects to on the host (--disable-host-loopback covers
     * only its own 10.0.2.x names of the host). */
    out[count++] = (struct blocked){.family = AF_INET, .prefix = 8, .address = {127}};
    struct blocked own6 = {.family = AF_INET6, .prefix = 128};
    own6.address[15] = 1;
    out[count++] = own6;
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) {
        snprintf(why, why_size, "cannot list the host's addresses: %s", strerror(errno));
        return 0;
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
                continue; /* 127.0.0.0/8 is above */
            }
        } else if (b.family == AF_INET6) {
            b.prefix = 128;
            memcpy(b.address, &((struct sockaddr_in6 *)(void *)a->ifa_addr)->sin6_addr, 16);
            static const unsigned char loopback6[16] = {[15] = 1};
            if (memcmp(b.address, loopback6, 16) == 0 || (b.address[0] == 0xfe && (b.address[1] & 0xc0) == 0x80)) {
                continue; /* ::1 is above; link-local ones never leave the link */
            }
        } else {
            continue;
        }
        if (count == BLOCKED_MAX) {
            snprintf(why, why_size, "the host has more than %d addresses to keep out of the sandbox", BLOCKED_MAX - 4);
            freeifaddrs(all);
            return 0;
        }
        out[count++] = b;
    }
    freeifaddrs(all);
    return count;
}

/* Appends the netlink attribute type with length bytes of data at *used of attributes. */
static void add_attribute(char *attributes, size_t *used, unsigned short type, const void *data, size_t length)
{
    struct rtattr *attribute = (struct rtattr *)(void *)(attributes + *used);
    attribute->rta_type = type;
    attribute->rta_len = (unsigned short)RTA_LENGTH(length);
    memcpy(RTA_DATA(attribute), data, length);
    *used += RTA_ALIGN(attribute->rta_len);
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
        add_attribute(request.attributes, &used, RTA_DST, b->address, length);
    }
    if (oif != 0) {
        add_attribute(request.attributes, &used, RTA_OIF, &oif, sizeof oif);
        add_attribute(request.attributes, &used, RTA_GATEWAY, gateway, 4);
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

/* Makes b (IPv4) local to this namespace on device, in the local table, after the routes
 * already there (priority 1): a socket bound to device skips the routes of other devices
 * and, finding none of its own, the kernel takes any destination as on the link and sends
 * it there, past every "prohibit" route (the stack then connects to it on the host, 127.x
 * included); with this route the kernel finds b local, and it stays inside. 0, or an errno. */
static int local_on(int netlink, const struct blocked *b, int device, unsigned int sequence)
{
    struct {
        struct nlmsghdr header;
        struct rtmsg route;
        char attributes[64];
    } request;
    memset(&request, 0, sizeof request);
    request.header.nlmsg_type = RTM_NEWROUTE;
    request.header.nlmsg_flags = (unsigned short)(NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL);
    request.header.nlmsg_seq = sequence;
    request.route.rtm_family = AF_INET;
    request.route.rtm_dst_len = b->prefix;
    request.route.rtm_table = RT_TABLE_LOCAL;
    request.route.rtm_protocol = RTPROT_STATIC;
    request.route.rtm_scope = RT_SCOPE_HOST;
    request.route.rtm_type = RTN_LOCAL;
    size_t used = 0;
    unsigned int one = 1;
    add_attribute(request.attributes, &used, RTA_DST, b->address, 4);
    add_attribute(request.attributes, &used, RTA_OIF, &device, sizeof device);
    add_attribute(request.attributes, &used, RTA_PRIORITY, &one, sizeof one);
    request.header.nlmsg_len = (unsigned int)(NLMSG_LENGTH(sizeof request.route) + used);
    if (send(netlink, &request, request.header.nlmsg_len, 0) < 0) {
        return errno;
    }
    return acknowledged(netlink, sequence);
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
    size_t used = 0;
    add_attribute(request.attributes, &used, IFA_LOCAL, address, 4);
    request.header.nlmsg_len = (unsigned int)(NLMSG_LENGTH(sizeof request.a) + used);
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

/* Confines the holder before it reads anything from the sandbox: an empty root of its own
 * (the directory of a process's fd info, gone with it), no way back to root's capabilities,
 * and of its capabilities only those in keep (CAP_NET_ADMIN for the DNS filter's routes).
 * 0, or an errno. */
static int confine(unsigned int keep)
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
    data[0].effective = data[0].permitted = keep;
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
 * holder blocked (the host's own, link-local and so the cloud metadata service: a route for
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

/* The DNS filter (see the top of this file): serves listen until the holder is killed. */
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

/* A UDP socket of this (the host's) network namespace, connected to the host's first
 * resolver in /etc/resolv.conf (127.0.0.1 when it names none), as the C library would ask;
 * -1 with why. */
static int host_resolver(char *why, size_t why_size)
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
        snprintf(why, why_size, "the host's resolver %s in /etc/resolv.conf is not an address", address);
        return -1;
    }
    snprintf(why, why_size, "cannot reach the host's resolver %s: %s", address, strerror(errno));
    return -1;
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

/* The stack's process: a child of the holder made while the holder is still in the host's
 * namespaces, which waits for the holder's byte on start and then becomes the stack, against
 * the holder's namespaces (slirp4netns enters them to make its device and stays in the host's
 * network itself). ready and quit are its ends of the holder's pipes. Its pid. */
static pid_t fork_stack(const char *stack, int start, int ready, int quit)
{
    pid_t holder = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    if (!dies_with(holder, SIGKILL)) {
        _exit(127);
    }
    close_others3(start, ready, quit);
    char byte;
    ssize_t got;
    while ((got = read(start, &byte, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1 || fcntl(ready, F_SETFD, 0) != 0 || fcntl(quit, F_SETFD, 0) != 0) {
        _exit(127);
    }
    char ready_option[32];
    char quit_option[32];
    char target[32];
    snprintf(ready_option, sizeof ready_option, "--ready-fd=%d", ready);
    snprintf(quit_option, sizeof quit_option, "--exit-fd=%d", quit);
    snprintf(target, sizeof target, "%d", (int)holder);
    char *argv[] = {(char *)stack, (char *)"--configure", (char *)"--mtu=" NET_STACK_MTU,
                    (char *)"--disable-host-loopback", (char *)"--enable-sandbox", (char *)"--enable-seccomp",
                    ready_option, quit_option, target, (char *)NET_STACK_DEVICE, NULL};
    char *no_environment[] = {NULL};
    execve(stack, argv, no_environment);
    _exit(127);
}

/* Makes this process's own user namespace (the user as root there, which bwrap and the
 * stack's own sandbox need) and network namespace, with its loopback up. 0, or -1 with why. */
static int make_namespaces(char *why, size_t why_size)
{
    unsigned long uid = (unsigned long)getuid();
    unsigned long gid = (unsigned long)getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
        snprintf(why, why_size, "cannot make the sandbox's network namespace: %s", strerror(errno));
        return -1;
    }
    const char *failed = "";
    if (map_ids(0, uid, 0, gid, &failed) != 0) {
        snprintf(why, why_size, "cannot write the %s of the sandbox's namespace: %s", failed, strerror(errno));
        return -1;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq request;
    memset(&request, 0, sizeof request);
    memcpy(request.ifr_name, "lo", 3);
    request.ifr_flags = IFF_UP | IFF_RUNNING;
    int up = s >= 0 && ioctl(s, SIOCSIFFLAGS, &request) == 0;
    int error = errno;
    if (s >= 0) {
        close(s);
    }
    if (!up) {
        snprintf(why, why_size, "cannot bring the sandbox's loopback up: %s", strerror(error));
        return -1;
    }
    return 0;
}

/* Adds a "prohibit" route for each of the count addresses in blocked. 0, or -1 with why. */
static int block_addresses(const struct blocked *blocked, size_t count, char *why, size_t why_size)
{
    int netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (netlink < 0) {
        snprintf(why, why_size, "cannot open a netlink socket: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        int error = prohibit(netlink, &blocked[i], (unsigned int)i + 1);
        if (error != 0) {
            char text[INET6_ADDRSTRLEN];
            inet_ntop(blocked[i].family, blocked[i].address, text, sizeof text);
            snprintf(why, why_size, "cannot block %s/%d inside the sandbox: %s", text, blocked[i].prefix,
                     strerror(error));
            close(netlink);
            return -1;
        }
    }
    close(netlink);
    return 0;
}

/* The holder: see the top of this file. to_bwrap gets "ok" (or why not) once the namespaces
 * are there for bwrap to enter; gate gets a byte once the command may run. */
__attribute__((noreturn))
static void hold(const char *stack, int to_bwrap, int gate)
{
    /* what is the host's: its addresses, its resolver, a process in its network */
    static struct blocked blocked[BLOCKED_MAX];
    char why[256] = "ok";
    size_t count = host_addresses(blocked, why, sizeof why);
    struct filter filter = {.upstream = -1, .record = -1};
    if (count > 0 && allow_list != NULL) {
        filter.upstream = host_resolver(why, sizeof why);
    }
    int start[2];
    int ready[2];
    int quit[2];
    if (strcmp(why, "ok") == 0 &&
        (pipe2(start, O_CLOEXEC) != 0 || pipe2(ready, O_CLOEXEC) != 0 || pipe2(quit, O_CLOEXEC) != 0)) {
        snprintf(why, sizeof why, "cannot make a pipe: %s", strerror(errno));
    }
    pid_t stack_pid = strcmp(why, "ok") != 0 ? -1 : fork_stack(stack, start[0], ready[1], quit[0]);
    if (strcmp(why, "ok") == 0 && stack_pid < 0) {
        snprintf(why, sizeof why, "cannot start a process: %s", strerror(errno));
    }
    signal(SIGPIPE, SIG_IGN); /* a reader gone is a failed write, said below, not a silent end */
    /* the sandbox's namespaces, the host's addresses blocked in them */
    if (strcmp(why, "ok") == 0 && make_namespaces(why, sizeof why) == 0) {
        (void)block_addresses(blocked, count, why, sizeof why);
    }
    (void)write_all(to_bwrap, why, strlen(why));
    close(to_bwrap);
    if (strcmp(why, "ok") != 0) {
        _exit(0); /* the process that becomes bwrap says why, in its log */
    }
    close(start[0]);
    close(ready[1]);
    close(quit[0]);
    if (write_all(start[1], "s", 1) != 0) {
        fail("cannot start %s: %s", stack, strerror(errno));
    }
    close(start[1]);
    char byte;
    ssize_t n = -1;
    long deadline = now_millis() + NET_READY_MILLIS;
    for (;;) {
        long left = deadline - now_millis();
        struct pollfd readable = {.fd = ready[0], .events = POLLIN};
        int polled = left <= 0 ? 0 : poll(&readable, 1, (int)left);
        if (polled < 0 && errno == EINTR) {
            continue;
        }
        if (polled <= 0) {
            break; /* not ready in time */
        }
        while ((n = read(ready[0], &byte, 1)) < 0 && errno == EINTR) {
        }
        break;
    }
    int wstatus = 0;
    if (n != 1) {
        /* no word, or its descriptor closed while it goes on: it is not coming */
        pid_t ended = waitpid(stack_pid, &wstatus, WNOHANG);
        if (ended == 0) {
            kill(stack_pid, SIGKILL);
            waitpid(stack_pid, &wstatus, 0);
            fail("%s did not say it was ready within %d s; see `agent-sandbox doctor`, or set"
                 " AGENT_SANDBOX_NETWORK_STACK=proxy for the proxy", stack, NET_READY_MILLIS / 1000);
        }
        if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127) {
            fail("cannot run %s", stack);
        }
        fail("%s ended before the network was up (status %d); see `agent-sandbox doctor`, or set"
             " AGENT_SANDBOX_NETWORK_STACK=proxy for the proxy", stack,
             WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus));
    }
    close(ready[0]);
    /* ready means its device is there, and it is still running to serve it */
    if (if_nametoindex(NET_STACK_DEVICE) == 0) {
        fail("%s said it was ready, but made no %s; see `agent-sandbox doctor`, or set"
             " AGENT_SANDBOX_NETWORK_STACK=proxy for the proxy", stack, NET_STACK_DEVICE);
    }
    if (waitpid(stack_pid, &wstatus, WNOHANG) != 0) {
        fail("%s ended right after it said it was ready; see `agent-sandbox doctor`, or set"
             " AGENT_SANDBOX_NETWORK_STACK=proxy for the proxy", stack);
    }
    /* the blocked IPv4 addresses local on the stack's device too (see local_on) */
    int device_index = (int)if_nametoindex(NET_STACK_DEVICE);
    int routes = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (routes < 0) {
        fail("cannot open a netlink socket: %s", strerror(errno));
    }
    for (size_t i = 0; i < count; i++) {
        if (blocked[i].family != AF_INET) {
            continue;
        }
        int error = local_on(routes, &blocked[i], device_index, 700 + (unsigned int)i);
        if (error != 0) {
            char text[INET6_ADDRSTRLEN];
            inet_ntop(AF_INET, blocked[i].address, text, sizeof text);
            fail("cannot keep %s/%d inside the sandbox on %s: %s", text, blocked[i].prefix, NET_STACK_DEVICE,
                 strerror(error));
        }
    }
    close(routes);
    /* the stack's exit descriptor (quit[1]) stays open as long as this process */
    int listen_socket = -1;
    int netlink = -1;
    int device = 0;
    if (allow_list != NULL) {
        /* the stack is up: its routes go, and this process becomes the DNS filter */
        if (read_go() != 0) {
            _exit(0); /* the run gave up before bwrap */
        }
        if (refused_path[0] != '/') {
            fail("%s must name the record of refused names by its absolute path", NET_REFUSED_VARIABLE);
        }
        filter.record = open(refused_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (filter.record < 0) {
            fail("cannot open the record of refused names %s: %s", refused_path, strerror(errno));
        }
        netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (netlink < 0) {
            fail("cannot open a netlink socket: %s", strerror(errno));
        }
        listen_socket = start_filter(netlink, &device, why, sizeof why);
        if (listen_socket < 0) {
            fail("%s", why);
        }
    }
    /* nothing of the sandbox's is read before this: an empty root, and no capability but
     * the filter's CAP_NET_ADMIN (routes) */
    int error = confine(allow_list != NULL ? 1U << CAP_NET_ADMIN : 0);
    if (error != 0) {
        fail("cannot drop the capabilities of the process that holds the network: %s", strerror(error));
    }
    if (write_all(gate, "1", 1) != 0) {
        fail("cannot let the command run: %s", strerror(errno));
    }
    close(gate);
    if (allow_list != NULL) {
        serve_filter(listen_socket, &filter, netlink, device, blocked, count);
    }
    for (;;) {
        pause();
    }
}

/* The stack started for this run (net_stack_start), and the ends the process that becomes
 * bwrap takes. */
static struct {
    int started;
    pid_t holder;
    int holder_ready; /* read end: "ok", or why not, once the holder made the namespaces */
    int gate;         /* read end, for the sandbox's first program */
    int go;           /* write end: the word to the holder (see read_go) */
    char stack[PATH_MAX];
    char allow[NET_ALLOW_MAX + 1];
} run;

/* Everything the holder need not keep of its parent's: the default handling of the signals
 * a starter changes, stdin, stdout and stderr on /dev/null (the caller's terminal never gets
 * a line of its), and no descriptor but the three kept. */
static void detach(int keep_a, int keep_b, int keep_c)
{
    static const int changed[] = {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTERM, SIGUSR1};
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        signal(changed[i], SIG_DFL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) {
        _exit(1);
    }
    close_others3(keep_a, keep_b, keep_c);
}

int net_stack_start(const char *stack, const char *allow, char *why, size_t why_size)
{
    if (run.started) {
        snprintf(why, why_size, "the network is started already");
        return -1;
    }
    if (stack[0] != '/' || strlen(stack) >= sizeof run.stack) {
        snprintf(why, why_size, "%s must name the stack's program by its absolute path", NET_STACK_VARIABLE);
        return -1;
    }
    if (strlen(allow) > NET_ALLOW_MAX) {
        snprintf(why, why_size, "the allow-list is longer than %d bytes", NET_ALLOW_MAX);
        return -1;
    }
    int to_bwrap[2];
    int gate[2];
    int go[2];
    if (pipe2(to_bwrap, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(gate, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot make a pipe: %s", strerror(errno));
        close(to_bwrap[0]);
        close(to_bwrap[1]);
        return -1;
    }
    if (pipe2(go, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot make a pipe: %s", strerror(errno));
        close(to_bwrap[0]);
        close(to_bwrap[1]);
        close(gate[0]);
        close(gate[1]);
        return -1;
    }
    memcpy(run.stack, stack, strlen(stack) + 1);
    memcpy(run.allow, allow, strlen(allow) + 1);
    pid_t owner = getpid();
    pid_t holder = fork();
    if (holder == 0) {
        if (!dies_with(owner, SIGKILL)) {
            _exit(1);
        }
        detach(to_bwrap[1], gate[1], go[0]);
        go_fd = go[0];
        allow_list = run.allow[0] != '\0' ? run.allow : NULL;
        hold(run.stack, to_bwrap[1], gate[1]);
    }
    int error = errno;
    close(to_bwrap[1]);
    close(gate[1]);
    close(go[0]);
    if (holder < 0) {
        close(to_bwrap[0]);
        close(gate[0]);
        close(go[1]);
        snprintf(why, why_size, "cannot start a process: %s", strerror(error));
        return -1;
    }
    run.started = 1;
    run.holder = holder;
    run.holder_ready = to_bwrap[0];
    run.gate = gate[0];
    run.go = go[1];
    return 0;
}

void net_stack_forget(void)
{
    if (run.started) {
        close(run.holder_ready);
        close(run.gate);
        close(run.go);
        run.holder_ready = run.gate = run.go = -1;
    }
}

void net_stack_stop(void)
{
    if (run.started) {
        kill(run.holder, SIGKILL); /* its stack dies with it */
        waitpid(run.holder, NULL, 0);
        run.started = 0;
    }
}

/* Enters the holder's namespaces (this process becomes bwrap next). 0, or -1 with why. */
static int enter_namespaces(char *why, size_t why_size)
{
    char status[257];
    read_status(run.holder_ready, status);
    run.holder_ready = -1;
    if (strcmp(status, "ok") != 0) {
        snprintf(why, why_size, "%s", status[0] != '\0' ? status : "the process that holds its namespace ended");
        return -1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)run.holder);
    int user = open(path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)run.holder);
    int net = open(path, O_RDONLY | O_CLOEXEC);
    if (user < 0 || net < 0 || setns(user, CLONE_NEWUSER) != 0 || setns(net, CLONE_NEWNET) != 0) {
        snprintf(why, why_size, "cannot enter its namespace: %s", strerror(errno));
        return -1;
    }
    close(user);
    close(net);
    return 0;
}

char **net_stack_argv(char *const *argv)
{
    /* bwrap runs as root of the holder's user namespace: it would keep every capability
     * there for the sandbox (as for root) unless told not to, and must make a user namespace
     * of its own (else the sandbox's root could change the routes), but no network namespace
     * (the holder's is the sandbox's). So the tool's --unshare-all, among the leading flags
     * that take no value (a later word could be some option's value), becomes all of it but
     * the network. */
    static const char *const instead[] = {"--cap-drop", "ALL", "--unshare-user", "--unshare-ipc", "--unshare-pid",
                                          "--unshare-uts", "--unshare-cgroup-try"};
    size_t count = 0;
    while (argv[count] != NULL) {
        count++;
    }
    char **out = calloc(count + sizeof instead / sizeof instead[0] + 1, sizeof *out);
    if (out == NULL) {
        die("out of memory");
    }
    size_t n = 0;
    int replaced = 0;
    int leading = 1;
    out[n++] = argv[0];
    for (size_t i = 1; i < count; i++) {
        leading = leading && (strncmp(argv[i], "--unshare-", 10) == 0 || strcmp(argv[i], "--die-with-parent") == 0 ||
                              strcmp(argv[i], "--new-session") == 0);
        if (leading && !replaced && strcmp(argv[i], "--unshare-all") == 0) {
            for (size_t k = 0; k < sizeof instead / sizeof instead[0]; k++) {
                out[n++] = (char *)instead[k];
            }
            replaced = 1;
            continue;
        }
        if (leading && strcmp(argv[i], "--unshare-net") == 0) {
            continue;
        }
        out[n++] = argv[i];
    }
    out[n] = NULL;
    if (!replaced) {
        free(out);
        return NULL;
    }
    return out;
}

char *const *attach_net_stack(char *const *argv, char **env, const char *log)
{
    static const char prefix[] = NET_STACK_VARIABLE "=";
    static const char allow_prefix[] = NET_ALLOW_VARIABLE "=";
    static const char refused_prefix[] = NET_REFUSED_VARIABLE "=";
    static const char gate_prefix[] = NET_GATE_VARIABLE "=";
    const char *stack = NULL;
    const char *allow = "";
    const char *refused = "";
    size_t kept = 0;
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], prefix, sizeof prefix - 1) == 0) {
            stack = env[i] + sizeof prefix - 1;
        } else if (strncmp(env[i], allow_prefix, sizeof allow_prefix - 1) == 0) {
            allow = env[i] + sizeof allow_prefix - 1;
        } else if (strncmp(env[i], refused_prefix, sizeof refused_prefix - 1) == 0) {
            refused = env[i] + sizeof refused_prefix - 1;
        } else if (strncmp(env[i], gate_prefix, sizeof gate_prefix - 1) == 0) {
            /* only the gate made below passes */
        } else {
            env[kept++] = env[i];
        }
    }
    env[kept] = NULL;
    if (stack == NULL) {
        return argv; /* a stack started for another plan stays out (its starter ends it) */
    }
    if (allow[0] != '\0' && refused[0] != '/') {
        die("%s must name the record of refused names by its absolute path", NET_REFUSED_VARIABLE);
    }
    char why[300];
    if (run.started && (strcmp(run.stack, stack) != 0 || strcmp(run.allow, allow) != 0)) {
        die("cannot start the sandbox's network: it was started for another stack or allow-list");
    }
    /* without the starter (or without its early start), started now: bwrap sets the sandbox
     * up while the stack starts all the same */
    if (!run.started && net_stack_start(stack, allow, why, sizeof why) != 0) {
        die("cannot start the sandbox's network: %s", why);
    }
    char **out = net_stack_argv(argv);
    if (out == NULL) {
        die("cannot start the sandbox's network: bwrap's command line does not begin with --unshare-all");
    }
    if (enter_namespaces(why, sizeof why) != 0) {
        die("cannot start the sandbox's network: %s", why);
    }
    /* the holder's word: this pid (bwrap's), the log and the record; a holder gone meanwhile
     * is no signal to die of, but the line below */
    char word[32 + 2 * PATH_MAX];
    int length = snprintf(word, sizeof word, "%d%c%s%c%s%c", (int)getpid(), '\0', log, '\0', refused, '\0');
    struct sigaction ignore;
    struct sigaction before;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &before);
    int error = length <= 0 || (size_t)length >= sizeof word ? ENAMETOOLONG
                : write_all(run.go, word, (size_t)length) != 0 ? errno : 0;
    sigaction(SIGPIPE, &before, NULL);
    if (error != 0) {
        die("cannot start the sandbox's network: the process that holds it is gone: %s", strerror(error));
    }
    close(run.go);
    run.go = -1;
    if (fcntl(run.gate, F_SETFD, 0) != 0) {
        die("cannot pass a pipe to bwrap: %s", strerror(errno));
    }
    /* in the place of the stack's variable, taken out above */
    static char gate_variable[sizeof gate_prefix + 16];
    snprintf(gate_variable, sizeof gate_variable, "%s%d", gate_prefix, run.gate);
    env[kept++] = gate_variable;
    env[kept] = NULL;
    return out;
}
