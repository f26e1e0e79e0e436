package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.record.Murmur2;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The quickstart's verifier, fed with round trips that went right and wrong. The input is the first 300 lines of the
 * bundled data set; "the broker" is simulated by placing each line where Kafka's key partitioner puts it.
 */
class QuickstartVerifierTest {
  static final int PARTITIONS = 3;
  static final int LINES = 300;

  QuickstartInput input;
  /** Per line: its partition and offset, as a correct broker would store them. */
  int[] partition;
  long[] offset;

  @BeforeEach
  void placeLines() {
    input = QuickstartInput.of("kjv-300", bundledPrefix(LINES));
    assertEquals(LINES, input.lines());
    partition = new int[LINES + 1];
    offset = new long[LINES + 1];
    long[] next = new long[PARTITIONS];
    for (int line = 1; line <= LINES; line++) {
      partition[line] = Murmur2.partitionForKey(key(line), PARTITIONS);
      offset[line] = next[partition[line]]++;
    }
  }

  static byte[] bundledPrefix(int lines) {
    QuickstartInput bundled = QuickstartInput.bundled();
    StringBuilder b = new StringBuilder();
    for (int line = 1; line <= lines; line++) {
      b.append(new String(bundled.line(line), StandardCharsets.US_ASCII)).append('\n');
    }
    return b.toString().getBytes(StandardCharsets.US_ASCII);
  }

  static byte[] key(int line) {
    return Integer.toString(line).getBytes(StandardCharsets.US_ASCII);
  }

  QuickstartVerifier ackedAll() {
    QuickstartVerifier v = new QuickstartVerifier(input, PARTITIONS);
    for (int line = 1; line <= LINES; line++) {
      v.acked(line, partition[line], offset[line]);
    }
    return v;
  }

  /** Consumes every line in order (partition by partition), skipping {@code skip}. */
  void consumeAll(QuickstartVerifier v, int skip) {
    for (int p = 0; p < PARTITIONS; p++) {
      for (int line = 1; line <= LINES; line++) {
        if (partition[line] == p && line != skip) {
          v.consumed(key(line), p, offset[line], input.line(line));
        }
      }
    }
  }

  @Test
  void aCompleteRoundTripPasses() {
    QuickstartVerifier v = ackedAll();
    consumeAll(v, -1);
    QuickstartVerifier.Report r = v.finish();
    assertTrue(r.ok(), r.problems() + " " + r.examples());
    assertEquals(LINES, r.consumed());
    assertEquals(LINES, Arrays.stream(r.perPartition()).sum());
    assertEquals("no problems", r.problems());
  }

  @Test
  void acksMayArriveAfterTheRecordsAreConsumed() {
    QuickstartVerifier v = new QuickstartVerifier(input, PARTITIONS);
    consumeAll(v, -1);
    for (int line = 1; line <= LINES; line++) {
      v.acked(line, partition[line], offset[line]);
    }
    assertTrue(v.finish().ok());
  }

  @Test
  void aMissingLineFails() {
    QuickstartVerifier v = ackedAll();
    consumeAll(v, 42);
    QuickstartVerifier.Report r = v.finish();
    assertFalse(r.ok());
    assertEquals(1, r.missing());
    assertEquals("1 missing", r.problems());
    assertEquals(java.util.List.of("line 42 is missing"), r.examples());
  }

  @Test
  void aDuplicatedLineFails() {
    QuickstartVerifier v = ackedAll();
    consumeAll(v, -1);
    v.consumed(key(7), partition[7], 999, input.line(7));
    QuickstartVerifier.Report r = v.finish();
    assertFalse(r.ok());
    assertEquals(1, r.duplicated());
    assertEquals(0, r.missing());
    assertTrue(r.examples().get(0).startsWith("line 7 consumed again"), r.examples().toString());
  }

  @Test
  void linesOutOfOrderWithinAPartitionFail() {
    QuickstartVerifier v = ackedAll();
    int p = partition[1];
    int later = 2;
    while (partition[later] != p) {
      later++;
    }
    // the later line first, then line 1, in the same partition
    v.consumed(key(later), p, offset[later], input.line(later));
    v.consumed(key(1), p, offset[1], input.line(1));
    QuickstartVerifier.Report r = v.finish();
    assertEquals(1, r.outOfOrder());
    assertFalse(r.ok());
  }

  @Test
  void interleavingAcrossPartitionsIsFine() {
    QuickstartVerifier v = ackedAll();
    // round robin over the partitions, last partition first: line numbers jump back and forth overall,
    // but ascend within each partition
    int[] cursor = new int[PARTITIONS];
    Arrays.fill(cursor, 1);
    boolean progress = true;
    while (progress) {
      progress = false;
      for (int p = PARTITIONS - 1; p >= 0; p--) {
        while (cursor[p] <= LINES && partition[cursor[p]] != p) {
          cursor[p]++;
        }
        if (cursor[p] <= LINES) {
          int line = cursor[p]++;
          v.consumed(key(line), p, offset[line], input.line(line));
          progress = true;
        }
      }
    }
    assertTrue(v.finish().ok());
  }

  @Test
  void anAlteredValueFails() {
    QuickstartVerifier v = ackedAll();
    for (int line = 1; line <= LINES; line++) {
      byte[] value = input.line(line);
      if (line == 100) {
        value[0] ^= 1; // one bit flipped
      }
      if (line == 101) {
        value = Arrays.copyOf(value, value.length - 1); // truncated
      }
      v.consumed(key(line), partition[line], offset[line], value);
    }
    QuickstartVerifier.Report r = v.finish();
    assertEquals(2, r.corrupted());
    assertFalse(r.ok());
  }

  @Test
  void aRecordInAnotherPartitionThanItsKeyHashesToFails() {
    QuickstartVerifier v = new QuickstartVerifier(input, PARTITIONS);
    for (int line = 1; line <= LINES; line++) {
      int p = line == 5 ? (partition[line] + 1) % PARTITIONS : partition[line];
      v.acked(line, p, offset[line]);
      v.consumed(key(line), p, offset[line], input.line(line));
    }
    QuickstartVerifier.Report r = v.finish();
    assertEquals(1, r.misplaced());
    assertFalse(r.ok());
  }

  @Test
  void aRecordAtAnotherOffsetThanItsAckFails() {
    QuickstartVerifier v = ackedAll();
    v.acked(9, partition[9], offset[9] + 1);
    consumeAll(v, -1);
    QuickstartVerifier.Report r = v.finish();
    assertEquals(1, r.misplaced());
    assertFalse(r.ok());
  }

  @Test
  void anUnacknowledgedLineFails() {
    QuickstartVerifier v = new QuickstartVerifier(input, PARTITIONS);
    for (int line = 2; line <= LINES; line++) {
      v.acked(line, partition[line], offset[line]);
    }
    consumeAll(v, -1);
    QuickstartVerifier.Report r = v.finish();
    assertEquals(1, r.unacknowledged());
    assertFalse(r.ok());
  }

  @Test
  void foreignRecordsFail() {
    QuickstartVerifier v = ackedAll();
    consumeAll(v, -1);
    v.consumed(null, 0, 500, new byte[0]);
    v.consumed(key(LINES + 1), 0, 501, new byte[0]);
    v.consumed("007".getBytes(StandardCharsets.US_ASCII), 0, 502, new byte[0]);
    v.consumed(key(1), PARTITIONS, 0, input.line(1));
    QuickstartVerifier.Report r = v.finish();
    assertEquals(4, r.unexpected());
    assertFalse(r.ok());
  }

  @Test
  void finishCanBeAskedTwice() {
    QuickstartVerifier v = ackedAll();
    consumeAll(v, 3);
    assertEquals(v.finish().problems(), v.finish().problems());
    assertEquals(v.finish().examples(), v.finish().examples());
  }

  @Test
  void inputLinesAreTheBytesBetweenNewlines() {
    QuickstartInput in = QuickstartInput.of("t", "a\r\n\nbc\nlast".getBytes(StandardCharsets.US_ASCII));
    assertEquals(4, in.lines());
    assertArrayEquals("a\r".getBytes(StandardCharsets.US_ASCII), in.line(1));
    assertArrayEquals(new byte[0], in.line(2));
    assertArrayEquals("bc".getBytes(StandardCharsets.US_ASCII), in.line(3));
    assertArrayEquals("last".getBytes(StandardCharsets.US_ASCII), in.line(4));
    assertEquals(8, in.lineBytes());
    assertTrue(in.lineEquals(3, "bc".getBytes(StandardCharsets.US_ASCII)));
    assertFalse(in.lineEquals(3, "bd".getBytes(StandardCharsets.US_ASCII)));
    assertFalse(in.lineEquals(3, null));
    assertEquals(2, QuickstartInput.of("t", "x\ny\n".getBytes(StandardCharsets.US_ASCII)).lines());
    assertEquals(0, QuickstartInput.of("t", new byte[0]).lines());
  }

  @Test
  void theBundledDataSetIsTheWholeKingJamesBible() {
    QuickstartInput kjv = QuickstartInput.bundled();
    assertEquals(31_102, kjv.lines());
    assertTrue(kjv.lineBytes() > 1024 * 1024);
    assertEquals("Ge1:1 In the beginning God created the heaven and the earth.",
        new String(kjv.line(1), StandardCharsets.US_ASCII));
    assertEquals("Rev22:21 The grace of our Lord Jesus Christ be with you all. Amen.",
        new String(kjv.line(31_102), StandardCharsets.US_ASCII));
  }
}
