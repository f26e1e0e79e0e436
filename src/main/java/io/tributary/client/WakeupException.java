package io.tributary.client;

/**
 * Thrown by a blocking consumer call ({@link Consumer#poll}, {@link Consumer#commitSync}, {@link Consumer#committed})
 * that was interrupted by {@link Consumer#wakeup()}, as Kafka's {@code WakeupException}. The consumer is unchanged and
 * may be used again (typically closed, on shutdown). Unchecked.
 */
public class WakeupException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A wakeup. */
  public WakeupException() {
    super("the consumer was woken up by wakeup()");
  }
}
