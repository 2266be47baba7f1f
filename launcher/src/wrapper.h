// SPDX-License-Identifier: Apache-2.0
/*
 * The launcher at the path of a wrapped command, inside a sandbox: finds the command's
 * rule and blocks it, runs its wrapper script, or asks the git guard (git_guard.h).
 */
#ifndef AGENT_SANDBOX_WRAPPER_H
#define AGENT_SANDBOX_WRAPPER_H

#include <limits.h>

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
void lookup_name(char out[PATH_MAX], const char *path);

/* Finds the rule for the executable path, innermost runtime first. 1 when found. */
int find_rule(const char *exe, struct rule *rule);

/* The real binary of the rule, below its runtime; dies when the sandbox has none. */
void real_binary(const struct rule *rule, char out[PATH_MAX]);

/* Blocks the command, runs its wrapper script, or runs git through the guard. */
__attribute__((noreturn))
void run_wrapper(const struct rule *rule, int argc, char *argv[]);

#endif
