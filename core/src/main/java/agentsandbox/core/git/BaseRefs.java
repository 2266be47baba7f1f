// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The refs a git view started from: the loose refs and {@code packed-refs} of the copy of
 * the git dir that is the view's lower layer, which git inside saw below its own changes.
 * The copy itself lives in memory of the sandbox's own (launcher/src/git_snapshot.c); the
 * sandbox's first program writes these two files beside the run's layer before the command
 * runs, where the command never reaches them (guard.h: GIT_BASE_REFS, GIT_BASE_PACKED_REFS).
 */
public final class BaseRefs {
    /** The loose refs: per ref its name, a NUL, its content, a NUL (GIT_BASE_REFS). */
    public static final String LOOSE = "base-refs";
    /** The copy's packed-refs (GIT_BASE_PACKED_REFS). */
    public static final String PACKED = "base-packed-refs";
    /** A loose ref's content is recorded up to this many bytes (GIT_BASE_REF_BYTES); a larger one is no object id. */
    public static final int REF_BYTES = 4096;
    /** The record of loose refs is read up to this size: the copy's own limit and the names. */
    private static final long MAX_LOOSE = (256L << 20) + 100_000L * 1024;

    /** None: a view that was never mounted, or a git dir that had no refs. */
    public static final BaseRefs NONE = new BaseRefs(null);

    private final Path layer;
    private Map<String, String> loose;

    private BaseRefs(Path layer) {
        this.layer = layer;
    }

    /** The refs the first program recorded in the view's layer dir {@code layer}. */
    public static BaseRefs in(Path layer) {
        return new BaseRefs(layer);
    }

    /** Its packed-refs, or a path that does not exist. */
    Path packedRefs() {
        return layer == null ? Path.of("/nonexistent/" + PACKED) : layer.resolve(PACKED);
    }

    /**
     * Whether the copy had a loose ref (a regular file) of this name, and its content as
     * text; null when it had none.
     */
    String loose(String ref) throws IOException {
        if (loose == null) {
            loose = read();
        }
        return loose.get(ref);
    }

    /** Every loose ref the copy had, with its content as text. */
    Map<String, String> looseRefs() throws IOException {
        if (loose == null) {
            loose = read();
        }
        return java.util.Collections.unmodifiableMap(loose);
    }

    private Map<String, String> read() throws IOException {
        Map<String, String> out = new HashMap<>();
        if (layer == null) {
            return out;
        }
        Path file = layer.resolve(LOOSE);
        byte[] bytes;
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS) || Files.size(file) > MAX_LOOSE) {
                return out;
            }
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return out;
        }
        int pos = 0;
        while (pos < bytes.length) {
            int nameEnd = nul(bytes, pos);
            int valueEnd = nameEnd < 0 ? -1 : nul(bytes, nameEnd + 1);
            if (valueEnd < 0) {
                break; // cut short: the rest was never written
            }
            out.put(new String(bytes, pos, nameEnd - pos, StandardCharsets.UTF_8),
                    new String(bytes, nameEnd + 1, valueEnd - nameEnd - 1, StandardCharsets.US_ASCII));
            pos = valueEnd + 1;
        }
        return out;
    }

    private static int nul(byte[] bytes, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        return -1;
    }
}
