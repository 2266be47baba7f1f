// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's objects read without its git ({@link HostObjects}), against what git itself
 * reads: every object of real repositories, loose and packed, with deltas against an
 * offset and against a name, and a damaged pack, from which nothing wrong is ever read.
 */
class HostObjectsTest {
    @TempDir
    Path dir;

    private static byte[] run(Path in, byte[] stdin, String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("git", "-c", "user.name=T", "-c", "user.email=t@t.invalid",
                "-c", "commit.gpgsign=false"));
        argv.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(in.toFile());
        pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
        pb.environment().put("HOME", in.toString());
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        Thread feed = new Thread(() -> {
            try (var out = p.getOutputStream()) {
                out.write(stdin);
            } catch (java.io.IOException e) {
                // git ended first: its status says why
            }
        });
        feed.start();
        byte[] out = p.getInputStream().readAllBytes();
        feed.join();
        assertThat(p.waitFor()).as("git %s", List.of(args)).isZero();
        return out;
    }

    private static String git(Path in, String... args) throws Exception {
        return new String(run(in, new byte[0], args), StandardCharsets.UTF_8).strip();
    }

    /** A repository whose files change over many commits, so that a repack makes deltas of trees and blobs. */
    private Path history(String name, String... init) throws Exception {
        Path repo = Files.createDirectories(dir.resolve(name));
        List<String> args = new ArrayList<>(List.of("init", "-q"));
        args.addAll(List.of(init));
        git(repo, args.toArray(new String[0]));
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            text.append("line ").append(i).append(" of a file that grows a little with every commit\n");
            Files.createDirectories(repo.resolve("src/deep/er"));
            Files.writeString(repo.resolve("src/deep/er/file.txt"), text);
            Files.writeString(repo.resolve("src/other" + (i % 7) + ".txt"), text.toString().repeat(2));
            git(repo, "add", "-A");
            git(repo, "commit", "-q", "-m", "commit " + i);
        }
        return repo;
    }

    /** Every object git has, by name: its type and content, as {@code git cat-file --batch} gives them. */
    private static Map<String, HostObjects.Loaded> all(Path repo) throws Exception {
        String[] names = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split("\n");
        byte[] batch = run(repo, (String.join("\n", names) + "\n").getBytes(StandardCharsets.US_ASCII),
                "cat-file", "--batch");
        Map<String, HostObjects.Loaded> out = new LinkedHashMap<>();
        int at = 0;
        while (at < batch.length) {
            int nl = at;
            while (batch[nl] != '\n') {
                nl++;
            }
            String[] head = new String(batch, at, nl - at, StandardCharsets.US_ASCII).split(" ");
            int size = Integer.parseInt(head[2]);
            out.put(head[0], new HostObjects.Loaded(head[1], java.util.Arrays.copyOfRange(batch, nl + 1, nl + 1 + size)));
            at = nl + 1 + size + 1;
        }
        assertThat(out).hasSize(names.length);
        return out;
    }

    private static void readsAsGit(Path repo, boolean sha256) throws Exception {
        Map<String, HostObjects.Loaded> expected = all(repo);
        HostObjects objects = new HostObjects(repo.resolve(".git"), sha256);
        try {
            for (Map.Entry<String, HostObjects.Loaded> e : expected.entrySet()) {
                HostObjects.Loaded got = objects.read(e.getKey());
                assertThat(got).as(e.getKey()).isNotNull();
                assertThat(got.type()).as(e.getKey()).isEqualTo(e.getValue().type());
                assertThat(got.content()).as(e.getKey()).isEqualTo(e.getValue().content());
            }
        } finally {
            objects.close();
        }
    }

    @Test
    void Loose_Objects_Read_As_Git_Reads_Them() throws Exception {
        Path repo = history("loose");
        assertThat(git(repo, "count-objects", "-v")).contains("packs: 0");
        readsAsGit(repo, false);
    }

    @Test
    void Packed_Objects_With_Offset_Deltas_Read_As_Git_Reads_Them() throws Exception {
        Path repo = history("ofs");
        git(repo, "gc", "-q", "--aggressive");
        String verify = git(repo, "verify-pack", "-v", Files.list(repo.resolve(".git/objects/pack"))
                .filter(p -> p.toString().endsWith(".idx")).findFirst().orElseThrow().toString());
        assertThat(verify).as("the pack has deltas").contains("chain length = 2");
        readsAsGit(repo, false);
    }

    @Test
    void Packed_Objects_With_Deltas_Against_A_Name_Read_As_Git_Reads_Them() throws Exception {
        Path repo = history("ref");
        git(repo, "-c", "pack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f");
        readsAsGit(repo, false);
    }

    @Test
    void A_SHA_256_Repository_Reads_Too() throws Exception {
        Path repo = history("sha256", "--object-format=sha256");
        git(repo, "gc", "-q");
        readsAsGit(repo, true);
        assertThat(new HostObjects(repo.resolve(".git"), false).read(git(repo, "rev-parse", "HEAD")))
                .as("a name of the other length").isNull();
    }

    /** A damaged pack: every object reads as git wrote it, or not at all (the host's git is asked then). */
    @Test
    void A_Damaged_Pack_Never_Gives_Another_Object() throws Exception {
        Path repo = history("damaged");
        git(repo, "gc", "-q", "--aggressive");
        Map<String, HostObjects.Loaded> expected = all(repo);
        Path pack = Files.list(repo.resolve(".git/objects/pack")).filter(p -> p.toString().endsWith(".pack"))
                .findFirst().orElseThrow();
        byte[] bytes = Files.readAllBytes(pack);
        java.util.Random random = new java.util.Random(7);
        int unreadable = 0;
        for (int round = 0; round < 8; round++) {
            byte[] damaged = bytes.clone();
            for (int i = 0; i < 24; i++) {
                int at = 12 + random.nextInt(damaged.length - 32);
                damaged[at] ^= (byte) (1 + random.nextInt(255));
            }
            pack.toFile().setWritable(true);
            Files.write(pack, damaged);
            HostObjects objects = new HostObjects(repo.resolve(".git"), false);
            for (Map.Entry<String, HostObjects.Loaded> e : expected.entrySet()) {
                HostObjects.Loaded got = objects.read(e.getKey());
                if (got == null) {
                    unreadable++;
                    continue;
                }
                assertThat(got.type()).as(e.getKey()).isEqualTo(e.getValue().type());
                assertThat(got.content()).as(e.getKey()).isEqualTo(e.getValue().content());
            }
            objects.close();
        }
        assertThat(unreadable).as("the damage was read at all").isPositive();
    }

    /**
     * One read inflates a bounded number of bytes, its delta bases' included (a planted pack
     * of large deltas in a chain ends there): with the bound at a base object's size, the base
     * reads and a delta of it does not.
     */
    @Test
    void A_Read_Inflates_No_More_Than_Its_Bound() throws Exception {
        Path repo = history("bounded");
        git(repo, "gc", "-q", "--aggressive");
        String idx = Files.list(repo.resolve(".git/objects/pack")).filter(p -> p.toString().endsWith(".idx"))
                .findFirst().orElseThrow().toString();
        // verify-pack -v: "id type size packed offset" for an object stored whole, then "depth base" for a delta
        Map<String, String[]> entries = new LinkedHashMap<>();
        for (String line : git(repo, "verify-pack", "-v", idx).split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 5 && f[0].matches("[0-9a-f]{40}")) {
                entries.put(f[0], f);
            }
        }
        String delta = null;
        String base = null;
        for (String[] f : entries.values()) {
            if (f.length == 7 && f[5].equals("1") && f[1].equals("blob")) {
                delta = f[0];
                base = f[6];
                break;
            }
        }
        assertThat(delta).as("a blob stored as a delta of a whole one").isNotNull();
        int baseSize = Integer.parseInt(entries.get(base)[2]);
        HostObjects tight = new HostObjects(repo.resolve(".git"), false, baseSize);
        HostObjects plain = new HostObjects(repo.resolve(".git"), false);
        try {
            assertThat(plain.read(delta)).isNotNull();
            assertThat(tight.read(base)).as("the base, within the bound").isNotNull();
            assertThat(tight.read(delta)).as("the base and the delta, beyond it").isNull();
        } finally {
            tight.close();
            plain.close();
        }
    }

    @Test
    void An_Object_Elsewhere_Is_Not_Read() throws Exception {
        Path repo = history("alternate");
        Path clone = dir.resolve("borrowing");
        git(dir, "clone", "-q", "--shared", repo.toString(), clone.toString());
        HostObjects objects = new HostObjects(clone.resolve(".git"), false);
        assertThat(objects.read(git(clone, "rev-parse", "HEAD"))).as("in the alternate's store").isNull();
        assertThat(objects.read("0".repeat(40))).isNull();
        assertThat(objects.read("not an id")).isNull();
        objects.close();
    }

    @Test
    void Deltas_Are_Applied_As_Git_Writes_Them() {
        byte[] base = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream delta = new ByteArrayOutputStream();
        delta.write(16); // the base's size
        delta.write(9); // the result's size
        delta.write(0x80 | 0x01 | 0x10); // copy: one byte of offset, one of size
        delta.write(10);
        delta.write(4);
        delta.write(5); // insert five bytes
        delta.writeBytes("-xyz-".getBytes(StandardCharsets.US_ASCII));
        assertThat(new String(HostObjects.patch(base, delta.toByteArray()), StandardCharsets.US_ASCII))
                .isEqualTo("abcd-xyz-");
        byte[] wrongBase = delta.toByteArray().clone();
        wrongBase[0] = 15;
        assertThat(HostObjects.patch(base, wrongBase)).isNull();
        byte[] beyond = delta.toByteArray().clone();
        beyond[3] = 14; // a copy past the base's end
        assertThat(HostObjects.patch(base, beyond)).isNull();
        byte[] reserved = java.util.Arrays.copyOf(delta.toByteArray(), delta.size() + 1);
        assertThat(HostObjects.patch(base, reserved)).as("an instruction 0").isNull();
    }
}
