package io.tributary.protocol;


/**
 * The answer to a {@link ListOffsetsRequest}.
 *
 * @param topic topic name
 * @param partition partition number
 * @param error NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST (timestamp below -2)
 * @param errorMessage detail or {@code null}
 * @param offset the offset found; for a timestamp later than every record, the high watermark (as Kafka answers -1
 *     there, we answer the log end so that {@code seek} to it means "from now on")
 * @param timestamp the timestamp of the record at {@code offset}, or -1 if not known
 */
public record ListOffsetsResponse(
    String topic,
    int partition,
    ErrorCode error,
    String errorMessage,
    long offset,
    long timestamp)
    implements io.tributary.serialization.HotPath {}
