// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher as `agent-sandbox`: check, or start the tool: see tool.h.
 */
#define _GNU_SOURCE

#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwrap_start.h"
#include "guard.h"
#include "run_jvm.h"
#include "starter.h"
#include "util.h"

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

/* The launcher itself and the application directory it belongs to. */
struct installation {
    char exe[PATH_MAX];
    char home[PATH_MAX];
};

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
int is_check(int argc, char *argv[], int *quiet)
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
int is_utf8(const char *text)
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
    snprintf(launcher_property, sizeof launcher_property, "-D" LAUNCHER_PROPERTY "=%s", self->exe);
    snprintf(home_property, sizeof home_property, "-D" HOME_PROPERTY "=%s", self->home);
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
    const char *log_classes = getenv(LOG_CLASS_LOADING_VARIABLE);
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

/* The launcher as `agent-sandbox`: answer `check`, or hand everything to Java. */
__attribute__((noreturn))
void run_tool(int argc, char *argv[])
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
