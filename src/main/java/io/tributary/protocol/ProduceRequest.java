package io.tributary.protocol;

import akka.actor.typed.ActorRef;

/**
 * Appends one record batch to one partition, as Kafka's Produce request (one partition per request: a producer sends
 * one request per ready batch and pipelines them).
 *
 * <p>Hot path: encoded by {@link io.tributary.serialization.TributarySerializer}, never Jackson.
 *
 * <p>The batch may be a range of a larger array ({@code batchBuffer[batchOffset, batchOffset + batchLength)}): a
 * request read from a received Artery frame keeps the frame's array instead of copying the batch out of it (see {@link
 * io.tributary.serialization.TributarySerializer#fromBinary(java.nio.ByteBuffer, String)}). Requests made in the
 * client use the 7-argument constructor, whose batch is its whole array. {@link #batch()} gives the exact bytes either
 * way. The partition leader validates the batch where it is, and appends a copy (LZ4-compressed when that pays,
 * see {@code PartitionLeader}), or the array itself when the batch is all of it.
 *
 * @param version protocol version of the sender
 * @param topic topic name
 * @param partition partition number, 0-based
 * @param acks -1 (all in-sync replicas, as Kafka's {@code acks=all}), 1 (leader persisted) or 0 (the producer does
 *     not wait for the answer)
 * @param timeoutMs how long the broker may wait for replication before answering {@link ErrorCode#REQUEST_TIMED_OUT}
 * @param batchBuffer the array that holds exactly one record batch in the v2 layout of {@link
 *     io.tributary.record.RecordBatch} at {@code batchOffset}; {@code null} for none (answered {@link
 *     ErrorCode#MESSAGE_TOO_LARGE} with size 0, as an empty request)
 * @param batchOffset index of the batch's first byte in {@code batchBuffer}
 * @param batchLength the batch's size in bytes
 * @param replyTo where the {@link ProduceResponse} goes; {@code null} for no answer at all (meant for {@code
 *     acks=0}; the producer sends one with {@code acks=0} too, to bound its requests in flight)
 * @param correlationId copied into the answer ({@link ProduceResponse#correlationId()}), as Kafka's request header's
 *     correlation id: 0 for a request a client sends; the gateway numbers the requests it makes of a {@link
 *     MultiProduceRequest}'s entries, whose answers all go to one gatherer. Carried on the wire from protocol version
 *     {@link ProtocolVersions#MULTI_PRODUCE}; a version 0 request has 0
 */
public record ProduceRequest(
    short version,
    String topic,
    int partition,
    short acks,
    int timeoutMs,
    byte[] batchBuffer,
    int batchOffset,
    int batchLength,
    ActorRef<ProduceResponse> replyTo,
    int correlationId)
    implements ClientRequest, io.tributary.serialization.HotPath {

  /**
   * @throws IndexOutOfBoundsException if the range is not within {@code batchBuffer}
   */
  public ProduceRequest {
    if (batchBuffer != null) {
      java.util.Objects.checkFromIndexSize(batchOffset, batchLength, batchBuffer.length);
    } else if (batchOffset != 0 || batchLength != 0) {
      throw new IndexOutOfBoundsException("no batch buffer, but offset " + batchOffset + " and length " + batchLength);
    }
  }

  /** A request with correlation id 0 (as a client sends it). */
  public ProduceRequest(
      short version,
      String topic,
      int partition,
      short acks,
      int timeoutMs,
      byte[] batchBuffer,
      int batchOffset,
      int batchLength,
      ActorRef<ProduceResponse> replyTo) {
    this(version, topic, partition, acks, timeoutMs, batchBuffer, batchOffset, batchLength, replyTo, 0);
  }

  /**
   * Sends {@code response} to {@link #replyTo} with this request's {@link #correlationId}; nothing when there is no
   * reply-to. Every answer to a produce request goes through here, so that a gatherer can tell them apart.
   */
  public void reply(ProduceResponse response) {
    if (replyTo != null) {
      replyTo.tell(correlationId == response.correlationId() ? response : response.withCorrelationId(correlationId));
    }
  }

  /**
   * A request whose batch is the whole of {@code batch} (not copied).
   *
   * @param batch exactly one record batch in the v2 layout of {@link io.tributary.record.RecordBatch}, or {@code null}
   */
  public ProduceRequest(
      short version,
      String topic,
      int partition,
      short acks,
      int timeoutMs,
      byte[] batch,
      ActorRef<ProduceResponse> replyTo) {
    this(version, topic, partition, acks, timeoutMs, batch, 0, batch == null ? 0 : batch.length, replyTo);
  }

  /**
   * The batch's bytes: {@link #batchBuffer} itself when the batch is all of it (no copy), else a copy of its range;
   * {@code null} when there is none.
   */
  public byte[] batch() {
    if (batchBuffer == null || (batchOffset == 0 && batchLength == batchBuffer.length)) {
      return batchBuffer;
    }
    return java.util.Arrays.copyOfRange(batchBuffer, batchOffset, batchOffset + batchLength);
  }

  /** Whether the batch is all of {@link #batchBuffer} (then {@link #batch()} copies nothing). */
  public boolean batchIsWholeBuffer() {
    return batchBuffer == null || (batchOffset == 0 && batchLength == batchBuffer.length);
  }
}
