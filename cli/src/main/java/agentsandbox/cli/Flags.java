// SPDX-License-Identifier: Apache-2.0
package agentsandbox.cli;

import agentsandbox.core.rules.Bounds;
import agentsandbox.core.rules.CommandRule;
import agentsandbox.core.text.DidYouMean;
import agentsandbox.core.rules.PathPattern;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The command-line parser. Flags are read up to {@code --} or the first argument that
 * is not a flag; everything after it belongs to the command, untouched.
 *
 * <p>Flags that take a value accept {@code --flag VALUE} and {@code --flag=VALUE}
 * ({@code -C DIR}, {@code -CDIR}, {@code -C=DIR} for the short forms). Booleans take a
 * value only with {@code =}, so {@code --network true} runs the command {@code true}.
 */
final class Flags {
    private Flags() {}

    /** Every long flag, for suggestions when one is mistyped. */
    static final List<String> LONG_FLAGS = List.of("--help", "--version", "--check", "--quiet", "--cwd", "--config",
            "--network", "--allow-host", "--docker", "--host-port", "--share-tmp", "--ssh-agent", "--gpg-agent", "--dry-run", "--debug", "--ro",
            "--rw", "--exclude", "--cmd", "--tmp-size", "--max-procs", "--max-memory", "--json");

    /** The version of this build, from the jar's resources. */
    static String version() {
        Properties p = new Properties();
        try (InputStream in = Flags.class.getResourceAsStream("/agentsandbox/version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            return "unknown";
        }
        return p.getProperty("version", "unknown");
    }

    /**
     * Parses the arguments.
     *
     * @throws UsageException naming the problem
     */
    static Args parse(List<String> argv) {
        return new Parser(argv).parse();
    }

    private static final class Parser {
        private final List<String> argv;
        private int i;

        private Args.Mode mode = Args.Mode.RUN;
        private boolean quiet;
        private String cwd;
        private String config;
        private Boolean network;
        private Boolean docker;
        private Boolean shareTmp;
        private Boolean sshAgent;
        private List<String> sshAgentKeys = List.of();
        private Boolean gpgAgent;
        private final List<Integer> hostPorts = new ArrayList<>();
        private final List<String> allowHosts = new ArrayList<>();
        private Bounds bounds = Bounds.NONE;
        private boolean dryRun;
        private boolean debug;
        private final List<String> ro = new ArrayList<>();
        private final List<String> rw = new ArrayList<>();
        private final List<String> exclude = new ArrayList<>();
        private final Map<String, CommandRule> commands = new LinkedHashMap<>();
        private List<String> command = List.of();
        private final List<String> hints = new ArrayList<>();
        private boolean json;

        Parser(List<String> argv) {
            this.argv = argv;
        }

        Args parse() {
            if (argv.isEmpty()) {
                return result(Args.Mode.USAGE); // a usage error, as with any other tool: exit 1
            }
            while (i < argv.size()) {
                String arg = argv.get(i++);
                if (arg.equals("--")) {
                    command = List.copyOf(argv.subList(i, argv.size()));
                    if (command.isEmpty()) {
                        throw new UsageException("no command after '--'");
                    }
                    break;
                }
                if (!arg.startsWith("-") || arg.equals("-")) {
                    if (mode == Args.Mode.RUN && Reference.current().subcommand(arg) != null
                            && argv.size() == i + 1 && (argv.get(i).equals("--help") || argv.get(i).equals("-h"))) {
                        command = List.of(arg); // `doctor --help`: that subcommand's help
                        return result(Args.Mode.SUBCOMMAND_HELP);
                    }
                    if (arg.equals("check") && mode == Args.Mode.RUN) {
                        checkArgs(argv.subList(i, argv.size()));
                        return result(Args.Mode.CHECK);
                    }
                    if (arg.equals("trust") && mode == Args.Mode.RUN) {
                        trustArgs(argv.subList(i, argv.size()));
                        return result(Args.Mode.TRUST);
                    }
                    if (arg.equals("explain") && mode == Args.Mode.RUN) {
                        command = explainArgs(argv.subList(i, argv.size()));
                        return result(Args.Mode.EXPLAIN);
                    }
                    if (arg.equals("changes") && mode == Args.Mode.RUN) {
                        command = List.copyOf(argv.subList(i, argv.size()));
                        Changes.check(command);
                        return result(Args.Mode.CHANGES);
                    }
                    if (arg.equals("log") && mode == Args.Mode.RUN) {
                        command = List.copyOf(argv.subList(i, argv.size())); // read by LogCommand
                        return result(Args.Mode.LOG);
                    }
                    if (arg.equals("doctor") && mode == Args.Mode.RUN) {
                        if (i < argv.size() && argv.get(i).equals("--json")) {
                            json = true;
                            i++;
                        }
                        if (i < argv.size()) {
                            throw new UsageException("doctor takes no arguments (got '" + argv.get(i) + "')",
                                    "to run a program named doctor, write: agent-sandbox -- doctor");
                        }
                        return result(Args.Mode.DOCTOR);
                    }
                    command = List.copyOf(argv.subList(i - 1, argv.size()));
                    break;
                }
                Args.Mode stop = flag(arg);
                if (stop != null) {
                    return result(stop);
                }
            }
            if (mode == Args.Mode.CHECK) {
                if (!command.isEmpty()) {
                    throw new UsageException("--check takes no command (got '" + command.get(0) + "')");
                }
                return result(Args.Mode.CHECK);
            }
            if (quiet) {
                throw new UsageException("-q only applies to check");
            }
            if (json && !dryRun) {
                throw new UsageException("--json applies to --dry-run, explain, doctor and log",
                        "a command's own output is never changed");
            }
            if (command.isEmpty()) {
                throw new UsageException("no command given",
                        "usage: agent-sandbox [flags] [--] <command> [args...]");
            }
            return result(Args.Mode.RUN);
        }

        private void checkArgs(List<String> rest) {
            for (String a : rest) {
                if (a.equals("-q") || a.equals("--quiet")) {
                    quiet = true;
                } else {
                    throw new UsageException("check takes only -q (got '" + a + "')",
                            "to run a program named check, write: agent-sandbox -- check");
                }
            }
        }

        /**
         * {@code [flags] explain PATH...}: the paths, after an optional {@code --} (for a
         * path that starts with a dash). The flags before it are a run's.
         */
        private List<String> explainArgs(List<String> rest) {
            if (quiet || dryRun) {
                throw new UsageException((quiet ? "-q" : "--dry-run") + " does not apply to explain",
                        "usage: agent-sandbox [flags] explain PATH...");
            }
            List<String> paths = new ArrayList<>(rest);
            if (!paths.isEmpty() && paths.get(0).equals("--json")) {
                json = true;
                paths.remove(0);
            }
            if (!paths.isEmpty() && paths.get(0).equals("--")) {
                paths.remove(0);
            } else {
                for (String p : paths) {
                    if (p.startsWith("-") && !p.equals("-")) {
                        throw new UsageException("explain takes paths, not flags (got '" + p + "')",
                                "put the run's flags before explain, or write explain -- " + p);
                    }
                }
            }
            if (paths.isEmpty()) {
                throw new UsageException("explain needs a PATH", "usage: agent-sandbox [flags] explain PATH...");
            }
            return List.copyOf(paths);
        }

        /** {@code trust [-C DIR]}: the directory whose project config to trust. */
        private void trustArgs(List<String> rest) {
            for (int k = 0; k < rest.size(); k++) {
                String a = rest.get(k);
                if ((a.equals("-C") || a.equals("--cwd")) && k + 1 < rest.size() && !rest.get(k + 1).isEmpty()) {
                    cwd = rest.get(++k);
                } else if (a.startsWith("--cwd=") && a.length() > 6) {
                    cwd = a.substring(6);
                } else if (a.startsWith("-C") && a.length() > 2) {
                    cwd = a.substring(a.startsWith("-C=") ? 3 : 2);
                } else {
                    throw new UsageException("trust takes only -C DIR (got '" + a + "')",
                            "to run a program named trust, write: agent-sandbox -- trust");
                }
            }
        }

        /** Handles one flag; returns a mode when parsing stops here (help, version). */
        private Args.Mode flag(String arg) {
            String name = arg;
            String inline = null;
            if (arg.startsWith("--")) {
                int eq = arg.indexOf('=');
                if (eq > 0) {
                    name = arg.substring(0, eq);
                    inline = arg.substring(eq + 1);
                }
            } else if (arg.length() > 2) {
                // short flag with attached value: -Cdir, -C=dir
                name = arg.substring(0, 2);
                inline = arg.substring(2);
                if (inline.startsWith("=")) {
                    inline = inline.substring(1);
                }
            }
            switch (name) {
                case "-h", "--help" -> {
                    noValue(name, inline);
                    return Args.Mode.HELP;
                }
                case "-v", "--version" -> {
                    noValue(name, inline);
                    return Args.Mode.VERSION;
                }
                case "--check" -> {
                    noValue(name, inline);
                    mode = Args.Mode.CHECK;
                }
                case "-q", "--quiet" -> {
                    noValue(name, inline);
                    quiet = true;
                }
                case "-C", "--cwd" -> cwd = value(name, inline);
                case "-c", "--config" -> config = value(name, inline);
                case "--network" -> network = policyBool(name, inline);
                case "--docker" -> docker = policyBool(name, inline);
                case "--share-tmp" -> shareTmp = policyBool(name, inline);
                case "--ssh-agent" -> sshAgent(name, inline);
                case "--gpg-agent" -> gpgAgent = policyBool(name, inline);
                case "--host-port" -> hostPorts(value(name, inline));
                case "--allow-host" -> allowHosts(value(name, inline));
                case "--tmp-size", "--max-procs", "--max-memory" -> bound(name, value(name, inline));
                case "--dry-run" -> dryRun = bool(name, inline);
                case "--debug" -> debug = bool(name, inline);
                case "--ro" -> ro.add(path(name, value(name, inline)));
                case "--rw" -> rw.add(path(name, value(name, inline)));
                case "--exclude" -> exclude.add(path(name, value(name, inline)));
                case "--cmd" -> commandRules(value(name, inline));
                case "--json" -> json = bool(name, inline);
                default -> {
                    String meant = meant(arg);
                    throw new UsageException("unknown flag '" + arg + "'" + (meant == null ? ""
                            : ", did you mean " + meant + "?"),
                            "see agent-sandbox --help; to pass it to a command, put the command first or use --");
                }
            }
            return null;
        }

        /**
         * A boolean of the policy ({@code --network}, …) takes a value only with {@code =}, as
         * the specification says: {@code --network false claude} runs the command
         * {@code false}. That run is harmless (the agent does not start at all, with any
         * setting), so it goes ahead as specified, after one line that names the likely
         * intent. {@code --dry-run true} and {@code --debug true} are ordinary ways to try
         * agent-sandbox out, and get no such line.
         */
        private boolean policyBool(String name, String inline) {
            boolean value = bool(name, inline);
            if (inline == null && i < argv.size()) {
                String next = argv.get(i);
                String meant = switch (next) {
                    case "true", "false", "0", "1" -> next;
                    case "yes", "on" -> "true";
                    case "no", "off" -> "false";
                    default -> null;
                };
                if (meant != null) {
                    hints.add(name + " " + next + " runs the command \"" + next + "\" (a flag takes a BOOL only"
                            + " after =); did you mean " + name + "=" + meant + "?");
                }
            }
            return value;
        }

        /** The flag an unknown one most likely meant, or null. */
        private static String meant(String arg) {
            int eq = arg.indexOf('=');
            String name = eq > 0 ? arg.substring(0, eq) : arg;
            if (name.startsWith("--")) {
                return agentsandbox.core.text.DidYouMean.closest(name, LONG_FLAGS);
            }
            if (name.length() > 2) {
                // -network: one dash too few
                String asLong = "-" + name;
                return LONG_FLAGS.contains(asLong) ? asLong : agentsandbox.core.text.DidYouMean.closest(asLong, LONG_FLAGS);
            }
            return null;
        }

        private static void noValue(String name, String inline) {
            if (inline != null) {
                throw new UsageException(name + " takes no value");
            }
        }

        private String value(String name, String inline) {
            if (inline != null) {
                if (inline.isEmpty()) {
                    throw new UsageException(name + " needs a non-empty value");
                }
                return inline;
            }
            if (i >= argv.size()) {
                throw new UsageException(name + " needs a value");
            }
            String v = argv.get(i++);
            if (v.isEmpty()) {
                throw new UsageException(name + " needs a non-empty value");
            }
            return v;
        }

        /** {@code --ssh-agent}, {@code --ssh-agent=BOOL} or {@code --ssh-agent=COMMENT,...}. */
        private void sshAgent(String name, String inline) {
            if (inline == null || inline.equals("true") || inline.equals("false") || inline.equals("0")
                    || inline.equals("1")) {
                sshAgent = policyBool(name, inline);
                sshAgentKeys = List.of();
                return;
            }
            List<String> keys = new ArrayList<>();
            for (String item : inline.split(",", -1)) {
                if (item.isEmpty() || keys.contains(item)) {
                    throw new UsageException(name + "=" + inline + ": expected true, false, or the comments of"
                            + " keys in your agent separated by commas, each once (ssh-add -l shows them)");
                }
                keys.add(item);
            }
            sshAgent = true;
            sshAgentKeys = List.copyOf(keys);
        }

        private static boolean bool(String name, String inline) {
            if (inline == null) {
                return true;
            }
            return switch (inline) {
                case "true", "1" -> true;
                case "false", "0" -> false;
                default -> throw new UsageException(name + "=" + inline + ": expected true, false, 1 or 0");
            };
        }

        private static String path(String name, String value) {
            try {
                PathPattern.validate(value);
            } catch (IllegalArgumentException e) {
                throw new UsageException(name + " " + value + ": " + e.getMessage());
            }
            return value;
        }

        private void hostPorts(String value) {
            for (String item : value.split(",", -1)) {
                int port = Ports.parse(item);
                if (port < 0) {
                    throw new UsageException("--host-port " + item + ": " + Ports.PROBLEM);
                }
                hostPorts.add(port);
            }
        }

        private void allowHosts(String value) {
            for (String item : value.split(",", -1)) {
                try {
                    allowHosts.add(agentsandbox.core.rules.HostPattern.validate(item));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("--allow-host " + item + ": " + e.getMessage());
                }
            }
        }

        private void bound(String name, String value) {
            try {
                bounds = switch (name) {
                    case "--tmp-size" -> new Bounds(Bounds.parseSize(name, value, Bounds.MIN_TMP_SIZE), null, null)
                            .over(bounds);
                    case "--max-procs" -> new Bounds(null, Bounds.parseCount(name, value), null).over(bounds);
                    default -> new Bounds(null, null, Bounds.parseSize(name, value, Bounds.MIN_MEMORY)).over(bounds);
                };
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), "see agent-sandbox --help");
            }
        }

        private void commandRules(String value) {
            for (String item : value.split(",", -1)) {
                int eq = item.indexOf('=');
                if (eq < 0) {
                    throw new UsageException("--cmd " + item + ": expected NAME=VALUE (for example git=true)");
                }
                String cmdName = item.substring(0, eq);
                try {
                    CommandRule.validateName(cmdName);
                    commands.put(cmdName, CommandRule.parse(item.substring(eq + 1)));
                } catch (IllegalArgumentException e) {
                    throw new UsageException("--cmd " + item + ": " + e.getMessage());
                }
            }
        }

        private Args result(Args.Mode m) {
            return new Args(m, quiet, cwd, config, network, docker, shareTmp, sshAgent, sshAgentKeys, gpgAgent, List.copyOf(hostPorts), List.copyOf(allowHosts),
                    dryRun, debug,
                    List.copyOf(ro), List.copyOf(rw), List.copyOf(exclude), commands,
                    m == Args.Mode.RUN || m == Args.Mode.EXPLAIN || m == Args.Mode.CHANGES || m == Args.Mode.LOG
                            || m == Args.Mode.SUBCOMMAND_HELP ? command
                            : List.of(),
                    m == Args.Mode.RUN ? List.copyOf(hints) : List.of(), bounds, json);
        }
    }
}
