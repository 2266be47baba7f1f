// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.Sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountChecksTest {
    private static final Origin O = new Origin(Layer.PRESET, "test");

    private static List<String> records(List<Mount> mounts, Path workDir) {
        String text = new String(MountChecks.render(mounts, workDir), StandardCharsets.UTF_8);
        return List.of(text.split("\0"));
    }

    @Test
    void Every_Host_Mount_Is_Checked_By_Kind_And_The_Working_Directory_Comes_Last() {
        List<Mount> mounts = List.of(
                Mount.of(Mount.Kind.ROOT, Path.of("/"), Path.of("/"), Access.RO, O),
                Mount.of(Mount.Kind.FRESH_DIR, null, Path.of("/run"), Access.RW, O),
                Mount.of(Mount.Kind.READ_WRITE, Path.of("/h/p"), Path.of("/h/p"), Access.RW, O),
                Mount.of(Mount.Kind.READ_ONLY, Path.of("/h/p/biome.json"), Path.of("/h/p/biome.json"), Access.RO, O),
                Mount.of(Mount.Kind.EMPTY_DIR, Path.of("/h/.ssh"), Path.of("/h/.ssh"), Access.EXCLUDE, O),
                Mount.of(Mount.Kind.UNREADABLE_FILE, Path.of("/r/hidden"), Path.of("/h/p/.env"), Access.EXCLUDE, O),
                Mount.of(Mount.Kind.NULL_DEVICE, null, Path.of("/var/run/docker.sock"), Access.EXCLUDE, O),
                Mount.of(Mount.Kind.READ_ONLY, Path.of("/r/policy"), Inside.POLICY, Access.RO, O));
        assertThat(records(mounts, Path.of("/h/p"))).containsExactly(
                "e", "", "/h/.ssh",
                "b", "/h/p", "/h/p",
                "r", "/r/hidden", "/h/p/.env",
                "r", "/h/p/biome.json", "/h/p/biome.json",
                "r", "/dev/null", "/var/run/docker.sock",
                "w", "/h/p", "/h/p");
    }

    @Test
    void A_Later_Mount_Drops_The_Checks_Of_What_It_Covers_But_Not_Of_Its_Siblings() {
        List<Mount> mounts = List.of(
                Mount.of(Mount.Kind.READ_WRITE, Path.of("/h/s"), Path.of("/h/s"), Access.RW, O),
                Mount.of(Mount.Kind.READ_ONLY, Path.of("/h/s/x"), Path.of("/h/s/x"), Access.RO, O),
                Mount.of(Mount.Kind.READ_ONLY, Path.of("/h/s0"), Path.of("/h/s0"), Access.RO, O),
                Mount.of(Mount.Kind.READ_ONLY, Path.of("/h/s-t"), Path.of("/h/s-t"), Access.RO, O),
                Mount.of(Mount.Kind.EMPTY_DIR, Path.of("/h/s"), Path.of("/h/s"), Access.EXCLUDE, O));
        assertThat(records(mounts, null)).containsExactly(
                "e", "", "/h/s",
                "r", "/h/s-t", "/h/s-t",
                "r", "/h/s0", "/h/s0");
    }
}
