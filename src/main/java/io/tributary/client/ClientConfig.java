package io.tributary.client;

import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Names of the client settings, as Kafka's {@code ProducerConfig} / {@code ConsumerConfig} / {@code AdminClientConfig}:
 * the same keys, units and defaults. Settings are passed as a {@code Map<String, ?>} to {@link
 * TributaryClient#connect(String, Map)}, {@link TributaryClient#producer}, {@link TributaryClient#consumer} (a
 * producer or consumer map is laid over the client's map, so common keys can be given once).
 *
 * <p>Values may be {@link String}s ({@code "5"}, {@code "all"}) or {@link Number}s of an integral type ({@code 5},
 * {@code 5L}); {@code *.ms} keys also take a {@link Duration}. Unknown keys are ignored with a logged warning (so a Kafka
 * properties file can be passed as is; see {@link #unknownKeys}). A value of the wrong type or out of range makes the factory throw {@link IllegalArgumentException}
 * naming the key.
 *
 * <p>This class only holds constants and is thread-safe; its parsing helpers are for the client library itself.
 */
public final class ClientConfig {

  // ---------------------------------------------------------------------------------------------------------------
  // Common

  /**
   * {@value}: how long the client waits for the answer to one request, in ms (int, ≥ 0). Default {@value
   * #DEFAULT_REQUEST_TIMEOUT_MS}. A request without an answer in time fails with {@code REQUEST_TIMED_OUT} (retriable:
   * producers retry it until {@code delivery.timeout.ms}, admin calls until {@code default.api.timeout.ms}).
   * {@link TributaryClient#connect} also uses it to check that the broker answers.
   */
  public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
  /** Default of {@link #REQUEST_TIMEOUT_MS}: 30 s. */
  public static final int DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

  /** {@value}: pause before a failed request is retried, in ms (long, ≥ 0). Default {@value #DEFAULT_RETRY_BACKOFF_MS}. */
  public static final String RETRY_BACKOFF_MS = "retry.backoff.ms";
  /** Default of {@link #RETRY_BACKOFF_MS}: 100 ms. */
  public static final long DEFAULT_RETRY_BACKOFF_MS = 100L;

  /**
   * {@value}: how long a blocking admin or consumer call (other than {@code poll}) may take in total, retries included,
   * in ms (int, ≥ 0). Default {@value #DEFAULT_DEFAULT_API_TIMEOUT_MS}.
   */
  public static final String DEFAULT_API_TIMEOUT_MS = "default.api.timeout.ms";
  /** Default of {@link #DEFAULT_API_TIMEOUT_MS}: 60 s. */
  public static final int DEFAULT_DEFAULT_API_TIMEOUT_MS = 60_000;

  /**
   * {@value}: age after which cached topic metadata (partition counts) is refreshed in the background, in ms (long, ≥
   * 0). Default {@value #DEFAULT_METADATA_MAX_AGE_MS}.
   */
  public static final String METADATA_MAX_AGE_MS = "metadata.max.age.ms";
  /** Default of {@link #METADATA_MAX_AGE_MS}: 5 minutes. */
  public static final long DEFAULT_METADATA_MAX_AGE_MS = 300_000L;

  // ---------------------------------------------------------------------------------------------------------------
  // Producer

  /**
   * {@value}: how many acknowledgements a produce request waits for (string): {@code all} or {@code -1} (every in-sync
   * replica), {@code 1} (the leader persisted it), {@code 0} (the send completes once the request is sent, with offset
   * -1; errors are not reported). Default {@value #DEFAULT_ACKS}. With {@code 0} nothing is retried, so records are
   * lost if the leader fails or refuses them; the leader still answers, unseen by the caller, and the answer frees the
   * request's slot of {@link #MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION}: that bound stands in for the TCP flow control
   * that holds Kafka's {@code acks=0} producer back, so a producer that outruns the broker waits rather than having
   * its requests dropped on the way.
   */
  public static final String ACKS = "acks";
  /** Default of {@link #ACKS}. */
  public static final String DEFAULT_ACKS = "all";

  /**
   * {@value}: how long a partition's open batch waits for more records before it is sent, in ms (long, ≥ 0). Default
   * {@value #DEFAULT_LINGER_MS}. A full batch is sent at once.
   */
  public static final String LINGER_MS = "linger.ms";
  /** Default of {@link #LINGER_MS}: 5 ms (Kafka 4's default). */
  public static final long DEFAULT_LINGER_MS = 5L;

  /**
   * {@value}: the size a batch is filled up to, in bytes (int, ≥ 0), record batch header included. Default {@value
   * #DEFAULT_BATCH_SIZE}. A record larger than this goes alone in its own batch; 0 puts every record in its own batch.
   */
  public static final String BATCH_SIZE = "batch.size";
  /** Default of {@link #BATCH_SIZE}: 16 KiB. */
  public static final int DEFAULT_BATCH_SIZE = 16_384;

  /**
   * {@value}: how many times a batch that failed with a retriable error is resent (int, ≥ 0). Default {@link
   * Integer#MAX_VALUE}: retries are bounded by {@code delivery.timeout.ms} instead.
   */
  public static final String RETRIES = "retries";
  /** Default of {@link #RETRIES}. */
  public static final int DEFAULT_RETRIES = Integer.MAX_VALUE;

  /**
   * {@value}: upper bound on the time from {@code send()} returning to the record's future completing, retries
   * included, in ms (int, ≥ 0). Default {@value #DEFAULT_DELIVERY_TIMEOUT_MS}. Must be at least {@code linger.ms +
   * request.timeout.ms} when given; when not given it is raised to that. A record not acknowledged in time fails with
   * {@code REQUEST_TIMED_OUT}.
   */
  public static final String DELIVERY_TIMEOUT_MS = "delivery.timeout.ms";
  /** Default of {@link #DELIVERY_TIMEOUT_MS}: 2 minutes. */
  public static final int DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;

  /**
   * {@value}: the largest produce request, i.e. the largest record batch, in bytes (int, ≥ 1). Default {@value
   * #DEFAULT_MAX_REQUEST_SIZE}. A record that cannot fit fails at once with {@code MESSAGE_TOO_LARGE}.
   */
  public static final String MAX_REQUEST_SIZE = "max.request.size";
  /** Default of {@link #MAX_REQUEST_SIZE}: 1 MiB. */
  public static final int DEFAULT_MAX_REQUEST_SIZE = 1_048_576;

  /**
   * {@value}: memory for records waiting to be sent or acknowledged, in bytes (long, ≥ 0, at most {@link
   * Integer#MAX_VALUE}). Default {@value #DEFAULT_BUFFER_MEMORY}. When it is full, {@code send()} blocks up to {@code
   * max.block.ms}.
   */
  public static final String BUFFER_MEMORY = "buffer.memory";
  /** Default of {@link #BUFFER_MEMORY}: 32 MiB. */
  public static final long DEFAULT_BUFFER_MEMORY = 33_554_432L;

  /**
   * {@value}: how long {@code send()} and {@code partitionsFor()} may block, waiting for metadata or for buffer memory,
   * in ms (long, ≥ 0). Default {@value #DEFAULT_MAX_BLOCK_MS}.
   */
  public static final String MAX_BLOCK_MS = "max.block.ms";
  /** Default of {@link #MAX_BLOCK_MS}: 60 s. */
  public static final long DEFAULT_MAX_BLOCK_MS = 60_000L;

  /**
   * {@value}: how many batches of one partition may be awaiting their answer at once (int, ≥ 1). Default {@value
   * #DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION}. With the idempotent producer (the default) up to 5 keep order
   * under retries. Without idempotence and with more than 1, a retried batch may land after a later one (as in Kafka
   * without idempotence); set 1 for strict order under retries.
   */
  public static final String MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = "max.in.flight.requests.per.connection";
  /** Default of {@link #MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION}. */
  public static final int DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 5;

  /**
   * {@value}: whether the producer is idempotent, as Kafka's (KIP-98): a retried batch is never written twice and
   * batches of a partition are never reordered by retries (boolean). Default {@value #DEFAULT_ENABLE_IDEMPOTENCE} (as
   * Kafka 3+). It needs {@code acks=all}, {@code retries} ≥ 1 and {@code max.in.flight.requests.per.connection} ≤ 5:
   * set to {@code true} explicitly together with a conflicting setting, the producer factory throws {@link
   * IllegalArgumentException} naming the conflict; when it is not set, a conflicting setting silently turns
   * idempotence off (Kafka 3.x's behaviour).
   */
  public static final String ENABLE_IDEMPOTENCE = "enable.idempotence";
  /** Default of {@link #ENABLE_IDEMPOTENCE}. */
  public static final boolean DEFAULT_ENABLE_IDEMPOTENCE = true;
  /** The most batches per partition an idempotent producer may have in flight (the broker remembers 5). */
  public static final int MAX_IN_FLIGHT_WITH_IDEMPOTENCE = 5;

  /**
   * {@value}: the codec the producer compresses each batch's records with (string): {@code none}, {@code gzip}, {@code
   * lz4} or {@code zstd}. Default {@value #DEFAULT_COMPRESSION_TYPE}. {@code snappy} is a valid Kafka value that this
   * client does not support: the producer factory throws {@link IllegalArgumentException}, as for any other value.
   * The broker stores batches as compressed by the producer; consumers decompress them transparently. With a codec, a
   * batch is filled until its <em>estimated compressed</em> size reaches {@code batch.size} (as Kafka: a per-topic
   * ratio learned from the batches built so far), but its uncompressed records never exceed {@code max.request.size}
   * less 1 KiB, so a batch of incompressible data still fits the broker's {@code message.max.bytes}.
   */
  public static final String COMPRESSION_TYPE = "compression.type";
  /** Default of {@link #COMPRESSION_TYPE}. */
  public static final String DEFAULT_COMPRESSION_TYPE = "none";

  /**
   * {@value}: gzip level when {@code compression.type=gzip} (int, 1-9, or -1 for zlib's default). Default -1 (Kafka
   * 3.8's name and default).
   */
  public static final String COMPRESSION_GZIP_LEVEL = "compression.gzip.level";
  /**
   * {@value}: lz4 level when {@code compression.type=lz4} (int, 1-17). Default 9, LZ4's fast compressor; other levels
   * use LZ4 HC (Kafka 3.8's name, range and default).
   */
  public static final String COMPRESSION_LZ4_LEVEL = "compression.lz4.level";
  /**
   * {@value}: zstd level when {@code compression.type=zstd} (int, -131072 to 22). Default 3 (Kafka 3.8's name, range
   * and default).
   */
  public static final String COMPRESSION_ZSTD_LEVEL = "compression.zstd.level";

  // ---------------------------------------------------------------------------------------------------------------
  // Consumer

  /** {@value}: the most records one {@code poll()} returns (int, ≥ 1). Default {@value #DEFAULT_MAX_POLL_RECORDS}. */
  public static final String MAX_POLL_RECORDS = "max.poll.records";
  /** Default of {@link #MAX_POLL_RECORDS}. */
  public static final int DEFAULT_MAX_POLL_RECORDS = 500;

  /**
   * {@value}: how long the broker holds a fetch at the end of the log waiting for new records, in ms (int, ≥ 0).
   * Default {@value #DEFAULT_FETCH_MAX_WAIT_MS}. Never more than what is left of the {@code poll()} timeout.
   */
  public static final String FETCH_MAX_WAIT_MS = "fetch.max.wait.ms";
  /** Default of {@link #FETCH_MAX_WAIT_MS}. */
  public static final int DEFAULT_FETCH_MAX_WAIT_MS = 500;

  /**
   * {@value}: soft limit on the record batch bytes one fetch returns for one partition, in bytes (int, ≥ 1). Default
   * {@value #DEFAULT_MAX_PARTITION_FETCH_BYTES}. The first batch is returned even if larger.
   */
  public static final String MAX_PARTITION_FETCH_BYTES = "max.partition.fetch.bytes";
  /** Default of {@link #MAX_PARTITION_FETCH_BYTES}: 1 MiB. */
  public static final int DEFAULT_MAX_PARTITION_FETCH_BYTES = 1_048_576;

  /**
   * {@value}: where a partition without a position starts, and what happens when its position is out of range
   * (string): {@code earliest} (the log start offset), {@code latest} (the high watermark: only new records), {@code
   * none} (throw). Default {@value #DEFAULT_AUTO_OFFSET_RESET}. With a {@code group.id}, a new partition starts at
   * the group's committed offset and this setting applies only when there is none. With {@code none}, a partition
   * without a position throws {@link NoOffsetForPartitionException} from {@code poll()}, and a position out of range
   * throws {@link TributaryException} {@code OFFSET_OUT_OF_RANGE}.
   */
  public static final String AUTO_OFFSET_RESET = "auto.offset.reset";
  /** Default of {@link #AUTO_OFFSET_RESET}. */
  public static final String DEFAULT_AUTO_OFFSET_RESET = "latest";

  // ---------------------------------------------------------------------------------------------------------------
  // Consumer groups

  /**
   * {@value}: the consumer group (string). No default. Required by {@code subscribe()} and by the offset APIs
   * ({@code commitSync}, {@code commitAsync}, {@code committed}); without it, or when it is the empty string, they
   * throw {@link TributaryException} {@code INVALID_GROUP_ID}. With a group id, partitions start at the group's
   * committed offsets, also with manual assignment.
   */
  public static final String GROUP_ID = "group.id";

  /**
   * {@value}: a unique, stable name of this consumer instance in its group, for static membership (string, not
   * empty). No default (dynamic membership). A static member does not leave the group on {@code close()}: if it comes
   * back within {@code session.timeout.ms} it gets its partitions back without a rebalance of the others. A second
   * live consumer with the same instance id fences the first (it gets {@code FENCED_INSTANCE_ID}).
   */
  public static final String GROUP_INSTANCE_ID = "group.instance.id";

  /**
   * {@value}: a name for this client in the broker's group descriptions (string). Default: {@code consumer-<group
   * id>-<n>}, n counting the consumers made in this JVM.
   */
  public static final String CLIENT_ID = "client.id";

  /**
   * {@value}: how long the group coordinator keeps a member that sends no heartbeat, in ms (int, ≥ 1). Default
   * {@value #DEFAULT_SESSION_TIMEOUT_MS}. The broker bounds it (else {@code INVALID_SESSION_TIMEOUT}). The consumer
   * also considers itself out of the group when none of its heartbeats was answered for this long: its partitions
   * are then lost ({@link ConsumerRebalanceListener#onPartitionsLost}) and it rejoins.
   */
  public static final String SESSION_TIMEOUT_MS = "session.timeout.ms";
  /** Default of {@link #SESSION_TIMEOUT_MS}: 45 s. */
  public static final int DEFAULT_SESSION_TIMEOUT_MS = 45_000;

  /**
   * {@value}: the interval between heartbeats to the group coordinator, in ms (int, ≥ 1, below {@code
   * session.timeout.ms}). Default {@value #DEFAULT_HEARTBEAT_INTERVAL_MS}. Heartbeats are sent by the consumer's
   * member actor, independently of {@code poll()}.
   */
  public static final String HEARTBEAT_INTERVAL_MS = "heartbeat.interval.ms";
  /** Default of {@link #HEARTBEAT_INTERVAL_MS}: 3 s. */
  public static final int DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000;

  /**
   * {@value}: the longest time between two calls of {@code poll()} by a subscribed consumer, in ms (int, ≥ 1).
   * Default {@value #DEFAULT_MAX_POLL_INTERVAL_MS}. When it passes, the consumer leaves the group (as Kafka's
   * heartbeat thread does; a static member only stops heartbeating) so that its partitions go to live members; the
   * next {@code poll()} reports them lost and rejoins. It is also the time the coordinator waits for members to give
   * up revoked partitions during a rebalance.
   */
  public static final String MAX_POLL_INTERVAL_MS = "max.poll.interval.ms";
  /** Default of {@link #MAX_POLL_INTERVAL_MS}: 5 minutes. */
  public static final int DEFAULT_MAX_POLL_INTERVAL_MS = 300_000;

  /**
   * {@value}: the partition assignors this consumer supports, in order of preference (comma-separated string or a
   * {@link java.util.List}). Default {@value #DEFAULT_PARTITION_ASSIGNMENT_STRATEGY}. Valid names: {@code range},
   * {@code roundrobin} (eager: every rebalance revokes all partitions), {@code cooperative-sticky} (incremental: only
   * the partitions that move are revoked). Kafka's class names ({@code
   * org.apache.kafka.clients.consumer.RangeAssignor}, {@code ...RoundRobinAssignor}, {@code
   * ...CooperativeStickyAssignor}) are accepted for the same assignors. The group uses the first assignor every
   * member supports.
   */
  public static final String PARTITION_ASSIGNMENT_STRATEGY = "partition.assignment.strategy";
  /** Default of {@link #PARTITION_ASSIGNMENT_STRATEGY}. */
  public static final String DEFAULT_PARTITION_ASSIGNMENT_STRATEGY = "cooperative-sticky";

  /**
   * {@value}: whether the consumer commits its positions by itself (boolean: {@code true} / {@code false}). Default:
   * {@code true} when {@code group.id} is set, else {@code false} ({@code true} without a group id is rejected).
   * Auto-commit commits the positions of the assigned partitions that moved: asynchronously inside {@code poll()} at
   * most every {@code auto.commit.interval.ms}, and synchronously before partitions are revoked and on {@code
   * close()}. Positions are those after the records already returned by {@code poll()}, so records are processed at
   * least once.
   */
  public static final String ENABLE_AUTO_COMMIT = "enable.auto.commit";

  /**
   * {@value}: the least time between two auto-commits inside {@code poll()}, in ms (int, ≥ 0). Default {@value
   * #DEFAULT_AUTO_COMMIT_INTERVAL_MS}.
   */
  public static final String AUTO_COMMIT_INTERVAL_MS = "auto.commit.interval.ms";
  /** Default of {@link #AUTO_COMMIT_INTERVAL_MS}: 5 s. */
  public static final int DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5_000;

  private ClientConfig() {}

  /** Every key this class names (its {@code public static final String} constants other than defaults). */
  private static final java.util.Set<String> KNOWN_KEYS = knownKeys();

  private static java.util.Set<String> knownKeys() {
    java.util.Set<String> keys = new java.util.TreeSet<>();
    for (java.lang.reflect.Field f : ClientConfig.class.getFields()) {
      int m = f.getModifiers();
      if (f.getType() == String.class && java.lang.reflect.Modifier.isStatic(m)
          && java.lang.reflect.Modifier.isFinal(m) && !f.getName().startsWith("DEFAULT_")) {
        try {
          String v = (String) f.get(null);
          if (v != null) {
            keys.add(v);
          }
        } catch (IllegalAccessException e) {
          throw new IllegalStateException(e);
        }
      }
    }
    return java.util.Collections.unmodifiableSet(keys);
  }

  /**
   * The keys of {@code config} that no setting of the client library uses (misspelled, or Kafka settings this client
   * has no use for, such as serializer class names), sorted. They are ignored; the client logs a warning for each, as
   * Kafka's clients do ("supplied but isn't a known config"). Keys under {@code tributary.} and {@code akka.} are the
   * client ActorSystem's and never reported.
   */
  public static java.util.List<String> unknownKeys(Map<String, ?> config) {
    java.util.List<String> out = new java.util.ArrayList<>();
    if (config != null) {
      for (String k : new java.util.TreeSet<>(config.keySet())) {
        if (!KNOWN_KEYS.contains(k) && !k.startsWith("tributary.") && !k.startsWith("akka.")) {
          out.add(k);
        }
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Parsing helpers (library-internal)

  /** {@code overrides} laid over {@code base}; neither is changed. */
  static Map<String, Object> merge(Map<String, ?> base, Map<String, ?> overrides) {
    Map<String, Object> merged = new HashMap<>();
    if (base != null) {
      merged.putAll(base);
    }
    if (overrides != null) {
      merged.putAll(overrides);
    }
    return merged;
  }

  /**
   * An int setting.
   *
   * @throws IllegalArgumentException if the value is not an integer in {@code [min, max]}
   */
  static int getInt(Map<String, ?> config, String key, int defaultValue, int min, int max) {
    long value = getLong(config, key, defaultValue, min, max);
    return (int) value;
  }

  /**
   * A long setting; {@code *.ms} keys also accept a {@link Duration}.
   *
   * @throws IllegalArgumentException if the value is not an integer in {@code [min, max]}
   */
  static long getLong(Map<String, ?> config, String key, long defaultValue, long min, long max) {
    Object raw = config == null ? null : config.get(key);
    if (raw == null) {
      return defaultValue;
    }
    long value;
    if (raw instanceof Long || raw instanceof Integer || raw instanceof Short || raw instanceof Byte) {
      value = ((Number) raw).longValue();
    } else if (raw instanceof Duration && key.endsWith(".ms")) {
      try {
        value = ((Duration) raw).toMillis();
      } catch (ArithmeticException e) {
        throw invalid(key, raw, "the duration is too long");
      }
    } else if (raw instanceof String) {
      String s = ((String) raw).trim();
      try {
        value = Long.parseLong(s);
      } catch (NumberFormatException e) {
        throw invalid(key, raw, "expected an integer");
      }
    } else {
      throw invalid(key, raw, "expected an integer (String or integral Number), got " + raw.getClass().getName());
    }
    if (value < min || value > max) {
      throw invalid(key, raw, "must be in [" + min + ", " + max + "]");
    }
    return value;
  }

  /**
   * A string setting from a fixed set of choices (case-insensitive; the result is lower case).
   *
   * @throws IllegalArgumentException if the value is not one of {@code choices}
   */
  static String getChoice(Map<String, ?> config, String key, String defaultValue, String... choices) {
    Object raw = config == null ? null : config.get(key);
    if (raw == null) {
      return defaultValue;
    }
    String s = raw.toString().trim().toLowerCase(Locale.ROOT);
    for (String choice : choices) {
      if (choice.equals(s)) {
        return choice;
      }
    }
    throw invalid(key, raw, "must be one of " + String.join(", ", choices));
  }

  /**
   * A string setting, {@code null} when absent.
   *
   * @throws IllegalArgumentException if the value is not a {@link String}
   */
  static String getString(Map<String, ?> config, String key) {
    Object raw = config == null ? null : config.get(key);
    if (raw == null) {
      return null;
    }
    if (!(raw instanceof String s)) {
      throw invalid(key, raw, "expected a string, got " + raw.getClass().getName());
    }
    return s;
  }

  /**
   * A boolean setting: {@link Boolean}, or the strings {@code true} / {@code false} (case-insensitive).
   *
   * @throws IllegalArgumentException for any other value
   */
  static boolean getBoolean(Map<String, ?> config, String key, boolean defaultValue) {
    Object raw = config == null ? null : config.get(key);
    if (raw == null) {
      return defaultValue;
    }
    if (raw instanceof Boolean b) {
      return b;
    }
    String s = raw.toString().trim().toLowerCase(Locale.ROOT);
    if (s.equals("true")) {
      return true;
    }
    if (s.equals("false")) {
      return false;
    }
    throw invalid(key, raw, "expected true or false");
  }

  /**
   * A list setting: a comma-separated string or a {@link java.util.Collection}; blank entries are dropped, the others
   * trimmed.
   *
   * @throws IllegalArgumentException if the value is neither
   */
  static java.util.List<String> getList(Map<String, ?> config, String key, String defaultValue) {
    Object raw = config == null ? null : config.get(key);
    java.util.List<String> out = new java.util.ArrayList<>();
    if (raw == null) {
      raw = defaultValue;
    }
    if (raw instanceof String s) {
      for (String part : s.split(",")) {
        if (!part.isBlank()) {
          out.add(part.trim());
        }
      }
    } else if (raw instanceof java.util.Collection<?> c) {
      for (Object o : c) {
        if (o != null && !o.toString().isBlank()) {
          out.add(o.toString().trim());
        }
      }
    } else {
      throw invalid(key, raw, "expected a comma-separated string or a list");
    }
    return out;
  }

  /**
   * The {@code partition.assignment.strategy} setting as canonical assignor names, duplicates dropped.
   *
   * @throws IllegalArgumentException if it is empty or names an unknown assignor
   */
  static java.util.List<String> getAssignors(Map<String, ?> config) {
    java.util.List<String> names =
        getList(config, PARTITION_ASSIGNMENT_STRATEGY, DEFAULT_PARTITION_ASSIGNMENT_STRATEGY);
    java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
    for (String name : names) {
      String canonical =
          switch (name.toLowerCase(Locale.ROOT)) {
            case "range", "org.apache.kafka.clients.consumer.rangeassignor" -> "range";
            case "roundrobin", "org.apache.kafka.clients.consumer.roundrobinassignor" -> "roundrobin";
            case "cooperative-sticky", "org.apache.kafka.clients.consumer.cooperativestickyassignor" ->
                "cooperative-sticky";
            default -> throw invalid(
                PARTITION_ASSIGNMENT_STRATEGY,
                config.get(PARTITION_ASSIGNMENT_STRATEGY),
                "unknown assignor '" + name + "'; valid: range, roundrobin, cooperative-sticky");
          };
      out.add(canonical);
    }
    if (out.isEmpty()) {
      throw invalid(
          PARTITION_ASSIGNMENT_STRATEGY,
          config.get(PARTITION_ASSIGNMENT_STRATEGY),
          "at least one assignor is needed (range, roundrobin, cooperative-sticky)");
    }
    return java.util.List.copyOf(out);
  }

  /**
   * The {@code acks} setting as the protocol's value: -1, 0 or 1.
   *
   * @throws IllegalArgumentException if the value is not {@code all}, {@code -1}, {@code 0} or {@code 1}
   */
  static short getAcks(Map<String, ?> config) {
    Object raw = config == null ? null : config.get(ACKS);
    if (raw == null) {
      return -1;
    }
    String s = raw.toString().trim().toLowerCase(Locale.ROOT);
    switch (s) {
      case "all":
      case "-1":
        return -1;
      case "0":
        return 0;
      case "1":
        return 1;
      default:
        throw invalid(ACKS, raw, "must be one of all, -1, 0, 1");
    }
  }

  /**
   * Checks producer settings as {@code TributaryClient.producer} does, without making a producer: for tools that
   * want a bad value to be a usage error before they connect.
   *
   * @throws IllegalArgumentException {@code Invalid value V for configuration K: why}, as the producer would
   */
  public static void validateProducerSettings(Map<String, ?> config) {
    ProducerSettings.from(config);
  }

  /**
   * Checks consumer settings as {@code TributaryClient.consumer} does, without making a consumer (and without using
   * up a generated {@code client.id}).
   *
   * @throws IllegalArgumentException {@code Invalid value V for configuration K: why}, as the consumer would
   */
  public static void validateConsumerSettings(Map<String, ?> config) {
    Map<String, Object> copy = new java.util.HashMap<>(config);
    copy.putIfAbsent(CLIENT_ID, "settings-check");
    ConsumerSettings.from(copy);
  }

  /**
   * Checks admin settings as {@code TributaryClient.admin} does, without making an admin.
   *
   * @throws IllegalArgumentException {@code Invalid value V for configuration K: why}, as the admin would
   */
  public static void validateAdminSettings(Map<String, ?> config) {
    AdminSettings.from(config);
  }

  private static IllegalArgumentException invalid(String key, Object value, String why) {
    return new IllegalArgumentException("Invalid value " + value + " for configuration " + key + ": " + why);
  }
}
