// SPDX-License-Identifier: Apache-2.0
/**
 * agent-sandbox's security provider, linked into the app image's Java runtime as a
 * module of its own (see dist/src/image/finish-image.sh): the JDK finds a provider
 * named in java.security among the services of the runtime's modules without opening
 * a jar of the class path.
 */
module agentsandbox.urandom {
    exports agentsandbox.urandom;

    provides java.security.Provider with agentsandbox.urandom.UrandomProvider;
}
