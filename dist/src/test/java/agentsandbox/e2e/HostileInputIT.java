// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Hostile names and values: paths and arguments with spaces, line breaks, quotes, globs,
 * leading dashes, bytes that are not UTF-8, very long names, very many arguments, odd
 * HOME values, a working directory that is gone, a bwrap that cannot run. Each either
 * works exactly as with a plain name, or is refused in one line with status 1 and
 * nothing left behind.
 */
class HostileInputIT {

    /** Names a user may well have on disk; each must get exactly the rule written for it. */
    private static final List<String> HOSTILE_NAMES = List.of(
            "with space", "line\nbreak", "single'quote", "double\"quote", "star*", "-leading-dash",
            "$(echo injected)", "back\\slash", "tab\there", "ünïcødé ✓");

    /** Prints whether the directory $1 is writable and whether $1/secret can be read. */
    private static final String ACCESS_PROBE = """
            if (echo x > "$1/new") 2>/dev/null; then echo writable; else echo read-only; fi
            if cat "$1/secret" >/dev/null 2>&1; then echo readable; else echo hidden; fi
            """;

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    // ------------------------------------------------------------------ names in rules

    @ParameterizedTest
    @ValueSource(strings = {"flags", "flags with =", "project config", "config given with -c"})
    void Rules_On_Hostile_Names_Apply_To_Exactly_Those_Paths(String source) {
        List<String> flags = new ArrayList<>();
        List<String> ro = new ArrayList<>();
        List<String> exclude = new ArrayList<>();
        for (String name : HOSTILE_NAMES) {
            sandbox.write(name + "/secret", "secret\n");
            // in a rule a backslash makes the next character literal, so it is written twice
            ro.add(name.replace("\\", "\\\\"));
            exclude.add(name.replace("\\", "\\\\") + "/secret");
        }
        sandbox.mkdirs("plain");
        switch (source) {
            case "flags" -> {
                ro.forEach(n -> flags.addAll(List.of("--ro", n)));
                exclude.forEach(n -> flags.addAll(List.of("--exclude", n)));
            }
            case "flags with =" -> {
                ro.forEach(n -> flags.add("--ro=" + n));
                exclude.forEach(n -> flags.add("--exclude=" + n));
            }
            case "project config" -> sandbox.write(".agent-sandbox.json", config(ro, exclude));
            default -> {
                sandbox.write(sandbox.world().resolve("policy dir/it's \"mine\".json"), config(ro, exclude));
                flags.addAll(List.of("-c", sandbox.world().resolve("policy dir/it's \"mine\".json").toString()));
            }
        }

        for (String name : HOSTILE_NAMES) {
            sandbox.command(with(flags, "--", "sh", "-c", ACCESS_PROBE, "probe", name)).run()
                    .succeeds().stdoutIs("read-only\nhidden\n").stderrIsEmpty();
            assertThat(sandbox.project(name).resolve("new")).as("a write into %s", name).doesNotExist();
            assertThat(sandbox.read(sandbox.project(name).resolve("secret"))).isEqualTo("secret\n");
        }
        sandbox.command(with(flags, "--", "sh", "-c", ACCESS_PROBE, "probe", "plain")).run()
                .succeeds().stdoutIs("writable\nhidden\n");
        assertThat(sandbox.project("plain/new")).exists();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Glob_Characters_In_A_Rule_Match_Names_That_Contain_Them_Too() {
        sandbox.mkdirs("star*");
        sandbox.mkdirs("starlight");

        sandbox.writeProbe(List.of("--ro", "star*"), "star*", "starlight").run().succeeds().stdoutIs("""
                star*: Read-only file system
                starlight: Read-only file system
                """);
    }

    @ParameterizedTest
    @ValueSource(strings = {"with space", "line\nbreak", "single'quote", "double\"quote", "star*", "-leading-dash",
            "ünïcødé ✓"})
    void Project_With_A_Hostile_Name_Works_As_The_Working_Directory(String name) {
        Path project = sandbox.mkdirs(name);
        sandbox.write(project.resolve(".agent-sandbox.json"), "{\"filesystem\": {\"ro\": [\"docs\"]}}");
        sandbox.mkdirs(project.resolve("docs"));

        sandbox.command("--", "sh", "-c", "pwd; echo made > made; echo x > docs/x || echo docs read-only")
                .cwd(project).run()
                .succeeds().stdoutIs(project + "\ndocs read-only\n");
        sandbox.command("--cwd", project.toString(), "--", "sh", "-c", "pwd").run()
                .succeeds().stdoutIs(project + "\n");

        assertThat(sandbox.read(project.resolve("made"))).isEqualTo("made\n");
        assertThat(project.resolve("docs/x")).doesNotExist();
    }

    // ------------------------------------------------------------------ arguments and environment

    @Test
    void Hostile_Arguments_Reach_The_Command_Unchanged() {
        List<String> hostile = List.of("", " ", "a b", "line\nbreak\n", "'", "\"", "*", "?", "[a]", "-n", "--",
                "--ro", "--dry-run", "-h", "$HOME", "`id`", "$(id)", "\\", "\t", "ünïcødé ✓ 🐧", "~", "a=b");

        sandbox.command(with(with(List.of("--"), "sh", "-c", "printf '%s\\0' \"$@\"", "sh"), hostile)).run()
                .succeeds()
                .stdoutIs(hostile.stream().map(a -> a + "\0").collect(Collectors.joining()))
                .stderrIsEmpty();
    }

    @Test
    void Eight_Thousand_Arguments_Reach_The_Command_All_And_In_Order() {
        List<String> many = IntStream.rangeClosed(1, 8000).mapToObj(i -> "arg " + i).toList();

        sandbox.command(with(with(List.of("--"), "sh", "-c", "printf '%s\\n' \"$@\"", "sh"), many)).run()
                .succeeds()
                .stdoutIs(many.stream().map(a -> a + "\n").collect(Collectors.joining()));
    }

    /**
     * bwrap takes at most 9000 arguments in all; a command with more is handed to the
     * sandbox's first program in a file, so it gets them all, in order, as the kernel
     * allows outside a sandbox.
     */
    @ParameterizedTest
    @ValueSource(ints = {10_000, 50_000})
    void More_Arguments_Than_Bwrap_Takes_Reach_The_Command_All_And_In_Order(int count) {
        List<String> many = IntStream.rangeClosed(1, count).mapToObj(i -> i % 1000 == 0 ? "" : "arg " + i).toList();

        sandbox.command(with(with(List.of("--"), "sh", "-c", "printf '%s\\n' \"$@\"", "sh"), many)).run()
                .succeeds()
                .stdoutIs(many.stream().map(a -> a + "\n").collect(Collectors.joining()))
                .stderrIsEmpty();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @Test
    void Environment_Values_With_Line_Breaks_And_Quotes_Arrive_Unchanged() {
        String value = "first\nsecond\n\n'single' \"double\" $HOME `id` \\ *\n";

        sandbox.command("--", "sh", "-c", "printf '%s' \"$HOSTILE\"").env("HOSTILE", value).run()
                .succeeds().stdoutIs(value);
    }

    @Test
    void Empty_Environment_Value_Arrives_Set_And_Empty() {
        sandbox.command("--", "sh", "-c", "echo \"${EMPTY-unset}|${EMPTY:-empty}\"").env("EMPTY", "").run()
                .succeeds().stdoutIs("|empty\n");
    }

    // ------------------------------------------------------------------ bytes that are not UTF-8

    @Test
    void Environment_Value_That_Is_Not_UTF_8_Arrives_Byte_For_Byte() {
        String show = "printf '%s' \"$RAW\" | od -An -c";
        Result host = sandbox.runOnHost("sh", "-c", "RAW=$(printf 'a\\377\\376b\\303') && export RAW && " + show)
                .succeeds();
        assertThat(host.stdout()).contains("377");

        sandbox.runOnHost("sh", "-c", "RAW=$(printf 'a\\377\\376b\\303') && export RAW && exec \"$0\" -- sh -c \"$1\"",
                        sandbox.launcher().toString(), show)
                .succeeds().stdoutIs(host.stdout()).stderrIsEmpty();
    }

    @Test
    void UTF_8_Arguments_And_Names_Work_Whatever_The_Callers_Locale() {
        String word = "ünïcødé ✓";
        sandbox.write(word + "/secret", "secret\n");

        for (String locale : List.of("C", "POSIX")) {
            sandbox.command("--exclude", word + "/secret", "--", "sh", "-c",
                            "printf '%s|%s|' \"$1\" \"$LC_ALL\"; cat \"$1/secret\" 2>/dev/null || echo hidden", "sh", word)
                    .env("LANG", null).env("LC_ALL", locale).run()
                    .succeeds().stdoutIs(word + "|" + locale + "|hidden\n").stderrIsEmpty();
        }
        sandbox.command("--", "sh", "-c", "echo \"${LC_ALL-unset}\"").env("LANG", null).run()
                .succeeds().stdoutIs("unset\n");
    }

    @Test
    void Argument_That_Is_Not_UTF_8_Is_Refused_Rather_Than_Changed() {
        Result result = sandbox.runOnHost("sh", "-c", "exec \"$0\" -- sh -c 'echo ran > ran' sh \"$(printf 'a\\377')\"",
                sandbox.launcher().toString());

        assertOneLineError(result).stderrContains("argument 6 is not valid UTF-8");
        assertThat(sandbox.project("ran")).doesNotExist();
    }

    @Test
    void Rule_Path_That_Is_Not_UTF_8_Is_Refused_Rather_Than_Silently_Skipped() {
        sandbox.runOnHost("sh", "-c", "d=$(printf 'secret\\377') && mkdir \"$d\" && echo secret > \"$d/key\"")
                .succeeds();

        Result result = sandbox.runOnHost("sh", "-c", "exec \"$0\" --exclude \"$(printf 'secret\\377')\" -- cat"
                + " \"$(printf 'secret\\377')/key\"", sandbox.launcher().toString());

        assertOneLineError(result).stdoutIsEmpty().stderrContains("not valid UTF-8");
    }

    @Test
    void Glob_Matching_A_Name_That_Is_Not_UTF_8_Is_Refused_And_Creates_Nothing() {
        sandbox.runOnHost("sh", "-c", "mkdir keys && echo secret > \"keys/id$(printf '\\377')\"").succeeds();

        Result result = sandbox.run("--exclude", "keys/id*", "--", "sh", "-c", "cat keys/id*");

        assertOneLineError(result).stdoutIsEmpty()
                .stderrContains("rule 'keys/id*' matches", "not valid UTF-8", "rename it");
        sandbox.runOnHost("sh", "-c", "ls -b keys").succeeds().stdoutIs("id\\377\n");
    }

    @Test
    void Names_That_Are_Not_UTF_8_Below_A_Rule_Get_Its_Access() {
        sandbox.runOnHost("sh", "-c", "mkdir docs secrets && for d in docs secrets; do"
                + " echo kept > \"$d/$(printf 'f\\377')\"; done").succeeds();

        sandbox.run("--ro", "docs", "--exclude", "secrets", "--", "sh", "-c",
                        "f=$(printf 'f\\377'); cat \"docs/$f\"; echo x > \"docs/$f\" 2>/dev/null || echo read-only;"
                                + " ls -A secrets | wc -l; echo made > \"$(printf 'new\\377')\"")
                .succeeds().stdoutIs("kept\nread-only\n0\n");

        sandbox.runOnHost("sh", "-c", "cat \"docs/$(printf 'f\\377')\" \"secrets/$(printf 'f\\377')\""
                + " \"$(printf 'new\\377')\"").succeeds().stdoutIs("kept\nkept\nmade\n");
    }

    @Test
    void Working_Directory_That_Is_Not_UTF_8_Is_Refused_In_One_Line() {
        Result result = sandbox.runOnHost("sh", "-c", "d=$(printf 'dir\\377') && mkdir \"$d\" && cd \"$d\" &&"
                + " exec \"$0\" -- sh -c 'echo ran > ran'", sandbox.launcher().toString());

        assertOneLineError(result).stderrContains("current directory is not valid UTF-8");
        sandbox.runOnHost("sh", "-c", "ls -A \"$(printf 'dir\\377')\"").succeeds().stdoutIsEmpty();
    }

    // ------------------------------------------------------------------ long names

    @Test
    void File_Name_Of_255_Bytes_Gets_Its_Rule() {
        String name = "n".repeat(255);
        sandbox.write(name, "secret\n");
        sandbox.mkdirs("d".repeat(253) + "é");

        sandbox.run("--exclude", name, "--ro", "d".repeat(253) + "é", "--", "sh", "-c",
                        "cat \"$1\" 2>/dev/null || echo hidden; echo x > \"$2/x\" 2>/dev/null || echo read-only",
                        "sh", name, "d".repeat(253) + "é")
                .succeeds().stdoutIs("hidden\nread-only\n");
    }

    @Test
    void Path_Near_PATH_MAX_Gets_Its_Rule_And_Works_As_The_Working_Directory() {
        Path deep = sandbox.project();
        while (4090 - "/file".length() - deep.toString().length() - 1 > 255) {
            deep = deep.resolve("s".repeat(250));
        }
        Path dir = sandbox.mkdirs(deep.resolve("x".repeat(4090 - deep.toString().length() - "/file".length() - 1)));
        Path file = sandbox.write(dir.resolve("file"), "deep\n");
        assertThat(file.toString().length()).isEqualTo(4090);

        sandbox.run("--ro", dir.toString(), "--", "sh", "-c", "cat \"$1\"; echo x >> \"$1\" 2>/dev/null || echo read-only",
                "sh", file.toString()).succeeds().stdoutIs("deep\nread-only\n");
        sandbox.command("--", "sh", "-c", "pwd | wc -c; echo here > here").cwd(dir).run()
                .succeeds().stdoutIs((dir.toString().length() + 1) + "\n");

        assertThat(sandbox.read(file)).isEqualTo("deep\n");
        assertThat(sandbox.read(dir.resolve("here"))).isEqualTo("here\n");
    }

    // ------------------------------------------------------------------ dry run

    @Test
    void Dry_Run_Line_For_Hostile_Names_Is_One_Line_That_Runs_The_Same_Command() {
        List<String> args = List.of("line\nbreak", "it's", "\"", "*", "-n", "$HOME", "\t", "ünï ✓", "\\n");
        Path project = sandbox.mkdirs("pro ject\n'it's'");
        sandbox.mkdirs(project.resolve("docs\n*"));

        sandbox.homesFallback(); // a pasted line has no layers made for it
        Result dry = sandbox.command(with(List.of("--dry-run", "--cmd", "git=true", "--ro", "docs\n*", "--",
                        "sh", "-c", "printf '%s\\0' \"$@\"; pwd; echo x > \"docs\n*/x\" || echo read-only", "sh"), args))
                .cwd(project).run()
                .succeeds().stderrIsEmpty()
                .stdoutSatisfies(out -> out.hasLineCount(1).endsWith("\n"));

        // what a real run creates first: its directory (private /tmp, the stand-in file)
        String line = dry.stdout().strip();
        String id = line.replaceAll("(?s).*agent-sandbox/run/([0-9a-f]{16}).*", "$1");
        Path run = sandbox.home(".local/state/agent-sandbox/run/" + id);
        String sockets = "/tmp/agent-sandbox-" + sandbox.uid() + "/" + id;
        sandbox.runOnHost("sh", "-c", "mkdir -p -m 700 \"$0/tmp\" \"$1/net\" && : > \"$0/hidden\" && : > \"$0/policy\" && : > \"$0/mounts\" && "
                + sandbox.gitViewFiles("\"$0\""),
                run.toString(),
                sockets).succeeds();
        Result pasted = sandbox.runOnHost("bash", "-c", "cd / && " + line);

        pasted.succeeds().stdoutIs(args.stream().map(a -> a + "\0").collect(Collectors.joining())
                + project + "\nread-only\n");
        assertThat(project.resolve("docs\n*/x")).doesNotExist();
        sandbox.runOnHost("rm", "-rf", run.toString(), sockets).succeeds();
    }

    // ------------------------------------------------------------------ HOME

    @Test
    void Unset_HOME_Falls_Back_To_The_Accounts_Home_And_Is_Refused_In_One_Line_When_That_Is_Missing() {
        Result result = sandbox.command("--", "sh", "-c", "echo ran > ran").env("HOME", null).run();

        assertAccountHomeUsed(result);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "relative/home"})
    void Empty_Or_Relative_HOME_Is_Taken_As_Unset(String home) {
        sandbox.mkdirs("relative/home");

        Result result = sandbox.command("--", "sh", "-c", "echo ran > ran").env("HOME", home).run();

        assertAccountHomeUsed(result);
    }

    /**
     * Without a usable HOME, the account's home directory from the user database applies:
     * when it exists the command runs; when it is missing (nobody's /nonexistent) @base
     * refuses, in one line naming it.
     */
    private void assertAccountHomeUsed(Result result) {
        Path accountHome = accountHome();
        if (Files.isDirectory(accountHome)) {
            result.succeeds();
            assertThat(sandbox.project("ran")).exists();
        } else {
            assertOneLineError(result).stdoutIsEmpty().stderrContains("home directory " + accountHome, "@base");
            assertThat(sandbox.project("ran")).doesNotExist();
        }
    }

    private Path accountHome() {
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] fields = line.split(":", -1);
                if (fields.length > 5 && fields[2].equals(Integer.toString(sandbox.uid()))) {
                    return Path.of(fields[5]);
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot read /etc/passwd: " + e.getMessage(), e);
        }
        throw new AssertionError("uid " + sandbox.uid() + " is not in /etc/passwd");
    }

    @Test
    void Unset_HOME_Is_Fine_When_Base_Is_Off_And_Stays_Unset_Inside() {
        // a policy of the user's own (-c): turning @base off loosens, so a project config would need trust
        Path policy = sandbox.write(sandbox.world().resolve("policies/no-base.json"),
                "{\"filesystem\": {\"presets\": [\"!@base\"]}}");

        sandbox.command("-c", policy.toString(), "--", "sh", "-c", "echo \"${HOME-unset}\"").env("HOME", null).run()
                .succeeds().stdoutIs("unset\n");
    }

    // ------------------------------------------------------------------ the working directory gone

    @Test
    void Working_Directory_Removed_Before_Start_Is_Refused_In_One_Line() {
        for (String flag : List.of("--", "--dry-run")) {
            Result result = sandbox.runOnHost("sh", "-c", "mkdir gone && cd gone && rmdir ../gone && exec \"$0\" "
                    + flag + " sh -c 'echo ran > /tmp/ran'", sandbox.launcher().toString());

            assertOneLineError(result).stdoutIsEmpty().stderrContains("current directory no longer exists");
        }
        assertThat(sandbox.tmp()).isEmptyDirectory();
    }

    // ------------------------------------------------------------------ bwrap that cannot run

    @Test
    void Bwrap_That_Fails_With_Garbage_Gives_One_Line_Of_Its_Own_And_Leaves_No_Runtime_Dir() throws IOException {
        String garbage = "\u001b[31mgarbage\r\n\u0007more garbage\nand\ta third line";
        Path fakeBin = fakeBwrap("#!/bin/sh\nprintf '%s\\n' '" + garbage + "' >&2\nexit 1\n", "rwxr-xr-x");

        Result result = sandbox.command("--", "sh", "-c", "echo ran > ran")
                .env("PATH", fakeBin + ":" + SandboxCli.PATH).run().exitsWith(1).stdoutIsEmpty();

        // bwrap failed before the command started: its words appear once, inside agent-sandbox's
        // one line, with the control characters made visible, and never raw on the terminal
        result.failsWithOneLineError();
        assertThat(result.stderr()).as(() -> result.describe("an error quoting bwrap"))
                .contains("bwrap cannot create a sandbox", "garbage").doesNotContain("\u001b", "\u0007", "\r");
        assertNoTrace(result);
        assertThat(sandbox.project("ran")).doesNotExist();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"not executable", "a directory"})
    void Bwrap_On_PATH_That_Cannot_Be_Run_Is_Passed_Over_Like_A_Shell_Does(String kind) throws IOException {
        Path fakeBin = kind.equals("a directory")
                ? sandbox.mkdirs(sandbox.world().resolve("fake-bin/bwrap")).getParent()
                : fakeBwrap("#!/bin/sh\necho fake\n", "rw-r--r--");

        sandbox.command("--", "echo", "ran").env("PATH", fakeBin + ":" + SandboxCli.PATH).run()
                .succeeds().stdoutIs("ran\n").stderrIsEmpty();
        assertOneLineError(sandbox.command("--", "echo", "ran").env("PATH", fakeBin.toString()).run())
                .stdoutIsEmpty().stderrContains("bwrap not found on PATH", "install bubblewrap");
    }

    // ------------------------------------------------------------------ helpers

    /** A directory of root's with a file bwrap of that content and mode, to put first on PATH. */
    private Path fakeBwrap(String content, String mode) throws IOException {
        return sandbox.systemProgram("fake-bin", "bwrap", content, mode).getParent();
    }

    /** Status 1, one line of agent-sandbox's own on stderr, no trace, no runtime dir left. */
    private Result assertOneLineError(Result result) {
        result.failsWithOneLineError();
        assertNoTrace(result);
        assertThat(sandbox.runtimeDirsInTmp()).as(() -> result.describe("no runtime dir left")).isEmpty();
        return result;
    }

    private static void assertNoTrace(Result result) {
        result.stderrDoesNotContain("Exception", "\tat ", "Error occurred");
    }

    /** A JSON config with these ro and exclude entries. */
    private static String config(List<String> ro, List<String> exclude) {
        return "{\"filesystem\": {\"ro\": [" + ro.stream().map(HostileInputIT::json).collect(Collectors.joining(", "))
                + "], \"exclude\": [" + exclude.stream().map(HostileInputIT::json).collect(Collectors.joining(", "))
                + "]}}\n";
    }

    private static String json(String text) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private static String[] with(List<String> first, String... rest) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }

    private static String[] with(List<String> first, List<String> rest) {
        return with(first, rest.toArray(String[]::new));
    }

    private static String[] with(String[] first, List<String> rest) {
        return with(List.of(first), rest.toArray(String[]::new));
    }
}
