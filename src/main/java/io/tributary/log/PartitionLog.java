package io.tributary.log;

import io.tributary.broker.TopicConfig;
import io.tributary.record.RecordBatch;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The state of one partition's log as its leader knows it: offsets, the sparse {@link OffsetIndex}, and a bounded
 * in-memory tail of the newest record batches.
 *
 * <p>Mutable on purpose (the hot path appends thousands of batches a second): it is changed only by
 * {@link PartitionLeader}'s event handler, on the leader's actor thread. Snapshots go through
 * {@link PartitionSnapshot}, an immutable copy made on that same thread. The tail is not part of snapshots; it
 * refills as new batches are appended (and during replay).
 */
public final class PartitionLog {

  /** Lifecycle of a partition. */
  public enum Status {
    /** No topic owns this partition (never created, or created and then deleted). */
    ABSENT,
    /** The partition exists and accepts appends. */
    ACTIVE
  }

  /** One batch kept in memory: its journal sequence number, offsets and bytes. */
  record TailEntry(long seqNr, long baseOffset, long lastOffset, byte[] bytes) {}

  private Status status = Status.ABSENT;
  private String topicId = "";
  private TopicConfig config;
  private long logStartOffset;
  private long logEndOffset;
  private long highWatermark;
  private int leaderEpoch;
  private long lastSeqNr;
  private long pendingDeleteToSeqNr;
  private final OffsetIndex index;
  private final ArrayDeque<TailEntry> tail = new ArrayDeque<>();
  private long tailBytes;
  private final long tailMaxBytes;
  private final int indexIntervalBytes;

  PartitionLog(int indexIntervalBytes, long tailMaxBytes) {
    this.indexIntervalBytes = indexIntervalBytes;
    this.index = new OffsetIndex(indexIntervalBytes);
    this.tailMaxBytes = tailMaxBytes;
  }

  // ------------------------------------------------------------------ event application (actor thread only)

  void applyCreated(String topicId, TopicConfig config, long seqNr) {
    this.status = Status.ACTIVE;
    this.topicId = topicId;
    this.config = config;
    this.logStartOffset = 0;
    this.logEndOffset = 0;
    this.highWatermark = 0;
    this.leaderEpoch = 0;
    this.lastSeqNr = seqNr;
    this.pendingDeleteToSeqNr = 0;
    index.clear();
    tail.clear();
    tailBytes = 0;
  }

  void applyAppended(RecordBatch batch) {
    long seqNr = ++lastSeqNr;
    index.append(batch.baseOffset(), seqNr, batch.sizeInBytes(), batch.maxTimestamp());
    logEndOffset = batch.nextOffset();
    highWatermark = logEndOffset; // single replica: everything persisted is committed
    if (tailMaxBytes > 0) {
      tail.addLast(new TailEntry(seqNr, batch.baseOffset(), batch.lastOffset(), batch.bytes()));
      tailBytes += batch.sizeInBytes();
      while (tailBytes > tailMaxBytes && tail.size() > 1) {
        tailBytes -= tail.removeFirst().bytes().length;
      }
    }
  }

  void applyLogStartAdvanced(long newLogStart, long deleteToSeqNr) {
    lastSeqNr++;
    int drop = 0;
    while (drop < index.chunkCount() && index.chunkSeqNr(drop) <= deleteToSeqNr) {
      drop++;
    }
    index.dropFirst(drop);
    logStartOffset = Math.max(logStartOffset, newLogStart);
    pendingDeleteToSeqNr = Math.max(pendingDeleteToSeqNr, deleteToSeqNr);
    while (!tail.isEmpty() && tail.peekFirst().lastOffset() < logStartOffset) {
      tailBytes -= tail.removeFirst().bytes().length;
    }
  }

  void applyDeleted() {
    lastSeqNr++;
    status = Status.ABSENT;
    topicId = "";
    config = null;
    index.clear();
    tail.clear();
    tailBytes = 0;
    logStartOffset = 0;
    logEndOffset = 0;
    highWatermark = 0;
  }

  void applySnapshot(PartitionSnapshot s) {
    status = s.status();
    topicId = s.topicId();
    config = s.config();
    logStartOffset = s.logStartOffset();
    logEndOffset = s.logEndOffset();
    highWatermark = s.highWatermark();
    leaderEpoch = s.leaderEpoch();
    lastSeqNr = s.lastSeqNr();
    pendingDeleteToSeqNr = s.pendingDeleteToSeqNr();
    index.clear();
    for (int i = 0; i < s.chunkBaseOffsets().length; i++) {
      index.restoreChunk(s.chunkBaseOffsets()[i], s.chunkSeqNrs()[i], s.chunkBytes()[i], s.chunkMaxTimestamps()[i]);
    }
    tail.clear();
    tailBytes = 0;
  }

  /** An immutable copy for a snapshot. */
  PartitionSnapshot toSnapshot() {
    int n = index.chunkCount();
    long[] bo = new long[n];
    long[] sq = new long[n];
    long[] by = new long[n];
    long[] ts = new long[n];
    for (int i = 0; i < n; i++) {
      bo[i] = index.chunkBaseOffset(i);
      sq[i] = index.chunkSeqNr(i);
      by[i] = index.chunkBytes(i);
      ts[i] = index.chunkMaxTimestamp(i);
    }
    return new PartitionSnapshot(status, topicId, config, logStartOffset, logEndOffset, highWatermark, leaderEpoch,
        lastSeqNr, pendingDeleteToSeqNr, bo, sq, by, ts);
  }

  // ------------------------------------------------------------------ queries

  public Status status() {
    return status;
  }

  public boolean isActive() {
    return status == Status.ACTIVE;
  }

  public String topicId() {
    return topicId;
  }

  public TopicConfig config() {
    return config;
  }

  public long logStartOffset() {
    return logStartOffset;
  }

  public long logEndOffset() {
    return logEndOffset;
  }

  public long highWatermark() {
    return highWatermark;
  }

  public int leaderEpoch() {
    return leaderEpoch;
  }

  /** Sequence number of the last journal event applied. */
  public long lastSeqNr() {
    return lastSeqNr;
  }

  /** The journal may delete events up to this sequence number once a snapshot covers it. */
  public long pendingDeleteToSeqNr() {
    return pendingDeleteToSeqNr;
  }

  OffsetIndex index() {
    return index;
  }

  int indexIntervalBytes() {
    return indexIntervalBytes;
  }

  /** Bytes of batches retained in the log. */
  public long sizeInBytes() {
    return index.totalBytes();
  }

  /** The lowest offset the in-memory tail can serve, or {@link Long#MAX_VALUE} if the tail is empty. */
  long tailStartOffset() {
    TailEntry first = tail.peekFirst();
    return first == null ? Long.MAX_VALUE : first.baseOffset();
  }

  /**
   * Batches from the tail holding offsets at or after {@code fetchOffset} and below the high watermark, up to
   * {@code maxBytes} (the first batch always goes). Call only when {@code fetchOffset >= tailStartOffset()}.
   */
  List<byte[]> readTail(long fetchOffset, int maxBytes) {
    // consumers at the head read the newest entries: count back from the end the batches still needed
    Iterator<TailEntry> back = tail.descendingIterator();
    int skipFromEnd = 0;
    while (back.hasNext() && back.next().lastOffset() >= fetchOffset) {
      skipFromEnd++;
    }
    List<byte[]> out = new ArrayList<>(Math.min(skipFromEnd, 64));
    int start = tail.size() - skipFromEnd;
    int i = 0;
    long total = 0;
    for (TailEntry e : tail) {
      if (i++ < start) {
        continue;
      }
      if (e.baseOffset() >= highWatermark) {
        break;
      }
      if (!out.isEmpty() && total + e.bytes().length > maxBytes) {
        break;
      }
      out.add(e.bytes());
      total += e.bytes().length;
    }
    return out;
  }

  /** Batches of the tail, oldest first (for timestamp lookups). */
  Iterable<TailEntry> tailEntries() {
    return tail;
  }
}
