// SPDX-License-Identifier: Apache-2.0
/* The copy-on-write views of the project's git dirs, mounted by the sandbox's first
 * program (see guard.h, RUNTIME_GIT_VIEWS). */
#ifndef AGENT_SANDBOX_GIT_VIEW_H
#define AGENT_SANDBOX_GIT_VIEW_H

#include <stddef.h>

/*
 * When FILE exists: mounts each view it names (an overlay over the git dir), unmounts
 * the layers' directory, and makes this process the user again in a user namespace of
 * its own, without capabilities. A view that cannot be mounted is said in one line on
 * stderr (the git dir keeps the protection of the plan's own mounts) and the others go
 * on. Returns 0, or -1 with the reason (the command must not run) in REASON.
 */
int git_views_mount(const char *file, char *reason, size_t capacity);

#endif
