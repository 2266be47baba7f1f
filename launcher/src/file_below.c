// SPDX-License-Identifier: Apache-2.0
/*
 * A file written into a directory through no link: see file_below.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "file_below.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A single name: not empty, no '/', not "." or "..". */
static int single_name(const char *name)
{
    return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Directory PART of directory AT, opened without following a link, made first where missing. */
static int open_part(int at, const char *part)
{
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(at, part, flags);
    if (fd < 0 && errno == ENOENT) {
        if (mkdirat(at, part, 0777) != 0 && errno != EEXIST) {
            return -1;
        }
        fd = openat(at, part, flags);
    }
    return fd;
}

int replace_file_below(const char *root, const char *rel, const char *temp, const char *name,
                       const unsigned char *data, size_t length, mode_t mode)
{
    if (!single_name(temp) || !single_name(name)) {
        return -EINVAL;
    }
    int dir = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return -errno;
    }
    const char *p = rel;
    while (*p != '\0') {
        const char *slash = strchr(p, '/');
        size_t n = slash == NULL ? strlen(p) : (size_t)(slash - p);
        if (n > 0) {
            char part[NAME_MAX + 1];
            if (n > NAME_MAX) {
                close(dir);
                return -ENAMETOOLONG;
            }
            memcpy(part, p, n);
            part[n] = '\0';
            if (!single_name(part)) {
                close(dir);
                return -EINVAL;
            }
            int next = open_part(dir, part);
            int error = errno;
            close(dir);
            if (next < 0) {
                return -error;
            }
            dir = next;
        }
        p += n;
        if (*p == '/') {
            p++;
        }
    }
    int error = 0;
    int fd = openat(dir, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) {
        error = errno;
    } else {
        if (write_all(fd, (const char *)data, length) != 0) {
            error = errno;
        }
        if (close(fd) != 0 && error == 0) {
            error = errno;
        }
        if (error == 0 && renameat(dir, temp, dir, name) != 0) {
            error = errno;
        }
        if (error != 0) {
            unlinkat(dir, temp, 0);
        }
    }
    close(dir);
    return -error;
}
