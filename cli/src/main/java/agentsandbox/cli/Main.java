package agentsandbox.cli;

import java.io.PrintStream;
import java.util.List;

/** Entry point: collects the process's arguments, environment, streams and signals. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        int status = new Cli(out, err, Signals::onInterrupt).run(List.of(args), SystemEnvironment.read());
        out.flush();
        err.flush();
        System.exit(status);
    }
}
