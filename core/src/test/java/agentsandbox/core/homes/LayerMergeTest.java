// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.homes;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A run's upper dir merged into the user's layer: by renames, whiteouts and opaque dirs kept. */
class LayerMergeTest {
    @TempDir
    Path tmp;

    private Path write(Path p, String text) throws IOException {
        Files.createDirectories(p.getParent());
        return Files.writeString(p, text);
    }

    private Path whiteout(Path p) throws Exception {
        Files.createDirectories(p.getParent());
        Process mknod = new ProcessBuilder("mknod", p.toString(), "c", "0", "0").inheritIO().start();
        assertThat(mknod.waitFor()).as("mknod of a whiteout").isZero();
        return p;
    }

    @Test
    void Files_Replace_Directories_Merge_And_Whiteouts_Move_Into_The_Layer() throws Exception {
        Path upper = tmp.resolve("upper");
        Path layer = tmp.resolve("layer");
        write(layer.resolve("keep/old"), "old");
        write(layer.resolve("keep/both"), "layer");
        write(layer.resolve("gone"), "layer");
        write(upper.resolve("keep/both"), "run");
        write(upper.resolve("keep/new"), "run");
        write(upper.resolve("fresh/deep/file"), "run");
        whiteout(upper.resolve("gone"));

        LayerMerge.merge(upper, layer);

        assertThat(Files.readString(layer.resolve("keep/old"))).isEqualTo("old");
        assertThat(Files.readString(layer.resolve("keep/both"))).isEqualTo("run");
        assertThat(Files.readString(layer.resolve("keep/new"))).isEqualTo("run");
        assertThat(Files.readString(layer.resolve("fresh/deep/file"))).isEqualTo("run");
        assertThat(LayerMerge.whiteout(layer.resolve("gone"))).isTrue();
        try (var left = Files.list(upper)) {
            assertThat(left.toList()).as("everything moved").isEmpty();
        }
    }

    @Test
    void An_Opaque_Directory_Replaces_The_Layers_Directory_Whole() throws Exception {
        Path upper = tmp.resolve("upper");
        Path layer = tmp.resolve("layer");
        write(layer.resolve("dir/stale"), "layer");
        write(upper.resolve("dir/fresh"), "run");
        Files.getFileAttributeView(upper.resolve("dir"), UserDefinedFileAttributeView.class)
                .write(LayerMerge.OPAQUE, ByteBuffer.wrap("y".getBytes(StandardCharsets.US_ASCII)));

        LayerMerge.merge(upper, layer);

        assertThat(layer.resolve("dir/stale")).doesNotExist();
        assertThat(Files.readString(layer.resolve("dir/fresh"))).isEqualTo("run");
        assertThat(LayerMerge.opaque(layer.resolve("dir"))).isTrue();
    }

    @Test
    void A_Link_In_The_Run_Replaces_A_Directory_And_Is_Never_Followed() throws Exception {
        Path upper = tmp.resolve("upper");
        Path layer = tmp.resolve("layer");
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        write(layer.resolve("dir/file"), "layer");
        Files.createDirectories(upper);
        Files.createSymbolicLink(upper.resolve("dir"), outside);

        LayerMerge.merge(upper, layer);

        assertThat(Files.isSymbolicLink(layer.resolve("dir"))).isTrue();
        try (var left = Files.list(outside)) {
            assertThat(left.toList()).isEmpty();
        }
    }

    @Test
    void Runs_Merge_Under_The_Lock_And_Ended_Runs_Are_Those_Without_A_Run_Directory() throws Exception {
        Path root = tmp.resolve("homes");
        Path state = Files.createDirectories(tmp.resolve("state/run"));
        Files.createDirectories(state.resolve("0000000000000001"));
        write(HomeLayers.runs(root).resolve("0000000000000001/.cache/upper/live"), "x");
        write(HomeLayers.runs(root).resolve("0000000000000002/.cache/upper/ended"), "y");
        write(HomeLayers.runs(root).resolve("0000000000000003/.local%2Fshare%2Fuv/upper/tool"), "z");

        List<String> ended = LayerMerge.ended(root, state.resolve("0000000000000009"));
        assertThat(ended).containsExactlyInAnyOrder("0000000000000002", "0000000000000003");
        assertThat(LayerMerge.mergeRuns(root, ended)).isEmpty();

        assertThat(Files.readString(HomeLayers.layer(root, ".cache").resolve("ended"))).isEqualTo("y");
        assertThat(Files.readString(HomeLayers.layer(root, ".local/share/uv").resolve("tool"))).isEqualTo("z");
        assertThat(HomeLayers.runs(root).resolve("0000000000000002")).doesNotExist();
        assertThat(HomeLayers.runs(root).resolve("0000000000000001")).exists();
        assertThat(Files.exists(HomeLayers.layer(root, ".cache").resolve("live"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void Layer_Names_Escape_Slashes_And_Reject_What_No_Layer_Has() {
        assertThat(HomeLayers.name(".local/share/uv")).isEqualTo(".local%2Fshare%2Fuv");
        assertThat(HomeLayers.rel(".local%2Fshare%2Fuv")).isEqualTo(".local/share/uv");
        assertThat(HomeLayers.rel("a%252Fb")).isEqualTo("a%2Fb");
        assertThat(HomeLayers.rel("..%2Fetc")).isNull();
        assertThat(HomeLayers.rel("")).isNull();
    }
}
