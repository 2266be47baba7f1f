// SPDX-License-Identifier: Apache-2.0
/*
 * The seccomp filter the sandbox's first program installs for the command and
 * everything it starts (see install_filter).
 */
#ifndef AGENT_SANDBOX_SECCOMP_FILTER_H
#define AGENT_SANDBOX_SECCOMP_FILTER_H

/* Installs the filter (the refused system calls, socket families, TIOCSTI, TIOCLINUX) with no new
 * privileges: 0, or -1 with errno when the kernel refuses it. */
int install_filter(void);

/* Installs the socket guard's filter (unix_guard.h) with a listener: its descriptor, or -1
 * with errno (EBUSY: a filter with a listener is installed already). */
int install_guard_filter(void);

#endif
