// SPDX-License-Identifier: Apache-2.0
/*
 * The walk of the project's work tree for its git dirs: see tree_watch.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "tree_watch.h"

#include <dirent.h>
#include <signal.h>
#include <spawn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Appends LENGTH bytes to RECORDS; -ENOMEM when memory runs out. */
static int append(struct tree_records *records, const void *bytes, size_t length)
{
    if (records->size - records->used < length) {
        size_t size = records->size == 0 ? 4096 : records->size;
        while (size - records->used < length) {
            size *= 2;
        }
        unsigned char *grown = realloc(records->data, size);
        if (grown == NULL) {
            return -ENOMEM;
        }
        records->data = grown;
        records->size = size;
    }
    memcpy(records->data + records->used, bytes, length);
    records->used += length;
    return 0;
}

/* One record of tree_watch_walk. */
static int record(struct tree_records *out, int wd, unsigned char flags, const char *path)
{
    unsigned char head[5] = {(unsigned char)((unsigned int)wd >> 24), (unsigned char)((unsigned int)wd >> 16),
                             (unsigned char)((unsigned int)wd >> 8), (unsigned char)wd, flags};
    int result = append(out, head, sizeof head);
    return result != 0 ? result : append(out, path, strlen(path) + 1);
}

/* Whether PATH is one of the NUL-ended paths of SKIP. */
static int skipped(const char *path, const char *skip, size_t skip_length)
{
    size_t at = 0;
    while (at < skip_length) {
        size_t n = strnlen(skip + at, skip_length - at);
        if (strlen(path) == n && memcmp(path, skip + at, n) == 0) {
            return 1;
        }
        at += n + 1;
    }
    return 0;
}

/* Directory PATH of ROOT (a descriptor), opened through no link and never above ROOT. */
static int open_beneath(int root, const char *path)
{
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, root, path[0] == '\0' ? "." : path, &how, sizeof how);
}

/* The directories still to list: their paths, NUL-ended, one after the other in TEXT, and where
 * each begins in STARTS, so that the last is taken first (depth first: the stack stays as small
 * as the tree is deep and wide on one path). */
struct pending {
    struct tree_records text;
    size_t *starts;
    size_t count;
    size_t size;
};

static int push(struct pending *pending, const char *path)
{
    if (pending->count == pending->size) {
        size_t size = pending->size == 0 ? 256 : pending->size * 2;
        size_t *grown = realloc(pending->starts, size * sizeof *grown);
        if (grown == NULL) {
            return -ENOMEM;
        }
        pending->starts = grown;
        pending->size = size;
    }
    pending->starts[pending->count++] = pending->text.used;
    return append(&pending->text, path, strlen(path) + 1);
}

/* Takes the last path pushed into PATH (PATH_MAX bytes). */
static void pop(struct pending *pending, char *path)
{
    size_t start = pending->starts[--pending->count];
    memcpy(path, pending->text.data + start, pending->text.used - start);
    pending->text.used = start;
}

/* The calling thread's scheduling: SCHED_IDLE or SCHED_OTHER. */
static void schedule(int policy)
{
    struct sched_param parameters;
    memset(&parameters, 0, sizeof parameters);
    sched_setscheduler(0, policy, &parameters);
}

static long long now_millis(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int tree_watch_walk(const char *root, const char *start, int inotify, const char *skip, size_t skip_length,
                    size_t max, int idle_millis, struct tree_records *out)
{
    int idle = idle_millis > 0 && sched_getscheduler(0) == SCHED_OTHER;
    long long busy_from = idle ? now_millis() + idle_millis : 0;
    if (idle) {
        schedule(SCHED_IDLE);
    }
    int root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root_fd < 0) {
        return -errno;
    }
    if (strlen(start) >= PATH_MAX) {
        close(root_fd);
        return -ENAMETOOLONG;
    }
    struct pending pending;
    memset(&pending, 0, sizeof pending);
    int result = push(&pending, start);
    int bits = 0;
    size_t listed = 0;
    int first = 1;
    char path[PATH_MAX];
    char child[PATH_MAX];
    char absolute[2 * PATH_MAX];
    while (result == 0 && pending.count > 0) {
        if (listed == max) {
            bits |= TREE_WATCH_TOO_MANY;
            break;
        }
        if (idle && (listed & 63) == 0 && now_millis() >= busy_from) {
            schedule(SCHED_OTHER);
            idle = 0;
        }
        pop(&pending, path);
        int fd = open_beneath(root_fd, path);
        if (fd < 0) {
            if (first) {
                result = -errno;
            } else if (errno == EACCES) {
                /* a directory its owner may not read: what is below it is not known */
                result = record(out, -1, TREE_WATCH_UNLISTED, path);
            }
            /* gone meanwhile, or a link put in its place: what is renamed or made there is told
             * by the watch on its parent */
            first = 0;
            continue;
        }
        first = 0;
        listed++;
        int wd = -1;
        if (inotify >= 0) {
            /* by its path, not through /proc/self/fd (twice the cost): a directory put in its
             * place since it was opened is told by the watch on its parent (where it was made or
             * renamed to), as is this one where it went, and each is then listed again */
            int n = snprintf(absolute, sizeof absolute, "%s%s%s", root, path[0] == '\0' ? "" : "/", path);
            if (n <= 0 || (size_t)n >= sizeof absolute) {
                bits |= TREE_WATCH_TOO_LONG;
            } else {
                wd = inotify_add_watch(inotify, absolute, TREE_WATCH_MASK | IN_DONT_FOLLOW);
                if (wd < 0 && (errno == ENOSPC || errno == ENOMEM)) {
                    /* none left: the caller looks by walks alone */
                    bits |= TREE_WATCH_NO_WATCHES;
                    inotify = -1;
                }
            }
        }
        DIR *dir = fdopendir(fd);
        if (dir == NULL) {
            close(fd);
            continue;
        }
        unsigned char flags = 0;
        size_t length = strlen(path);
        struct dirent *entry;
        while (result == 0 && (entry = readdir(dir)) != NULL) {
            const char *name = entry->d_name;
            if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
                continue;
            }
            if (strcmp(name, "HEAD") == 0) {
                flags |= TREE_WATCH_HEAD;
            }
            int directory = entry->d_type == DT_DIR;
            if (entry->d_type == DT_UNKNOWN) {
                struct stat st;
                directory = fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
            }
            if (!directory) {
                continue;
            }
            size_t name_length = strlen(name);
            if (length + 1 + name_length + 1 > sizeof child) {
                bits |= TREE_WATCH_TOO_LONG;
                continue;
            }
            if (length == 0) {
                memcpy(child, name, name_length + 1);
            } else {
                memcpy(child, path, length);
                child[length] = '/';
                memcpy(child + length + 1, name, name_length + 1);
            }
            if (!skipped(child, skip, skip_length)) {
                result = push(&pending, child);
            }
        }
        closedir(dir);
        if (result == 0 && (wd >= 0 || (flags & TREE_WATCH_HEAD) != 0)) {
            result = record(out, wd, flags, path);
        }
    }
    if (idle) {
        schedule(SCHED_OTHER);
    }
    free(pending.text.data);
    free(pending.starts);
    close(root_fd);
    return result != 0 ? result : bits;
}

/* The program that holds the descriptor: it reads its stdin, a pipe this process holds open
 * until it ends, and ends there. */
static const char *const HOLDERS[] = {"/usr/bin/cat", "/bin/cat"};

int tree_watch_hold(int fd)
{
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
        return -errno;
    }
    pid_t pid = 0;
    /* the descriptor as fd 3 of the holder: dup2 to another number clears close-on-exec */
    int source = fd == 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 10) : fd;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = source < 0 ? errno : posix_spawn_file_actions_init(&actions);
    if (error == 0) {
        error = posix_spawnattr_init(&attributes);
        if (error == 0) {
            sigset_t none;
            sigset_t all;
            sigemptyset(&none);
            sigfillset(&all);
            /* a group of its own (a Ctrl-C at the terminal is not its), every signal's default */
            posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            posix_spawnattr_setpgroup(&attributes, 0);
            posix_spawnattr_setsigmask(&attributes, &none);
            posix_spawnattr_setsigdefault(&attributes, &all);
            posix_spawn_file_actions_adddup2(&actions, ends[0], 0);
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
            posix_spawn_file_actions_adddup2(&actions, 1, 2);
            posix_spawn_file_actions_adddup2(&actions, source, 3);
            posix_spawn_file_actions_addclosefrom_np(&actions, 4);
            static char *const environment[] = {NULL};
            error = ENOENT;
            for (size_t i = 0; i < sizeof HOLDERS / sizeof HOLDERS[0] && error == ENOENT; i++) {
                char *const arguments[] = {(char *)HOLDERS[i], NULL};
                error = posix_spawn(&pid, HOLDERS[i], &actions, &attributes, arguments, environment);
            }
            posix_spawnattr_destroy(&attributes);
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    if (source >= 0 && source != fd) {
        close(source);
    }
    close(ends[0]);
    if (error != 0) {
        close(ends[1]);
        return -error;
    }
    /* the write end stays open, closed on exec, until this process ends */
    return (int)pid;
}
