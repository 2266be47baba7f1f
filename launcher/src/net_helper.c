// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's helper: network forwarder and liveness watch: see net_helper.h.
 */
#define _GNU_SOURCE

#include "net_helper.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "util.h"

/* The network's files, lines and words are the contract's (guard.h: NET_LISTEN ...).
 * At most this many ports, and how long a connection to the host side may take to
 * succeed while the host side starts. */
#define NET_PORTS_MAX 64
#define NET_CONNECT_MILLIS 3000

struct listener {
    int fd;
    int port;
    int proxy;
};

static int listen_on(int family, int port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    int ok;
    if (family == AF_INET) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    } else {
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof a);
        a.sin6_family = AF_INET6;
        a.sin6_port = htons((unsigned short)port);
        a.sin6_addr = in6addr_loopback;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
        ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    }
    if (!ok || listen(fd, 128) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int connect_host(void)
{
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof address.sun_path, "%s", NET_SOCKET);
    for (int waited = 0;; waited += 5) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            return fd;
        }
        int error = errno;
        close(fd);
        if ((error != ENOENT && error != ECONNREFUSED) || waited >= NET_CONNECT_MILLIS) {
            return -1;
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Copies both ways between two sockets until both directions have ended. */
static void relay(int a, int b)
{
    int fds[2] = {a, b};
    int open_in[2] = {1, 1};
    char buffer[32768];
    while (open_in[0] || open_in[1]) {
        struct pollfd watch[2];
        nfds_t n = 0;
        int side[2];
        for (int i = 0; i < 2; i++) {
            if (open_in[i]) {
                watch[n].fd = fds[i];
                watch[n].events = POLLIN;
                watch[n].revents = 0;
                side[n++] = i;
            }
        }
        if (poll(watch, n, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (watch[k].revents == 0) {
                continue;
            }
            int from = side[k];
            ssize_t got = recv(fds[from], buffer, sizeof buffer, 0);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got <= 0) {
                open_in[from] = 0;
                shutdown(fds[1 - from], SHUT_WR);
                continue;
            }
            if (write_all(fds[1 - from], buffer, (size_t)got) != 0) {
                return;
            }
        }
    }
}

/*
 * The sandbox's helper beside the command: it forwards each connection to the sandbox's
 * listeners (none without the network) to the host side, and, given the read end of the
 * starter's pipe (`alive`, see start_helper), ends the sandbox once every write end of it
 * is closed. One process for both: each process started here is time before the command.
 */
__attribute__((noreturn))
static void serve_helper(const struct listener *listeners, int count, int alive)
{
    struct pollfd watch[2 * NET_PORTS_MAX + 1];
    for (int i = 0; i < count; i++) {
        watch[i].fd = listeners[i].fd;
        watch[i].events = POLLIN;
    }
    nfds_t watched = (nfds_t)count;
    if (alive >= 0) {
        watch[watched].fd = alive;
        watch[watched].events = POLLIN;
        watched++;
    }
    for (;;) {
        if (poll(watch, watched, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            _exit(1);
        }
        if (alive >= 0 && watch[count].revents != 0) {
            char byte;
            ssize_t n = read(alive, &byte, 1);
            if (n == 0) {
                /* every write end is closed: the starter is gone. Every process of this pid
                 * namespace but its init and this one, then this one */
                kill(-1, SIGKILL);
                _exit(0);
            }
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                /* no way to watch: the sandbox is left to bwrap's own means */
                close(alive);
                alive = -1;
                watched--;
                if (count == 0) {
                    _exit(0);
                }
            }
        }
        for (int i = 0; i < count; i++) {
            if ((watch[i].revents & POLLIN) == 0) {
                continue;
            }
            int client = accept4(listeners[i].fd, NULL, NULL, SOCK_CLOEXEC);
            if (client < 0) {
                continue;
            }
            pid_t pid = fork();
            if (pid == 0) {
                for (int j = 0; j < count; j++) {
                    close(listeners[j].fd);
                }
                if (alive >= 0) {
                    close(alive);
                }
                int host = connect_host();
                if (host < 0) {
                    _exit(1);
                }
                char header[32];
                int length = listeners[i].proxy
                                 ? snprintf(header, sizeof header, NET_PROXY_CLIENT "\n")
                                 : snprintf(header, sizeof header, NET_HOST_CLIENT "%d\n", listeners[i].port);
                if (length > 0 && write_all(host, header, (size_t)length) == 0) {
                    relay(client, host);
                }
                _exit(0);
            }
            close(client);
        }
    }
}

/* Starts a grandchild of this process, which the sandbox's init adopts (never the
 * command this process becomes), its standard streams on /dev/null: 0 in the
 * grandchild; in this process, once the child between has ended, its pid, or -1 when
 * no fork was possible. */
static pid_t fork_for_init(void)
{
    pid_t child = fork();
    if (child == 0) {
        if (fork() != 0) {
            _exit(0);
        }
        return 0;
    }
    if (child > 0) {
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    return child;
}

/* Starts a process that is not this one's child, so never the command's that this process
 * becomes, but the sandbox's init's: a sibling (CLONE_PARENT), one process and nothing to
 * wait for; where the kernel refuses that (this process an init itself), a grandchild that
 * the init adopts. Its standard streams are on /dev/null. 0 in the new process; in this
 * one its pid, or -1 when none could be started. The new process only runs this file's
 * own loops and plain system calls, so the C library's idea of its thread id, which a
 * clone behind the library's back leaves as this process's, is never used. */
static pid_t start_for_init(void)
{
    long pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), 0L, 0L, 0L, 0L);
    if (pid < 0) {
        pid = fork_for_init();
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
    }
    return (pid_t)pid;
}

/* Starts the sandbox's helper (serve_helper) when there is work for it: the network's
 * listeners (NET_LISTEN exists when the sandbox has the network on), the watch of `alive`. */
void start_helper(int alive)
{
    struct listener listeners[2 * NET_PORTS_MAX];
    int count = 0;
    FILE *file = fopen(NET_LISTEN, "re");
    if (file == NULL && errno != ENOENT) {
        die("cannot read %s: %s", NET_LISTEN, strerror(errno));
    }
    if (file != NULL) {
        char line[64];
        while (fgets(line, sizeof line, file) != NULL) {
            char kind[16];
            int port;
            if (sscanf(line, "%15s %d", kind, &port) != 2 || port < 1 || port > 65535 ||
                count + 2 > 2 * NET_PORTS_MAX) {
                die("malformed %s", NET_LISTEN);
            }
            int proxy = strcmp(kind, NET_LISTEN_PROXY) == 0;
            int fd = listen_on(AF_INET, port);
            if (fd < 0) {
                die("cannot listen on 127.0.0.1:%d inside the sandbox: %s", port, strerror(errno));
            }
            listeners[count++] = (struct listener){.fd = fd, .port = port, .proxy = proxy};
            int fd6 = listen_on(AF_INET6, port);
            if (fd6 >= 0) {
                listeners[count++] = (struct listener){.fd = fd6, .port = port, .proxy = proxy};
            }
        }
        fclose(file);
    }
    if (count == 0 && alive < 0) {
        return;
    }
    pid_t child = start_for_init();
    if (child < 0 && count > 0) {
        die("cannot start the sandbox's network forwarder: %s", strerror(errno));
    }
    if (child == 0) {
        setsid();
        signal(SIGCHLD, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        serve_helper(listeners, count, alive);
    }
    /* without a helper (no process could be started), the sandbox is left to bwrap's own
     * --die-with-parent */
    for (int i = 0; i < count; i++) {
        close(listeners[i].fd);
    }
    if (alive >= 0) {
        close(alive);
    }
}
