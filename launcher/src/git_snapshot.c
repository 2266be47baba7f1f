// SPDX-License-Identifier: Apache-2.0
/*
 * The lower layer of a git view (git_view.c): a copy of the host's git dir without its
 * object stores, which the view shows from the host's live directories.
 *
 * Why not the host's git dir itself: overlayfs never looks again at a name it has looked
 * up in a lower layer. When git inside looks for refs/heads/main.lock in the moment a git
 * of the host's holds that lock (the user's commit, an IDE's fetch or git status, which
 * takes index.lock, or the host's own apply of the sandbox's last commit), the view keeps
 * showing that lock after the host has removed it, and every later commit inside fails
 * with "File exists" (on 6.x kernels a lower entry removed or renamed on the host stays
 * visible in the view, one created there stays invisible). A lower layer nobody writes to
 * cannot go stale, so refs, packed-refs, HEAD, the index, the logs, config and hooks come
 * from this copy: the sandbox sees the host's refs as they were when it started, plus its
 * own work, never a lock or a half-done update of the host's. The host's later moves of a
 * ref still win when the host applies (GitApply.java).
 *
 * The object stores (objects, lfs, annex, of the git dir and of every git dir below it,
 * a submodule's under modules/) are too large to copy at each start and are each an
 * overlay of their own over the host's live directory. What lives there is named by its
 * content or by a random temporary name: a stale entry is an object that exists with
 * that very content, or one the sandbox's refs do not need.
 *
 * The copy is made by the sandbox's first program, before the command runs, in a memory
 * file system of the sandbox's own that goes with it: no file of it is made or removed on
 * the host's disk, where each costs far more. The host reads only what its apply needs
 * of it, the loose refs and packed-refs the sandbox started from, which the first program
 * writes beside the run's layer (git_view.c) before the command can run.
 */
#define _GNU_SOURCE

#include "git_snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"

/* A copy is at most this many directories deep. */
#define SNAPSHOT_MAX_DEPTH 200

/* Says "DOING WHAT: the error" in REASON; -1. */
static int fail(char *reason, size_t capacity, const char *doing, const char *what, int error)
{
    snprintf(reason, capacity, "%s %s: %s", doing, what, strerror(error));
    return -1;
}

/* Appends LENGTH bytes to the refs record, or returns -1. */
static int append(struct git_snapshot *s, const char *bytes, size_t length)
{
    if (s->refs_length + length > s->refs_room) {
        size_t room = s->refs_room == 0 ? 4096 : s->refs_room;
        while (room < s->refs_length + length) {
            room *= 2;
        }
        char *more = realloc(s->refs, room);
        if (more == NULL) {
            return -1;
        }
        s->refs = more;
        s->refs_room = room;
    }
    memcpy(s->refs + s->refs_length, bytes, length);
    s->refs_length += length;
    return 0;
}

static int add_store(struct git_snapshot *s, const char *rel)
{
    if (s->store_count == s->store_room) {
        int room = s->store_room == 0 ? 8 : s->store_room * 2;
        char **more = realloc(s->stores, (size_t)room * sizeof *more);
        if (more == NULL) {
            return -1;
        }
        s->stores = more;
        s->store_room = room;
    }
    s->stores[s->store_count] = strdup(rel);
    if (s->stores[s->store_count] == NULL) {
        return -1;
    }
    s->store_count++;
    return 0;
}

/* Whether NAME in directory REL is a sample hook git init writes (hooks/pre-commit.sample):
 * git never runs them, and they are most of the files of a young git dir. */
static int sample_hook(const char *rel, const char *name)
{
    size_t n = strlen(name);
    size_t r = strlen(rel);
    int hooks = strcmp(rel, "hooks") == 0 || (r > 6 && strcmp(rel + r - 6, "/hooks") == 0);
    return hooks && n > 7 && strcmp(name + n - 7, ".sample") == 0;
}

static int ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name);
    size_t k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* Whether the directory SOURCE is a git dir: a HEAD file and an objects directory. */
static int is_git_dir(int source)
{
    struct stat head;
    struct stat objects;
    return fstatat(source, "HEAD", &head, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(head.st_mode)
           && fstatat(source, "objects", &objects, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(objects.st_mode);
}

static int is_store(const char *name)
{
    return strcmp(name, "objects") == 0 || strcmp(name, "lfs") == 0 || strcmp(name, "annex") == 0;
}

/* A name of a directory, and its type as the directory says it (DT_UNKNOWN when it does
 * not: the caller looks). */
struct name {
    char *text;
    unsigned char type;
};

/* The names in the directory FD (from its start, whoever read it before), packed-refs last
 * (git reads the loose refs before it: copied in that order, a ref a git of the host's
 * packs meanwhile is in one of the two copies); NULL with errno. Read with getdents64
 * itself: the C library's directory stream would cost a copy of the descriptor, its flags
 * and a buffer of its own per directory. */
static struct name *names_of(int fd, int *count)
{
    static char buffer[8192];
    int room = 16;
    int n = 0;
    int packed = -1;
    struct name *names = malloc((size_t)room * sizeof *names);
    int error = names == NULL ? ENOMEM : lseek(fd, 0, SEEK_SET) < 0 ? errno : 0;
    while (error == 0) {
        long got = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
        if (got < 0) {
            error = errno;
            break;
        }
        if (got == 0) {
            break;
        }
        for (long at = 0; at < got && error == 0;) {
            struct linux_dirent64 {
                unsigned long long d_ino;
                long long d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *e = (struct linux_dirent64 *)(void *)(buffer + at);
            at += e->d_reclen;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            if (n == room) {
                room *= 2;
                struct name *more = realloc(names, (size_t)room * sizeof *names);
                if (more == NULL) {
                    error = ENOMEM;
                    break;
                }
                names = more;
            }
            names[n].text = strdup(e->d_name);
            names[n].type = e->d_type;
            if (names[n].text == NULL) {
                error = ENOMEM;
                break;
            }
            if (strcmp(e->d_name, "packed-refs") == 0) {
                packed = n;
            }
            n++;
        }
    }
    if (error != 0) {
        for (int i = 0; names != NULL && i < n; i++) {
            free(names[i].text);
        }
        free(names);
        errno = error;
        return NULL;
    }
    if (packed >= 0) {
        struct name last = names[packed];
        memmove(names + packed, names + packed + 1, (size_t)(n - packed - 1) * sizeof *names);
        names[n - 1] = last;
    }
    *count = n;
    return names;
}

static void free_names(struct name *names, int count)
{
    for (int i = 0; i < count; i++) {
        free(names[i].text);
    }
    free(names);
}

/* Copies the regular file NAME of SOURCE into TARGET (mode and times); a file removed
 * meanwhile is left out, one the user cannot read is there empty and unreadable, as git
 * would meet it on the host. REF: whether it is a loose ref of the top git dir, whose
 * content goes to the refs record under REL. */
static int copy_file(int source, int target, const char *name, const char *rel, const struct stat *st, int ref,
                     struct git_snapshot *s, char *reason, size_t capacity)
{
    static char buffer[65536];
    int in = openat(source, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0 && errno == ENOENT) {
        return 0; /* removed by a git of the host's in the meantime (a ref packed) */
    }
    struct stat now;
    if (in >= 0 && (fstat(in, &now) != 0 || !S_ISREG(now.st_mode))) {
        close(in);
        return 0; /* replaced by something else in the meantime */
    }
    if (s->bytes + (unsigned long long)(in >= 0 ? now.st_size : 0) > GIT_SNAPSHOT_MAX_BYTES) {
        close(in); /* said before a byte of it is copied */
        snprintf(reason, capacity, "more than %d MiB outside its objects", GIT_SNAPSHOT_MAX_BYTES >> 20);
        return -1;
    }
    /* made with the file's own mode (git_snapshot_copy clears the umask): only this process
     * writes in the copy, and a mode that forbids writing binds only later opens */
    int out = openat(target, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     in >= 0 ? (st->st_mode & 07777) : 0);
    if (out < 0) {
        int error = errno;
        if (in >= 0) {
            close(in);
        }
        return fail(reason, capacity, "cannot copy", rel, error);
    }
    if (in < 0) {
        int error = errno;
        int status = error == EACCES || error == EPERM ? 0 : fail(reason, capacity, "cannot read", rel, error);
        close(out); /* made with mode 0 */
        return status;
    }
    char head[GIT_BASE_REF_BYTES + 1];
    size_t kept = 0;
    unsigned long long copied = 0;
    int status = 0;
    for (;;) {
        ssize_t n = read(in, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            status = fail(reason, capacity, "cannot read", rel, errno);
            break;
        }
        if (n == 0) {
            break;
        }
        int last = (size_t)n < sizeof buffer
                   && copied + (unsigned long long)n == (unsigned long long)now.st_size;
        copied += (unsigned long long)n;
        s->bytes += (unsigned long long)n;
        if (s->bytes > GIT_SNAPSHOT_MAX_BYTES) {
            snprintf(reason, capacity, "more than %d MiB outside its objects", GIT_SNAPSHOT_MAX_BYTES >> 20);
            status = -1;
            break;
        }
        if (ref && kept < sizeof head) {
            size_t take = (size_t)n < sizeof head - kept ? (size_t)n : sizeof head - kept;
            memcpy(head + kept, buffer, take);
            kept += take;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buffer + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            if (w <= 0) {
                status = fail(reason, capacity, "cannot copy", rel, w < 0 ? errno : ENOSPC);
                break;
            }
            done += w;
        }
        if (status != 0 || last) {
            break; /* all the file had when it was opened: no read to meet its end */
        }
    }
    close(in);
    if (status == 0) {
        struct timespec times[2] = {st->st_atim, st->st_mtim};
        if (futimens(out, times) != 0) {
            status = fail(reason, capacity, "cannot copy", rel, errno);
        }
    }
    close(out);
    if (status == 0 && ref) {
        /* content beyond GIT_BASE_REF_BYTES, or with a NUL, is no object id: recorded empty */
        int usable = copied <= GIT_BASE_REF_BYTES && memchr(head, '\0', kept) == NULL;
        if (append(s, rel, strlen(rel) + 1) != 0 || (usable && append(s, head, kept) != 0) || append(s, "", 1) != 0) {
            snprintf(reason, capacity, "out of memory");
            status = -1;
        }
    }
    return status;
}

/* Copies the content of the directory SOURCE into TARGET; REL is its path below the top. */
static int copy_dir(int source, int target, const char *rel, int depth, struct git_snapshot *s, char *reason,
                    size_t capacity)
{
    if (depth > SNAPSHOT_MAX_DEPTH) {
        snprintf(reason, capacity, "%s is nested more than %d levels deep", rel, SNAPSHOT_MAX_DEPTH);
        return -1;
    }
    int git_dir = is_git_dir(source);
    int count = 0;
    struct name *names = names_of(source, &count);
    if (names == NULL) {
        return errno == ENOENT ? 0 : fail(reason, capacity, "cannot list", rel[0] == '\0' ? "." : rel, errno);
    }
    int status = 0;
    for (int i = 0; i < count && status == 0; i++) {
        const char *name = names[i].text;
        char child[PATH_MAX];
        int n = rel[0] == '\0' ? snprintf(child, sizeof child, "%s", name)
                               : snprintf(child, sizeof child, "%s/%s", rel, name);
        if (n < 0 || (size_t)n >= sizeof child) {
            snprintf(reason, capacity, "a path below %s is too long", rel);
            status = -1;
            break;
        }
        if (++s->entries > GIT_SNAPSHOT_MAX_ENTRIES) {
            snprintf(reason, capacity, "more than %d files outside its objects", GIT_SNAPSHOT_MAX_ENTRIES);
            status = -1;
            break;
        }
        if (names[i].type == DT_REG && (ends_with(name, ".lock") || sample_hook(rel, name))) {
            continue; /* left out below too: not even looked at */
        }
        struct stat st;
        if (fstatat(source, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) {
                status = fail(reason, capacity, "cannot look at", child, errno);
            }
            continue; /* removed by a git of the host's in the meantime */
        }
        if (S_ISDIR(st.st_mode)) {
            if (mkdirat(target, name, 0700) != 0) {
                status = fail(reason, capacity, "cannot copy", child, errno);
                break;
            }
            if (git_dir && is_store(name)) {
                /* an object store: empty here, its view's mount point */
                if (add_store(s, child) != 0) {
                    snprintf(reason, capacity, "out of memory");
                    status = -1;
                }
                if (status == 0 && fchmodat(target, name, st.st_mode & 07777, 0) != 0) {
                    status = fail(reason, capacity, "cannot copy", child, errno);
                }
                continue;
            }
            int from = openat(source, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int to = openat(target, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (to < 0) {
                status = fail(reason, capacity, "cannot copy", child, errno);
            } else if (from < 0 && (errno == EACCES || errno == EPERM)) {
                if (fchmod(to, 0) != 0) { /* there, and as unreadable as on the host */
                    status = fail(reason, capacity, "cannot copy", child, errno);
                }
            } else if (from < 0 && errno != ENOENT && errno != ENOTDIR) {
                status = fail(reason, capacity, "cannot read", child, errno);
            } else if (from >= 0) {
                status = copy_dir(from, to, child, depth + 1, s, reason, capacity);
                if (status == 0 && fchmod(to, st.st_mode & 07777) != 0) {
                    status = fail(reason, capacity, "cannot copy", child, errno);
                }
            }
            if (from >= 0) {
                close(from);
            }
            if (to >= 0) {
                close(to);
            }
        } else if (S_ISLNK(st.st_mode)) {
            char link[PATH_MAX];
            ssize_t length = readlinkat(source, name, link, sizeof link - 1);
            if (length < 0) {
                if (errno != ENOENT) {
                    status = fail(reason, capacity, "cannot read the link", child, errno);
                }
                continue;
            }
            link[length] = '\0';
            if (symlinkat(link, target, name) != 0) {
                status = fail(reason, capacity, "cannot copy", child, errno);
            }
        } else if (S_ISREG(st.st_mode) && !ends_with(name, ".lock") && !sample_hook(rel, name)) {
            /* no lock file: one a git of the host's holds in this moment would never go inside */
            int ref = strncmp(child, "refs/", 5) == 0;
            status = copy_file(source, target, name, child, &st, ref, s, reason, capacity);
        }
        /* no socket, FIFO or device */
    }
    free_names(names, count);
    return status;
}

int git_snapshot_copy(int source, const char *target, struct git_snapshot *snapshot, char *reason,
                      size_t capacity)
{
    memset(snapshot, 0, sizeof *snapshot);
    int to = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (to < 0) {
        return fail(reason, capacity, "cannot open", target, errno);
    }
    mode_t before = umask(0); /* each file made with its mode whole (copy_file) */
    int status = copy_dir(source, to, "", 0, snapshot, reason, capacity);
    umask(before);
    close(to);
    return status;
}

void git_snapshot_free(struct git_snapshot *snapshot)
{
    for (int i = 0; i < snapshot->store_count; i++) {
        free(snapshot->stores[i]);
    }
    free(snapshot->stores);
    free(snapshot->refs);
    memset(snapshot, 0, sizeof *snapshot);
}
