package io.tributary.protocol;

import akka.actor.typed.ActorRef;

/**
 * Looks up an offset of one partition, as Kafka's ListOffsets request.
 *
 * @param version protocol version of the sender
 * @param topic topic name
 * @param partition partition number
 * @param timestamp {@link #EARLIEST_TIMESTAMP} (-2) for the log start offset, {@link #LATEST_TIMESTAMP} (-1) for the
 *     high watermark, or a time in ms since the epoch for the first offset whose record timestamp is at or after it
 * @param replyTo where the {@link ListOffsetsResponse} goes
 */
public record ListOffsetsRequest(
    short version,
    String topic,
    int partition,
    long timestamp,
    ActorRef<ListOffsetsResponse> replyTo)
    implements ClientRequest, io.tributary.serialization.HotPath {
  /** Ask for the log start offset (Kafka's {@code ListOffsetsRequest.EARLIEST_TIMESTAMP}). */
  public static final long EARLIEST_TIMESTAMP = -2L;
  /** Ask for the high watermark (Kafka's {@code ListOffsetsRequest.LATEST_TIMESTAMP}). */
  public static final long LATEST_TIMESTAMP = -1L;
}
