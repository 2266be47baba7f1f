// SPDX-License-Identifier: Apache-2.0
/*
 * Helpers shared by every face of the launcher: see util.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"

__attribute__((format(printf, 1, 2), noreturn))
void die(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs(PROGRAM ": ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

/* Formats into a PATH_MAX buffer; a result that does not fit is an error, never truncated. */
__attribute__((format(printf, 2, 3)))
void format_path(char buffer[PATH_MAX], const char *format, ...)
{
    va_list args;
    va_start(args, format);
    int length = vsnprintf(buffer, PATH_MAX, format, args);
    va_end(args);
    if (length < 0 || length >= PATH_MAX) {
        die("path too long (over %d bytes)", PATH_MAX - 1);
    }
}

/* Cuts the last component off an absolute path: "/a/b" -> "/a", "/a" -> "/". */
void strip_last_component(char *path)
{
    char *slash = strrchr(path, '/');
    if (slash == NULL) {
        die("not an absolute path: %s", path);
    }
    if (slash == path) {
        slash[1] = '\0';
    } else {
        slash[0] = '\0';
    }
}

int is_directory(const char *path)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return 0;
        }
        die("cannot inspect %s: %s", path, strerror(errno));
    }
    return S_ISDIR(info.st_mode);
}

/* Splits the next TAB-separated field off *cursor. */
const char *next_field(char **cursor)
{
    char *start = *cursor;
    if (start == NULL) {
        return NULL;
    }
    char *tab = strchr(start, '\t');
    if (tab != NULL) {
        *tab = '\0';
        *cursor = tab + 1;
    } else {
        *cursor = NULL;
    }
    return start;
}

long now_millis(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Writes everything or fails: -1 with errno. */
int write_all(int fd, const char *data, size_t length)
{
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t length = strlen(text);
    ssize_t written = write(fd, text, length);
    int error = errno;
    close(fd);
    if (written != (ssize_t)length) {
        errno = written < 0 ? error : EIO;
        return -1;
    }
    return 0;
}

int map_ids(unsigned long uid, unsigned long outside_uid, unsigned long gid, unsigned long outside_gid,
            const char **failed)
{
    char map[64];
    snprintf(map, sizeof map, "%lu %lu 1\n", uid, outside_uid);
    if (write_text("/proc/self/uid_map", map) != 0) {
        *failed = "uid_map";
        return -1;
    }
    if (write_text("/proc/self/setgroups", "deny\n") != 0) {
        *failed = "setgroups";
        return -1;
    }
    snprintf(map, sizeof map, "%lu %lu 1\n", gid, outside_gid);
    if (write_text("/proc/self/gid_map", map) != 0) {
        *failed = "gid_map";
        return -1;
    }
    return 0;
}

int read_fully(int fd, char *buffer, size_t length)
{
    size_t done = 0;
    while (done < length) {
        ssize_t n = read(fd, buffer + done, length - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

/* Whether this process now gets death_signal when its parent ends, and that parent is
 * still the one given (if it ended before the request, nothing would come). */
int dies_with(pid_t parent, int death_signal)
{
    return prctl(PR_SET_PDEATHSIG, death_signal) == 0 && getppid() == parent;
}

/* Closes the descriptors from first to last (close_range(2), or one by one before 5.9). */
static void close_from_to(unsigned int first, unsigned int last)
{
    if (first > last || syscall(SYS_close_range, first, last, 0) == 0) {
        return;
    }
    long limit = sysconf(_SC_OPEN_MAX);
    unsigned int highest = limit > 0 && limit < 1048576 ? (unsigned int)limit - 1 : 1048575;
    for (unsigned int fd = first; fd <= last && fd <= highest; fd++) {
        close((int)fd);
    }
}

/* Closes every descriptor from 3 up but keep_a, keep_b and keep_c (-1 for none): what the
 * caller opened (and the tool's JVM keeps) must not reach bwrap, as the JDK's launcher
 * never let it. */
void close_others3(int keep_a, int keep_b, int keep_c)
{
    int keep[3] = {keep_a, keep_b, keep_c};
    /* in order, lowest first */
    for (int i = 0; i < 3; i++) {
        for (int j = i + 1; j < 3; j++) {
            if (keep[j] < keep[i]) {
                int t = keep[i];
                keep[i] = keep[j];
                keep[j] = t;
            }
        }
    }
    unsigned int next = 3;
    for (int i = 0; i < 3; i++) {
        if (keep[i] >= (int)next) {
            close_from_to(next, (unsigned int)keep[i] - 1);
            next = (unsigned int)keep[i] + 1;
        }
    }
    close_from_to(next, ~0U);
}

void close_others(int keep_a, int keep_b)
{
    close_others3(keep_a, keep_b, -1);
}

/* The open descriptor (3 or above) the variable NAME names, taken out of the
 * environment (the command does not get it); -1 when there is none. */
int take_descriptor(const char *name)
{
    const char *value = getenv(name);
    if (value == NULL) {
        return -1;
    }
    char *end = NULL;
    long fd = strtol(value, &end, 10);
    int valid = *value != '\0' && end != NULL && *end == '\0' && fd >= 3 && fd <= INT_MAX;
    unsetenv(name);
    return valid && fcntl((int)fd, F_GETFD) >= 0 ? (int)fd : -1;
}

void end_like(int status)
{
    if (WIFEXITED(status)) {
        _exit(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) {
        int signal_number = WTERMSIG(status);
        signal(signal_number, SIG_DFL);
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, signal_number);
        sigprocmask(SIG_UNBLOCK, &only, NULL);
        raise(signal_number);
        _exit(128 + signal_number);
    }
    _exit(1);
}
