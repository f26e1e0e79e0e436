package io.tributary.cli;

import io.tributary.record.Murmur2;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Checks that a round trip through the broker delivered every line of a {@link QuickstartInput} exactly once. Each
 * line was sent as one record keyed by its line number (decimal ASCII); the verifier is told what the producer's acks
 * said ({@link #acked}) and what the consumer read ({@link #consumed}), in any interleaving, and {@link #finish}
 * reports:
 *
 * <ul>
 *   <li><b>missing</b>: a line never consumed; <b>duplicated</b>: a line consumed more than once (extra copies);
 *   <li><b>out of order</b>: within a partition, a line number not above the previous one (the producer sent them in
 *       line order, and one producer's records to one partition keep their send order);
 *   <li><b>corrupted</b>: a value whose bytes differ from the line's;
 *   <li><b>misplaced</b>: a record in another partition than Kafka's key partitioner picks
 *       ({@code toPositive(murmur2(key)) % partitions}), or at another partition/offset than its ack reported;
 *   <li><b>unexpected</b>: a record whose key is not a line number of the input;
 *   <li><b>unacknowledged</b>: a line the producer never got an ack for.
 * </ul>
 *
 * <p>Pure (no I/O, no clock), so tests can feed it any story. Thread-safe: acks and records may arrive on different
 * threads.
 */
final class QuickstartVerifier {
  /** How many problems are described one by one; the rest are only counted. */
  static final int MAX_EXAMPLES = 10;

  private final QuickstartInput input;
  private final int partitions;
  private final int[] ackedPartition;
  private final long[] ackedOffset;
  private final int[] seen;
  private final int[] consumedPartition;
  private final long[] consumedOffset;
  private final int[] lastLine;
  private final long[] perPartition;
  private final List<String> examples = new ArrayList<>();
  private long consumed;
  private long duplicated;
  private long outOfOrder;
  private long corrupted;
  private long misplaced;
  private long unexpected;

  QuickstartVerifier(QuickstartInput input, int partitions) {
    this.input = input;
    this.partitions = partitions;
    int n = input.lines();
    ackedPartition = new int[n + 1];
    Arrays.fill(ackedPartition, -1);
    ackedOffset = new long[n + 1];
    seen = new int[n + 1];
    consumedPartition = new int[n + 1];
    consumedOffset = new long[n + 1];
    lastLine = new int[partitions];
    perPartition = new long[partitions];
  }

  /** The producer's ack for line {@code lineNumber}: where the broker stored it. */
  synchronized void acked(int lineNumber, int partition, long offset) {
    ackedPartition[lineNumber] = partition;
    ackedOffset[lineNumber] = offset;
  }

  /** A record the consumer read; records of one partition must be passed in the order the consumer returned them. */
  synchronized void consumed(byte[] key, int partition, long offset, byte[] value) {
    consumed++;
    if (partition >= 0 && partition < partitions) {
      perPartition[partition]++;
    }
    int line = lineNumber(key);
    if (line < 1 || partition < 0 || partition >= partitions) {
      unexpected++;
      example("unexpected record at partition " + partition + " offset " + offset + " with key "
          + (key == null ? "null" : "'" + new String(key, StandardCharsets.UTF_8) + "'"));
      return;
    }
    if (seen[line]++ > 0) {
      duplicated++;
      example("line " + line + " consumed again at partition " + partition + " offset " + offset
          + " (first at partition " + consumedPartition[line] + " offset " + consumedOffset[line] + ")");
      return;
    }
    consumedPartition[line] = partition;
    consumedOffset[line] = offset;
    if (line <= lastLine[partition]) {
      outOfOrder++;
      example("line " + line + " at partition " + partition + " offset " + offset + " came after line "
          + lastLine[partition]);
    }
    lastLine[partition] = Math.max(lastLine[partition], line);
    if (!input.lineEquals(line, value)) {
      corrupted++;
      example("line " + line + " at partition " + partition + " offset " + offset + " differs from the input: "
          + (value == null ? "null value" : value.length + " bytes instead of " + input.line(line).length));
    }
    int expected = Murmur2.partitionForKey(key, partitions);
    if (partition != expected) {
      misplaced++;
      example("line " + line + " is in partition " + partition + ", but its key hashes to partition " + expected);
    }
  }

  /** The verdict once the consumer has read everything it will read. Does not change the state. */
  synchronized Report finish() {
    List<String> found = new ArrayList<>(examples);
    long missing = 0;
    long unacknowledged = 0;
    long misplacedTotal = misplaced;
    for (int line = 1; line <= input.lines(); line++) {
      if (ackedPartition[line] < 0) {
        unacknowledged++;
        example(found, "line " + line + " was never acknowledged by the producer");
      }
      if (seen[line] == 0) {
        missing++;
        example(found, "line " + line + " is missing");
      } else if (ackedPartition[line] >= 0
          && (ackedPartition[line] != consumedPartition[line] || ackedOffset[line] != consumedOffset[line])) {
        misplacedTotal++;
        example(found, "line " + line + " was acknowledged at partition " + ackedPartition[line] + " offset "
            + ackedOffset[line] + " but read at partition " + consumedPartition[line] + " offset "
            + consumedOffset[line]);
      }
    }
    return new Report(input.lines(), consumed, missing, duplicated, outOfOrder, corrupted, misplacedTotal,
        unexpected, unacknowledged, perPartition.clone(), List.copyOf(found));
  }

  private void example(String problem) {
    example(examples, problem);
  }

  private static void example(List<String> list, String problem) {
    if (list.size() < MAX_EXAMPLES) {
      list.add(problem);
    }
  }

  /** The line number a key names, or -1 if it names none of the input's lines. */
  private int lineNumber(byte[] key) {
    if (key == null || key.length == 0 || key.length > 10 || key[0] == '0') {
      return -1;
    }
    long n = 0;
    for (byte b : key) {
      if (b < '0' || b > '9') {
        return -1;
      }
      n = n * 10 + (b - '0');
    }
    return n <= input.lines() ? (int) n : -1;
  }

  /**
   * The verdict.
   *
   * @param lines lines in the input
   * @param consumed records consumed
   * @param perPartition records consumed per partition
   * @param examples the first {@value #MAX_EXAMPLES} problems, described
   */
  record Report(
      long lines,
      long consumed,
      long missing,
      long duplicated,
      long outOfOrder,
      long corrupted,
      long misplaced,
      long unexpected,
      long unacknowledged,
      long[] perPartition,
      List<String> examples) {

    /** Whether every line arrived exactly once, intact, in order, where its ack said. */
    boolean ok() {
      return missing + duplicated + outOfOrder + corrupted + misplaced + unexpected + unacknowledged == 0
          && consumed == lines;
    }

    /** One line naming each kind of problem with its count, e.g. {@code 2 missing, 1 duplicated}. */
    String problems() {
      List<String> parts = new ArrayList<>();
      add(parts, missing, "missing");
      add(parts, duplicated, "duplicated");
      add(parts, outOfOrder, "out of order");
      add(parts, corrupted, "corrupted");
      add(parts, misplaced, "misplaced");
      add(parts, unexpected, "unexpected");
      add(parts, unacknowledged, "unacknowledged");
      return parts.isEmpty() ? "no problems" : String.join(", ", parts);
    }

    private static void add(List<String> parts, long count, String what) {
      if (count > 0) {
        parts.add(count + " " + what);
      }
    }
  }
}
