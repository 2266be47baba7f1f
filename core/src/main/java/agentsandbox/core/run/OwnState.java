// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.Environment;
import agentsandbox.core.plan.Mount;
import agentsandbox.core.plan.Pins;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.SandboxException;
import agentsandbox.core.aftercheck.StateWatch;
import agentsandbox.core.homes.HomeLayers;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;

/**
 * What agent-sandbox itself obeys on the host, and how no sandbox can forge it: its state
 * directory (the trust store, every run's directory), the global config's directory and
 * the directory of its runs' sockets.
 *
 * <p>Every sandbox sees them read-only or empty, and the directories on the way to them
 * are pinned ({@link Pins}), so that no sandbox can rename one and put a directory of its
 * own making in its place, which the next run, or one started meanwhile, would read. A
 * symbolic link on the way cannot be pinned (nothing can be mounted on a link): where
 * one sits in a directory the sandbox could write, the run is refused. The global
 * config's directory is created, owner-only, before the first run, so that no sandbox
 * can be the one to create it.
 */
public final class OwnState {
    private OwnState() {}

    /** The directories later runs obey, as the host finds them (not resolved). */
    public static List<Path> directories(Environment env) {
        List<Path> out = new ArrayList<>();
        out.add(RunLayout.stateDir(env));
        Path global = StateWatch.globalConfigDir(env);
        if (global != null) {
            out.add(global);
        }
        out.add(RunLayout.socketsBase(env));
        Path homeLayers = HomeLayers.root(env);
        if (homeLayers != null) {
            out.add(homeLayers);
        }
        return out;
    }

    /**
     * Creates the global config's directory and the store of the home's layers, owner-only,
     * when they are missing (outside any sandbox).
     */
    public static void create(Environment env) {
        createOwnerOnly(env, HomeLayers.root(env));
        createOwnerOnly(env, StateWatch.globalConfigDir(env));
    }

    private static void createOwnerOnly(Environment env, Path global) {
        if (global == null || Files.exists(global, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                || env.home() == null || !Files.isDirectory(env.home())) {
            return;
        }
        try {
            for (Path p : missingFrom(global)) {
                try {
                    Files.createDirectory(p, PosixFilePermissions.asFileAttribute(
                            PosixFilePermissions.fromString("rwx------")));
                } catch (FileAlreadyExistsException e) {
                    // made meanwhile by another run: as good
                }
            }
        } catch (IOException e) {
            // the same rights as a sandbox of this user: what this cannot create, no sandbox can
        }
    }

    private static List<Path> missingFrom(Path dir) {
        List<Path> missing = new ArrayList<>();
        for (Path p = dir; p != null && !Files.exists(p); p = p.getParent()) {
            missing.add(0, p);
        }
        return missing;
    }

    /**
     * Refuses a symbolic link on the way to one of agent-sandbox's own directories that sits
     * in a directory the sandbox can write: nothing can be mounted on a link, so no pin can
     * keep a sandbox from pointing it elsewhere.
     *
     * @throws SandboxException naming the link and the fix
     */
    public static void refuseLinks(Environment env, List<Mount> mounts) {
        for (Path dir : directories(env)) {
            refuseLinks(dir, mounts);
        }
    }

    private static void refuseLinks(Path dir, List<Mount> mounts) {
        for (int i = 1; i <= dir.getNameCount(); i++) {
            Path p = dir.getRoot().resolve(dir.subpath(0, i));
            if (!Files.isSymbolicLink(p)) {
                continue;
            }
            Path parent = Resolver.realPath(p.getParent());
            if (parent != null && Pins.writable(parent, mounts)) {
                throw new SandboxException(p + " is a symbolic link in a directory this sandbox can write, and"
                        + " agent-sandbox's own " + dir + " lies behind it: a sandbox could point it elsewhere, and"
                        + " later runs would obey what it put there",
                        "grant a narrower path than " + parent + ", or replace the link " + p
                                + " by the directory it points to");
            }
        }
    }

}
