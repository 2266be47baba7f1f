// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.Native;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The directories anywhere in the project's work tree that hold an entry named {@code HEAD}:
 * every git dir git uses has one (a repository's {@code .git}, a bare repository, a directory
 * made into a git dir itself, a linked worktree's git dir), and git's discovery takes one for
 * the repository of any directory below it where you, your IDE or your editor run git. The
 * live watch looks at each (GitLiveWatch): what a sandbox planted there this run goes aside.
 *
 * <p>The first look lists the whole tree, through no symbolic link, past the project's own
 * git dirs and the git dirs the run sees through views ({@code skipped}). With the tool's
 * native methods each directory listed gets an inotify watch before it is listed, and later
 * looks list only what the kernel says was made or renamed into the tree meanwhile (a
 * directory made is listed whole; a {@code HEAD} made is taken); where watches run out, or
 * without the native methods, every look lists the tree again. Either way nothing is missed:
 * an entry made while its directory is listed is listed or told.
 *
 * <p>At most {@link #MAX_DIRS} directories are listed: beyond that, {@link #bound()} says so.
 */
final class TreeGitDirs {
    /** The most directories a look lists. */
    static final int MAX_DIRS = 250_000;
    /** How long the first listing, begun beside the run's start, takes only idle processor time. */
    static final int IDLE_MILLIS = 150;
    private int idleMillis; // under this

    // inotify's bits (inotify(7))
    private static final int IN_CLOSE_WRITE = 0x8;
    private static final int IN_ATTRIB = 0x4;
    private static final int IN_MOVED_TO = 0x80;
    private static final int IN_CREATE = 0x100;
    private static final int IN_Q_OVERFLOW = 0x4000;
    private static final int IN_IGNORED = 0x8000;
    private static final int IN_ISDIR = 0x40000000;
    private static final int EACCES = 13;

    /** The names whose making or writing a look should not wait for: what makes a git dir, or runs a command. */
    private static final Set<String> TELLING = Set.of("HEAD", ".git", "config", "commondir", "config.worktree",
            "hooks", "objects", "refs");

    private final Path top;
    private final byte[] skip;
    private final Set<String> skipped = new java.util.HashSet<>();

    /** The inotify instance (closed: -1), under {@link #events}. */
    private int fd = -1;
    /** Whether the kernel tells what is made in the tree: the watches are whole. */
    private volatile boolean watching;
    private boolean listed;
    /** Whether the native methods answer (null before the first look). */
    private Boolean natively;
    /** Each watch's directory, relative to {@link #top} (only the watch's thread). */
    private final Map<Integer, String> watches = new HashMap<>();
    /** The directories holding a HEAD, relative to {@link #top} (only the watch's thread). */
    private final Set<String> heads = new TreeSet<>();
    /** The directories that could not be listed (no permission), relative to {@link #top}, this look. */
    private final List<String> unlisted = new ArrayList<>();
    /**
     * The directories the kernel tells of that could not be listed yet (no permission when
     * they were made or renamed into the tree): each look tries them again, and lists each
     * whole once it can (only the watch's thread).
     */
    private final Set<String> unlistedSince = new TreeSet<>();
    private String bound;

    /** The events read and not yet taken, and whether the kernel dropped some (under it). */
    private final ArrayDeque<Event> events = new ArrayDeque<>();
    private boolean overflowed; // under events

    private record Event(int watch, int mask, String name) {}

    /**
     * @param top     the project's top
     * @param skipped directories not to enter (the project's git dirs and those the run sees
     *                through views): only those below {@code top} count
     */
    TreeGitDirs(Path top, List<Path> skipped) {
        this.top = top;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Path p : skipped) {
            Path n = p.toAbsolutePath().normalize();
            if (n.startsWith(top) && !n.equals(top)) {
                String rel = top.relativize(n).toString();
                this.skipped.add(rel);
                out.writeBytes(rel.getBytes(StandardCharsets.UTF_8));
                out.write(0);
            }
        }
        this.skip = out.toByteArray();
    }

    /**
     * Whether the kernel tells this watch what is made in the tree (then {@link #await} waits
     * for it): after the first look, with the native methods and watches enough.
     */
    boolean told() {
        return watching;
    }


    /** What the last look could not list, one line for the user; null when it listed all. */
    synchronized String bound() {
        return bound;
    }

    /** The directories the last look could not list (the sandbox can take its owner's read bit). */
    synchronized List<Path> unlisted() {
        // each named by the directory on its way that its owner may not read or enter (the
        // one the sandbox changed), which can be looked at where the one below it cannot
        Set<Path> out = new java.util.LinkedHashSet<>();
        for (String u : unlisted) {
            Path shut = shutOnTheWay(rel(u));
            out.add(shut != null ? shut : rel(u));
        }
        return new ArrayList<>(out);
    }

    /**
     * Lists the tree on a thread of its own, from now on (before the sandbox starts): the
     * first {@link #look} waits for it, and takes only what was made since.
     */
    void startListing() {
        Thread listing = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    synchronized (TreeGitDirs.this) {
                        // on a processor the run's start leaves idle, for a while: the listing must
                        // not slow the start, and a machine kept busy must not stop it
                        idleMillis = IDLE_MILLIS;
                        try {
                            look();
                        } finally {
                            idleMillis = 0;
                        }
                    }
                } catch (RuntimeException | StackOverflowError | OutOfMemoryError e) {
                    // the first look lists it again
                    synchronized (TreeGitDirs.this) {
                        natively = null;
                    }
                }
            }
        }, "agent-sandbox work tree listing");
        listing.setDaemon(true);
        listing.start();
    }

    /** The directories below the top that hold an entry named HEAD now. */
    synchronized List<Path> look() {
        bound = null;
        unlisted.clear();
        if (natively == null) {
            int opened = Native.openWatch();
            natively = Native.walkTree(-1, top, "", skip, 1, 0) != null;
            if (opened >= 0 && !Native.holdWatch(opened)) {
                // no process to close it last: the run's end would wait for the kernel's grace period
                Native.closeWatch(opened);
                opened = -1;
            }
            synchronized (events) {
                fd = opened;
                watching = natively && opened >= 0;
            }
            if (!watching) {
                closeWatch();
            }
        }
        if (!natively) {
            heads.clear();
            walkHere();
        } else if (!watching) {
            heads.clear();
            walk("");
        } else if (!listed) {
            listed = true;
            walk("");
        } else {
            take();
            for (String again : new ArrayList<>(unlistedSince)) {
                if (watching) {
                    walk(again); // listed whole once its owner may read it again
                }
            }
        }
        List<Path> out = new ArrayList<>();
        for (java.util.Iterator<String> it = heads.iterator(); it.hasNext();) {
            Path dir = rel(it.next());
            try {
                Files.readAttributes(dir.resolve("HEAD"), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                out.add(dir);
            } catch (java.nio.file.AccessDeniedException e) {
                // a directory on the way its owner may no longer enter or read (the sandbox took
                // the bits): what is there cannot be looked at; it stays known, and is named
                Path shut = shutOnTheWay(dir);
                if (shut != null && !unlisted.contains(top.relativize(shut).toString())) {
                    unlisted.add(top.relativize(shut).toString());
                }
            } catch (IOException | RuntimeException e) {
                it.remove(); // gone
            }
        }
        return out;
    }

    /** The first directory from the top down to {@code dir} (included) that its owner may not read or enter. */
    private Path shutOnTheWay(Path dir) {
        Path p = top;
        for (Path part : top.relativize(dir)) {
            p = p.resolve(part);
            try {
                Set<java.nio.file.attribute.PosixFilePermission> perms = Files.readAttributes(p,
                        java.nio.file.attribute.PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS).permissions();
                if (!perms.contains(java.nio.file.attribute.PosixFilePermission.OWNER_READ)
                        || !perms.contains(java.nio.file.attribute.PosixFilePermission.OWNER_EXECUTE)) {
                    return p;
                }
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }

    private Path rel(String path) {
        return path.isEmpty() ? top : top.resolve(path);
    }

    /** Takes the events read so far, and what waits: lists what was made, takes each HEAD made. */
    private void take() {
        List<Event> taken;
        boolean overflow;
        synchronized (events) {
            read();
            taken = new ArrayList<>(events);
            events.clear();
            overflow = overflowed;
            overflowed = false;
        }
        if (overflow) {
            // the kernel dropped events: the tree is listed whole again (the watches stay)
            walk("");
            return;
        }
        for (Event e : taken) {
            if (!watching) {
                return; // watches ran out meanwhile: the tree was just listed whole
            }
            String dir = watches.get(e.watch());
            if ((e.mask() & IN_IGNORED) != 0) {
                watches.remove(e.watch());
                continue;
            }
            if (dir == null || e.name().isEmpty()) {
                continue;
            }
            String path = dir.isEmpty() ? e.name() : dir + "/" + e.name();
            if ((e.mask() & IN_ISDIR) != 0 && (e.mask() & (IN_CREATE | IN_MOVED_TO)) != 0) {
                if (!skipped.contains(path)) {
                    walk(path); // a directory made or renamed into the tree: listed whole, watched
                }
            } else if (e.name().equals("HEAD")) {
                heads.add(dir);
            }
        }
    }

    /** Reads the events waiting, under {@link #events}: whether one of them should not wait for the next look. */
    private boolean read() {
        if (fd < 0) {
            return false;
        }
        byte[] bytes = Native.readWatch(fd);
        if (bytes == null) {
            overflowed = true;
            return true;
        }
        boolean telling = false;
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
        while (b.remaining() >= 16) {
            int watch = b.getInt();
            int mask = b.getInt();
            b.getInt(); // the cookie of a rename
            int length = b.getInt();
            if (length < 0 || length > b.remaining()) {
                break;
            }
            int end = b.position();
            while (end < b.position() + length && bytes[end] != 0) {
                end++;
            }
            String name = new String(bytes, b.position(), end - b.position(), StandardCharsets.UTF_8);
            b.position(b.position() + length);
            if ((mask & IN_Q_OVERFLOW) != 0) {
                overflowed = true;
                telling = true;
                continue;
            }
            if ((mask & (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_IGNORED)) == 0) {
                continue;
            }
            events.add(new Event(watch, mask, name));
            telling |= (mask & IN_ISDIR) != 0 && (mask & (IN_CREATE | IN_MOVED_TO)) != 0
                    || TELLING.contains(name) || GitAftercheck.HOOK_NAMES.contains(name);
        }
        return telling;
    }

    /**
     * Waits at most {@code millis} for the kernel's word that something that matters was made or
     * written in the tree (a directory, a {@code HEAD}, a config, a hook): whether it came. False
     * at once when the tree is not watched (any more).
     */
    boolean await(int millis) {
        int waitOn;
        synchronized (events) {
            waitOn = fd;
        }
        if (waitOn < 0 || !Native.awaitWatch(waitOn, millis)) {
            return false;
        }
        synchronized (events) {
            return read();
        }
    }

    /**
     * Ends the watches (a thread in {@link #await} returns at the end of its wait). The kernel's
     * grace period for the instance is waited for by the process that holds it ({@link
     * Native#holdWatch}), after the run.
     */
    void closeWatch() {
        synchronized (events) {
            watching = false;
            if (fd >= 0) {
                Native.closeWatch(fd);
                fd = -1;
            }
            events.clear();
        }
    }

    /** Lists {@code start} and the directories below it with the native walk, watching them where there are watches. */
    private void walk(String start) {
        int into;
        synchronized (events) {
            into = watching ? fd : -1;
        }
        byte[] answer = Native.walkTree(into, top, start, skip, MAX_DIRS, idleMillis);
        if (answer == null || answer.length < 4) {
            return;
        }
        ByteBuffer b = ByteBuffer.wrap(answer);
        int result = b.getInt();
        if (result < 0) {
            if (start.isEmpty()) {
                bound = "agent-sandbox could not look for git dirs in " + top + " (error " + -result + ")";
            } else if (result == -EACCES) {
                unlistedSince.add(start);
                unlisted.add(start);
            } else {
                unlistedSince.remove(start); // gone, or a link now: told where it went
            }
            return;
        }
        unlistedSince.remove(start);
        while (b.remaining() >= 6) {
            int watch = b.getInt();
            int flags = b.get();
            int from = b.position();
            int end = from;
            while (end < answer.length && answer[end] != 0) {
                end++;
            }
            String path = new String(answer, from, end - from, StandardCharsets.UTF_8);
            b.position(Math.min(answer.length, end + 1));
            if (watch >= 0) {
                watches.put(watch, path);
            }
            if ((flags & 1) != 0) {
                heads.add(path);
            }
            if ((flags & 2) != 0) {
                unlisted.add(path);
                if (watching) {
                    unlistedSince.add(path);
                }
            }
        }
        if ((result & 1) != 0 && watching) {
            // no watches left (the user's limit, shared with every program): from now on each
            // look lists the tree whole; this one did, watched or not
            closeWatch();
            watches.clear();
        }
        boundOf(result);
    }

    private void boundOf(int result) {
        if ((result & 4) != 0) {
            bound = "agent-sandbox looked for git dirs a sandbox made in the first " + MAX_DIRS
                    + " directories of " + top + " only: look for a .git, or a HEAD, below it before you run git"
                    + " deeper in it";
        } else if ((result & 2) != 0) {
            bound = "agent-sandbox did not look for git dirs in directories of " + top + " whose paths are longer"
                    + " than the system opens";
        }
    }

    /** The walk of {@link #walk}, the JDK's way (a JVM without the tool's native methods). */
    private void walkHere() {
        ArrayDeque<String> pending = new ArrayDeque<>();
        pending.push("");
        int count = 0;
        while (!pending.isEmpty()) {
            if (count == MAX_DIRS) {
                boundOf(4);
                return;
            }
            String path = pending.pop();
            count++;
            Path dir = rel(path);
            if (!path.isEmpty() && Files.isSymbolicLink(dir)) {
                continue;
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path e : entries) {
                    String name = e.getFileName().toString();
                    if (name.equals("HEAD")) {
                        heads.add(path);
                    }
                    String child = path.isEmpty() ? name : path + "/" + name;
                    BasicFileAttributes a;
                    try {
                        a = Files.readAttributes(e, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                    } catch (IOException gone) {
                        continue;
                    }
                    if (a.isDirectory() && !skipped.contains(child)) {
                        pending.push(child);
                    }
                }
            } catch (java.nio.file.AccessDeniedException e) {
                unlisted.add(path);
            } catch (IOException | RuntimeException e) {
                // gone meanwhile: what is there now was listed where it is
            }
        }
    }
}
