// SPDX-License-Identifier: Apache-2.0
/*
 * The git dirs anywhere in the project's work tree, for the host's live watch
 * (GitLiveWatch.java and TreeGitDirs.java, through jvm_start.c and Native.java): a walk
 * of the tree that finds every directory holding an entry named HEAD (every git dir git
 * uses has one: a repository's .git, a bare repository, a directory made into a git dir
 * itself) and puts an inotify watch on each directory it lists, so that what is made or
 * renamed into the tree afterwards is told, not looked for again. The JDK lists a
 * directory and watches it at some ten times the cost.
 */
#ifndef AGENT_SANDBOX_TREE_WATCH_H
#define AGENT_SANDBOX_TREE_WATCH_H

#include <stddef.h>
#include <sys/inotify.h>

/* What each watched directory reports: an entry made in it or renamed into it, a file in it
 * written and closed, an entry's attributes changed (a hook made executable). */
#define TREE_WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR)

/* The record flags of tree_watch_walk. */
#define TREE_WATCH_HEAD 1     /* the directory holds an entry named HEAD */
#define TREE_WATCH_UNLISTED 2 /* the directory could not be listed: no permission */

/* The result bits of tree_watch_walk. */
#define TREE_WATCH_NO_WATCHES 1 /* a watch could not be added (none left): the tree is not watched whole */
#define TREE_WATCH_TOO_LONG 2   /* a directory's path was too long to open, and it was not listed */
#define TREE_WATCH_TOO_MANY 4   /* MAX directories listed: the rest of the tree was not */

/* A growing array of bytes. */
struct tree_records {
    unsigned char *data;
    size_t used;
    size_t size;
};

/*
 * Lists directory START (a '/'-separated path relative to ROOT; "" for ROOT itself) and every
 * directory below it, each opened through no symbolic link and never above ROOT (openat2 with
 * RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS), never entering one whose relative path is among
 * the SKIP_LENGTH bytes of NUL-ended paths at SKIP. Where INOTIFY is not -1 each directory
 * gets a watch (TREE_WATCH_MASK) before it is listed, so that an entry made in it
 * meanwhile is listed or told by an event, never neither. At most MAX directories are listed.
 * With IDLE_MILLIS above 0 the calling thread runs only where a processor has nothing else to
 * run (SCHED_IDLE) for the first IDLE_MILLIS of the walk, then as before: a walk begun beside
 * the run's start does not slow it, and a busy machine does not stop it.
 *
 * Appends to OUT one record for each directory watched, for each directory holding an entry
 * named HEAD, and for each that could not be opened for want of permission: its watch
 * descriptor (4 bytes, big-endian; -1 without one), its flags (1 byte, TREE_WATCH_HEAD,
 * TREE_WATCH_UNLISTED), its path relative to ROOT, a NUL. Returns the TREE_WATCH_ bits of
 * what could not be done (0 when all was), or the negated errno when ROOT or START cannot be
 * opened or memory runs out.
 */
int tree_watch_walk(const char *root, const char *start, int inotify, const char *skip, size_t skip_length,
                    size_t max, int idle_millis, struct tree_records *out);

/*
 * Keeps descriptor FD open in a process of its own until this process has ended, so that its
 * last close happens there: the kernel frees an inotify instance that holds watches only after a
 * grace period (some 10 to 16 ms), which the process that closes it last waits for, and a
 * process that ends waits for it before its parent learns that it ended. That process is a
 * `cat` reading a pipe that this process holds open: it has FD as its descriptor 3 and no
 * other of this process's, a process group of its own, and ends when this process has ended.
 * Its process id, or the negated errno when it cannot be started.
 */
int tree_watch_hold(int fd);

#endif
