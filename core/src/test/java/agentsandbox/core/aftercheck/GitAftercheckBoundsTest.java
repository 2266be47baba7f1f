// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.aftercheck;

import agentsandbox.core.SandboxException;
import agentsandbox.core.run.ToolHomes;
import agentsandbox.core.run.Unsettled;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check after a run where git obeys what a parser of its own would miss: a byte order
 * mark, gitlinks and hooks behind filler, includes, a planted {@code commondir}; and every
 * bound it reaches, said and refusing the next run.
 */
class GitAftercheckBoundsTest {
    @TempDir
    Path dir;

    private String gitWithInput(Path in, String stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-c", "user.name=t", "-c", "user.email=t@t.invalid",
                "-c", "init.defaultBranch=main"));
        cmd.addAll(List.of(args));
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(in.toFile()).redirectErrorStream(true);
            pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
            pb.environment().put("HOME", dir.toString());
            Process p = pb.start();
            if (stdin != null) {
                p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
            }
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new AssertionError("git " + String.join(" ", args) + " failed: " + out);
            }
            return out.strip();
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private String git(Path in, String... args) {
        return gitWithInput(in, null, args);
    }

    private Path repo(String name) throws IOException {
        Path r = Files.createDirectories(dir.resolve(name));
        git(r, "init", "-q");
        Files.writeString(r.resolve("f"), "x");
        git(r, "add", "f");
        git(r, "commit", "-qm", "one");
        return r;
    }

    /** A nested repository at {@code r/name}, added to r's index as a gitlink; its commit. */
    private String nested(Path r, String name) throws IOException {
        Path n = Files.createDirectories(r.resolve(name));
        git(n, "init", "-q");
        git(n, "commit", "-q", "--allow-empty", "-m", "x");
        String sha = git(n, "rev-parse", "HEAD");
        git(r, "update-index", "--add", "--cacheinfo", "160000," + sha + "," + name);
        return sha;
    }

    /**
     * What the live watch looks at first in a repository right below the project: its own
     * git dir (config, hooks, commondir), without the repositories it leads to, which a
     * sandbox can make slow to find.
     */
    @Test
    void A_Repository_s_Own_Git_Dir_Is_Found_Without_What_It_Leads_To() throws IOException {
        Path r = repo("r");
        nested(r, "zz");
        var layout = agentsandbox.core.git.GitLayout.discover(r);
        agentsandbox.core.git.GitDirs all = agentsandbox.core.git.GitDirs.find(r, layout, null);
        agentsandbox.core.git.GitDirs own = agentsandbox.core.git.GitDirs.own(r, layout, null);
        assertThat(all.gitDirs()).contains(r.resolve("zz/.git"));
        assertThat(own.gitDirs()).containsExactly(layout.orElseThrow().gitDir());
        assertThat(own.watched).contains(r.resolve(".git/config"), r.resolve(".git/hooks"), r.resolve(".git/commondir"))
                .doesNotContain(r.resolve("zz/.git/config"));
    }

    private static List<String> settings(List<GitAftercheck.Finding> findings) {
        return findings.stream().map(f -> f.file().getFileName() + " " + f.setting()).toList();
    }

    private static List<GitAftercheck.Finding> after(GitAftercheck check) {
        return check.after(Duration.ofSeconds(30));
    }

    @Test
    void A_Bom_Before_The_Section_Of_A_Nested_Repository_Config_Is_Read_As_Git_Reads_It() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        nested(r, "zz");
        Files.write(r.resolve("zz/.git/config"), ("\u00ef\u00bb\u00bf[core]fsmonitor = touch pwned\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        assertThat(git(r.resolve("zz"), "config", "core.fsmonitor")).as("git obeys it").isEqualTo("touch pwned");
        List<GitAftercheck.Finding> found = after(check);
        assertThat(settings(found)).containsExactly("config core.fsmonitor");
        assertThat(found.get(0).file()).isEqualTo(r.resolve("zz/.git/config"));
    }

    @Test
    void A_Nested_Repository_After_256_Other_Gitlinks_Is_Reported() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        String sha = nested(r, "zz");
        StringBuilder filler = new StringBuilder();
        for (int i = 0; i < 256; i++) {
            filler.append("160000 ").append(sha).append('\t').append(String.format("a%03d", i)).append('\n');
        }
        gitWithInput(r, filler.toString(), "update-index", "--index-info");
        git(r.resolve("zz"), "config", "core.fsmonitor", "touch pwned");
        assertThat(git(r, "ls-files", "-s").lines().filter(l -> l.startsWith("160000"))).hasSize(257);
        assertThat(settings(after(check))).containsExactly("config core.fsmonitor");
    }

    /**
     * An index the run rewrote with an offset table (with which git's threads read entries
     * from where its offsets say, not one after the other) or as a split index: the gitlinks
     * this check reads may not be the ones git reads, so it is a bound, said and refusing the
     * next run; the same extension before the run is the user's own and no finding.
     */
    @Test
    void An_Index_Rewritten_With_Extensions_That_Change_Which_Entries_Git_Reads_Is_A_Limit() throws IOException {
        Path r = repo("r");
        nested(r, "zz");
        GitAftercheck check = GitAftercheck.before(r);
        git(r, "-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "-c",
                "index.threads=4", "update-index", "--force-write-index");
        List<GitAftercheck.Finding> found = after(check);
        assertThat(found).filteredOn(GitAftercheck.Finding::refusesNextRun).singleElement().satisfies(f -> {
            assertThat(f.file()).isEqualTo(r.resolve(".git/index"));
            assertThat(f.message()).contains("index extension EOIE");
        });

        Path split = repo("split");
        git(split, "update-index", "--split-index");
        check = GitAftercheck.before(split);
        Files.writeString(split.resolve("g"), "y");
        git(split, "add", "g");
        assertThat(after(check)).as("a split index the user made before the run").isEmpty();
    }

    @Test
    void A_Named_Hook_Among_400_Filler_Files_Is_Reported() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        nested(r, "zz");
        Path hooks = r.resolve("zz/.git/hooks");
        for (int i = 0; i < 400; i++) {
            Files.writeString(hooks.resolve(String.format("a%03d", i)), "filler");
        }
        Path hook = Files.writeString(hooks.resolve("post-checkout"), "#!/bin/sh\ntouch pwned\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<GitAftercheck.Finding> found = after(check);
        assertThat(settings(found)).contains("post-checkout hook");
        // the filler is more than the check lists besides the named hooks: said, and the next run refuses
        assertThat(found).filteredOn(f -> f.setting().equals("limit")).singleElement()
                .satisfies(f -> {
                    assertThat(f.file()).isEqualTo(hooks);
                    assertThat(f.refusesNextRun()).isTrue();
                    assertThat(f.message()).contains("stopped early").contains("more than 256");
                });
        assertThat(found).filteredOn(f -> !f.setting().equals("limit"))
                .allSatisfy(f -> assertThat(f.refusesNextRun()).isFalse());
    }

    @Test
    void A_Commondir_Planted_In_The_Repository_Git_Dir_Is_Followed_And_Reported() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        Path common = Files.createDirectories(r.resolve("evil"));
        git(common, "init", "-q", "--bare");
        Files.writeString(common.resolve("config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                + "\tfsmonitor = touch pwned\n");
        Files.writeString(r.resolve(".git/commondir"), "../evil\n");
        assertThat(git(r, "config", "core.fsmonitor")).as("git takes the common dir's config").isEqualTo("touch pwned");
        assertThat(settings(after(check))).containsExactlyInAnyOrder("commondir commondir", "config core.fsmonitor");
    }

    @Test
    void A_Commondir_In_A_Nested_Repository_Leads_To_The_Hooks_Git_Runs() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        nested(r, "zz");
        Path common = Files.createDirectories(r.resolve("shared"));
        git(common, "init", "-q", "--bare");
        Path hook = Files.writeString(common.resolve("hooks/pre-commit"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(hook, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(r.resolve("zz/.git/commondir"), "../../shared\n");
        assertThat(git(r.resolve("zz"), "rev-parse", "--git-common-dir")).endsWith("shared");
        assertThat(settings(after(check))).contains("commondir commondir", "pre-commit hook");
    }

    @Test
    void A_File_Included_By_An_Unchanged_Config_Is_Watched() throws IOException {
        Path r = repo("r");
        git(r, "config", "include.path", "../shared.gitconfig");
        GitAftercheck check = GitAftercheck.before(r);
        Files.writeString(r.resolve("shared.gitconfig"), "[core]\n\tpager = touch pwned\n");
        assertThat(git(r, "config", "core.pager")).isEqualTo("touch pwned");
        List<GitAftercheck.Finding> found = after(check);
        assertThat(settings(found)).containsExactly("shared.gitconfig core.pager");
    }

    @Test
    void Includes_Of_A_New_Config_Are_Followed_From_Its_Directory_And_From_Home() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r, null, dir);
        nested(r, "zz");
        Files.writeString(r.resolve("zz/.git/config"), "[core]\n\trepositoryformatversion = 0\n"
                + "[include]\n\tpath = ../more.cfg\n[includeIf \"onbranch:main\"]\n\tpath = ~/home.cfg\n");
        Files.writeString(r.resolve("zz/more.cfg"), "[Core]\n\tSSHCommand = evil\n");
        Files.writeString(dir.resolve("home.cfg"), "[diff \"x\"]\n\ttextconv = evil\n");
        List<GitAftercheck.Finding> found = after(check);
        assertThat(settings(found)).contains("config include.path", "config includeif.onbranch:main.path",
                "more.cfg core.sshcommand", "home.cfg diff.x.textconv");
        assertThat(found).filteredOn(f -> f.setting().equals("core.sshcommand")).singleElement()
                .satisfies(f -> assertThat(f.message()).contains("included from " + r.resolve("zz/.git/config")));
    }

    @Test
    void Includes_Deeper_Than_Git_Allows_Are_A_Limit() throws IOException {
        Path r = repo("r");
        GitAftercheck check = GitAftercheck.before(r);
        for (int i = 0; i < 12; i++) {
            Files.writeString(r.resolve("inc" + i), "[include]\n\tpath = inc" + (i + 1) + "\n");
        }
        git(r, "config", "include.path", "../inc0");
        List<GitAftercheck.Finding> found = after(check);
        assertThat(found).filteredOn(GitAftercheck.Finding::refusesNextRun).singleElement()
                .satisfies(f -> assertThat(f.message()).contains("more than 10 deep"));
    }

    @Test
    void Nesting_Deeper_Than_The_Check_Follows_Is_A_Limit_Only_When_The_Run_Made_It() throws IOException {
        Path r = repo("r");
        Path at = r;
        for (int level = 0; level < 4; level++) {
            nested(at, "n");
            at = at.resolve("n");
        }
        // four levels before the run: the fourth is beyond the check's reach, and not the run's doing
        GitAftercheck check = GitAftercheck.before(r);
        assertThat(after(check)).isEmpty();

        Path other = repo("other");
        check = GitAftercheck.before(other);
        at = other;
        for (int level = 0; level < 4; level++) {
            nested(at, "n");
            at = at.resolve("n");
        }
        git(at, "config", "core.fsmonitor", "touch pwned");
        Path deepest = at;
        List<GitAftercheck.Finding> found = after(check);
        assertThat(found).filteredOn(f -> f.setting().equals("limit")).singleElement()
                .satisfies(f -> {
                    assertThat(f.file()).isEqualTo(deepest);
                    assertThat(f.refusesNextRun()).isTrue();
                });
    }

    /**
     * What a planted commondir or an include names is watched, never protected: a read-only
     * rule there could show what the policy hides (a secret's directory, say).
     */
    @Test
    void A_Forged_Commondir_Or_An_Include_Is_Watched_But_Never_Offered_For_Protection() throws IOException {
        Path r = repo("r");
        Path secret = Files.createDirectories(dir.resolve("secret"));
        Files.writeString(secret.resolve("config"), "SECRET");
        Files.createDirectories(secret.resolve("hooks"));
        Files.writeString(r.resolve(".git/commondir"), secret + "\n");
        git(r, "config", "--file", ".git/config", "include.path", secret.resolve("config").toString());
        agentsandbox.core.git.GitDirs dirs = agentsandbox.core.git.GitDirs.find(r);
        assertThat(dirs.watched).contains(secret.resolve("config"), secret.resolve("hooks"), r.resolve(".git/commondir"));
        assertThat(dirs.protectable()).contains(r.resolve(".git/config"), r.resolve(".git/hooks"))
                .doesNotContain(secret.resolve("config"), secret.resolve("hooks"));
    }

    /**
     * A nested repository's {@code .git} file that names a git dir outside the project: that
     * git dir is watched, never offered for protection (a read-only rule would show a later
     * sandbox a git dir it cannot otherwise see), and gets no view.
     */
    @Test
    void A_Git_File_Naming_A_Git_Dir_Outside_The_Project_Is_Watched_But_Never_Offered_For_Protection()
            throws IOException {
        Path r = repo("r");
        Path secret = repo("secret").resolve(".git");
        String sha = nested(r, "lib");
        assertThat(sha).isNotEmpty();
        Path inside = r.resolve("lib/.git");
        // the submodule's own git dir moved under the project's modules/: there, it belongs
        Path modules = Files.createDirectories(r.resolve(".git/modules"));
        Files.move(inside, modules.resolve("lib"));
        Files.writeString(inside, "gitdir: ../.git/modules/lib\n");
        agentsandbox.core.git.GitDirs dirs = agentsandbox.core.git.GitDirs.find(r);
        assertThat(dirs.protectable()).contains(modules.resolve("lib/config"));
        // pointed outside the project
        Files.writeString(inside, "gitdir: " + secret + "\n");
        dirs = agentsandbox.core.git.GitDirs.find(r);
        assertThat(dirs.watched).contains(secret.resolve("config"), secret.resolve("hooks"));
        assertThat(dirs.protectable()).contains(r.resolve(".git/config"))
                .doesNotContain(secret.resolve("config"), secret.resolve("hooks"));
    }

    /**
     * A nested repository at a gitlink whose parent directory the sandbox renamed away, with a
     * repository of its own made at the same path: its config is the sandbox's, though a config
     * existed at that path before, and the live watch moves it aside.
     */
    @Test
    void A_Repository_Made_Where_A_Nested_One_Was_Is_Looked_At_As_New() throws IOException {
        Path r = repo("r");
        nested(r, "src/vendor/deep");
        GitAftercheck check = GitAftercheck.before(r);
        Files.move(r.resolve("src"), r.resolve("src_old"));
        Path deep = Files.createDirectories(r.resolve("src/vendor/deep"));
        git(deep, "init", "-q");
        git(deep, "config", "core.fsmonitor", "touch pwned");
        GitLiveWatch watch = GitLiveWatch.start(check);
        List<String> lines = watch.stop();
        assertThat(lines).anySatisfy(l -> assertThat(l).contains("src/vendor/deep/.git/config sets core.fsmonitor"));
        assertThat(deep.resolve(".git/config")).doesNotExist();
    }

    @Test
    void A_Bound_Recorded_After_A_Run_Refuses_The_Next_Until_The_Record_Is_Removed() throws IOException {
        Path state = Files.createDirectories(dir.resolve("state"));
        Path hooks = Files.createDirectories(dir.resolve("hooks"));
        Unsettled.record(state, hooks, ToolHomes.identity(hooks), "the hooks dir holds more than 256 files");
        assertThatThrownBy(() -> Unsettled.check(state)).isInstanceOf(SandboxException.class)
                .hasMessageContaining("the hooks dir holds more than 256 files")
                .satisfies(e -> assertThat(((SandboxException) e).hint()).contains("look at " + hooks)
                        .contains(state.resolve("unsettled").toString()));
        try (var records = Files.list(state.resolve("unsettled"))) {
            for (Path record : records.toList()) {
                Files.delete(record); // the user has looked
            }
        }
        Unsettled.check(state);
    }
}
