// SPDX-License-Identifier: Apache-2.0
/*
 * The sandbox's first program: seal the terminal, then become the command
 * (same pid, same arguments, PATH lookup as a shell does). The command is in
 * the arguments, or, when there are none, in SPILLED_COMMAND. Without seccomp in
 * the kernel, a session of its own has the same effect on TIOCSTI (the
 * terminal is no longer the controlling one), at the price of /dev/tty.
 * See command_start.h.
 */
#define _GNU_SOURCE

#include "command_start.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "git_view.h"
#include "guard.h"
#include "mount_check.h"
#include "net_helper.h"
#include "seccomp_filter.h"
#include "util.h"

/* A session keyring of its own, so that none of the caller's keys is the command's
 * (the seccomp filter closes the key calls; where it cannot be installed this still holds). */
static void fresh_session_keyring(void)
{
    /* KEYCTL_JOIN_SESSION_KEYRING (1) with no name: a new anonymous keyring */
    if (syscall(SYS_keyctl, 1L, (long)0) < 0 && errno != ENOSYS && errno != EPERM) {
        die("cannot give the command a session keyring of its own: %s", strerror(errno));
    }
}

/*
 * The read end of the pipe whose write end the starter keeps (ALIVE_VARIABLE), or -1.
 * The sandbox ends with the run's host side, whatever bwrap does: when the starter is
 * gone (the tool killed), the helper (serve_helper) reads the pipe's end and kills every
 * process of the sandbox's pid namespace, and the sandbox's init, bwrap, ends with its
 * command. bwrap's own --die-with-parent cannot promise that: its init sets it only once
 * it runs, and a tool killed while bwrap set the sandbox up left the init running,
 * adopted, with the command. The command does not get the pipe.
 */
static int take_alive(void)
{
    int fd = take_descriptor(ALIVE_VARIABLE);
    if (fd >= 0 && getppid() != 1) {
        /* not the first program of a pid namespace of bwrap's own, whose init is its parent:
         * a kill of every process in sight is not this program's to make */
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether a file of this name exists in a directory of PATH. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    while (path != NULL && *path != '\0') {
        const char *end = strchr(path, ':');
        size_t length = end != NULL ? (size_t)(end - path) : strlen(path);
        char candidate[PATH_MAX];
        int n = snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, path, name);
        struct stat info;
        if (n > 0 && (size_t)n < sizeof candidate && length > 0 && stat(candidate, &info) == 0) {
            return 1;
        }
        path = end != NULL ? end + 1 : NULL;
    }
    return 0;
}

/* execve(2), and when the kernel cannot execute the file (ENOEXEC: a script without
 * "#!"), /bin/sh running it, as POSIX asks of execvp(3). Returns only on failure. */
static void exec_or_shell(const char *file, char *const argv[])
{
    execve(file, argv, environ);
    if (errno != ENOEXEC) {
        return;
    }
    size_t count = 0;
    while (argv[count] != NULL) {
        count++;
    }
    char **shell_argv = calloc(count + 2, sizeof *shell_argv);
    if (shell_argv == NULL) {
        errno = ENOEXEC;
        return;
    }
    shell_argv[0] = (char *)"/bin/sh";
    shell_argv[1] = (char *)file;
    for (size_t i = 1; i < count; i++) {
        shell_argv[i + 1] = argv[i];
    }
    execve("/bin/sh", shell_argv, environ);
    free(shell_argv);
    errno = ENOEXEC;
}

/* The command's lookup and start exactly as glibc's execvp(3) does them, whichever C
 * library the launcher is linked with (musl's execvp runs no shell for a script
 * without "#!"): a name with a '/' is run as it is; any other is looked up in PATH
 * (unset: /bin:/usr/bin; an empty entry is the current directory), going on past
 * directories where it is missing (ENOENT, ENOTDIR, ...) or not executable (EACCES,
 * reported when nothing else is found) and stopping at any other error. Returns only
 * on failure, with errno set. */
static void exec_command(char *const argv[])
{
    const char *file = argv[0];
    if (file == NULL || *file == '\0') {
        errno = ENOENT;
        return;
    }
    if (strchr(file, '/') != NULL) {
        exec_or_shell(file, argv);
        return;
    }
    const char *path = getenv("PATH");
    if (path == NULL) {
        path = "/bin:/usr/bin";
    }
    size_t name_length = strlen(file);
    if (name_length >= NAME_MAX + 1) {
        errno = ENAMETOOLONG;
        return;
    }
    int saw_eacces = 0;
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t length = end != NULL ? (size_t)(end - p) : strlen(p);
        char candidate[PATH_MAX];
        if (length + 1 + name_length < sizeof candidate) {
            if (length > 0) {
                memcpy(candidate, p, length);
                candidate[length] = '/';
                memcpy(candidate + length + 1, file, name_length + 1);
            } else {
                memcpy(candidate, file, name_length + 1);
            }
            exec_or_shell(candidate, argv);
            switch (errno) {
            case EACCES:
                saw_eacces = 1;
                break;
            case ENOENT:
            case ESTALE:
            case ENOTDIR:
            case ENODEV:
            case ETIMEDOUT:
            case ENAMETOOLONG:
                break;
            default:
                return;
            }
        }
        if (end == NULL) {
            break;
        }
        p = end;
    }
    errno = saw_eacces ? EACCES : ENOENT;
}

/* Reads SPILLED_COMMAND into a NULL-terminated argument vector (never freed: it is
 * handed to exec_command). */
static char **read_spilled_command(void)
{
    FILE *file = fopen(SPILLED_COMMAND, "rb");
    if (file == NULL) {
        die("no command to run (cannot read %s: %s)", SPILLED_COMMAND, strerror(errno));
    }
    size_t capacity = 1 << 16;
    size_t size = 0;
    char *text = malloc(capacity);
    for (;;) {
        if (text == NULL) {
            die("out of memory reading %s", SPILLED_COMMAND);
        }
        size += fread(text + size, 1, capacity - size, file);
        if (size < capacity) {
            break;
        }
        if (capacity >= SPILLED_COMMAND_MAX) {
            die("%s is larger than %ld bytes", SPILLED_COMMAND, (long)SPILLED_COMMAND_MAX);
        }
        capacity *= 2;
        text = realloc(text, capacity);
    }
    if (ferror(file) || fclose(file) != 0) {
        die("cannot read %s", SPILLED_COMMAND);
    }
    if (size == 0 || text[size - 1] != '\0') {
        die("%s does not hold a command", SPILLED_COMMAND);
    }
    size_t words = 0;
    for (size_t i = 0; i < size; i++) {
        words += text[i] == '\0';
    }
    char **vector = calloc(words + 1, sizeof *vector);
    if (vector == NULL) {
        die("out of memory reading %s", SPILLED_COMMAND);
    }
    size_t n = 0;
    for (size_t start = 0; start < size; start += strlen(text + start) + 1) {
        vector[n++] = text + start;
    }
    return vector;
}

/* In the sandbox's first program: say the command starts, and give it the caller's
 * stderr back (see start_bwrap). Without the variable (the library without the
 * launcher, a pasted --dry-run line) stderr is the caller's already. */

static void restore_stderr(void)
{
    int fd = take_descriptor(STDERR_VARIABLE);
    if (fd < 0) {
        return;
    }
    static const char mark[] = STARTED_MARK "\n";
    if (write(STDERR_FILENO, mark, sizeof mark - 1) < 0) {
        /* nothing to do: an empty LOG without the mark also counts as started */
    }
    if (dup2(fd, STDERR_FILENO) >= 0) {
        close(fd);
    }
}

__attribute__((noreturn))
void start_command(int argc, char *argv[])
{
    /* Before anything else, while stderr is still bwrap's log: every mount where it was
     * planned, showing what was checked (mount_check.h), or the command never runs. */
    char reason[PATH_MAX + 256];
    if (mount_verify(RUNTIME "/" RUNTIME_MOUNTS, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    restore_stderr();
    /* the git dirs' copy-on-write views, then the user again, without capabilities */
    if (git_views_mount(RUNTIME "/" RUNTIME_GIT_VIEWS, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    int alive = take_alive();
    char **command = argc >= 2 ? &argv[1] : read_spilled_command();
    fresh_session_keyring();
    if (install_filter() != 0) {
        int seccomp_error = errno;
        if (setsid() < 0) {
            die("cannot protect the terminal from the command: seccomp: %s; new session: %s",
                strerror(seccomp_error), strerror(errno));
        }
    }
    start_helper(alive);
    exec_command(command);
    int error = errno;
    if (strchr(command[0], '/') == NULL && (error == ENOENT || error == EACCES) && !on_path(command[0])) {
        /* EACCES may come from a PATH directory this user cannot search, as in a shell */
        die("%s: command not found (PATH inside the sandbox: %s)", command[0],
            getenv("PATH") != NULL ? getenv("PATH") : "unset");
    }
    die("cannot run %s: %s", command[0], strerror(error));
}
