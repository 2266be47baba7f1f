// SPDX-License-Identifier: Apache-2.0
/*
 * The starter: the launcher's child that starts bwrap for the tool's JVM, reports how
 * it ended, removes the run's directories afterwards, and as a subreaper ends whatever
 * of the sandbox is left when the tool goes.
 */
#ifndef AGENT_SANDBOX_STARTER_H
#define AGENT_SANDBOX_STARTER_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* What ends the starter when the tool is gone (its death signal) or done with it: the
 * starter then kills bwrap and, as a subreaper, whatever of bwrap's comes to it (see
 * starter_on_stop), and ends. */
#define STARTER_STOP SIGUSR1

/* Forks the starter; on success, property is the JVM option that names it, and the
 * result the starter's pid (0 without a starter). */
pid_t fork_starter(char *property, size_t capacity);

#endif
