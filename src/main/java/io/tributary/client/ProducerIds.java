package io.tributary.client;

import java.security.SecureRandom;

/**
 * Producer ids of idempotent producers, drawn by the client itself instead of asked from the broker (Kafka's {@code
 * InitProducerId} round trip): a uniformly random positive 63-bit long from {@link SecureRandom}, with producer epoch
 * 0.
 *
 * <p>Why no broker round trip: the id only has to be unique among the producers that write to one partition within
 * {@code producer.id.expiration.ms}, and a random 63-bit id is, with overwhelming odds. By the birthday bound, among n
 * producers alive at once the chance that two share an id is about n²/2⁶⁴: for a million concurrent producers about
 * 5·10⁻⁸, for a thousand about 5·10⁻¹⁴. A collision would make the two producers' batches look out of order or
 * duplicated to the partition leader (errors or, at worst, a batch answered as a duplicate and not written). There is
 * no transactional id, so a producer that restarts gets a new id: retries of its old batches are not recognised across
 * the restart (as Kafka's idempotent producer without transactions).
 *
 * <p>Thread-safe.
 */
final class ProducerIds {

  private static final SecureRandom RANDOM = new SecureRandom();

  private ProducerIds() {}

  /** A random producer id in {@code [1, Long.MAX_VALUE]}. */
  static long random() {
    long id;
    do {
      id = RANDOM.nextLong() & Long.MAX_VALUE;
    } while (id == 0);
    return id;
  }
}
