// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.Environment;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * The host-side record of the project configs the user has trusted: one file per
 * config under {@code $XDG_STATE_HOME/agent-sandbox/trust/} (else
 * {@code ~/.local/state/agent-sandbox/trust/}), named by the SHA-256 of the config's
 * path and holding the SHA-256 of the content that was trusted. A config whose bytes
 * changed by one is no longer trusted. Beside each record, {@code NAME.content} keeps the
 * bytes that were trusted, so the next {@code trust} can show what changed since. The whole {@code agent-sandbox} state directory
 * is hidden inside every sandbox, so no sandbox can read or write the record; inside a
 * sandbox no project config is trusted.
 */
final class Trust {
    private Trust() {}

    /** A record is a few lines; anything larger is not one of ours. */
    private static final int MAX_RECORD = 4096;
    private static final String MAGIC = "agent-sandbox trust 1";

    enum Status {
        /** The user trusted exactly these bytes at this path. */
        TRUSTED,
        /** The user trusted this path, but other content. */
        CHANGED,
        /** Never trusted (or the store cannot be found). */
        UNTRUSTED
    }

    /** The store directory, or empty when neither XDG_STATE_HOME nor HOME says where. */
    static Optional<Path> storeDir(Environment env) {
        String xdg = env.hostEnv().get("XDG_STATE_HOME");
        // The XDG base directory spec says relative values are to be ignored.
        if (xdg != null && xdg.startsWith("/")) {
            return Optional.of(Path.of(xdg, "agent-sandbox", "trust"));
        }
        if (env.home() == null) {
            return Optional.empty();
        }
        return Optional.of(env.home().resolve(".local/state/agent-sandbox/trust"));
    }

    /** The path a config is trusted under: its directory with symlinks resolved, and its name. */
    static Path key(Path file) {
        try {
            return file.getParent().toRealPath().resolve(file.getFileName());
        } catch (IOException e) {
            return file.toAbsolutePath().normalize();
        }
    }

    static String sha256(byte[] data) {
        return Sha256.hex(data);
    }

    static Status status(Environment env, Path file, byte[] content) {
        if (agentsandbox.core.Sandbox.isInside()) {
            return Status.UNTRUSTED;
        }
        Optional<Path> dir = storeDir(env);
        if (dir.isEmpty()) {
            return Status.UNTRUSTED;
        }
        Path key = key(file);
        String record = readRecord(dir.get().resolve(recordName(key)));
        if (record == null || !record.startsWith(MAGIC + "\n")) {
            return Status.UNTRUSTED;
        }
        if (!record.contains("\npath-sha256 " + sha256(key.toString().getBytes(StandardCharsets.UTF_8)) + "\n")) {
            return Status.UNTRUSTED;
        }
        return record.contains("\nsha256 " + sha256(content) + "\n") ? Status.TRUSTED : Status.CHANGED;
    }

    /**
     * Records that the user trusts these bytes at this path, replacing any earlier record
     * for it. Written to a temp file first and renamed, so a record is whole or absent.
     *
     * @return the record file
     */
    static Path record(Environment env, Path file, byte[] content) {
        Optional<Path> store = storeDir(env);
        if (store.isEmpty()) {
            throw new SandboxException("cannot record trust: neither XDG_STATE_HOME nor HOME is set", "set HOME");
        }
        Path dir = store.get();
        Path key = key(file);
        Path target = dir.resolve(recordName(key));
        String text = MAGIC + "\n"
                + "path " + SandboxException.printable(key.toString()) + "\n"
                + "path-sha256 " + sha256(key.toString().getBytes(StandardCharsets.UTF_8)) + "\n"
                + "sha256 " + sha256(content) + "\n";
        Path temp = null;
        try {
            createPrivateDirs(dir);
            temp = Files.createTempFile(dir, ".record-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            // the content first: a record never names bytes whose copy is older than it
            Files.write(temp, content, StandardOpenOption.WRITE);
            replace(temp, dir.resolve(recordName(key) + CONTENT));
            temp = Files.createTempFile(dir, ".record-", ".tmp",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(temp, text, StandardCharsets.UTF_8, StandardOpenOption.WRITE);
            replace(temp, target);
            temp = null;
            return target;
        } catch (IOException e) {
            throw new SandboxException("cannot record trust in " + dir + ": " + e.getMessage(),
                    "check that the directory is yours and writable");
        } finally {
            if (temp != null) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException e) {
                    // best effort
                }
            }
        }
    }

    private static final String CONTENT = ".content";

    private static void replace(Path temp, Path target) throws IOException {
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * What was trusted at this path last: the bytes, when the record is there and its copy
     * matches its hash; empty bytes-less results say why not.
     */
    record Previous(Status status, byte[] content) {}

    /** The config last trusted at this path (see {@link Previous}). */
    static Previous previous(Environment env, Path file, byte[] now) {
        Status status = status(env, file, now);
        if (status == Status.UNTRUSTED) {
            return new Previous(status, null);
        }
        Path key = key(file);
        Path dir = storeDir(env).orElseThrow();
        String record = readRecord(dir.resolve(recordName(key)));
        byte[] kept = readContent(dir.resolve(recordName(key) + CONTENT));
        if (kept != null && record != null && record.contains("\nsha256 " + sha256(kept) + "\n")) {
            return new Previous(status, kept);
        }
        return new Previous(status, null);
    }

    private static byte[] readContent(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > ConfigReader.MAX_BYTES) {
                return null;
            }
            try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                return in.readNBytes((int) ConfigReader.MAX_BYTES);
            }
        } catch (IOException e) {
            return null;
        }
    }

    private static String recordName(Path key) {
        return sha256(key.toString().getBytes(StandardCharsets.UTF_8));
    }

    /** Creates the missing directories of {@code dir}, each readable by the owner only. */
    private static void createPrivateDirs(Path dir) throws IOException {
        if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Path parent = dir.getParent();
        if (parent != null) {
            createPrivateDirs(parent);
        }
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) {
                throw e;
            }
        }
    }

    /** A record's text, or null: only a regular file (never a link or a FIFO), read up to a bound. */
    private static String readRecord(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!a.isRegularFile() || a.size() > MAX_RECORD) {
                return null;
            }
            try (InputStream in = Files.newInputStream(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                return new String(in.readNBytes(MAX_RECORD), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            return null;
        }
    }
}
