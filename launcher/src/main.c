// SPDX-License-Identifier: Apache-2.0
/*
 * agent-sandbox native launcher: one program, several faces, chosen here by the name
 * it was started under and the path it runs at.
 *
 * Started as `agent-sandbox` (tool.c), it finds the application directory next to its
 * own executable and starts the bundled Java runtime running the command line tool,
 * as its child (run_jvm.c), with the starter forked beside it (starter.c), which
 * starts bwrap for the tool and removes the run's directories afterwards
 * (remove_tree.c). `agent-sandbox check` is answered there, without a JVM.
 *
 * Layouts it understands (found through /proc/self/exe, so a symlink to the
 * launcher and directories with spaces work):
 *
 *   installed       <home>/bin/agent-sandbox, application in <home>
 *   in a sandbox    /run/agent-sandbox/agent-sandbox, application in
 *                   /run/agent-sandbox/app (the launcher's directory holds app/lib)
 *
 * Inside a sandbox the same binary is also bound, read-only, over every path of
 * a wrapped command (/usr/bin/git, ...). Started there it is the wrapper
 * (wrapper.c): the rule for the path it was started at is the target of a symlink
 * named after that path in /run/agent-sandbox/cmd/ (in a nested sandbox, possibly in
 * an outer runtime under /run/agent-sandbox/outer/...), one line:
 *
 *   <kind> TAB <name> TAB <real binary, relative to the runtime, or -> TAB <script or ->
 *
 *   block   print that the command is blocked, exit 1
 *   script  exec the script with the original arguments, AGENT_SANDBOX_CMD and
 *           AGENT_SANDBOX_REAL set
 *   git     ask the git guard (git_guard.c, guard_client.c: the agent-sandbox
 *           process outside, over the Unix socket <runtime>/guard/socket) and exec
 *           the real git or refuse; no answer means no git
 *
 * Started as /run/agent-sandbox/exec (COMMAND_START, a symlink to the launcher that
 * every sandbox has), it is the first program of the sandbox (command_start.c): bwrap
 * runs it in place of the command, and it checks the mounts, installs the seccomp
 * filter (seccomp_filter.c) and starts the sandbox's helper (net_helper.c) before it
 * execs the command.
 *
 * Started by the tool as `agent-sandbox --internal-start-bwrap LOG bwrap ...`, it
 * becomes bwrap with bwrap's own messages going to LOG (bwrap_start.c); the starter
 * does the same. When the tool asks for the sandbox's own network stack, a process it
 * leaves behind attaches the stack once bwrap has made the namespaces (net_stack.c).
 *
 * Every failure is one line on stderr and exit status 1 (util.c). The constants it
 * shares with the Java side are in guard.h.
 */
#define _GNU_SOURCE

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "command_start.h"
#include "guard.h"
#include "tool.h"
#include "util.h"
#include "wrapper.h"

int main(int argc, char *argv[])
{
    if (argc < 1 || argv[0] == NULL) {
        die("started without a program name");
    }
    if (strcmp(argv[0], COMMAND_START) == 0) {
        start_command(argc, argv);
    }
    /* Which face: a wrapper when this path is a wrapped command's, else the tool. */
    char exe[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe);
    if (length > 0 && (size_t)length < sizeof exe) {
        exe[length] = '\0';
        struct rule rule;
        if (find_rule(exe, &rule)) {
            run_wrapper(&rule, argc, argv);
        }
    }
    run_tool(argc, argv);
}
