package io.tributary.cli.chaos;

import io.tributary.client.TributaryException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The book of a chaos run (or a failover test): what producers sent and had acknowledged, what readers read, and the
 * verdict, with the invariants of Jepsen's checker for Kafka-like logs.
 *
 * <p>Every record's value names its producer and that producer's sequence number, {@code p<producer>-<seq>} (see
 * {@link #value}); sequences of one producer start at 0 and grow by one per {@code send()}. From that:
 *
 * <ul>
 *   <li><b>acknowledged</b>: records whose {@code send()} future completed successfully ({@link #acknowledged}).
 *   <li><b>lost</b>: acknowledged but never read, at any offset.
 *   <li><b>duplicated</b>: a record (producer and sequence) read at two or more offsets (reading one offset again is
 *       not a duplicate). Counted once per record.
 *   <li><b>reordered</b>: within one partition, for one producer, a record at a higher offset than a record of the
 *       same producer with a higher sequence. Counted once per record, at its first offset.
 *   <li><b>divergent</b>: two different values read at one offset (two readers, or one reader twice).
 *   <li><b>misplaced</b>: an acknowledged record read, but never at the partition and offset it was acknowledged with.
 *   <li><b>skipped / rewound</b>: a reader's consecutive records of one partition whose offsets are not consecutive
 *       (offsets are dense), or go back.
 *   <li><b>foreign</b>: a value read that is not of this ledger's format.
 * </ul>
 *
 * <p>{@link Result#ok()} holds when something was acknowledged and every count above is zero. Records whose send
 * failed (or was never answered) may or may not be in the log, as with any Kafka producer: they count neither as lost
 * nor as wrong when read, but they take part in the duplicate, order and divergence checks.
 *
 * <p>This class is thread-safe: producers' callbacks and readers may call it concurrently. Memory is a few dozen bytes
 * per record.
 */
public final class Ledger {
  /** Sequences are below 2^40 (a trillion records per producer), producers below 2^23. */
  private static final int SEQ_BITS = 40;

  /** A partition and offset. */
  public record Position(int partition, long offset) {
    @Override
    public String toString() {
      return partition + "@" + offset;
    }
  }

  /** A record's identity: its producer and sequence number. */
  public record Entry(int producer, long seq) {
    long key() {
      return ((long) producer << SEQ_BITS) | seq;
    }

    @Override
    public String toString() {
      return value(producer, seq);
    }
  }

  private final StallMeter stalls;
  private long sent;
  private final Map<Long, Position> acked = new HashMap<>();
  private final Map<String, Long> failures = new TreeMap<>();
  private long failed;
  /** partition → offset → the first value's entry read there. */
  private final Map<Integer, TreeMap<Long, Entry>> log = new TreeMap<>();
  /** record → the first position it was read at. */
  private final Map<Long, Position> firstRead = new HashMap<>();
  /** record → further distinct positions it was read at (only for duplicates). */
  private final Map<Long, List<Position>> moreReads = new HashMap<>();
  private long recordsRead;
  private long divergent;
  private long foreign;
  private long skipped;
  private long rewound;
  private final List<String> examples = new ArrayList<>();

  /**
   * The value of record {@code seq} of producer {@code producer}: {@code p<producer>-<seq>}.
   *
   * @throws IllegalArgumentException if either is negative or out of range
   */
  public static String value(int producer, long seq) {
    if (producer < 0 || producer >= (1 << 23) || seq < 0 || seq >= (1L << SEQ_BITS)) {
      throw new IllegalArgumentException("producer " + producer + " / seq " + seq + " out of range");
    }
    return "p" + producer + "-" + seq;
  }

  /** The entry of a value made by {@link #value}, or null if {@code value} is not of that format. */
  public static Entry parse(String value) {
    if (value == null || value.length() < 4 || value.charAt(0) != 'p') {
      return null;
    }
    int dash = value.indexOf('-');
    if (dash < 2) {
      return null;
    }
    try {
      int producer = Integer.parseInt(value, 1, dash, 10);
      long seq = Long.parseLong(value, dash + 1, value.length(), 10);
      if (producer < 0 || producer >= (1 << 23) || seq < 0 || seq >= (1L << SEQ_BITS)) {
        return null;
      }
      return new Entry(producer, seq);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  public Ledger() {
    this(new StallMeter());
  }

  /** A ledger whose acknowledgements also go to {@code stalls}. */
  public Ledger(StallMeter stalls) {
    this.stalls = stalls;
  }

  /** The times without acknowledgements (start and stop it with the producers). */
  public StallMeter stalls() {
    return stalls;
  }

  /** A record was handed to {@code send()}. */
  public synchronized void sent(int producer, long seq) {
    sent++;
  }

  /** Record {@code seq} of {@code producer} was acknowledged at {@code partition}@{@code offset}. */
  public synchronized void acknowledged(int producer, long seq, int partition, long offset) {
    stalls.acknowledged();
    Position before = acked.put(new Entry(producer, seq).key(), new Position(partition, offset));
    if (before != null) {
      example("record " + value(producer, seq) + " acknowledged twice (" + before + ", " + partition + "@" + offset
          + ")");
    }
  }

  /** Record {@code seq} of {@code producer} failed (its future completed exceptionally, or send threw). */
  public synchronized void failed(int producer, long seq, Throwable error) {
    failed++;
    failures.merge(errorName(error), 1L, Long::sum);
  }

  /** The error code of a {@link TributaryException} (unwrapped), else the exception's class name. */
  public static String errorName(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof TributaryException te ? te.errorCode().name() : t.getClass().getSimpleName();
  }

  /**
   * A reader: one consumer's stream of records, checked for continuity per partition (offsets dense and rising from
   * the first one it reads). Not thread-safe: one reader per consumer thread.
   */
  public final class Reader {
    private final String name;
    private final Map<Integer, Long> next = new HashMap<>();

    private Reader(String name) {
      this.name = name;
    }

    /** The reader was moved on purpose (seek): its next record of {@code partition} may be at any offset. */
    public void reposition(int partition) {
      next.remove(partition);
    }

    /** The reader read {@code value} at {@code partition}@{@code offset}. */
    public void read(int partition, long offset, String value) {
      Long expected = next.get(partition);
      synchronized (Ledger.this) {
        if (expected != null && offset != expected) {
          if (offset > expected) {
            skipped++;
            example(name + " skipped from " + partition + "@" + expected + " to offset " + offset);
          } else {
            rewound++;
            example(name + " went back from " + partition + "@" + expected + " to offset " + offset);
          }
        }
        record(partition, offset, value);
      }
      next.put(partition, offset + 1);
    }

    /** The next offset this reader expects in {@code partition}, if it has read any. */
    public Long nextOffset(int partition) {
      return next.get(partition);
    }
  }

  /** A new reader named {@code name} (for messages). */
  public Reader reader(String name) {
    return new Reader(name);
  }

  private void record(int partition, long offset, String value) {
    recordsRead++;
    Entry e = parse(value);
    if (e == null) {
      foreign++;
      example("foreign value at " + partition + "@" + offset + ": " + abbreviate(value));
      return;
    }
    Entry there = log.computeIfAbsent(partition, p -> new TreeMap<>()).putIfAbsent(offset, e);
    if (there != null) {
      if (!there.equals(e)) {
        divergent++;
        example("two values at " + partition + "@" + offset + ": " + there + " and " + e);
      }
      return;
    }
    Position at = new Position(partition, offset);
    Position first = firstRead.putIfAbsent(e.key(), at);
    if (first != null && !first.equals(at)) {
      List<Position> more = moreReads.computeIfAbsent(e.key(), k -> new ArrayList<>());
      if (!more.contains(at)) {
        more.add(at);
        example("record " + e + " read at " + first + " and at " + at);
      }
    }
  }

  /** Whether every acknowledged record has been read (at some offset). */
  public synchronized boolean allAcknowledgedRead() {
    return unreadAcknowledged() == 0;
  }

  /** The number of acknowledged records not read yet. */
  public synchronized long unreadAcknowledged() {
    long n = 0;
    for (Long k : acked.keySet()) {
      if (!firstRead.containsKey(k)) {
        n++;
      }
    }
    return n;
  }

  /** Counts so far, cheap enough for progress lines: sent, acknowledged, failed, records read. */
  public synchronized String progress() {
    return "sent " + sent + ", acknowledged " + acked.size() + ", failed " + failed + ", read " + recordsRead;
  }

  /** The verdict now. */
  public synchronized Result result() {
    List<String> found = new ArrayList<>(examples);
    long lost = 0;
    long misplaced = 0;
    for (Map.Entry<Long, Position> a : acked.entrySet()) {
      Position first = firstRead.get(a.getKey());
      if (first == null) {
        lost++;
        if (lost <= 5) {
          example(found, "lost: " + entryOf(a.getKey()) + " acknowledged at " + a.getValue());
        }
      } else if (!first.equals(a.getValue())
          && !moreReads.getOrDefault(a.getKey(), List.of()).contains(a.getValue())) {
        misplaced++;
        example(found, "misplaced: " + entryOf(a.getKey()) + " acknowledged at " + a.getValue() + ", read at " + first);
      }
    }
    long reordered = 0;
    for (Map.Entry<Integer, TreeMap<Long, Entry>> p : log.entrySet()) {
      Map<Integer, Long> maxSeq = new HashMap<>();
      for (Map.Entry<Long, Entry> r : p.getValue().entrySet()) {
        Entry e = r.getValue();
        if (!new Position(p.getKey(), r.getKey()).equals(firstRead.get(e.key()))) {
          continue; // a duplicate's later copy: counted as duplicated, not again as reordered
        }
        Long max = maxSeq.get(e.producer());
        if (max != null && e.seq() < max) {
          reordered++;
          example(found, "reordered: " + e + " at " + p.getKey() + "@" + r.getKey() + " after " + value(e.producer(), max));
        } else {
          maxSeq.put(e.producer(), e.seq());
        }
      }
    }
    long readUnacknowledged = 0;
    for (Long k : firstRead.keySet()) {
      if (!acked.containsKey(k)) {
        readUnacknowledged++;
      }
    }
    return new Result(sent, acked.size(), failed, new TreeMap<>(failures), lost, moreReads.size(), reordered,
        divergent, misplaced, skipped, rewound, foreign, recordsRead, readUnacknowledged, List.copyOf(found));
  }

  /**
   * A verdict.
   *
   * @param sent records handed to {@code send()}
   * @param acknowledged records acknowledged
   * @param failed records whose send failed
   * @param failures failed sends by error code
   * @param lost acknowledged, never read
   * @param duplicated records read at more than one offset
   * @param reordered records after a higher sequence of the same producer in their partition
   * @param divergent offsets where two different values were read
   * @param misplaced acknowledged records read only at other positions than acknowledged
   * @param skipped gaps in a reader's stream of a partition
   * @param rewound steps back in a reader's stream of a partition
   * @param foreign values not of the ledger's format
   * @param recordsRead records read (all readers, re-reads included)
   * @param readUnacknowledged distinct records read whose send was not acknowledged (allowed)
   * @param examples the first few anomalies, described
   */
  public record Result(long sent, long acknowledged, long failed, Map<String, Long> failures, long lost,
      long duplicated, long reordered, long divergent, long misplaced, long skipped, long rewound, long foreign,
      long recordsRead, long readUnacknowledged, List<String> examples) {
    /** {@code acknowledged N, lost L, duplicated D, reordered R}: the one result line of {@code tributary chaos}. */
    public String line() {
      return "acknowledged " + acknowledged + ", lost " + lost + ", duplicated " + duplicated + ", reordered "
          + reordered;
    }

    /** Something was acknowledged and no invariant was broken. */
    public boolean ok() {
      return acknowledged > 0 && lost == 0 && duplicated == 0 && reordered == 0 && divergent == 0 && misplaced == 0
          && skipped == 0 && rewound == 0 && foreign == 0;
    }

    /** Everything else, on a few lines, for people (stderr, assertion messages). */
    public String details() {
      StringBuilder sb = new StringBuilder();
      sb.append("sent ").append(sent).append(", acknowledged ").append(acknowledged).append(", failed ")
          .append(failed).append(failures.isEmpty() ? "" : " " + failures).append('\n');
      sb.append("read ").append(recordsRead).append(" records (").append(readUnacknowledged)
          .append(" distinct ones whose send was not acknowledged)\n");
      sb.append("lost ").append(lost).append(", duplicated ").append(duplicated).append(", reordered ")
          .append(reordered).append(", divergent offsets ").append(divergent).append(", misplaced ")
          .append(misplaced).append(", reader gaps ").append(skipped).append(", reader rewinds ").append(rewound)
          .append(", foreign values ").append(foreign);
      for (String e : examples) {
        sb.append("\n  ").append(e);
      }
      return sb.toString();
    }
  }

  private static Entry entryOf(long key) {
    return new Entry((int) (key >>> SEQ_BITS), key & ((1L << SEQ_BITS) - 1));
  }

  private void example(String what) {
    example(examples, what);
  }

  private static void example(List<String> list, String what) {
    if (list.size() < 20) {
      list.add(what);
    }
  }

  private static String abbreviate(String s) {
    return s == null ? "null" : s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
