// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's mounts, checked where they landed: see mount_check.h.
 */
#define _GNU_SOURCE

#include "mount_check.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"

#define TMPFS_FILE_SYSTEM 0x01021994 /* TMPFS_MAGIC */
#define NO_SYMLINKS 0x04             /* RESOLVE_NO_SYMLINKS */
#define NO_MAGICLINKS 0x02           /* RESOLVE_NO_MAGICLINKS */
#define MOUNT_ROOT_ATTRIBUTE 0x2000  /* STATX_ATTR_MOUNT_ROOT */
/* What every message about a mount that is not what was checked says after its path
 * (MountChecks.CHANGED on the Java side, which passes the line on as its own). */
#define CHANGED_BECAUSE \
    " changed while the sandbox was being set up (%s): a concurrent process replaced it or a directory" \
    " above it; nothing ran, start again"
#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

/* openat2(2)'s argument (struct open_how), declared here: not every C library has it. */
struct how_to_open {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

/* The start of the kernel's struct statx, up to the fields read here. */
struct file_status {
    uint32_t mask;
    uint32_t block_size;
    uint64_t attributes;
    uint32_t links;
    uint32_t uid;
    uint32_t gid;
    uint16_t mode;
    uint16_t spare;
    uint64_t inode;
    uint64_t size;
    uint64_t blocks;
    uint64_t attributes_mask;
    unsigned char rest[256 - 64];
};

__attribute__((format(printf, 3, 4)))
static int fail(char *reason, size_t capacity, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(reason, capacity, format, args);
    va_end(args);
    return -1;
}

int open_without_links(const char *path)
{
    struct how_to_open how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC, .mode = 0,
                              .resolve = NO_SYMLINKS | NO_MAGICLINKS};
    long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
        return (int)fd;
    }
    /* Before Linux 5.6 (or a filter that refuses openat2): one component at a time. */
    if (path[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *p = path;
    while (dir >= 0) {
        while (*p == '/') {
            p++;
        }
        if (*p == '\0') {
            return dir;
        }
        const char *end = strchr(p, '/');
        size_t length = end != NULL ? (size_t)(end - p) : strlen(p);
        char name[NAME_MAX + 1];
        if (length > NAME_MAX) {
            close(dir);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, p, length);
        name[length] = '\0';
        int next = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        int error = errno;
        close(dir);
        struct stat info;
        if (next >= 0 && fstat(next, &info) == 0 && S_ISLNK(info.st_mode)) {
            close(next);
            errno = ELOOP;
            return -1;
        }
        errno = error;
        dir = next;
        p += length;
    }
    return -1;
}

/* The mount id of an open file, from /proc/self/fdinfo; -1 when unknown. */
static long mount_id(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    int info = open(path, O_RDONLY | O_CLOEXEC);
    if (info < 0) {
        return -1;
    }
    char text[1024];
    ssize_t n = read(info, text, sizeof text - 1);
    close(info);
    if (n <= 0) {
        return -1;
    }
    text[n] = '\0';
    char *line = strstr(text, "mnt_id:");
    return line == NULL ? -1 : strtol(line + 7, NULL, 10);
}

/* 1 when the open file is the root of a mount, 0 when not, -1 when it cannot be told. */
static int is_mount_root(int fd)
{
    struct file_status status;
    memset(&status, 0, sizeof status);
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, &status) == 0 &&
        (status.attributes_mask & MOUNT_ROOT_ATTRIBUTE) != 0) {
        return (status.attributes & MOUNT_ROOT_ATTRIBUTE) != 0;
    }
    /* Before Linux 5.8: a mount root is on another mount than its parent. */
    int parent = openat(fd, "..", O_PATH | O_CLOEXEC);
    if (parent < 0) {
        return -1;
    }
    long mine = mount_id(fd);
    long theirs = mount_id(parent);
    close(parent);
    return mine < 0 || theirs < 0 ? -1 : mine != theirs;
}

/* The whole of a file no larger than STARTER_MAX_REQUEST, NUL-terminated; NULL with errno. */
static char *read_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > STARTER_MAX_REQUEST) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    size_t length = (size_t)info.st_size;
    char *text = malloc(length + 1);
    size_t done = 0;
    while (text != NULL && done < length) {
        ssize_t n = read(fd, text + done, length - done);
        if (n <= 0) {
            free(text);
            text = NULL;
            errno = n == 0 ? EIO : errno;
            break;
        }
        done += (size_t)n;
    }
    close(fd);
    if (text != NULL) {
        text[length] = '\0';
        *size = length;
    }
    return text;
}

/* The next NUL-ended field at *cursor before end, or NULL. */
static const char *field(char **cursor, const char *end)
{
    char *start = *cursor;
    if (start >= end) {
        return NULL;
    }
    size_t length = strnlen(start, (size_t)(end - start));
    if (start + length >= end) {
        return NULL;
    }
    *cursor = start + length + 1;
    return start;
}

static int valid_kind(const char *kind)
{
    return strlen(kind) == 1 && strchr(MOUNT_KINDS, kind[0]) != NULL;
}

int mount_identify(const char *run_dir, char *reason, size_t capacity)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", run_dir, MOUNT_CHECKS) >= (int)sizeof path) {
        return fail(reason, capacity, "the run directory's path is too long");
    }
    size_t size = 0;
    char *checks = read_file(path, &size);
    if (checks == NULL) {
        return fail(reason, capacity, "cannot read %s: %s", path, strerror(errno));
    }
    size_t out_capacity = size + 64;
    size_t out_length = 0;
    char *out = malloc(out_capacity);
    char *cursor = checks;
    const char *end = checks + size;
    int status = 0;
    while (status == 0 && out != NULL && cursor < end) {
        const char *kind = field(&cursor, end);
        const char *source = field(&cursor, end);
        const char *target = field(&cursor, end);
        if (kind == NULL || source == NULL || target == NULL || !valid_kind(kind) || target[0] != '/') {
            status = fail(reason, capacity, "%s is not a list of mounts", path);
            break;
        }
        unsigned long long device = 0;
        unsigned long long inode = 0;
        if (kind[0] != MOUNT_EMPTY_DIR) {
            int fd = open_without_links(source);
            struct stat info;
            if (fd < 0 || fstat(fd, &info) != 0) {
                status = fail(reason, capacity, "%s" CHANGED_BECAUSE, source,
                              errno == ELOOP ? "a symbolic link is on its way now" : strerror(errno));
                if (fd >= 0) {
                    close(fd);
                }
                break;
            }
            close(fd);
            device = (unsigned long long)info.st_dev;
            inode = (unsigned long long)info.st_ino;
        }
        char identity[48];
        int n = snprintf(identity, sizeof identity, "%llu:%llu", device, inode);
        size_t need = 2 + (size_t)n + 1 + strlen(target) + 1;
        if (out_length + need > out_capacity) {
            out_capacity = (out_length + need) * 2;
            char *bigger = realloc(out, out_capacity);
            if (bigger == NULL) {
                free(out);
                out = NULL;
                break;
            }
            out = bigger;
        }
        out[out_length++] = kind[0];
        out[out_length++] = '\0';
        memcpy(out + out_length, identity, (size_t)n + 1);
        out_length += (size_t)n + 1;
        memcpy(out + out_length, target, strlen(target) + 1);
        out_length += strlen(target) + 1;
    }
    free(checks);
    if (out == NULL) {
        return fail(reason, capacity, "out of memory reading %s", path);
    }
    if (status == 0) {
        if (snprintf(path, sizeof path, "%s/%s", run_dir, MOUNT_IDENTITIES) >= (int)sizeof path) {
            status = fail(reason, capacity, "the run directory's path is too long");
        } else {
            int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
            size_t done = 0;
            while (fd >= 0 && done < out_length) {
                ssize_t n = write(fd, out + done, out_length - done);
                if (n <= 0) {
                    break;
                }
                done += (size_t)n;
            }
            if (fd < 0 || done < out_length || close(fd) != 0) {
                status = fail(reason, capacity, "cannot write %s: %s", path, strerror(errno));
            }
        }
    }
    free(out);
    return status;
}

/* Whether what is at target now is what one record says. */
static int verify_one(char kind, unsigned long long device, unsigned long long inode, const char *target,
                      char *reason, size_t capacity)
{
    int fd = open_without_links(target);
    if (fd < 0) {
        return fail(reason, capacity, "%s" CHANGED_BECAUSE, target,
                    errno == ELOOP ? "a symbolic link is on its way now" : strerror(errno));
    }
    struct stat info;
    const char *wrong = NULL;
    if (fstat(fd, &info) != 0) {
        wrong = "it cannot be examined";
    } else if (kind == MOUNT_EMPTY_DIR) {
        struct statfs fs;
        if (!S_ISDIR(info.st_mode) || fstatfs(fd, &fs) != 0 || (unsigned long)fs.f_type != TMPFS_FILE_SYSTEM) {
            wrong = "it is not the empty directory planned there";
        }
    } else if ((unsigned long long)info.st_dev != device || (unsigned long long)info.st_ino != inode) {
        wrong = "another file is there than the one checked";
    }
    if (wrong == NULL && kind != MOUNT_WORKDIR && is_mount_root(fd) != 1) {
        wrong = "the mount planned there is not at that path";
    }
    if (wrong == NULL && kind == MOUNT_READ_ONLY) {
        struct statvfs fs;
        if (fstatvfs(fd, &fs) != 0 || (fs.f_flag & ST_RDONLY) == 0) {
            wrong = "it is not read-only";
        }
    }
    if (wrong == NULL && kind == MOUNT_WORKDIR && fchdir(fd) != 0) {
        wrong = "it cannot be entered";
    }
    close(fd);
    if (wrong != NULL) {
        return fail(reason, capacity, "%s" CHANGED_BECAUSE, target, wrong);
    }
    return 0;
}

int mount_verify(const char *path, char *reason, size_t capacity)
{
    size_t size = 0;
    char *records = read_file(path, &size);
    if (records == NULL) {
        return fail(reason, capacity, "cannot check the sandbox's mounts: %s: %s", path, strerror(errno));
    }
    char *cursor = records;
    const char *end = records + size;
    int status = 0;
    while (status == 0 && cursor < end) {
        const char *kind = field(&cursor, end);
        const char *identity = field(&cursor, end);
        const char *target = field(&cursor, end);
        unsigned long long device = 0;
        unsigned long long inode = 0;
        if (kind == NULL || identity == NULL || target == NULL || !valid_kind(kind) ||
            sscanf(identity, "%llu:%llu", &device, &inode) != 2) {
            status = fail(reason, capacity, "cannot check the sandbox's mounts: %s is damaged", path);
            break;
        }
        status = verify_one(kind[0], device, inode, target, reason, capacity);
    }
    free(records);
    return status;
}
