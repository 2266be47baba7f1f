// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.rules;

/**
 * Access level of a path inside the sandbox. Declaration order is restrictiveness:
 * a later constant is more restrictive, which is rule 4 of specificity
 * ({@code exclude > ro > rw} within one layer).
 */
public enum Access {
    /** Readable and writable. */
    RW,
    /** Readable, every change fails with EROFS. */
    RO,
    /** Contents hidden: a directory appears empty, a file cannot be read (EACCES). */
    EXCLUDE;

    private final String word = name().toLowerCase(java.util.Locale.ROOT);

    /** The spelling used in config files, flags and debug output. */
    public String word() {
        return word;
    }
}
