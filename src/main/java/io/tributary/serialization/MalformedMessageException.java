package io.tributary.serialization;

import io.tributary.protocol.ErrorCode;

/**
 * Thrown by {@link TributarySerializer#fromBinary} when bytes do not decode as the message their manifest names
 * (truncated, garbage, unknown manifest). Akka drops such a message and logs it; nothing is delivered and nothing is
 * stored. Carries {@link ErrorCode#CORRUPT_MESSAGE}.
 */
public final class MalformedMessageException extends IllegalArgumentException {
  public MalformedMessageException(String message, Throwable cause) {
    super(message, cause);
  }

  public MalformedMessageException(String message) {
    super(message);
  }

  /** Always {@link ErrorCode#CORRUPT_MESSAGE}. */
  public ErrorCode errorCode() {
    return ErrorCode.CORRUPT_MESSAGE;
  }
}
