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
 * <p>Settings (Kafka's names and units): {@code acks} (all|-1|1|0, default all), {@code linger.ms} (5),
 * {@code batch.size} (16384), {@code retries} (Integer.MAX_VALUE), {@code retry.backoff.ms} (100),
 * {@code delivery.timeout.ms} (120000), {@code request.timeout.ms} (30000), {@code max.request.size} (1048576),
 * {@code buffer.memory} (33554432), {@code max.block.ms} (60000), {@code max.in.flight.requests.per.connection} (5).
 */
public interface Producer<K, V> extends AutoCloseable {
  /**
   * Sends a record asynchronously.
   *
   * @return completes with the record's metadata once acknowledged per {@code acks}; completes exceptionally with a
   *     {@link TributaryException}: MESSAGE_TOO_LARGE (record above {@code max.request.size} or the topic's
   *     {@code max.message.bytes}), UNKNOWN_TOPIC_OR_PARTITION (after retrying for {@code max.block.ms}),
   *     INVALID_TOPIC_EXCEPTION, REQUEST_TIMED_OUT (not acknowledged within {@code delivery.timeout.ms}), or another
   *     broker error
   * @throws TributaryException at once: INVALID_REQUEST if the producer is closed, REQUEST_TIMED_OUT if buffer memory
   *     stays full for {@code max.block.ms}. The future's callbacks run on the producer's sender thread: keep them
   *     short, and do not call {@link #flush()} from them
   */
  CompletionStage<RecordMetadata> send(ProducerRecord<K, V> record);

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
