package io.tributary.protocol;

/**
 * The answer to a {@link ProduceRequest}.
 *
 * @param topic topic name
 * @param partition partition number
 * @param error {@link ErrorCode#NONE} on success; otherwise e.g. UNKNOWN_TOPIC_OR_PARTITION, MESSAGE_TOO_LARGE,
 *     CORRUPT_MESSAGE, INVALID_REQUIRED_ACKS, NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT
 * @param errorMessage a human-readable detail, or {@code null}
 * @param baseOffset the offset assigned to the first record of the batch, or -1 on error
 * @param logAppendTimeMs the broker's append time in ms since the epoch (-1 when the topic uses CreateTime)
 * @param logStartOffset the partition's log start offset after the append, or -1 on error
 * @param correlationId the request's {@link ProduceRequest#correlationId()} (0 for a client's own request)
 */
public record ProduceResponse(
    String topic,
    int partition,
    ErrorCode error,
    String errorMessage,
    long baseOffset,
    long logAppendTimeMs,
    long logStartOffset,
    int correlationId) implements io.tributary.serialization.HotPath {

  /** A response with correlation id 0. */
  public ProduceResponse(
      String topic,
      int partition,
      ErrorCode error,
      String errorMessage,
      long baseOffset,
      long logAppendTimeMs,
      long logStartOffset) {
    this(topic, partition, error, errorMessage, baseOffset, logAppendTimeMs, logStartOffset, 0);
  }

  /** This response with another correlation id. */
  public ProduceResponse withCorrelationId(int id) {
    return new ProduceResponse(topic, partition, error, errorMessage, baseOffset, logAppendTimeMs, logStartOffset, id);
  }

  /** A failed response for the given request. */
  public static ProduceResponse failed(String topic, int partition, ErrorCode error, String message) {
    return new ProduceResponse(topic, partition, error, message, -1L, -1L, -1L);
  }
}
