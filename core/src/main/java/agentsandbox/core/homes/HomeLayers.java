// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import agentsandbox.core.Environment;
import agentsandbox.core.rules.ToolCatalogue;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the copy-on-write layers of the home are kept: {@code $XDG_DATA_HOME/agent-sandbox/homes}
 * ({@code ~/.local/share/agent-sandbox/homes}), owner-only.
 *
 * <ul>
 *   <li>{@code layers/NAME}: what sandboxes changed in one granted directory of the home,
 *       as an overlay's upper dir (whiteouts and opaque directories included). {@code NAME}
 *       is the directory's path in the home with {@code %} and {@code /} escaped
 *       ({@code .local%2Fshare%2Fuv}).</li>
 *   <li>{@code runs/RUN/NAME/upper} and {@code work}: one running sandbox's own changes,
 *       merged into the layer when it ends ({@link LayerMerge}).</li>
 *   <li>{@code lock}: held while a run's changes are merged, or the user moves or discards some.</li>
 * </ul>
 *
 * <p>The layers are per user, not per project: an agent's login, settings and MCP servers,
 * and a toolchain's downloads, are the user's, and a sandbox of every project should find
 * them, as the agent outside finds its own. What one project's sandbox plants there reaches
 * the next project's sandbox, never a program outside (see the README, "Copy-on-write homes").
 */
public final class HomeLayers {
    private HomeLayers() {}

    /** The variable that turns the home's copy-on-write views off ({@code off}): the fallback. */
    public static final String OFF_VARIABLE = "AGENT_SANDBOX_HOME_VIEW";

    /** The store for this environment; null without a home. */
    public static Path root(Environment env) {
        String xdg = env.env("XDG_DATA_HOME").orElse("");
        if (xdg.startsWith("/")) {
            return Path.of(xdg, "agent-sandbox", "homes");
        }
        if (env.home() == null || !Files.isDirectory(env.home())) {
            return null;
        }
        return env.home().resolve(".local/share/agent-sandbox/homes");
    }

    public static Path layers(Path root) {
        return root.resolve("layers");
    }

    public static Path runs(Path root) {
        return root.resolve("runs");
    }

    public static Path lock(Path root) {
        return root.resolve("lock");
    }

    /** The layer of the home directory {@code rel} (home-relative, as the presets name it). */
    public static Path layer(Path root, String rel) {
        return layers(root).resolve(name(rel));
    }

    /** Whether {@code rel} (relative to the home) is a login file sandboxes keep their own of. */
    public static boolean ownLogin(String rel) {
        return ToolCatalogue.OWN_IN_SANDBOXES.contains(rel);
    }

    /**
     * In a new (or emptied) layer of {@code rel}: a whiteout (what an overlay takes for a
     * deleted file) for each login file that sandboxes keep their own of
     * ({@link ToolCatalogue#OWN_IN_SANDBOXES}) and that is not there yet, so that no sandbox
     * ever holds the host's. Best effort: without it, the sandbox sees the host's file until
     * it saves its own.
     */
    public static void hideOwnLogins(Path layer, String rel) {
        for (String own : ToolCatalogue.OWN_IN_SANDBOXES) {
            if (own.startsWith(rel + "/") && own.indexOf('/', rel.length() + 1) < 0) {
                Path whiteout = layer.resolve(own.substring(rel.length() + 1));
                // from the system's directories only (see HostPrograms)
                Path mknod = agentsandbox.core.host.HostPrograms.find((String) null, "mknod",
                        agentsandbox.core.host.HostPrograms.processUid());
                if (mknod == null) {
                    return; // the files show until the sandbox saves its own
                }
                try {
                    // the kernel lets any user make a whiteout (a character device 0/0); Java cannot
                    Process p = new ProcessBuilder(mknod.toString(), whiteout.toString(), "c", "0", "0")
                            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                    p.waitFor();
                } catch (java.io.IOException e) {
                    // no mknod: the file shows until the sandbox saves its own
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Why the layers cannot live at {@code root}: its file system keeps no user extended
     * attributes, which the overlay marks deletions and replaced directories with (NFS, for
     * one). Null when they can, or when {@code root} does not exist yet (its parent is tried).
     */
    public static String unusable(Path root) {
        Path dir = root;
        while (dir != null && !Files.isDirectory(dir)) {
            dir = dir.getParent();
        }
        if (dir == null) {
            return null;
        }
        Path probe = dir.resolve(".agent-sandbox-xattr-" + ProcessHandle.current().pid());
        try {
            Files.deleteIfExists(probe);
            Files.createFile(probe);
            java.nio.file.attribute.UserDefinedFileAttributeView v = Files.getFileAttributeView(probe,
                    java.nio.file.attribute.UserDefinedFileAttributeView.class);
            v.write("agent-sandbox.probe", java.nio.ByteBuffer.wrap(new byte[] {'y'}));
            return null;
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return "the file system of " + dir + " keeps no user extended attributes, which the overlay needs";
        } finally {
            try {
                Files.deleteIfExists(probe);
            } catch (java.io.IOException e) {
                // left: a stray empty file
            }
        }
    }

    /** The name of the layer of {@code rel}. */
    public static String name(String rel) {
        return rel.replace("%", "%25").replace("/", "%2F");
    }

    /** The home-relative directory a layer's name stands for; null for a name no layer has. */
    public static String rel(String name) {
        String rel = name.replace("%2F", "/").replace("%25", "%");
        return rel.isEmpty() || !name(rel).equals(name) || rel.startsWith("/") || rel.contains("..") ? null : rel;
    }
}
