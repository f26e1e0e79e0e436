package io.tributary.broker;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * Replication settings of a broker node, read from {@code tributary.broker} (Kafka's key names and units; each key
 * is documented in {@code reference.conf}). Immutable.
 *
 * @param minInsyncReplicas default {@code min.insync.replicas} of a topic: the fewest in-sync replicas an
 *     {@code acks=all} write needs (else NOT_ENOUGH_REPLICAS)
 * @param replicaLagTimeMax {@code replica.lag.time.max.ms}: a follower that has not caught up to the leader's log end
 *     offset for this long leaves the ISR
 * @param replicaFetchMaxBytes {@code replica.fetch.max.bytes}: the most batch bytes one follower fetch carries (the
 *     first batch always goes)
 * @param replicaFetchWaitMax {@code replica.fetch.wait.max.ms}: how long a leader holds a follower's fetch at the log
 *     end before answering it empty (the fetch is answered at once when a batch is appended)
 * @param replicaFetchBackoff {@code replica.fetch.backoff.ms}: a follower's pause after a failed fetch
 * @param autoLeaderRebalance {@code auto.leader.rebalance.enable}: move leadership back to the preferred replica (the
 *     first of the replica list) when it is in sync again
 * @param leaderImbalanceCheckInterval {@code leader.imbalance.check.interval.seconds}
 * @param controlledShutdownTimeout how long a node leaving through coordinated shutdown waits for the controller to
 *     move leadership off it ({@code controlled.shutdown.timeout.ms}, no Kafka equivalent of the same name)
 * @param metadataWriteTimeout how long a metadata write waits for a majority of nodes
 */
public record ReplicationSettings(
    int minInsyncReplicas,
    Duration replicaLagTimeMax,
    int replicaFetchMaxBytes,
    Duration replicaFetchWaitMax,
    Duration replicaFetchBackoff,
    boolean autoLeaderRebalance,
    Duration leaderImbalanceCheckInterval,
    Duration controlledShutdownTimeout,
    Duration metadataWriteTimeout) {

  /** The section read; values are read by their full key, so that the config library's errors name it in full. */
  private static final String B = "tributary.broker.";

  /**
   * Reads and validates the settings.
   *
   * @param config the ActorSystem's config (root)
   * @throws IllegalArgumentException naming the key when a value is out of range
   * @throws com.typesafe.config.ConfigException naming the key (in full) when a value is missing or of the wrong type
   */
  public static ReplicationSettings create(Config config) {
    int minIsr = config.getInt(B + "min.insync.replicas");
    require(minIsr >= 1, "tributary.broker.min.insync.replicas must be >= 1");
    long lag = config.getLong(B + "replica.lag.time.max.ms");
    require(lag >= 1, "tributary.broker.replica.lag.time.max.ms must be >= 1");
    int fetchMax = config.getInt(B + "replica.fetch.max.bytes");
    require(fetchMax >= 1, "tributary.broker.replica.fetch.max.bytes must be >= 1");
    long waitMax = config.getLong(B + "replica.fetch.wait.max.ms");
    require(waitMax >= 1, "tributary.broker.replica.fetch.wait.max.ms must be >= 1");
    long backoff = config.getLong(B + "replica.fetch.backoff.ms");
    require(backoff >= 1, "tributary.broker.replica.fetch.backoff.ms must be >= 1");
    long imbalance = config.getLong(B + "leader.imbalance.check.interval.seconds");
    require(imbalance >= 1, "tributary.broker.leader.imbalance.check.interval.seconds must be >= 1");
    long shutdown = config.getLong(B + "controlled.shutdown.timeout.ms");
    require(shutdown >= 1, "tributary.broker.controlled.shutdown.timeout.ms must be >= 1");
    long write = config.getLong(B + "metadata.write.timeout.ms");
    require(write >= 1, "tributary.broker.metadata.write.timeout.ms must be >= 1");
    return new ReplicationSettings(minIsr, Duration.ofMillis(lag), fetchMax, Duration.ofMillis(waitMax),
        Duration.ofMillis(backoff), config.getBoolean(B + "auto.leader.rebalance.enable"),
        Duration.ofSeconds(imbalance), Duration.ofMillis(shutdown), Duration.ofMillis(write));
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
