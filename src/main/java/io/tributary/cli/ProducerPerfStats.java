package io.tributary.cli;

import java.util.Arrays;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Latency and throughput statistics of {@code perf produce}, as Kafka's {@code ProducerPerformance.Stats}: every
 * acknowledged record is recorded with its send → ack latency; a window line is printed when a record completes and
 * at least {@code reportingIntervalMs} passed since the window started; the total has avg/max and the 50th, 95th, 99th
 * and 99.9th percentiles over at most 500,000 sampled latencies (every {@code numRecords / 500000}-th record, as
 * Kafka). Thread-safe (acks complete on the client's threads). The clock is injected so tests can drive it.
 */
final class ProducerPerfStats {
  private final LongSupplier clockMs;
  private final Consumer<String> printer;
  private final long start;
  private final int sampling;
  private final int[] latencies;
  private final long reportingIntervalMs;
  private int index;
  private long count;
  private long bytes;
  private int maxLatency;
  private long totalLatency;
  private long windowStart;
  private long windowCount;
  private int windowMaxLatency;
  private long windowTotalLatency;
  private long windowBytes;

  ProducerPerfStats(long numRecords, long reportingIntervalMs, LongSupplier clockMs, Consumer<String> printer) {
    this.clockMs = clockMs;
    this.printer = printer;
    this.start = clockMs.getAsLong();
    this.windowStart = start;
    long n = Math.max(numRecords, 1);
    this.sampling = (int) (n / Math.min(n, 500_000));
    this.latencies = new int[(int) (n / sampling) + 1];
    this.reportingIntervalMs = reportingIntervalMs;
  }

  /** The current time of this clock, ms: a record's send time. */
  long now() {
    return clockMs.getAsLong();
  }

  /** Records an acknowledged record: its latency (ms), size (bytes) and the time of its ack (ms). */
  synchronized void record(int latencyMs, int recordBytes, long nowMs) {
    long iteration = count; // acknowledged records before this one, as Kafka's Stats.iteration
    count++;
    bytes += recordBytes;
    totalLatency += latencyMs;
    maxLatency = Math.max(maxLatency, latencyMs);
    windowCount++;
    windowBytes += recordBytes;
    windowTotalLatency += latencyMs;
    windowMaxLatency = Math.max(windowMaxLatency, latencyMs);
    if (iteration % sampling == 0 && index < latencies.length) {
      latencies[index] = latencyMs;
      index++;
    }
    if (nowMs - windowStart >= reportingIntervalMs) {
      printer.accept(PerfFormat.producerWindow(
          windowCount, windowBytes, clockMs.getAsLong() - windowStart, windowTotalLatency, windowMaxLatency));
      windowStart = clockMs.getAsLong();
      windowCount = 0;
      windowMaxLatency = 0;
      windowTotalLatency = 0;
      windowBytes = 0;
    }
  }

  /** The total line (Kafka's {@code printTotal}). */
  synchronized String total() {
    long elapsed = clockMs.getAsLong() - start;
    return PerfFormat.producerTotal(count, bytes, elapsed, totalLatency, maxLatency,
        percentiles(latencies, index, 0.5, 0.95, 0.99, 0.999));
  }

  /** Records acknowledged so far. */
  synchronized long count() {
    return count;
  }

  /** Kafka's percentile method: sort the samples, take the value at {@code (int) (size * p)}. */
  static int[] percentiles(int[] latencies, int count, double... percentiles) {
    int size = Math.min(count, latencies.length);
    int[] sorted = Arrays.copyOf(latencies, size);
    Arrays.sort(sorted);
    int[] values = new int[percentiles.length];
    for (int i = 0; i < percentiles.length; i++) {
      values[i] = size == 0 ? 0 : sorted[(int) (size * percentiles[i])];
    }
    return values;
  }
}
