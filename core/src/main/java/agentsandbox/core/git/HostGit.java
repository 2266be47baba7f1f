// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The host's own git, run on the host's git dir by {@link GitApply} and {@link ObjectImport}:
 * with the host's config only (the view's layer is never its git dir), a few variables of the
 * host's environment, no terminal prompt, and a time limit.
 */
final class HostGit {
    /** How long one call of the host's git may take. */
    static final long SECONDS = 120;
    /** At most this many bytes of its output are kept (the native spawn's RUN_OUTPUT_MAX). */
    static final int OUTPUT_MAX = 1 << 20;

    private final Path gitDir;
    private final Map<String, String> hostEnv;

    /** The host's git and the PATH it gets, found at the first call (see HostPrograms). */
    private Path git;
    private String trustedPath;

    HostGit(Path gitDir, Map<String, String> hostEnv) {
        this.gitDir = gitDir;
        this.hostEnv = hostEnv;
    }

    record Result(int status, String output) {
        String firstLine() {
            String s = output.strip();
            int nl = s.indexOf('\n');
            return nl < 0 ? s : s.substring(0, nl);
        }
    }

    /** The host's git on the host's git dir, with the host's own config, output and errors together. */
    Result run(String... args) {
        // the host's git from a directory no sandbox can write (see HostPrograms), and a PATH of
        // such directories for what it starts
        if (git == null) {
            git = agentsandbox.core.host.HostPrograms.find(hostEnv, "git");
            trustedPath = agentsandbox.core.host.HostPrograms.trustedPath(hostEnv.get("PATH"),
                    agentsandbox.core.host.HostPrograms.processUid());
        }
        if (git == null) {
            return new Result(-1, "cannot run git: there is none on your PATH in a directory you cannot write (a"
                    + " sandbox may have put one in any other)");
        }
        List<String> argv = new ArrayList<>();
        argv.add(git.toString());
        argv.add("--git-dir=" + gitDir);
        // none of the git dir's hooks, and no signature check (which runs gpg.program): a
        // nested repository's git dir may be one a sandbox wrote in the work tree
        argv.addAll(List.of("-c", "core.hooksPath=/dev/null", "-c", "log.showSignature=false"));
        // and no transport at all: a partial clone's git fetches a missing object on its own
        // (through core.sshCommand, a credential helper, a remote helper), from a config a
        // sandbox may have written
        argv.addAll(List.of("-c", "protocol.allow=never"));
        argv.addAll(List.of(args));
        Map<String, String> env = new java.util.LinkedHashMap<>();
        for (String keep : new String[] {"HOME", "LANG", "LC_ALL", "XDG_CONFIG_HOME"}) {
            String v = hostEnv.get(keep);
            if (v != null) {
                env.put(keep, v);
            }
        }
        env.put("PATH", trustedPath);
        env.put("GIT_TERMINAL_PROMPT", "0");
        env.put("GIT_NO_LAZY_FETCH", "1"); // git 2.45 and later: no fetch of a missing object at all
        // the reflog entries of the apply's ref updates name agent-sandbox, as those it writes itself do
        env.put("GIT_COMMITTER_NAME", GitApply.REFLOG_NAME);
        env.put("GIT_COMMITTER_EMAIL", GitApply.REFLOG_EMAIL);
        // through the launcher when it can: the JDK's process classes are not in the startup cache
        agentsandbox.core.Native.Ran ran = agentsandbox.core.Native.run(argv, env, gitDir, (int) (SECONDS * 1000));
        if (ran != null) {
            return switch (ran.status()) {
                case agentsandbox.core.Native.Ran.NOT_RUN ->
                        new Result(-1, "cannot run git: " + new String(ran.output(), StandardCharsets.UTF_8));
                case agentsandbox.core.Native.Ran.TIMED_OUT -> new Result(-1, "git did not end in " + SECONDS + " s");
                default -> new Result(ran.status(), new String(ran.output(), StandardCharsets.UTF_8));
            };
        }
        ProcessBuilder pb = new ProcessBuilder(argv);
        pb.environment().clear();
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.directory(gitDir.toFile());
        try {
            Process p = pb.start();
            byte[] output;
            try (InputStream in = p.getInputStream()) {
                output = in.readNBytes(OUTPUT_MAX);
            }
            if (!p.waitFor(SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, "git did not end in " + SECONDS + " s");
            }
            return new Result(p.exitValue(), new String(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new Result(-1, "cannot run git: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }
}
