package io.tributary.protocol;

import java.util.List;

/**
 * The answer to a {@link FetchRequest}.
 *
 * @param topic topic name
 * @param partition partition number
 * @param error {@link ErrorCode#NONE}, or e.g. OFFSET_OUT_OF_RANGE (below the log start offset or above the high
 *     watermark), UNKNOWN_TOPIC_OR_PARTITION, INVALID_FETCH_SIZE, NOT_LEADER_OR_FOLLOWER
 * @param errorMessage a human-readable detail, or {@code null}
 * @param highWatermark the partition's high watermark: offsets below it are committed and visible
 * @param logStartOffset the partition's log start offset
 * @param batches whole record batches in offset order, each in the layout of {@link io.tributary.record.RecordBatch};
 *     empty when the long poll expired with nothing new
 */
public record FetchResponse(
    String topic,
    int partition,
    ErrorCode error,
    String errorMessage,
    long highWatermark,
    long logStartOffset,
    List<byte[]> batches) implements io.tributary.serialization.HotPath {

  /** A failed response. */
  public static FetchResponse failed(
      String topic, int partition, ErrorCode error, String message, long highWatermark, long logStartOffset) {
    return new FetchResponse(topic, partition, error, message, highWatermark, logStartOffset, List.of());
  }
}
