// SPDX-License-Identifier: Apache-2.0
package agentsandbox.urandom;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.SecureRandom;
import org.junit.jupiter.api.Test;

class UrandomProviderTest {

    @Test
    void Answers_The_Sockets_Request_With_Fresh_Bytes_From_The_Kernel() throws Exception {
        SecureRandom random = SecureRandom.getInstance("NativePRNGNonBlocking", new UrandomProvider());
        byte[] a = new byte[32];
        byte[] b = new byte[32];
        random.nextBytes(a);
        random.nextBytes(b);

        assertThat(random.getProvider().getName()).isEqualTo("AgentSandboxUrandom");
        // 2^-256 to fail by chance: equal outputs mean the bytes are not random at all
        assertThat(a).isNotEqualTo(b).isNotEqualTo(new byte[32]);
        assertThat(random.generateSeed(5)).hasSize(5);
        assertThat(random.nextInt(Integer.MAX_VALUE)).isNotNegative();
    }

    @Test
    void Offers_Nothing_But_That_One_Algorithm() {
        UrandomProvider provider = new UrandomProvider();

        assertThat(provider.getServices()).hasSize(1);
        assertThat(provider.getService("SecureRandom", "NativePRNGNonBlocking")).isNotNull();
        assertThat(provider.getService("SecureRandom", "NativePRNG")).isNull();
        assertThat(provider.getService("MessageDigest", "SHA-256")).isNull();
    }
}
