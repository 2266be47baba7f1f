// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.host;

import agentsandbox.core.Environment;
import agentsandbox.core.SandboxException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The choice between a network stack of the sandbox's own and the proxy: the stack's
 * program is found on PATH or named, the tun device is a file of the test's, so every
 * outcome shows on any machine.
 */
class NetStackTest {
    @TempDir
    Path tmp;

    private Environment env(Map<String, String> vars) {
        return new Environment(tmp, tmp, vars, tmp, 1000, "Linux", null);
    }

    private Path executable(String dir, String name) throws IOException {
        Path p = Files.createDirectories(tmp.resolve(dir)).resolve(name);
        Files.writeString(p, "#!/bin/sh\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        return p;
    }

    private Path tun() throws IOException {
        return Files.writeString(tmp.resolve("tun"), "");
    }

    @Test
    void The_Stack_On_Path_Is_Chosen_When_The_Tun_Device_Is_Usable() throws IOException {
        Path program = executable("bin", "slirp4netns");
        NetStack s = NetStack.choose(env(Map.of("PATH", "relative:" + program.getParent())), tun());
        assertThat(s.stack()).isTrue();
        assertThat(s.program()).isEqualTo(program);
        assertThat(s.fallback()).isNull();
    }

    @Test
    void Without_The_Program_Or_The_Device_The_Proxy_Is_Used_And_The_Fix_Said() throws IOException {
        NetStack noProgram = NetStack.choose(env(Map.of("PATH", tmp.resolve("empty").toString())), tun());
        assertThat(noProgram.stack()).isFalse();
        assertThat(noProgram.fallback()).isEqualTo("slirp4netns is not installed");
        assertThat(noProgram.fix()).contains("apt-get install slirp4netns");

        Path program = executable("bin", "slirp4netns");
        NetStack noDevice = NetStack.choose(env(Map.of("PATH", program.getParent().toString())), tmp.resolve("none"));
        assertThat(noDevice.stack()).isFalse();
        assertThat(noDevice.fallback()).isEqualTo("there is no " + tmp.resolve("none"));
        assertThat(noDevice.fix()).contains("modprobe tun");
    }

    @Test
    void The_Proxy_Can_Be_Chosen_And_A_Named_Program_Must_Be_One() throws IOException {
        Path program = executable("bin", "slirp4netns");
        NetStack proxy = NetStack.choose(env(Map.of("PATH", program.getParent().toString(), NetStack.CHOICE,
                NetStack.PROXY)), tun());
        assertThat(proxy.stack()).isFalse();
        assertThat(proxy.fallback()).as("chosen, not a fallback").isNull();

        Path named = executable("elsewhere", "my-stack");
        assertThat(NetStack.choose(env(Map.of(NetStack.CHOICE, named.toString())), tun()).program()).isEqualTo(named);
        for (String bad : new String[] {"slirp4netns", tmp.resolve("missing").toString(), tmp.toString()}) {
            assertThatThrownBy(() -> NetStack.choose(env(Map.of(NetStack.CHOICE, bad)), tun()))
                    .isInstanceOf(SandboxException.class)
                    .hasMessageContaining(NetStack.CHOICE + "=" + bad + " is not an executable program");
        }
    }

    @Test
    void With_An_Allow_List_The_Filter_Is_The_Only_Resolver_Whatever_The_Host_Names() {
        assertThat(NetStack.resolvConf("nameserver 192.0.2.1\nnameserver 192.0.2.2\nsearch lan\n", true))
                .isEqualTo("nameserver " + NetStack.FILTER_RESOLVER + "\nsearch lan\n");
        assertThat(NetStack.resolvConf(null, true)).isEqualTo("nameserver " + NetStack.FILTER_RESOLVER + "\n");
    }

    @Test
    void A_Loopback_Resolver_Becomes_The_Stack_s_And_Every_Other_Line_Stays() {
        assertThat(NetStack.resolvConf("# managed\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n"))
                .isEqualTo("# managed\nnameserver " + NetStack.RESOLVER + "\noptions edns0 trust-ad\nsearch lan\n");
        assertThat(NetStack.resolvConf("nameserver ::1\nnameserver 192.0.2.53\n"))
                .as("one resolver: the stack asks the host's in the host's order")
                .isEqualTo("nameserver " + NetStack.RESOLVER + "\n");
        assertThat(NetStack.resolvConf("nameserver 192.0.2.53\n")).as("reachable as it is").isNull();
        assertThat(NetStack.resolvConf(null)).isNull();
    }
}
