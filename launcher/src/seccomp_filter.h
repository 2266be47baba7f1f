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

#endif
