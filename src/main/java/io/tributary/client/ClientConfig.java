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
 * {@code 5L}); {@code *.ms} keys also take a {@link Duration}. Unknown keys are ignored (so a Kafka properties file can
 * be passed as is). A value of the wrong type or out of range makes the factory throw {@link IllegalArgumentException}
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
   * replica), {@code 1} (the leader persisted it), {@code 0} (no answer: the send completes at once with offset -1).
   * Default {@value #DEFAULT_ACKS}. With {@code 0} nothing is retried and nothing slows the producer down, so records
   * may be lost, also when the producer outruns the connection (Artery drops messages when its send queue is full).
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
   * #DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION}. With more than 1, a retried batch may land after a later one (as
   * in Kafka without idempotence); set 1 for strict order under retries.
   */
  public static final String MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = "max.in.flight.requests.per.connection";
  /** Default of {@link #MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION}. */
  public static final int DEFAULT_MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION = 5;

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
   * none} (throw {@code OFFSET_OUT_OF_RANGE}). Default {@value #DEFAULT_AUTO_OFFSET_RESET}.
   */
  public static final String AUTO_OFFSET_RESET = "auto.offset.reset";
  /** Default of {@link #AUTO_OFFSET_RESET}. */
  public static final String DEFAULT_AUTO_OFFSET_RESET = "latest";

  private ClientConfig() {}

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

  private static IllegalArgumentException invalid(String key, Object value, String why) {
    return new IllegalArgumentException("Invalid value " + value + " for configuration " + key + ": " + why);
  }
}
