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
  private final TailBudget tailBudget;
  private final int indexIntervalBytes;
  /** Leader epoch cache, as Kafka's leader-epoch-checkpoint: (epoch, first offset written in it), ascending. */
  private final List<EpochEntry> epochs = new ArrayList<>();
  /** Truncations of the log suffix: batches journaled before {@code atSeqNr} with offsets from {@code offset} are dead. */
  private final List<Truncation> truncations = new ArrayList<>();
  private ProducerStateTable producers = new ProducerStateTable();

  /** One entry of the leader epoch cache. */
  public record EpochEntry(int epoch, long startOffset) {}

  /**
   * A truncation of the log: every batch journaled at a sequence number below {@code atSeqNr} whose base offset is at
   * or above {@code offset} was discarded (the journal is append-only, so readers skip them).
   */
  public record Truncation(long offset, long atSeqNr) {}

  /** A log whose tail has no node-wide budget (tests of one partition). */
  PartitionLog(int indexIntervalBytes, long tailMaxBytes) {
    this(indexIntervalBytes, tailMaxBytes, TailBudget.unlimited());
  }

  /**
   * @param tailMaxBytes the most bytes of batches the in-memory tail keeps ({@code tributary.log.tail-max-bytes})
   * @param tailBudget the node's budget for all tails, which this log reports every change of its tail to
   */
  PartitionLog(int indexIntervalBytes, long tailMaxBytes, TailBudget tailBudget) {
    this.indexIntervalBytes = indexIntervalBytes;
    this.index = new OffsetIndex(indexIntervalBytes);
    this.tailMaxBytes = tailMaxBytes;
    this.tailBudget = tailBudget;
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
    dropTail();
    epochs.clear();
    truncations.clear();
    producers = new ProducerStateTable();
  }

  void applyAppended(RecordBatch batch) {
    long seqNr = ++lastSeqNr;
    index.append(batch.baseOffset(), seqNr, batch.sizeInBytes(), batch.maxTimestamp());
    logEndOffset = batch.nextOffset();
    int epoch = batch.partitionLeaderEpoch();
    if (epochs.isEmpty() || epochs.get(epochs.size() - 1).epoch() < epoch) {
      epochs.add(new EpochEntry(epoch, batch.baseOffset()));
      leaderEpoch = epoch;
    }
    if (batch.producerId() >= 0) {
      producers.onAppended(batch.producerId(), batch.producerEpoch(), batch.baseSequence(),
          lastSequence(batch.baseSequence(), (int) (batch.lastOffset() - batch.baseOffset())),
          batch.baseOffset(), batch.lastOffset(), batch.maxTimestamp());
    }
    if (tailMaxBytes > 0) {
      long before = tailBytes;
      TailEntry added = new TailEntry(seqNr, batch.baseOffset(), batch.lastOffset(), batch.bytes());
      tail.addLast(added);
      tailBytes += added.bytes().length;
      tailBudget.changed(before, tailBytes);
      long limit = tailBudget.limitFor(tailMaxBytes, tailBytes);
      while (tailBytes > limit && tail.size() > 1) {
        removeFirstFromTail();
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
    if (logStartOffset > logEndOffset) { // a follower that restarts from the leader's log start
      logEndOffset = logStartOffset;
      highWatermark = Math.max(highWatermark, logStartOffset);
      epochs.clear();
    }
    highWatermark = Math.max(highWatermark, logStartOffset);
    pendingDeleteToSeqNr = Math.max(pendingDeleteToSeqNr, deleteToSeqNr);
    while (!tail.isEmpty() && tail.peekFirst().lastOffset() < logStartOffset) {
      removeFirstFromTail();
    }
  }

  /**
   * Discards the log suffix from {@code offset} (a follower whose log diverged from its leader's). {@code offset} is a
   * batch boundary. The truncation event itself has the next sequence number.
   */
  void applyTruncated(long offset) {
    long atSeqNr = ++lastSeqNr;
    if (offset >= logEndOffset) {
      return;
    }
    truncations.add(new Truncation(offset, atSeqNr));
    int keep = index.chunkCount();
    while (keep > 0 && index.chunkBaseOffset(keep - 1) >= offset) {
      keep--;
    }
    index.dropLast(index.chunkCount() - keep);
    long before = tailBytes;
    while (!tail.isEmpty() && tail.peekLast().baseOffset() >= offset) {
      tailBytes -= tail.removeLast().bytes().length;
    }
    tailBudget.changed(before, tailBytes);
    while (!epochs.isEmpty() && epochs.get(epochs.size() - 1).startOffset() >= offset) {
      epochs.remove(epochs.size() - 1);
    }
    producers.truncateTo(offset);
    logEndOffset = Math.max(offset, logStartOffset);
    highWatermark = Math.min(highWatermark, logEndOffset);
  }

  void applyDeleted() {
    lastSeqNr++;
    status = Status.ABSENT;
    topicId = "";
    config = null;
    index.clear();
    dropTail();
    logStartOffset = 0;
    logEndOffset = 0;
    highWatermark = 0;
    epochs.clear();
    truncations.clear();
    producers = new ProducerStateTable();
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
    dropTail();
    epochs.clear();
    for (int i = 0; i < s.epochNumbers().length; i++) {
      epochs.add(new EpochEntry(s.epochNumbers()[i], s.epochStartOffsets()[i]));
    }
    truncations.clear();
    for (int i = 0; i < s.truncationOffsets().length; i++) {
      truncations.add(new Truncation(s.truncationOffsets()[i], s.truncationSeqNrs()[i]));
    }
    producers = s.producerState().length == 0 ? new ProducerStateTable()
        : ProducerStateTable.fromBytes(s.producerState());
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
    int[] en = new int[epochs.size()];
    long[] es = new long[epochs.size()];
    for (int i = 0; i < en.length; i++) {
      en[i] = epochs.get(i).epoch();
      es[i] = epochs.get(i).startOffset();
    }
    // truncations below the oldest retained event no longer matter
    long oldestSeqNr = index.chunkCount() > 0 ? index.chunkSeqNr(0) : lastSeqNr;
    List<Truncation> live = new ArrayList<>();
    for (Truncation t : truncations) {
      if (t.atSeqNr() > oldestSeqNr) {
        live.add(t);
      }
    }
    long[] to = new long[live.size()];
    long[] ta = new long[live.size()];
    for (int i = 0; i < to.length; i++) {
      to[i] = live.get(i).offset();
      ta[i] = live.get(i).atSeqNr();
    }
    return new PartitionSnapshot(status, topicId, config, logStartOffset, logEndOffset, highWatermark, leaderEpoch,
        lastSeqNr, pendingDeleteToSeqNr, bo, sq, by, ts, en, es, to, ta, producers.toBytes());
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

  /**
   * The high watermark: records below it are committed (on every in-sync replica) and visible to consumers. Not
   * journaled: the leader computes it from its followers' fetch offsets ({@link #setHighWatermark}); after recovery it
   * is the value of the last snapshot, and a new leader moves it up as its followers report.
   */
  public long highWatermark() {
    return highWatermark;
  }

  /** Moves the high watermark (never beyond the log end offset). Actor thread only. */
  void setHighWatermark(long hw) {
    highWatermark = Math.max(logStartOffset, Math.min(hw, logEndOffset));
  }

  /** The leader epoch cache, oldest first (read-only view). */
  List<EpochEntry> epochs() {
    return java.util.Collections.unmodifiableList(epochs);
  }

  /** The latest epoch in the cache, or -1 if the log is empty of batches. */
  int latestEpoch() {
    return epochs.isEmpty() ? -1 : epochs.get(epochs.size() - 1).epoch();
  }

  /**
   * As Kafka's OffsetsForLeaderEpoch: the largest epoch at or below {@code epoch} in the cache and the offset where it
   * ends (the start of the next epoch, or the log end offset for the latest). {@code {-1, -1}} when the cache has no
   * epoch at or below it.
   */
  long[] endOffsetForEpoch(int epoch) {
    for (int i = epochs.size() - 1; i >= 0; i--) {
      if (epochs.get(i).epoch() <= epoch) {
        long end = i + 1 < epochs.size() ? epochs.get(i + 1).startOffset() : logEndOffset;
        return new long[] {epochs.get(i).epoch(), end};
      }
    }
    return new long[] {-1, -1};
  }

  /** The truncations a journal reader must apply (a copy). */
  List<Truncation> truncations() {
    return List.copyOf(truncations);
  }

  /** The sequence number of a batch's last record: Kafka's wrap-around at Integer.MAX_VALUE to 0. */
  static int lastSequence(int baseSequence, int lastOffsetDelta) {
    if (baseSequence < 0) {
      return -1;
    }
    return baseSequence > Integer.MAX_VALUE - lastOffsetDelta
        ? lastOffsetDelta - (Integer.MAX_VALUE - baseSequence) - 1
        : baseSequence + lastOffsetDelta;
  }

  /** The producer state (idempotence), rebuilt from the batches on every replica. */
  ProducerStateTable producers() {
    return producers;
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

  /**
   * Empties the in-memory tail (an idle partition gives its memory back); fetches then read the journal until the
   * next append starts a new tail. Not an event: the tail is a cache, never part of the replicated state. Also what
   * the partition's actor does when it stops or restarts, to give the tail's bytes back to the node's {@link
   * TailBudget}.
   */
  void dropTail() {
    tail.clear();
    tailBudget.changed(tailBytes, 0);
    tailBytes = 0;
  }

  private void removeFirstFromTail() {
    long before = tailBytes;
    tailBytes -= tail.removeFirst().bytes().length;
    tailBudget.changed(before, tailBytes);
  }

  /** Bytes of record batches in the in-memory tail. */
  long tailBytes() {
    return tailBytes;
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
    return readTail(fetchOffset, maxBytes, highWatermark);
  }

  /** As {@link #readTail(long, int)} but up to {@code limitOffset} (the log end offset for followers). */
  List<byte[]> readTail(long fetchOffset, int maxBytes, long limitOffset) {
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
      if (e.baseOffset() >= limitOffset) {
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
