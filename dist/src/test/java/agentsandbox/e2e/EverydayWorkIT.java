// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import agentsandbox.core.Sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What agents do all day works under the defaults (no config file, every default
 * preset), with the network off: git with a remote, C with make, Java with the
 * machine's JDK, a Python virtual environment, npm, and writes to the caches, /tmp
 * and the project. Each run also checks, in the same sandbox, that the guard rails
 * still hold: {@code ~/.ssh} stays unreadable and {@code .git/hooks} unwritable.
 */
class EverydayWorkIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    private static final String NO_NETWORK = "--network=false";
    private static final String SSH_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\neveryday-secret-key-material\n"
            + "-----END OPENSSH PRIVATE KEY-----\n";

    /**
     * Appended to every script: prints one line per guard rail, from the project root.
     * The key's content must not appear anywhere in the output.
     */
    private static final String GUARD_RAILS = """
            cd "$PROJECT"
            set +e
            if cat "$HOME/.ssh/id_rsa" 2>/dev/null; then echo "guard: ssh key READABLE"; else echo "guard: ssh key unreadable"; fi
            if [ -n "$(ls -A "$HOME/.ssh" 2>/dev/null)" ]; then echo "guard: ssh dir LISTED"; fi
            echo 'exit 0' > .git/hooks/pre-commit 2>/dev/null; echo 'exit 0' >> .git/hooks/pre-push.sample 2>/dev/null
            echo "guard: hooks tried"
            """;

    private Path remote;

    /**
     * A fresh home (an SSH key, nothing else: no tool has run yet), and a project that is a
     * git repository whose remote, a bare repository outside the project, already has
     * a branch pushed by someone else.
     */
    @BeforeEach
    void workplace() throws Exception {
        Path key = sandbox.write(sandbox.home(".ssh/id_rsa"), SSH_KEY);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        Files.setPosixFilePermissions(key.getParent(), PosixFilePermissions.fromString("rwx------"));

        remote = sandbox.mkdirs(sandbox.world().resolve("remote.git"));
        sandbox.git("init", "-q", "--bare", remote.toString());
        sandbox.write("README.md", "# everyday\n");
        sandbox.git("init", "-q");
        sandbox.git("config", "user.name", "Agent Sandbox Test");
        sandbox.git("config", "user.email", "test@agent-sandbox.invalid");
        sandbox.git("add", "README.md");
        sandbox.git("commit", "-q", "-m", "Start");
        sandbox.git("remote", "add", "origin", remote.toString());
        sandbox.git("push", "-q", "-u", "origin", "main");

        Path colleague = sandbox.mkdirs(sandbox.world().resolve("colleague"));
        sandbox.git("clone", "-q", remote.toString(), colleague.toString());
        sandbox.write(colleague.resolve("upstream.txt"), "from upstream\n");
        sandbox.git("-C", colleague.toString(), "switch", "-q", "-c", "upstream");
        sandbox.git("-C", colleague.toString(), "add", "upstream.txt");
        sandbox.git("-C", colleague.toString(), "commit", "-q", "-m", "Upstream work");
        sandbox.git("-C", colleague.toString(), "push", "-q", "origin", "upstream");
    }

    /** Runs the script with {@code sh -e -x} under the defaults with the network off, then the guard rails. */
    private Result work(List<String> flags, Map<String, String> env, String script) {
        List<String> args = new ArrayList<>(flags);
        args.add(NO_NETWORK);
        args.addAll(List.of("--", "sh", "-c", "set -ex\nPROJECT=$(pwd)\n" + script + "\necho WORK-DONE\n"
                + GUARD_RAILS));
        Result result = sandbox.command(args.toArray(String[]::new)).env(env).run().succeeds()
                .stdoutContains("WORK-DONE\n");
        assertGuardRailsHeld(result);
        return result;
    }

    private Result work(String script) {
        return work(List.of(), Map.of(), script);
    }

    /** A tool the test needs on the host, usable by the test user: a clear failure when it is missing. */
    private void requireOnHost(String what, String... command) {
        Result r = sandbox.runOnHost(command);
        assertThat(r.exitCode()).as(() -> r.describe("a working " + what)).isZero();
    }

    private void assertGuardRailsHeld(Result result) {
        // the hooks: writable in the git dir's copy-on-write view, never on the host (below)
        result.stdoutContains("guard: ssh key unreadable\n", "guard: hooks tried\n");
        assertThat(result.stdout() + result.stderr()).as(() -> result.describe("no guard rail given way"))
                .doesNotContain("everyday-secret-key-material", "READABLE", "LISTED", "WRITABLE");
        assertThat(sandbox.project(".git/hooks/pre-commit")).doesNotExist();
        Path sample = sandbox.project(".git/hooks/pre-push.sample");
        if (Files.exists(sample)) {
            assertThat(sandbox.read(sample)).doesNotContain("exit 0\nexit 0");
        }
        assertThat(sandbox.read(sandbox.home(".ssh/id_rsa"))).isEqualTo(SSH_KEY);
    }

    // ------------------------------------------------------------------ git

    @Test
    void Git_Workflow_With_A_Local_Remote_Outside_The_Project() {
        Result result = work(List.of("--rw", remote.toString()), Map.of(), """
                git status --short
                git switch -c feature
                echo feature > feature.txt
                git add feature.txt
                git commit -q -m "Add feature"
                git switch main
                echo 'main change' >> README.md
                git commit -q -am "Change main"
                git merge -q --no-edit feature
                git push -q origin main
                git push -q origin feature
                git commit -q --amend -m "Merge feature, reworded"
                git push -q --force-with-lease origin main
                git fetch -q origin
                echo "fetched: $(git log -1 --format=%s origin/upstream)"
                git merge -q --no-edit origin/upstream
                git push -q origin main
                git branch -d feature
                git stash list
                git log --oneline | wc -l | sed 's/^ */commits: /'
                mkdir -p tools && cd tools
                git init -q newlib && cd newlib
                git config user.name 'Agent Sandbox Test' && git config user.email test@agent-sandbox.invalid
                echo lib > lib.txt && git add lib.txt && git commit -q -m "New library"
                echo "newlib: $(git log -1 --format=%s)"
                """);

        result.stdoutContains("fetched: Upstream work\n", "commits: 6\n", "newlib: New library\n");
        String remoteLog = sandbox.runOnHost("git", "--git-dir", remote.toString(), "log", "--format=%s", "main")
                .succeeds().stdout();
        assertThat(remoteLog).as("main on the remote").contains("Merge feature, reworded", "Upstream work",
                "Add feature", "Change main", "Start");
        String local = sandbox.runOnHost("git", "rev-parse", "HEAD").succeeds().stdout();
        String pushed = sandbox.runOnHost("git", "--git-dir", remote.toString(), "rev-parse", "main")
                .succeeds().stdout();
        assertThat(pushed).as("the remote's main is the project's HEAD").isEqualTo(local);
        sandbox.runOnHost("git", "--git-dir", remote.toString(), "rev-parse", "--verify", "-q", "feature").succeeds();
        assertThat(sandbox.project("tools/newlib/.git")).isDirectory();
    }

    // ------------------------------------------------------------------ C

    @Test
    void C_Program_Builds_With_Make_And_Cc_And_Runs() {
        sandbox.write("src/greet.h", "const char *greeting(void);\n");
        sandbox.write("src/greet.c", "#include \"greet.h\"\nconst char *greeting(void) { return \"hello\"; }\n");
        sandbox.write("src/main.c", """
                #include <stdio.h>
                #include "greet.h"
                int main(int argc, char **argv) {
                    printf("%s, %s (from C)\\n", greeting(), argc > 1 ? argv[1] : "nobody");
                    return 0;
                }
                """);
        sandbox.write("Makefile", """
                CFLAGS ?= -O2 -Wall -Werror
                hello: main.o greet.o
                \t$(CC) $(CFLAGS) -o $@ main.o greet.o
                %.o: src/%.c src/greet.h
                \t$(CC) $(CFLAGS) -c -o $@ $<
                """);

        work("""
                make
                ./hello world
                make
                cc -Wall -o direct src/main.c src/greet.c
                ./direct again
                """)
                .stdoutContains("hello, world (from C)\n", "make: 'hello' is up to date.\n", "hello, again (from C)\n");

        assertThat(sandbox.project("hello")).isExecutable();
        assertThat(sandbox.project("main.o")).isRegularFile();
    }

    // ------------------------------------------------------------------ Java

    @Test
    void Java_Program_Compiles_With_The_Machines_JDK_And_Runs() {
        Path jdk = Path.of(System.getProperty("java.home"));
        assertThat(jdk.resolve("bin/javac")).as("the JDK that runs the tests has javac").isExecutable();
        requireOnHost("JDK at " + jdk + ", readable by the test user", "test", "-x",
                jdk.resolve("bin/javac").toString());
        sandbox.write("src/Hello.java", """
                public class Hello {
                    public static void main(String[] args) {
                        System.out.println("hello, " + args[0] + " (from Java " + Runtime.version().feature() + ")");
                    }
                }
                """);
        String feature = Integer.toString(Runtime.version().feature());

        work(List.of(), Map.of("JDK", jdk.toString()), """
                "$JDK/bin/javac" -d build/classes src/Hello.java
                "$JDK/bin/java" -cp build/classes Hello world
                "$JDK/bin/jar" --create --file build/hello.jar --main-class Hello -C build/classes .
                "$JDK/bin/java" -jar build/hello.jar jar
                "$JDK/bin/java" src/Hello.java source
                """)
                .stdoutContains("hello, world (from Java " + feature + ")\n", "hello, jar (from Java " + feature + ")\n",
                        "hello, source (from Java " + feature + ")\n");

        assertThat(sandbox.project("build/classes/Hello.class")).isRegularFile();
    }

    // ------------------------------------------------------------------ Python

    /**
     * A virtual environment with pip, and a local package installed without an index.
     * The package builds with a backend of its own, in the package, so the install
     * needs nothing that is not on the machine.
     */
    @Test
    void Python_Virtual_Environment_Installs_A_Local_Package_Without_An_Index() {
        sandbox.write("greetpkg/pyproject.toml", """
                [build-system]
                requires = []
                build-backend = "backend"
                backend-path = ["."]
                """);
        sandbox.write("greetpkg/backend.py", """
                \"\"\"A PEP 517 backend that needs nothing from an index: it zips the package into a wheel.\"\"\"
                import base64
                import hashlib
                import os
                import zipfile

                NAME, VERSION = "greet", "1.0"
                INFO = f"{NAME}-{VERSION}.dist-info"


                def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
                    with open(os.path.join(NAME, "__init__.py"), "rb") as f:
                        files = {f"{NAME}/__init__.py": f.read()}
                    files[f"{INFO}/METADATA"] = f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode()
                    files[f"{INFO}/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: backend\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
                    record = []
                    for path, data in files.items():
                        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                        record.append(f"{path},sha256={digest},{len(data)}")
                    record.append(f"{INFO}/RECORD,,")
                    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
                    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
                        for path, data in files.items():
                            z.writestr(path, data)
                        z.writestr(f"{INFO}/RECORD", "\\n".join(record) + "\\n")
                    return wheel
                """);
        sandbox.write("greetpkg/greet/__init__.py", "def hello():\n    return \"hello from greet\"\n");
        requireOnHost("python3 with venv and ensurepip (apt-get install python3-venv)",
                "python3", "-c", "import ensurepip, venv");

        work("""
                python3 -m venv .venv
                .venv/bin/python -m pip --version
                .venv/bin/python -m pip install --no-index --disable-pip-version-check ./greetpkg
                cd /
                "$PROJECT/.venv/bin/python" -c 'import greet; print(greet.hello())'
                "$PROJECT/.venv/bin/python" -m pip list --disable-pip-version-check | grep -i '^greet '
                """)
                .stdoutContains("Successfully installed greet-1.0", "hello from greet\n");

        assertThat(sandbox.project(".venv/bin/python")).exists();
    }

    // ------------------------------------------------------------------ npm

    @Test
    void Npm_Init_And_Pack_In_The_Project() {
        requireOnHost("npm (apt-get install npm)", "npm", "--version");

        work("""
                mkdir webapp && cd webapp
                npm init -y
                echo 'module.exports = () => "hello from npm";' > index.js
                npm pack
                node -e 'console.log(require("./")())'
                tar -tzf webapp-1.0.0.tgz
                """)
                .stdoutContains("\"name\": \"webapp\"", "hello from npm\n", "package/index.js\n",
                        "package/package.json\n");

        assertThat(sandbox.project("webapp/webapp-1.0.0.tgz")).isRegularFile();
        assertThat(sandbox.read(sandbox.project("webapp/package.json"))).contains("\"version\": \"1.0.0\"");
    }

    // ------------------------------------------------------------------ everyday writes

    @Test
    void Writes_To_The_Project_Land_On_The_Host_The_Caches_In_The_Sandboxes_Layer_And_Tmp_Stays_Private() {
        work("""
                mkdir -p "$HOME/.cache/agent-tool" && echo cached > "$HOME/.cache/agent-tool/state"
                npm config get cache >/dev/null && mkdir -p "$HOME/.npm/_logs" && echo logged > "$HOME/.npm/_logs/run.log"
                t=$(mktemp) && echo temp > "$t" && cat "$t" && rm "$t"
                mkdir -p /tmp/work && echo scratch > /tmp/work/scratch.txt && cat /tmp/work/scratch.txt
                echo notes > notes.txt
                mkdir -p build/out && echo artifact > build/out/a.txt && mv build/out/a.txt build/out/b.txt
                rm -r build/out && mkdir build/out
                """)
                .stdoutContains("temp\n", "scratch\n");

        // the caches are copy-on-write: the next sandbox has them, the host's tools do not
        assertThat(sandbox.home(".cache/agent-tool/state")).doesNotExist();
        assertThat(sandbox.home(".npm/_logs/run.log")).doesNotExist();
        sandbox.run("--", "sh", "-c", "cat ~/.cache/agent-tool/state ~/.npm/_logs/run.log").succeeds()
                .stdoutIs("cached\nlogged\n");
        assertThat(sandbox.tmp().resolve("work")).doesNotExist();
        assertThat(sandbox.read(sandbox.project("notes.txt"))).isEqualTo("notes\n");
        assertThat(sandbox.project("build/out")).isEmptyDirectory();
        assertThat(sandbox.runtimeDirsInTmp()).isEmpty();
    }
}
