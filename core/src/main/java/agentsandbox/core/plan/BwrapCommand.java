// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.SandboxException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One bwrap command line, in bwrap's order: its own options, the mounts, what comes after
 * the mounts (environment, working directory), then the command. It owns bwrap's limit on
 * the number of arguments: a command too long to pass goes to a file that the sandbox's
 * first program reads ({@link #spills}), and a plan whose own arguments are too many is
 * refused with the fix.
 */
public final class BwrapCommand {
    /** bwrap refuses a command line with more arguments than this, its own and the command's together. */
    public static final int MAX_ARGS = 9000;

    private final List<String> argv = new ArrayList<>();
    private final List<String> tail = new ArrayList<>();

    /**
     * @param newSession a session of its own, which keeps the command from pushing input
     *                   into the caller's terminal when no launcher seals it
     */
    public BwrapCommand(String executable, boolean newSession) {
        argv.add(executable);
        argv.add("--die-with-parent");
        argv.add("--unshare-all");
        if (newSession) {
            argv.add("--new-session");
        }
    }

    /**
     * The sandbox's first program as uid 0 with these capabilities in the sandbox's user
     * namespace: it mounts the git dirs' views and becomes the user again, without any,
     * before the command runs (launcher/src/git_view.c).
     */
    public void firstProgramAsRoot(List<String> capabilities) {
        argv.addAll(List.of("--uid", "0", "--gid", "0"));
        for (String c : capabilities) {
            argv.addAll(List.of("--cap-add", c));
        }
    }

    /** Adds the mounts, in order. */
    public void mount(List<Mount> mounts) {
        argv.addAll(Mount.render(mounts));
    }

    /** After the mounts: makes what is mounted at {@code target} read-only. */
    public void remountReadOnly(Path target) {
        tail.addAll(List.of("--remount-ro", target.toString()));
    }

    public void unsetenv(String name) {
        tail.addAll(List.of("--unsetenv", name));
    }

    public void setenv(String name, String value) {
        tail.addAll(List.of("--setenv", name, value));
    }

    /**
     * The directory the command starts in and, when not null, the program started in place
     * of the command (with the command as its arguments): the last of bwrap's own words.
     */
    public void start(Path workDir, Path program) {
        tail.addAll(List.of("--chdir", workDir.toString(), "--"));
        if (program != null) {
            tail.add(program.toString());
        }
    }

    /** Whether {@code command} is too long for the command line, with {@code spill} mounted to take it instead. */
    public boolean spills(List<String> command, Mount spill) {
        return arguments() + spill.args().size() + tail.size() + command.size() > MAX_ARGS;
    }

    /**
     * The whole command line: with {@code spill} (not null), the command is read from the
     * file it mounts and is not on the line.
     *
     * @param mounts how many mounts the plan has, for the message when it has too many
     * @throws SandboxException when the line is longer than bwrap takes
     */
    public List<String> finish(List<String> command, Mount spill, int mounts) {
        List<String> out = new ArrayList<>(argv);
        if (spill != null) {
            out.addAll(spill.args());
        }
        out.addAll(tail);
        if (spill == null) {
            out.addAll(command);
        }
        if (out.size() - 1 > MAX_ARGS) {
            int own = out.size() - 1 - (spill == null ? command.size() : 0);
            if (own > MAX_ARGS) {
                throw new SandboxException("the rules produce " + mounts + " mounts, " + own
                        + " bwrap arguments, more than bwrap accepts (at most " + MAX_ARGS + ")",
                        "match fewer paths: exclude a directory instead of every file in it");
            }
            throw new SandboxException("the command has " + command.size() + " arguments, more than bwrap accepts"
                    + " (at most " + MAX_ARGS + " in all, of which the sandbox's own options take " + own + ")",
                    "pass fewer at once, e.g. through xargs inside the sandbox");
        }
        return out;
    }

    /** bwrap's arguments so far, before what comes after the mounts (the executable is not one). */
    private int arguments() {
        return argv.size() - 1;
    }
}
