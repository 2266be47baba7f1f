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
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "git_view.h"
#include "guard.h"
#include "mount_check.h"
#include "net_helper.h"
#include "seccomp_filter.h"
#include "unix_guard.h"
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
 * The run's bounds (LIMITS_VARIABLE: "MAX_PROCS MAX_MEMORY"), taken out of the environment:
 * - RLIMIT_NPROC: the kernel counts a user's processes per user namespace, and checks a
 *   fork against the count in each namespace up to the first: set here, in the sandbox's
 *   own namespace, it bounds the processes of this sandbox (nested ones included) and
 *   not the caller's others.
 * - RLIMIT_DATA: memory one process may allocate (its heap and private mappings).
 * A limit above the hard one the caller has stays the caller's.
 */
static void apply_limits(void)
{
    const char *text = getenv(LIMITS_VARIABLE);
    if (text == NULL) {
        return;
    }
    char *end;
    errno = 0;
    unsigned long long procs = strtoull(text, &end, 10);
    unsigned long long memory = *end == ' ' ? strtoull(end + 1, &end, 10) : 0;
    if (errno != 0 || *end != '\0' || procs == 0 || memory == 0) {
        die("%s=%s: expected \"MAX_PROCS MAX_MEMORY\"", LIMITS_VARIABLE, text);
    }
    unsetenv(LIMITS_VARIABLE);
    const int resources[] = {RLIMIT_NPROC, RLIMIT_DATA};
    const unsigned long long values[] = {procs, memory};
    for (int i = 0; i < 2; i++) {
        struct rlimit limit;
        if (getrlimit(resources[i], &limit) != 0) {
            die("cannot read a resource limit: %s", strerror(errno));
        }
        rlim_t value = (rlim_t)values[i];
        if (limit.rlim_max != RLIM_INFINITY && value > limit.rlim_max) {
            value = limit.rlim_max;
        }
        limit.rlim_cur = value;
        limit.rlim_max = value;
        if (setrlimit(resources[i], &limit) != 0) {
            die("cannot bound the sandbox (%s): %s", i == 0 ? "processes" : "memory", strerror(errno));
        }
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

/* With the sandbox's own network stack, which starts while bwrap sets the sandbox up: waits
 * until it is ready (net_stack.c opens the gate with one byte). Without that byte the stack
 * failed, and its holder, which has said why in bwrap's log, is ending the run. */
static void wait_for_network(void)
{
    int gate = take_descriptor(NET_GATE_VARIABLE);
    if (gate < 0) {
        return;
    }
    char byte;
    ssize_t got;
    while ((got = read(gate, &byte, 1)) < 0 && errno == EINTR) {
    }
    close(gate);
    if (got != 1) {
        die("the sandbox's network stack did not come up");
    }
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

/*
 * The session's leader, while the command runs in a process group of its own: job control
 * ignores SIGTSTP in a process group that no process of the session outside it parents (an
 * orphaned one), so a command that leads its own session could never be stopped by Ctrl-Z
 * or stop itself as vim does. This process waits, and ends as the command ends: with its
 * exit status, or killed by the same signal.
 */
__attribute__((noreturn))
static void lead_session(pid_t command)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTSTP, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    for (;;) {
        int status;
        pid_t done = waitpid(command, &status, 0);
        if (done < 0 && errno == EINTR) {
            continue;
        }
        if (done < 0) {
            _exit(1);
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            end_like(status);
        }
    }
}

/*
 * With TERMINAL_VARIABLE, the terminal on 0, 1 or 2 is a pseudo-terminal of the run's own,
 * relayed by the starter (term_relay.h): it becomes the controlling terminal of a session of
 * the command's own, so that Ctrl-C, Ctrl-Z and the window size reach the command through
 * it. Returns the terminal's descriptor, or -1 without one.
 */
static int take_terminal(void)
{
    const char *value = getenv(TERMINAL_VARIABLE);
    int wanted = value != NULL && strcmp(value, "1") == 0;
    unsetenv(TERMINAL_VARIABLE);
    if (!wanted) {
        return -1;
    }
    for (int fd = 0; fd < 3; fd++) {
        if (isatty(fd)) {
            if (setsid() < 0 || ioctl(fd, TIOCSCTTY, 0L) < 0) {
                die("cannot give the command its terminal: %s", strerror(errno));
            }
            return fd;
        }
    }
    return -1;
}

/* The command in the terminal's foreground process group, of its own; this process stays
 * as the session's leader (lead_session). After the helper's start, which stays the
 * sandbox's init's child. */
static void own_process_group(int terminal)
{
    pid_t command = fork();
    if (command < 0) {
        die("cannot start the command: %s", strerror(errno));
    }
    if (command > 0) {
        setpgid(command, command);
        lead_session(command);
    }
    /* the terminal's foreground group, asked for from the background */
    sigset_t ttou;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, NULL);
    if (setpgid(0, 0) < 0 || tcsetpgrp(terminal, getpid()) < 0) {
        die("cannot give the command its terminal: %s", strerror(errno));
    }
    sigprocmask(SIG_UNBLOCK, &ttou, NULL);
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
    /* the copy-on-write views, then the user again, without capabilities (what it says
     * goes to bwrap's log still, shown after the run) */
    if (git_views_mount(RUNTIME "/" RUNTIME_GIT_VIEWS, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    /* the command never runs before the network is whole (the mounts above are made
     * while the stack starts) */
    wait_for_network();
    /* the working directory entered again with the user's own rights: with the views, bwrap
     * entered it with capabilities that read past its permissions */
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) != NULL) {
        /* by its path again (a view mounted over it since is entered), but never through a
         * link: a concurrent process that swapped a directory on the way for one meanwhile
         * would have the command run wherever the link points */
        int here = open_without_links(cwd);
        if (here < 0 && errno == ELOOP) {
            die("%s changed while the sandbox was being set up (a symbolic link is on its way now): a concurrent"
                " process replaced it or a directory above it; nothing ran, start again", cwd);
        }
        if (here < 0 || fchdir(here) != 0) {
            fprintf(stderr, "Can't chdir to %s: %s\n", cwd, strerror(errno));
            _exit(1);
        }
        close(here);
    }
    restore_stderr();
    int alive = take_alive();
    char **command = argc >= 2 ? &argv[1] : read_spilled_command();
    fresh_session_keyring();
    int terminal = take_terminal();
    apply_limits();
    /* on the run's own pseudo-terminal, TIOCSTI reaches nothing but the sandbox */
    if (install_filter() != 0 && terminal < 0) {
        int seccomp_error = errno;
        if (setsid() < 0) {
            die("cannot protect the terminal from the command: seccomp: %s; new session: %s",
                strerror(seccomp_error), strerror(errno));
        }
    }
    /* with the socket guard, neither the helper nor the guard may be traced by the command */
    if (unix_guard_wanted() && prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L) != 0) {
        die("--share-tmp: cannot protect the socket guard: %s", strerror(errno));
    }
    start_helper(alive);
    unix_guard_start();
    if (terminal >= 0) {
        own_process_group(terminal);
    }
    exec_command(command);
    int error = errno;
    if (strchr(command[0], '/') == NULL && (error == ENOENT || error == EACCES) && !on_path(command[0])) {
        /* EACCES may come from a PATH directory this user cannot search, as in a shell */
        die("%s: command not found (PATH inside the sandbox: %s)", command[0],
            getenv("PATH") != NULL ? getenv("PATH") : "unset");
    }
    die("cannot run %s: %s", command[0], strerror(error));
}
