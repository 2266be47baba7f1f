// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.Sandbox;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the sandbox's first program checks before the command runs: each mount of the
 * plan that shows a host file, at the path where it must be, showing the file that was
 * there when the plan was made.
 *
 * <p>bwrap mounts by path and follows symbolic links on both sides, so a concurrent
 * process (another sandbox working in the same project) that swaps a path for a link
 * between the check and the mount would get another file shown, or the planned file
 * shown at another path (a writable working directory mounted over the host's
 * {@code ~/.config}). The launcher finds every source again through a lookup that
 * follows no link at all just before bwrap starts, and records its identity; the first
 * program finds every target the same way and stops the run unless it is the root of a
 * mount showing that very file (read-only where planned so, an empty file system of the
 * sandbox's own where a directory is hidden). See the launcher's {@code mount_check.h};
 * the record kinds are those of {@code guard.h}.
 */
public final class MountChecks {
    private MountChecks() {}

    public static final char BIND = 'b';
    public static final char READ_ONLY = 'r';
    public static final char EMPTY_DIR = 'e';
    public static final char WORKDIR = 'w';
    /** What the launcher's message says when a mount is not what was checked (the same in mount_check.c). */
    public static final String CHANGED = "changed while the sandbox was being set up";

    /**
     * The records for these mounts, in their order (a mount hides the ones at or below its
     * path that came before it), then the working directory when one is given.
     */
    public static byte[] render(List<Mount> mounts, Path workDir) {
        // by target, so that a later mount drops the records of what it covers; the
        // comparison of the path's text puts a directory's descendants right after it
        TreeMap<String, String[]> byTarget = new TreeMap<>();
        for (Mount m : mounts) {
            if (m.target().startsWith(Inside.RUNTIME)) {
                continue; // the sandbox's own runtime: nothing of the host's is reached there by path
            }
            String target = m.target().toString();
            String[] record = switch (m.kind()) {
                case ROOT, DEVICES, PROCESSES, REMOUNT_READ_ONLY -> null;
                case FRESH_DIR, PRIVATE_DIR, BOUNDED_TMP, SEARCH_ONLY_DIR, SYMLINK -> new String[0];
                case READ_WRITE -> new String[] {String.valueOf(BIND), m.source().toString(), target};
                case READ_ONLY, UNREADABLE_FILE -> new String[] {String.valueOf(READ_ONLY), m.source().toString(), target};
                case NULL_DEVICE -> new String[] {String.valueOf(READ_ONLY), "/dev/null", target};
                case EMPTY_DIR -> new String[] {String.valueOf(EMPTY_DIR), "", target};
            };
            if (record == null) {
                continue;
            }
            byTarget.remove(target);
            String below = target.equals("/") ? "/" : target + "/";
            byTarget.subMap(below, true, below.substring(0, below.length() - 1) + '0', false).clear();
            if (record.length > 0) {
                byTarget.put(target, record);
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Map.Entry<String, String[]> e : byTarget.entrySet()) {
            for (String field : e.getValue()) {
                out.writeBytes(field.getBytes(StandardCharsets.UTF_8));
                out.write(0);
            }
        }
        if (workDir != null) {
            String w = workDir.toString();
            for (String field : new String[] {String.valueOf(WORKDIR), w, w}) {
                out.writeBytes(field.getBytes(StandardCharsets.UTF_8));
                out.write(0);
            }
        }
        return out.toByteArray();
    }
}
