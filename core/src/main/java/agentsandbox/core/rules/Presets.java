// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import agentsandbox.core.text.DidYouMean;

import java.util.List;

/** The names of the built-in filesystem presets. Users cannot define presets. */
public final class Presets {
    private Presets() {}

    /** Every preset name, in documentation order. */
    public static final List<String> NAMES = List.of(
            "@all", "@base", "@caches", "@agents", "@git", "@git-strict",
            "@lint/ts", "@lint/go", "@lint/python", "@lint/all");

    /**
     * Checks a preset toggle as written in config ({@code "@lint/ts"} or {@code "!@git"}).
     *
     * @throws IllegalArgumentException naming the bad entry and the known names
     */
    public static void validateToggle(String toggle) {
        String name = toggle.startsWith("!") ? toggle.substring(1) : toggle;
        if (!NAMES.contains(name)) {
            String meant = DidYouMean.closest(name, NAMES);
            throw new IllegalArgumentException("unknown preset '" + toggle + "' ("
                    + (meant == null ? "" : "did you mean " + (name.equals(toggle) ? "" : "!") + meant + "? ")
                    + "known: " + String.join(", ", NAMES) + "; prefix ! to turn one off)");
        }
    }
}
