// SPDX-License-Identifier: Apache-2.0
package agentsandbox.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The start-up rules of docs/startup.md, checked on the packaged tool: a run loads its
 * classes from the startup cache, and neither agent-sandbox's code nor the cache brings in
 * lambdas, method references, the regex engine or more classes than the budget.
 *
 * <p>The launcher's {@code AGENT_SANDBOX_LOG_CLASS_LOADING=1} makes the JVM write one line
 * per class it loads to stderr, with where it came from: {@code source: shared objects file}
 * for the startup cache (which loads all its classes when the JVM starts), a jar or
 * {@code jrt:/} for a class loaded and linked at this run.
 */
class StartupIT {

    /** JFR's event classes: the JVM never puts them in a cache; the JDK loads them at a first socket. */
    private static final Set<String> NEVER_CACHED = Set.of(
            "jdk.internal.event.Event",
            "jdk.internal.event.SecurityProviderServiceEvent");

    /**
     * Classes a run must not load at all, from the cache or not: each stands for JDK machinery
     * whose classes every start would load (the cache loads all of its classes up front).
     */
    private static final Set<String> FORBIDDEN = Set.of(
            "java.util.regex.Pattern", // the regex engine
            "java.lang.runtime.SwitchBootstraps"); // a pattern switch's bootstrap

    /**
     * At most this many classes per run, the cache's included (1 316 when this was written,
     * 1 320 with a trusted project config; 1 401 with the home's copy-on-write views, the
     * network stack, the terminal relay and the bounds; 1 433 once the cache held the classes
     * of the host's apply of a commit, which a run in a repository with an index, or with a
     * commit inside, loaded from the jar before).
     */
    private static final int CLASS_BUDGET = 1_445;

    private static final String LOG_LINE = "[info][class,load] ";
    private static final String CACHE = "source: shared objects file";

    @RegisterExtension
    final SandboxCli sandbox = new SandboxCli();

    @Test
    void A_Run_Loads_Only_Cached_Classes_And_None_Of_Its_Own_Lambdas() {
        sandbox.git("init", "-q").succeeds();

        assertStartsLean(loggedRun());
    }

    @Test
    void A_Run_With_A_Trusted_Project_Config_Loads_Only_Cached_Classes_And_None_Of_Its_Own_Lambdas() {
        sandbox.git("init", "-q").succeeds();
        sandbox.mkdirs(sandbox.home("notes"));
        sandbox.write(".agent-sandbox.jsonc", """
                {
                  // loosens the policy (rw ~/notes): a run checks the trust record's hash
                  "filesystem": {"rw": ["~/notes"], "exclude": [".env"]},
                  "commands": {"rm": false},
                }
                """);
        sandbox.run("trust").succeeds();

        assertStartsLean(loggedRun());
    }

    /**
     * The host's side of a commit made inside: the index read at the start (a repository with
     * files has one), and at the end the apply of the commit's objects, the index and the
     * branch. Its classes come from the cache too (Training's APPLY_CLASSES), and the commit
     * reaches the host's branch, so the apply ran.
     */
    @Test
    void A_Run_That_Commits_Inside_Loads_Only_Cached_Classes_And_None_Of_Its_Own_Lambdas() {
        sandbox.git("init", "-q");
        sandbox.write("a.txt", "one\n");
        sandbox.git("add", "a.txt");
        sandbox.git("commit", "-q", "-m", "first");

        Result run = sandbox.command("--", "sh", "-c", "echo two >>a.txt && git -c user.name=Agent"
                        + " -c user.email=agent@agent-sandbox.invalid -c commit.gpgsign=false commit -qam second")
                .env("AGENT_SANDBOX_LOG_CLASS_LOADING", "1")
                .env("AGENT_SANDBOX_REQUIRE_CACHE", "1")
                .run().succeeds().stdoutIsEmpty();

        assertThat(sandbox.git("log", "--format=%s", "main").stdout()).startsWith("second\n");
        assertStartsLean(run);
    }

    /** JDK classes a run may load from outside the cache on a path it takes now and then. */
    private static final int JDK_OUTSIDE_BUDGET = 3;

    private Result loggedRun() {
        return sandbox.command("--", "true")
                .env("AGENT_SANDBOX_LOG_CLASS_LOADING", "1")
                .env("AGENT_SANDBOX_REQUIRE_CACHE", "1")
                .run().succeeds().stdoutIsEmpty();
    }

    private static void assertStartsLean(Result run) {
        List<String> loaded = new ArrayList<>();
        List<String> outsideCache = new ArrayList<>();
        List<String> forbidden = new ArrayList<>();
        List<String> other = new ArrayList<>();
        for (String line : run.stderr().split("\n")) {
            int at = line.indexOf(LOG_LINE);
            if (at < 0) {
                if (!line.isEmpty()) {
                    other.add(line);
                }
                continue;
            }
            String entry = line.substring(at + LOG_LINE.length());
            String name = entry.substring(0, entry.indexOf(' '));
            loaded.add(name);
            if (!entry.contains(CACHE) && !NEVER_CACHED.contains(name)) {
                outsideCache.add(entry);
            }
            // a lambda or method reference of agent-sandbox's code is a hidden class of its own
            if (FORBIDDEN.contains(name) || (name.startsWith("agentsandbox.") && name.contains("$$Lambda"))) {
                forbidden.add(entry);
            }
        }
        String rules = "\n(the start-up rules: docs/startup.md)";
        assertThat(other).as("stderr of the run, besides the class loading log").isEmpty();
        assertThat(loaded).as("the class loading log (AGENT_SANDBOX_LOG_CLASS_LOADING=1)")
                .contains("java.lang.Object", "agentsandbox.cli.Main");
        // None of agent-sandbox's own; of the JDK's, a few that a path taken only now and then
        // can load (the Java removal of a run directory when the launcher's starter is late,
        // on a loaded machine): more is a run's path that the training does not take.
        List<String> ownOutside = new ArrayList<>();
        for (String entry : outsideCache) {
            if (entry.startsWith("agentsandbox.")) {
                ownOutside.add(entry);
            }
        }
        String outside = "classes loaded from outside the startup cache: each is loaded and linked at every run;"
                + " take it off the run's path or train it (cli Training)" + rules;
        assertThat(ownOutside).as(outside).isEmpty();
        assertThat(outsideCache).as(outside).hasSizeLessThanOrEqualTo(JDK_OUTSIDE_BUDGET);
        assertThat(forbidden)
                .as("lambdas, method references, the regex engine or pattern switches on the run's path:"
                        + " each brings classes that every start loads" + rules)
                .isEmpty();
        assertThat(loaded.size())
                .as("classes loaded by one run, the startup cache's included: over the budget of %d%s",
                        CLASS_BUDGET, rules)
                .isLessThanOrEqualTo(CLASS_BUDGET);
    }
}
