package agentsandbox.cli;

import java.io.PrintStream;
import java.util.List;

/** Entry point: collects the process's arguments, environment, streams and signals. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        int status = cli(out, err).run(List.of(args), SystemEnvironment.read());
        out.flush();
        err.flush();
        // halt, not exit: there are no shutdown hooks to run, and a background thread
        // still starting the git guard must not hold the exit up
        Runtime.getRuntime().halt(status);
    }

    /** The command line wired to real signals (also what the startup cache is trained on). */
    static Cli cli(PrintStream out, PrintStream err) {
        return new Cli(out, err, Signals::onInterrupt);
    }
}
