package io.tributary.protocol;

import akka.actor.typed.ActorRef;
import java.util.List;
import java.util.Objects;

/**
 * Appends one record batch to each of several partitions in one request, as Kafka's Produce request, which carries a
 * batch for every partition of the broker that the producer's sender had ready: a producer writing to many partitions
 * pays the transport's cost per request once per drain instead of once per batch. The gateway hands each entry to its
 * partition's leader as a {@link ProduceRequest} of this request's {@code version}, {@code acks} and {@code timeoutMs}
 * and answers once, with one {@link ProduceResponse} per entry, in entry order ({@link MultiProduceResponse}); each
 * entry succeeds or fails on its own, exactly as the same batch sent alone.
 *
 * <p>At most one entry per partition (Kafka's rule for one request; the producer sends a partition's next batch in
 * its next request): an entry that repeats an earlier entry's partition is answered {@link ErrorCode#INVALID_REQUEST}
 * and not appended. Since protocol version 1 ({@link ProtocolVersions#MULTI_PRODUCE}); a broker of version 0 does not
 * know it.
 *
 * <p>Hot path: encoded by {@link io.tributary.serialization.TributarySerializer}, never Jackson. The entries' batches
 * of a request read from a received Artery frame stay in the frame's array, as {@link ProduceRequest}'s.
 *
 * @param version protocol version of the sender
 * @param acks as {@link ProduceRequest#acks()}, for every entry
 * @param timeoutMs as {@link ProduceRequest#timeoutMs()}, for every entry; the gateway answers REQUEST_TIMED_OUT for
 *     an entry its leader has not answered within this many ms
 * @param entries the batches, at least one
 * @param replyTo where the {@link MultiProduceResponse} goes; {@code null} for no answer at all
 */
public record MultiProduceRequest(
    short version, short acks, int timeoutMs, List<Entry> entries, ActorRef<MultiProduceResponse> replyTo)
    implements ClientRequest, io.tributary.serialization.HotPath {

  /**
   * @throws NullPointerException if {@code entries} is null or holds null
   */
  public MultiProduceRequest {
    entries = List.copyOf(entries);
  }

  /**
   * One partition's batch: {@code batchBuffer[batchOffset, batchOffset + batchLength)} holds exactly one record batch
   * in the v2 layout of {@link io.tributary.record.RecordBatch}, as in {@link ProduceRequest}.
   *
   * @param topic topic name
   * @param partition partition number, 0-based
   * @param batchBuffer the array holding the batch, or {@code null} for none (answered MESSAGE_TOO_LARGE)
   * @param batchOffset index of the batch's first byte
   * @param batchLength the batch's size in bytes
   */
  public record Entry(String topic, int partition, byte[] batchBuffer, int batchOffset, int batchLength) {
    /**
     * @throws IndexOutOfBoundsException if the range is not within {@code batchBuffer}
     */
    public Entry {
      Objects.requireNonNull(topic, "topic");
      if (batchBuffer != null) {
        Objects.checkFromIndexSize(batchOffset, batchLength, batchBuffer.length);
      } else if (batchOffset != 0 || batchLength != 0) {
        throw new IndexOutOfBoundsException("no batch buffer, but offset " + batchOffset + " and length " + batchLength);
      }
    }

    /** An entry whose batch is the whole of {@code batch} (not copied). */
    public static Entry of(String topic, int partition, byte[] batch) {
      return new Entry(topic, partition, batch, 0, batch == null ? 0 : batch.length);
    }

    /** This entry as the single-partition request the gateway hands to the partition's leader. */
    public ProduceRequest toProduceRequest(
        short version, short acks, int timeoutMs, ActorRef<ProduceResponse> replyTo) {
      return new ProduceRequest(version, topic, partition, acks, timeoutMs, batchBuffer, batchOffset, batchLength,
          replyTo);
    }
  }
}
