// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.plan.Inside;
import agentsandbox.core.Sandbox;

/** Host port numbers as flags and config files write them. */
final class Ports {
    private Ports() {}

    /** The proxy's port inside the sandbox, which a host port cannot take. */
    static final int PROXY = Inside.PROXY_PORT;

    static final String PROBLEM = "expected a port number from 1 to 65535 (other than " + PROXY
            + ", agent-sandbox's proxy inside the sandbox)";

    /** The port, or -1 when the text is not a usable one. */
    static int parse(String text) {
        try {
            int v = Integer.parseInt(text);
            return v >= 1 && v <= 65535 && v != PROXY && text.charAt(0) != '+' ? v : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
