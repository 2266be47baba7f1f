// SPDX-License-Identifier: Apache-2.0
/*
 * Helpers every face of the launcher uses: the one way it fails, paths that never
 * truncate, whole reads and writes, descriptors.
 */
#ifndef AGENT_SANDBOX_UTIL_H
#define AGENT_SANDBOX_UTIL_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* The name every message starts with: "agent-sandbox: ...". */
#define PROGRAM "agent-sandbox"

extern char **environ;

/* Prints PROGRAM ": " and the message as one line on stderr, and exits with status 1. */
__attribute__((format(printf, 1, 2), noreturn))
void die(const char *format, ...);

/* Formats into a PATH_MAX buffer; a result that does not fit is an error, never truncated. */
__attribute__((format(printf, 2, 3)))
void format_path(char buffer[PATH_MAX], const char *format, ...);

/* Cuts the last component off an absolute path: "/a/b" -> "/a", "/a" -> "/". */
void strip_last_component(char *path);

/* Whether path is a directory (following links); 0 when it does not exist, and any
 * other failure to look is fatal. */
int is_directory(const char *path);

/* Splits the next TAB-separated field off *cursor. */
const char *next_field(char **cursor);

/* CLOCK_MONOTONIC in milliseconds. */
long now_millis(void);

/* Writes everything or fails: -1 with errno. */
int write_all(int fd, const char *data, size_t length);

/* Writes text to the existing file path (a /proc/self map) in one call: 0, or -1 (errno). */
int write_text(const char *path, const char *text);

/* In a user namespace this process has just made: maps uid inside to outside_uid and gid
 * inside to outside_gid (setgroups denied first, as an unprivileged map needs). 0, or -1 with
 * errno and *failed naming what could not be written ("uid_map", "setgroups" or "gid_map"). */
int map_ids(unsigned long uid, unsigned long outside_uid, unsigned long gid, unsigned long outside_gid,
            const char **failed);

/* Reads exactly length bytes: 0, or -1 at an error or an early end of the stream. */
int read_fully(int fd, char *buffer, size_t length);

/* Whether this process now gets death_signal when its parent ends, and that parent is
 * still the one given (if it ended before the request, nothing would come). */
int dies_with(pid_t parent, int death_signal);

/* Closes every descriptor from 3 up but keep_a and keep_b: what the caller opened
 * (and the tool's JVM keeps) must not reach bwrap, as the JDK's launcher never let it. */
void close_others(int keep_a, int keep_b);
void close_others3(int keep_a, int keep_b, int keep_c);

/* The open descriptor (3 or above) the variable NAME names, taken out of the
 * environment (the command does not get it); -1 when there is none. */
int take_descriptor(const char *name);

/* Ends this process as a child ended with this wait status: its exit status, or killed
 * by the same signal (128 + the signal where the signal cannot kill it). */
__attribute__((noreturn))
void end_like(int status);

#endif
