// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Sha256Test {
    @Test
    void The_Standards_Examples_Hash_To_Their_Published_Digests() {
        assertThat(Sha256.hex(new byte[0]))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assertThat(Sha256.hex("abc".getBytes(StandardCharsets.US_ASCII)))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(Sha256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".getBytes(StandardCharsets.US_ASCII)))
                .isEqualTo("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        byte[] million = new byte[1_000_000];
        java.util.Arrays.fill(million, (byte) 'a');
        assertThat(Sha256.hex(million)).isEqualTo("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }

    /** Every length around the block and padding edges, and random contents, as the JDK's digest. */
    @Test
    void Any_Content_Hashes_As_The_JDKs_SHA256() throws Exception {
        Random random = new Random(7);
        MessageDigest jdk = MessageDigest.getInstance("SHA-256");
        for (int length = 0; length <= 300; length++) {
            for (int round = 0; round < 3; round++) {
                byte[] data = new byte[length];
                random.nextBytes(data);
                assertThat(Sha256.hex(data)).as("%d bytes", length).isEqualTo(HexFormat.of().formatHex(jdk.digest(data)));
            }
        }
    }
}
