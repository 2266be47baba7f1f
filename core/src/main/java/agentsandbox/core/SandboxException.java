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
}
