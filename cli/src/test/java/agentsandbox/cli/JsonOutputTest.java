// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import agentsandbox.core.text.ShellQuote;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --json} for scripts: each output parses, has exactly the documented shape
 * (docs/json.md), and says what the text says.
 */
class JsonOutputTest {
    @TempDir
    Path dir;

    static Jsonc.Value parse(String text) {
        assertThat(text).endsWith("\n");
        assertThat(text.strip()).as("one line").doesNotContain("\n").doesNotContain("//").doesNotContain("/*");
        try {
            return Jsonc.parse(text);
        } catch (Jsonc.SyntaxError e) {
            throw new AssertionError("not JSON: " + e.getMessage() + ": " + text, e);
        }
    }

    static Jsonc.Obj object(Jsonc.Value v, String... keys) {
        assertThat(v).isInstanceOf(Jsonc.Obj.class);
        Jsonc.Obj o = (Jsonc.Obj) v;
        assertThat(o.members().keySet()).as("keys").containsExactlyInAnyOrder(keys);
        return o;
    }

    static String string(Jsonc.Obj o, String key) {
        Jsonc.Value v = o.members().get(key).value();
        assertThat(v).as(key).isInstanceOf(Jsonc.Str.class);
        return ((Jsonc.Str) v).value();
    }

    static List<Jsonc.Value> array(Jsonc.Obj o, String key) {
        Jsonc.Value v = o.members().get(key).value();
        assertThat(v).as(key).isInstanceOf(Jsonc.Arr.class);
        return ((Jsonc.Arr) v).items();
    }

    static void version1(Jsonc.Obj o) {
        assertThat(o.members().get("version").value()).isInstanceOf(Jsonc.Num.class);
        assertThat(((Jsonc.Num) o.members().get("version").value()).text()).isEqualTo("1");
    }

    @Test
    void Dry_Run_Json_Is_The_Argv_As_An_Array_Of_Strings_Equal_To_The_Shell_Line() {
        CliWorld w = new CliWorld(dir);
        w.write("home/project/a b\tc", "x");
        CliWorld.Result text = w.run("--dry-run", "--ro", "a b\tc", "--", "printf", "%s\\n", "it's");
        CliWorld.Result json = w.run("--dry-run", "--json", "--ro", "a b\tc", "--", "printf", "%s\\n", "it's");
        assertThat(json.status()).isZero();
        Jsonc.Value v = parse(json.out());
        assertThat(v).isInstanceOf(Jsonc.Arr.class);
        List<String> argv = new ArrayList<>();
        for (Jsonc.Value item : ((Jsonc.Arr) v).items()) {
            assertThat(item).isInstanceOf(Jsonc.Str.class);
            argv.add(((Jsonc.Str) item).value());
        }
        assertThat(argv.get(0)).endsWith("bwrap");
        assertThat(argv.subList(argv.size() - 3, argv.size())).containsExactly("printf", "%s\\n", "it's");
        List<String> quoted = new ArrayList<>();
        for (String a : argv) {
            quoted.add(ShellQuote.quote(a));
        }
        // two dry runs differ only in the name of the run's directory
        String runId = "/run/[0-9a-f]{16}/";
        assertThat((String.join(" ", quoted) + "\n").replaceAll(runId, "/run/ID/"))
                .isEqualTo(text.out().replaceAll(runId, "/run/ID/"));
    }

    @Test
    void Json_Without_Dry_Run_Is_A_Usage_Error_Since_A_Commands_Output_Is_Never_Changed() {
        CliWorld.Result r = new CliWorld(dir).run("--json", "true");
        assertThat(r.status()).isEqualTo(1);
        assertThat(r.err()).startsWith("agent-sandbox: --json applies to --dry-run, explain, doctor and log");
    }

    @Test
    void Explain_Json_Has_The_Documented_Shape_And_The_Texts_Lines() {
        CliWorld w = new CliWorld(dir);
        w.write("home/.ssh/id_ed25519", "key");
        w.write("home/project/biome.json", "{}");
        List<String> paths = List.of("~/.ssh", "biome.json", "/tmp", "src/new");
        List<String> args = new ArrayList<>(List.of("--json", "explain"));
        args.addAll(paths);
        CliWorld.Result r = w.run(args.toArray(String[]::new));
        assertThat(r.status()).as(r.err()).isZero();
        Jsonc.Obj top = object(parse(r.out()), "version", "paths");
        version1(top);
        List<Jsonc.Value> blocks = array(top, "paths");
        assertThat(blocks).hasSize(paths.size());
        List<String> textArgs = new ArrayList<>(List.of("explain"));
        textArgs.addAll(paths);
        String text = w.run(textArgs.toArray(String[]::new)).out();
        StringBuilder rebuilt = new StringBuilder();
        for (int i = 0; i < blocks.size(); i++) {
            Jsonc.Obj b = object(blocks.get(i), "path", "level", "detail", "lines");
            assertThat(string(b, "path")).isEqualTo(paths.get(i));
            assertThat(string(b, "level")).isIn("read-write", "read-only", "hidden", "replaced");
            rebuilt.append(i == 0 ? "" : "\n").append(string(b, "path")).append(": ").append(string(b, "level"))
                    .append(string(b, "detail").isEmpty() ? "" : " (" + string(b, "detail") + ")").append('\n');
            for (Jsonc.Value l : array(b, "lines")) {
                Jsonc.Obj line = object(l, "key", "text");
                assertThat(string(line, "key")).isIn(Set.of("path", "tool", "view", "outer", "rule", "beats", "change",
                        "warning"));
                String k = string(line, "key") + ":";
                rebuilt.append("  ").append(k).append(" ".repeat(Math.max(1, 8 - k.length())))
                        .append(string(line, "text")).append('\n');
            }
        }
        assertThat(rebuilt.toString()).isEqualTo(text);
        assertThat(r.out()).contains("\"key\":\"warning\"");
    }

    @Test
    void Doctor_Json_Has_The_Documented_Shape_And_The_Same_Exit_Status() throws IOException {
        CliWorld w = new CliWorld(dir);
        Path bwrap = w.write("bin/bwrap",
                "#!/bin/sh\ncase \"$1\" in --version) echo 'bubblewrap 0.9.0' ;; *) exit 0 ;; esac\n");
        Files.setPosixFilePermissions(bwrap, PosixFilePermissions.fromString("rwxr-xr-x"));
        w.env.put("PATH", bwrap.getParent().toString());
        w.write("proc-sys/user/max_user_namespaces", "63000\n");
        w.write("proc-sys/kernel/seccomp/actions_avail", "kill_process errno allow\n");
        w.write("proc-sys/dev/tty/legacy_tiocsti", "0\n");
        w.procSys = w.root.resolve("proc-sys");
        for (boolean healthy : new boolean[] {true, false}) {
            if (!healthy) {
                w.write("home/project/.agent-sandbox.json", "{\"docker\": true}");
            }
            for (List<String> args : List.of(List.of("--json", "doctor"), List.of("doctor", "--json"))) {
                CliWorld.Result r = w.run(args.toArray(String[]::new));
                assertThat(r.status()).as(r.out()).isEqualTo(healthy ? 0 : 1);
                Jsonc.Obj top = object(parse(r.out()), "version", "canRun", "checks");
                version1(top);
                assertThat(((Jsonc.Bool) top.members().get("canRun").value()).value()).isEqualTo(healthy);
                boolean problem = false;
                for (Jsonc.Value c : array(top, "checks")) {
                    Jsonc.Obj check = object(c, "name", "status", "finding", "fix");
                    assertThat(string(check, "status")).isIn("ok", "warning", "problem");
                    problem |= string(check, "status").equals("problem");
                    assertThat(string(check, "name")).isNotEmpty();
                }
                assertThat(problem).isEqualTo(!healthy);
            }
        }
    }
}
