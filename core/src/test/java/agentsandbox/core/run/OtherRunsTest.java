// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The other live runs of the user's and the git dirs they can write without a view, read
 * from run directories as runs write them: their owner, their mount checks, their views.
 */
class OtherRunsTest {
    @TempDir
    Path dir;

    private Path runs;
    private Path project;
    private Path gitDir;

    @BeforeEach
    void layout() throws Exception {
        runs = Files.createDirectories(dir.resolve("runs"));
        project = Files.createDirectories(dir.resolve("project"));
        gitDir = Files.createDirectories(project.resolve("nested/.git"));
    }

    private static void field(ByteArrayOutputStream out, String text) {
        out.writeBytes(text.getBytes(StandardCharsets.UTF_8));
        out.write(0);
    }

    /** A run directory of this process (alive), that mounts {@code writable} read-write and has views of {@code views}. */
    private Path run(String name, Path writable, Path... views) throws Exception {
        Path run = Files.createDirectories(runs.resolve(name));
        StaleRuns.writeOwner(run);
        ByteArrayOutputStream checks = new ByteArrayOutputStream();
        for (String f : new String[] {"r", "/usr", "/usr", "b", writable.toString(), writable.toString(), "e", "",
            "/run/x"}) {
            field(checks, f);
        }
        Files.write(run.resolve(RunLayout.MOUNT_CHECKS), checks.toByteArray());
        ByteArrayOutputStream record = new ByteArrayOutputStream();
        field(record, "1000");
        field(record, "1000");
        for (Path v : views) {
            field(record, "g");
            field(record, v.toString());
            field(record, "/l");
            field(record, "/u");
            field(record, "/w");
            field(record, Files.getAttribute(v, "unix:dev", LinkOption.NOFOLLOW_LINKS) + ":"
                    + Files.getAttribute(v, "unix:ino", LinkOption.NOFOLLOW_LINKS));
        }
        field(record, "h");
        field(record, "/layers/x:/home/u/.cache");
        field(record, "/u");
        field(record, "/w");
        Files.write(run.resolve(RunLayout.GIT_VIEWS), record.toByteArray());
        return run;
    }

    private static String name(char c) {
        return String.valueOf(c).repeat(16);
    }

    @Test
    void A_Run_That_Mounts_The_Git_Dir_Writable_Without_A_View_Of_It_Writes_It() throws Exception {
        run(name('a'), project);
        String writer = OtherRuns.now(runs, name('f')).writerOf(gitDir);
        assertThat(writer).isEqualTo("pid " + StaleRuns.Owner.current().pid());
        assertThat(OtherRuns.now(runs, name('a')).writerOf(gitDir)).as("this run itself").isNull();
    }

    /** A read-write mount of a part of the git dir (its logs, say) writes it too. */
    @Test
    void A_Run_That_Mounts_A_Part_Of_The_Git_Dir_Writable_Writes_It() throws Exception {
        run(name('a'), Files.createDirectories(gitDir.resolve("logs")), gitDir);
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).as("even with a view of the whole").isNull();
        run(name('b'), Files.createDirectories(gitDir.resolve("logs/refs")));
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).startsWith("pid ");
    }

    @Test
    void A_Run_With_A_View_Of_It_Or_Without_It_Mounted_Writable_Does_Not() throws Exception {
        run(name('a'), project, gitDir);
        run(name('b'), Files.createDirectories(dir.resolve("elsewhere")));
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).isNull();
    }

    /** The view of another directory at the same path (the git dir renamed away, another put in its place) is none. */
    @Test
    void A_View_Of_What_Was_At_The_Path_Before_Is_No_View_Of_It() throws Exception {
        run(name('a'), project, gitDir);
        Files.move(gitDir, project.resolve("old.git"));
        Files.createDirectories(gitDir);
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).isNotNull();
    }

    @Test
    void A_Run_That_Cannot_Be_Read_Yet_Counts_As_A_Writer_And_An_Ended_One_Does_Not() throws Exception {
        Path starting = Files.createDirectories(runs.resolve(name('c')));
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).as("no owner yet").isEqualTo("one starting now");
        assertThat(OtherRuns.now(runs, name('f')).settled()).isFalse();
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir, false)).as("when a run decides its views").isNull();
        StaleRuns.writeOwner(starting);
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).as("no mount checks yet").startsWith("pid ");
        Files.writeString(starting.resolve(RunLayout.OWNER), "999999999 1 " + StaleRuns.Owner.current().pidNs()
                + "\n");
        assertThat(OtherRuns.now(runs, name('f')).writerOf(gitDir)).as("its owner gone").isNull();
        assertThat(OtherRuns.now(dir.resolve("no-runs"), name('f')).writerOf(gitDir)).isNull();
    }
}
