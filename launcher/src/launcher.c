/*
 * agent-sandbox native launcher.
 *
 * Started as `agent-sandbox`, it finds the application directory next to its
 * own executable and replaces itself with the bundled Java runtime running the
 * command line tool. `agent-sandbox check` is answered here, without a JVM.
 *
 * Layouts it understands (found through /proc/self/exe, so a symlink to the
 * launcher and directories with spaces work):
 *
 *   installed       <home>/bin/agent-sandbox, application in <home>
 *   in a sandbox    /run/agent-sandbox/agent-sandbox, application in
 *                   /run/agent-sandbox/app (the launcher's directory holds app/lib)
 *
 * Inside a sandbox the same binary is also bound, read-only, over every path of
 * a wrapped command (/usr/bin/git, ...). Started there it is the wrapper: the
 * rule for the path it was started at is the target of a symlink named after
 * that path in /run/agent-sandbox/cmd/ (in a nested sandbox, possibly in an
 * outer runtime under /run/agent-sandbox/outer/...), one line:
 *
 *   <kind> TAB <name> TAB <real binary, relative to the runtime, or -> TAB <script or ->
 *
 *   block   print that the command is blocked, exit 1
 *   script  exec the script with the original arguments, AGENT_SANDBOX_CMD and
 *           AGENT_SANDBOX_REAL set
 *   git     ask the git guard (the agent-sandbox process outside, over the
 *           Unix socket <runtime>/guard/socket) and exec the real git or refuse;
 *           no answer means no git
 *
 * Started as /run/agent-sandbox/exec (a symlink to the launcher that every
 * sandbox has), it is the first program of the sandbox: bwrap runs it in place
 * of the command, and it shuts the terminal-injection door before it execs the
 * command (see start_command).
 *
 * Started by the tool as `agent-sandbox --internal-start-bwrap LOG bwrap ...`, it
 * becomes bwrap with bwrap's own messages going to LOG (see start_bwrap).
 *
 * Every failure is one line on stderr and exit status 1.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROGRAM "agent-sandbox"

#include "guard.h"
#include "mount_check.h"

/* Present, read-only, inside every sandbox: its existence is the answer to `check`. */
#define SANDBOX_MARKER "/run/agent-sandbox/agent-sandbox"


/* The name bwrap starts the launcher by, in place of the sandboxed command. */
#define COMMAND_START RUNTIME "/exec"

/* The command when it has more words than bwrap's command line takes: each ended
 * by a NUL byte. COMMAND_START started without a command reads it from here. */
#define SPILLED_COMMAND RUNTIME "/command"
#define SPILLED_COMMAND_MAX (64L * 1024 * 1024)
#define MAX_NESTING 32

/* Options for a short-lived command line JVM; logging goes to stderr so that
 * nothing the JVM says can mix with the sandboxed command's stdout. */
static const char *const JVM_OPTIONS[] = {
    "-XX:+UseSerialGC",
    "-Xint",
    "-XX:-UsePerfData",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
    /* The JDK's own selector provider, named: otherwise the first socket the tool opens
     * looks for another one among the services of every jar on the class path. */
    "-Djava.nio.channels.spi.SelectorProvider=sun.nio.ch.EPollSelectorProvider",
    /* The startup cache holds no profiles for the compilers (the tool runs interpreted),
     * so no thread needs to start at every run to look for them. */
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:-AOTReplayTraining",
    /* Reflection through the JVM's native accessors: the method handles the JDK would
     * otherwise spin for each constructor it calls reflectively (the selector and security
     * providers a first socket looks up) cost an interpreted start more than they save. */
    "-Djdk.reflect.useNativeAccessorOnly=true",
};
#define JVM_OPTION_COUNT (sizeof JVM_OPTIONS / sizeof JVM_OPTIONS[0])

/* Variables that configure every JVM the caller starts. They are meant for the
 * caller's own Java programs: applied to this tool's JVM they would print "Picked
 * up ..." into the sandboxed command's stderr, or stop the tool from starting at
 * all (an agent, a debugger waiting to attach). They are moved aside under
 * CALLER_VARIABLE_PREFIX + name, and the tool puts them back for the command. */
static const char *const CALLER_JAVA_VARIABLES[] = {
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
};
#define CALLER_JAVA_VARIABLE_COUNT (sizeof CALLER_JAVA_VARIABLES / sizeof CALLER_JAVA_VARIABLES[0])
#define CALLER_VARIABLE_PREFIX "AGENT_SANDBOX_CALLER_"

/* The launcher itself and the application directory it belongs to. */
struct installation {
    char exe[PATH_MAX];
    char home[PATH_MAX];
};

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *format, ...)
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
static void format_path(char buffer[PATH_MAX], const char *format, ...)
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
static void strip_last_component(char *path)
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

static int is_directory(const char *path)
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

/* Whether file a exists and was modified no earlier than file b (which must exist). */
static int is_newer(const char *a, const char *b)
{
    struct stat sa;
    struct stat sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) {
        return 0;
    }
    if (sa.st_mtim.tv_sec != sb.st_mtim.tv_sec) {
        return sa.st_mtim.tv_sec > sb.st_mtim.tv_sec;
    }
    return sa.st_mtim.tv_nsec >= sb.st_mtim.tv_nsec;
}

/* The canonical path of this executable and the application directory beside it. */
static void find_installation(struct installation *self)
{
    ssize_t length = readlink("/proc/self/exe", self->exe, sizeof self->exe);
    if (length < 0) {
        die("cannot find its own executable (/proc/self/exe): %s", strerror(errno));
    }
    if ((size_t)length >= sizeof self->exe) {
        die("path of its own executable is too long (over %d bytes)", PATH_MAX - 1);
    }
    self->exe[length] = '\0';

    char dir[PATH_MAX];
    format_path(dir, "%s", self->exe);
    strip_last_component(dir);

    char app_lib[PATH_MAX];
    format_path(app_lib, "%s%sapp/lib", dir, strcmp(dir, "/") == 0 ? "" : "/");
    if (is_directory(app_lib)) {
        format_path(self->home, "%s%sapp", dir, strcmp(dir, "/") == 0 ? "" : "/");
    } else {
        /* /proc/self/exe is already canonical: the parent of its directory is <home>. */
        format_path(self->home, "%s", dir);
        strip_last_component(self->home);
    }
}

/* `check`, `check -q`, `--check`, `--check -q`: nothing else takes the fast path. */
static int is_check(int argc, char *argv[], int *quiet)
{
    if (argc < 2 || argc > 3) {
        return 0;
    }
    if (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "--check") != 0) {
        return 0;
    }
    if (argc == 3 && strcmp(argv[2], "-q") != 0) {
        return 0;
    }
    *quiet = argc == 3;
    return 1;
}

static int check(int quiet)
{
    struct stat info;
    int inside = 1;
    if (stat(SANDBOX_MARKER, &info) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) {
            die("cannot check %s: %s", SANDBOX_MARKER, strerror(errno));
        }
        inside = 0;
    }
    if (!quiet) {
        if (puts(inside ? "inside sandbox" : "outside sandbox") == EOF || fflush(stdout) != 0) {
            die("cannot write to stdout: %s", strerror(errno));
        }
    }
    return inside ? 0 : 1;
}

/* Moves the caller's JVM option variables aside (see CALLER_JAVA_VARIABLES). */
static void set_aside_caller_java_variables(void)
{
    for (size_t i = 0; i < CALLER_JAVA_VARIABLE_COUNT; i++) {
        const char *name = CALLER_JAVA_VARIABLES[i];
        char aside[64];
        int length = snprintf(aside, sizeof aside, "%s%s", CALLER_VARIABLE_PREFIX, name);
        if (length < 0 || (size_t)length >= sizeof aside) {
            die("variable name too long: %s%s", CALLER_VARIABLE_PREFIX, name);
        }
        const char *value = getenv(name);
        if (value == NULL) {
            /* never restore a value the caller did not have */
            if (unsetenv(aside) != 0) {
                die("cannot unset %s: %s", aside, strerror(errno));
            }
            continue;
        }
        if (setenv(aside, value, 1) != 0) {
            die("cannot set %s: %s", aside, strerror(errno));
        }
        if (unsetenv(name) != 0) {
            die("cannot unset %s: %s", name, strerror(errno));
        }
    }
}

/* The caller's LC_ALL, set aside under CALLER_VARIABLE_PREFIX "LC_ALL": "+" and the
 * value, or "-" when it was unset. */
#define CALLER_LC_ALL CALLER_VARIABLE_PREFIX "LC_ALL"

/* The JVM reads arguments, environment and file names in the character set of the
 * locale: in the C locale (ASCII) every other byte would become '?'. The tool's JVM
 * runs in C.UTF-8; the tool gives the command the caller's LC_ALL back. */
static void use_utf8_locale(void)
{
    const char *caller = getenv("LC_ALL");
    char *aside = malloc((caller != NULL ? strlen(caller) : 0) + 2);
    if (aside == NULL) {
        die("out of memory");
    }
    aside[0] = caller != NULL ? '+' : '-';
    strcpy(aside + 1, caller != NULL ? caller : "");
    if (setenv(CALLER_LC_ALL, aside, 1) != 0 || setenv("LC_ALL", "C.UTF-8", 1) != 0) {
        die("cannot set LC_ALL: %s", strerror(errno));
    }
    free(aside);
}

/* Whether a string is valid UTF-8 as Java decodes it: no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
static int is_utf8(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p != '\0') {
        unsigned int c = *p;
        size_t length;
        unsigned int min;
        unsigned int code;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            length = 2;
            min = 0x80;
            code = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3;
            min = 0x800;
            code = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4;
            min = 0x10000;
            code = c & 0x07;
        } else {
            return 0;
        }
        for (size_t i = 1; i < length; i++) {
            if ((p[i] & 0xC0) != 0x80) {
                return 0;
            }
            code = (code << 6) | (p[i] & 0x3F);
        }
        if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
            return 0;
        }
        p += length;
    }
    return 1;
}

/* What the JVM cannot start from or represent faithfully is refused here, in one line:
 * a working directory that is gone (the JVM would die with a stack trace) and
 * arguments that are not UTF-8 (the JVM would silently replace their bytes, changing
 * the command's arguments and the paths of rules). */
static void check_startable(int argc, char *argv[])
{
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL) {
        if (errno == ENOENT) {
            die("the current directory no longer exists (it was removed); cd to an existing directory and run again");
        }
        die("cannot determine the current directory: %s; cd to another directory and run again", strerror(errno));
    }
    if (!is_utf8(cwd)) {
        free(cwd);
        die("the path of the current directory is not valid UTF-8; agent-sandbox handles only UTF-8 paths:"
            " rename the directory or start from another one");
    }
    free(cwd);
    for (int i = 1; i < argc; i++) {
        if (!is_utf8(argv[i])) {
            die("argument %d is not valid UTF-8, and agent-sandbox passes on only UTF-8 arguments and paths"
                " unchanged: pass such bytes another way (a file, or printf inside the command)", i);
        }
    }
}

static pid_t fork_starter(char *property, size_t capacity);
static void close_others(int keep_a, int keep_b);

/*
 * The JVM's own exit, after the run is done (its output written, bwrap ended), takes a
 * millisecond or more: a safepoint, its threads stopped one by one, the C library's
 * exit handlers. So the launcher stays the process the caller started and waits for,
 * and runs the JVM as its child; the JVM writes the tool's status, one byte, to a pipe
 * (STATUS_PROPERTY) when the run is done, and the launcher then kills it (SIGKILL:
 * there is nothing left for it to do), waits for it and for the starter, and exits with
 * that status. When the status is followed by STATUS_STARTER_REMOVING, the starter is
 * still removing the run's directories, which takes about as long as the JVM's end,
 * side by side: the launcher waits for it to finish rather than stopping it. Nothing
 * of the run outlives the tool; the JVM also dies with the launcher in any case
 * (PR_SET_PDEATHSIG).
 *
 * Signals: the JVM is in the caller's process group, as bwrap and the command are, so
 * what a terminal sends the group (Ctrl-C, a hangup) reaches it directly, as before.
 * What a process sends the tool's pid alone (`kill PID`, an agent stopping a command)
 * reaches the launcher, which passes SIGINT, SIGTERM, SIGHUP and SIGQUIT (as SIGTERM)
 * on to the JVM (not the terminal's: those the JVM has got itself). A signal the caller
 * ignores (a background job's SIGINT, nohup's SIGHUP) stays ignored, for the launcher
 * and the JVM.
 * Without a status the JVM ended unexpectedly: the launcher ends as it did.
 */
static volatile sig_atomic_t launcher_jvm;
/* Whether the JVM handles SIGINT, SIGTERM and SIGHUP yet (STATUS_READY). */
static volatile sig_atomic_t launcher_jvm_ready;
/* Whether such a signal came before that, and the launcher stopped the JVM itself. */
static volatile sig_atomic_t launcher_stopped_early;

/* What ends the starter when the tool is gone (its death signal) or done with it: the
 * starter then kills bwrap and, as a subreaper, whatever of bwrap's comes to it (see
 * starter_on_stop), and ends. */
#define STARTER_STOP SIGUSR1
/* The starter, while the launcher waits for it to finish removing the run's directories. */
static volatile sig_atomic_t launcher_starter;

static const int PASSED_ON[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define PASSED_ON_COUNT (sizeof PASSED_ON / sizeof PASSED_ON[0])

static void pass_on(int signal_number, siginfo_t *info, void *context)
{
    (void)context;
    /* sent by a process (si_code <= 0), not by the terminal to the whole group; a
     * SIGQUIT as a SIGTERM: the JVM keeps SIGQUIT for its thread dump, and a process
     * asking the tool to quit wants the run ended */
    if (info != NULL && info->si_code <= 0 && launcher_jvm > 0) {
        if (launcher_jvm_ready) {
            kill((pid_t)launcher_jvm, signal_number == SIGQUIT ? SIGTERM : signal_number);
        } else {
            /* the JVM handles none yet (its own handling would print Java's words): no
             * sandbox runs before it does, and the tool ends here, with 130 */
            launcher_stopped_early = 1;
            kill((pid_t)launcher_jvm, SIGKILL);
        }
    }
    /* the JVM is gone, the starter still removing: whoever wants the tool to end now
     * (the terminal too) gets that, and the rest is left to the next run's sweep */
    if (launcher_starter > 0) {
        kill((pid_t)launcher_starter, STARTER_STOP);
    }
}

/* Whether this process now gets death_signal when its parent ends, and that parent is
 * still the one given (if it ended before the request, nothing would come). */
static int dies_with(pid_t parent, int death_signal)
{
    return prctl(PR_SET_PDEATHSIG, death_signal) == 0 && getppid() == parent;
}

/* pidfd_open(2) and process_mrelease(2), which musl's headers may not name yet: the
 * same numbers on x86-64 and AArch64 (Linux 5.3 and 5.15) */
#if defined(__x86_64__) || defined(__aarch64__)
#define PIDFD_OPEN_CALL 434L
#define PROCESS_MRELEASE_CALL 448L
#endif

/* After a SIGKILL: frees the killed child's memory from this process too, beside the
 * child's own exit, which alone took 1.2 ms for the JVM (the kernel unmapping some 35 MB)
 * while the caller waited for the tool's end. Best effort: an older kernel, or a child
 * whose memory is already gone, is waited for as before. */
static void release_memory(pid_t killed)
{
#ifdef PROCESS_MRELEASE_CALL
    int pidfd = (int)syscall(PIDFD_OPEN_CALL, (long)killed, 0L);
    if (pidfd >= 0) {
        syscall(PROCESS_MRELEASE_CALL, (long)pidfd, 0L);
        close(pidfd);
    }
#else
    (void)killed;
#endif
}

__attribute__((noreturn))
static void run_jvm(const char *java, char *const java_argv[], int status_pipe[2], pid_t starter)
{
    sigset_t passed;
    sigset_t before;
    sigemptyset(&passed);
    for (size_t i = 0; i < PASSED_ON_COUNT; i++) {
        sigaddset(&passed, PASSED_ON[i]);
    }
    /* held back until the child's pid is known: none is lost, none reaches nobody */
    sigprocmask(SIG_BLOCK, &passed, &before);
    pid_t launcher = getpid();
    pid_t jvm = fork();
    if (jvm <= 0) {
        /* the child; or, without one, this process becomes the JVM, which then writes its
         * status into a pipe nobody reads */
        sigprocmask(SIG_SETMASK, &before, NULL);
        if (jvm == 0 && !dies_with(launcher, SIGKILL)) {
            _exit(1);
        }
        if (fcntl(status_pipe[1], F_SETFD, 0) != 0) {
            die("cannot pass the status pipe to the JVM: %s", strerror(errno));
        }
        close(status_pipe[0]);
        execv(java, java_argv);
        die("cannot start %s: %s", java, strerror(errno));
    }
    launcher_jvm = (sig_atomic_t)jvm;
    close(status_pipe[1]);
    /* the JVM's descriptors are the JVM's: the starter's pipes, the lib directory */
    close_others(status_pipe[0], status_pipe[0]);
    for (size_t i = 0; i < PASSED_ON_COUNT; i++) {
        struct sigaction current;
        if (sigaction(PASSED_ON[i], NULL, &current) == 0 && current.sa_handler != SIG_IGN) {
            struct sigaction forward;
            memset(&forward, 0, sizeof forward);
            forward.sa_sigaction = pass_on;
            forward.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&forward.sa_mask);
            sigaction(PASSED_ON[i], &forward, NULL);
        }
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    unsigned char status = 0;
    int reported = 0;
    int starter_removing = 0;
    for (;;) {
        unsigned char said[3];
        ssize_t n = read(status_pipe[0], said, sizeof said);
        ssize_t first = 0;
        if (n >= 1 && !launcher_jvm_ready && said[0] == (unsigned char)STATUS_READY[0]) {
            launcher_jvm_ready = 1;
            first = 1;
        }
        if (n > first) {
            /* the run is done: the JVM is stopped at once, its own exit skipped */
            reported = 1;
            status = said[first];
            starter_removing = n - first == 2 && said[first + 1] == (unsigned char)STATUS_STARTER_REMOVING[0];
            kill(jvm, SIGKILL);
            release_memory(jvm);
            break;
        }
        if (n >= 1) {
            continue;
        }
        if (n == 0 || errno != EINTR) {
            break;
        }
    }
    int how;
    while (waitpid(jvm, &how, 0) < 0) {
        if (errno != EINTR) {
            _exit(1);
        }
    }
    launcher_jvm = 0;
    /* and the starter is gone too when the caller sees the end: nothing of the run
     * outlives the tool. When the JVM left it the removal of the run's directories (its
     * bwrap has ended), it ends by itself once that is done and the JVM's end closed its
     * pipe, which takes the same time as the JVM's own end; otherwise its work is done,
     * or of no use without the JVM, and it is stopped. */
    if (starter > 0) {
        if (starter_removing) {
            launcher_starter = (sig_atomic_t)starter;
        } else {
            kill(starter, STARTER_STOP);
        }
        while (waitpid(starter, NULL, 0) < 0 && errno == EINTR) {
        }
        launcher_starter = 0;
    }
    if (launcher_stopped_early && !reported) {
        _exit(130);
    }
    if (reported) {
        _exit(status);
    }
    if (WIFEXITED(how)) {
        _exit(WEXITSTATUS(how));
    }
    /* ended by a signal: end by the same one (without a core file of the launcher's own) */
    int signal_number = WTERMSIG(how);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(signal_number, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(signal_number);
    _exit(128 + signal_number);
}

/* Replaces this process with the bundled JVM running the command line tool; with
 * `TRAIN_FLAG CONFIGURATION WORKDIR`, the training of the startup cache instead. */
__attribute__((noreturn))
static void exec_java(const struct installation *self, int argc, char *argv[])
{
    const char *main_class = APP_MAIN_CLASS;
    char record_option[PATH_MAX + 32];
    int training = argc >= 2 && strcmp(argv[1], TRAIN_FLAG) == 0;
    if (training) {
        if (argc != 4) {
            die("%s takes a configuration file and a work directory", TRAIN_FLAG);
        }
        snprintf(record_option, sizeof record_option, "-XX:AOTConfiguration=%s", argv[2]);
        main_class = TRAIN_CLASS;
        argc -= 2;
        argv += 2; /* argv[1] is the work directory now */
    }

    char runtime[PATH_MAX];
    char java[PATH_MAX];
    char jar[PATH_MAX];
    char launcher_property[PATH_MAX + 32];
    char home_property[PATH_MAX + 32];

    format_path(runtime, "%s/runtime", self->home);
    /* the JVM started in-process by the runtime's JVM_START, which takes 1 to 2 ms less
     * than the runtime's own java (see jvm_start.c); java when it is not there */
    format_path(java, "%s/bin/" JVM_START, runtime);
    if (access(java, X_OK) != 0) {
        format_path(java, "%s/bin/java", runtime);
    }
    format_path(jar, "%s/lib/agent-sandbox-cli.jar", self->home);
    snprintf(launcher_property, sizeof launcher_property, "-Dagentsandbox.launcher=%s", self->exe);
    snprintf(home_property, sizeof home_property, "-Dagentsandbox.home=%s", self->home);
    char uid_property[64];
    snprintf(uid_property, sizeof uid_property, "-D" UID_PROPERTY "=%u", (unsigned)getuid());

    if (access(java, X_OK) != 0) {
        die("no Java runtime at %s; reinstall agent-sandbox (./install.sh)", runtime);
    }

    /* The startup cache, trained when the image was built; only when it is newer than
     * every jar, so that a cache left from older classes can never run. */
    char cache[PATH_MAX];
    char cache_option[PATH_MAX + 32];
    char core_jar[PATH_MAX];
    format_path(cache, "%s/lib/agent-sandbox.aot", self->home);
    format_path(core_jar, "%s/lib/agent-sandbox-core.jar", self->home);
    int use_cache = !training && is_newer(cache, jar) && is_newer(cache, core_jar);
    snprintf(cache_option, sizeof cache_option, "-XX:AOTCache=%s", cache);
    /* AGENT_SANDBOX_REQUIRE_CACHE=1: fail rather than start without the cache (build checks). */
    const char *require = getenv("AGENT_SANDBOX_REQUIRE_CACHE");
    int required = require != NULL && strcmp(require, "1") == 0;
    if (required && !use_cache) {
        die("the startup cache %s is missing or older than the jars", cache);
    }
    /* AGENT_SANDBOX_LOG_CLASS_LOADING=1: the JVM writes to stderr one line per class it
     * loads, and where from (the startup cache or not), for the check of the start-up
     * rules (docs/startup.md). Diagnostic output only, to the caller's own stderr. */
    const char *log_classes = getenv("AGENT_SANDBOX_LOG_CLASS_LOADING");
    int logging_classes = !training && log_classes != NULL && strcmp(log_classes, "1") == 0;

    /* The jars by a path that is the same wherever the image lies (APP_LIB_FD); taken
     * before the starter's pipes, so that neither can get that number. A descriptor the
     * caller left there is of no use to the JVM, and the starter closes it. */
    const char *class_path = APP_CLASS_PATH;
    char lib[PATH_MAX];
    format_path(lib, "%s/lib", self->home);
    int lib_fd = open(lib, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (lib_fd < 0 || (lib_fd != APP_LIB_FD && dup2(lib_fd, APP_LIB_FD) != APP_LIB_FD)
            || fcntl(APP_LIB_FD, F_SETFD, 0) != 0 || access(APP_CLASS_PATH, R_OK) != 0) {
        class_path = jar; /* no /proc, say: slower with the cache, never wrong */
    }
    if (lib_fd >= 0 && lib_fd != APP_LIB_FD) {
        close(lib_fd);
    }

    char starter_property[128];
    pid_t starter = fork_starter(starter_property, sizeof starter_property);
    /* the JVM as this process's child, the status through a pipe (see run_jvm); the
     * training, which nobody waits for, replaces this process as before */
    char status_property[64];
    int status_pipe[2] = {-1, -1};
    if (!training && pipe2(status_pipe, O_CLOEXEC) == 0) {
        snprintf(status_property, sizeof status_property, "-D%s=%d", STATUS_PROPERTY, status_pipe[1]);
    }

    /* java, the options, the class loading log, the cache or the recording (three), five
     * properties, -cp <jars> <class>, the user's arguments, NULL */
    size_t user_args = (size_t)(argc - 1);
    size_t count = 1 + JVM_OPTION_COUNT + 1 + 3 + 5 + 3 + user_args + 1;
    char **java_argv = calloc(count, sizeof *java_argv);
    if (java_argv == NULL) {
        die("out of memory");
    }
    size_t n = 0;
    java_argv[n++] = java;
    for (size_t i = 0; i < JVM_OPTION_COUNT; i++) {
        java_argv[n++] = (char *)JVM_OPTIONS[i];
    }
    if (logging_classes) {
        java_argv[n++] = (char *)"-Xlog:class+load=info:stderr";
    }
    if (training) {
        /* no profiles for the compilers: the tool runs interpreted (-Xint) */
        java_argv[n++] = (char *)"-XX:-AOTRecordTraining";
        java_argv[n++] = (char *)"-XX:AOTMode=record";
        java_argv[n++] = record_option;
    } else if (use_cache) {
        java_argv[n++] = cache_option;
        if (required) {
            java_argv[n++] = (char *)"-XX:AOTMode=on";
        }
    }
    java_argv[n++] = launcher_property;
    java_argv[n++] = home_property;
    java_argv[n++] = uid_property;
    if (starter) {
        java_argv[n++] = starter_property;
    }
    if (status_pipe[1] >= 0) {
        java_argv[n++] = status_property;
    }
    java_argv[n++] = (char *)"-cp";
    java_argv[n++] = (char *)class_path;
    java_argv[n++] = (char *)main_class;
    for (size_t i = 0; i < user_args; i++) {
        java_argv[n++] = argv[i + 1];
    }
    java_argv[n] = NULL;

    set_aside_caller_java_variables();
    use_utf8_locale();
    if (status_pipe[1] >= 0) {
        run_jvm(java, java_argv, status_pipe, starter);
    }
    execv(java, java_argv);
    die("cannot start %s: %s", java, strerror(errno));
}


/* ------------------------------------------------------------------ wrapper */

/* A wrapped command's rule, read from the lookup symlink. */
struct rule {
    char runtime[PATH_MAX]; /* the runtime directory it was found in */
    char text[PATH_MAX];    /* the symlink target, split in place */
    const char *kind;
    const char *name;
    const char *real;       /* relative to runtime, or "-" */
    const char *script;     /* absolute, or "-" */
    const char *home;       /* git rules: the sandbox's HOME, or "-" */
    const char *xdg_config_home; /* git rules: the sandbox's XDG_CONFIG_HOME, or "-" */
};

/* Appends the lookup name of an absolute path: '%' -> %25, '/' -> %2F. */
static void lookup_name(char out[PATH_MAX], const char *path)
{
    size_t n = 0;
    for (const char *p = path; *p != '\0'; p++) {
        const char *piece = *p == '%' ? "%25" : *p == '/' ? "%2F" : NULL;
        size_t len = piece != NULL ? 3 : 1;
        if (n + len >= PATH_MAX) {
            die("path too long to look up: %s", path);
        }
        if (piece != NULL) {
            memcpy(out + n, piece, 3);
        } else {
            out[n] = *p;
        }
        n += len;
    }
    out[n] = '\0';
}

/* Splits the next TAB-separated field off *cursor. */
static const char *next_field(char **cursor)
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

/* Finds the rule for the executable path, innermost runtime first. 1 when found. */
static int find_rule(const char *exe, struct rule *rule)
{
    char name[PATH_MAX];
    lookup_name(name, exe);
    char runtime[PATH_MAX];
    format_path(runtime, "%s", RUNTIME);
    for (int depth = 0; depth < MAX_NESTING; depth++) {
        /* the rule's link first: in a wrapped command's start, the one lookup it needs */
        char link[PATH_MAX];
        format_path(link, "%s/" RUNTIME_COMMANDS "/%s", runtime, name);
        ssize_t length = readlink(link, rule->text, sizeof rule->text);
        if (length >= 0) {
            if ((size_t)length >= sizeof rule->text) {
                die("command rule for %s is too long", exe);
            }
            rule->text[length] = '\0';
            format_path(rule->runtime, "%s", runtime);
            char *cursor = rule->text;
            rule->kind = next_field(&cursor);
            rule->name = next_field(&cursor);
            rule->real = next_field(&cursor);
            rule->script = next_field(&cursor);
            rule->home = next_field(&cursor);
            rule->xdg_config_home = next_field(&cursor);
            if (rule->home == NULL || rule->xdg_config_home == NULL) {
                rule->home = "-";
                rule->xdg_config_home = "-";
            }
            if (rule->kind == NULL || rule->name == NULL || rule->real == NULL || rule->script == NULL) {
                die("malformed command rule for %s", exe);
            }
            return 1;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            die("cannot read the command rule for %s: %s", exe, strerror(errno));
        }
        if (!is_directory(runtime)) {
            return 0;
        }
        char outer[PATH_MAX];
        format_path(outer, "%s/" RUNTIME_OUTER, runtime);
        format_path(runtime, "%s", outer);
    }
    return 0;
}

static void real_binary(const struct rule *rule, char out[PATH_MAX])
{
    if (strcmp(rule->real, "-") == 0) {
        die("%s: no real binary is available in this sandbox", rule->name);
    }
    format_path(out, "%s/%s", rule->runtime, rule->real);
}

__attribute__((noreturn))
static void run_script(const struct rule *rule, int argc, char *argv[])
{
    char real[PATH_MAX];
    real_binary(rule, real);
    if (setenv("AGENT_SANDBOX_CMD", rule->name, 1) != 0 || setenv("AGENT_SANDBOX_REAL", real, 1) != 0) {
        die("cannot set the wrapper environment: %s", strerror(errno));
    }
    char **script_argv = calloc((size_t)argc + 1, sizeof *script_argv);
    if (script_argv == NULL) {
        die("out of memory");
    }
    script_argv[0] = (char *)rule->script;
    for (int i = 1; i < argc; i++) {
        script_argv[i] = argv[i];
    }
    script_argv[argc] = NULL;
    execv(rule->script, script_argv);
    die("%s: cannot run the wrapper script %s: %s", rule->name, rule->script, strerror(errno));
}

__attribute__((format(printf, 2, 3), noreturn))
static void guard_refuses(const struct rule *rule, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, PROGRAM ": %s guard unavailable (", rule->name);
    vfprintf(stderr, format, args);
    fprintf(stderr, "); refusing to run %s\n", rule->name);
    va_end(args);
    exit(1);
}

/* One conversation with the guard: over its socket, or over pipes to the in-sandbox guard. */
struct guard {
    int in;         /* read the guard's questions and answer here */
    int out;        /* send the request and answers here */
    pid_t helper;   /* the in-sandbox guard's JVM, or 0 */
    long deadline;  /* CLOCK_MONOTONIC milliseconds by which the answer must have come */
    char buffer[4096];
    size_t start;
    size_t end;
    /* what is to be sent, collected so that a request leaves in one write: every
     * write wakes the guard's host side, and every wake-up costs a round of its work */
    char pending[16384];
    size_t pending_length;
};

static long now_millis(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* Writes everything or fails: -1 with errno. */
static int write_all(int fd, const char *data, size_t length)
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

static int connect_guard(const struct rule *rule);
static void start_fallback(const struct rule *rule, struct guard *g);

/* The guard is reached when the first bytes leave, not before: the request is put
 * together first, so that it follows the connection at once (the guard's host side
 * then reads it in the same wake-up as the connection, most of the time). */
static void open_guard(const struct rule *rule, struct guard *g)
{
    if (g->out >= 0) {
        return;
    }
    int fd = connect_guard(rule);
    if (fd >= 0) {
        g->in = fd;
        g->out = fd;
    } else {
        start_fallback(rule, g);
    }
}

/* Sends what was collected. */
static void flush_guard(const struct rule *rule, struct guard *g)
{
    open_guard(rule, g);
    if (g->pending_length > 0 && write_all(g->out, g->pending, g->pending_length) != 0) {
        guard_refuses(rule, "cannot send: %s", strerror(errno));
    }
    g->pending_length = 0;
}

/* Collects bytes to send; they leave with flush_guard (or earlier, when many). */
static void send_bytes(const struct rule *rule, struct guard *g, const char *data, size_t length)
{
    if (g->pending_length + length > sizeof g->pending) {
        flush_guard(rule, g);
    }
    if (length > sizeof g->pending) {
        open_guard(rule, g);
        if (write_all(g->out, data, length) != 0) {
            guard_refuses(rule, "cannot send: %s", strerror(errno));
        }
        return;
    }
    memcpy(g->pending + g->pending_length, data, length);
    g->pending_length += length;
}

static void send_field(const struct rule *rule, struct guard *g, const char *text)
{
    send_bytes(rule, g, text, strlen(text) + 1);
}

static void send_count(const struct rule *rule, struct guard *g, size_t count)
{
    char number[32];
    snprintf(number, sizeof number, "%zu", count);
    send_field(rule, g, number);
}

/* The environment variables that change what git does, which repository it uses or
 * which programs it finds. */
static int matters_to_git(const char *entry)
{
    return strncmp(entry, "GIT_", 4) == 0 || strncmp(entry, "HOME=", 5) == 0
        || strncmp(entry, "XDG_CONFIG_HOME=", 16) == 0 || strncmp(entry, "PATH=", 5) == 0;
}

/* The next byte from the guard: -1 at end of stream, -2 when the time is up. */
static int guard_byte(struct guard *g)
{
    if (g->start < g->end) {
        return (unsigned char)g->buffer[g->start++];
    }
    for (;;) {
        long left = g->deadline - now_millis();
        if (left <= 0) {
            return -2;
        }
        struct pollfd p = {.fd = g->in, .events = POLLIN, .revents = 0};
        int ready = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready == 0) {
            return -2;
        }
        ssize_t n = ready < 0 ? -1 : read(g->in, g->buffer, sizeof g->buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        g->start = 1;
        g->end = (size_t)n;
        return (unsigned char)g->buffer[0];
    }
}

/* Reads one '\n'-terminated line from the guard; 0 at end of stream. */
static int read_line(const struct rule *rule, struct guard *g, char line[GUARD_MAX_LINE])
{
    size_t n = 0;
    for (;;) {
        int c = guard_byte(g);
        if (c == -2) {
            guard_refuses(rule, "no answer within %d seconds", GUARD_TIMEOUT_SECONDS);
        }
        if (c == -1) {
            return 0;
        }
        if (c == '\n') {
            line[n] = '\0';
            return 1;
        }
        if (n + 1 >= GUARD_MAX_LINE) {
            guard_refuses(rule, "answer too long");
        }
        line[n++] = (char)c;
    }
}

/* Whether an error from socket() or connect() means Unix sockets are forbidden here
 * (an agent's own sandbox), rather than that the guard is missing. */
static int sockets_forbidden(int error)
{
    return error == EPERM || error == EACCES || error == EAFNOSUPPORT || error == ENOSYS;
}

/* Connects to the guard's socket: the descriptor, or -1 when Unix sockets are forbidden. */
static int connect_guard(const struct rule *rule)
{
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    int length = snprintf(address.sun_path, sizeof address.sun_path, "%s/" GUARD_SOCKET, rule->runtime);
    if (length < 0 || (size_t)length >= sizeof address.sun_path) {
        guard_refuses(rule, "socket path too long");
    }
    /* The guard starts with the sandbox; give it a moment if it is not listening yet. */
    for (int waited = 0;; waited += 5) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            if (sockets_forbidden(errno)) {
                return -1;
            }
            guard_refuses(rule, "cannot create a socket: %s", strerror(errno));
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            struct timeval timeout = {.tv_sec = GUARD_TIMEOUT_SECONDS, .tv_usec = 0};
            if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
                guard_refuses(rule, "cannot set a timeout: %s", strerror(errno));
            }
            return fd;
        }
        int error = errno;
        close(fd);
        if (sockets_forbidden(error)) {
            return -1;
        }
        if ((error != ENOENT && error != ECONNREFUSED) || waited >= GUARD_CONNECT_MILLIS) {
            guard_refuses(rule, "cannot connect to %s: %s", address.sun_path, strerror(error));
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Starts the in-sandbox guard: the bundled Java runtime running the same rules, talking
 * the same protocol over two pipes. */
static void start_fallback(const struct rule *rule, struct guard *g)
{
    char java[PATH_MAX];
    char jar[PATH_MAX];
    format_path(java, "%s/" GUARD_JAVA, rule->runtime);
    format_path(jar, "%s/" GUARD_JAR, rule->runtime);
    int to_guard[2];
    int from_guard[2];
    if (pipe2(to_guard, O_CLOEXEC) != 0 || pipe2(from_guard, O_CLOEXEC) != 0) {
        guard_refuses(rule, "Unix sockets are forbidden here and no pipe could be made: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        guard_refuses(rule, "Unix sockets are forbidden here and no process could be started: %s",
            strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (dup2(to_guard[0], 0) < 0 || dup2(from_guard[1], 1) < 0 || null < 0 || dup2(null, 2) < 0) {
            _exit(127);
        }
        char *const java_argv[] = {
            java, (char *)"-XX:+UseSerialGC", (char *)"-XX:TieredStopAtLevel=1", (char *)"-XX:-UsePerfData",
            (char *)"-Xshare:auto", (char *)"-Xlog:disable", (char *)"-cp", jar, (char *)GUARD_FALLBACK_CLASS,
            (char *)rule->home, (char *)rule->xdg_config_home, NULL,
        };
        char *const java_env[] = {(char *)"LC_ALL=C.UTF-8", (char *)"PATH=/usr/bin:/bin", NULL};
        execve(java, java_argv, java_env);
        _exit(127);
    }
    close(to_guard[0]);
    close(from_guard[1]);
    g->out = to_guard[1];
    g->in = from_guard[0];
    g->helper = pid;
}

/* Ends the in-sandbox guard, if any, and closes the conversation. */
static void end_guard(struct guard *g)
{
    close(g->out);
    if (g->in != g->out) {
        close(g->in);
    }
    if (g->helper > 0) {
        kill(g->helper, SIGKILL);
        while (waitpid(g->helper, NULL, 0) < 0 && errno == EINTR) {
        }
        g->helper = 0;
    }
}

/* Reads the parent process's command line: its words, NUL-separated, and their count. */
static size_t parent_cmdline(pid_t parent, char *text, size_t capacity, size_t *length)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)parent);
    *length = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    while (*length < capacity) {
        ssize_t n = read(fd, text + *length, capacity - *length);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        *length += (size_t)n;
    }
    close(fd);
    if (*length == capacity) {
        *length = 0; /* longer than the limit: unknown, so nothing counts as git's own call */
        return 0;
    }
    if (*length > 0 && text[*length - 1] != '\0') {
        text[(*length)++] = '\0';
    }
    size_t words = 0;
    for (size_t i = 0; i < *length; i++) {
        words += text[i] == '\0';
    }
    return words;
}

/*
 * Runs the real git with the TAB-separated arguments, in this process's directory and
 * environment, for at most GUARD_GIT_MILLIS: the answer is "<exit status> <output>",
 * status -1 when git gave none in time. Written into out (GUARD_MAX_GIT_OUTPUT + 32).
 */
static void run_git_question(const char *real, char *arguments, char *out, size_t capacity)
{
    char *git_argv[66];
    size_t n = 0;
    git_argv[n++] = (char *)"git";
    for (char *cursor = arguments; cursor != NULL && n < 65;) {
        git_argv[n++] = (char *)next_field(&cursor);
    }
    git_argv[n] = NULL;
    int output[2];
    snprintf(out, capacity, "-1 ");
    if (pipe2(output, O_CLOEXEC) != 0) {
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(output[0]);
        close(output[1]);
        return;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(output[1], 1) < 0 || dup2(null, 2) < 0) {
            _exit(127);
        }
        execv(real, git_argv);
        _exit(127);
    }
    close(output[1]);
    size_t prefix;
    char *text = out + 16;
    size_t room = capacity - 17 < GUARD_MAX_GIT_OUTPUT ? capacity - 17 : GUARD_MAX_GIT_OUTPUT;
    size_t got = 0;
    long deadline = now_millis() + GUARD_GIT_MILLIS;
    int timed_out = 0;
    for (;;) {
        long left = deadline - now_millis();
        struct pollfd p = {.fd = output[0], .events = POLLIN, .revents = 0};
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            timed_out = 1;
            break;
        }
        char discard[4096];
        ssize_t r = got < room ? read(output[0], text + got, room - got) : read(output[0], discard, sizeof discard);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        if (got < room) {
            got += (size_t)r;
        }
    }
    close(output[0]);
    if (timed_out) {
        kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int code = !timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    for (size_t i = 0; i < got; i++) {
        if (text[i] == '\0') {
            text[i] = '\n'; /* git prints no NUL here; never let one end the field early */
        }
    }
    char head[16];
    int head_length = snprintf(head, sizeof head, "%d ", code);
    prefix = (size_t)head_length;
    memmove(out + prefix, text, got);
    memcpy(out, head, prefix);
    out[prefix + got] = '\0';
}

extern char **environ;

/* Sends the request: the fields GuardProtocol.java reads. */
static void send_request(const struct rule *rule, struct guard *g, int argc, char *argv[])
{
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL) {
        cwd[0] = '\0';
    }
    /* Which program started this one, and what it was asked: the guard tells git's own
     * calls (git stash running git reset --hard) from commands git runs for the caller. */
    pid_t parent = getppid();
    char parent_link[64];
    char parent_exe[PATH_MAX];
    snprintf(parent_link, sizeof parent_link, "/proc/%ld/exe", (long)parent);
    ssize_t parent_length = readlink(parent_link, parent_exe, sizeof parent_exe - 1);
    parent_exe[parent_length > 0 ? parent_length : 0] = '\0';
    static char parent_text[GUARD_MAX_PARENT_CMDLINE + 1];
    size_t parent_bytes = 0;
    size_t parent_words = parent_cmdline(parent, parent_text, GUARD_MAX_PARENT_CMDLINE, &parent_bytes);

    send_field(rule, g, GUARD_MAGIC);
    send_field(rule, g, cwd);
    send_field(rule, g, parent_exe);
    send_count(rule, g, parent_words);
    if (parent_bytes > 0) {
        send_bytes(rule, g, parent_text, parent_bytes);
    }
    send_count(rule, g, (size_t)argc);
    for (int i = 0; i < argc; i++) {
        send_field(rule, g, argv[i]);
    }
    /* every entry in environment order, duplicates included: the guard reads the first, as git does */
    size_t count = 0;
    for (char **e = environ; *e != NULL; e++) {
        count += matters_to_git(*e) ? 1 : 0;
    }
    send_count(rule, g, count);
    for (char **e = environ; *e != NULL; e++) {
        if (matters_to_git(*e)) {
            send_field(rule, g, *e);
        }
    }
    flush_guard(rule, g);
}

__attribute__((noreturn))
static void run_guarded(const struct rule *rule, int argc, char *argv[])
{
    char real[PATH_MAX];
    real_binary(rule, real);
    struct guard g;
    memset(&g, 0, sizeof g);
    /* a guard that went away must be a refusal, not a death by SIGPIPE */
    struct sigaction ignore;
    struct sigaction previous;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);
    g.in = -1;
    g.out = -1;
    g.deadline = now_millis() + GUARD_TIMEOUT_SECONDS * 1000L;
    send_request(rule, &g, argc, argv);

    char line[GUARD_MAX_LINE];
    static char answer[GUARD_MAX_GIT_OUTPUT + 32];
    for (int questions = 0;; questions++) {
        if (!read_line(rule, &g, line)) {
            end_guard(&g);
            guard_refuses(rule, "the guard closed the connection without an answer");
        }
        if (strcmp(line, "A") == 0) {
            end_guard(&g);
            sigaction(SIGPIPE, &previous, NULL);
            execv(real, argv);
            die("cannot run %s (%s): %s", rule->name, real, strerror(errno));
        }
        if (strncmp(line, "D ", 2) == 0) {
            end_guard(&g);
            fprintf(stderr, PROGRAM ": %s\n", line + 2);
            exit(1);
        }
        if (questions >= GUARD_MAX_QUESTIONS) {
            break;
        }
        if (strncmp(line, "R ", 2) == 0) {
            /* Resolve a path as this process sees it; an empty answer when it does not resolve. */
            char resolved[PATH_MAX];
            if (realpath(line + 2, resolved) == NULL) {
                resolved[0] = '\0';
            }
            send_field(rule, &g, resolved);
            flush_guard(rule, &g);
            continue;
        }
        if (strncmp(line, "G ", 2) == 0) {
            run_git_question(real, line + 2, answer, sizeof answer);
            send_field(rule, &g, answer);
            flush_guard(rule, &g);
            continue;
        }
        break;
    }
    end_guard(&g);
    guard_refuses(rule, "unexpected answer");
}

__attribute__((noreturn))
static void run_wrapper(const struct rule *rule, int argc, char *argv[])
{
    if (strcmp(rule->kind, "block") == 0) {
        fprintf(stderr, PROGRAM ": %s is blocked in this sandbox (its command rule is false)\n", rule->name);
        exit(1);
    }
    if (strcmp(rule->kind, "script") == 0) {
        run_script(rule, argc, argv);
    }
    if (strcmp(rule->kind, "git") == 0) {
        run_guarded(rule, argc, argv);
    }
    die("%s: unknown command rule '%s'", rule->name, rule->kind);
}

/* ------------------------------------------------------------------ start of the command */

/*
 * A process that shares the caller's terminal could push characters into its
 * input queue with the TIOCSTI ioctl (TIOCLINUX can paste on a virtual
 * console); the caller's shell would read and run them after the sandbox ends,
 * outside it. A seccomp filter refuses both ioctls with EPERM, for the command
 * and everything it starts, and leaves the terminal otherwise untouched: job
 * control, /dev/tty and interactive programs keep working. Only the low 32 bits
 * of the request are compared, since the kernel ignores the others.
 */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
#define X32 0x40000000u
/* ioctl, then add_key, request_key, keyctl: x86-64, then x32 */
static const unsigned NATIVE_IOCTLS[] = {16u, X32 | 514u};
static const unsigned NATIVE_KEY_CALLS[] = {248u, 249u, 250u, X32 | 248u, X32 | 249u, X32 | 250u};
/* i386 */
static const unsigned COMPAT_IOCTLS[] = {54u};
static const unsigned COMPAT_KEY_CALLS[] = {286u, 287u, 288u};
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
static const unsigned NATIVE_IOCTLS[] = {29u};
static const unsigned NATIVE_KEY_CALLS[] = {217u, 218u, 219u};
static const unsigned COMPAT_IOCTLS[] = {54u};
static const unsigned COMPAT_KEY_CALLS[] = {309u, 310u, 311u};
#else
#error "agent-sandbox's seccomp filter knows x86-64 and AArch64 only"
#endif
#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

/* A BPF program built with forward jumps to named places, resolved at the end. */
enum place { NEXT, COMPAT, IOCTL_REQUEST, ALLOW, REFUSE, PLACES };
struct program {
    struct sock_filter code[48];
    unsigned char true_place[48];
    unsigned char false_place[48];
    unsigned short at[PLACES];
    unsigned short length;
};

static void emit(struct program *p, struct sock_filter statement, enum place yes, enum place no)
{
    if (p->length >= COUNT(p->code)) {
        die("seccomp filter too long");
    }
    p->true_place[p->length] = (unsigned char)yes;
    p->false_place[p->length] = (unsigned char)no;
    p->code[p->length++] = statement;
}

static void load(struct program *p, unsigned offset)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), NEXT, NEXT);
}

static void jump_if(struct program *p, unsigned value, enum place yes, enum place no)
{
    emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, value, 0, 0), yes, no);
}

static void give(struct program *p, unsigned action)
{
    emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action), NEXT, NEXT);
}

static void mark(struct program *p, enum place place)
{
    p->at[place] = p->length;
}

static unsigned char offset_to(const struct program *p, unsigned short from, enum place place)
{
    if (place == NEXT) {
        return 0;
    }
    if (p->at[place] <= from) {
        die("seccomp filter: backward jump");
    }
    return (unsigned char)(p->at[place] - from - 1);
}

static void syscalls(struct program *p, const unsigned *ioctls, size_t n_ioctls, const unsigned *keys, size_t n_keys)
{
    load(p, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < n_ioctls; i++) {
        jump_if(p, ioctls[i], IOCTL_REQUEST, NEXT);
    }
    for (size_t i = 0; i < n_keys; i++) {
        jump_if(p, keys[i], REFUSE, NEXT);
    }
    give(p, SECCOMP_RET_ALLOW);
}

/*
 * The sandbox's seccomp filter, for the command and everything it starts:
 * - TIOCSTI and TIOCLINUX are refused: a process sharing the caller's terminal
 *   could push characters into its input queue, which the caller's shell would
 *   read and run after the sandbox ends, outside it. Only the low 32 bits of the
 *   request are compared, since the kernel ignores the others. Job control,
 *   /dev/tty and interactive programs keep working.
 * - add_key, request_key and keyctl are refused: the kernel keyrings are not
 *   namespaced by path, and a key of the host (the caller's session keyring is
 *   linkable by its owner) could be read, changed, or planted to outlive the run.
 */
static int install_filter(void)
{
    struct program p;
    memset(&p, 0, sizeof p);
    load(&p, offsetof(struct seccomp_data, arch));
    jump_if(&p, NATIVE_ARCH, NEXT, COMPAT);
    syscalls(&p, NATIVE_IOCTLS, COUNT(NATIVE_IOCTLS), NATIVE_KEY_CALLS, COUNT(NATIVE_KEY_CALLS));
    mark(&p, COMPAT);
    jump_if(&p, COMPAT_ARCH, NEXT, ALLOW);
    syscalls(&p, COMPAT_IOCTLS, COUNT(COMPAT_IOCTLS), COMPAT_KEY_CALLS, COUNT(COMPAT_KEY_CALLS));
    mark(&p, IOCTL_REQUEST);
    load(&p, offsetof(struct seccomp_data, args) + sizeof(__u64)); /* request, low half */
    jump_if(&p, TIOCSTI, REFUSE, NEXT);
    jump_if(&p, TIOCLINUX, REFUSE, NEXT);
    mark(&p, ALLOW);
    give(&p, SECCOMP_RET_ALLOW);
    mark(&p, REFUSE);
    give(&p, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    for (unsigned short i = 0; i < p.length; i++) {
        if (BPF_CLASS(p.code[i].code) == BPF_JMP) {
            p.code[i].jt = offset_to(&p, i, (enum place)p.true_place[i]);
            p.code[i].jf = offset_to(&p, i, (enum place)p.false_place[i]);
        }
    }
    struct sock_fprog program = {
        .len = p.length,
        .filter = p.code,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0) {
        return -1;
    }
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0L, 0L);
}

/* A session keyring of its own, so that none of the caller's keys is the command's
 * (the filter above closes the key calls; where it cannot be installed this still holds). */
static void fresh_session_keyring(void)
{
    /* KEYCTL_JOIN_SESSION_KEYRING (1) with no name: a new anonymous keyring */
    if (syscall(SYS_keyctl, 1L, (long)0) < 0 && errno != ENOSYS && errno != EPERM) {
        die("cannot give the command a session keyring of its own: %s", strerror(errno));
    }
}

/* ------------------------------------------------------------------ network */

/*
 * With the network on, the sandbox has a network namespace of its own with only a
 * loopback. The host writes NET_LISTEN: one line per port to listen on in the
 * sandbox's loopback, "proxy PORT" (HTTP proxy clients, named by HTTP_PROXY) or
 * "port PORT" (a host port the user granted). A forwarder, started here before
 * the command and left to the sandbox's init, hands every connection to the
 * agent-sandbox process outside over NET_SOCKET, after one line saying what it is:
 * "P" or "H PORT".
 */
#define NET_LISTEN RUNTIME "/net/listen"
#define NET_SOCKET RUNTIME "/net/socket"
#define NET_PORTS_MAX 64
#define NET_CONNECT_MILLIS 3000

struct listener {
    int fd;
    int port;
    int proxy;
};

static int listen_on(int family, int port)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    int ok;
    if (family == AF_INET) {
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((unsigned short)port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    } else {
        struct sockaddr_in6 a;
        memset(&a, 0, sizeof a);
        a.sin6_family = AF_INET6;
        a.sin6_port = htons((unsigned short)port);
        a.sin6_addr = in6addr_loopback;
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
        ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    }
    if (!ok || listen(fd, 128) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int connect_host(void)
{
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    snprintf(address.sun_path, sizeof address.sun_path, "%s", NET_SOCKET);
    for (int waited = 0;; waited += 5) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&address, sizeof address) == 0) {
            return fd;
        }
        int error = errno;
        close(fd);
        if ((error != ENOENT && error != ECONNREFUSED) || waited >= NET_CONNECT_MILLIS) {
            return -1;
        }
        struct timespec pause = {.tv_sec = 0, .tv_nsec = 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

/* Copies both ways between two sockets until both directions have ended. */
static void relay(int a, int b)
{
    int fds[2] = {a, b};
    int open_in[2] = {1, 1};
    char buffer[32768];
    while (open_in[0] || open_in[1]) {
        struct pollfd watch[2];
        nfds_t n = 0;
        int side[2];
        for (int i = 0; i < 2; i++) {
            if (open_in[i]) {
                watch[n].fd = fds[i];
                watch[n].events = POLLIN;
                watch[n].revents = 0;
                side[n++] = i;
            }
        }
        if (poll(watch, n, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        for (nfds_t k = 0; k < n; k++) {
            if (watch[k].revents == 0) {
                continue;
            }
            int from = side[k];
            ssize_t got = recv(fds[from], buffer, sizeof buffer, 0);
            if (got < 0 && errno == EINTR) {
                continue;
            }
            if (got <= 0) {
                open_in[from] = 0;
                shutdown(fds[1 - from], SHUT_WR);
                continue;
            }
            if (write_all(fds[1 - from], buffer, (size_t)got) != 0) {
                return;
            }
        }
    }
}

/*
 * The sandbox's helper beside the command: it forwards each connection to the sandbox's
 * listeners (none without the network) to the host side, and, given the read end of the
 * starter's pipe (`alive`, see start_helper), ends the sandbox once every write end of it
 * is closed. One process for both: each process started here is time before the command.
 */
__attribute__((noreturn))
static void serve_helper(const struct listener *listeners, int count, int alive)
{
    struct pollfd watch[2 * NET_PORTS_MAX + 1];
    for (int i = 0; i < count; i++) {
        watch[i].fd = listeners[i].fd;
        watch[i].events = POLLIN;
    }
    nfds_t watched = (nfds_t)count;
    if (alive >= 0) {
        watch[watched].fd = alive;
        watch[watched].events = POLLIN;
        watched++;
    }
    for (;;) {
        if (poll(watch, watched, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            _exit(1);
        }
        if (alive >= 0 && watch[count].revents != 0) {
            char byte;
            ssize_t n = read(alive, &byte, 1);
            if (n == 0) {
                /* every write end is closed: the starter is gone. Every process of this pid
                 * namespace but its init and this one, then this one */
                kill(-1, SIGKILL);
                _exit(0);
            }
            if (n < 0 && errno != EINTR && errno != EAGAIN) {
                /* no way to watch: the sandbox is left to bwrap's own means */
                close(alive);
                alive = -1;
                watched--;
                if (count == 0) {
                    _exit(0);
                }
            }
        }
        for (int i = 0; i < count; i++) {
            if ((watch[i].revents & POLLIN) == 0) {
                continue;
            }
            int client = accept4(listeners[i].fd, NULL, NULL, SOCK_CLOEXEC);
            if (client < 0) {
                continue;
            }
            pid_t pid = fork();
            if (pid == 0) {
                for (int j = 0; j < count; j++) {
                    close(listeners[j].fd);
                }
                if (alive >= 0) {
                    close(alive);
                }
                int host = connect_host();
                if (host < 0) {
                    _exit(1);
                }
                char header[32];
                int length = listeners[i].proxy ? snprintf(header, sizeof header, "P\n")
                                                : snprintf(header, sizeof header, "H %d\n", listeners[i].port);
                if (length > 0 && write_all(host, header, (size_t)length) == 0) {
                    relay(client, host);
                }
                _exit(0);
            }
            close(client);
        }
    }
}

/* Starts a grandchild of this process, which the sandbox's init adopts (never the
 * command this process becomes), its standard streams on /dev/null: 0 in the
 * grandchild; in this process, once the child between has ended, its pid, or -1 when
 * no fork was possible. */
static pid_t fork_for_init(void)
{
    pid_t child = fork();
    if (child == 0) {
        if (fork() != 0) {
            _exit(0);
        }
        return 0;
    }
    if (child > 0) {
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {
        }
    }
    return child;
}

/* Starts a process that is not this one's child, so never the command's that this process
 * becomes, but the sandbox's init's: a sibling (CLONE_PARENT), one process and nothing to
 * wait for; where the kernel refuses that (this process an init itself), a grandchild that
 * the init adopts. Its standard streams are on /dev/null. 0 in the new process; in this
 * one its pid, or -1 when none could be started. The new process only runs this file's
 * own loops and plain system calls, so the C library's idea of its thread id, which a
 * clone behind the library's back leaves as this process's, is never used. */
static pid_t start_for_init(void)
{
    long pid = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), 0L, 0L, 0L, 0L);
    if (pid < 0) {
        pid = fork_for_init();
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
    }
    return (pid_t)pid;
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
static int take_descriptor(const char *name);

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

/* Starts the sandbox's helper (serve_helper) when there is work for it: the network's
 * listeners (NET_LISTEN exists when the sandbox has the network on), the watch of `alive`. */
static void start_helper(int alive)
{
    struct listener listeners[2 * NET_PORTS_MAX];
    int count = 0;
    FILE *file = fopen(NET_LISTEN, "re");
    if (file == NULL && errno != ENOENT) {
        die("cannot read %s: %s", NET_LISTEN, strerror(errno));
    }
    if (file != NULL) {
        char line[64];
        while (fgets(line, sizeof line, file) != NULL) {
            char kind[16];
            int port;
            if (sscanf(line, "%15s %d", kind, &port) != 2 || port < 1 || port > 65535 ||
                count + 2 > 2 * NET_PORTS_MAX) {
                die("malformed %s", NET_LISTEN);
            }
            int proxy = strcmp(kind, "proxy") == 0;
            int fd = listen_on(AF_INET, port);
            if (fd < 0) {
                die("cannot listen on 127.0.0.1:%d inside the sandbox: %s", port, strerror(errno));
            }
            listeners[count++] = (struct listener){.fd = fd, .port = port, .proxy = proxy};
            int fd6 = listen_on(AF_INET6, port);
            if (fd6 >= 0) {
                listeners[count++] = (struct listener){.fd = fd6, .port = port, .proxy = proxy};
            }
        }
        fclose(file);
    }
    if (count == 0 && alive < 0) {
        return;
    }
    pid_t child = start_for_init();
    if (child < 0 && count > 0) {
        die("cannot start the sandbox's network forwarder: %s", strerror(errno));
    }
    if (child == 0) {
        setsid();
        signal(SIGCHLD, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        serve_helper(listeners, count, alive);
    }
    /* without a helper (no process could be started), the sandbox is left to bwrap's own
     * --die-with-parent */
    for (int i = 0; i < count; i++) {
        close(listeners[i].fd);
    }
    if (alive >= 0) {
        close(alive);
    }
}

/*
 * The sandbox's first program: seal the terminal, then become the command
 * (same pid, same arguments, PATH lookup as a shell does). The command is in
 * the arguments, or, when there are none, in SPILLED_COMMAND. Without seccomp in
 * the kernel, a session of its own has the same effect on TIOCSTI (the
 * terminal is no longer the controlling one), at the price of /dev/tty.
 */
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
            die("%s is larger than %ld bytes", SPILLED_COMMAND, SPILLED_COMMAND_MAX);
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

/*
 * bwrap's messages while it sets the sandbox up, and only those, stay off the
 * caller's terminal, so that agent-sandbox can report a failed setup in one line
 * of its own, with bwrap's words in it, instead of bwrap's raw line and its own.
 * The command's stderr must stay the caller's very descriptor (a terminal stays a
 * terminal, nothing buffers or reorders it), so nothing may sit in between: bwrap
 * starts with stderr on LOG, a file in the run directory (on the host, hidden in
 * the sandbox), and the caller's stderr at another descriptor that bwrap passes
 * on untouched. The sandbox's first program (restore_stderr) writes STARTED_MARK
 * to LOG and moves the caller's stderr back to 2 before anything else. After bwrap
 * ends, the tool reads LOG: without the mark, the command never started and what
 * is there is bwrap's reason; with it, the status is the command's own. The JVM
 * cannot hand a child a descriptor beyond 0, 1 and 2, hence this face of the
 * launcher, which execs bwrap (same pid, so signals and --die-with-parent are as
 * before). */
__attribute__((noreturn))
static void exec_bwrap(const char *log_path, char *const bwrap_argv[], char *const env[], int alive)
{
    int caller = fcntl(STDERR_FILENO, F_DUPFD, 3); /* not close-on-exec: bwrap passes it on */
    if (caller < 0) {
        die("cannot keep stderr for the command: %s", strerror(errno));
    }
    if (alive >= 0) {
        int passed = fcntl(alive, F_DUPFD, 3); /* not close-on-exec either */
        if (passed < 0) {
            die("cannot pass the run's liveness to the sandbox: %s", strerror(errno));
        }
        close(alive);
        alive = passed;
    }
    int log = open(log_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (log < 0) {
        die("cannot open %s: %s", log_path, strerror(errno));
    }
    /* the environment given, without any STDERR_VARIABLE or ALIVE_VARIABLE of its own,
     * and ours */
    static const char prefix[] = STDERR_VARIABLE "=";
    static const char alive_prefix[] = ALIVE_VARIABLE "=";
    size_t count = 0;
    while (env[count] != NULL) {
        count++;
    }
    char **bwrap_env = calloc(count + 3, sizeof *bwrap_env);
    if (bwrap_env == NULL) {
        die("out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (strncmp(env[i], prefix, sizeof prefix - 1) != 0 &&
            strncmp(env[i], alive_prefix, sizeof alive_prefix - 1) != 0) {
            bwrap_env[n++] = env[i];
        }
    }
    char variable[sizeof prefix + 16];
    snprintf(variable, sizeof variable, "%s%d", prefix, caller);
    bwrap_env[n++] = variable;
    char alive_variable[sizeof alive_prefix + 16];
    if (alive >= 0) {
        snprintf(alive_variable, sizeof alive_variable, "%s%d", alive_prefix, alive);
        bwrap_env[n++] = alive_variable;
    }
    bwrap_env[n] = NULL;
    if (dup2(log, STDERR_FILENO) < 0) {
        die("cannot prepare bwrap's stderr: %s", strerror(errno));
    }
    close(log);
    /* the identity of every mount's source as found now, for the sandbox's first
     * program to find again at the mount's target (mount_check.h); a failure goes into
     * LOG, the reason the sandbox did not start */
    char run_dir[PATH_MAX];
    format_path(run_dir, "%s", log_path);
    strip_last_component(run_dir);
    char reason[PATH_MAX + 256];
    if (mount_identify(run_dir, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    execve(bwrap_argv[0], bwrap_argv, bwrap_env);
    /* into LOG: the tool reports it as the reason the sandbox did not start */
    die("cannot run %s: %s", bwrap_argv[0], strerror(errno));
}

__attribute__((noreturn))
static void start_bwrap(int argc, char *argv[])
{
    if (argc < 4) {
        die("%s takes a log file and bwrap's command line", START_BWRAP);
    }
    exec_bwrap(argv[2], &argv[3], environ, -1);
}

/* ------------------------------------------------------------------ starter */

/*
 * Starting a process is the dearest step of a run for the JVM, which runs
 * interpreted (ProcessBuilder's first start, the exec of its spawn helper, a
 * reaper thread): over ten milliseconds on a small machine, while the launcher
 * forks in a fraction of one. So the launcher, before it starts the JVM, forks
 * the starter: a child that waits on a pipe for the run's one request (bwrap's
 * log file, command line and environment), starts bwrap as start_bwrap does, says
 * bwrap's pid, and says how bwrap ended. The tool finds the pipes through the
 * STARTER_PROPERTY system property; when it runs no sandbox it just exits, and the
 * starter reads the end of the pipe and exits too.
 *
 * The starter dies with the launcher (PR_SET_PDEATHSIG), as the JVM does, and bwrap
 * with the starter (--die-with-parent), as bwrap died with the tool before. The
 * terminal's SIGINT, SIGQUIT and SIGHUP reach the JVM and bwrap as before and are the
 * JVM's to act on: the starter ignores them, and passes a SIGTERM of its own on to
 * bwrap. The JVM signals bwrap by its pid, which stays bwrap's while the tool runs:
 * the starter learns how bwrap ended without reaping it, and stays until the launcher
 * ends.
 *
 * Request: "<words> <variables> <bytes>\n", then <bytes> bytes: the log file,
 * bwrap's words and the environment's variables, each ended by a NUL byte.
 * Replies, a line each: "started <pid>", then "exit <status>" or "signal <number>";
 * or "failed <reason>".
 */
static volatile sig_atomic_t starter_bwrap;
static volatile sig_atomic_t starter_terminated;

/* The children of this (single-threaded) process, from /proc; at most max of them. */
static size_t read_children(pid_t *children, size_t max)
{
    int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    char text[1024];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    size_t count = 0;
    long value = 0;
    int digits = 0;
    for (ssize_t i = 0; i <= length && count < max; i++) {
        if (i < length && text[i] >= '0' && text[i] <= '9') {
            value = value * 10 + (text[i] - '0');
            digits = 1;
        } else if (digits) {
            children[count++] = (pid_t)value;
            value = 0;
            digits = 0;
        }
    }
    return count;
}

/*
 * The tool is gone, or ends: bwrap is killed, and so is each process of bwrap's that this
 * subreaper adopts once bwrap is gone (the sandbox's init, when bwrap was killed while it
 * set the sandbox up: the init then waits for bwrap's word forever, before it could ask
 * to die with bwrap), and the starter's own helpers; then the starter ends. Only
 * async-signal-safe calls.
 */
static void starter_on_stop(int signal_number)
{
    (void)signal_number;
    if (starter_bwrap > 0) {
        kill((pid_t)starter_bwrap, SIGKILL);
    }
    for (int round = 0; round < 1000; round++) {
        pid_t children[64];
        size_t count = read_children(children, sizeof children / sizeof children[0]);
        for (size_t i = 0; i < count; i++) {
            kill(children[i], SIGKILL);
        }
        if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD) {
            break;
        }
    }
    _exit(0);
}

static void starter_on_term(int signal_number)
{
    (void)signal_number;
    starter_terminated = 1;
    if (starter_bwrap > 0) {
        kill((pid_t)starter_bwrap, SIGTERM);
    }
}

static int read_fully(int fd, char *buffer, size_t length)
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

/* One reply line: "<word> <number>", or "failed <reason>" when reason is given. */
static void starter_reply(int replies, const char *word, long value, const char *reason)
{
    char line[128];
    int length = reason != NULL ? snprintf(line, sizeof line, "failed %s\n", reason)
                                : snprintf(line, sizeof line, "%s %ld\n", word, value);
    if (length > 0 && (size_t)length < sizeof line && write_all(replies, line, (size_t)length) != 0) {
        _exit(0); /* the tool is gone */
    }
}

/* Parses count space-separated decimal numbers, each at most max, and nothing else. */
static int parse_numbers(const char *text, unsigned long *numbers, int count, unsigned long max)
{
    const char *cursor = text;
    for (int i = 0; i < count; i++) {
        if (*cursor < '0' || *cursor > '9') {
            return -1;
        }
        char *end = NULL;
        errno = 0;
        numbers[i] = strtoul(cursor, &end, 10);
        if (errno != 0 || numbers[i] > max || *end != (i < count - 1 ? ' ' : '\0')) {
            return -1;
        }
        cursor = end + (i < count - 1 ? 1 : 0);
    }
    return 0;
}

/* Parses "<words> <variables> <bytes>" (decimal, each at most max). */
static int parse_starter_header(const char *header, unsigned long numbers[3], unsigned long max)
{
    return parse_numbers(header, numbers, 3, max);
}

/* The NUL-ended string at *cursor (before end), the cursor moved past it; NULL when
 * no NUL is left. */
static char *next_string(char **cursor, char *end)
{
    char *start = *cursor;
    char *nul = start < end ? memchr(start, '\0', (size_t)(end - start)) : NULL;
    if (nul == NULL) {
        return NULL;
    }
    *cursor = nul + 1;
    return start;
}

/* Takes count NUL-ended strings from *cursor; -1 when fewer are there. */
static int take_strings(char **cursor, char *end, char **strings, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if ((strings[i] = next_string(cursor, end)) == NULL) {
            return -1;
        }
    }
    return 0;
}

/* Splits bytes into exactly count NUL-ended strings; -1 when they are not that. */
static int split_strings(char *bytes, size_t length, char **strings, size_t count)
{
    char *cursor = bytes;
    return take_strings(&cursor, bytes + length, strings, count) == 0 && cursor == bytes + length ? 0 : -1;
}

/* Splits the request's bytes into the log file, bwrap's words and the variables;
 * -1 unless they are exactly that many NUL-ended strings. */
static int split_starter_request(char *bytes, size_t length, char **log, char **words, size_t word_count,
                                 char **variables, size_t variable_count)
{
    char *cursor = bytes;
    char *end = bytes + length;
    if (take_strings(&cursor, end, log, 1) != 0 || take_strings(&cursor, end, words, word_count) != 0 ||
        take_strings(&cursor, end, variables, variable_count) != 0 || cursor != end) {
        return -1;
    }
    words[word_count] = NULL;
    variables[variable_count] = NULL;
    return 0;
}

/* Closes every descriptor from 3 up but keep_a and keep_b: what the caller opened
 * (and the tool's JVM keeps) must not reach bwrap, as the JDK's launcher never let it. */
static void close_others(int keep_a, int keep_b)
{
    int low = keep_a < keep_b ? keep_a : keep_b;
    int high = keep_a < keep_b ? keep_b : keep_a;
    unsigned int ranges[3][2] = {
        {3, (unsigned int)low - 1},
        {(unsigned int)low + 1, (unsigned int)high - 1},
        {(unsigned int)high + 1, ~0U},
    };
    for (size_t i = 0; i < 3; i++) {
        if (ranges[i][0] > ranges[i][1]) {
            continue;
        }
        if (syscall(SYS_close_range, ranges[i][0], ranges[i][1], 0) != 0) {
            /* a kernel before close_range (5.9): one by one, up to the descriptor limit */
            long limit = sysconf(_SC_OPEN_MAX);
            unsigned int last = limit > 0 && limit < 1048576 ? (unsigned int)limit - 1 : 1048575;
            for (unsigned int fd = ranges[i][0]; fd <= ranges[i][1] && fd <= last; fd++) {
                close((int)fd);
            }
        }
    }
}

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
static int remove_tree(const char *path)
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

/* The requests that follow bwrap's end: "remove", answered "removed <paths>" when
 * every path is gone, "failed <reason>" when not (the tool then removes them itself).
 * Returns at the end of the pipe. */
static void serve_removals(int requests, int replies)
{
    for (;;) {
        char header[64];
        size_t used = 0;
        for (;;) {
            if (used == sizeof header - 1 || read_fully(requests, header + used, 1) != 0) {
                return;
            }
            if (header[used] == '\n') {
                break;
            }
            used++;
        }
        header[used] = '\0';
        unsigned long numbers[2];
        size_t word = strlen(STARTER_REMOVE);
        if (strncmp(header, STARTER_REMOVE " ", word + 1) != 0 ||
            parse_numbers(header + word + 1, numbers, 2, STARTER_MAX_REMOVE_BYTES) != 0 || numbers[0] == 0 ||
            numbers[0] > STARTER_MAX_REMOVE_PATHS) {
            starter_reply(replies, NULL, 0, "the request is not one");
            return;
        }
        static char bytes[STARTER_MAX_REMOVE_BYTES];
        char *paths[STARTER_MAX_REMOVE_PATHS];
        if (read_fully(requests, bytes, numbers[1]) != 0 ||
            split_strings(bytes, numbers[1], paths, numbers[0]) != 0) {
            starter_reply(replies, NULL, 0, "the request is not one");
            return;
        }
        /* each tree in a process of its own: a directory's removal waits mostly on the
         * file system (freeing and discarding its block), so trees removed side by side
         * take the time of the longest, not of all */
        int failed = 0;
        pid_t starter = getpid();
        pid_t helpers[STARTER_MAX_REMOVE_PATHS];
        size_t started = 0;
        for (size_t i = 0; i + 1 < numbers[0]; i++) {
            pid_t helper = fork();
            if (helper == 0) {
                /* stopped with the starter (the launcher stops it when the tool is told to end):
                 * what is left then, its owner record with it, is the next run's to sweep */
                if (!dies_with(starter, SIGKILL)) {
                    _exit(1);
                }
                _exit(remove_tree(paths[i]) == 0 ? 0 : 1);
            }
            if (helper < 0) {
                failed |= remove_tree(paths[i]) != 0;
            } else {
                helpers[started++] = helper;
            }
        }
        failed |= remove_tree(paths[numbers[0] - 1]) != 0;
        for (size_t i = 0; i < started; i++) {
            int status;
            while (waitpid(helpers[i], &status, 0) < 0) {
                if (errno != EINTR) {
                    status = 1;
                    break;
                }
            }
            failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        }
        starter_reply(replies, failed ? NULL : "removed", (long)numbers[0], failed ? "not all removed" : NULL);
    }
}

__attribute__((noreturn))
static void serve_start(int requests, int replies, pid_t tool)
{
    struct sigaction stop;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = starter_on_stop;
    sigfillset(&stop.sa_mask);
    sigaction(STARTER_STOP, &stop, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || !dies_with(tool, STARTER_STOP)) {
        _exit(0);
    }
    close_others(requests, replies);
    /* bwrap gets what a child of the JVM got: SIGINT, SIGQUIT, SIGPIPE and SIGTERM as by
     * default (the JVM handles them), SIGHUP as the caller left it (ignored under nohup) */
    static const int changed[] = {SIGINT, SIGQUIT, SIGHUP, SIGPIPE, SIGTERM};
    struct sigaction callers[sizeof changed / sizeof changed[0]];
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    struct sigaction term;
    memset(&term, 0, sizeof term);
    term.sa_handler = starter_on_term;
    sigemptyset(&term.sa_mask);
    for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
        sigaction(changed[i], changed[i] == SIGTERM ? &term : &ignore, &callers[i]);
    }

    char header[64];
    size_t used = 0;
    for (;;) {
        if (used == sizeof header - 1 || read_fully(requests, header + used, 1) != 0) {
            _exit(0); /* the tool ran no sandbox, or sent what is not a request */
        }
        if (header[used] == '\n') {
            break;
        }
        used++;
    }
    header[used] = '\0';
    unsigned long numbers[3];
    if (parse_starter_header(header, numbers, STARTER_MAX_REQUEST) != 0 || numbers[0] == 0) {
        starter_reply(replies, NULL, 0, "the request is not one");
        _exit(0);
    }
    char *bytes = malloc(numbers[2] + 1);
    char **words = calloc(numbers[0] + 1, sizeof *words);
    char **variables = calloc(numbers[1] + 1, sizeof *variables);
    char *log = NULL;
    if (bytes == NULL || words == NULL || variables == NULL) {
        starter_reply(replies, NULL, 0, "out of memory");
        _exit(0);
    }
    if (read_fully(requests, bytes, numbers[2]) != 0 ||
        split_starter_request(bytes, numbers[2], &log, words, numbers[0], variables, numbers[1]) != 0) {
        starter_reply(replies, NULL, 0, "the request is not one");
        _exit(0);
    }

    sigset_t term_only;
    sigset_t before;
    sigemptyset(&term_only);
    sigaddset(&term_only, SIGTERM);
    sigprocmask(SIG_BLOCK, &term_only, &before);
    /* the run's liveness: the sandbox gets the read end, the starter keeps the other (see
     * take_alive); no pipe, no watch (bwrap's --die-with-parent still holds) */
    int alive[2] = {-1, -1};
    if (pipe2(alive, O_CLOEXEC) != 0) {
        alive[0] = alive[1] = -1;
    }
    pid_t starter = getpid();
    pid_t child = fork();
    if (child == 0) {
        /* bwrap dies with the starter from its first instruction on, as the starter dies
         * with the launcher: bwrap's own --die-with-parent takes effect only once bwrap has
         * set itself up, and a tool killed before that would leave it running, adopted */
        if (!dies_with(starter, SIGKILL)) {
            _exit(127);
        }
        struct sigaction by_default;
        memset(&by_default, 0, sizeof by_default);
        by_default.sa_handler = SIG_DFL;
        sigemptyset(&by_default.sa_mask);
        for (size_t i = 0; i < sizeof changed / sizeof changed[0]; i++) {
            sigaction(changed[i], changed[i] == SIGHUP ? &callers[i] : &by_default, NULL);
        }
        sigprocmask(SIG_SETMASK, &before, NULL);
        if (chdir("/") != 0) {
            die("cannot enter /: %s", strerror(errno));
        }
        exec_bwrap(log, words, variables, alive[0]);
    }
    if (alive[0] >= 0) {
        close(alive[0]);
    }
    if (child < 0) {
        starter_reply(replies, NULL, 0, strerror(errno));
        _exit(0);
    }
    starter_bwrap = (sig_atomic_t)child;
    if (starter_terminated) {
        kill(child, SIGTERM);
    }
    sigprocmask(SIG_SETMASK, &before, NULL);
    starter_reply(replies, "started", (long)child, NULL);
    /* bwrap's end, without reaping it: its pid stays bwrap's (a zombie's) until the tool
     * is gone, so the tool's signals to that pid can never reach another process */
    siginfo_t info;
    memset(&info, 0, sizeof info);
    while (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) < 0) {
        if (errno != EINTR) {
            _exit(0);
        }
    }
    if (info.si_code == CLD_EXITED) {
        starter_reply(replies, "exit", (long)info.si_status, NULL);
    } else {
        starter_reply(replies, "signal", (long)info.si_status, NULL);
    }
    serve_removals(requests, replies);
    for (;;) {
        char rest;
        ssize_t n = read(requests, &rest, 1);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            _exit(0); /* the tool has ended */
        }
    }
}

/* Forks the starter; on success, property is the JVM option that names it, and the
 * result the starter's pid (0 without a starter). */
static pid_t fork_starter(char *property, size_t capacity)
{
    int requests[2];
    int replies[2];
    if (pipe2(requests, O_CLOEXEC) != 0) {
        return 0;
    }
    if (pipe2(replies, O_CLOEXEC) != 0) {
        close(requests[0]);
        close(requests[1]);
        return 0;
    }
    pid_t tool = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        close(requests[1]);
        close(replies[0]);
        serve_start(requests[0], replies[1], tool);
    }
    close(requests[0]);
    close(replies[1]);
    /* the tool's ends stay open across its exec into the JVM */
    if (pid < 0 || fcntl(requests[1], F_SETFD, 0) != 0 || fcntl(replies[0], F_SETFD, 0) != 0) {
        close(requests[1]);
        close(replies[0]);
        return 0;
    }
    snprintf(property, capacity, "-D%s=%d,%d", STARTER_PROPERTY, requests[1], replies[0]);
    return pid;
}

/* In the sandbox's first program: say the command starts, and give it the caller's
 * stderr back (see start_bwrap). Without the variable (the library without the
 * launcher, a pasted --dry-run line) stderr is the caller's already. */
/* The open descriptor (3 or above) the variable NAME names, taken out of the
 * environment (the command does not get it); -1 when there is none. */
static int take_descriptor(const char *name)
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
static void start_command(int argc, char *argv[])
{
    /* Before anything else, while stderr is still bwrap's log: every mount where it was
     * planned, showing what was checked (mount_check.h), or the command never runs. */
    char reason[PATH_MAX + 256];
    if (mount_verify(RUNTIME "/" RUNTIME_MOUNTS, reason, sizeof reason) != 0) {
        die("%s", reason);
    }
    restore_stderr();
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

/* ------------------------------------------------------------------ main */

/* The launcher as `agent-sandbox`: answer `check`, or hand everything to Java. */
__attribute__((noreturn))
static void run_tool(int argc, char *argv[])
{
    int quiet = 0;
    if (argc >= 2 && strcmp(argv[1], START_BWRAP) == 0) {
        start_bwrap(argc, argv);
    }
    if (is_check(argc, argv, &quiet)) {
        exit(check(quiet));
    }
    check_startable(argc, argv);
    struct installation self;
    find_installation(&self);
    exec_java(&self, argc, argv);
}

int main(int argc, char *argv[])
{
    if (argc < 1 || argv[0] == NULL) {
        die("started without a program name");
    }
    if (strcmp(argv[0], COMMAND_START) == 0) {
        start_command(argc, argv);
    }
    /* Which face: a wrapper when this path is a wrapped command's, else the tool. */
    char exe[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe);
    if (length > 0 && (size_t)length < sizeof exe) {
        exe[length] = '\0';
        struct rule rule;
        if (find_rule(exe, &rule)) {
            run_wrapper(&rule, argc, argv);
        }
    }
    run_tool(argc, argv);
}
