// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --share-tmp}: the host's temp dir at /tmp, without the host's sockets in it,
 * however deep they are and whenever the host makes them (the socket guard); the
 * sandbox's own sockets there work.
 */
class SharedTmpIT {
    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    /** A host listener on a Unix socket at the path given, which greets whoever connects. */
    private static final String LISTENER = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen()
            while True:
                c, _ = s.accept()
                try:
                    c.sendall(b'hello from the host')
                except OSError:
                    pass
                c.close()
            """;

    /** Connects to each path given and prints what it read, or "refused". */
    private static final String CONNECT = """
            import socket, sys
            for path in sys.argv[1:]:
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(path)
                    print(path, s.recv(100).decode())
                except OSError as e:
                    print(path, "refused", e.strerror)
            """;

    /** A host listener on a Unix datagram socket at the path given, which appends what it gets to PATH.got. */
    private static final String DATAGRAM_LISTENER = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.bind(sys.argv[1])
            while True:
                data = s.recv(100)
                with open(sys.argv[1] + '.got', 'ab') as f:
                    f.write(data)
            """;

    /**
     * Inside: binds a listener at each path given (making its directory), connects to it
     * from a thread (not the process's first), and prints "PATH own: WHAT IT READ" or
     * "PATH own refused".
     */
    private static final String OWN = """
            import os, socket, sys, threading
            def serve(s):
                while True:
                    c, _ = s.accept()
                    c.sendall(b'hello from inside')
                    c.close()
            def connect(path):
                try:
                    c = socket.socket(socket.AF_UNIX)
                    c.connect(path)
                    print(path, "own:", c.recv(100).decode())
                except OSError as e:
                    print(path, "own refused", e.strerror)
            for path in sys.argv[1:]:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                s = socket.socket(socket.AF_UNIX)
                s.bind(path)
                s.listen()
                threading.Thread(target=serve, args=(s,), daemon=True).start()
                t = threading.Thread(target=connect, args=(path,))
                t.start()
                t.join()
            """;

    /** ctypes' view of sendmsg's and sendmmsg's structures (x86-64 and arm64 alike). */
    private static final String MESSAGE_STRUCTS = """
            import ctypes, os
            libc = ctypes.CDLL(None, use_errno=True)
            class iovec(ctypes.Structure):
                _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
            class msghdr(ctypes.Structure):
                _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.c_void_p),
                            ("iovlen", ctypes.c_size_t), ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                            ("flags", ctypes.c_int)]
            class mmsghdr(ctypes.Structure):
                _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
            """;

    /**
     * Inside: datagrams to the host's socket (argv[1]) with sendto, sendmsg and sendmmsg, and
     * the same to a socket of its own, sendmsg passing a descriptor along.
     */
    private static final String DATAGRAMS = MESSAGE_STRUCTS + """
            import array, socket, sys
            out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            def mmsg(path, texts):
                # sends them all, as callers do when sendmmsg sends fewer than asked
                address = ctypes.create_string_buffer(b"\\x01\\x00" + path.encode() + b"\\0", 110)
                msgs = (mmsghdr * len(texts))()
                keep = []
                for i, t in enumerate(texts):
                    b = ctypes.create_string_buffer(t)
                    v = iovec(ctypes.cast(b, ctypes.c_void_p), len(t))
                    keep += [b, v]
                    msgs[i].hdr.name = ctypes.cast(address, ctypes.c_void_p)
                    msgs[i].hdr.namelen = 2 + len(path) + 1
                    msgs[i].hdr.iov = ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
                    msgs[i].hdr.iovlen = 1
                sent = 0
                while sent < len(texts):
                    n = libc.sendmmsg(out.fileno(), ctypes.byref(msgs, sent * ctypes.sizeof(mmsghdr)),
                                      len(texts) - sent, 0)
                    if n < 0:
                        return "refused " + os.strerror(ctypes.get_errno())
                    sent += n
                return "sent %d, lengths %s" % (sent, [m.len for m in msgs])
            try:
                out.sendto(b'from inside', sys.argv[1])
                print("datagram sent to the host")
            except OSError as e:
                print("datagram refused", e.strerror)
            try:
                out.sendmsg([b'from inside', b' by sendmsg'], [], 0, sys.argv[1])
                print("sendmsg sent to the host")
            except OSError as e:
                print("sendmsg refused", e.strerror)
            print("sendmmsg to the host:", mmsg(sys.argv[1], [b'one', b'two']))
            own = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            own.bind('/tmp/own.dgram')
            out.sendto(b'to myself', '/tmp/own.dgram')
            print("own datagram:", own.recv(100).decode())
            r, w = os.pipe()
            out.sendmsg([b'to myself', b' by sendmsg'],
                        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [r]).tobytes())], 0, '/tmp/own.dgram')
            got, ancillary, _, _ = own.recvmsg(100, socket.CMSG_SPACE(4))
            passed = array.array('i', ancillary[0][2][:4])[0]
            os.write(w, b'through the pipe passed along')
            print("own sendmsg:", got.decode(), "/", os.read(passed, 100).decode())
            print("own sendmmsg:", mmsg('/tmp/own.dgram', [b'one', b'two']), own.recv(100).decode(),
                  own.recv(100).decode())
            """;

    /** Inside: TCP and UDP on the loopback, to show the guard leaves them alone. */
    private static final String INET = """
            import socket
            t = socket.socket()
            t.bind(('127.0.0.1', 0))
            t.listen()
            c = socket.socket()
            c.connect(t.getsockname())
            a, _ = t.accept()
            a.sendall(b'tcp works')
            print(c.recv(100).decode())
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.bind(('127.0.0.1', 0))
            v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            v.sendto(b'udp works', u.getsockname())
            print(u.recv(100).decode())
            """;

    /** The shell's part inside: says it runs (/tmp/ready), then waits until the host says go (/tmp/go). */
    private static final String AWAIT_GO = "touch /tmp/ready; i=0; while [ ! -e /tmp/go ] && [ $i -lt 600 ]; do"
            + " sleep 0.05; i=$((i+1)); done; ";

    @Test
    void A_Host_Socket_Made_After_The_Start_Is_Unreachable_At_Any_Depth_And_The_Sandboxs_Own_Work() {
        Path tmp = sandbox.tmp();
        Path late = tmp.resolve("late.sock");
        Path deep = tmp.resolve("later/deep/late.sock");
        Path datagram = tmp.resolve("late.dgram");
        SandboxCli.Started run = sandbox.command("--share-tmp", "--", "sh", "-c", AWAIT_GO
                        + "python3 -c \"$1\" /tmp/late.sock /tmp/later/deep/late.sock " + late + " " + deep
                        + "; python3 -c \"$2\" /tmp/own.sock /tmp/mine/deeper/own.sock /tmp/later/deep/own.sock"
                        + "; python3 -c \"$3\" /tmp/late.dgram; python3 -c \"$4\"",
                "sh", CONNECT, OWN, DATAGRAMS, INET).start();
        SandboxCli.Started one = null;
        SandboxCli.Started two = null;
        SandboxCli.Started three = null;
        try {
            run.awaitFile(tmp.resolve("ready"), SandboxCli.TIMEOUT);
            // made while the sandbox runs: the directories too
            sandbox.mkdirs(deep.getParent());
            one = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, late.toString());
            two = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, deep.toString());
            three = sandbox.startOnHost(Map.of(), "python3", "-c", DATAGRAM_LISTENER, datagram.toString());
            awaitPath(late);
            awaitPath(deep);
            awaitPath(datagram);
            // the control: on the host both answer
            sandbox.runOnHost("python3", "-c", CONNECT, late.toString(), deep.toString()).succeeds()
                    .stdoutContains(late + " hello from the host", deep + " hello from the host");
            sandbox.write(tmp.resolve("go"), "");
            run.waitFor(SandboxCli.TIMEOUT).succeeds()
                    .stdoutContains("/tmp/late.sock refused", "/tmp/later/deep/late.sock refused",
                            late + " refused", deep + " refused",
                            "/tmp/own.sock own: hello from inside", "/tmp/mine/deeper/own.sock own: hello from inside",
                            "/tmp/later/deep/own.sock own: hello from inside",
                            "datagram refused", "own datagram: to myself", "tcp works", "udp works",
                            "sendmsg refused Connection refused", "sendmmsg to the host: refused Connection refused",
                            "own sendmsg: to myself by sendmsg / through the pipe passed along",
                            "own sendmmsg: sent 2, lengths [3, 3] one two")
                    .stdoutDoesNotContain("hello from the host", "datagram sent", "sendmsg sent");
            pause(200);
            assertThat(tmp.resolve("late.dgram.got")).as("what the host's datagram socket got").doesNotExist();
            // what the sandbox bound is there for the host to see, as any file in the shared /tmp
            assertThat(tmp.resolve("mine/deeper/own.sock")).exists();
        } finally {
            for (SandboxCli.Started listener : new SandboxCli.Started[] {one, two, three}) {
                if (listener != null) {
                    stop(listener);
                }
            }
        }
    }

    /**
     * Inside: 140 threads connect to a listener of its own that never accepts, more than the
     * guard's workers and queue hold; the guard answers the rest EAGAIN, and a call that
     * cannot block is still answered at once.
     */
    private static final String WORKERS_TAKEN = """
            import errno, os, socket, threading, time
            srv = socket.socket(socket.AF_UNIX)
            srv.bind("/tmp/never-accepts.sock")
            srv.listen(0)
            again = []
            def stuck():
                c = socket.socket(socket.AF_UNIX)
                try:
                    c.connect("/tmp/never-accepts.sock")
                except OSError as e:
                    if e.errno == errno.EAGAIN:
                        again.append(1)
            for i in range(140):
                threading.Thread(target=stuck, daemon=True).start()
            time.sleep(3)
            d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            d.bind("/tmp/still-answered.dgram")
            o = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            o.setblocking(False)
            o.sendto(b"answered", "/tmp/still-answered.dgram")
            print("datagram:", d.recv(100).decode(), "; told to try again:", len(again) > 0, flush=True)
            os._exit(0)
            """;

    @Test
    void Blocking_Calls_Beyond_The_Guards_Workers_Are_Told_To_Try_Again_And_The_Rest_Is_Answered() {
        sandbox.run("--share-tmp", "--", "python3", "-c", WORKERS_TAKEN).succeeds()
                .stdoutIs("datagram: answered ; told to try again: True\n");
    }

    /** A temp dir that is /tmp itself is its own view: each rule once (a home below it had every view twice). */
    @Test
    void A_Temp_Dir_That_Is_Tmp_Itself_Is_Shared_With_Each_Rule_Once() {
        String line = sandbox.command("--share-tmp", "--dry-run", "--", "true").env("TMPDIR", "/tmp").run()
                .succeeds().stdout();
        assertThat(line.split("--bind-try /tmp /tmp ", -1)).as(line).hasSize(2);
        sandbox.command("--share-tmp", "--", "sh", "-c", "echo shared > /tmp/agent-sandbox-shared-once-$$ && rm"
                + " /tmp/agent-sandbox-shared-once-$$ && echo ok").env("TMPDIR", "/tmp").run().succeeds()
                .stdoutIs("ok\n");
    }

    /** tmux needs a terminal type, and a shell (the test user's login shell is nologin). */
    private static Map<String, String> tmuxEnv() {
        Map<String, String> all = new LinkedHashMap<>();
        all.put("TERM", "xterm");
        all.put("SHELL", "/bin/sh");
        return all;
    }

    @Test
    void A_Host_Tmux_Started_After_The_Start_Cannot_Be_Driven_And_One_Started_Inside_Can() {
        Path tmp = sandbox.tmp();
        Path socket = tmp.resolve("tmux-late/default");
        Path hostTrace = sandbox.home("pwned-late-tmux");
        SandboxCli.Started run = sandbox.command("--share-tmp", "--", "sh", "-c", AWAIT_GO
                        + "tmux -S /tmp/tmux-late/default run-shell 'touch " + hostTrace + "' && echo escaped;"
                        + " tmux -S /tmp/tmux-late/default send-keys 'touch " + hostTrace + "' Enter && echo escaped;"
                        + " tmux -S /tmp/tmux-own new-session -d 'sleep 60' && tmux -S /tmp/tmux-own run-shell"
                        + " 'echo driven > /tmp/own-tmux-trace' && tmux -S /tmp/tmux-own kill-server; true")
                .env(tmuxEnv()).start();
        try {
            run.awaitFile(tmp.resolve("ready"), SandboxCli.TIMEOUT);
            sandbox.mkdirs(socket.getParent());
            sandbox.runOnHost(tmuxEnv(), "tmux", "-S", socket.toString(), "new-session", "-d", "sleep 1000")
                    .succeeds();
            awaitPath(socket);
            // the control: on the host, the route works
            sandbox.runOnHost(tmuxEnv(), "tmux", "-S", socket.toString(), "run-shell", "touch " + hostTrace + "-host")
                    .succeeds();
            awaitPath(Path.of(hostTrace + "-host"));
            sandbox.write(tmp.resolve("go"), "");
            run.waitFor(SandboxCli.TIMEOUT).succeeds().stdoutDoesNotContain("escaped");
            pause(300);
            assertThat(hostTrace).as("what the host's tmux ran").doesNotExist();
            assertThat(tmp.resolve("own-tmux-trace")).hasContent("driven");
        } finally {
            sandbox.runOnHost(tmuxEnv(), "tmux", "-S", socket.toString(), "kill-server");
        }
    }

    @Test
    void A_Nested_Sandbox_With_The_Shared_Tmp_Works_And_Cannot_Reach_A_Host_Socket_Made_Later() {
        Path tmp = sandbox.tmp();
        Path late = tmp.resolve("nested-late/late.sock");
        SandboxCli.Started run = sandbox.command("--share-tmp", "--", NestedIT.INNER, "--share-tmp", "--", "sh",
                "-c", AWAIT_GO + "python3 -c \"$1\" /tmp/nested-late/late.sock; python3 -c \"$2\" /tmp/inner.sock;"
                        + " python3 -c \"$3\"", "sh", CONNECT, OWN, INET).start();
        SandboxCli.Started listener = null;
        try {
            run.awaitFile(tmp.resolve("ready"), SandboxCli.TIMEOUT);
            sandbox.mkdirs(late.getParent());
            listener = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, late.toString());
            awaitPath(late);
            sandbox.runOnHost("python3", "-c", CONNECT, late.toString()).succeeds()
                    .stdoutContains(late + " hello from the host");
            sandbox.write(tmp.resolve("go"), "");
            run.waitFor(SandboxCli.TIMEOUT).succeeds()
                    .stdoutContains("/tmp/nested-late/late.sock refused", "/tmp/inner.sock own: hello from inside",
                            "tcp works", "udp works")
                    .stdoutDoesNotContain("hello from the host");
        } finally {
            if (listener != null) {
                stop(listener);
            }
        }
    }

    /**
     * Inside: connect(2), sendto(2), sendmsg(2) and sendmmsg(2) with addresses or messages
     * too long, too short, unreadable, on a descriptor that is no socket or none; prints each
     * answer, then connects to a socket of its own (the guard is still there to answer).
     */
    private static final String HOSTILE = MESSAGE_STRUCTS + """
            import socket, threading
            def answer(what, r):
                print(what, r, os.strerror(ctypes.get_errno()) if r < 0 else "")
            s = socket.socket(socket.AF_UNIX)
            address = ctypes.create_string_buffer(b"\\x01\\x00" + b"A" * 200, 256)
            for n in (1000, 128, 111, 110, 3, 2, 0, -1):
                answer("length %d:" % n, libc.connect(s.fileno(), address, n))
            answer("unreadable:", libc.connect(s.fileno(), ctypes.c_void_p(16), 20))
            answer("no descriptor:", libc.connect(999, address, 20))
            answer("no socket:", libc.connect(os.open("/tmp", os.O_RDONLY), address, 20))
            d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            answer("sendto unreadable:", libc.sendto(d.fileno(), b"x", 1, 0, ctypes.c_void_p(16), 20))
            answer("sendto too long:", libc.sendto(d.fileno(), b"x", 1, 0, address, 1000))
            answer("sendmsg unreadable:", libc.sendmsg(d.fileno(), ctypes.c_void_p(16), 0))
            h = msghdr()
            h.iovlen = 2000
            answer("sendmsg too many pieces:", libc.sendmsg(d.fileno(), ctypes.byref(h), 0))
            h.iovlen = 1
            h.iov = 16
            answer("sendmsg unreadable piece list:", libc.sendmsg(d.fileno(), ctypes.byref(h), 0))
            h.iovlen = 0
            big = ctypes.create_string_buffer(2 * 1024 * 1024)
            h.control = ctypes.cast(big, ctypes.c_void_p)
            h.controllen = 100
            answer("sendmsg ancillary data of zeros:", libc.sendmsg(d.fileno(), ctypes.byref(h), 0))
            h.controllen = 2 * 1024 * 1024
            answer("sendmsg too much ancillary data:", libc.sendmsg(d.fileno(), ctypes.byref(h), 0))
            answer("sendmmsg of none:", libc.sendmmsg(d.fileno(), ctypes.byref(h), 0, 0))
            answer("sendmmsg unreadable:", libc.sendmmsg(d.fileno(), ctypes.c_void_p(16), 1, 0))
            import signal
            signal.signal(signal.SIGPIPE, lambda *a: print("got SIGPIPE"))
            one, other = socket.socketpair()
            other.close()
            try:
                one.sendmsg([b"x"])
            except OSError as e:
                print("sendmsg to a closed peer:", e.strerror)
            own = socket.socket(socket.AF_UNIX)
            own.bind("/tmp/after-hostile.sock")
            own.listen()
            c = socket.socket(socket.AF_UNIX)
            c.connect("/tmp/after-hostile.sock")
            print("afterwards: own socket connected")
            """;

    @Test
    void Hostile_Addresses_Get_The_Kernels_Own_Answers_With_The_Guard_And_The_Guard_Stays() {
        String without = sandbox.run("--", "python3", "-c", HOSTILE).succeeds()
                .stdoutContains("afterwards: own socket connected").stdout();
        sandbox.run("--share-tmp", "--", "python3", "-c", HOSTILE).succeeds()
                .stdoutContains("length 1000: -1 Invalid argument", "unreadable: -1 Bad address",
                        "no socket: -1 Socket operation on non-socket", "sendmsg too many pieces: -1 Message too long",
                        "sendmsg ancillary data of zeros: -1 Invalid argument",
                        "sendmsg too much ancillary data: -1 No buffer space available", "sendmmsg of none: 0",
                        "got SIGPIPE", "sendmsg to a closed peer: Broken pipe")
                .stdoutIs(without);
    }

    /** Inside: 2000 connects to a socket of its own while a 0.2 ms timer's handler interrupts the process. */
    private static final String UNDER_SIGNALS = """
            import os, signal, socket, threading
            signal.signal(signal.SIGALRM, lambda *a: None)
            signal.siginterrupt(signal.SIGALRM, False)
            signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
            srv = socket.socket(socket.AF_UNIX)
            srv.bind("/tmp/signals.sock")
            srv.listen(128)
            def accept():
                while True:
                    c, _ = srv.accept()
                    c.close()
            threading.Thread(target=accept, daemon=True).start()
            errors = {}
            for i in range(2000):
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect("/tmp/signals.sock")
                except OSError as e:
                    errors[e.strerror] = errors.get(e.strerror, 0) + 1
                s.close()
            signal.setitimer(signal.ITIMER_REAL, 0)
            print("errors:", errors)
            """;

    /** A call the guard made is not made again when a signal handler restarts it ("already connected"). */
    @Test
    void Connects_Interrupted_By_A_Signal_Handler_Are_Made_Once() {
        sandbox.run("--share-tmp", "--", "python3", "-c", UNDER_SIGNALS).succeeds().stdoutIs("errors: {}\n");
    }

    @Test
    void A_Host_Socket_Below_Subdirectories_Of_The_Shared_Tmp_Is_Unreachable_And_The_Files_Around_It_Are_Shared() {
        Path tmp = sandbox.tmp();
        Path deep = tmp.resolve("a/b/sock");
        Path deeper = tmp.resolve("p/q/r/s/sock");
        sandbox.write(tmp.resolve("a/b/notes.txt"), "shared notes\n");
        sandbox.write(tmp.resolve("p/q/file"), "x\n");
        sandbox.mkdirs(tmp.resolve("p/q/r/s"));
        SandboxCli.Started one = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, deep.toString());
        SandboxCli.Started two = sandbox.startOnHost(Map.of(), "python3", "-c", LISTENER, deeper.toString());
        try {
            awaitPath(deep);
            awaitPath(deeper);
            // the control: on the host both answer
            sandbox.runOnHost("python3", "-c", CONNECT, deep.toString(), deeper.toString()).succeeds()
                    .stdoutContains(deep + " hello from the host", deeper + " hello from the host");
            sandbox.run("--share-tmp", "--", "sh", "-c", "cat /tmp/a/b/notes.txt; python3 -c \"$1\" /tmp/a/b/sock"
                            + " /tmp/p/q/r/s/sock " + deep + " " + deeper + "; echo made > /tmp/p/q/from-inside",
                            "sh", CONNECT)
                    .succeeds().stdoutContains("shared notes\n", "/tmp/a/b/sock refused", "/tmp/p/q/r/s/sock refused")
                    .stdoutDoesNotContain("hello from the host");
            assertThat(tmp.resolve("p/q/from-inside")).hasContent("made");
        } finally {
            stop(one);
            stop(two);
        }
    }

    /** Ends a host listener; one that has ended already (its socket path refused) is fine here. */
    private static void stop(SandboxCli.Started listener) {
        if (listener.isAlive()) {
            listener.signal("KILL");
        }
    }

    private static void awaitPath(Path p) {
        for (int i = 0; i < 200 && !Files.exists(p); i++) {
            pause(25);
        }
        assertThat(p).as("the host's socket").exists();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
