// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * The first step of {@link GitApply}: the new objects of a view's layer, brought into the
 * host's git dir. Each loose object is read once (never through a link), inflated and
 * checked against its name, and what was checked is what is written; each pack is copied
 * out of the sandbox's sight, indexed by the host's own git ({@code index-pack --strict})
 * and named by the checksum git found. No object is ever deleted, and the first one refused
 * stops the apply before any ref could point at it.
 */
final class ObjectImport {
    /** At most this many bytes of one loose object are inflated to check it. */
    static final long MAX_OBJECT = 512L * 1024 * 1024;

    private final Path gitDir;
    private final Path upper;
    private final HostGit git;
    private final List<String> out;

    /** @param out where a refused object is said, one line */
    /** Asked before each write: whether the git dir is still this run's alone to write ({@link GitApply#alone()}). */
    private final GitApply apply;

    ObjectImport(Path gitDir, Path upper, HostGit git, List<String> out) {
        this(gitDir, upper, git, out, null);
    }

    ObjectImport(Path gitDir, Path upper, HostGit git, List<String> out, GitApply apply) {
        this.apply = apply;
        this.gitDir = gitDir;
        this.upper = upper;
        this.git = git;
        this.out = out;
    }

    /**
     * Whether {@code p} is a directory of its own or absent: never a symbolic link (nor
     * anything else) that writing below it would follow out of the host's git dir, where a
     * process that can write the git dir (a sandbox that made the repository in its work
     * tree, say) may have put one.
     */
    static boolean realDirOrAbsent(Path p) {
        return Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) || !Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }

    /** Says that the host's {@code dir} is a link or no directory; false. */
    private boolean notThere(Path dir) {
        out.add("git: " + dir.getFileName() + " in the host's git dir is a symbolic link or no directory: the sandbox's"
                + " objects were not applied");
        return false;
    }

    /** Imports the new objects; the number imported, or -1 when one was refused (said in {@code out}). */
    int run(boolean sha256) throws IOException {
        Path dir = upper.resolve("objects");
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return 0;
        }
        if (!realDirOrAbsent(gitDir.resolve("objects"))) {
            notThere(gitDir.resolve("objects"));
            return -1;
        }
        int hexLength = sha256 ? 64 : 40;
        int imported = 0;
        try (DirectoryStream<Path> fans = Files.newDirectoryStream(dir)) {
            for (Path fan : fans) {
                String name = fan.getFileName().toString();
                if (name.length() == 2 && ObjectIds.isHex(name)
                        && Files.isDirectory(fan, LinkOption.NOFOLLOW_LINKS)) {
                    try (DirectoryStream<Path> files = Files.newDirectoryStream(fan)) {
                        for (Path f : files) {
                            String rest = f.getFileName().toString();
                            if (rest.length() != hexLength - 2 || !ObjectIds.isHex(rest)) {
                                continue; // a temporary file of git's, or not an object
                            }
                            if (!looseObject(f, name + rest, hexLength == 64)) {
                                return -1;
                            }
                            imported++;
                        }
                    }
                }
            }
        }
        Path packs = dir.resolve("pack");
        if (Files.isDirectory(packs, LinkOption.NOFOLLOW_LINKS)) {
            // filtered by hand: a glob is a regular expression compiled, which costs an
            // interpreted run milliseconds
            try (DirectoryStream<Path> files = Files.newDirectoryStream(packs)) {
                for (Path pack : files) {
                    String name = pack.getFileName().toString();
                    if (!name.startsWith("pack-") || !name.endsWith(".pack")) {
                        continue;
                    }
                    if (!pack(pack)) {
                        return -1;
                    }
                    imported++;
                }
            }
        }
        return imported;
    }

    /** Checks one loose object against its name and copies it in; false (said) when it is not one. */
    private boolean looseObject(Path file, String id, boolean sha256) throws IOException {
        Path target = gitDir.resolve("objects").resolve(id.substring(0, 2)).resolve(id.substring(2));
        if (!realDirOrAbsent(target.getParent())) {
            return notThere(target.getParent());
        }
        if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            return true; // the overlay's mark of a deleted object: the host deletes none
        }
        // read once, not through a link, and what was checked is what is written: a sandbox that
        // swaps the file meanwhile cannot make the host copy another file into its git dir
        if (Files.size(file) > MAX_OBJECT) {
            out.add("git: the sandbox's object " + id + " is larger than " + MAX_OBJECT + " bytes; nothing was applied");
            return false;
        }
        byte[] deflated;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            deflated = in.readNBytes((int) MAX_OBJECT + 1);
        }
        String problem = checkObject(deflated, id, sha256);
        if (problem != null) {
            out.add("git: the sandbox's object " + id + " is " + problem + "; nothing was applied");
            return false;
        }
        if (apply != null) {
            apply.alone();
        }
        // written and renamed in directories opened through no link (see LinkFree), read-only as git leaves objects
        LinkFree.replace(gitDir, "objects/" + id.substring(0, 2), "tmp_obj_", deflated, id.substring(2), 0444);
        return true;
    }

    /** Why {@code deflated} is not the object {@code id}; null when it is. */
    static String checkObject(byte[] deflated, String id, boolean sha256) {
        Inflater inflater = new Inflater();
        ByteArrayOutputStream inflated = new ByteArrayOutputStream();
        try {
            inflater.setInput(deflated);
            byte[] buffer = new byte[64 * 1024];
            while (!inflater.finished()) {
                int n = inflater.inflate(buffer);
                if (n == 0 && (inflater.needsInput() || inflater.needsDictionary())) {
                    return "cut short";
                }
                inflated.write(buffer, 0, n);
                if (inflated.size() > MAX_OBJECT) {
                    return "larger than " + MAX_OBJECT + " bytes";
                }
            }
            if (inflater.getRemaining() > 0) {
                return "followed by bytes after its compressed data"; // git calls such an object corrupt
            }
        } catch (DataFormatException e) {
            return "not compressed as git compresses objects";
        } finally {
            inflater.end();
        }
        byte[] bytes = inflated.toByteArray();
        int space = indexOf(bytes, (byte) ' ', 0);
        int nul = indexOf(bytes, (byte) 0, 0);
        if (space < 0 || nul < space) {
            return "without an object header";
        }
        String type = new String(bytes, 0, space, StandardCharsets.US_ASCII);
        if (!type.equals("blob") && !type.equals("tree") && !type.equals("commit") && !type.equals("tag")) {
            return "of no object type (" + type + ")";
        }
        long size;
        try {
            size = Long.parseLong(new String(bytes, space + 1, nul - space - 1, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return "without a size in its header";
        }
        if (size != bytes.length - nul - 1) {
            return "of another size than its header says";
        }
        byte[] sum;
        if (sha256) {
            try {
                sum = MessageDigest.getInstance("SHA-256").digest(bytes);
            } catch (NoSuchAlgorithmException e) {
                return "not checkable here (" + e.getMessage() + ")";
            }
        } else {
            sum = agentsandbox.core.Native.sha1(bytes, bytes.length);
        }
        String actual = HexFormat.of().formatHex(sum);
        return actual.equals(id) ? null : "not what its name says (its content hashes to " + actual + ")";
    }

    /** The type of loose object {@code id} in {@code gitDir} ("commit", "tree", ...); null when it is not loose there. */
    static String looseType(Path gitDir, String id) {
        if (!ObjectIds.isObjectId(id)) {
            return null;
        }
        Path file = gitDir.resolve("objects").resolve(id.substring(0, 2)).resolve(id.substring(2));
        byte[] head;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            head = in.readNBytes(64);
        } catch (IOException e) {
            return null;
        }
        Inflater inflater = new Inflater();
        byte[] bytes = new byte[32];
        int length;
        try {
            inflater.setInput(head);
            length = inflater.inflate(bytes);
        } catch (DataFormatException e) {
            return null;
        } finally {
            inflater.end();
        }
        int space = indexOf(java.util.Arrays.copyOf(bytes, length), (byte) ' ', 0);
        return space <= 0 ? null : new String(bytes, 0, space, StandardCharsets.US_ASCII);
    }

    /** A commit read by {@link #looseCommitParents} is at most this large (a larger one is left to git). */
    static final int MAX_COMMIT = 64 * 1024;

    /**
     * The parents of commit {@code id}, read from its loose object in {@code gitDir}; null when
     * it is not there as a loose commit of at most {@link #MAX_COMMIT} bytes (packed, missing,
     * another type, or not readable as one).
     */
    static List<String> looseCommitParents(Path gitDir, String id) {
        if (!ObjectIds.isObjectId(id)) {
            return null;
        }
        Path file = gitDir.resolve("objects").resolve(id.substring(0, 2)).resolve(id.substring(2));
        byte[] deflated;
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            deflated = in.readNBytes(MAX_COMMIT);
        } catch (IOException e) {
            return null;
        }
        Inflater inflater = new Inflater();
        byte[] bytes = new byte[MAX_COMMIT];
        int length;
        try {
            inflater.setInput(deflated);
            length = inflater.inflate(bytes);
            if (!inflater.finished()) {
                return null; // larger, or cut short
            }
        } catch (DataFormatException e) {
            return null;
        } finally {
            inflater.end();
        }
        int nul = indexOf(bytes, (byte) 0, 0);
        String header = nul < 0 || nul > 32 ? "" : new String(bytes, 0, nul, StandardCharsets.US_ASCII);
        if (!header.startsWith("commit ")) {
            return null;
        }
        // the header lines up to the first empty one: tree, then parents, author, committer...
        List<String> parents = new java.util.ArrayList<>();
        String text = new String(bytes, nul + 1, length - nul - 1, StandardCharsets.ISO_8859_1);
        int start = 0;
        while (start < text.length()) {
            int end = text.indexOf('\n', start);
            if (end < 0 || end == start) {
                break;
            }
            String line = text.substring(start, end);
            if (line.startsWith("parent ")) {
                String parent = line.substring("parent ".length());
                if (!ObjectIds.isObjectId(parent)) {
                    return null;
                }
                parents.add(parent);
            } else if (!line.startsWith("tree ")) {
                break; // the parents come right after the tree
            }
            start = end + 1;
        }
        return parents;
    }

    /** Indexes one pack with the host's git and moves it in; false (said) when git refuses it. */
    private boolean pack(Path pack) throws IOException {
        if (!Files.isRegularFile(pack, LinkOption.NOFOLLOW_LINKS)) {
            return true; // the overlay's mark of a deleted pack: the host deletes none
        }
        if (!realDirOrAbsent(gitDir.resolve("objects").resolve("pack"))) {
            return notThere(gitDir.resolve("objects").resolve("pack"));
        }
        Path packDir = Files.createDirectories(gitDir.resolve("objects").resolve("pack"));
        if (Files.exists(packDir.resolve(pack.getFileName()), LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        // indexed where no sandbox sees it (beside the layer, in the run's directory): only a
        // pack the host's git accepted reaches the git dir, which the sandbox's view shows
        Path staging = Files.createDirectories(upper.resolveSibling("apply"));
        if (apply != null) {
            apply.alone();
        }
        Path temp = Files.createTempFile(staging, "tmp_pack_", ".pack");
        Path tempIndex = staging.resolve(temp.getFileName().toString().replace(".pack", ".idx"));
        try {
            try (InputStream in = Files.newInputStream(pack, LinkOption.NOFOLLOW_LINKS)) {
                Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
            }
            HostGit.Result r = git.run("index-pack", "--strict", "-o", tempIndex.toString(), temp.toString());
            if (r.status() != 0) {
                out.add("git: the sandbox's " + pack.getFileName() + " is not a pack the host's git accepts ("
                        + r.firstLine() + "); nothing was applied");
                return false;
            }
            // named by what git found the pack to be, not by the name the sandbox gave it
            String[] words = r.output().strip().split("\\s+");
            String checksum = words.length == 0 ? "" : words[words.length - 1];
            if (!ObjectIds.isHex(checksum)) {
                out.add("git: the host's git named no checksum for the sandbox's " + pack.getFileName()
                        + "; nothing was applied");
                return false;
            }
            String name = "pack-" + checksum + ".pack";
            Path finalIndex = packDir.resolve(name.substring(0, name.length() - ".pack".length()) + ".idx");
            Path finalPack = packDir.resolve(name);
            if (!Files.exists(finalPack, LinkOption.NOFOLLOW_LINKS)) {
                // the pack first, then its index: git looks for packs by their index
                Files.move(temp, finalPack);
                Files.move(tempIndex, finalIndex);
            }
            return true;
        } finally {
            Files.deleteIfExists(temp);
            Files.deleteIfExists(tempIndex);
        }
    }

    private static int indexOf(byte[] bytes, byte b, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
