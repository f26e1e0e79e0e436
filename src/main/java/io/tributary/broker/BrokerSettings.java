package io.tributary.broker;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The broker settings of one node, read once from the {@code tributary} section of the ActorSystem's config (every
 * key is documented in {@code reference.conf}) and validated at start-up. Immutable.
 *
 * @param dataDir the node's data directory (journals and snapshots below it)
 * @param journalInstances how many LevelDB journal plugin instances the partitions are spread over (1..8)
 * @param role the cluster role a node needs to host partitions and the controller
 * @param messageMaxBytes default largest record batch, bytes (Kafka's {@code message.max.bytes})
 * @param logRetentionMs default time retention, ms, -1 = unlimited (Kafka's {@code log.retention.ms})
 * @param logRetentionBytes default size retention per partition, bytes, -1 = unlimited ({@code log.retention.bytes})
 * @param retentionCheckInterval how often each partition applies retention ({@code log.retention.check.interval.ms})
 * @param numPartitions default partition count for new topics ({@code num.partitions})
 * @param maxPartitionsPerTopic the most partitions a topic may have ({@code max.partitions.per.topic})
 * @param defaultReplicationFactor default replication factor ({@code default.replication.factor})
 * @param indexIntervalBytes bytes of batches between two offset index entries ({@code index.interval.bytes})
 * @param tailMaxBytes bytes of recent batches each partition keeps in memory to serve fetches
 * @param tailIdle a partition without appends for this long drops its in-memory tail (checked at this interval)
 * @param snapshotEveryBatches a partition snapshot is taken every this many journal events
 * @param maxFrameSafeBatchBytes the largest batch the Artery frame size can carry with its envelope, bytes
 * @param fetchMaxBytesCap the most batch bytes one fetch response carries, bytes (keeps responses below the frame size)
 * @param askTimeout how long the gateway and controller wait for internal replies
 */
public record BrokerSettings(
    Path dataDir,
    int journalInstances,
    String role,
    int messageMaxBytes,
    long logRetentionMs,
    long logRetentionBytes,
    Duration retentionCheckInterval,
    int numPartitions,
    int maxPartitionsPerTopic,
    short defaultReplicationFactor,
    int indexIntervalBytes,
    long tailMaxBytes,
    Duration tailIdle,
    int snapshotEveryBatches,
    int maxFrameSafeBatchBytes,
    int fetchMaxBytesCap,
    Duration askTimeout) {

  /** The most journal plugin instances defined in reference.conf. */
  public static final int MAX_JOURNAL_INSTANCES = 8;

  /**
   * The sections read, as prefixes of full keys: values are read by their full key so that an error of the config
   * library names the key as a config file writes it ({@code tributary.broker.message.max.bytes has type STRING}).
   */
  private static final String T = "tributary.";

  private static final String B = "tributary.broker.";

  /**
   * Reads and validates the settings.
   *
   * @param config the ActorSystem's config (root)
   * @throws IllegalArgumentException with the offending key when a value is out of range
   * @throws com.typesafe.config.ConfigException with the offending key (in full) when a value is missing or of the
   *     wrong type
   */
  public static BrokerSettings create(Config config) {
    int frameSafe = io.tributary.protocol.FrameLimits.maxPayloadBytes(config);
    int journalInstances = config.getInt(T + "journal.instances");
    require(journalInstances >= 1 && journalInstances <= MAX_JOURNAL_INSTANCES,
        "tributary.journal.instances must be 1.." + MAX_JOURNAL_INSTANCES);
    int messageMax = config.getInt(B + "message.max.bytes");
    if (messageMax > frameSafe && frameSafe >= 64 && isReferenceDefault(config, B + "message.max.bytes")) {
      messageMax = frameSafe; // Kafka's default does not fit this ActorSystem's frames: see frameNotice
    }
    require(messageMax >= 64 && messageMax <= frameSafe,
        "tributary.broker.message.max.bytes must be between 64 and " + frameSafe
            + " (akka.remote.artery.advanced.maximum-frame-size minus 64 KiB)");
    long retentionMs = config.getLong(B + "log.retention.ms");
    require(retentionMs >= -1, "tributary.broker.log.retention.ms must be >= -1");
    long retentionBytes = config.getLong(B + "log.retention.bytes");
    require(retentionBytes >= -1, "tributary.broker.log.retention.bytes must be >= -1");
    long checkMs = config.getLong(B + "log.retention.check.interval.ms");
    require(checkMs >= 1, "tributary.broker.log.retention.check.interval.ms must be >= 1");
    int numPartitions = config.getInt(B + "num.partitions");
    require(numPartitions >= 1, "tributary.broker.num.partitions must be >= 1");
    int maxPartitions = config.getInt(B + "max.partitions.per.topic");
    require(maxPartitions >= 1, "tributary.broker.max.partitions.per.topic must be >= 1");
    int rf = config.getInt(B + "default.replication.factor");
    require(rf >= 1, "tributary.broker.default.replication.factor must be >= 1");
    int indexInterval = config.getInt(B + "index.interval.bytes");
    require(indexInterval >= 1, "tributary.broker.index.interval.bytes must be >= 1");
    long tail = config.getBytes(T + "log.tail-max-bytes");
    require(tail >= 0, "tributary.log.tail-max-bytes must be >= 0");
    try { // the budget itself is read by each node's io.tributary.log.TailBudget extension; checked here at start-up
      io.tributary.log.TailBudget.fromConfig(config, Runtime.getRuntime().maxMemory());
    } catch (com.typesafe.config.ConfigException e) {
      throw new IllegalArgumentException("tributary.log.tail-total-max-bytes must be auto or a size >= 0: "
          + e.getMessage());
    }
    long tailIdleMs = config.getLong(T + "log.tail-idle-ms");
    require(tailIdleMs >= 1, "tributary.log.tail-idle-ms must be >= 1");
    int snapEvery = config.getInt(T + "log.snapshot-every-batches");
    require(snapEvery >= 1, "tributary.log.snapshot-every-batches must be >= 1");
    int fetchCap = (int) Math.min(frameSafe, config.getBytes(T + "log.fetch-response-max-bytes"));
    require(fetchCap >= 1, "tributary.log.fetch-response-max-bytes must be >= 1");
    return new BrokerSettings(
        Path.of(config.getString(T + "data-dir")).toAbsolutePath(),
        journalInstances,
        config.getString(T + "role"),
        messageMax,
        retentionMs,
        retentionBytes,
        Duration.ofMillis(checkMs),
        numPartitions,
        maxPartitions,
        (short) rf,
        indexInterval,
        tail,
        Duration.ofMillis(tailIdleMs),
        snapEvery,
        frameSafe,
        fetchCap,
        config.getDuration(T + "ask-timeout"));
  }

  /** The journal plugin id of instance {@code i}, as defined in reference.conf. */
  public static String journalPluginId(int i) {
    return "tributary.persistence.journal-" + i;
  }

  /** The snapshot plugin id used by every Tributary entity. */
  public static final String SNAPSHOT_PLUGIN_ID = "tributary.persistence.snapshot";

  /**
   * Why this node's {@code message.max.bytes} is below Kafka's default, or null when it is not: the value is the
   * default of Tributary's {@code reference.conf} (1 MiB, Kafka's) and the ActorSystem's Artery frames are too small
   * for it ({@code akka.remote.artery.advanced.maximum-frame-size}, Akka's default 256 KiB, where a standalone node
   * sets 2 MiB), so {@link #create} uses the largest batch a frame holds. Logged at a node's start.
   *
   * @param config the ActorSystem's config (root)
   */
  public static String frameNotice(Config config) {
    int frameSafe = io.tributary.protocol.FrameLimits.maxPayloadBytes(config);
    int messageMax = config.getInt(B + "message.max.bytes");
    if (messageMax <= frameSafe || !isReferenceDefault(config, B + "message.max.bytes")) {
      return null;
    }
    return "tributary.broker.message.max.bytes is " + frameSafe + " bytes on this node, not Kafka's " + messageMax
        + ": record batches cross JVMs in Artery frames, and akka.remote.artery.advanced.maximum-frame-size is "
        + config.getBytes("akka.remote.artery.advanced.maximum-frame-size") + " bytes (a batch takes at most the"
        + " frame less 64 KiB). Set maximum-frame-size = 2 MiB (and buffer-pool-size = 64, as a standalone node's"
        + " tributary-broker.conf does) for 1 MiB batches, or set message.max.bytes yourself";
  }

  /** Whether {@code path}'s value comes from a {@code reference.conf} (a library's default, not the application's). */
  private static boolean isReferenceDefault(Config config, String path) {
    String resource = config.getValue(path).origin().resource();
    return resource != null && resource.endsWith("reference.conf");
  }

  private static void require(boolean ok, String message) {
    if (!ok) {
      throw new IllegalArgumentException(message);
    }
  }
}
