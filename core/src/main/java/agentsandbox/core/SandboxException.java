// SPDX-License-Identifier: Apache-2.0
package agentsandbox.core;

/**
 * A failure of agent-sandbox itself (not of the sandboxed command): a bad policy,
 * a missing requirement, an unusable environment. The message is one line that says
 * what is wrong; the hint, when present, says how to fix it.
 */
public class SandboxException extends RuntimeException {
    private final String hint;

    public SandboxException(String message) {
        this(message, null, null);
    }

    public SandboxException(String message, String hint) {
        this(message, hint, null);
    }

    public SandboxException(String message, String hint, Throwable cause) {
        super(message, cause);
        this.hint = hint;
    }

    /** How to fix it, or {@code null}. */
    public String hint() {
        return hint;
    }

    /** Message and hint as one line. */
    public String oneLine() {
        String m = getMessage();
        return hint == null || hint.isEmpty() ? m : m + " (" + hint + ")";
    }

    /**
     * Text as one printable line: control characters that a path, an argument or a config
     * key may carry (newlines above all) are shown as escapes ({@code \n}, {@code \x1b}, and
     * the C1 controls as {@code \u009b}, which some terminals obey as escape sequences), so
     * that every error message stays one line.
     */
    public static String printable(String text) {
        StringBuilder sb = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x20 && c != 0x7f && (c < 0x80 || c > 0x9f)) {
                if (sb != null) {
                    sb.append(c);
                }
                continue;
            }
            if (sb == null) {
                sb = new StringBuilder(text.length() + 8).append(text, 0, i);
            }
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> sb.append(c < 0x80 ? "\\x" : "\\u00").append(Character.forDigit(c >> 4 & 0xf, 16))
                        .append(Character.forDigit(c & 0xf, 16));
            }
        }
        return sb == null ? text : sb.toString();
    }
}
