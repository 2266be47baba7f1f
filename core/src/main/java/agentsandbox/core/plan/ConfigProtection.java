// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.plan;

import agentsandbox.core.Environment;
import agentsandbox.core.aftercheck.StateWatch;
import agentsandbox.core.rules.Access;
import agentsandbox.core.rules.Layer;
import agentsandbox.core.rules.Origin;
import agentsandbox.core.rules.Policy;
import agentsandbox.core.rules.Resolver;
import agentsandbox.core.rules.Rule;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The config files agent-sandbox read, and the directories they are read from, kept read-only. */
final class ConfigProtection {
    private ConfigProtection() {}

    /**
     * Loaded config files and the project config files stay read-only: rules of the
     * highest layer on each existing file (symlinks resolved), so they hold on every view.
     */
    static List<Rule> rules(Policy policy, Environment env) {
        List<Path> files = new ArrayList<>(policy.configFiles());
        files.add(env.workDir().resolve(".agent-sandbox.json"));
        files.add(env.workDir().resolve(".agent-sandbox.jsonc"));
        List<Rule> out = new ArrayList<>();
        Origin origin = new Origin(Layer.FLAG, "config protection");
        // The global config's directory, with or without a config in it: a rule opening up
        // its parent (--rw ~) must not let a sandbox put a config there that later runs obey.
        Path globalDir = StateWatch.globalConfigDir(env);
        if (globalDir != null && Resolver.realPath(globalDir) != null) {
            out.add(Rule.literal(globalDir, Access.RO, origin));
        }
        for (Path f : files) {
            if (Resolver.realPath(f) != null) {
                // as named: the resolver follows a link here only if the host made it
                out.add(Rule.literal(f, Access.RO, origin));
            }
            // A config file outside the project (the global one) is read from its directory
            // on every run: the directory too, so that a rule opening up its parent (--rw ~)
            // does not let a sandbox move it away and put a looser config in its place.
            Path dir = f.getParent();
            if (dir != null && !f.startsWith(env.workDir()) && (env.home() == null || !dir.equals(env.home()))
                    && Resolver.realPath(dir) != null && Resolver.realPath(f) != null) {
                out.add(Rule.literal(dir, Access.RO, origin));
            }
        }
        return out;
    }
}
