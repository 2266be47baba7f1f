// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

import agentsandbox.core.run.BwrapStarter;
import agentsandbox.core.git.GitViews;
import agentsandbox.core.guard.GuardFallback;
import agentsandbox.core.guard.GuardProtocol;
import agentsandbox.core.plan.Inside;
import agentsandbox.core.run.Launch;
import agentsandbox.core.plan.MountChecks;
import agentsandbox.core.host.NetworkProxy;
import agentsandbox.core.run.RunLayout;
import agentsandbox.core.run.SafeRemoval;
import agentsandbox.core.guard.Wrappers;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The launcher's copy of the contract ({@code launcher/src/guard.h}) agrees with Java's:
 * the guard's protocol, the in-sandbox paths, the limits and the timeouts. Every constant
 * of the header has a row here ({@link #rows}), and a header constant without a row fails
 * {@link #Every_Constant_Of_The_Header_Has_A_Row}.
 */
class GuardContractTest {
    private static final Path LAUNCHER = Path.of("..", "launcher", "src");
    /** The header's constants in order, each value as C sees it: strings concatenated, quotes gone. */
    private static final Map<String, String> DEFINES = new LinkedHashMap<>();
    private static final Pattern TOKEN = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"|(\\w+)|(\\S+)");

    @BeforeAll
    static void readHeader() throws IOException {
        for (String line : Files.readAllLines(LAUNCHER.resolve("guard.h"))) {
            String[] words = line.strip().split("\\s+", 3);
            if (words.length == 3 && words[0].equals("#define")) {
                DEFINES.put(words[1], value(words[2]));
            }
        }
    }

    /** String literals and names of strings defined above, side by side, as one string; else the text itself. */
    private static String value(String text) {
        StringBuilder joined = new StringBuilder();
        Matcher m = TOKEN.matcher(text);
        while (m.find()) {
            if (m.group(1) != null) {
                joined.append(m.group(1));
            } else if (m.group(2) != null && DEFINES.containsKey(m.group(2))
                    && !m.group(2).equals(text) && !DEFINES.get(m.group(2)).matches("-?\\d+|'.'")) {
                joined.append(DEFINES.get(m.group(2)));
            } else {
                return text;
            }
        }
        return joined.toString();
    }

    private static String define(String name) {
        assertThat(DEFINES).containsKey(name);
        return DEFINES.get(name);
    }

    private static int number(String name) {
        return Integer.parseInt(define(name));
    }

    /** A path below the sandbox's runtime, as the header writes it (relative to RUNTIME). */
    private static String belowRuntime(Path inside) {
        return Inside.RUNTIME.relativize(inside).toString();
    }

    /** The rows: what each constant of the header must be on the Java side. */
    private static Map<String, Consumer<String>> rows() {
        Map<String, Consumer<String>> rows = new LinkedHashMap<>();
        // the paths inside the sandbox
        rows.put("RUNTIME", is(Inside.RUNTIME.toString()));
        rows.put("SANDBOX_MARKER", is(Inside.ENTRY_POINT.toString()));
        rows.put("COMMAND_START", is(Inside.COMMAND_START.toString()));
        rows.put("SPILLED_COMMAND", is(Inside.SPILLED_COMMAND.toString()));
        // a command too long for bwrap's command line is bounded as one the starter passes on
        rows.put("SPILLED_COMMAND_MAX", is(BwrapStarter.MAX_REQUEST));
        rows.put("LIMITS_VARIABLE", is(Inside.LIMITS_VARIABLE));
        rows.put("UNIX_GUARD_VARIABLE", is(Inside.SOCKET_GUARD_VARIABLE));
        rows.put("UNIX_GUARD_NESTED", is(Inside.SOCKET_GUARD_NESTED));
        rows.put("UNIX_GUARD_REGISTER", launcherOnly());
        rows.put("RUNTIME_COMMANDS", is(belowRuntime(Wrappers.COMMANDS)));
        rows.put("RUNTIME_OUTER", is(belowRuntime(Wrappers.OUTER)));
        rows.put("GUARD_SOCKET", is(belowRuntime(Wrappers.GUARD.resolve(RunLayout.SOCKET))).andThen(
                v -> assertThat(Path.of(v).getParent().getFileName().toString()).isEqualTo(RunLayout.GUARD)));
        rows.put("GUARD_JAVA", is(belowRuntime(Inside.APP.resolve("runtime").resolve("bin").resolve("java"))));
        rows.put("GUARD_JAR", is(belowRuntime(Inside.APP.resolve("lib").resolve("agent-sandbox-core.jar"))));
        rows.put("GUARD_FALLBACK_CLASS", is(GuardFallback.class.getName()));
        // the network
        rows.put("NET_LISTEN", is(Inside.NET_LISTEN.toString()));
        rows.put("NET_SOCKET", is(Inside.NET_SOCKET.toString()));
        rows.put("NET_LISTEN_PROXY", is(NetworkProxy.LISTEN_PROXY));
        rows.put("NET_LISTEN_PORT", is(NetworkProxy.LISTEN_PORT));
        rows.put("NET_PROXY_CLIENT", is(NetworkProxy.PROXY_CLIENT));
        rows.put("NET_HOST_CLIENT", is(NetworkProxy.HOST_CLIENT));
        rows.put("NET_STACK_VARIABLE", is(agentsandbox.core.host.NetStack.LAUNCHER_VARIABLE));
        rows.put("NET_STACK_RESOLVER", is(agentsandbox.core.host.NetStack.RESOLVER));
        rows.put("NET_ALLOW_VARIABLE", is(agentsandbox.core.host.NetStack.LAUNCHER_ALLOW));
        rows.put("NET_REFUSED_VARIABLE", is(agentsandbox.core.host.NetStack.LAUNCHER_REFUSED));
        rows.put("NET_FILTER_RESOLVER", is(agentsandbox.core.host.NetStack.FILTER_RESOLVER));
        rows.put("NET_STACK_DEVICE", launcherOnly());
        rows.put("NET_GATE_VARIABLE", launcherOnly());
        rows.put("NET_STACK_MTU", launcherOnly());
        // bwrap's start, its setup messages apart, and the first program
        rows.put("START_BWRAP", is(Launch.START_BWRAP));
        rows.put("STDERR_VARIABLE", is(Launch.STDERR_VARIABLE));
        rows.put("ALIVE_VARIABLE", launcherOnly());
        rows.put("TERMINAL_VARIABLE", launcherOnly());
        rows.put("LOG_CLASS_LOADING_VARIABLE", readByTheStartupCheck());
        rows.put("STARTED_MARK", is(Launch.STARTED_MARK));
        // the launcher, the JVM and the starter
        rows.put("STARTER_PROPERTY", is(BwrapStarter.PROPERTY));
        rows.put("UID_PROPERTY", is(Environment.UID_PROPERTY));
        rows.put("STATUS_PROPERTY", is(Environment.STATUS_PROPERTY));
        rows.put("STATUS_STARTER_REMOVING", is(String.valueOf(Environment.STATUS_STARTER_REMOVING)));
        rows.put("STATUS_READY", is(String.valueOf(Environment.STATUS_READY)));
        rows.put("LAUNCHER_PROPERTY", is(Environment.Installation.LAUNCHER_PROPERTY));
        rows.put("HOME_PROPERTY", is(Environment.Installation.HOME_PROPERTY));
        rows.put("CALLER_VARIABLE_PREFIX", is(Environment.Installation.CALLER_VARIABLE_PREFIX));
        rows.put("RUN_OWNER", is(RunLayout.OWNER));
        rows.put("STARTER_MAX_REQUEST", is(BwrapStarter.MAX_REQUEST));
        rows.put("STARTER_REMOVE", v -> assertThat(
                new String(BwrapStarter.removal(List.of(Path.of("/a"))), StandardCharsets.US_ASCII))
                .startsWith(v + " "));
        rows.put("STARTER_MAX_REMOVE_PATHS", is(BwrapStarter.MAX_REMOVE_PATHS));
        rows.put("STARTER_NETWORK", v -> assertThat(new String(
                BwrapStarter.networkRequest(Path.of("/s"), List.of()), StandardCharsets.US_ASCII)).startsWith(v + " "));
        rows.put("NET_ALLOW_MAX", is(BwrapStarter.MAX_NETWORK_ALLOW));
        rows.put("STARTER_MAX_REMOVE_BYTES", is(BwrapStarter.MAX_REMOVE_BYTES));
        rows.put("REMOVE_MAX_DEPTH", is(SafeRemoval.MAX_DEPTH));
        // the app image (the command line tool's classes, and what its build reads from the header)
        rows.put("APP_LIB_FD", readByTheImageBuild("APP_LIB_FD"));
        rows.put("APP_CLASS_PATH", readByTheImageBuild("APP_CLASS_PATH").andThen(v -> assertThat(v)
                .isEqualTo("/proc/self/fd/" + number("APP_LIB_FD") + "/agent-sandbox-cli.jar")));
        rows.put("APP_MAIN_CLASS", isCliClass());
        rows.put("TRAIN_FLAG", readByTheImageBuild("TRAIN_FLAG"));
        rows.put("TRAIN_CLASS", isCliClass());
        rows.put("JVM_START", readByTheImageBuild("JVM_START"));
        rows.put("NATIVE_CLASS", is(Native.class.getName().replace('.', '/')));
        // the mount checks
        rows.put("MOUNT_CHECKS", is(RunLayout.MOUNT_CHECKS));
        rows.put("MOUNT_IDENTITIES", is(RunLayout.MOUNT_IDENTITIES));
        rows.put("RUNTIME_MOUNTS", is(belowRuntime(Inside.MOUNTS)));
        // the git dirs' copy-on-write views
        rows.put("RUNTIME_GIT_VIEWS", is(belowRuntime(Inside.GIT_VIEWS)));
        rows.put("GIT_LAYERS", is(Inside.GIT_LAYERS.toString()));
        rows.put("GIT_VIEWS_MAX", is(Integer.toString(GitViews.MAX_RECORDS)));
        rows.put("VIEW_GIT", is(GitViews.KIND));
        rows.put("GIT_BASE_REFS", is(agentsandbox.core.git.BaseRefs.LOOSE));
        rows.put("GIT_BASE_PACKED_REFS", is(agentsandbox.core.git.BaseRefs.PACKED));
        rows.put("GIT_BASE_REF_BYTES", is(Integer.toString(agentsandbox.core.git.BaseRefs.REF_BYTES)));
        rows.put("GIT_SNAPSHOT_MAX_BYTES", launcherOnly());
        rows.put("GIT_SNAPSHOT_MAX_ENTRIES", launcherOnly());
        rows.put("VIEW_HOME", is(agentsandbox.core.homes.HomeViews.KIND));
        rows.put("HOME_LAYERS", is(Inside.HOME_LAYERS.toString()));
        rows.put("MOUNT_BIND", is(MountChecks.BIND));
        rows.put("MOUNT_READ_ONLY", is(MountChecks.READ_ONLY));
        rows.put("MOUNT_EMPTY_DIR", is(MountChecks.EMPTY_DIR));
        rows.put("MOUNT_WORKDIR", is(MountChecks.WORKDIR));
        rows.put("MOUNT_KINDS", is("" + MountChecks.BIND + MountChecks.READ_ONLY + MountChecks.EMPTY_DIR
                + MountChecks.WORKDIR));
        // the git guard's protocol
        rows.put("GUARD_MAGIC", is(GuardProtocol.MAGIC));
        rows.put("GUARD_MAX_LINE", is(GuardProtocol.MAX_LINE));
        rows.put("GUARD_MAX_QUESTIONS", is(GuardProtocol.MAX_QUESTIONS));
        rows.put("GUARD_MAX_GIT_OUTPUT", is(GuardProtocol.MAX_GIT_OUTPUT));
        rows.put("GUARD_GIT_MILLIS", is(GuardProtocol.GIT_MILLIS));
        rows.put("GUARD_TIMEOUT_SECONDS", is(GuardProtocol.LAUNCHER_TIMEOUT_SECONDS));
        rows.put("GUARD_CONNECTION_MILLIS", is(GuardProtocol.CONNECTION_MILLIS));
        rows.put("GUARD_CONNECT_MILLIS", is(GuardProtocol.CONNECT_MILLIS));
        // the parent's command line fits in a request with room to spare
        rows.put("GUARD_MAX_PARENT_CMDLINE",
                v -> assertThat(Integer.parseInt(v)).isLessThan(GuardProtocol.MAX_REQUEST / 2));
        // reports of blocked commands' calls
        rows.put("GUARD_REPORT_MAGIC", is(GuardProtocol.REPORT_MAGIC));
        rows.put("GUARD_REPORT_LINE", is(GuardProtocol.REPORT_LINE));
        rows.put("GUARD_MAX_REPORT", is(GuardProtocol.MAX_REPORT));
        rows.put("GUARD_REPORT_MILLIS", is(GuardProtocol.REPORT_MILLIS));
        return rows;
    }

    private static Consumer<String> is(String java) {
        return v -> assertThat(v).isEqualTo(java);
    }

    private static Consumer<String> is(int java) {
        return v -> assertThat(Integer.parseInt(v)).isEqualTo(java);
    }

    private static Consumer<String> is(char java) {
        return v -> assertThat(v).isEqualTo("'" + java + "'");
    }

    /** A class of the command line tool, which this module cannot load: its source is there. */
    private static Consumer<String> isCliClass() {
        return v -> assertThat(Path.of("..", "cli", "src", "main", "java", v.replace('.', '/') + ".java"))
                .isRegularFile();
    }

    /** A value the end-to-end check of the start-up rules sets (dist's StartupIT). */
    private static Consumer<String> readByTheStartupCheck() {
        return v -> assertThat(read(Path.of("..", "dist", "src", "test", "java", "agentsandbox", "e2e",
                "StartupIT.java"))).contains("\"" + v + "\"");
    }

    /** A value the image's build reads from the header itself (dist/src/image/finish-image.sh). */
    private static Consumer<String> readByTheImageBuild(String name) {
        return v -> assertThat(read(Path.of("..", "dist", "src", "image", "finish-image.sh")))
                .contains("#define " + name + " ");
    }

    /**
     * A value only the launcher's faces pass among themselves, which Java neither sets nor
     * reads: when Java starts to use it, it must become a Java constant and a real row here.
     */
    private static Consumer<String> launcherOnly() {
        return v -> {
            for (String module : List.of("core", "cli")) {
                try (Stream<Path> files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                        assertThat(read(f)).as(f.toString()).doesNotContain("\"" + v + "\"");
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void Every_Constant_Of_The_Header_Has_A_Row() {
        assertThat(rows().keySet()).as("the rows of guard.h's constants")
                .containsExactlyInAnyOrderElementsOf(DEFINES.keySet());
    }

    @TestFactory
    List<DynamicTest> Each_Constant_Of_The_Header_Is_The_Same_On_Both_Sides() {
        List<DynamicTest> tests = new ArrayList<>();
        rows().forEach((name, row) -> tests.add(DynamicTest.dynamicTest(name, () -> row.accept(define(name)))));
        return tests;
    }

    @Test
    void The_Header_Is_Read_As_C_Reads_It() {
        assertThat(define("COMMAND_START")).isEqualTo("/run/agent-sandbox/exec");
        assertThat(define("GUARD_MAX_LINE")).isEqualTo("8192");
        assertThat(define("MOUNT_BIND")).isEqualTo("'b'");
        assertThat(DEFINES).doesNotContainKey("AGENT_SANDBOX_GUARD_H");
    }

    @Test
    void The_Listen_File_Is_Written_In_The_Header_s_Words() {
        assertThat(NetworkProxy.listenFile(List.of(8080), true)).isEqualTo(define("NET_LISTEN_PROXY") + " "
                + Inside.PROXY_PORT + "\n" + define("NET_LISTEN_PORT") + " 8080\n");
        assertThat(NetworkProxy.listenFile(List.of(8080), false)).as("with the stack, no proxy to listen for")
                .isEqualTo(define("NET_LISTEN_PORT") + " 8080\n");
    }

    @Test
    void The_Launcher_s_Message_For_A_Changed_Mount_Is_The_One_The_Tool_Passes_On() throws IOException {
        assertThat(Files.readString(LAUNCHER.resolve("mount_check.c"))).contains(MountChecks.CHANGED);
    }

    @Test
    void The_Timeouts_Nest() {
        // the host gives up on a connection before the launcher gives up waiting, and a
        // question to git fits in both many times over
        assertThat(GuardProtocol.CONNECTION_MILLIS).isLessThan(GuardProtocol.LAUNCHER_TIMEOUT_SECONDS * 1000);
        assertThat(GuardProtocol.GIT_MILLIS * 4).isLessThanOrEqualTo(GuardProtocol.CONNECTION_MILLIS);
    }
}
