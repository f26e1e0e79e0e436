package io.tributary.cli;

/**
 * A command failed for a reason the user can act on; the CLI prints {@code Error: <message>} on stderr and exits with
 * {@link Main#EXIT_FAILURE}.
 */
public final class CliException extends RuntimeException {
  public CliException(String message) {
    super(message);
  }

  public CliException(String message, Throwable cause) {
    super(message, cause);
  }
}
