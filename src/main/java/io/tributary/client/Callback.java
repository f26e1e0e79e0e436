package io.tributary.client;

/**
 * What to run when a record sent with {@link Producer#send(ProducerRecord, Callback)} completes, as Kafka's {@code
 * org.apache.kafka.clients.producer.Callback}. Cheaper than chaining on the returned future: no dependent future is
 * allocated per record.
 *
 * <p>Runs on the producer's sender thread (or, for a record refused before it was buffered, on the sending thread):
 * keep it short, and do not call {@link Producer#flush()} from it. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface Callback {
  /**
   * The record completed.
   *
   * @param metadata the acknowledged record's partition, offset and timestamp; {@code null} if it failed
   * @param exception {@code null} on success; else why it failed (a {@link TributaryException} with the error code:
   *     the same errors as the future of {@link Producer#send(ProducerRecord)})
   */
  void onCompletion(RecordMetadata metadata, Exception exception);
}
