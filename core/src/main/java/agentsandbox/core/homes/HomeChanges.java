// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;
import agentsandbox.core.rules.ToolCatalogue;

import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What sandboxes changed over the host's directories of the home, as the user sees it
 * ({@code agent-sandbox changes}): the list, each change against the host's file, and the
 * two ways out of a layer: taken to the host (after review), or discarded. Both run outside
 * any sandbox only; no sandbox reaches the layers.
 */
public final class HomeChanges {
    private HomeChanges() {}

    /** How a path differs: the sandboxes added it, changed it, or deleted it. */
    public enum Kind { ADDED, CHANGED, DELETED }

    /**
     * One change.
     *
     * @param rel      the path in the home ({@code .claude/settings.json})
     * @param kind     what sandboxes did to it
     * @param size     its size in the layer, in bytes (a directory's: everything below it)
     * @param risky    whether it is code or settings that a program would run or obey
     * @param directory whether it is a whole directory the sandboxes made or replaced
     */
    public record Change(String rel, Kind kind, long size, boolean risky, boolean directory, String linkTarget) {}

    /** Every change in the layers of {@code env}'s user, in path order. */
    public static List<Change> list(Environment env) {
        Path root = root(env);
        List<Change> out = new ArrayList<>();
        for (String rel : layerNames(root)) {
            walk(HomeLayers.layer(root, rel), env.home().resolve(rel), rel, out);
        }
        out.sort((a, b) -> a.rel().compareTo(b.rel()));
        return out;
    }

    private static Path root(Environment env) {
        Path root = HomeLayers.root(env);
        if (root == null || env.home() == null) {
            throw new SandboxException("no home directory, so no layers of it", "set HOME to your home directory");
        }
        return root;
    }

    private static List<String> layerNames(Path root) {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(HomeLayers.layers(root))) {
            for (Path p : ds) {
                String rel = HomeLayers.rel(p.getFileName().toString());
                if (rel != null && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    out.add(rel);
                }
            }
        } catch (IOException e) {
            // no layers yet: no changes
        }
        out.sort(null);
        return out;
    }

    private static void walk(Path layer, Path host, String rel, List<Change> out) {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(layer)) {
            for (Path p : ds) {
                entries.add(p);
            }
        } catch (IOException e) {
            return;
        }
        for (Path l : entries) {
            String name = l.getFileName().toString();
            Path h = host.resolve(name);
            String r = rel + "/" + name;
            if (HomeLayers.ownLogin(r)) {
                continue; // the sandboxes' own login, or its hiding of the host's: never a change
            }
            boolean onHost = Files.exists(h, LinkOption.NOFOLLOW_LINKS);
            if (LayerMerge.whiteout(l)) {
                if (onHost) {
                    out.add(new Change(r, Kind.DELETED, 0, false, Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS),
                            null));
                }
            } else if (Files.isDirectory(l, LinkOption.NOFOLLOW_LINKS)) {
                if (!LayerMerge.opaque(l) && Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
                    walk(l, h, r, out);
                } else {
                    out.add(new Change(r, onHost ? Kind.CHANGED : Kind.ADDED, size(l), risky(l, r), true, null));
                }
            } else if (!onHost || !same(l, h)) {
                out.add(new Change(r, onHost ? Kind.CHANGED : Kind.ADDED, size(l), risky(l, r), false, linkTarget(l)));
            }
        }
    }

    /** Where the symbolic link {@code p} points, as written; null when {@code p} is no link. */
    public static String linkTarget(Path p) {
        try {
            return Files.isSymbolicLink(p) ? Files.readSymbolicLink(p).toString() : null;
        } catch (IOException e) {
            return "(unreadable)";
        }
    }

    /** Whether two files (or links) hold the same: an overlay copies a file up when it is opened for writing. */
    private static boolean same(Path a, Path b) {
        try {
            if (Files.isSymbolicLink(a) || Files.isSymbolicLink(b)) {
                return Files.isSymbolicLink(a) && Files.isSymbolicLink(b)
                        && Files.readSymbolicLink(a).equals(Files.readSymbolicLink(b));
            }
            return Files.isRegularFile(b, LinkOption.NOFOLLOW_LINKS) && Files.size(a) == Files.size(b)
                    && Files.mismatch(a, b) < 0
                    && Files.getPosixFilePermissions(a, LinkOption.NOFOLLOW_LINKS)
                            .equals(Files.getPosixFilePermissions(b, LinkOption.NOFOLLOW_LINKS));
        } catch (IOException e) {
            return false;
        }
    }

    private static long size(Path p) {
        try (var s = Files.walk(p)) {
            return s.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)).mapToLong(f -> {
                try {
                    return Files.size(f);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException | java.io.UncheckedIOException e) {
            return 0;
        }
    }

    /** File name endings of scripts and of the settings files tools obey. */
    private static final List<String> RISKY_ENDINGS = List.of(".sh", ".bash", ".zsh", ".fish", ".js", ".mjs", ".cjs",
            ".ts", ".py", ".rb", ".pl", ".jar", ".so", ".json", ".jsonc", ".toml", ".yaml", ".yml", ".xml",
            ".properties", ".gradle", ".kts", ".sbt", ".ini", ".cfg", ".conf", ".env", ".rc");

    /**
     * Whether a program would run or obey it: an executable file, anything under a {@code bin}
     * or {@code hooks} directory, a script or settings file by its name, a directory holding
     * any of those, or a path the fallback keeps read-only.
     */
    static boolean risky(Path layerPath, String rel) {
        try (var s = Files.walk(layerPath)) {
            return s.anyMatch(f -> riskyFile(f, rel + layerPath.relativize(f).toString()));
        } catch (IOException | java.io.UncheckedIOException e) {
            return true;
        }
    }

    private static boolean riskyFile(Path f, String rel) {
        String name = f.getFileName().toString().toLowerCase(Locale.ROOT);
        if (("/" + rel + "/").contains("/bin/") || ("/" + rel + "/").contains("/hooks/")) {
            return true;
        }
        for (String e : RISKY_ENDINGS) {
            if (name.endsWith(e)) {
                return true;
            }
        }
        for (ToolCatalogue.Tool t : ToolCatalogue.TOOLS) {
            for (String ro : t.readOnly()) {
                if (rel.startsWith(ToolCatalogue.strip(ro))) {
                    return true;
                }
            }
        }
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(f, LinkOption.NOFOLLOW_LINKS);
            return Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS) && (p.contains(PosixFilePermission.OWNER_EXECUTE)
                    || p.contains(PosixFilePermission.GROUP_EXECUTE) || p.contains(PosixFilePermission.OTHERS_EXECUTE));
        } catch (IOException | UnsupportedOperationException e) {
            return true;
        }
    }

    /** Where a path the user names is: its layer's root name and the rest. */
    public record Located(String layerRel, Path layerPath, Path hostPath, String rel) {}

    /**
     * The layer entry of {@code path} (as the user typed it: absolute, {@code ~/…}, or relative
     * to the home).
     *
     * @throws SandboxException when no layer holds it
     */
    public static Located locate(Environment env, String path) {
        Path root = root(env);
        Path home = env.home();
        Path p = path.startsWith("~/") ? home.resolve(path.substring(2))
                : Path.of(path).isAbsolute() ? Path.of(path) : home.resolve(path);
        p = p.normalize();
        if (!p.startsWith(home) || p.equals(home)) {
            throw new SandboxException("'" + path + "' is not in your home, where the layers are",
                    "name a path that agent-sandbox changes lists");
        }
        String rel = home.relativize(p).toString();
        for (String layer : layerNames(root)) {
            if (rel.equals(layer) || rel.startsWith(layer + "/")) {
                Path inLayer = rel.equals(layer) ? HomeLayers.layer(root, layer)
                        : HomeLayers.layer(root, layer).resolve(rel.substring(layer.length() + 1));
                if (!Files.exists(inLayer, LinkOption.NOFOLLOW_LINKS)) {
                    break;
                }
                return new Located(layer, inLayer, p, rel);
            }
        }
        throw new SandboxException("no sandbox changed ~/" + rel, "agent-sandbox changes lists what sandboxes changed");
    }

    /**
     * Brings the layer's version of {@code path} to the host, then removes it from the layer:
     * a file replaces the host's in one rename, a directory the sandboxes made or replaced
     * replaces the host's, and a deletion deletes the host's.
     *
     * @return what was done, one line per path
     */
    public static List<String> take(Environment env, String path) {
        refuseInside();
        Located at = locate(env, path);
        FileLock lock = lock(env);
        try {
            List<String> done = new ArrayList<>();
            takeEntry(at.layerPath(), at.hostPath(), at.rel(), done);
            return done;
        } catch (IOException e) {
            throw new SandboxException("cannot bring ~/" + at.rel() + " to the host: " + e.getMessage(),
                    "check the permissions and free space of " + at.hostPath().getParent());
        } finally {
            LayerMerge.unlock(lock);
        }
    }

    /** Removes {@code p}, a file or a whole directory, never following a link. */
    private static void removeEntry(Path p) throws IOException {
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            LayerMerge.remove(p);
        } else {
            Files.delete(p);
        }
    }

    private static void takeEntry(Path l, Path h, String rel, List<String> done) throws IOException {
        if (HomeLayers.ownLogin(rel)) {
            return; // stays the sandboxes' own: never the host's login, never its deletion
        }
        if (LayerMerge.whiteout(l)) {
            if (Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                removeEntry(h);
                done.add("deleted ~/" + rel + " on the host");
            }
            Files.delete(l);
            return;
        }
        if (Files.isDirectory(l, LinkOption.NOFOLLOW_LINKS)) {
            boolean merge = !LayerMerge.opaque(l) && Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS);
            if (!merge) {
                if (Files.exists(h, LinkOption.NOFOLLOW_LINKS)) {
                    removeEntry(h);
                }
                Files.createDirectory(h);
                Files.setPosixFilePermissions(h, Files.getPosixFilePermissions(l, LinkOption.NOFOLLOW_LINKS));
            }
            List<Path> entries = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(l)) {
                for (Path p : ds) {
                    entries.add(p);
                }
            }
            for (Path e : entries) {
                String name = e.getFileName().toString();
                takeEntry(e, h.resolve(name), rel + "/" + name, done);
            }
            if (!l.equals(l.getRoot())) {
                LayerMerge.remove(l);
            }
            return;
        }
        Files.createDirectories(h.getParent());
        if (Files.isDirectory(h, LinkOption.NOFOLLOW_LINKS)) {
            LayerMerge.remove(h);
        }
        Path part = h.resolveSibling("." + h.getFileName() + ".agent-sandbox-" + ProcessHandle.current().pid());
        Files.deleteIfExists(part);
        Files.copy(l, part, LinkOption.NOFOLLOW_LINKS, StandardCopyOption.COPY_ATTRIBUTES);
        Files.move(part, h, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.delete(l);
        done.add("took ~/" + rel + " to the host");
    }

    /** Removes {@code path}'s changes from the layer: sandboxes see the host's again. */
    public static String discard(Environment env, String path) {
        refuseInside();
        Located at = locate(env, path);
        FileLock lock = lock(env);
        try {
            if (at.rel().equals(at.layerRel())) {
                emptyDirectory(at.layerPath());
            } else {
                LayerMerge.remove(at.layerPath());
            }
            if (Files.exists(at.layerPath(), LinkOption.NOFOLLOW_LINKS) && !at.rel().equals(at.layerRel())) {
                throw new SandboxException("cannot discard ~/" + at.rel() + " from its layer",
                        "check the permissions of " + at.layerPath());
            }
            // the host's own logins stay hidden from the next sandbox, as in a new layer
            HomeLayers.hideOwnLogins(HomeLayers.layer(root(env), at.layerRel()), at.layerRel());
            return "discarded the sandboxes' changes of ~/" + at.rel();
        } finally {
            LayerMerge.unlock(lock);
        }
    }

    /** Removes every change of every layer. */
    public static List<String> discardAll(Environment env) {
        refuseInside();
        Path root = root(env);
        FileLock lock = lock(env);
        try {
            List<String> out = new ArrayList<>();
            for (String rel : layerNames(root)) {
                emptyDirectory(HomeLayers.layer(root, rel));
                HomeLayers.hideOwnLogins(HomeLayers.layer(root, rel), rel);
                out.add("discarded the sandboxes' changes of ~/" + rel);
            }
            return out;
        } finally {
            LayerMerge.unlock(lock);
        }
    }

    private static void emptyDirectory(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                LayerMerge.remove(p);
            }
        } catch (IOException e) {
            throw new SandboxException("cannot empty " + dir + ": " + e.getMessage(), "check its permissions");
        }
    }

    private static FileLock lock(Environment env) {
        try {
            return LayerMerge.lock(root(env));
        } catch (IOException e) {
            throw new SandboxException("cannot lock the layers: " + e.getMessage(),
                    "check the permissions of " + HomeLayers.root(env));
        }
    }

    private static void refuseInside() {
        if (agentsandbox.core.plan.Inside.isInside()) {
            throw new SandboxException("the sandboxes' changes are moved outside any sandbox only",
                    "run agent-sandbox changes in a terminal of your own, outside the sandbox");
        }
    }
}
