package agentsandbox.core;

import agentsandbox.core.run.Launch;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.run.BwrapStarter;
import agentsandbox.core.guard.GuardFallback;
import agentsandbox.core.guard.GuardProtocol;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.run.RunDir;
import agentsandbox.core.guard.Wrappers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The launcher's copy of the contract ({@code launcher/src/guard.h}) agrees with Java's:
 * the guard's protocol, the in-sandbox paths, the limits and the timeouts.
 */
class GuardContractTest {
    private static final Map<String, String> DEFINES = new HashMap<>();

    @BeforeAll
    static void readHeader() throws IOException {
        Path header = Path.of("..", "launcher", "src", "guard.h");
        for (String line : Files.readAllLines(header)) {
            String[] words = line.strip().split("\\s+", 3);
            if (words.length == 3 && words[0].equals("#define")) {
                String value = words[2];
                DEFINES.put(words[1], value.startsWith("\"") ? value.substring(1, value.length() - 1) : value);
            }
        }
    }

    private static String define(String name) {
        assertThat(DEFINES).containsKey(name);
        return DEFINES.get(name);
    }

    private static int number(String name) {
        return Integer.parseInt(define(name));
    }

    @Test
    void The_Mount_Checks_Are_Spelled_The_Same_On_Both_Sides() throws IOException {
        assertThat(define("MOUNT_CHECKS")).isEqualTo(RunDir.MOUNT_CHECKS);
        assertThat(define("MOUNT_IDENTITIES")).isEqualTo(RunDir.MOUNT_IDENTITIES);
        assertThat(define("RUNTIME") + "/" + define("RUNTIME_MOUNTS")).isEqualTo(Inside.MOUNTS.toString());
        assertThat(define("MOUNT_BIND")).isEqualTo("'" + MountChecks.BIND + "'");
        assertThat(define("MOUNT_READ_ONLY")).isEqualTo("'" + MountChecks.READ_ONLY + "'");
        assertThat(define("MOUNT_EMPTY_DIR")).isEqualTo("'" + MountChecks.EMPTY_DIR + "'");
        assertThat(define("MOUNT_WORKDIR")).isEqualTo("'" + MountChecks.WORKDIR + "'");
        assertThat(define("MOUNT_KINDS")).isEqualTo("" + MountChecks.BIND + MountChecks.READ_ONLY
                + MountChecks.EMPTY_DIR + MountChecks.WORKDIR);
        // the launcher's message, which the tool passes on as its own line
        assertThat(Files.readString(Path.of("..", "launcher", "src", "mount_check.c"))).contains(MountChecks.CHANGED);
    }

    @Test
    void The_Protocol_Is_The_Same_On_Both_Sides() {
        assertThat(define("GUARD_MAGIC")).isEqualTo(GuardProtocol.MAGIC);
        assertThat(number("GUARD_MAX_LINE")).isEqualTo(GuardProtocol.MAX_LINE);
        assertThat(number("GUARD_MAX_QUESTIONS")).isEqualTo(GuardProtocol.MAX_QUESTIONS);
        assertThat(number("GUARD_MAX_GIT_OUTPUT")).isEqualTo(GuardProtocol.MAX_GIT_OUTPUT);
        assertThat(number("GUARD_GIT_MILLIS")).isEqualTo(GuardProtocol.GIT_MILLIS);
        assertThat(number("GUARD_TIMEOUT_SECONDS")).isEqualTo(GuardProtocol.LAUNCHER_TIMEOUT_SECONDS);
        assertThat(number("GUARD_CONNECTION_MILLIS")).isEqualTo(GuardProtocol.CONNECTION_MILLIS);
        assertThat(number("GUARD_CONNECT_MILLIS")).isEqualTo(GuardProtocol.CONNECT_MILLIS);
        assertThat(number("GUARD_MAX_PARENT_CMDLINE")).isLessThan(GuardProtocol.MAX_REQUEST / 2);
    }

    @Test
    void Starting_Bwrap_With_Its_Setup_Messages_Apart_Is_Spelled_The_Same_On_Both_Sides() {
        assertThat(define("START_BWRAP")).isEqualTo(Launch.START_BWRAP);
        assertThat(define("STDERR_VARIABLE")).isEqualTo(Launch.STDERR_VARIABLE);
        assertThat(define("STARTED_MARK")).isEqualTo(Launch.STARTED_MARK);
    }

    @Test
    void The_Starter_Is_Named_And_Bounded_The_Same_On_Both_Sides() {
        assertThat(define("STARTER_PROPERTY")).isEqualTo(BwrapStarter.PROPERTY);
        assertThat(define("UID_PROPERTY")).isEqualTo(Environment.UID_PROPERTY);
        assertThat(define("STATUS_PROPERTY")).isEqualTo(Environment.STATUS_PROPERTY);
        assertThat(define("STATUS_STARTER_REMOVING")).isEqualTo(String.valueOf(Environment.STATUS_STARTER_REMOVING));
        assertThat(define("STATUS_READY")).isEqualTo(String.valueOf(Environment.STATUS_READY));
        assertThat(number("STARTER_MAX_REQUEST")).isEqualTo(BwrapStarter.MAX_REQUEST);
        assertThat(number("STARTER_MAX_REMOVE_PATHS")).isEqualTo(BwrapStarter.MAX_REMOVE_PATHS);
        assertThat(number("STARTER_MAX_REMOVE_BYTES")).isEqualTo(BwrapStarter.MAX_REMOVE_BYTES);
        assertThat(define("STARTER_REMOVE")).isEqualTo("remove");
        assertThat(new String(BwrapStarter.removal(List.of(Path.of("/a"))), StandardCharsets.US_ASCII))
                .startsWith(define("STARTER_REMOVE") + " ");
        assertThat(number("REMOVE_MAX_DEPTH")).isEqualTo(RunDir.MAX_DEPTH);
        assertThat(define("RUN_OWNER")).isEqualTo(RunDir.OWNER);
    }

    @Test
    void The_Timeouts_Nest() {
        // the host gives up on a connection before the launcher gives up waiting, and a
        // question to git fits in both many times over
        assertThat(GuardProtocol.CONNECTION_MILLIS).isLessThan(GuardProtocol.LAUNCHER_TIMEOUT_SECONDS * 1000);
        assertThat(GuardProtocol.GIT_MILLIS * 4).isLessThanOrEqualTo(GuardProtocol.CONNECTION_MILLIS);
    }

    @Test
    void The_Paths_Inside_The_Sandbox_Are_The_Same_On_Both_Sides() {
        assertThat(Path.of(define("RUNTIME"))).isEqualTo(Inside.RUNTIME);
        assertThat(Inside.RUNTIME.resolve(define("RUNTIME_COMMANDS"))).isEqualTo(Wrappers.COMMANDS);
        assertThat(Inside.RUNTIME.resolve(define("RUNTIME_OUTER"))).isEqualTo(Wrappers.OUTER);
        assertThat(Inside.RUNTIME.resolve(define("GUARD_SOCKET")))
                .isEqualTo(Wrappers.GUARD.resolve(RunDir.SOCKET));
        assertThat(Inside.RUNTIME.resolve(define("GUARD_SOCKET")).getParent().getFileName().toString())
                .isEqualTo(RunDir.GUARD);
        assertThat(Inside.RUNTIME.resolve(define("GUARD_JAR")))
                .isEqualTo(Inside.APP.resolve("lib").resolve("agent-sandbox-core.jar"));
        assertThat(Inside.RUNTIME.resolve(define("GUARD_JAVA")))
                .isEqualTo(Inside.APP.resolve("runtime").resolve("bin").resolve("java"));
        assertThat(define("GUARD_FALLBACK_CLASS")).isEqualTo(GuardFallback.class.getName());
    }
}
