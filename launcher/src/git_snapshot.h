// SPDX-License-Identifier: Apache-2.0
/*
 * The lower layer of a git view: a copy of the host's git dir without its object stores,
 * made by the sandbox's first program in a memory file system of the sandbox's own
 * (git_snapshot.c says why a copy, and why there).
 */
#ifndef AGENT_SANDBOX_GIT_SNAPSHOT_H
#define AGENT_SANDBOX_GIT_SNAPSHOT_H

#include <stddef.h>

/* What a copy found besides the files themselves. */
struct git_snapshot {
    /* The object stores left empty in the copy (their views' mount points), relative to
     * the git dir: "objects", "modules/sub/objects", ... */
    char **stores;
    int store_count;
    int store_room;
    /* The loose refs of the top git dir, as the host's apply reads them (GIT_BASE_REFS in
     * guard.h): per ref its name below the git dir, a NUL, its content (none beyond
     * GIT_BASE_REF_BYTES), a NUL. */
    char *refs;
    size_t refs_length;
    size_t refs_room;
    /* What was copied so far, against GIT_SNAPSHOT_MAX_BYTES and GIT_SNAPSHOT_MAX_ENTRIES. */
    unsigned long long bytes;
    unsigned long entries;
};

/* Copies the git dir open at SOURCE (a descriptor it reads, never closes) into the empty directory TARGET: every directory, file and
 * link as it is (mode and times), but no lock file, no sample hook, no socket, FIFO or
 * device, and of each git dir in it (a directory with a HEAD file and an objects
 * directory) not its object stores (objects, lfs, annex), which are left empty and listed
 * in SNAPSHOT. 0 when copied; -1 with the reason (the limits say which was passed). */
int git_snapshot_copy(int source, const char *target, struct git_snapshot *snapshot, char *reason,
                      size_t capacity);

/* Frees what a copy found. */
void git_snapshot_free(struct git_snapshot *snapshot);

#endif
