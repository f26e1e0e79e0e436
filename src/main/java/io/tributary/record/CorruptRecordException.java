package io.tributary.record;

import io.tributary.protocol.ErrorCode;

/**
 * A record batch's bytes are damaged: they fail the CRC32C check or do not even follow the record batch v2 frame
 * (too short, a length field that disagrees with the array, a magic byte other than 2). As Kafka's {@code
 * org.apache.kafka.common.errors.CorruptRecordException}, it maps to {@link ErrorCode#CORRUPT_MESSAGE}, which is
 * retriable: the bytes were probably damaged in transit, so sending them again may succeed.
 *
 * <p>Unchecked. Instances are immutable and thread-safe.
 */
public final class CorruptRecordException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what is wrong and where (byte positions), for logs
   */
  public CorruptRecordException(String message) {
    super(message);
  }

  /**
   * Creates the exception with a cause.
   *
   * @param message what is wrong and where (byte positions), for logs
   * @param cause the underlying failure
   */
  public CorruptRecordException(String message, Throwable cause) {
    super(message, cause);
  }

  /** Always {@link ErrorCode#CORRUPT_MESSAGE}. */
  public ErrorCode errorCode() {
    return ErrorCode.CORRUPT_MESSAGE;
  }
}
