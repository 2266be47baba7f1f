// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

import java.util.Objects;

/**
 * Why a rule exists: its layer and a human-readable source, such as {@code @base},
 * a config file path, or a flag ({@code --ro}). Used by {@code --debug} to say
 * which rule decided a path.
 */
public record Origin(Layer layer, String source) {
    public Origin {
        Objects.requireNonNull(layer, "layer");
        Objects.requireNonNull(source, "source");
    }

    public static Origin preset(String presetName) {
        return new Origin(Layer.PRESET, presetName);
    }

    @Override
    public String toString() {
        return layer.word() + " " + source;
    }
}
