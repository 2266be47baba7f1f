// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import agentsandbox.core.Environment;
import agentsandbox.core.git.GitViews;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Candidate;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.Specificity;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Which directories of the home a sandbox sees through a copy-on-write view: every
 * directory that {@code @caches} or {@code @agents} makes writable (and no rule of the
 * user's own decides otherwise). The sandbox sees the host's directory and changes it, but
 * its changes land in the user's layer of that directory ({@link HomeLayers}), which later
 * sandboxes see and no program outside a sandbox ever reads. The host's directory is
 * mounted read-only underneath, so where a view cannot be mounted the sandbox gets a
 * read-only directory, never the host's one writable.
 *
 * <p>It needs what the git views need (the launcher, a kernel whose user namespaces mount
 * overlays, a run outside any sandbox) and is off with {@code AGENT_SANDBOX_HOME_VIEW=off};
 * then the grants are the host's directories, writable, with their code and settings
 * protected path by path (the fallback).
 */
public final class HomeViews {
    private HomeViews() {}

    /** The kind of a home directory's record among the views the first program mounts (VIEW_HOME in guard.h). */
    public static final char KIND = 'h';

    /**
     * One view.
     *
     * @param target the directory as the sandbox sees it (symlinks resolved): the overlay's mount point
     * @param rel    the directory as the preset names it in the home: the layer's name
     */
    public record View(Path target, String rel) {}

    /** The presets whose grants are seen through views. */
    public static boolean granting(Origin o) {
        return o.layer() == Layer.PRESET && (o.source().equals("@caches") || o.source().equals("@agents"));
    }

    /** What an overlay option cannot hold. */
    private static boolean mountable(String path) {
        return path.indexOf(',') < 0 && path.indexOf(':') < 0 && path.indexOf('\\') < 0;
    }

    /**
     * Chooses the views among {@code decisions} (the directories in {@code created} are made
     * before the sandbox starts), and changes those decisions: a viewed
     * directory is read-only from the host (the view is mounted over it), and the read-only
     * parts the presets keep inside it (installed programs, settings the host obeys) are
     * left to the view, whose changes no host program sees. What the presets hide inside it
     * (credential files) and the user's own rules stay, mounted on top of the view.
     */
    public static List<View> choose(Environment env, List<Specificity.Decision> decisions, boolean nested,
            java.util.Set<Path> created, List<String> notes) {
        Path home = env.home();
        Path root = HomeLayers.root(env);
        List<Integer> granted = new ArrayList<>();
        for (int i = 0; i < decisions.size(); i++) {
            Candidate w = decisions.get(i).winner();
            if (w.access() == Access.RW && granting(w.origin())
                    && (created.contains(w.path()) || Files.isDirectory(w.path(), LinkOption.NOFOLLOW_LINKS))) {
                granted.add(i);
            }
        }
        if (home == null || root == null || granted.isEmpty()) {
            return List.of();
        }
        String why = unavailable(env, nested);
        if (why == null && !mountable(root.toString())) {
            why = "the path of its layers " + root + " has a character an overlay cannot take";
        }
        if (why != null) {
            notes.add("home: no copy-on-write views (" + why + "); what @caches and @agents grant is the host's,"
                    + " writable, with code and settings protected path by path");
            return List.of();
        }
        List<View> views = new ArrayList<>();
        for (int i : granted) {
            Candidate w = decisions.get(i).winner();
            String rel = relative(home, w.rule());
            if (rel == null || !mountable(w.path().toString()) || !mountable(rel)) {
                notes.add("home: no copy-on-write view of " + w.path() + " (its path has a character an overlay"
                        + " cannot take, or it lies outside the home); it is the host's, writable");
                continue;
            }
            views.add(new View(w.path(), rel));
            Origin viewed = new Origin(Layer.PRESET, w.origin().source() + ", copy-on-write");
            decisions.set(i, new Specificity.Decision(new Candidate(w.path(), w.source(), Access.RO, viewed, w.exact(),
                    w.rule(), Boolean.TRUE), decisions.get(i).overridden()));
            notes.add("home: " + w.path() + " is a copy-on-write view inside; the sandbox's changes go to "
                    + HomeLayers.layer(root, rel) + ", which later sandboxes see and no host program reads");
        }
        for (int i = decisions.size() - 1; i >= 0; i--) {
            Candidate c = decisions.get(i).winner();
            if (!granting(c.origin()) || views.contains(new View(c.path(), relative(home, c.rule())))) {
                continue;
            }
            if (c.access() == Access.RO && below(c.path(), views)) {
                decisions.remove(i); // the view's to keep from the host
            } else if (c.access() == Access.RW && below(c.path(), views)) {
                // a granted file that resolves into a view (~/.claude.json, a link to
                // ~/.claude/.claude.json): the view has it; a bind of the host's file would
                // be put back on top of the view, writable
                decisions.remove(i);
            } else if (c.access() == Access.RW && !Files.isDirectory(c.path(), LinkOption.NOFOLLOW_LINKS)) {
                Origin ro = new Origin(Layer.PRESET, c.origin().source() + ", read-only: a single file has no view");
                decisions.set(i, new Specificity.Decision(new Candidate(c.path(), c.source(), Access.RO, ro, c.exact(),
                        c.rule(), Boolean.FALSE), decisions.get(i).overridden()));
                notes.add("home: " + c.path() + " is read-only: a single file has no copy-on-write view, and the"
                        + " host's programs read it");
            }
        }
        return views;
    }

    private static boolean below(Path p, List<View> views) {
        for (View v : views) {
            if (p.startsWith(v.target()) && !p.equals(v.target())) {
                return true;
            }
        }
        return false;
    }

    /** The home-relative path a preset's rule names; null outside the home. */
    static String relative(Path home, String written) {
        Path p = written.startsWith("~/") ? home.resolve(written.substring(2)) : Path.of(written);
        if (!p.isAbsolute()) {
            return null;
        }
        p = p.normalize();
        return p.startsWith(home) && !p.equals(home) ? home.relativize(p).toString() : null;
    }

    /** Why no home directory is seen through a view in {@code env}; null when they are. */
    public static String unavailable(Environment env, boolean nested) {
        if ("off".equals(env.env(HomeLayers.OFF_VARIABLE).orElse(""))) {
            return HomeLayers.OFF_VARIABLE + "=off";
        }
        if (nested) {
            return "inside another sandbox, whose views this run sees";
        }
        return GitViews.overlaysUnavailable(env);
    }
}
