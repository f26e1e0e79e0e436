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
 * A short-lived child of a {@link PartitionLeader} that reads batches older than the in-memory tail back from the
 * journal (through {@link JournalAccess#replay}) and answers the client itself, so the leader never blocks on disk.
 * One reader per such read; it stops after answering. If the journal does not answer within the timeout the reader
 * answers {@link ErrorCode#REQUEST_TIMED_OUT}; a journal failure gives {@link ErrorCode#KAFKA_STORAGE_ERROR}.
 */
final class LogReader {
  private LogReader() {}

  private enum Timeout {
    INSTANCE
  }

  /** Reads batches for a fetch at {@code fetchOffset} from journal events {@code fromSeqNr..toSeqNr}. */
  static Behavior<Object> fetch(
      JournalAccess journal,
      String pluginId,
      String persistenceId,
      long fromSeqNr,
      long toSeqNr,
      String topic,
      int partition,
      long fetchOffset,
      int maxBytes,
      long limitOffset,
      long highWatermark,
      long logStartOffset,
      List<PartitionLog.Truncation> truncations,
      java.util.function.Consumer<FetchResponse> replyTo,
      Duration timeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startSingleTimer(Timeout.INSTANCE, timeout);
      journal.replay(pluginId, persistenceId, fromSeqNr, toSeqNr, toSeqNr - fromSeqNr + 1, Adapter.toClassic(ctx.getSelf()));
      List<byte[]> out = new ArrayList<>();
      long[] total = {0};
      boolean[] full = {false};
      return Behaviors.receive(Object.class)
          .onMessage(JournalProtocol.ReplayedMessage.class, m -> {
            if (m.persistent().payload() instanceof PartitionLeader.RecordsAppended e) {
              RecordBatch b = RecordBatch.wrap(e.batch());
              boolean wanted = b.lastOffset() >= fetchOffset && b.baseOffset() < limitOffset
                  && !isDead(truncations, m.persistent().sequenceNr(), b.baseOffset());
              if (wanted && !full[0]) {
                if (out.isEmpty() || total[0] + b.sizeInBytes() <= maxBytes) {
                  out.add(e.batch());
                  total[0] += b.sizeInBytes();
                } else {
                  // the response is full: a later, smaller batch must not jump the one that did not fit (a gap)
                  full[0] = true;
                }
              }
            }
            return Behaviors.same();
          })
          .onMessage(JournalProtocol.RecoverySuccess.class, m -> {
            replyTo.accept(new FetchResponse(topic, partition, ErrorCode.NONE, null, highWatermark, logStartOffset, out));
            return Behaviors.stopped();
          })
          .onMessage(JournalProtocol.ReplayMessagesFailure.class, m -> {
            replyTo.accept(FetchResponse.failed(topic, partition, ErrorCode.KAFKA_STORAGE_ERROR,
                "journal read failed: " + m.cause().getMessage(), highWatermark, logStartOffset));
            return Behaviors.stopped();
          })
          .onMessage(Timeout.class, m -> {
            replyTo.accept(FetchResponse.failed(topic, partition, ErrorCode.REQUEST_TIMED_OUT,
                "journal read did not complete in " + timeout.toMillis() + " ms", highWatermark, logStartOffset));
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
