// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

/**
 * Where a rule came from. Declaration order is priority: a later layer wins
 * (rule 3 of specificity: flags &gt; project or {@code -c} &gt; global &gt; presets).
 */
public enum Layer {
    /** Built-in defaults and preset expansion. */
    PRESET,
    /** {@code $XDG_CONFIG_HOME/agent-sandbox/config.json[c]}. */
    GLOBAL,
    /** {@code .agent-sandbox.json[c]} in the working directory, or the file given with {@code -c}. */
    PROJECT,
    /** Command-line flags. */
    FLAG;

    public String word() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
