// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's mounts, checked where they landed (mount_check.c).
 *
 * bwrap mounts by path, and follows symbolic links on both sides: a concurrent
 * process that swaps a path for a link between agent-sandbox's check and bwrap's
 * mount would get another file shown, or the right file shown somewhere else. So
 * every mount is checked twice, outside before bwrap starts and inside before the
 * command starts, each time through a lookup that follows no link at all:
 *
 *   MOUNT_CHECKS  (the tool writes it in the run directory): one record per mount,
 *                 "<kind>\0<source>\0<target>\0"
 *   MOUNT_IDENTITIES  (mount_identify writes it beside, just before bwrap runs):
 *                 "<kind>\0<device>:<inode>\0<target>\0", the identity of the source
 *                 as found then
 *
 * and inside, mount_verify finds at each target the root of a mount showing that
 * very file, read-only where it must be; the working directory record moves the
 * process into the directory it checked. Any difference stops the sandbox before
 * the command runs.
 */
#ifndef AGENT_SANDBOX_MOUNT_CHECK_H
#define AGENT_SANDBOX_MOUNT_CHECK_H

#include <stddef.h>

/* Writes run_dir/MOUNT_IDENTITIES from run_dir/MOUNT_CHECKS. 0, or -1 with a reason. */
int mount_identify(const char *run_dir, char *reason, size_t capacity);

/* Checks every record of the identities file at path. 0, or -1 with a reason. */
int mount_verify(const char *path, char *reason, size_t capacity);

/* The file at an absolute path, as O_PATH, reached without following any link; -1
 * with errno set otherwise (ELOOP: a link on the way). */
int open_without_links(const char *path);

#endif
