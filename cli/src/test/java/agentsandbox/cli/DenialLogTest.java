// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import agentsandbox.core.SandboxException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The denial log's file: bounded, rotated, private, never through a link; read back by {@code log}. */
class DenialLogTest {
    @TempDir
    Path dir;

    private static DenialLog.Run run(String id, Instant at, String project, int gitRefusals) {
        List<DenialLog.Entry> entries = new ArrayList<>();
        for (int i = 0; i < gitRefusals; i++) {
            entries.add(new DenialLog.Entry("git", "git checkout . # " + i + " \u001b]52;c;x\u0007\n\"",
                    "git checkout is not allowed in this sandbox"));
        }
        return new DenialLog.Run(id, at, at.plusSeconds(3), project, List.of("sh", "-c", "git checkout ."),
                "ab".repeat(32), 1, gitRefusals, entries);
    }

    @Test
    void Ten_Thousand_Refusals_Keep_The_Log_Bounded_And_Rotated() throws IOException {
        CliWorld w = new CliWorld(dir);
        Instant t = Instant.parse("2026-11-26T20:00:00Z");
        for (int r = 0; r < 250; r++) {
            DenialLog.append(w.environment(), run("run" + r, t.plusSeconds(r), w.project.toString(), 100));
        }
        DenialLog.append(w.environment(), run("huge", t.plusSeconds(1000), w.project.toString(), 10_000));
        Path log = w.home.resolve(".local/state/agent-sandbox/log");
        long total = 0;
        try (var files = Files.list(log)) {
            for (Path f : files.toList()) {
                assertThat(f.getFileName().toString()).isIn(DenialLog.FILE, DenialLog.OLD_FILE);
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo("rw-------");
                total += Files.size(f);
            }
        }
        assertThat(total).as("bytes on disk").isLessThanOrEqualTo(2 * DenialLog.MAX_BYTES);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(log))).isEqualTo("rwx------");
        List<DenialLog.Run> runs = DenialLog.read(w.environment());
        DenialLog.Run last = runs.getLast();
        assertThat(last.id()).isEqualTo("huge");
        assertThat(last.refused()).isEqualTo(10_000);
        assertThat(last.entries()).hasSize(DenialLog.MAX_ENTRIES);
        assertThat(runs.size()).isLessThan(251); // the oldest went with the rotation
        assertThat(log.resolve(DenialLog.OLD_FILE)).isRegularFile();
        // one line a run: a refused command line's newlines and quotes stay inside its string
        assertThat(Files.readAllLines(log.resolve(DenialLog.FILE))).allMatch(l -> l.startsWith("{\"version\":1,"));
    }

    @Test
    void Log_Shows_The_Last_Run_By_Default_Filters_And_Prints_Json() {
        CliWorld w = new CliWorld(dir);
        Path other = w.home.resolve("other");
        Instant now = Instant.now();
        DenialLog.append(w.environment(), run("old", now.minusSeconds(7200), w.project.toString(), 1));
        DenialLog.append(w.environment(), run("elsewhere", now.minusSeconds(60), other.toString(), 2));
        DenialLog.append(w.environment(), run("nothing", now.minusSeconds(30), w.project.toString(), 0));

        CliWorld.Result last = w.run("log");
        assertThat(last.status()).isZero();
        assertThat(last.out()).startsWith("run nothing, ").contains("in ~/project: sh -c git checkout .")
                .contains("nothing refused").doesNotContain("run old");

        CliWorld.Result project = w.run("log", "--project", ".");
        assertThat(project.out()).contains("run old").contains("run nothing").doesNotContain("elsewhere")
                .contains("  git      git checkout . # 0").doesNotContain("\u001b");

        CliWorld.Result since = w.run("log", "--since", "1h", "--json");
        Jsonc.Obj top = JsonOutputTest.object(JsonOutputTest.parse(since.out()), "version", "runs");
        JsonOutputTest.version1(top);
        List<Jsonc.Value> runs = JsonOutputTest.array(top, "runs");
        assertThat(runs).hasSize(2);
        Jsonc.Obj r = JsonOutputTest.object(runs.getFirst(), "version", "id", "start", "end", "project", "command",
                "policy", "status", "refused", "entries");
        assertThat(JsonOutputTest.string(r, "id")).isEqualTo("elsewhere");
        for (Jsonc.Value e : JsonOutputTest.array(r, "entries")) {
            Jsonc.Obj entry = JsonOutputTest.object(e, "kind", "what", "why", "source");
            assertThat(JsonOutputTest.string(entry, "kind")).isIn("git", "network", "command", "file");
            assertThat(JsonOutputTest.string(entry, "source")).isIn("host", "sandbox");
        }
        assertThat(w.run("log", "--since", "yesterday").err()).startsWith("agent-sandbox: --since yesterday:");
    }

    @Test
    void A_Link_In_Place_Of_The_Log_File_Is_Never_Followed() throws IOException {
        CliWorld w = new CliWorld(dir);
        Path log = Files.createDirectories(w.home.resolve(".local/state/agent-sandbox/log"));
        Path target = w.write("elsewhere.txt", "keep\n");
        Files.createSymbolicLink(log.resolve(DenialLog.FILE), target);
        assertThatThrownBy(() -> DenialLog.append(w.environment(), run("x", Instant.now(), "/p", 1)))
                .isInstanceOf(SandboxException.class).hasMessageContaining("cannot write the denial log");
        assertThat(Files.readString(target)).isEqualTo("keep\n");
    }

    @Test
    void The_Network_Hook_Reads_Refused_Destinations_As_Entries() throws IOException {
        Path file = Files.writeString(dir.resolve("refused"), "169.254.169.254:80\tlink-local\nexample.org:443\tnot on"
                + " the allow-list\n");
        assertThat(DenialLog.network(file)).containsExactly(
                new DenialLog.Entry("network", "169.254.169.254:80", "link-local"),
                new DenialLog.Entry("network", "example.org:443", "not on the allow-list"));
        assertThat(DenialLog.network(dir.resolve("none"))).isEmpty();
    }

    /**
     * What the sandbox reported (calls of blocked commands) is marked as its word, in the file,
     * in {@code log} and in {@code --json}, and its text cannot leave its JSON string or the
     * terminal line it is shown on.
     */
    @Test
    void Reports_From_The_Sandbox_Are_Marked_As_Such_And_Stay_Data() throws IOException {
        CliWorld w = new CliWorld(dir);
        List<DenialLog.Entry> entries = new ArrayList<>(List.of(new DenialLog.Entry("git", "git checkout .", "no")));
        entries.addAll(DenialLog.blocked(List.of("rm\trm -rf / \u001b]52;c;x\u0007\n\"},{\"kind\":\"git\"\u009b2J")));
        assertThat(entries.get(1)).isEqualTo(new DenialLog.Entry("command",
                "rm -rf / \u001b]52;c;x\u0007\n\"},{\"kind\":\"git\"\u009b2J",
                "rm is blocked in this sandbox (its command rule is false)", true));
        Instant now = Instant.now();
        DenialLog.append(w.environment(), new DenialLog.Run("r", now, now, w.project.toString(), List.of("sh"),
                "ab".repeat(32), 1, 2, entries));
        List<String> lines = Files.readAllLines(w.home.resolve(".local/state/agent-sandbox/log/runs.jsonl"));
        assertThat(lines).hasSize(1);
        assertThat(DenialLog.read(w.environment()).getFirst().entries()).isEqualTo(entries);

        CliWorld.Result text = w.run("log");
        assertThat(text.out()).contains("  git      git checkout .: no\n")
                .contains("  command  rm -rf / \\x1b]52;c;x\\x07\\n\"},{\"kind\":\"git\"\\u009b2J: rm is blocked in this"
                        + " sandbox (its command rule is false) [reported by the sandbox]\n")
                .doesNotContain("\u001b").doesNotContain("\u0007").doesNotContain("\u009b");
        Jsonc.Obj top = JsonOutputTest.object(JsonOutputTest.parse(w.run("log", "--json").out()), "version", "runs");
        Jsonc.Obj run = (Jsonc.Obj) JsonOutputTest.array(top, "runs").getFirst();
        List<Jsonc.Value> shown = JsonOutputTest.array(run, "entries");
        assertThat(shown).hasSize(2);
        assertThat(JsonOutputTest.string((Jsonc.Obj) shown.get(0), "source")).isEqualTo("host");
        assertThat(JsonOutputTest.string((Jsonc.Obj) shown.get(1), "source")).isEqualTo("sandbox");
        assertThat(JsonOutputTest.string((Jsonc.Obj) shown.get(1), "kind")).isEqualTo("command");
    }

    @Test
    void Times_Are_Written_As_Iso_Instants_In_Utc() {
        for (String t : List.of("1970-01-01T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "2026-11-26T20:40:01.123Z",
                "2100-03-01T00:00:00.000Z", "1969-12-31T23:59:59.001Z")) {
            assertThat(DenialLog.iso(Instant.parse(t))).isEqualTo(t);
        }
        Instant now = Instant.now();
        assertThat(Instant.parse(DenialLog.iso(now))).isEqualTo(now.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
    }
}
