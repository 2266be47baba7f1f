// SPDX-License-Identifier: Apache-2.0
package agentsandbox.urandom;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.security.Provider;
import java.security.SecureRandomSpi;

/**
 * The first security provider of agent-sandbox's own Java runtime (the app image's
 * {@code runtime/conf/security/java.security} names it first, the JDK's after it): the
 * kernel's random numbers, {@code /dev/urandom}, under the name the JDK's Unix-domain
 * sockets ask for ({@code NativePRNGNonBlocking}).
 *
 * <p>Why: the first Unix-domain socket of a JVM makes a {@code SecureRandom} of that
 * name, and finding it in the JDK's own provider registers hundreds of services first,
 * interpreted: about 20 ms of CPU on every run, spent while bwrap sets the sandbox up,
 * on a machine whose second core bwrap needs. This provider answers the same request
 * from the same source in a fraction of that. Any other algorithm, and every other
 * service, is the JDK's, as before.
 */
public final class UrandomProvider extends Provider {
    private static final long serialVersionUID = 1L;

    public UrandomProvider() {
        super("AgentSandboxUrandom", "1", "/dev/urandom as SecureRandom NativePRNGNonBlocking");
        put("SecureRandom.NativePRNGNonBlocking", Urandom.class.getName());
        put("SecureRandom.NativePRNGNonBlocking ThreadSafe", "true");
    }

    /** Bytes read from {@code /dev/urandom}, which never blocks once the kernel is seeded. */
    public static final class Urandom extends SecureRandomSpi {
        private static final long serialVersionUID = 1L;

        public Urandom() {
            // the kernel seeds it: nothing to set up
        }

        @Override
        protected void engineSetSeed(byte[] seed) {
            // the kernel's pool takes no seed from here; like the JDK's NativePRNG, ignoring
            // it never makes the output predictable
        }

        @Override
        protected void engineNextBytes(byte[] bytes) {
            try (FileInputStream in = new FileInputStream("/dev/urandom")) {
                if (in.readNBytes(bytes, 0, bytes.length) != bytes.length) {
                    throw new IOException("/dev/urandom ended early");
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read /dev/urandom", e);
            }
        }

        @Override
        protected byte[] engineGenerateSeed(int numBytes) {
            byte[] seed = new byte[numBytes];
            engineNextBytes(seed);
            return seed;
        }
    }
}
