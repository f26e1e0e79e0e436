package io.tributary.client;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * Publishes records to topics, as Kafka's {@code KafkaProducer}. Thread-safe: one producer may be shared by many
 * threads (as in Kafka, that is the fast way).
 *
 * <p>Records are buffered per partition into record batches (up to {@code batch.size} bytes, waiting up to
 * {@code linger.ms}) and sent as one request per batch, several batches in flight per partition. The partition is the
 * record's own, else murmur2 of the key (as Kafka's default partitioner), else a "sticky" partition that changes when a
 * batch is completed. Records sent by one producer to one partition are appended in send order.
 *
 * <h2>Retries and delivery guarantees</h2>
 *
 * A batch that fails with a retriable error (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, NOT_ENOUGH_REPLICAS,
 * NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT, NETWORK_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION, ...), or whose
 * answer does not come within {@code request.timeout.ms} (e.g. its node died), is resent after {@code
 * retry.backoff.ms}, until {@code delivery.timeout.ms} has passed since the record was buffered or {@code retries} is
 * used up. A client connected to several nodes moves to another node's gateway when its own stops answering.
 *
 * <p>The producer is <b>idempotent</b> by default ({@code enable.idempotence=true}, as Kafka 3+, KIP-98): each batch
 * carries a producer id, epoch and per-partition sequence number, and the partition leader recognises a retried batch
 * and answers it with its original offsets instead of writing it again. So, for records of one producer instance:
 * <ul>
 *   <li>no record is written twice because of a retry (a lost answer, a timeout, a leader change);
 *   <li>records of one partition are written in send order, also with up to 5 batches in flight and retries.
 * </ul>
 * Limits: the producer id is drawn at random when the producer is created (see {@link ProducerIds}) and there are no
 * transactions, so a record sent again by the application, or by a new producer after a restart, is a new record
 * (duplicates across producer restarts are possible, as in Kafka without transactions). If a batch finally fails (e.g.
 * MESSAGE_TOO_LARGE), the producer continues with a new epoch (as Kafka's since KIP-360): the later batches of the same
 * partition that the leader refused because of the gap (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID) are resent
 * with the new epoch, in order, and fail only when their own retries or {@code delivery.timeout.ms} run out.
 * Idempotence needs {@code acks=all},
 * {@code retries} ≥ 1 and {@code max.in.flight.requests.per.connection} ≤ 5: setting it explicitly with a conflicting
 * value is an error, otherwise a conflicting value turns it off. Without idempotence a retry may write a batch twice,
 * and with more than one batch in flight a retried batch may land after a later one.
 *
 * <p>Settings (Kafka's names and units): {@code acks} (all|-1|1|0, default all), {@code linger.ms} (5),
 * {@code batch.size} (16384), {@code retries} (Integer.MAX_VALUE), {@code retry.backoff.ms} (100),
 * {@code delivery.timeout.ms} (120000), {@code request.timeout.ms} (30000), {@code max.request.size} (1048576),
 * {@code buffer.memory} (33554432), {@code max.block.ms} (60000), {@code max.in.flight.requests.per.connection} (5),
 * {@code enable.idempotence} (true).
 */
public interface Producer<K, V> extends AutoCloseable {
  /**
   * Sends a record asynchronously.
   *
   * @return completes with the record's metadata once acknowledged per {@code acks}; completes exceptionally with a
   *     {@link TributaryException}: MESSAGE_TOO_LARGE (record above {@code max.request.size}, or above what
   *     one request can carry, {@code akka.remote.artery.advanced.maximum-frame-size} less 64 KiB, or, on its own, above
   *     the topic's {@code max.message.bytes}: a batch of several records the leader refuses as too large is split
   *     and its records resent, as Kafka's producer does), UNKNOWN_TOPIC_OR_PARTITION (after retrying for {@code
   *     max.block.ms}), INVALID_TOPIC_EXCEPTION, REQUEST_TIMED_OUT (not acknowledged within {@code
   *     delivery.timeout.ms}), or another broker error
   * @throws TributaryException at once: INVALID_REQUEST if the producer is closed, REQUEST_TIMED_OUT if buffer memory
   *     stays full for {@code max.block.ms}. The future's callbacks run on the producer's sender thread: keep them
   *     short, and do not call {@link #flush()} from them
   */
  CompletionStage<RecordMetadata> send(ProducerRecord<K, V> record);

  /**
   * Sends a record asynchronously and runs {@code callback} when it completes, as Kafka's {@code send(record,
   * callback)}: the cheap way to handle many records (one object per record; chaining on the returned future adds a
   * dependent stage per record).
   *
   * @param callback run once with the metadata or the error (the same errors as {@link #send(ProducerRecord)}'s
   *     future), on the producer's sender thread; {@code null} for none
   * @return the record's future, as {@link #send(ProducerRecord)}
   * @throws TributaryException at once, as {@link #send(ProducerRecord)} (the callback is not run then)
   */
  CompletionStage<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback);

  /** Sends every buffered record now and waits until each has completed (successfully or not). */
  void flush();

  /** The number of partitions of {@code topic}, fetching metadata if needed. */
  int partitionsFor(String topic);

  /** Flushes, then releases resources; waits at most {@code timeout}. Idempotent. */
  void close(Duration timeout);

  /** {@code close(Duration.ofMillis(Long.MAX_VALUE))}. */
  @Override
  default void close() {
    close(Duration.ofMillis(Long.MAX_VALUE));
  }
}
