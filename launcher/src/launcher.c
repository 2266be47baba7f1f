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
 * Every failure is one line on stderr and exit status 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROGRAM "agent-sandbox"

/* Present, read-only, inside every sandbox: its existence is the answer to `check`. */
#define SANDBOX_MARKER "/run/agent-sandbox/agent-sandbox"

/* Options for a short-lived command line JVM; logging goes to stderr so that
 * nothing the JVM says can mix with the sandboxed command's stdout. */
static const char *const JVM_OPTIONS[] = {
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-Xlog:disable",
    "-Xlog:all=warning:stderr",
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

/* Replaces this process with the bundled JVM running the command line tool. */
__attribute__((noreturn))
static void exec_java(const struct installation *self, int argc, char *argv[])
{
    char runtime[PATH_MAX];
    char java[PATH_MAX];
    char jar[PATH_MAX];
    char launcher_property[PATH_MAX + 32];
    char home_property[PATH_MAX + 32];

    format_path(runtime, "%s/runtime", self->home);
    format_path(java, "%s/bin/java", runtime);
    format_path(jar, "%s/lib/agent-sandbox-cli.jar", self->home);
    snprintf(launcher_property, sizeof launcher_property, "-Dagentsandbox.launcher=%s", self->exe);
    snprintf(home_property, sizeof home_property, "-Dagentsandbox.home=%s", self->home);

    if (access(java, X_OK) != 0) {
        die("no Java runtime at %s; reinstall agent-sandbox (./install.sh)", runtime);
    }

    /* java, the options, two properties, -jar <jar>, the user's arguments, NULL */
    size_t user_args = (size_t)(argc - 1);
    size_t count = 1 + JVM_OPTION_COUNT + 2 + 2 + user_args + 1;
    char **java_argv = calloc(count, sizeof *java_argv);
    if (java_argv == NULL) {
        die("out of memory");
    }
    size_t n = 0;
    java_argv[n++] = java;
    for (size_t i = 0; i < JVM_OPTION_COUNT; i++) {
        java_argv[n++] = (char *)JVM_OPTIONS[i];
    }
    java_argv[n++] = launcher_property;
    java_argv[n++] = home_property;
    java_argv[n++] = (char *)"-jar";
    java_argv[n++] = jar;
    for (size_t i = 0; i < user_args; i++) {
        java_argv[n++] = argv[i + 1];
    }
    java_argv[n] = NULL;

    set_aside_caller_java_variables();
    execv(java, java_argv);
    die("cannot start %s: %s", java, strerror(errno));
}

/* The launcher as `agent-sandbox`: answer `check`, or hand everything to Java. */
static int run_tool(int argc, char *argv[])
{
    int quiet = 0;
    if (is_check(argc, argv, &quiet)) {
        return check(quiet);
    }
    struct installation self;
    find_installation(&self);
    exec_java(&self, argc, argv);
}

/* What the launcher is this time, decided by the name it was started under. */
enum face {
    FACE_TOOL, /* agent-sandbox itself */
};

static enum face face_of(const char *program_name)
{
    /*
     * One face so far: the tool, whatever the name (a renamed or symlinked
     * copy behaves the same). Command wrappers, this binary overlaid on a
     * wrapped command inside a sandbox, will be recognised here by name.
     */
    (void)program_name;
    return FACE_TOOL;
}

int main(int argc, char *argv[])
{
    if (argc < 1 || argv[0] == NULL) {
        die("started without a program name");
    }
    switch (face_of(argv[0])) {
    case FACE_TOOL:
        return run_tool(argc, argv);
    }
    die("unknown launcher face");
}
