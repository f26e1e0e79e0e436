package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The perf tools print exactly what Kafka's ProducerPerformance, ConsumerPerformance and EndToEndLatency print. */
class PerfFormatTest {

  @Test
  void producerWindowLineHasKafkasFormat() {
    // 10,000 records of 100 B in 5 s, latencies summing to 25,000 ms, max 12 ms
    assertEquals(
        "10000 records sent, 2000.0 records/sec (0.19 MB/sec), 2.5 ms avg latency, 12.0 ms max latency.",
        PerfFormat.producerWindow(10_000, 1_000_000, 5_000, 25_000, 12));
  }

  @Test
  void producerTotalLineHasKafkasFormat() {
    assertEquals(
        "2000000 records sent, 612745.098039 records/sec (58.44 MB/sec), 25.10 ms avg latency,"
            + " 301.00 ms max latency, 20 ms 50th, 60 ms 95th, 85 ms 99th, 110 ms 99.9th.",
        PerfFormat.producerTotal(2_000_000, 200_000_000, 3_264, 50_200_000, 301, new int[] {20, 60, 85, 110}));
  }

  @Test
  void consumerLinesHaveKafkasFormat() {
    assertEquals(
        "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms,"
            + " fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec",
        PerfFormat.CONSUMER_HEADER);
    // 1,000,000 records of 100 B in 2.5 s, no rebalance: 95.3674 MB
    long start = 1_764_470_096_123L; // 2025-11-30 02:34:56.123 UTC
    assertEquals(
        "2025-11-30 02:34:56:123, 2025-11-30 02:34:58:623, 95.3674, 38.1470, 1000000, 400000.0000, 0, 2500,"
            + " 38.1470, 400000.0000",
        PerfFormat.consumerLine(start, start + 2_500, 100_000_000, 1_000_000, 0, TimeZone.getTimeZone("UTC")));
  }

  @Test
  void fetchFiguresLeaveOutTheRebalanceTime() {
    assertEquals(
        "1970-01-01 00:00:00:000, 1970-01-01 00:00:04:000, 1.0000, 0.2500, 1000, 250.0000, 2000, 2000, 0.5000,"
            + " 500.0000",
        PerfFormat.consumerLine(0, 4_000, 1024 * 1024, 1_000, 2_000, TimeZone.getTimeZone("UTC")));
  }

  @Test
  void percentilesAreKafkas() {
    int[] latencies = new int[100];
    for (int i = 0; i < 100; i++) {
      latencies[i] = 100 - i; // 100 .. 1, unsorted
    }
    assertArrayEquals(
        new int[] {51, 96, 100, 100}, ProducerPerfStats.percentiles(latencies, 100, 0.5, 0.95, 0.99, 0.999));
    assertArrayEquals(new int[] {0, 0}, ProducerPerfStats.percentiles(new int[1], 0, 0.5, 0.99));
  }

  @Test
  void statsPrintAWindowEveryIntervalAndATotal() {
    AtomicLong clock = new AtomicLong(1_000);
    List<String> printed = new ArrayList<>();
    ProducerPerfStats stats = new ProducerPerfStats(4, 5_000, clock::get, printed::add);
    clock.set(2_000);
    stats.record(4, 100, clock.get());
    clock.set(3_000);
    stats.record(8, 100, clock.get());
    assertEquals(List.of(), printed);
    clock.set(6_000); // 5 s after the window started
    stats.record(6, 100, clock.get());
    assertEquals(
        List.of("3 records sent, 0.6 records/sec (0.00 MB/sec), 6.0 ms avg latency, 8.0 ms max latency."), printed);
    clock.set(7_000);
    stats.record(2, 100, clock.get());
    assertEquals(4, stats.count());
    assertEquals(
        "4 records sent, 0.666667 records/sec (0.00 MB/sec), 5.00 ms avg latency, 8.00 ms max latency,"
            + " 6 ms 50th, 8 ms 95th, 8 ms 99th, 8 ms 99.9th.",
        stats.total());
  }

  @Test
  void aRunWithoutAcknowledgedRecordsPrintsZerosNotNaN() {
    AtomicLong clock = new AtomicLong(1_000);
    ProducerPerfStats stats = new ProducerPerfStats(20, 5_000, clock::get, line -> {});
    clock.set(1_250);
    assertEquals(
        "0 records sent, 0.000000 records/sec (0.00 MB/sec), 0.00 ms avg latency, 0.00 ms max latency,"
            + " 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.",
        stats.total());
    // and within the same millisecond as the start
    assertEquals(
        "0 records sent, 0.000000 records/sec (0.00 MB/sec), 0.00 ms avg latency, 0.00 ms max latency,"
            + " 0 ms 50th, 0 ms 95th, 0 ms 99th, 0 ms 99.9th.",
        PerfFormat.producerTotal(0, 0, 0, 0, 0, new int[4]));
  }

  @Test
  void aTotalWithinOneMillisecondIsFiniteNotInfinity() {
    String line = PerfFormat.producerTotal(3, 300, 0, 6, 2, new int[] {2, 2, 2, 2});
    assertEquals("3 records sent, 3000.000000 records/sec (0.29 MB/sec), 2.00 ms avg latency, 2.00 ms max latency,"
        + " 2 ms 50th, 2 ms 95th, 2 ms 99th, 2 ms 99.9th.", line);
  }

  @Test
  void payloadIsKafkasUppercaseLettersFromSeedZero() {
    byte[] a = PerfProduceCommand.payload(1000);
    assertArrayEquals(a, PerfProduceCommand.payload(1000));
    for (byte b : a) {
      if (b < 'A' || b > 'Z') {
        throw new AssertionError("not an uppercase letter: " + b);
      }
    }
  }
  @Test
  void endToEndLinesHaveKafkasFormat() {
    assertEquals("1000\t2.345678", PerfFormat.endToEndProgress(1000, 2_345_678));
    assertEquals("0\t57.0", PerfFormat.endToEndProgress(0, 57_000_000));
    // three records of 1.5, 2.5 and 3.5 ms
    assertEquals("Avg latency: 2.5000 ms", PerfFormat.endToEndAverage(7_500_000.0, 3));
  }

  @Test
  void endToEndPercentilesAreTakenAsKafkasTool() {
    long[] latencies = new long[1000];
    for (int i = 0; i < 1000; i++) {
      latencies[i] = 1000 - i; // 1000 .. 1, unsorted
    }
    // sorted: index (int) (1000 * p) -> 501, 991, 1000
    assertEquals("Percentiles: 50th = 501, 99th = 991, 99.9th = 1000", PerfFormat.endToEndPercentiles(latencies));
    assertEquals("Percentiles: 50th = 7, 99th = 7, 99.9th = 7", PerfFormat.endToEndPercentiles(new long[] {7}));
    assertEquals("Percentiles: 50th = 9, 99th = 9, 99.9th = 9", PerfFormat.endToEndPercentiles(new long[] {9, 1}));
  }

  @Test
  void endToEndValueIsOneRepeatedUppercaseLetter() {
    byte[] v = PerfEndToEndLatencyCommand.value(new java.util.Random(0), 100);
    assertEquals(100, v.length);
    for (byte b : v) {
      assertEquals(v[0], b);
    }
    assertEquals(true, v[0] >= 'A' && v[0] <= 'Z');
  }

  @Test
  void throttleDecisionIsKafkasThroughputThrottlerFromTheFirstMillisecond() {
    PerfProduceCommand.Throttler throttler = new PerfProduceCommand.Throttler(1000, 10_000);
    assertEquals(false, throttler.shouldThrottle(1, 10_000)); // in the first ms: as if 1 ms had elapsed
    assertEquals(true, throttler.shouldThrottle(5, 10_000)); // Kafka's: never (0 ms elapsed); here 5,000/s > 1,000/s
    PerfProduceCommand.Throttler slow = new PerfProduceCommand.Throttler(2, 10_000);
    assertEquals(true, slow.shouldThrottle(1, 10_000)); // 2 records/s: the second record waits
    assertEquals(false, throttler.shouldThrottle(1000, 11_000)); // exactly on target
    assertEquals(true, throttler.shouldThrottle(1001, 11_000)); // above the average rate since the start
    assertEquals(false, throttler.shouldThrottle(1500, 12_000));
    PerfProduceCommand.Throttler unlimited = new PerfProduceCommand.Throttler(-1, 10_000);
    assertEquals(false, unlimited.shouldThrottle(1_000_000, 10_001));
  }
}
