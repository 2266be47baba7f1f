// SPDX-License-Identifier: Apache-2.0
/*
 * Tree removal that never follows a link: see remove_tree.h.
 */
#define _GNU_SOURCE

#include "remove_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard.h"
#include "util.h"

/* Removes the entry name of the directory dir and everything below it, never
 * following a symbolic link: every step is relative to a directory opened without
 * following one, as RunDir.removeTree does in Java. A directory the sandbox made
 * unsearchable is opened up (it is the user's own) before it is emptied. 0 when
 * the entry is gone. */
/* The names deep directories move to (see remove_entry), one new one each. */
static unsigned long remove_moved;

/* Removes dir/name and everything below it, never following a link: 0 when it is
 * gone, 1 when it was a directory REMOVE_MAX_DEPTH below the tree's top directory
 * (top, the descriptor of depth 0) and moved up into top under a name of its own, for a
 * later pass over top to remove (so a removal never holds more than REMOVE_MAX_DEPTH
 * descriptors, however deep the tree a sandbox left in its /tmp), -1 when it failed. */
static int remove_entry(int top, int dir, const char *name, int depth)
{
    if (unlinkat(dir, name, 0) == 0 || errno == ENOENT) {
        return 0;
    }
    if (errno != EISDIR && errno != EPERM) {
        return -1;
    }
    if (depth >= REMOVE_MAX_DEPTH && top >= 0) {
        char moved[64];
        do { /* a name not taken (an earlier removal cut short may have left some) */
            snprintf(moved, sizeof moved, ".deep.%lu", remove_moved++);
        } while (faccessat(top, moved, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
        if (renameat(dir, name, top, moved) == 0) {
            return 1;
        }
        return errno == ENOENT ? 0 : -1;
    }
    /* a directory (unlink says EISDIR, or EPERM on some file systems): opened as a
     * path, never through a link, and given its owner's rights back through it */
    int path = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (path < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", path);
    (void)chmod(proc, S_IRWXU);
    int opened = openat(path, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(path);
    if (opened < 0) {
        return -1;
    }
    DIR *listing = fdopendir(opened);
    if (listing == NULL) {
        close(opened);
        return -1;
    }
    int below_top = depth == 0 ? dirfd(listing) : top;
    int failed = 0;
    int removed;
    int passes = 0;
    do {
        /* entries removed while the directory is read may or may not be listed
         * again; it is read until a pass removes nothing more (a few passes at most:
         * nothing writes there any more, and whatever is left makes the caller try);
         * the top directory until it is empty, as deep directories move up into it */
        removed = 0;
        rewinddir(listing);
        struct dirent *entry;
        while ((entry = readdir(listing)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) {
                continue;
            }
            if (depth == 0 && strcmp(entry->d_name, RUN_OWNER) == 0) {
                continue; /* last, below */
            }
            if (remove_entry(below_top, dirfd(listing), entry->d_name, depth + 1) >= 0) {
                removed = 1;
            } else {
                failed = 1;
            }
        }
    } while (removed && !failed && (depth == 0 || ++passes < 8));
    /* a run directory's owner record last, and only once all else is gone: a removal cut
     * short (the tool killed) or failing leaves a directory whose owner the next run's
     * sweep can still tell is gone, and that sweep tries again */
    if (depth == 0 && !failed && unlinkat(dirfd(listing), RUN_OWNER, 0) != 0 && errno != ENOENT) {
        failed = 1;
    }
    closedir(listing);
    if (unlinkat(dir, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
        return 0;
    }
    return -1;
}

/* Removes an absolute path and everything below it (see remove_entry); its parent
 * is found as the kernel finds it. 0 when it is gone. */
int remove_tree(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || slash == NULL || slash[1] == '\0' || strcmp(slash + 1, ".") == 0 ||
        strcmp(slash + 1, "..") == 0) {
        return -1;
    }
    char parent[PATH_MAX];
    size_t length = slash == path ? 1 : (size_t)(slash - path);
    if (length >= sizeof parent) {
        return -1;
    }
    memcpy(parent, path, length);
    parent[length] = '\0';
    int dir = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    int result = remove_entry(-1, dir, slash + 1, 0);
    close(dir);
    return result;
}
