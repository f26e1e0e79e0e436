package io.tributary.record;

import io.tributary.protocol.ErrorCode;
import java.util.Objects;

/**
 * A record batch is intact (its CRC32C matches) but its content breaks a rule: a record whose fields disagree with
 * their lengths or with the batch header ({@link ErrorCode#INVALID_RECORD}, the default), a compression codec this
 * broker cannot read ({@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}), or a batch larger than allowed ({@link
 * ErrorCode#MESSAGE_TOO_LARGE}). As Kafka's {@code org.apache.kafka.common.InvalidRecordException}, these are not
 * retriable: the producer wrote the bytes this way, so sending them again fails again.
 *
 * <p>Unchecked. Instances are immutable and thread-safe.
 */
public final class InvalidRecordException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** The code the broker replies with. */
  private final ErrorCode errorCode;

  /**
   * Creates the exception with {@link ErrorCode#INVALID_RECORD}.
   *
   * @param message what is wrong and where, for logs
   */
  public InvalidRecordException(String message) {
    this(ErrorCode.INVALID_RECORD, message);
  }

  /**
   * Creates the exception with a given error code.
   *
   * @param errorCode the code the broker replies with; non-null
   * @param message what is wrong and where, for logs
   * @throws NullPointerException if {@code errorCode} is null
   */
  public InvalidRecordException(ErrorCode errorCode, String message) {
    super(message);
    this.errorCode = Objects.requireNonNull(errorCode, "errorCode");
  }

  /** The code the broker replies with: {@link ErrorCode#INVALID_RECORD} unless given otherwise. */
  public ErrorCode errorCode() {
    return errorCode;
  }
}
