package io.github.hedge.benchmarks.sim;

/** A bad command line: the message is printed on one line to stderr and the exit code is 2. */
public final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** @param message what is wrong, one line */
    public UsageException(String message) {
        super(message);
    }
}
