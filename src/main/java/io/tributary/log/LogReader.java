package io.tributary.log;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.persistence.JournalProtocol;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads of record batches older than a partition's in-memory tail, so the partition leader never blocks on disk:
 *
 * <ul>
 *   <li>{@link #readDirect}: straight from a {@link TunedLeveldbJournal}'s store, on a thread of the broker's
 *       {@code tributary.log.read-dispatcher} (fetches from consumers and followers, when the partition's journal
 *       is registered in {@link JournalStores});
 *   <li>{@link #fetch} and {@link #offsetForTimestamp}: short-lived children of the leader that read through Akka's
 *       replay protocol ({@link JournalAccess#replay}) and answer the client themselves; one reader per read, which
 *       stops after answering. If the journal does not answer within the timeout the reader answers
 *       {@link ErrorCode#REQUEST_TIMED_OUT}.
 * </ul>
 *
 * A journal failure gives {@link ErrorCode#KAFKA_STORAGE_ERROR} (retriable, as Kafka's).
 */
final class LogReader {
  private LogReader() {}

  /**
   * The batches of one fetch response, fed in journal order: those that reach {@code fetchOffset}, start below
   * {@code limitOffset} and were not discarded by a truncation, up to {@code maxBytes} (the first one always goes);
   * the first batch that does not fit ends the response, so a later, smaller batch never jumps it (a gap). Confined
   * to one thread at a time.
   */
  static final class FetchCollector {
    private final String topic;
    private final int partition;
    private final long fetchOffset;
    private final int maxBytes;
    private final long limitOffset;
    private final long highWatermark;
    private final long logStartOffset;
    private final List<PartitionLog.Truncation> truncations;
    private final List<byte[]> out = new ArrayList<>();
    private long total;
    private boolean full;

    FetchCollector(String topic, int partition, long fetchOffset, int maxBytes, long limitOffset, long highWatermark,
        long logStartOffset, List<PartitionLog.Truncation> truncations) {
      this.topic = topic;
      this.partition = partition;
      this.fetchOffset = fetchOffset;
      this.maxBytes = maxBytes;
      this.limitOffset = limitOffset;
      this.highWatermark = highWatermark;
      this.logStartOffset = logStartOffset;
      this.truncations = truncations;
    }

    /**
     * Offers the batch journaled at {@code seqNr}.
     *
     * @return {@code false} once the response is full: no later batch can be added
     */
    boolean add(long seqNr, byte[] batch) {
      if (full) {
        return false;
      }
      RecordBatch b = RecordBatch.wrap(batch);
      if (b.lastOffset() >= fetchOffset && b.baseOffset() < limitOffset && !isDead(truncations, seqNr, b.baseOffset())) {
        if (out.isEmpty() || total + b.sizeInBytes() <= maxBytes) {
          out.add(batch);
          total += b.sizeInBytes();
        } else {
          full = true;
        }
      }
      return !full;
    }

    /** The response with the batches collected. */
    FetchResponse response() {
      return new FetchResponse(topic, partition, ErrorCode.NONE, null, highWatermark, logStartOffset, out);
    }

    /** A failed response: {@code error} with {@code message}. */
    FetchResponse failed(ErrorCode error, String message) {
      return FetchResponse.failed(topic, partition, error, message, highWatermark, logStartOffset);
    }
  }

  /**
   * Reads the batches of a fetch from journal events {@code fromSeqNr..toSeqNr} straight from {@code store}, on the
   * calling thread (a thread of the broker's read dispatcher: it blocks on disk). Stops as soon as the response is
   * full. A closed store or a failing read gives {@link ErrorCode#KAFKA_STORAGE_ERROR}.
   *
   * @return the response (never throws)
   */
  static FetchResponse readDirect(TunedLeveldbJournal store, String persistenceId, long fromSeqNr, long toSeqNr,
      FetchCollector collector) {
    try {
      store.readRecordBatches(persistenceId, fromSeqNr, toSeqNr, collector::add);
      return collector.response();
    } catch (RuntimeException e) {
      return collector.failed(ErrorCode.KAFKA_STORAGE_ERROR, "journal read failed: " + e.getMessage());
    }
  }

  private enum Timeout {
    INSTANCE
  }

  /** Reads the batches of a fetch ({@code out}) from journal events {@code fromSeqNr..toSeqNr} by Akka's replay. */
  static Behavior<Object> fetch(
      JournalAccess journal,
      String pluginId,
      String persistenceId,
      long fromSeqNr,
      long toSeqNr,
      FetchCollector out,
      java.util.function.Consumer<FetchResponse> replyTo,
      Duration timeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startSingleTimer(Timeout.INSTANCE, timeout);
      journal.replay(pluginId, persistenceId, fromSeqNr, toSeqNr, toSeqNr - fromSeqNr + 1, Adapter.toClassic(ctx.getSelf()));
      return Behaviors.receive(Object.class)
          .onMessage(JournalProtocol.ReplayedMessage.class, m -> {
            if (m.persistent().payload() instanceof PartitionLeader.RecordsAppended e) {
              out.add(m.persistent().sequenceNr(), e.batch());
            }
            return Behaviors.same();
          })
          .onMessage(JournalProtocol.RecoverySuccess.class, m -> {
            replyTo.accept(out.response());
            return Behaviors.stopped();
          })
          .onMessage(JournalProtocol.ReplayMessagesFailure.class, m -> {
            replyTo.accept(out.failed(ErrorCode.KAFKA_STORAGE_ERROR, "journal read failed: " + m.cause().getMessage()));
            return Behaviors.stopped();
          })
          .onMessage(Timeout.class, m -> {
            replyTo.accept(out.failed(ErrorCode.REQUEST_TIMED_OUT,
                "journal read did not complete in " + timeout.toMillis() + " ms"));
            return Behaviors.stopped();
          })
          .build();
    }));
  }

  /**
   * Finds the first offset at or after {@code fromOffset} whose record timestamp is at least {@code timestamp}, in
   * journal events {@code fromSeqNr..toSeqNr}; answers {@code fallbackOffset} if none is found there.
   */
  static Behavior<Object> offsetForTimestamp(
      JournalAccess journal,
      String pluginId,
      String persistenceId,
      long fromSeqNr,
      long toSeqNr,
      String topic,
      int partition,
      long timestamp,
      long minOffset,
      long highWatermark,
      List<PartitionLog.Truncation> truncations,
      ActorRef<ListOffsetsResponse> replyTo,
      Duration timeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startSingleTimer(Timeout.INSTANCE, timeout);
      journal.replay(pluginId, persistenceId, fromSeqNr, toSeqNr, toSeqNr - fromSeqNr + 1, Adapter.toClassic(ctx.getSelf()));
      long[] found = {-1, -1};
      return Behaviors.receive(Object.class)
          .onMessage(JournalProtocol.ReplayedMessage.class, m -> {
            if (found[0] < 0 && m.persistent().payload() instanceof PartitionLeader.RecordsAppended e
                && !isDead(truncations, m.persistent().sequenceNr(), RecordBatch.wrap(e.batch()).baseOffset())) {
              long[] hit = searchBatch(RecordBatch.wrap(e.batch()), timestamp, minOffset, highWatermark);
              if (hit != null) {
                found[0] = hit[0];
                found[1] = hit[1];
              }
            }
            return Behaviors.same();
          })
          .onMessage(JournalProtocol.RecoverySuccess.class, m -> {
            long off = found[0] >= 0 ? found[0] : highWatermark;
            replyTo.tell(new ListOffsetsResponse(topic, partition, ErrorCode.NONE, null, off, found[1]));
            return Behaviors.stopped();
          })
          .onMessage(JournalProtocol.ReplayMessagesFailure.class, m -> {
            replyTo.tell(new ListOffsetsResponse(topic, partition, ErrorCode.KAFKA_STORAGE_ERROR,
                "journal read failed: " + m.cause().getMessage(), -1, -1));
            return Behaviors.stopped();
          })
          .onMessage(Timeout.class, m -> {
            replyTo.tell(new ListOffsetsResponse(topic, partition, ErrorCode.REQUEST_TIMED_OUT,
                "journal read did not complete in " + timeout.toMillis() + " ms", -1, -1));
            return Behaviors.stopped();
          })
          .build();
    }));
  }

  /** Whether the batch journaled at {@code seqNr} with {@code baseOffset} was discarded by a truncation. */
  static boolean isDead(List<PartitionLog.Truncation> truncations, long seqNr, long baseOffset) {
    for (PartitionLog.Truncation t : truncations) {
      if (seqNr < t.atSeqNr() && baseOffset >= t.offset()) {
        return true;
      }
    }
    return false;
  }

  /** The first record of {@code batch} with offset in [minOffset, hw) and timestamp ≥ ts: {offset, timestamp}. */
  static long[] searchBatch(RecordBatch batch, long timestamp, long minOffset, long highWatermark) {
    if (batch.maxTimestamp() < timestamp) {
      return null;
    }
    for (Record r : batch) {
      if (r.offset() >= minOffset && r.offset() < highWatermark && r.timestamp() >= timestamp) {
        return new long[] {r.offset(), r.timestamp()};
      }
    }
    return null;
  }
}
