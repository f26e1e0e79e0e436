package io.tributary.client;

import io.tributary.protocol.ErrorCode;
import io.tributary.record.InvalidRecordException;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The fetched records of one partition that {@code poll} has not returned yet, kept as the record batches they came
 * in and decoded one record at a time as they are taken, as Kafka's consumer keeps a {@code CompletedFetch}: a fetch
 * of {@code max.partition.fetch.bytes} of compressed batches (the broker stores LZ4 record batches) holds ~20 times
 * as many records as bytes-per-record suggests, and decoding them all at once would keep tens of MB of records alive
 * until the application gets to them. A compressed batch is decompressed when its first record is needed.
 *
 * <p>Each batch is added with the range of offsets it contributes, {@code [from, until)}: records below the
 * partition's fetch position (the part of a batch that was returned before) and at or above the high watermark are
 * skipped.
 *
 * <p>Confined to the consumer's application thread, as {@link TributaryConsumer}'s partition state.
 */
final class FetchedRecords {

  private record Pending(RecordBatch batch, long from, long until) {}

  private final ArrayDeque<Pending> batches = new ArrayDeque<>();
  private Iterator<Record> current;
  private long nextFrom;
  private long currentUntil;
  private String currentSource;
  private Record next;
  private TributaryException failure;

  /**
   * Queues {@code batch}'s records with offsets in {@code [from, until)}, after those queued before.
   *
   * @param batch a batch whose CRC was checked
   * @param from the least offset to return
   * @param until the offset after the last one to return ({@code Long.MAX_VALUE}: no limit)
   */
  void add(RecordBatch batch, long from, long until) {
    batches.addLast(new Pending(batch, from, until));
  }

  /**
   * The next record, decoding it if need be, or {@code null} if none is left.
   *
   * @param source what to name in an error, e.g. the partition
   * @throws TributaryException ({@link ErrorCode#INVALID_RECORD}, {@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE})
   *     if a batch does not decode; thrown again by every later call until {@link #clear}
   */
  Record peek(String source) {
    if (failure != null) {
      throw failure;
    }
    if (next != null) {
      return next;
    }
    try {
      while (true) {
        if (current != null) {
          while (current.hasNext()) {
            Record r = current.next();
            if (r.offset() >= currentUntil) {
              break;
            }
            if (r.offset() >= nextFrom) {
              next = r;
              return r;
            }
          }
          current = null;
        }
        Pending p = batches.pollFirst();
        if (p == null) {
          return null;
        }
        current = p.batch().iterator();
        nextFrom = p.from();
        currentUntil = p.until();
        currentSource = source + " at " + p.batch().baseOffset();
      }
    } catch (InvalidRecordException e) {
      failure = new TributaryException(e.errorCode(), "invalid record batch fetched from " + currentSource + ": " + e, e);
      throw failure;
    }
  }

  /** Takes the record {@link #peek} returned (which must have been called and returned one). */
  Record poll() {
    Record r = next;
    if (r == null) {
      throw new IllegalStateException("peek first");
    }
    next = null;
    return r;
  }

  /**
   * Whether records may be left, without decoding anything: {@code false} once {@link #peek} found none (or nothing
   * was added since {@link #clear}); {@code true} while a batch is queued or a decoding failure is pending, even if
   * the rest of the batches turn out to hold no record in their ranges.
   */
  boolean hasQueued() {
    return next != null || current != null || !batches.isEmpty() || failure != null;
  }

  /** Forgets every queued record and a decoding failure. */
  void clear() {
    batches.clear();
    current = null;
    next = null;
    failure = null;
  }
}
