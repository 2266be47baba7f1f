// SPDX-License-Identifier: Apache-2.0
/*
 * The contract between the launcher and the Java side of agent-sandbox: the git
 * guard's conversation (GuardProtocol.java), the in-sandbox paths (Sandbox.java,
 * Wrappers.java) and the limits and timeouts of both sides. Every constant the C and
 * the Java side share is defined here, once. The Java test GuardContractTest reads
 * this file and fails when a value differs from Java's, or when a constant here has
 * no row there. A value is a number, a character, or string literals and names of
 * constants defined above it, side by side (concatenated, as C does).
 */
#ifndef AGENT_SANDBOX_GUARD_H
#define AGENT_SANDBOX_GUARD_H

/* The sandbox's runtime; an outer sandbox's runtime is at <runtime>/outer. */
#define RUNTIME "/run/agent-sandbox"
/* The launcher, read-only, inside every sandbox (Sandbox.ENTRY_POINT): its existence
 * is the answer to `check`. */
#define SANDBOX_MARKER RUNTIME "/agent-sandbox"
/* The name bwrap starts the launcher by, in place of the sandboxed command: the
 * sandbox's first program (command_start.c). */
#define COMMAND_START RUNTIME "/exec"
/* The command when it has more words than bwrap's command line takes: each ended
 * by a NUL byte. COMMAND_START started without a command reads it from here, up to
 * SPILLED_COMMAND_MAX bytes (what the starter takes of a command line it is given). */
#define SPILLED_COMMAND RUNTIME "/command"
#define SPILLED_COMMAND_MAX 67108864
/* The bounds COMMAND_START applies (RLIMIT_NPROC, RLIMIT_DATA) before it becomes the
 * command, and takes out of the environment: "MAX_PROCS MAX_MEMORY" (Inside.java). */
#define LIMITS_VARIABLE "AGENT_SANDBOX_LIMITS"
/*
 * With the network on, the sandbox has a network namespace of its own with only a
 * loopback. The host writes NET_LISTEN: one line per port to listen on in the
 * sandbox's loopback, NET_LISTEN_PROXY " PORT" (HTTP proxy clients, named by
 * HTTP_PROXY) or NET_LISTEN_PORT " PORT" (a host port the user granted). The
 * sandbox's helper (net_helper.c) hands every connection to the agent-sandbox process
 * outside over NET_SOCKET (NetworkProxy.java), after one line saying what it is:
 * NET_PROXY_CLIENT, or NET_HOST_CLIENT and the port.
 */
#define NET_LISTEN RUNTIME "/net/listen"
#define NET_SOCKET RUNTIME "/net/socket"
#define NET_LISTEN_PROXY "proxy"
#define NET_LISTEN_PORT "port"
#define NET_PROXY_CLIENT "P"
#define NET_HOST_CLIENT "H "
/* With a stack of its own (net_stack.c), the sandbox's network namespace gets its
 * traffic out through the program named in NET_STACK_VARIABLE (slirp4netns), handed to
 * the launcher that starts bwrap; its device, its MTU, and the resolver it answers at. */
#define NET_STACK_VARIABLE "AGENT_SANDBOX_NET_STACK"
#define NET_STACK_DEVICE "tap0"
#define NET_STACK_MTU "65520"
#define NET_STACK_RESOLVER "10.0.2.3"
/* With an allow-list, the launcher gets it in NET_ALLOW_VARIABLE (entries separated by
 * ','; see net_filter.h) and the file of refused names in NET_REFUSED_VARIABLE; the
 * sandbox's resolver is then the DNS filter at NET_FILTER_RESOLVER (NetStack.java). */
#define NET_ALLOW_VARIABLE "AGENT_SANDBOX_NET_ALLOW"
#define NET_REFUSED_VARIABLE "AGENT_SANDBOX_NET_REFUSED"
#define NET_FILTER_RESOLVER "127.0.0.53"
/* bwrap sets the sandbox up while the stack starts; the sandbox's first program waits for
 * the stack on the descriptor NET_GATE_VARIABLE names (one byte once it is ready) before
 * the command runs. */
#define NET_GATE_VARIABLE "AGENT_SANDBOX_NET_GATE"
/* Below a runtime: the rules, the real binaries, the outer runtime, the guard's socket. */
#define RUNTIME_COMMANDS "cmd"
#define RUNTIME_OUTER "outer"
#define GUARD_SOCKET "guard/socket"
/* Below a runtime: the bundled Java runtime and the jar of the in-sandbox guard. */
#define GUARD_JAVA "app/runtime/bin/java"
#define GUARD_JAR "app/lib/agent-sandbox-core.jar"
#define GUARD_FALLBACK_CLASS "agentsandbox.core.guard.GuardFallback"

/* bwrap's setup messages (see bwrap_start.c and Execution.java): the
 * tool starts bwrap through the launcher as `agent-sandbox START_BWRAP LOG bwrap ...`;
 * the caller's stderr waits at the descriptor named by STDERR_VARIABLE until the
 * sandbox's first program puts it back, after writing STARTED_MARK and a line break
 * to LOG. */
#define START_BWRAP "--internal-start-bwrap"
#define STDERR_VARIABLE "AGENT_SANDBOX_STDERR_FD"
/* The descriptor of the run's liveness pipe in the sandbox (see take_alive in command_start.c). */
#define ALIVE_VARIABLE "AGENT_SANDBOX_ALIVE_FD"
/* Set to 1 when the sandbox's terminal is a pseudo-terminal of the run's own (term_relay.h):
 * the first program makes it the controlling terminal of a session of its own. */
#define TERMINAL_VARIABLE "AGENT_SANDBOX_TERMINAL"
#define STARTED_MARK "agent-sandbox: the command starts"
/* Set with --share-tmp: the first program guards the host's sockets in the shared /tmp
 * (unix_guard.h); "1", or "nested" inside another sandbox, whose guard may hold already. */
#define UNIX_GUARD_VARIABLE "AGENT_SANDBOX_SOCKET_GUARD"
#define UNIX_GUARD_NESTED "nested"
/* A nested sandbox's first program, whose guard the outer one's stands for, hands the outer
 * guard a socket diagnostics socket of its network namespace: connect(2) to this netlink port. */
#define UNIX_GUARD_REGISTER 0x61677362u
/* Set to 1, the tool's JVM logs every class it loads, and from where, to stderr: what
 * the check of the start-up rules reads (docs/startup.md, StartupIT). */
#define LOG_CLASS_LOADING_VARIABLE "AGENT_SANDBOX_LOG_CLASS_LOADING"

/* The starter (see starter.c and BwrapStarter.java): the launcher
 * names it to the JVM in this system property as "<request fd>,<reply fd>";
 * a request is at most this many bytes. */
#define STARTER_PROPERTY "agentsandbox.starter"
/* The caller's real user id, which the launcher passes to the JVM in this system
 * property (reading /proc/self/status costs the interpreted JVM over a millisecond). */
#define UID_PROPERTY "agentsandbox.uid"
/* The launcher stays the process the caller waits for and runs the JVM as its child
 * (see run_jvm.c): the JVM writes the tool's exit status, one byte, to
 * the descriptor this system property names when the run is done, and the launcher
 * then stops it, without the JVM's own exit, and exits with that status. */
#define STATUS_PROPERTY "agentsandbox.status"
/* Written after the status byte, in the same write, when the JVM left the removal of
 * the run's directories to the starter (the run's bwrap has ended): the launcher then
 * waits for the starter to finish and end rather than stopping it. */
#define STATUS_STARTER_REMOVING "R"
/* Written by the JVM before any status, once, when its handlers for SIGINT, SIGTERM and
 * SIGHUP are in place (a run's start): the launcher passes such a signal a process sends
 * it on to the JVM only from then on; before, it ends the tool itself (see pass_on). */
#define STATUS_READY "!"
/* A run directory's record of its owner (RunDir.OWNER), removed last of all its
 * entries: a removal cut short leaves what the next run's sweep recognises. */
#define RUN_OWNER "owner"
#define STARTER_MAX_REQUEST 67108864
/* The JVM finds the jars through this descriptor of the app image's lib directory,
 * open across its exec: the class path (APP_CLASS_PATH) is then the same text
 * wherever the image is installed, the text the startup cache was trained with
 * (see dist/src/image/finish-image.sh). A cache trained at a path that no longer
 * exists costs every start a failed lookup of that path per jar, interpreted. */
#define APP_LIB_FD 9
#define APP_CLASS_PATH "/proc/self/fd/9/agent-sandbox-cli.jar"
#define APP_MAIN_CLASS "agentsandbox.cli.Main"
/* The launcher names itself and the application directory to the JVM in these system
 * properties (cli's SystemEnvironment reads them). */
#define LAUNCHER_PROPERTY "agentsandbox.launcher"
#define HOME_PROPERTY "agentsandbox.home"
/* The caller's variables that would configure the tool's own JVM (JAVA_TOOL_OPTIONS, ...)
 * and its LC_ALL are set aside under this prefix plus their name for the JVM, which
 * gives them back to the command (cli's SystemEnvironment). */
#define CALLER_VARIABLE_PREFIX "AGENT_SANDBOX_CALLER_"
/* The build trains the startup cache through the launcher, so that the training takes
 * the path a real start takes (the starter among it): `agent-sandbox TRAIN_FLAG
 * CONFIGURATION WORKDIR` runs TRAIN_CLASS recording into CONFIGURATION
 * (dist/src/image/finish-image.sh). */
#define TRAIN_FLAG "--internal-train"
#define TRAIN_CLASS "agentsandbox.cli.Training"
/* The program in the runtime's bin/ that starts the tool's JVM in-process (jvm_start.c),
 * in place of the runtime's java, which the launcher uses when it is missing. */
#define JVM_START "agent-sandbox-jvm"
/* The class whose native methods JVM_START registers before main (Native.java). */
#define NATIVE_CLASS "agentsandbox/core/Native"
/* After bwrap's end the starter removes the run's directories on request:
 * "remove <paths> <bytes>\n", then that many bytes of NUL-ended absolute paths. */
#define STARTER_REMOVE "remove"
/* Before its bwrap request the tool may ask the starter to start the network stack the run
 * will use, while the tool goes on with the plan: "network <bytes>\n", then that many bytes:
 * the stack's program and the allow-list (entries joined by ','; empty for none), each
 * ended by a NUL. No reply: a stack that cannot start is started again, and reported, when
 * bwrap starts (net_stack.h). */
#define STARTER_NETWORK "network"
/* The longest allow-list the launcher takes (its entries joined by ','). */
#define NET_ALLOW_MAX 65536
#define STARTER_MAX_REMOVE_PATHS 16
#define STARTER_MAX_REMOVE_BYTES 65536
/* A removal moves directories this deep up to the top of the tree it removes and
 * goes on from there, so that it holds at most this many descriptors (RunDir.MAX_DEPTH). */
#define REMOVE_MAX_DEPTH 256

/* The sandbox's mounts, checked where they landed (mount_check.h): the tool writes
 * MOUNT_CHECKS in the run directory, the launcher writes MOUNT_IDENTITIES beside it just
 * before bwrap starts, and the sandbox's first program reads that at RUNTIME_MOUNTS
 * (below the runtime). A record's kind: a bind that may be writable, a read-only one,
 * an empty directory of the sandbox's own, the working directory (entered, not a mount). */
#define MOUNT_CHECKS "mount-checks"
#define MOUNT_IDENTITIES "mounts"
#define RUNTIME_MOUNTS "mounts"

/* The copy-on-write views of the project's git dirs (git_view.c, GitViews.java): the
 * host writes RUNTIME_GIT_VIEWS, read-only inside: the user's uid and gid, then one record
 * per view, every field ended by a NUL byte. The lower, upper and work dirs are below
 * GIT_LAYERS, a host directory of the run bound there, which the first program unmounts
 * once the overlays are mounted. bwrap starts the first program as uid 0 with
 * GIT_VIEW_CAPS; it mounts the overlays, then enters a user namespace of its own in which
 * it is the user again, with no capability, before the command runs. */
#define RUNTIME_GIT_VIEWS "git-views"
#define GIT_LAYERS "/run/agent-sandbox-git"
/* At most this many overlays in one run (GitViews.MAX_RECORDS). */
#define GIT_VIEWS_MAX 512
/* A record's kind, its first field:
 * - VIEW_GIT, a git dir: its path, then its lower dir, upper and work dir, and its identity
 *   ("device:inode", decimal), which the first program checks before it copies and mounts
 *   anything, all of it through descriptors of that directory. The lower dir
 *   is where the first program mounts a memory file system of the sandbox's own and
 *   copies the git dir into it without its object stores (git_snapshot.c); each store is
 *   an overlay of its own over the host's live directory (opened before the git dir's
 *   overlay covers it), whose upper dir is the store's path in the git dir's upper dir and
 *   whose work dir is "work-N" beside the git dir's. Beside the lower dir, the first
 *   program writes for the host's apply GIT_BASE_REFS (the copy's loose refs: per ref its
 *   name, a NUL, its content if at most GIT_BASE_REF_BYTES, a NUL) and GIT_BASE_PACKED_REFS
 *   (the copy's packed-refs), before the command runs;
 * - VIEW_HOME, a directory of the home that a preset grants: its lower dirs (the user's
 *   layer, then the host's dir, which is also where it is mounted), upper and work dir.
 *   The home layers are bound at HOME_LAYERS, unmounted like GIT_LAYERS. */
#define VIEW_GIT 'g'
#define GIT_BASE_REFS "base-refs"
#define GIT_BASE_PACKED_REFS "base-packed-refs"
#define GIT_BASE_REF_BYTES 4096
/* A git dir with more than this outside its object stores has no view: the run stops. */
#define GIT_SNAPSHOT_MAX_BYTES (256 << 20)
#define GIT_SNAPSHOT_MAX_ENTRIES 100000
#define VIEW_HOME 'h'
#define HOME_LAYERS "/run/agent-sandbox-homes"
#define MOUNT_BIND 'b'
#define MOUNT_READ_ONLY 'r'
#define MOUNT_EMPTY_DIR 'e'
#define MOUNT_WORKDIR 'w'
#define MOUNT_KINDS "brew"

/* The first field of a request. */
#define GUARD_MAGIC "AGS2"
/* Longest answer line the launcher reads. */
#define GUARD_MAX_LINE 8192
/* Most questions the guard asks per request. */
#define GUARD_MAX_QUESTIONS 16
/* Most bytes of git's output passed on for a question. */
#define GUARD_MAX_GIT_OUTPUT 65536
/* How long the real git may take to answer a question. */
#define GUARD_GIT_MILLIS 3000
/* How long the launcher waits for the whole answer. */
#define GUARD_TIMEOUT_SECONDS 20
/* How long a connection may take on the host before the guard closes it. */
#define GUARD_CONNECTION_MILLIS 15000
/* How long the launcher waits for the socket to appear after the sandbox starts. */
#define GUARD_CONNECT_MILLIS 3000
/* Most bytes of the parent's command line sent. */
#define GUARD_MAX_PARENT_CMDLINE 65536
/* A call of a blocked command is reported over the guard's socket (never to the
 * in-sandbox guard) for the host's denial log: GUARD_REPORT_MAGIC, the command's name and
 * its command line cut to GUARD_REPORT_LINE bytes, each ended by a NUL byte, at most
 * GUARD_MAX_REPORT bytes in all. The launcher gives the report GUARD_REPORT_MILLIS at most
 * (connecting, sending, and one line back), and the command stays blocked whatever happens. */
#define GUARD_REPORT_MAGIC "AGSB"
#define GUARD_REPORT_LINE 1000
#define GUARD_MAX_REPORT 4096
#define GUARD_REPORT_MILLIS 1000

#endif
