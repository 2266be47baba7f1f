// SPDX-License-Identifier: Apache-2.0
/*
 * A program run to its end: see spawn.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds of a monotonic clock. */
static long monotonic_millis(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* name itself when it holds a '/', else the first executable file of that name in the
 * directories of env's PATH (as execvp would look, but in the child's PATH); NULL when none. */
static const char *program_path(const char *name, char *const env[], char buffer[PATH_MAX])
{
    if (strchr(name, '/') != NULL) {
        return name;
    }
    const char *path = "/usr/local/bin:/usr/bin:/bin";
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], "PATH=", 5) == 0) {
            path = env[i] + 5;
        }
    }
    while (*path != '\0') {
        const char *end = strchr(path, ':');
        size_t length = end != NULL ? (size_t)(end - path) : strlen(path);
        if (length > 0 && path[0] == '/' &&
            snprintf(buffer, PATH_MAX, "%.*s/%s", (int)length, path, name) < PATH_MAX) {
            struct stat st;
            if (stat(buffer, &st) == 0 && S_ISREG(st.st_mode) && access(buffer, X_OK) == 0) {
                return buffer;
            }
        }
        path += length;
        if (*path == ':') {
            path++;
        }
    }
    return NULL;
}

int spawn_and_wait(char *const argv[], char *const env[], const char *dir, long timeout_millis, char *out,
                   size_t capacity, size_t *used)
{
    *used = 0;
    char found[PATH_MAX];
    const char *program = program_path(argv[0], env, found);
    if (program == NULL) {
        errno = ENOENT;
        return SPAWN_NOT_RUN;
    }
    int output[2];
    if (pipe2(output, O_CLOEXEC) != 0) {
        return SPAWN_NOT_RUN;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    sigset_t none;
    sigset_t all;
    sigemptyset(&none);
    sigfillset(&all);
    int error = posix_spawn_file_actions_init(&actions);
    if (error == 0) {
        error = posix_spawnattr_init(&attributes);
        if (error != 0) {
            posix_spawn_file_actions_destroy(&actions);
        }
    }
    if (error != 0) {
        close(output[0]);
        close(output[1]);
        errno = error;
        return SPAWN_NOT_RUN;
    }
    if ((error = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
        (error = posix_spawn_file_actions_adddup2(&actions, output[1], 1)) == 0 &&
        (error = posix_spawn_file_actions_adddup2(&actions, output[1], 2)) == 0 &&
        (error = posix_spawn_file_actions_addchdir_np(&actions, dir)) == 0 &&
        (error = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0 &&
        (error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0 &&
        (error = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
        (error = posix_spawnattr_setsigdefault(&attributes, &all)) == 0) {
        pid_t pid;
        error = posix_spawn(&pid, program, &actions, &attributes, argv, env);
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attributes);
        close(output[1]);
        if (error != 0) {
            close(output[0]);
            errno = error;
            return SPAWN_NOT_RUN;
        }
        long deadline = monotonic_millis() + timeout_millis;
        int timed_out = 0;
        for (;;) {
            long left = deadline - monotonic_millis();
            if (left <= 0) {
                timed_out = 1;
                break;
            }
            struct pollfd readable = {.fd = output[0], .events = POLLIN};
            int ready = poll(&readable, 1, left > INT_MAX ? INT_MAX : (int)left);
            if (ready < 0 && errno == EINTR) {
                continue;
            }
            if (ready <= 0) {
                timed_out = ready == 0;
                break;
            }
            char chunk[8192];
            ssize_t n = read(output[0], chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                break; /* the end of its output */
            }
            size_t keep = capacity - *used < (size_t)n ? capacity - *used : (size_t)n;
            memcpy(out + *used, chunk, keep);
            *used += keep;
        }
        close(output[0]);
        if (timed_out) {
            kill(pid, SIGKILL);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                return SPAWN_NOT_RUN;
            }
        }
        if (timed_out) {
            return SPAWN_TIMED_OUT;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    close(output[0]);
    close(output[1]);
    errno = error;
    return SPAWN_NOT_RUN;
}
