// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core.git;

/** Git object names as git writes them: lower-case hex, 40 digits (SHA-1) or 64 (SHA-256). */
public final class ObjectIds {
    private ObjectIds() {}

    /** Whether {@code s} is non-empty lower-case hex (a name or an abbreviation of one). */
    public static boolean isHex(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} is a whole object name. */
    public static boolean isObjectId(String s) {
        return (s.length() == 40 || s.length() == 64) && isHex(s);
    }
}
