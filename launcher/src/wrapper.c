// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher at the path of a wrapped command: see wrapper.h.
 */
#define _GNU_SOURCE

#include "wrapper.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git_guard.h"
#include "guard.h"
#include "guard_client.h"
#include "util.h"

/* How many runtimes deep the rule of a wrapped command is looked for (nested sandboxes). */
#define MAX_NESTING 32

/* Appends the lookup name of an absolute path: '%' -> %25, '/' -> %2F. */
void lookup_name(char out[PATH_MAX], const char *path)
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

/* Finds the rule for the executable path, innermost runtime first. 1 when found. */
int find_rule(const char *exe, struct rule *rule)
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

void real_binary(const struct rule *rule, char out[PATH_MAX])
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

__attribute__((noreturn))
void run_wrapper(const struct rule *rule, int argc, char *argv[])
{
    if (strcmp(rule->kind, "block") == 0) {
        fprintf(stderr, PROGRAM ": %s is blocked in this sandbox (its command rule is false)\n", rule->name);
        fflush(stderr);
        report_blocked(rule, argc, argv); /* for the host's denial log */
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
