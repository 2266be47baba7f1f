// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The git guard where the sandboxed process may not use Unix sockets (as inside the
 * sandboxes of Codex and Claude Code), and under hostile requests: a FIFO in git's
 * config, a huge sparse {@code .git} file, a flood of connections and malformed requests.
 */
class GuardFaultsIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @BeforeEach
    void repository() {
        sandbox.write("a.txt", "first line\n");
        sandbox.git("init", "-q");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");
        sandbox.git("branch", "feature");
        sandbox.write("a.txt", "first line\nuncommitted line\n");
        sandbox.write(".git/info/exclude", "no-unix-sockets\n");
    }

    /** The seccomp helper built by the launcher's `make check`, copied where the sandbox sees it. */
    private Path helper() throws IOException {
        Path built = Path.of("..", "launcher", "target", "no-unix-sockets").toAbsolutePath().normalize();
        assertThat(built).as("the launcher's test helper (make check)").isExecutable();
        Path copy = sandbox.project("no-unix-sockets");
        Files.copy(built, copy, StandardCopyOption.REPLACE_EXISTING);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwxr-xr-x"));
        sandbox.chown(copy);
        return copy;
    }

    @Test
    void Without_Unix_Sockets_The_Same_Rules_Decide_Inside_The_Sandbox() throws IOException {
        helper();
        String script = String.join("\n",
                "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null && echo SOCKETS-ALLOWED",
                "git status --short >/dev/null && echo STATUS-OK",
                // a blocked command stays blocked, its report to the host simply not made
                "rm a.txt; echo rm=$?",
                "git checkout -- a.txt; echo checkout=$?",
                "git branch -D feature; echo branch=$?",
                "git stash -q && git stash apply -q && echo STASH-OK",
                "git -c user.name=t -c user.email=t@x commit -q -am work && git reset -q --soft HEAD~1 && echo COMMIT-OK",
                "git init -q /tmp/t && cd /tmp/t && git -c user.name=t -c user.email=t@x commit -q --allow-empty -m t"
                        + " && git reset -q --hard && git branch -D nothing 2>/dev/null; git clean -fdq && echo TMP-OK");
        Result r = sandbox.run("--cmd", "rm=false", "--", "./no-unix-sockets", "sh", "-c", script).succeeds();

        assertThat(r.stdout()).doesNotContain("SOCKETS-ALLOWED")
                .contains("STATUS-OK", "rm=1", "checkout=1", "branch=1", "STASH-OK", "COMMIT-OK", "TMP-OK");
        assertThat(r.stderr()).contains(
                "agent-sandbox: git checkout is not allowed in this sandbox",
                "agent-sandbox: git branch -D is not allowed in this sandbox",
                "agent-sandbox: rm is blocked in this sandbox (its command rule is false)\n")
                .doesNotContain("guard unavailable");
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("first line\nuncommitted line\n");
        assertThat(sandbox.runOnHost("git", "branch", "--list", "feature").succeeds().stdout()).contains("feature");
    }

    @Test
    void Hostile_Requests_Get_An_Answer_Or_A_Closed_Connection_And_Leave_Nothing_Behind() {
        String flood = String.join("\n",
                "import socket, sys, resource",
                "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)",
                "resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))",
                "import time",
                "path = '/run/agent-sandbox/guard/socket'",
                // the guard starts listening once the sandbox runs; like the launcher, wait for it
                "def connect(s):",
                "    for attempt in range(600):",
                "        try:",
                "            return s.connect(path)",
                "        except (FileNotFoundError, ConnectionRefusedError, BlockingIOError):",
                "            time.sleep(0.005)",
                "    raise OSError('the guard never listened')",
                "held = []",
                "for i in range(min(1500, hard - 100)):",
                "    s = socket.socket(socket.AF_UNIX)",
                "    connect(s)",
                "    s.send(b'AGS2\\0/\\0\\0' if i % 2 else b'AGS')",
                "    held.append(s)",
                "def ask(data):",
                "    s = socket.socket(socket.AF_UNIX)",
                "    s.settimeout(20)",
                "    connect(s)",
                "    try:",
                "        s.sendall(data)",
                "        s.shutdown(socket.SHUT_WR)",
                "        return s.recv(200)",
                "    except OSError:",
                "        return b'closed'",
                "    finally:",
                "        s.close()",
                "answers = [ask(b'AGS1\\0'), ask(b'AGS2\\0/\\0\\0' + b'99999999\\0'), ask(b'AGS2\\0/\\0\\0' + b'0\\0' + b'0\\0'),",
                "           ask(b'AGS2\\0' + b'x' * (2 << 20)), ask(b'\\0' * 100000)]",
                "for a in answers:",
                "    assert a == b'closed' or a == b'' or a.startswith(b'D '), a",
                "print('FLOOD-ANSWERED', len(held))",
                "sys.stdout.flush()",
                "import subprocess",
                "ok = subprocess.run(['git', 'status', '--short'], stdout=subprocess.DEVNULL).returncode",
                "print('STATUS-DURING-FLOOD', ok)");
        String script = String.join("\n",
                "set -u",
                "python3 -c \"$FLOOD\" 2>&1 | tail -n 3",
                // a FIFO in a repository's config: git blocks reading it inside, the guard gives up in time
                "mkdir fifo-repo && cd fifo-repo && git init -q && mkfifo fifo && git config include.path ../fifo",
                "git frobnicate 2>/dev/null; echo fifo-alias=$?",
                "git reset --hard 2>/dev/null; echo fifo-reset=$?",
                "cd .. && rm -rf fifo-repo",
                // a huge sparse .git file in the private temp dir
                "mkdir /tmp/big && truncate -s 1500M /tmp/big/.git && cd /tmp/big",
                "git reset --hard 2>/dev/null; echo big=$?",
                "cd \"$P\"",
                "git checkout -- a.txt");
        long start = System.nanoTime();
        Result r = sandbox.command("--", "sh", "-c", "P=$(pwd); export P; " + script)
                .env("FLOOD", flood).run();
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(r.stdout()).contains("FLOOD-ANSWERED ", "STATUS-DURING-FLOOD 0", "fifo-alias=1",
                "fifo-reset=1", "big=").doesNotContain("big=0");
        // the one refusal the script lets through to stderr, then the run's line pointing to the denial log
        assertThat(r.stderr()).startsWith("agent-sandbox: git checkout is not allowed in this sandbox: it can"
                + " overwrite uncommitted changes; use git switch to change branches (git switch -c to create one),"
                + " git restore --staged to unstage\n")
                // (and what the live watch of the git dirs moved aside: the script's fifo repository's config)
                .matches("(?s)[^\n]*\n(agent-sandbox: after the run: [^\n]*\n)*agent-sandbox: this run refused \\d+"
                        + " things \\(\\d+ git commands(, \\d+ other)?\\); see them with: agent-sandbox log\n");
        assertThat(took).isLessThan(Duration.ofSeconds(40));
        assertThat(sandbox.read(sandbox.project("a.txt"))).isEqualTo("first line\nuncommitted line\n");
        SandboxCli.awaitNoHostProcessWith(sandbox.world().toString(), Duration.ofSeconds(2), "after the run");
        assertThat(SandboxCli.hostProcessesWith("alias.frobnicate")).as("git run on the host").isEmpty();
    }
}
