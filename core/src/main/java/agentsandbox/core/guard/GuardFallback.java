// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * The git guard inside the sandbox, for processes that may not use Unix sockets (the
 * sandboxes of Codex and Claude Code forbid them): the native launcher starts the
 * bundled Java runtime with this class, talks {@link GuardProtocol} with it over its
 * standard input and output, and runs git only on an {@code A}. The rules are the same
 * as on the host; only where the private temp dir is comes from the sandbox's own
 * mount table ({@link GuardProbe.InsideView}).
 *
 * <p>Arguments: the sandbox's own {@code HOME} and {@code XDG_CONFIG_HOME}, {@code -}
 * when unset. Exit status 0 after an answer, 1 when there was none to give (the launcher
 * then refuses).
 */
public final class GuardFallback {
    private GuardFallback() {}

    public static void main(String[] args) {
        Map<String, String> sandbox = new HashMap<>();
        if (args.length >= 1 && !args[0].equals("-")) {
            sandbox.put("HOME", args[0]);
        }
        if (args.length >= 2 && !args[1].equals("-")) {
            sandbox.put("XDG_CONFIG_HOME", args[1]);
        }
        try {
            var in = new BufferedInputStream(new FileInputStream(FileDescriptor.in), 4096);
            var out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 4096);
            GitGuard.Request request = GuardProtocol.readRequest(in);
            GuardProtocol.Conversation c = new GuardProtocol.Conversation(in, out);
            GuardProbe probe = new GuardProbe(c, GuardProbe.InsideView.read(sandbox), request);
            c.decide(GitGuard.decide(request, probe));
        } catch (Exception | StackOverflowError | OutOfMemoryError e) {
            System.exit(1);
        }
    }
}
