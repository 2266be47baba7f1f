// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import agentsandbox.core.Environment;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Whether a run sees the project's git dir through a copy-on-write view: an overlay
 * mounted over it inside the sandbox (by the sandbox's first program, launcher/src/git_view.c),
 * whose changes land in a layer of the run's own and reach the host's git dir only as
 * {@link GitApply} allows (new objects, ref updates that lose no commit, HEAD, the index).
 * What a sandbox writes to the git dir's config, hooks, {@code commondir} or anything
 * else never reaches the host. Its lower layer is the run's own copy of the git dir, with
 * the object stores as overlays of the host's live directories (launcher/src/git_snapshot.c,
 * which makes the copy in memory of the sandbox's own and says why a copy).
 *
 * <p>It needs the launcher (the first program mounts it), a kernel that lets a user
 * namespace mount an overlay (5.11 and later), and a run outside any sandbox (a nested run
 * sees its outer run's view already). Otherwise, or with {@code AGENT_SANDBOX_GIT_VIEW=off},
 * the git dir is protected path by path as the {@code @git} preset says (its config and
 * hooks read-only), and the check after the run looks at what a sandbox left there.
 */
public final class GitViews {
    private GitViews() {}

    /** At most this many views in one run (GIT_VIEWS_MAX in guard.h). */
    public static final int MAX = 64;

    /** At most this many overlays in what the first program mounts (GIT_VIEWS_MAX in guard.h). */
    public static final int MAX_RECORDS = 512;

    /** The kind of a git dir's record among the views the first program mounts (VIEW_GIT in guard.h). */
    public static final char KIND = 'g';

    /** The variable that turns the view off ({@code off}). */
    public static final String OFF_VARIABLE = "AGENT_SANDBOX_GIT_VIEW";

    /** {@link #of(Environment, Optional, GitDirs, boolean, List)}, finding the nested git dirs. */
    public static List<Path> of(Environment env, Optional<GitLayout> git, boolean nested, List<String> notes) {
        return of(env, git, null, nested, notes);
    }

    /**
     * The git dirs a run in {@code env} sees through a view: the repository's common dir,
     * then the git dir of every repository nested in its work tree that the host's git
     * enters from the project (at a gitlink, a {@code .gitmodules} path, see {@link GitDirs})
     * or that an IDE finds right below it; none when the view is not available (then {@code notes}
     * says why).
     *
     * @param found the git dirs found for the run's rules, or null to find them
     */
    public static List<Path> of(Environment env, Optional<GitLayout> git, GitDirs found, boolean nested,
            List<String> notes) {
        return of(env, git, found, nested, notes, null, "");
    }

    /**
     * {@link #of(Environment, Optional, GitDirs, boolean, List)}, where no git dir that another
     * run of the user's in {@code runs} (its runs dir; null: none looked at) can write without a
     * view gets one ({@link agentsandbox.core.run.OtherRuns}): such a run (one that made the
     * repository, or one without views) could swap a directory there for a link while this
     * run's host side writes what it applies. {@code self} is this run's name there.
     */
    public static List<Path> of(Environment env, Optional<GitLayout> git, GitDirs found, boolean nested,
            List<String> notes, Path runs, String self) {
        return of(env, git, found, notes, look(env, git, nested, runs, self));
    }

    /**
     * What the views of a run need to know besides its git dirs: why there is none (null when
     * there can be), the user's other runs, and the repositories right below the work tree.
     * None of it depends on the git dirs, so a plan looks while its second thread still finds
     * those ({@link agentsandbox.core.run.Preparation}).
     */
    public record Look(String unavailable, agentsandbox.core.run.OtherRuns others, List<Path> below,
            java.util.Set<Path> madeBelow) {
        /** A look that found no repository a sandbox made among those below. */
        public Look(String unavailable, agentsandbox.core.run.OtherRuns others, List<Path> below) {
            this(unavailable, others, below, java.util.Set.of());
        }
    }

    /**
     * The {@link Look} for a run in {@code env}, where {@code runs} is the user's runs dir
     * (null: no other run looked at) and {@code self} this run's name there.
     */
    public static Look look(Environment env, Optional<GitLayout> git, boolean nested, Path runs, String self) {
        if (git.isEmpty()) {
            return new Look("no repository", agentsandbox.core.run.OtherRuns.NONE, List.of());
        }
        String why = unavailable(env, nested);
        agentsandbox.core.run.OtherRuns others = why != null || runs == null ? agentsandbox.core.run.OtherRuns.NONE
                : agentsandbox.core.run.OtherRuns.now(runs, self);
        // the repositories right below the project, tracked or not (an ignored clone): the
        // user's git or an IDE runs in them as readily
        List<Path> below = why != null ? List.of() : GitDirs.reposBelow(git.get().workTree());
        // which of them a sandbox made matters only when they are more than the views
        java.util.Set<Path> made = new java.util.HashSet<>();
        if (runs != null && runs.getParent() != null && below.size() + 1 > MAX) {
            for (Path repo : below) {
                if (MadeRepositories.made(runs.getParent(), repo)) {
                    made.add(repo);
                }
            }
        }
        return new Look(why, others, below, made);
    }

    /** {@link #of(Environment, Optional, GitDirs, boolean, List, Path, String)} with what {@code look} found. */
    public static List<Path> of(Environment env, Optional<GitLayout> git, GitDirs found, List<String> notes,
            Look look) {
        if (git.isEmpty()) {
            return List.of();
        }
        String why = look.unavailable();
        Path common = git.get().commonDir();
        agentsandbox.core.run.OtherRuns others = look.others();
        String writer = why != null ? null : others.writerOf(common, false);
        if (writer != null) {
            why = "another sandbox running now (" + writer + ") can write it without a view of its own";
        }
        if (why != null) {
            notes.add("git: no copy-on-write view of " + common + " (" + why
                    + "); its config and hooks are protected path by path");
            return List.of();
        }
        notes.add("git: " + common + " is a copy-on-write view inside; the host takes from it new objects, ref"
                + " updates that lose no commit, HEAD and the index, nothing else");
        List<Path> out = new ArrayList<>();
        out.add(common);
        GitDirs dirs = found != null ? found : GitDirs.find(env.workDir(), git, env.home());
        // The repositories right below the project first (where your git and IDE work: a clone
        // of yours there loses no history to a sandbox), oldest first by the birth time of their
        // git dirs, which no process sets back: an earlier run that made many repositories, there
        // or named by a .gitmodules it wrote, cannot push yours out of the views. A directory
        // renamed into a repository keeps its birth time, so those an earlier run's watch saw
        // a sandbox make come after all others, the rest included (MadeRepositories).
        List<Path> below = new ArrayList<>();
        List<Path> made = new ArrayList<>();
        List<Long> births = new ArrayList<>();
        for (Path repo : look.below()) {
            if (look.madeBelow().contains(repo)) {
                made.add(repo.resolve(".git"));
                continue;
            }
            // sorted as they come (no comparator: a lambda would be spun up at the start)
            long b = born(repo.resolve(".git"));
            int at = births.size();
            while (at > 0 && births.get(at - 1) > b) {
                at--;
            }
            births.add(at, b);
            below.add(at, repo.resolve(".git"));
        }
        java.util.Set<Path> candidates = new java.util.LinkedHashSet<>(below);
        for (Path d : dirs.dirs) {
            if (!made.contains(d)) {
                candidates.add(d);
            }
        }
        candidates.addAll(made);
        for (Path d : candidates) {
            if (!viewable(d, out, git.get().workTree(), dirs)) {
                continue;
            }
            String other = others.writerOf(d, false);
            if (other != null) {
                notes.add("git: " + d + ", a nested repository's git dir, has no view: another sandbox running now ("
                        + other + ") made it or can write it without one; its config and hooks are protected path"
                        + " by path");
                continue;
            }
            if (out.size() == MAX) {
                notes.add("git: more than " + MAX + " git dirs: " + d + " and the rest have no view; their"
                        + " config and hooks are protected path by path");
                break;
            }
            out.add(d);
            notes.add("git: " + d + ", a nested repository's git dir, is a copy-on-write view inside too");
        }
        return List.copyOf(out);
    }

    /** When {@code p} was made (its birth time; its change time where the file system keeps none), in ms. */
    private static long born(Path p) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(p,
                    java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            return a.creationTime().toMillis();
        } catch (java.io.IOException | RuntimeException e) {
            return Long.MAX_VALUE;
        }
    }

    /**
     * Whether nested git dir {@code d} gets a view of its own: a real directory (not
     * reached through a link) in the project's work tree, not within a view already (a
     * submodule's git dir under {@code modules/} is part of the common dir's), and not a
     * common dir a planted {@code commondir} names.
     */
    private static boolean viewable(Path d, List<Path> views, Path workTree, GitDirs dirs) {
        if (workTree == null || !d.startsWith(workTree) || dirs.forged(d)) {
            return false;
        }
        for (Path v : views) {
            if (d.startsWith(v) || v.startsWith(d)) {
                return false;
            }
        }
        Path real = agentsandbox.core.rules.Resolver.realPath(d);
        return real != null && real.equals(d) && Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                && Files.isRegularFile(d.resolve("HEAD"), java.nio.file.LinkOption.NOFOLLOW_LINKS);
    }

    /** Why there is no view in {@code env}; null when there is one. */
    public static String unavailable(Environment env, boolean nested) {
        if ("off".equals(env.env(OFF_VARIABLE).orElse(""))) {
            return OFF_VARIABLE + "=off";
        }
        if (nested) {
            return "inside another sandbox, whose view this run sees";
        }
        return overlaysUnavailable(env);
    }

    /**
     * Why the sandbox's first program cannot mount copy-on-write views in {@code env} (the
     * git dir's and the home's); null when it can.
     */
    public static String overlaysUnavailable(Environment env) {
        if (env.installation() == null) {
            return "no launcher to mount it: the library used without the installed app";
        }
        String release = kernelRelease(env);
        if (!atLeast(release, 5, 11)) {
            return "the kernel " + (release == null ? "(unknown release)" : release)
                    + " lets no user namespace mount an overlay before 5.11";
        }
        return null;
    }

    private static String kernelRelease(Environment env) {
        try {
            return Files.readString(env.procSys().resolve("kernel/osrelease")).strip();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Whether a kernel release such as {@code 6.1.0-13-amd64} is at least major.minor. */
    static boolean atLeast(String release, int major, int minor) {
        if (release == null) {
            return false;
        }
        int dot = release.indexOf('.');
        int end = dot + 1;
        while (end < release.length() && Character.isDigit(release.charAt(end))) {
            end++;
        }
        try {
            int a = Integer.parseInt(release.substring(0, dot < 0 ? release.length() : dot));
            int b = dot < 0 || end == dot + 1 ? 0 : Integer.parseInt(release.substring(dot + 1, end));
            return a > major || (a == major && b >= minor);
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
