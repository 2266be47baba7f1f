// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.run;

import agentsandbox.core.git.GitDirs;
import agentsandbox.core.Environment;
import agentsandbox.core.git.GitLayout;
import agentsandbox.core.Plan;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.Sandbox;
import agentsandbox.core.SandboxException;
import agentsandbox.core.TestWorld;
import agentsandbox.core.guard.Wrappers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The run directory and the checks before a run, made on a second thread while the plan
 * is made: the plan uses that directory, the run takes it, and what no run took is
 * removed. The user is the test JVM's own, or uid 1000 owning the world when the tests
 * run as root (which agent-sandbox refuses).
 */
class PreparationTest {
    @TempDir
    Path temp;

    private TestWorld world;
    private Path runtime;
    private int uid;

    @BeforeEach
    void world() throws IOException {
        world = new TestWorld(temp);
        // a short private directory of the user for the sockets, as $XDG_RUNTIME_DIR
        runtime = Files.createDirectory(world.root.resolve("r"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwx------")));
        int real = (Integer) Files.getAttribute(temp, "unix:uid");
        uid = real == 0 ? 1000 : real;
        if (real == 0) {
            // the state directories exist and are the user's, as a run of that user leaves them
            Path runs = Files.createDirectories(world.home.resolve(".local/state/agent-sandbox/run"));
            Path socketsBase = Files.createDirectory(runtime.resolve("agent-sandbox"));
            for (Path p : List.of(runs.getParent(), runs, runtime, socketsBase)) {
                Files.setAttribute(p, "unix:uid", uid);
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
            }
        }
    }

    private Environment env(int asUid) {
        return new Environment(world.home, world.project,
                Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "XDG_RUNTIME_DIR", runtime.toString()),
                world.tmp, asUid, "Linux", null, world.root.resolve("no-proc-sys"));
    }

    private static Plan plan(Environment env, Preparation prepared) {
        return Sandbox.plan(Policy.builder().build(), env, List.of("true"), false, prepared);
    }

    @Test
    void The_Plan_Uses_The_Run_Directory_Made_Meanwhile_And_The_Run_Takes_It() {
        Environment env = env(uid);
        Path sockets;
        RunDir taken;
        try (Preparation prepared = Preparation.start(env)) {
            Plan plan = plan(env, prepared);

            assertThat(plan.runtimeDir()).isEqualTo(prepared.runDir());
            assertThat(plan.runtimeDir().getParent()).isEqualTo(world.home.resolve(".local/state/agent-sandbox/run"));
            taken = prepared.take(plan);
            assertThat(taken.path()).isEqualTo(plan.runtimeDir());
            assertThat(plan.runtimeDir().resolve("tmp")).isDirectory();
            assertThat(plan.runtimeDir().resolve("hidden")).exists();
            sockets = runtime.resolve("agent-sandbox").resolve(plan.runtimeDir().getFileName());
            assertThat(sockets).isDirectory();
            assertThat(prepared.state()).isNotNull();
            assertThat(prepared.gitBefore()).isNotNull();
            assertThatThrownBy(() -> prepared.take(plan)).isInstanceOf(IllegalStateException.class);
        }
        // taken: the run's to remove, not the preparation's
        assertThat(taken.path()).isDirectory();
        taken.close();
        assertThat(taken.path()).doesNotExist();
        assertThat(sockets).doesNotExist();
    }

    @Test
    void A_Run_Directory_No_Run_Took_Is_Removed_With_Its_Sockets() {
        Environment env = env(uid);
        Path run;
        try (Preparation prepared = Preparation.start(env)) {
            run = plan(env, prepared).runtimeDir();
            // the plan failed, or the caller gave up: nothing takes the directory
        }
        assertThat(run).doesNotExist();
        assertThat(runtime.resolve("agent-sandbox").resolve(run.getFileName())).doesNotExist();
        assertThat(run.getParent()).isEmptyDirectory();
    }

    @Test
    void A_Machine_That_Cannot_Run_A_Sandbox_Gets_Nothing_Created_And_The_Run_Hears_Why() {
        Environment root = env(0);
        try (Preparation prepared = Preparation.start(root)) {
            Plan plan = plan(root, prepared);

            assertThatThrownBy(() -> prepared.take(plan)).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("refusing to run as root");
            assertThat(plan.runtimeDir()).doesNotExist();
            assertThat(runtime.resolve("agent-sandbox").resolve(plan.runtimeDir().getFileName())).doesNotExist();
        }
    }

    @Test
    void A_Plan_Is_For_The_Preparation_It_Was_Made_With() throws IOException {
        Environment env = env(uid);
        Environment elsewhere = env.withWorkDir(world.project).withProcSys(world.root.resolve("no-proc-sys"));
        Map<String, String> otherState = Map.of("PATH", "/usr/bin:/bin", "XDG_STATE_HOME",
                Files.createDirectories(world.root.resolve("other-state")).toString());
        Environment otherEnv = new Environment(world.home, world.project, otherState, world.tmp, uid, "Linux", null,
                world.root.resolve("no-proc-sys"));
        try (Preparation prepared = Preparation.start(env); Preparation other = Preparation.start(elsewhere)) {
            Plan forOther = plan(elsewhere, other);

            assertThatThrownBy(() -> prepared.take(forOther)).isInstanceOf(IllegalArgumentException.class);
            // a preparation made for another state directory cannot give a plan its directory
            assertThatThrownBy(() -> plan(otherEnv, prepared)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void Git_Is_Located_Meanwhile_In_The_Runs_Own_Path() throws IOException {
        // a git of the run's PATH only: what the second thread finds is this environment's
        Path bin = Files.createDirectories(world.root.resolve("bin"));
        Path git = Files.createFile(bin.resolve("git"), PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        Environment env = new Environment(world.home, world.project,
                Map.of("PATH", bin + ":/nonexistent", "XDG_RUNTIME_DIR", runtime.toString()),
                world.tmp, uid, "Linux", null, world.root.resolve("no-proc-sys"));
        try (Preparation prepared = Preparation.start(env)) {
            assertThat(prepared.gitLocations()).startsWith(git.toRealPath())
                    .isEqualTo(Wrappers.locations(Wrappers.PREPARED, env));
        }
    }

    /** The plan's git presets use the repository the second thread found first thing, as found. */
    @Test
    void The_Repository_Is_Found_Meanwhile_And_Is_The_One_Above_The_Working_Directory() throws IOException {
        Path dotGit = Files.createDirectories(world.project.resolve(".git"));
        Files.writeString(dotGit.resolve("HEAD"), "ref: refs/heads/feature\n");
        Files.writeString(dotGit.resolve("config"), "");
        Files.createDirectories(dotGit.resolve("hooks"));
        Path below = Files.createDirectories(world.project.resolve("src/deep"));
        Environment env = new Environment(world.home, below,
                Map.of("PATH", "/nonexistent", "XDG_RUNTIME_DIR", runtime.toString()),
                world.tmp, uid, "Linux", null, world.root.resolve("no-proc-sys"));
        try (Preparation prepared = Preparation.start(env)) {
            java.util.Optional<GitLayout> found = prepared.gitLayout();
            assertThat(found).isPresent();
            assertThat(found.get().gitDir()).isEqualTo(GitLayout.discover(below).get().gitDir())
                    .isEqualTo(world.project.toAbsolutePath().normalize().resolve(".git"));
            assertThat(found.get().currentBranch()).contains("feature");
            // and its git dirs, for the plan's @git rules: the ones a search of the plan's own finds
            assertThat(prepared.gitDirs().protectable())
                    .containsExactlyElementsOf(GitDirs.find(below).protectable())
                    .contains(dotGit.toAbsolutePath().normalize().resolve("hooks"));
        }
        Environment outside = new Environment(world.home, world.tmp,
                Map.of("PATH", "/nonexistent", "XDG_RUNTIME_DIR", runtime.toString()),
                world.tmp, uid, "Linux", null, world.root.resolve("no-proc-sys"));
        try (Preparation prepared = Preparation.start(outside)) {
            assertThat(prepared.gitLayout()).isEqualTo(GitLayout.discover(world.tmp));
        }
    }
}
