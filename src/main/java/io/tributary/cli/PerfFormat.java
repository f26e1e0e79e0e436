package io.tributary.cli;

import java.text.SimpleDateFormat;
import java.util.Arrays;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;

/**
 * The lines the perf tools print, in exactly the formats of Kafka's {@code ProducerPerformance},
 * {@code ConsumerPerformance} and {@code EndToEndLatency}, so the two tools' outputs can be put side by side (and parsed by the same scripts).
 * Numbers always use {@code .} as decimal point ({@link Locale#ROOT}). Pure functions.
 *
 * <p>One departure: the producer lines never print {@code NaN} or {@code Infinity}. Kafka divides by the record count
 * and the elapsed time as they are, so a run where no record was acknowledged prints "NaN ms avg latency"; here a
 * rate or average over zero records is 0, and an elapsed time under 1 ms counts as 1 ms.
 */
final class PerfFormat {
  /** Kafka's ConsumerPerformance header (without detailed stats). */
  static final String CONSUMER_HEADER = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg,"
      + " nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec";

  /** Kafka's ConsumerPerformance date format. */
  static final String CONSUMER_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS";

  private static final double MB = 1024.0 * 1024.0;

  private PerfFormat() {}

  /**
   * Kafka's ProducerPerformance window line: {@code %d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg
   * latency, %.1f ms max latency.}
   */
  static String producerWindow(long count, long bytes, long elapsedMs, long totalLatencyMs, int maxLatencyMs) {
    return String.format(Locale.ROOT,
        "%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.",
        count, perSecond(count, elapsedMs), perSecond(bytes, elapsedMs) / MB, average(totalLatencyMs, count),
        (double) maxLatencyMs);
  }

  /**
   * Kafka's ProducerPerformance total line: {@code %d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency,
   * %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.}
   *
   * With no record acknowledged ({@code count} 0) every figure is 0: {@code 0 records sent, 0.000000 records/sec (0.00
   * MB/sec), 0.00 ms avg latency, ...} (Kafka's tool prints {@code NaN ms avg latency}).
   *
   * @param percentiles latencies at the 50th, 95th, 99th and 99.9th percentile, ms
   */
  static String producerTotal(
      long count, long bytes, long elapsedMs, long totalLatencyMs, int maxLatencyMs, int[] percentiles) {
    return String.format(Locale.ROOT,
        "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency,"
            + " %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th.",
        count, perSecond(count, elapsedMs), perSecond(bytes, elapsedMs) / MB, average(totalLatencyMs, count),
        (double) maxLatencyMs, percentiles[0], percentiles[1], percentiles[2], percentiles[3]);
  }

  /** {@code amount} per second over {@code elapsedMs}: 0 for no amount, and at least 1 ms elapsed (never NaN). */
  private static double perSecond(long amount, long elapsedMs) {
    return amount == 0 ? 0.0 : 1000.0 * amount / (double) Math.max(elapsedMs, 1);
  }

  /** {@code total / count}, 0 when {@code count} is 0 (never NaN). */
  private static double average(long total, long count) {
    return count == 0 ? 0.0 : total / (double) count;
  }

  /**
   * Kafka's ConsumerPerformance result line: {@code %s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f} with start and
   * end time as {@value #CONSUMER_DATE_FORMAT} in {@code zone}, MB consumed, MB/s, messages, messages/s, rebalance
   * time (ms), fetch time (ms: elapsed minus rebalance time), fetch MB/s and fetch messages/s.
   */
  static String consumerLine(
      long startMs, long endMs, long bytes, long messages, long rebalanceTimeMs, TimeZone zone) {
    SimpleDateFormat dates = new SimpleDateFormat(CONSUMER_DATE_FORMAT, Locale.ROOT);
    dates.setTimeZone(zone);
    double elapsedSec = (endMs - startMs) / 1_000.0;
    long fetchTimeMs = (endMs - startMs) - rebalanceTimeMs;
    double totalMb = bytes * 1.0 / MB;
    return String.format(Locale.ROOT, "%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f",
        dates.format(new Date(startMs)),
        dates.format(new Date(endMs)),
        totalMb,
        totalMb / elapsedSec,
        messages,
        messages / elapsedSec,
        rebalanceTimeMs,
        fetchTimeMs,
        totalMb / (fetchTimeMs / 1000.0),
        messages / (fetchTimeMs / 1000.0));
  }
  /**
   * Kafka's EndToEndLatency progress line, printed every 1000th record: the record's index, a tab, and its latency in
   * ms as Java prints a {@code double} ({@code 1000\t1.234567}).
   */
  static String endToEndProgress(int index, long elapsedNanos) {
    return index + "\t" + elapsedNanos / 1000.0 / 1000.0;
  }

  /** Kafka's EndToEndLatency average line: {@code Avg latency: %.4f ms}, the mean of the latencies. */
  static String endToEndAverage(double totalNanos, int count) {
    return String.format(Locale.ROOT, "Avg latency: %.4f ms", totalNanos / count / 1000.0 / 1000.0);
  }

  /**
   * Kafka's EndToEndLatency percentile line: {@code Percentiles: 50th = %d, 99th = %d, 99.9th = %d}. As Kafka's tool:
   * the latencies (whole ms) are sorted and the value at index {@code (int) (n * p)} is taken.
   *
   * @param latenciesMs one latency per record, ms; at least one; sorted in place
   */
  static String endToEndPercentiles(long[] latenciesMs) {
    Arrays.sort(latenciesMs);
    int n = latenciesMs.length;
    return String.format(Locale.ROOT, "Percentiles: 50th = %d, 99th = %d, 99.9th = %d",
        latenciesMs[(int) (n * 0.5)], latenciesMs[(int) (n * 0.99)], latenciesMs[(int) (n * 0.999)]);
  }
}
