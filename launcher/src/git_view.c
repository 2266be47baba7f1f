// SPDX-License-Identifier: Apache-2.0
/*
 * The copy-on-write views of the project's git dirs. bwrap cannot mount an overlay
 * itself before 0.9, and the mount namespace it makes belongs to the user namespace in
 * which it runs as uid 0: only a process of that namespace with CAP_SYS_ADMIN can mount
 * there. So bwrap starts this first program as uid 0 with those capabilities; it mounts
 * the overlays, then unshares a user namespace in which it is the user again (the
 * user's uid mapped to that uid 0, as bwrap itself does), and drops every capability.
 * The command runs there: it can mount nothing over the sandbox's mounts, and it sees
 * the git dirs through the overlays, whose changes land in the run's layers, which the
 * host reads and applies by allow-list (GitApply.java).
 */
#define _GNU_SOURCE

#include "git_view.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "util.h"

/* The whole file, ended by a NUL byte; NULL when it does not exist. */
static char *read_views(const char *file, size_t *length, char *reason, size_t capacity)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno != ENOENT) {
            snprintf(reason, capacity, "cannot read %s: %s", file, strerror(errno));
        }
        return NULL;
    }
    size_t size = 0;
    size_t room = 4096;
    char *bytes = malloc(room + 1);
    while (bytes != NULL) {
        ssize_t n = read(fd, bytes + size, room - size);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        size += (size_t)n;
        if (size == room) {
            if (room >= 1024 * 1024) {
                break;
            }
            room *= 2;
            char *more = realloc(bytes, room + 1);
            if (more == NULL) {
                free(bytes);
                bytes = NULL;
            } else {
                bytes = more;
            }
        }
    }
    close(fd);
    if (bytes == NULL) {
        snprintf(reason, capacity, "out of memory reading %s", file);
        return NULL;
    }
    bytes[size] = '\0';
    *length = size;
    return bytes;
}

/* The next NUL-ended field at *CURSOR before END, or NULL. */
static const char *field(char **cursor, char *end)
{
    char *start = *cursor;
    if (start >= end) {
        return NULL;
    }
    char *nul = memchr(start, '\0', (size_t)(end - start));
    if (nul == NULL) {
        return NULL;
    }
    *cursor = nul + 1;
    return start;
}

/* Writes TEXT to FILE (a /proc/self map), or returns -1. */
static int write_file(const char *file, const char *text)
{
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t length = strlen(text);
    int ok = write(fd, text, length) == (ssize_t)length;
    close(fd);
    return ok ? 0 : -1;
}

/* The user again, in a user namespace of its own, without any capability. */
static int become_user(unsigned long uid, unsigned long gid, char *reason, size_t capacity)
{
    if (unshare(CLONE_NEWUSER) != 0) {
        snprintf(reason, capacity, "cannot enter the sandbox's own user namespace: %s", strerror(errno));
        return -1;
    }
    char map[64];
    snprintf(map, sizeof map, "%lu 0 1\n", uid);
    if (write_file("/proc/self/uid_map", map) != 0) {
        snprintf(reason, capacity, "cannot map the user's uid: %s", strerror(errno));
        return -1;
    }
    if (write_file("/proc/self/setgroups", "deny\n") != 0) {
        snprintf(reason, capacity, "cannot deny setgroups: %s", strerror(errno));
        return -1;
    }
    snprintf(map, sizeof map, "%lu 0 1\n", gid);
    if (write_file("/proc/self/gid_map", map) != 0) {
        snprintf(reason, capacity, "cannot map the user's gid: %s", strerror(errno));
        return -1;
    }
    /* every capability of the new namespace away: bounding set, ambient, then the sets */
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
            snprintf(reason, capacity, "cannot drop capability %d: %s", cap, strerror(errno));
            return -1;
        }
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        snprintf(reason, capacity, "cannot clear the ambient capabilities: %s", strerror(errno));
        return -1;
    }
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &header, none) != 0) {
        snprintf(reason, capacity, "cannot drop the capabilities: %s", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(reason, capacity, "cannot set no_new_privs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The overlay options for one view; -1 when a path has a character the options cannot hold. */
static int overlay_options(char *out, size_t capacity, const char *lower, const char *upper, const char *work)
{
    const char *paths[] = {lower, upper, work};
    for (size_t i = 0; i < 3; i++) {
        if (strpbrk(paths[i], ",:\\") != NULL) {
            return -1;
        }
    }
    int n = snprintf(out, capacity, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", lower, upper, work);
    return n > 0 && (size_t)n < capacity ? 0 : -1;
}

int git_views_mount(const char *file, char *reason, size_t capacity)
{
    size_t length = 0;
    reason[0] = '\0';
    char *bytes = read_views(file, &length, reason, capacity);
    if (bytes == NULL) {
        return reason[0] == '\0' ? 0 : -1;
    }
    char *cursor = bytes;
    char *end = bytes + length;
    const char *uid_text = field(&cursor, end);
    const char *gid_text = field(&cursor, end);
    char *uid_end = NULL;
    char *gid_end = NULL;
    unsigned long uid = uid_text != NULL ? strtoul(uid_text, &uid_end, 10) : 0;
    unsigned long gid = gid_text != NULL ? strtoul(gid_text, &gid_end, 10) : 0;
    if (uid_text == NULL || gid_text == NULL || *uid_text == '\0' || *gid_text == '\0' || *uid_end != '\0'
        || *gid_end != '\0') {
        snprintf(reason, capacity, "malformed %s", file);
        free(bytes);
        return -1;
    }
    int views = 0;
    const char *lower;
    while ((lower = field(&cursor, end)) != NULL) {
        const char *upper = field(&cursor, end);
        const char *work = field(&cursor, end);
        if (upper == NULL || work == NULL || ++views > GIT_VIEWS_MAX) {
            snprintf(reason, capacity, "malformed %s", file);
            free(bytes);
            return -1;
        }
        char options[3 * PATH_MAX + 64];
        if (overlay_options(options, sizeof options, lower, upper, work) != 0) {
            fprintf(stderr, "agent-sandbox: git: no copy-on-write view of %s (its path has a character an overlay"
                    " cannot take); its config and hooks stay protected path by path\n", lower);
            continue;
        }
        if (mount("overlay", lower, "overlay", MS_NOSUID | MS_NODEV, options) != 0) {
            fprintf(stderr, "agent-sandbox: git: no copy-on-write view of %s (%s); its config and hooks stay"
                    " protected path by path\n", lower, strerror(errno));
            continue;
        }
        /* the overlay makes its own work directory with no permission bits: the owner's
         * again, so that the run's removal (and the next run's sweep) can enter it */
        char own_work[PATH_MAX];
        int n = snprintf(own_work, sizeof own_work, "%s/work", work);
        if (n > 0 && (size_t)n < sizeof own_work && chmod(own_work, 0700) != 0 && errno != ENOENT) {
            /* left as it is: the removal says what it cannot remove */
        }
    }
    free(bytes);
    /* the layers themselves are the host's to read: out of the command's sight */
    if (umount2(GIT_LAYERS, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
        snprintf(reason, capacity, "cannot hide the git layers: %s", strerror(errno));
        return -1;
    }
    return become_user(uid, gid, reason, capacity);
}
