// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.guard;

import agentsandbox.core.plan.Mount;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The guard's view of the sandbox for one request: paths and git's answers come from
 * the launcher inside ({@link GuardProtocol.Conversation}); where the sandbox's private
 * temp dir is comes from a {@link TempView}. Nothing here reads a file the sandbox wrote,
 * runs a program on the host, or looks at a host path built from what a request says
 * (its PATH, its directory): whether a file exists inside is asked of the launcher, so a
 * request learns nothing of what the sandbox cannot see.
 */
final class GuardProbe implements GitGuard.Probe {
    /** Where the sandbox's private temp dir is, and the sandbox's own environment. */
    interface TempView {
        /** Whether a resolved path inside lies in the private temp dir and nothing else shows it. */
        boolean inPrivateTemp(String resolved);

        /** The sandbox's own value of a variable, or null. */
        String sandboxEnv(String name);
    }

    private final GuardProtocol.Conversation conversation;
    private final TempView view;
    private final java.util.Map<String, Optional<String>> resolved = new java.util.HashMap<>();

    GuardProbe(GuardProtocol.Conversation conversation, TempView view, GitGuard.Request request) {
        this.conversation = conversation;
        this.view = view;
        // the launcher sends its working directory as getcwd() gives it: already resolved
        resolved.put(request.cwd(), Optional.of(request.cwd()));
    }

    @Override
    public Optional<String> realPath(String path) {
        Optional<String> known = resolved.get(path);
        if (known == null) {
            known = conversation.realPath(path);
            resolved.put(path, known);
        }
        return known;
    }

    @Override
    public GitGuard.GitRun git(List<String> args) {
        return conversation.git(args);
    }

    @Override
    public boolean inPrivateTemp(String resolved) {
        return view.inPrivateTemp(resolved);
    }

    @Override
    public String sandboxEnv(String name) {
        return view.sandboxEnv(name);
    }

    /**
     * The host's view: a path inside maps to the host through the deepest mount of the
     * plan that shows it; it is in the private temp dir when that host location lies in
     * {@code plan.tmpSource()}, the fresh directory shown at {@code /tmp}. A project in
     * the host's {@code /tmp}, bound below the sandbox's {@code /tmp}, maps to its own
     * host location and does not count.
     */
    record HostView(List<Mount> mounts, Path tmpSource, java.util.Map<String, String> sandboxEnvironment)
            implements TempView {
        HostView {
            mounts = List.copyOf(mounts);
        }

        @Override
        public boolean inPrivateTemp(String resolved) {
            if (tmpSource == null) {
                return false;
            }
            Path host = hostLocation(Path.of(resolved));
            return host != null && host.normalize().startsWith(tmpSource.normalize());
        }

        /** Where a resolved path inside lives on the host, or null when no bind shows it. */
        Path hostLocation(Path inside) {
            Mount best = null;
            for (Mount m : mounts) {
                if (inside.startsWith(m.target())
                        && (best == null || m.target().getNameCount() > best.target().getNameCount())) {
                    best = m;
                }
            }
            Path temp = Path.of(GitGuard.TEMP);
            if (inside.startsWith(temp) && (best == null || !best.target().startsWith(temp)
                    || best.target().equals(temp))) {
                // the private temp dir shows tmpSource, whether or not the plan lists it as a mount
                return tmpSource.resolve(temp.relativize(inside).toString());
            }
            if (best == null) {
                return null;
            }
            if (best.source() == null
                    || best.kind() != Mount.Kind.READ_WRITE && best.kind() != Mount.Kind.READ_ONLY) {
                return null;
            }
            return best.source().resolve(best.target().relativize(inside).toString());
        }

        @Override
        public String sandboxEnv(String name) {
            return sandboxEnvironment.get(name);
        }
    }

    /**
     * The view from inside the sandbox (the in-sandbox guard): a path is in the private
     * temp dir when the deepest mount that holds it is the one at {@code /tmp}, read from
     * {@code /proc/self/mountinfo}.
     */
    record InsideView(List<String> mountPoints, java.util.Map<String, String> sandboxEnvironment)
            implements TempView {
        static InsideView read(java.util.Map<String, String> sandboxEnvironment) {
            List<String> points = new ArrayList<>();
            try (var reader = Files.newBufferedReader(Path.of("/proc/self/mountinfo"))) {
                String line;
                while ((line = reader.readLine()) != null && points.size() < 100_000) {
                    String[] f = line.split(" ", 6);
                    if (f.length >= 5) {
                        points.add(unescape(f[4]));
                    }
                }
            } catch (java.io.IOException e) {
                // no mount table: nothing counts as the private temp dir
            }
            return new InsideView(points, sandboxEnvironment);
        }

        private static String unescape(String s) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '\\' && i + 3 < s.length()) {
                    b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                    i += 3;
                } else {
                    b.append(c);
                }
            }
            return b.toString();
        }

        @Override
        public boolean inPrivateTemp(String resolved) {
            Path inside = Path.of(resolved);
            Path best = null;
            boolean tempMounted = false;
            for (String point : mountPoints) {
                Path p = Path.of(point);
                tempMounted |= p.toString().equals(GitGuard.TEMP);
                if (inside.startsWith(p) && (best == null || p.getNameCount() >= best.getNameCount())) {
                    best = p;
                }
            }
            return tempMounted && best != null && best.toString().equals(GitGuard.TEMP);
        }

        @Override
        public String sandboxEnv(String name) {
            return sandboxEnvironment.get(name);
        }
    }
}
