package io.tributary.log;

import java.util.Arrays;

/**
 * The sparse offset index of one partition, as Kafka's offset index: the log is cut into <em>chunks</em> of
 * consecutive record batches, each at least {@code index.interval.bytes} long (the last one still growing). For every
 * chunk the index keeps its first offset, the journal sequence number of its first batch, its size in bytes and the
 * largest record timestamp in it.
 *
 * <p>It answers "which journal event holds offset O" (a floor lookup, then a short replay), "how many bytes does the
 * log hold" (size retention) and "which chunks are older than T" (time retention). Retention removes whole chunks
 * from the front. Memory: four longs per chunk, so 5 GB of log at 64 KiB batches is ~80k entries (2.5 MB).
 *
 * <p>Not thread-safe: confined to the partition leader actor.
 */
public final class OffsetIndex {
  private long[] baseOffsets = new long[16];
  private long[] seqNrs = new long[16];
  private long[] bytes = new long[16];
  private long[] maxTimestamps = new long[16];
  private int head; // index of the first live chunk
  private int size; // number of live chunks
  private long totalBytes;
  private final int intervalBytes;

  /** An empty index whose chunks grow to at least {@code intervalBytes} before a new one starts. */
  public OffsetIndex(int intervalBytes) {
    this.intervalBytes = Math.max(1, intervalBytes);
  }

  /** Records one appended batch (its first offset, its journal sequence number, its size and max timestamp). */
  public void append(long baseOffset, long seqNr, int sizeInBytes, long maxTimestamp) {
    if (size == 0 || bytes[head + size - 1] >= intervalBytes) {
      ensureCapacity();
      int i = head + size;
      baseOffsets[i] = baseOffset;
      seqNrs[i] = seqNr;
      bytes[i] = 0;
      maxTimestamps[i] = Long.MIN_VALUE;
      size++;
    }
    int last = head + size - 1;
    bytes[last] += sizeInBytes;
    maxTimestamps[last] = Math.max(maxTimestamps[last], maxTimestamp);
    totalBytes += sizeInBytes;
  }

  /** Restores one chunk as it was (used when loading a snapshot). */
  public void restoreChunk(long baseOffset, long seqNr, long chunkBytes, long maxTimestamp) {
    ensureCapacity();
    int i = head + size;
    baseOffsets[i] = baseOffset;
    seqNrs[i] = seqNr;
    bytes[i] = chunkBytes;
    maxTimestamps[i] = maxTimestamp;
    size++;
    totalBytes += chunkBytes;
  }

  private void ensureCapacity() {
    if (head + size < baseOffsets.length) {
      return;
    }
    if (head > 0 && size <= baseOffsets.length / 2) {
      // compact in place
      System.arraycopy(baseOffsets, head, baseOffsets, 0, size);
      System.arraycopy(seqNrs, head, seqNrs, 0, size);
      System.arraycopy(bytes, head, bytes, 0, size);
      System.arraycopy(maxTimestamps, head, maxTimestamps, 0, size);
      head = 0;
      return;
    }
    int cap = Math.max(16, baseOffsets.length * 2);
    baseOffsets = Arrays.copyOfRange(baseOffsets, head, head + cap);
    seqNrs = Arrays.copyOfRange(seqNrs, head, head + cap);
    bytes = Arrays.copyOfRange(bytes, head, head + cap);
    maxTimestamps = Arrays.copyOfRange(maxTimestamps, head, head + cap);
    head = 0;
  }

  /** Number of chunks. */
  public int chunkCount() {
    return size;
  }

  /** Bytes of all batches still in the log. */
  public long totalBytes() {
    return totalBytes;
  }

  /** First offset of chunk {@code i} (0 = oldest). */
  public long chunkBaseOffset(int i) {
    return baseOffsets[head + i];
  }

  /** Journal sequence number of the first batch of chunk {@code i}. */
  public long chunkSeqNr(int i) {
    return seqNrs[head + i];
  }

  /** Bytes of chunk {@code i}. */
  public long chunkBytes(int i) {
    return bytes[head + i];
  }

  /** Largest record timestamp in chunk {@code i}, ms. */
  public long chunkMaxTimestamp(int i) {
    return maxTimestamps[head + i];
  }

  /**
   * The chunk that holds {@code offset}: the last chunk whose first offset is at or below it.
   *
   * @return the chunk number, or -1 if the index is empty or {@code offset} is below the first chunk
   */
  public int floorChunk(long offset) {
    int lo = 0;
    int hi = size - 1;
    int found = -1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      if (baseOffsets[head + mid] <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The first chunk whose largest timestamp is at or after {@code timestamp}, or -1 if none. */
  public int firstChunkWithTimestampAtLeast(long timestamp) {
    for (int i = 0; i < size; i++) {
      if (maxTimestamps[head + i] >= timestamp) {
        return i;
      }
    }
    return -1;
  }

  /** Removes the {@code n} oldest chunks. */
  public void dropFirst(int n) {
    for (int i = 0; i < n && size > 0; i++) {
      totalBytes -= bytes[head];
      head++;
      size--;
    }
    if (size == 0) {
      head = 0;
    }
  }

  /** Removes the {@code n} newest chunks (a truncated log suffix). */
  public void dropLast(int n) {
    for (int i = 0; i < n && size > 0; i++) {
      totalBytes -= bytes[head + size - 1];
      size--;
    }
    if (size == 0) {
      head = 0;
    }
  }

  /** Removes every chunk. */
  public void clear() {
    head = 0;
    size = 0;
    totalBytes = 0;
  }
}
