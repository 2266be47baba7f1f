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
#include <sys/vfs.h>
#include <unistd.h>

#include "git_snapshot.h"
#include "guard.h"
#include "mount_check.h"
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

/* The user again, in a user namespace of its own, without any capability. */
static int become_user(unsigned long uid, unsigned long gid, char *reason, size_t capacity)
{
    if (unshare(CLONE_NEWUSER) != 0) {
        snprintf(reason, capacity, "cannot enter the sandbox's own user namespace: %s", strerror(errno));
        return -1;
    }
    const char *failed = "";
    if (map_ids(uid, 0, gid, 0, &failed) != 0) {
        snprintf(reason, capacity, "cannot write the user's %s: %s", failed, strerror(errno));
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

/* The overlay options for one view; -1 when a path has a character the options cannot
 * hold. LOWERS is one directory, or several joined by ':' (the topmost first). VOLATILE
 * adds the option with which the overlay never syncs its upper layer (no fsync at a
 * copy-up, none of git's own fsyncs reaching the disk): a git view's layer lives as long as
 * its run, the host's apply reads it while the machine stays up, and the apply makes the
 * host's git dir as git would; a home's layer outlives the run and is synced as usual. */
static int overlay_options(char *out, size_t capacity, const char *lowers, const char *upper, const char *work,
                           int volatile_upper)
{
    if (strpbrk(lowers, ",\\") != NULL || strpbrk(upper, ",:\\") != NULL || strpbrk(work, ",:\\") != NULL) {
        return -1;
    }
    int n = snprintf(out, capacity, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr%s", lowers, upper, work,
                     volatile_upper ? ",volatile" : "");
    return n > 0 && (size_t)n < capacity ? 0 : -1;
}

/* Mounts an overlay with OPTIONS at AT; one that asks for a volatile upper layer is mounted
 * without it where the kernel does not know the option (before Linux 5.10). */
static int mount_overlay(const char *at, char *options)
{
    if (mount("overlay", at, "overlay", MS_NOSUID | MS_NODEV, options) == 0) {
        return 0;
    }
    size_t length = strlen(options);
    const char *option = ",volatile";
    size_t n = strlen(option);
    if (errno != EINVAL || length < n || strcmp(options + length - n, option) != 0) {
        return -1;
    }
    options[length - n] = '\0';
    return mount("overlay", at, "overlay", MS_NOSUID | MS_NODEV, options);
}

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

/* At most this many mounts of the plan below one view, put back on top of it. */
#define VIEW_SUBMOUNTS_MAX 64

/* The mounts below a view's directory, put back on top of the overlay once it is mounted. */
struct kept_mounts {
    int count;
    int fds[VIEW_SUBMOUNTS_MAX];
    char paths[VIEW_SUBMOUNTS_MAX][PATH_MAX];
};

/* Undoes mountinfo's octal escapes (space, tab, newline, backslash) in place. */
static void unescape(char *text)
{
    char *in = text;
    char *out = text;
    while (*in != '\0') {
        if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0'
            && in[3] <= '7') {
            *out++ = (char)(((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
            in += 4;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
}

/* True when PATH is DIR or lies below it. */
static int within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/*
 * Clones (with what is mounted below them) the topmost mounts strictly below TARGET: the
 * plan's own mounts there (hidden credential files, rules of the user's own) must stay on
 * top of the view. Returns -1 with the reason when one cannot be kept.
 */
static int keep_mounts(const char *target, struct kept_mounts *kept, char *reason, size_t capacity)
{
    kept->count = 0;
    size_t length = 0;
    char *table = read_views("/proc/self/mountinfo", &length, reason, capacity);
    if (table == NULL) {
        if (reason[0] == '\0') {
            snprintf(reason, capacity, "cannot read /proc/self/mountinfo");
        }
        return -1;
    }
    char *line = table;
    while (line < table + length) {
        char *eol = memchr(line, '\n', (size_t)(table + length - line));
        if (eol == NULL) {
            eol = table + length;
        }
        *eol = '\0';
        /* mount id, parent id, major:minor, root, mount point */
        char *field_start = line;
        for (int f = 0; f < 4 && field_start != NULL; f++) {
            field_start = strchr(field_start, ' ');
            field_start = field_start == NULL ? NULL : field_start + 1;
        }
        if (field_start != NULL) {
            char *space = strchr(field_start, ' ');
            if (space != NULL) {
                *space = '\0';
            }
            unescape(field_start);
            int below = within(field_start, target) && strcmp(field_start, target) != 0;
            for (int i = 0; below && i < kept->count; i++) {
                below = !within(field_start, kept->paths[i]);
            }
            if (below) {
                if (kept->count == VIEW_SUBMOUNTS_MAX || strlen(field_start) >= PATH_MAX) {
                    snprintf(reason, capacity, "too many mounts below %s", target);
                    free(table);
                    return -1;
                }
                int fd = (int)syscall(SYS_open_tree, AT_FDCWD, field_start,
                                      OPEN_TREE_CLONE | O_CLOEXEC | AT_RECURSIVE);
                if (fd < 0) {
                    snprintf(reason, capacity, "cannot keep the mount at %s: %s", field_start, strerror(errno));
                    free(table);
                    return -1;
                }
                kept->fds[kept->count] = fd;
                snprintf(kept->paths[kept->count], PATH_MAX, "%s", field_start);
                kept->count++;
            }
        }
        line = eol + 1;
    }
    free(table);
    return 0;
}

static void drop_kept(struct kept_mounts *kept)
{
    for (int i = 0; i < kept->count; i++) {
        close(kept->fds[i]);
    }
    kept->count = 0;
}

/* Puts the kept mounts back, each on a file or directory like its own, made in the view if missing. */
static int restore_mounts(struct kept_mounts *kept, char *reason, size_t capacity)
{
    for (int i = 0; i < kept->count; i++) {
        struct stat own;
        struct stat here;
        if (fstat(kept->fds[i], &own) != 0) {
            snprintf(reason, capacity, "cannot read the mount kept for %s: %s", kept->paths[i], strerror(errno));
            return -1;
        }
        if (lstat(kept->paths[i], &here) != 0 || S_ISDIR(here.st_mode) != S_ISDIR(own.st_mode)) {
            if (S_ISDIR(own.st_mode)) {
                mkdir(kept->paths[i], 0700);
            } else {
                int fd = open(kept->paths[i], O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd >= 0) {
                    close(fd);
                }
            }
        }
        if (syscall(SYS_move_mount, kept->fds[i], "", AT_FDCWD, kept->paths[i], MOVE_MOUNT_F_EMPTY_PATH) != 0) {
            snprintf(reason, capacity, "cannot put back the mount at %s over its copy-on-write view: %s",
                     kept->paths[i], strerror(errno));
            return -1;
        }
    }
    drop_kept(kept);
    return 0;
}

/* The overlay makes its own work directory with no permission bits, and for a volatile
 * upper layer the directories of its mark (incompat/volatile, which holds a file "dirty"):
 * the owner's again, so that the run's removal (and the next run's sweep, after a run killed
 * outright) can enter them. */
static void own_work(const char *work)
{
    static const char *const made[] = {"work", "work/incompat", "work/incompat/volatile"};
    for (size_t i = 0; i < sizeof made / sizeof made[0]; i++) {
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s/%s", work, made[i]);
        if (n > 0 && (size_t)n < sizeof path && chmod(path, 0700) != 0 && errno != ENOENT) {
            /* left as it is: the removal says what it cannot remove */
        }
    }
}

/* Mounts one view: the overlay of LOWERS over TARGET, the mounts below it kept on top for a
 * home directory's. 1 when mounted, 0 when not (said on stderr: the run goes on with the
 * fallback), -1 with the reason when the run cannot go on. */
static int mount_view(char kind, const char *target, const char *mount_at, const char *lowers, const char *upper,
                      const char *work, char *reason, size_t capacity)
{
    const char *what = kind == VIEW_HOME ? "home" : "git";
    const char *otherwise = kind == VIEW_HOME ? "it stays read-only in this run"
                                              : "its config and hooks stay protected path by path";
    char options[3 * PATH_MAX + 64];
    if (overlay_options(options, sizeof options, lowers, upper, work, kind == VIEW_GIT) != 0) {
        fprintf(stderr, "agent-sandbox: %s: no copy-on-write view of %s (its path has a character an overlay"
                " cannot take); %s\n", what, target, otherwise);
        return 0;
    }
    struct kept_mounts *kept = malloc(sizeof *kept);
    if (kept == NULL) {
        snprintf(reason, capacity, "out of memory");
        return -1;
    }
    kept->count = 0;
    /* a home directory's: the plan's mounts below it stay on top (a git dir's, in a view,
     * are the fallback's path protections, which the view replaces) */
    if (kind == VIEW_HOME && keep_mounts(target, kept, reason, capacity) != 0) {
        drop_kept(kept);
        free(kept);
        return -1;
    }
    if (mount_overlay(mount_at, options) != 0) {
        fprintf(stderr, "agent-sandbox: %s: no copy-on-write view of %s (%s); %s\n", what, target, strerror(errno),
                otherwise);
        drop_kept(kept);
        free(kept);
        return 0;
    }
    own_work(work);
    int status = restore_mounts(kept, reason, capacity);
    drop_kept(kept);
    free(kept);
    return status == 0 ? 1 : -1;
}

/* One record of the views file: its kind and up to four fields. */
struct view_record {
    char kind;
    const char *fields[5];
};

/* Overlays mounted so far in this run, against GIT_VIEWS_MAX. */
static int overlays;

/* Makes DIR/REL and the directories on the way (0755), or returns -1. */
static int make_dirs(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *slash = path + strlen(dir) + 1;; slash++) {
        slash = strchr(slash, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            return -1;
        }
        if (slash == NULL) {
            return 0;
        }
        *slash = '/';
    }
}

/* Writes LENGTH bytes to the new file DIR/NAME (the user's alone), or returns -1. */
static int write_new(const char *dir, const char *name, const char *bytes, size_t length)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        return -1;
    }
    int status = write_all(fd, bytes, length);
    int error = errno;
    close(fd);
    errno = error;
    return status;
}

/* The snapshot's files the host's apply reads, beside its lower dir LAYER/lower: the loose
 * refs, and packed-refs as the copy has it. */
static int write_base(const char *layer, const char *lower, const struct git_snapshot *snapshot)
{
    if (write_new(layer, GIT_BASE_REFS, snapshot->refs == NULL ? "" : snapshot->refs, snapshot->refs_length) != 0) {
        return -1;
    }
    char packed[PATH_MAX];
    char copy[PATH_MAX];
    int n = snprintf(packed, sizeof packed, "%s/packed-refs", lower);
    int m = snprintf(copy, sizeof copy, "%s/%s", layer, GIT_BASE_PACKED_REFS);
    if (n < 0 || (size_t)n >= sizeof packed || m < 0 || (size_t)m >= sizeof copy) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int in = open(packed, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    int out = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    int status = out < 0 ? -1 : 0;
    char buffer[65536];
    while (status == 0) {
        ssize_t got = read(in, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            status = got < 0 ? -1 : 0;
            break;
        }
        status = write_all(out, buffer, (size_t)got);
    }
    int error = errno;
    close(in);
    if (out >= 0) {
        close(out);
    }
    errno = error;
    return status;
}

/* The directory REL below the directory DIR (names separated by '/', none of them "..",
 * no link followed), as FLAGS opens it; -1 with errno. */
static int open_below(int dir, const char *rel, int flags)
{
    char name[NAME_MAX + 1];
    int at = dup(dir);
    const char *p = rel;
    while (at >= 0) {
        const char *end = strchr(p, '/');
        size_t length = end != NULL ? (size_t)(end - p) : strlen(p);
        if (length == 0 || length > NAME_MAX || (length == 2 && p[0] == '.' && p[1] == '.')) {
            close(at);
            errno = EINVAL;
            return -1;
        }
        memcpy(name, p, length);
        name[length] = '\0';
        int next = openat(at, name, (end != NULL ? O_PATH : flags) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int error = errno;
        close(at);
        errno = error;
        if (end == NULL) {
            return next;
        }
        at = next;
        p = end + 1;
    }
    return -1;
}

#define OVERLAY_FILE_SYSTEM 0x794c7630 /* OVERLAYFS_SUPER_MAGIC */

/* What a git dir's message says when it is not the directory the host planned (a concurrent
 * process renamed something on the way to it). */
#define GIT_DIR_CHANGED \
    "%s changed while the sandbox was being set up (%s): a concurrent process replaced it or a directory" \
    " above it; nothing ran, start again"

/*
 * Mounts a git dir's view: a memory file system of the sandbox's own at its lower dir,
 * the git dir copied into it without its object stores (git_snapshot.c), the overlay, and
 * each object store's overlay over the host's live directory. FIELDS: the git dir, its
 * lower, upper and work dir, and the git dir's identity as the host planned it
 * ("device:inode"). Everything is done on descriptors of the directory the host planned,
 * reached through no link, never by its path again: a concurrent process (another sandbox
 * of the same project) that renames a directory on the way meanwhile makes the run stop,
 * never the view land on another directory. When a store cannot be mounted, the git dir's
 * view goes too (a view without its objects is no git dir). -1 with the reason when the
 * run cannot go on.
 */
static int mount_git_view(const char *const fields[5], char *reason, size_t capacity)
{
    const char *target = fields[0];
    const char *lower = fields[1];
    const char *upper = fields[2];
    const char *work = fields[3];
    char layer[PATH_MAX];
    snprintf(layer, sizeof layer, "%s", work);
    strip_last_component(layer);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", target);
    strip_last_component(parent);
    const char *base = strrchr(target, '/');
    base = base == NULL ? target : base + 1;
    unsigned long long device = 0;
    unsigned long long inode = 0;
    char extra;
    if (sscanf(fields[4], "%llu:%llu%c", &device, &inode, &extra) != 2 || base[0] == '\0') {
        snprintf(reason, capacity, "malformed view of %s", target);
        return -1;
    }
    int parent_fd = open_without_links(parent);
    int git_fd = parent_fd < 0 ? -1 : openat(parent_fd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat planned;
    if (git_fd < 0 || fstat(git_fd, &planned) != 0 || (unsigned long long)planned.st_dev != device
        || (unsigned long long)planned.st_ino != inode) {
        snprintf(reason, capacity, GIT_DIR_CHANGED, target,
                 git_fd < 0 ? strerror(errno) : "another directory is there now");
        if (git_fd >= 0) {
            close(git_fd);
        }
        if (parent_fd >= 0) {
            close(parent_fd);
        }
        return -1;
    }
    char options[64];
    snprintf(options, sizeof options, "mode=0700,size=%llu,nr_inodes=%d",
             (unsigned long long)GIT_SNAPSHOT_MAX_BYTES + (unsigned long long)GIT_SNAPSHOT_MAX_ENTRIES * 4096ULL,
             GIT_SNAPSHOT_MAX_ENTRIES + 16);
    struct git_snapshot snapshot;
    memset(&snapshot, 0, sizeof snapshot);
    int status = 1;
    char why[PATH_MAX + 128];
    if (mount("tmpfs", lower, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) != 0) {
        snprintf(reason, capacity, "cannot make the copy of %s for this run's view of it (%s); run with "
                 "AGENT_SANDBOX_GIT_VIEW=off for the fallback, which protects the git dir path by path",
                 target, strerror(errno));
        status = -1;
    } else if (git_snapshot_copy(git_fd, lower, &snapshot, why, sizeof why) != 0) {
        snprintf(reason, capacity, "cannot copy %s for this run's view of it (%s); run with "
                 "AGENT_SANDBOX_GIT_VIEW=off for the fallback, which protects the git dir path by path",
                 target, why);
        status = -1;
    } else if (overlays + 1 + snapshot.store_count > GIT_VIEWS_MAX) {
        snprintf(reason, capacity, "the views of the project's git dirs need more than %d mounts (each git dir"
                 " and each of its submodules' object stores); run with AGENT_SANDBOX_GIT_VIEW=off for the"
                 " fallback, which protects the git dirs path by path", GIT_VIEWS_MAX);
        status = -1;
    } else if (write_base(layer, lower, &snapshot) != 0) {
        snprintf(reason, capacity, "cannot write the refs of %s for the host's apply: %s", target, strerror(errno));
        status = -1;
    }
    int count = status == 1 ? snapshot.store_count : 0;
    int *fds = calloc((size_t)count + 1, sizeof *fds);
    if (fds == NULL) {
        snprintf(reason, capacity, "out of memory");
        status = -1;
        count = 0;
    }
    int opened = 0;
    /* each store, the host's live directory: opened below the git dir before its overlay covers it */
    for (int k = 0; k < count && status == 1; k++) {
        char store_work[PATH_MAX];
        int b = snprintf(store_work, sizeof store_work, "%s/work-%d", layer, k);
        if (b < 0 || (size_t)b >= sizeof store_work) {
            snprintf(reason, capacity, "a path below %s is too long for its view", target);
            status = -1;
            break;
        }
        if (make_dirs(upper, snapshot.stores[k]) != 0 || (mkdir(store_work, 0700) != 0 && errno != EEXIST)) {
            snprintf(reason, capacity, "cannot make the layer of %s/%s: %s", target, snapshot.stores[k],
                     strerror(errno));
            status = -1;
            break;
        }
        fds[k] = open_below(git_fd, snapshot.stores[k], O_PATH);
        if (fds[k] < 0) {
            fprintf(stderr, "agent-sandbox: git: no copy-on-write view of %s (cannot open %s/%s: %s); its config and"
                    " hooks stay protected path by path\n", target, target, snapshot.stores[k], strerror(errno));
            status = 0;
            break;
        }
        opened = k + 1;
    }
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", git_fd);
    if (status == 1) {
        status = mount_view(VIEW_GIT, target, at, lower, upper, work, reason, capacity);
    }
    /* the overlay, reached from the same parent: the view's root, whose stores get theirs */
    int root = -1;
    struct statfs kind;
    if (status == 1) {
        overlays++;
        root = openat(parent_fd, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0 || fstatfs(root, &kind) != 0 || kind.f_type != OVERLAY_FILE_SYSTEM) {
            snprintf(reason, capacity, GIT_DIR_CHANGED, target, "its view is not where it was mounted");
            status = -1;
        }
    }
    for (int k = 0; k < count && status == 1; k++) {
        char store_upper[PATH_MAX];
        char store_work[PATH_MAX];
        char lower_at[64];
        int b = snprintf(store_upper, sizeof store_upper, "%s/%s", upper, snapshot.stores[k]);
        int c = snprintf(store_work, sizeof store_work, "%s/work-%d", layer, k);
        if (b < 0 || (size_t)b >= sizeof store_upper || c < 0 || (size_t)c >= sizeof store_work) {
            snprintf(reason, capacity, "a path below %s is too long for its view", target);
            status = -1;
            break;
        }
        snprintf(lower_at, sizeof lower_at, "/proc/self/fd/%d", fds[k]);
        int in_view = open_below(root, snapshot.stores[k], O_PATH);
        char store_at[64];
        snprintf(store_at, sizeof store_at, "/proc/self/fd/%d", in_view);
        char overlay[3 * PATH_MAX + 64];
        const char *problem = NULL;
        if (in_view < 0) {
            problem = strerror(errno);
        } else if (overlay_options(overlay, sizeof overlay, lower_at, store_upper, store_work, 1) != 0) {
            problem = "its path has a character an overlay cannot take";
        } else if (mount_overlay(store_at, overlay) != 0) {
            problem = strerror(errno);
        }
        if (in_view >= 0) {
            close(in_view);
        }
        if (problem != NULL) {
            fprintf(stderr, "agent-sandbox: git: no copy-on-write view of %s (its object store %s: %s); its config"
                    " and hooks stay protected path by path\n", target, snapshot.stores[k], problem);
            char root_at[64];
            snprintf(root_at, sizeof root_at, "/proc/self/fd/%d", root);
            if (umount2(root_at, MNT_DETACH) != 0) {
                snprintf(reason, capacity, "cannot take back the view of %s: %s", target, strerror(errno));
                status = -1;
            } else {
                status = 0;
            }
            break;
        }
        overlays++;
        own_work(store_work);
    }
    for (int k = 0; k < opened; k++) {
        close(fds[k]);
    }
    free(fds);
    if (root >= 0) {
        close(root);
    }
    close(git_fd);
    close(parent_fd);
    git_snapshot_free(&snapshot);
    return status < 0 ? -1 : 0;
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
    struct view_record *records = calloc(GIT_VIEWS_MAX, sizeof *records);
    if (records == NULL) {
        snprintf(reason, capacity, "out of memory");
        free(bytes);
        return -1;
    }
    int count = 0;
    const char *kind;
    while ((kind = field(&cursor, end)) != NULL) {
        int fields = kind[0] == VIEW_GIT ? 5 : 3;
        int ok = count < GIT_VIEWS_MAX && (kind[0] == VIEW_GIT || kind[0] == VIEW_HOME) && kind[1] == '\0';
        for (int f = 0; ok && f < fields; f++) {
            records[count].fields[f] = field(&cursor, end);
            ok = records[count].fields[f] != NULL;
        }
        if (!ok) {
            snprintf(reason, capacity, "malformed %s", file);
            free(records);
            free(bytes);
            return -1;
        }
        records[count++].kind = kind[0];
    }
    int status = 0;
    for (int i = 0; i < count && status == 0; i++) {
        if (records[i].kind == VIEW_HOME) {
            const char *lowers = records[i].fields[0];
            const char *target = strrchr(lowers, ':');
            target = target == NULL ? lowers : target + 1;
            status = mount_view(VIEW_HOME, target, target, lowers, records[i].fields[1], records[i].fields[2],
                                reason, capacity) < 0 ? -1 : 0;
        } else {
            status = mount_git_view(records[i].fields, reason, capacity);
        }
    }
    free(records);
    free(bytes);
    if (status != 0) {
        return -1;
    }
    /* the layers themselves are the host's to read: out of the command's sight */
    const char *staging[] = {GIT_LAYERS, HOME_LAYERS};
    for (size_t i = 0; i < 2; i++) {
        if (umount2(staging[i], MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
            snprintf(reason, capacity, "cannot hide the copy-on-write layers: %s", strerror(errno));
            return -1;
        }
    }
    return become_user(uid, gid, reason, capacity);
}
