package io.tributary.client;

import io.tributary.protocol.ErrorCode;

/**
 * An error reported by the broker or detected by the client, with its stable {@link ErrorCode}. Callers switch on
 * {@link #errorCode()}; {@link #isRetriable()} tells whether retrying can help (the client library has already retried
 * retriable errors until {@code delivery.timeout.ms} / {@code default.api.timeout.ms}). The one subclass, {@link
 * NoOffsetForPartitionException}, exists only so that Kafka users can catch it by Kafka's name.
 */
public class TributaryException extends RuntimeException {
  private final ErrorCode errorCode;

  public TributaryException(ErrorCode errorCode, String message) {
    super(errorCode.name() + ": " + message);
    this.errorCode = errorCode;
  }

  public TributaryException(ErrorCode errorCode, String message, Throwable cause) {
    super(errorCode.name() + ": " + message, cause);
    this.errorCode = errorCode;
  }

  /** The error code. */
  public ErrorCode errorCode() {
    return errorCode;
  }

  /** Whether the error is transient. */
  public boolean isRetriable() {
    return errorCode.retriable();
  }
}
