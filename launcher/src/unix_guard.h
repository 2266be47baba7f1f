// SPDX-License-Identifier: Apache-2.0
/*
 * The socket guard of the shared /tmp (--share-tmp): the host's Unix sockets there stay out
 * of reach whenever the host makes them, and the sandbox's own keep working.
 *
 * The sandbox's first program forks. The child installs a seccomp filter with a listener
 * (seccomp_filter.c: connect(2), sendmsg(2), sendmmsg(2), and sendto(2) with an address),
 * hands the listener to the parent and becomes the command. The parent, not under that
 * filter and not dumpable (the command can neither trace it nor read its memory), answers
 * each call for the kernel: it takes the caller's socket (pidfd_getfd), reads the address
 * (and a message's bytes and descriptors) once, and for a Unix path opens the file as the caller would find it (its root, its working directory, its
 * mount namespace), decides on that open file, and makes the call itself on the caller's
 * socket through /proc/self/fd, so that nothing the caller changes after the check counts.
 * It never lets the kernel go on with the caller's own arguments. It then waits for the
 * command and ends as it ends (the command's orphans are its to reap, so that every
 * process it answers for is its descendant, as Yama's ptrace_scope 1 asks); killed, the
 * filtered calls fail (ENOSYS) and the sandbox ends with it (the sandbox's init follows
 * its first child).
 *
 * Refused (ECONNREFUSED, as a socket hidden at the start): a socket file on a file system
 * of the shared /tmp (that of /tmp and those mounted below it at the start) that no
 * socket of the sandbox's network namespace is bound to, unless the plan granted it (a
 * socket mounted on its own, the runtime's guard and network sockets).
 */
#ifndef AGENT_SANDBOX_UNIX_GUARD_H
#define AGENT_SANDBOX_UNIX_GUARD_H

/*
 * With the guard asked for (UNIX_GUARD_VARIABLE, taken out of the environment): forks;
 * returns in the child, under the guard's filter, and never in the parent, which
 * supervises and ends as the child ends. Without it, returns at once. A kernel without
 * what the guard needs is one line on stderr and exit 1; inside another agent-sandbox
 * whose guard holds already (EBUSY: one listener per process), the outer guard stands.
 */
void unix_guard_start(void);

/* The guard asked for: whether the variable is set (kept in the environment). */
int unix_guard_wanted(void);

#endif
