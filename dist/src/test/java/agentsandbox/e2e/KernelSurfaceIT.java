// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The kernel surface the sandbox's seccomp filter refuses, by system call number, from
 * a probe inside; and the controls: the same calls work on the host, a nested
 * agent-sandbox and user namespaces still work, and a build still builds.
 */
class KernelSurfaceIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    static final String INNER = "/run/agent-sandbox/agent-sandbox";

    /**
     * Calls each system call by its number with arguments that make it succeed on a kernel
     * that allows it, and prints "NAME ok" or "NAME ERRNO-NAME", one per line.
     */
    static final String PROBE = """
            import ctypes, errno, os, platform, socket
            libc = ctypes.CDLL(None, use_errno=True)
            x86 = platform.machine() == "x86_64"
            NR = dict(perf_event_open=298 if x86 else 241, userfaultfd=323 if x86 else 282,
                      bpf=321 if x86 else 280, kexec_load=246 if x86 else 104, move_pages=279 if x86 else 239,
                      keyctl=250 if x86 else 219, personality=135 if x86 else 92, modify_ldt=154 if x86 else -1,
                      io_uring_setup=425, fsopen=430, open_tree=428, memfd_secret=447)
            def call(name, *args):
                r = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) for a in args])
                return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
            def show(name, outcome):
                print(name, outcome, flush=True)
            params = ctypes.create_string_buffer(120)
            show("io_uring_setup", call("io_uring_setup", 4, ctypes.addressof(params)))
            attr = ctypes.create_string_buffer(128)
            ctypes.c_uint32.from_buffer(attr, 0).value = 1        # PERF_TYPE_SOFTWARE
            ctypes.c_uint32.from_buffer(attr, 4).value = 128      # size
            ctypes.c_uint64.from_buffer(attr, 8).value = 1        # PERF_COUNT_SW_TASK_CLOCK
            ctypes.c_uint64.from_buffer(attr, 40).value = 0x60    # exclude_kernel, exclude_hv
            show("perf_event_open", call("perf_event_open", ctypes.addressof(attr), 0, -1, -1, 0))
            show("userfaultfd", call("userfaultfd", 1 | os.O_CLOEXEC))   # UFFD_USER_MODE_ONLY
            show("bpf", call("bpf", 0, 0, 0))
            show("kexec_load", call("kexec_load", 0, 0, 0, 0))
            fstype = ctypes.c_char_p(b"tmpfs")
            show("fsopen", call("fsopen", ctypes.cast(fstype, ctypes.c_void_p).value, 0))
            dot = ctypes.c_char_p(b".")
            show("open_tree", call("open_tree", -100, ctypes.cast(dot, ctypes.c_void_p).value, 0))
            show("memfd_secret", call("memfd_secret", 0))
            ldt = ctypes.create_string_buffer(16)
            show("modify_ldt", call("modify_ldt", 0, ctypes.addressof(ldt), 16) if x86 else "EPERM")
            show("move_pages", call("move_pages", 0, 0, 0, 0, 0, 0))
            show("keyctl", call("keyctl", 0, -3, 0))                       # KEYCTL_GET_KEYRING_ID, session
            show("personality", call("personality", 0x0400000))          # READ_IMPLIES_EXEC
            show("personality_query", call("personality", 0xffffffff))
            for name, family, kind, protocol in (("AF_VSOCK", 40, socket.SOCK_STREAM, 0),
                                                 ("AF_PACKET", 17, socket.SOCK_RAW, 0),
                                                 ("NETLINK_NETFILTER", 16, socket.SOCK_RAW, 12),
                                                 ("NETLINK_ROUTE", 16, socket.SOCK_RAW, 0),
                                                 ("AF_INET", 2, socket.SOCK_STREAM, 0),
                                                 ("AF_UNIX", 1, socket.SOCK_STREAM, 0)):
                try:
                    socket.socket(family, kind, protocol).close()
                    show(name, "ok")
                except OSError as e:
                    show(name, errno.errorcode[e.errno])
            """;

    private Result probe(String... wrapper) {
        sandbox.write("probe.py", PROBE);
        String[] args = new String[wrapper.length + 4];
        args[0] = "--";
        System.arraycopy(wrapper, 0, args, 1, wrapper.length);
        args[wrapper.length + 1] = "python3";
        args[wrapper.length + 2] = "-c";
        args[wrapper.length + 3] = PROBE;
        return sandbox.run(args);
    }

    @Test
    void The_Kernel_Surface_Is_Refused_By_System_Call_Number() {
        probe().succeeds().stdoutContains(
                "io_uring_setup ENOSYS\n",
                "perf_event_open EPERM\n",
                "userfaultfd EPERM\n",
                "bpf EPERM\n",
                "kexec_load EPERM\n",
                "fsopen ENOSYS\n",
                "open_tree ENOSYS\n",
                "memfd_secret EPERM\n",
                "modify_ldt EPERM\n",
                "move_pages EPERM\n",
                "keyctl EPERM\n",
                "personality ENOSYS\n",
                "personality_query ok\n",
                "AF_VSOCK EAFNOSUPPORT\n",
                "AF_PACKET EAFNOSUPPORT\n",
                "NETLINK_NETFILTER EPROTONOSUPPORT\n",
                // what is not refused
                "NETLINK_ROUTE ok\n",
                "AF_INET ok\n",
                "AF_UNIX ok\n");
    }

    /** The control: on the host, as the same user, the same calls with the same arguments work. */
    @Test
    void On_The_Host_The_Same_Calls_Work() {
        sandbox.runOnHost("python3", "-c", PROBE).succeeds().stdoutContains(
                "io_uring_setup ok\n",
                "userfaultfd ok\n",
                "personality ok\n",
                "AF_VSOCK ok\n",
                "NETLINK_NETFILTER ok\n");
    }

    /**
     * In a user namespace of its own (as a nested sandbox makes one) the command is root
     * there, and the usual privilege-escalation surface is still refused: packet sockets,
     * netfilter netlink, the new mount API. The old mount(2) of a tmpfs works there, as a
     * nested sandbox needs.
     */
    @Test
    void A_New_User_Namespace_Keeps_The_Filter_And_Still_Mounts() {
        probe("unshare", "--user", "--map-root-user", "--net", "--mount").succeeds().stdoutContains(
                "AF_PACKET EAFNOSUPPORT\n",
                "NETLINK_NETFILTER EPROTONOSUPPORT\n",
                "fsopen ENOSYS\n",
                "io_uring_setup ENOSYS\n");
        sandbox.run("--", "unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                        "mount -t tmpfs none /mnt && echo mounted > /mnt/x && cat /mnt/x")
                .succeeds().stdoutIs("mounted\n");
    }

    /** A sandbox inside keeps the outer filter, adds its own, and runs its command. */
    @Test
    void A_Nested_Sandbox_Works_Under_The_Filter() {
        sandbox.write("probe.py", PROBE);
        sandbox.run("--", INNER, "--", INNER, "--", "python3", "probe.py")
                .succeeds().stdoutContains("io_uring_setup ENOSYS\n", "AF_PACKET EAFNOSUPPORT\n", "AF_UNIX ok\n");
    }

    /** A C build with make, and a threaded program, as an agent runs them. */
    @Test
    void A_Build_Still_Builds() {
        sandbox.write("hello.c", """
                #include <pthread.h>
                #include <stdio.h>
                static void *work(void *arg) { return arg; }
                int main(void) {
                    pthread_t t;
                    pthread_create(&t, NULL, work, NULL);
                    pthread_join(t, NULL);
                    puts("built and ran");
                    return 0;
                }
                """);
        sandbox.write("Makefile", "hello: hello.c\n\tcc -O2 -pthread -o hello hello.c\n");
        sandbox.run("--", "sh", "-c", "make -s && ./hello").succeeds().stdoutContains("built and ran\n");
    }
}
