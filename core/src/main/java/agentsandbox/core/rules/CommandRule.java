// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.util.Objects;

/**
 * What happens when a command is run inside the sandbox ({@code commands} in config,
 * {@code --cmd NAME=VALUE} on the command line).
 */
public sealed interface CommandRule {

    // equals and hashCode written out, not generated: docs/startup.md

    /** A built-in guard such as {@code @git}. */
    record Preset(String name) implements CommandRule {
        public Preset {
            Objects.requireNonNull(name, "name");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Preset p && name.equals(p.name);
        }

        @Override
        public int hashCode() {
            return name.hashCode();
        }
    }

    /** {@code false}: every run is refused. */
    record Blocked() implements CommandRule {
        @Override
        public boolean equals(Object o) {
            return o instanceof Blocked;
        }

        @Override
        public int hashCode() {
            return 1;
        }
    }

    /** {@code true}: no wrapper (removes a default such as git's guard). */
    record Unwrapped() implements CommandRule {
        @Override
        public boolean equals(Object o) {
            return o instanceof Unwrapped;
        }

        @Override
        public int hashCode() {
            return 2;
        }
    }

    /** A custom wrapper script; {@code ~} is allowed and resolved when planning. */
    record Script(String path) implements CommandRule {
        public Script {
            Objects.requireNonNull(path, "path");
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Script sc && path.equals(sc.path);
        }

        @Override
        public int hashCode() {
            return path.hashCode();
        }
    }

    /** Built-in command presets. */
    java.util.List<String> PRESETS = java.util.List.of("@git");

    /**
     * Parses the string form used on the command line ({@code --cmd git=@git},
     * {@code rm=false}, {@code npm=~/bin/guard.sh}).
     *
     * @throws IllegalArgumentException with a message naming the bad value
     */
    static CommandRule parse(String value) {
        if (value.equals("true")) {
            return new Unwrapped();
        }
        if (value.equals("false")) {
            return new Blocked();
        }
        if (value.startsWith("@")) {
            if (!PRESETS.contains(value)) {
                throw new IllegalArgumentException(
                        "unknown command preset '" + value + "' (known: " + String.join(", ", PRESETS) + ")");
            }
            return new Preset(value);
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException("empty command rule (use true, false, @git or a script path)");
        }
        return new Script(value);
    }

    /**
     * Checks a command name ({@code git}, {@code npm}): a plain file name that PATH lookup
     * could find, so no {@code /}, no whitespace, and none of the characters {@code --cmd}
     * uses as separators.
     *
     * @throws IllegalArgumentException naming the bad name
     */
    static void validateName(String name) {
        if (name.isEmpty()) {
            throw new IllegalArgumentException("empty command name");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new IllegalArgumentException("invalid command name '" + name + "'");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == '=' || c == ',' || Character.isWhitespace(c) || Character.isISOControl(c)) {
                throw new IllegalArgumentException("invalid command name '" + name
                        + "' (a plain program name such as git, without '/', '=', ',' or spaces)");
            }
        }
    }

    /** The spelling used in config and debug output. */
    default String describe() {
        if (this instanceof Preset p) {
            return p.name();
        }
        if (this instanceof Blocked) {
            return "false (blocked)";
        }
        if (this instanceof Unwrapped) {
            return "true (no wrapper)";
        }
        return ((Script) this).path();
    }
}
