package io.tributary.group;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import io.tributary.broker.BrokerSettings;
import io.tributary.cluster.Controller;
import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Reads every committed offset back from {@value GroupSettings#OFFSETS_TOPIC} when the coordinator starts,
 * creating the topic first if it does not exist. The newest record of each (group, topic, partition) key wins; a
 * tombstone removes the key. Partitions are read one after the other; the result is only touched by that chain.
 *
 * <p>Each partition is read up to a <em>barrier</em>: an ignorable record ({@link #BARRIER_KEY}) the loader first
 * appends with {@code acks=all}. The leader's high watermark is not enough on its own: right after a leader change
 * (the coordinator typically moves with the node that died) the new leader's high watermark is the one it last heard
 * of as a follower, and may lag records the old leader had already acknowledged — a commit the member was told
 * succeeded would be missing from the load and answered from memory ever after. The barrier's acknowledgement means
 * the high watermark has passed it, so every record before it (all the leader had) is committed and read. A
 * partition whose barrier cannot be written (no leader, too few in-sync replicas) fails the load; the coordinator
 * retries it, answering COORDINATOR_LOAD_IN_PROGRESS meanwhile, as it could not store commits either.
 */
final class OffsetsLoader {
  private static final int FETCH_BYTES = 1 << 20;
  /** The key of the barrier record: type 0, which {@link OffsetRecords#parseKey} (and so every loader) skips. */
  static final byte[] BARRIER_KEY = {0};

  private OffsetsLoader() {}

  /** Ensures the topic and loads it. Fails if the controller or a partition does not answer. */
  static CompletionStage<Map<String, Map<PartitionRef, PartitionOffset>>> load(
      ActorSystem<?> system,
      ActorRef<Controller.Command> controller,
      ActorRef<PartitionLeader.Command> partitions,
      BrokerSettings settings,
      GroupSettings groupSettings) {
    Map<String, Map<PartitionRef, PartitionOffset>> result = new TreeMap<>();
    CompletionStage<Void> chain = ensureTopic(system, controller, settings, groupSettings);
    for (int p = 0; p < groupSettings.offsetsTopicPartitions(); p++) {
      int partition = p;
      chain = chain.thenCompose(v -> barrier(system, partitions, settings, partition))
          .thenCompose(end -> readFrom(system, partitions, settings, partition, -1, end, result));
    }
    return chain.thenApply(v -> result);
  }

  private static CompletionStage<Void> ensureTopic(
      ActorSystem<?> system, ActorRef<Controller.Command> controller, BrokerSettings settings, GroupSettings gs) {
    return AskPattern.<Controller.Command, AdminResponse>ask(controller,
            r -> new Controller.Admin(new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT,
                List.of(GroupSettings.OFFSETS_TOPIC), r)), settings.askTimeout(), system.scheduler())
        .thenCompose(d -> {
          if (d.error() == ErrorCode.NONE) {
            int count = d.topics().get(0).partitions().size();
            if (count != gs.offsetsTopicPartitions()) {
              throw new IllegalStateException(GroupSettings.OFFSETS_TOPIC + " has " + count
                  + " partitions but offsets.topic.num.partitions is " + gs.offsetsTopicPartitions());
            }
            return CompletableFuture.completedFuture(null);
          }
          return AskPattern.<Controller.Command, AdminResponse>ask(controller,
                  r -> new Controller.Admin(new AdminRequest.CreateTopic(ProtocolVersions.CURRENT,
                      GroupSettings.OFFSETS_TOPIC, gs.offsetsTopicPartitions(), gs.offsetsTopicReplicationFactor(),
                      Map.of("retention.ms", "-1", "retention.bytes", "-1"), r)),
                  settings.askTimeout(), system.scheduler())
              .thenApply(c -> {
                if (c.error() != ErrorCode.NONE && c.error() != ErrorCode.TOPIC_ALREADY_EXISTS) {
                  throw new IllegalStateException("cannot create " + GroupSettings.OFFSETS_TOPIC + ": " + c.error()
                      + " " + c.errorMessage());
                }
                return null;
              });
        });
  }

  private static CompletionStage<Void> readFrom(
      ActorSystem<?> system,
      ActorRef<PartitionLeader.Command> partitions,
      BrokerSettings settings,
      int partition,
      long offset,
      long end,
      Map<String, Map<PartitionRef, PartitionOffset>> result) {
    if (offset < 0) {
      return AskPattern.<PartitionLeader.Command, ListOffsetsResponse>ask(partitions,
              r -> new PartitionLeader.ListOffsets(new ListOffsetsRequest(ProtocolVersions.CURRENT,
                  GroupSettings.OFFSETS_TOPIC, partition, ListOffsetsRequest.EARLIEST_TIMESTAMP, r)),
              settings.askTimeout(), system.scheduler())
          .thenCompose(l -> {
            if (l.error() != ErrorCode.NONE) {
              throw new IllegalStateException("cannot read " + GroupSettings.OFFSETS_TOPIC + "-" + partition + ": "
                  + l.error());
            }
            return readFrom(system, partitions, settings, partition, l.offset(), end, result);
          });
    }
    return AskPattern.<PartitionLeader.Command, FetchResponse>ask(partitions,
            r -> new PartitionLeader.Fetch(new FetchRequest(ProtocolVersions.CURRENT, GroupSettings.OFFSETS_TOPIC,
                partition, offset, FETCH_BYTES, 0, r)), settings.askTimeout(), system.scheduler())
        .thenCompose(f -> {
          if (f.error() == ErrorCode.OFFSET_OUT_OF_RANGE && offset < f.logStartOffset()) {
            return readFrom(system, partitions, settings, partition, f.logStartOffset(), end, result);
          }
          if (f.error() != ErrorCode.NONE) {
            throw new IllegalStateException("cannot read " + GroupSettings.OFFSETS_TOPIC + "-" + partition + ": "
                + f.error());
          }
          long next = offset;
          for (byte[] b : f.batches()) {
            for (Record r : RecordBatch.wrap(b)) {
              if (r.offset() < next || r.offset() >= f.highWatermark()) {
                continue;
              }
              apply(r, result);
              next = r.offset() + 1;
            }
          }
          if (next >= end) {
            return CompletableFuture.completedFuture(null);
          }
          if (f.batches().isEmpty() || next >= f.highWatermark()) {
            // the barrier was acknowledged, so a leader that reports a high watermark below it is a newer one that
            // has not caught up yet: fail, and the coordinator loads again
            throw new IllegalStateException("cannot read " + GroupSettings.OFFSETS_TOPIC + "-" + partition
                + " up to offset " + end + ": the high watermark is " + f.highWatermark());
          }
          return readFrom(system, partitions, settings, partition, next, end, result);
        });
  }

  /**
   * Appends the barrier record to partition {@code partition} with {@code acks=all}.
   *
   * @return the offset right after it: once it is acknowledged, every offset below is committed
   */
  private static CompletionStage<Long> barrier(
      ActorSystem<?> system, ActorRef<PartitionLeader.Command> partitions, BrokerSettings settings, int partition) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(System.currentTimeMillis(), BARRIER_KEY, null, null);
    byte[] batch = b.build();
    return AskPattern.<PartitionLeader.Command, ProduceResponse>ask(partitions,
            r -> new PartitionLeader.Produce(new ProduceRequest(ProtocolVersions.CURRENT, GroupSettings.OFFSETS_TOPIC,
                partition, (short) -1, (int) settings.askTimeout().toMillis(), batch, r)),
            settings.askTimeout(), system.scheduler())
        .thenApply(p -> {
          if (p.error() != ErrorCode.NONE) {
            throw new IllegalStateException("cannot write the load barrier to " + GroupSettings.OFFSETS_TOPIC + "-"
                + partition + ": " + p.error());
          }
          return p.baseOffset() + 1;
        });
  }

  private static void apply(Record r, Map<String, Map<PartitionRef, PartitionOffset>> result) {
    if (r.key() == null) {
      return;
    }
    OffsetRecords.Key key = OffsetRecords.parseKey(r.key());
    if (key == null) {
      return;
    }
    PartitionRef p = new PartitionRef(key.topic(), key.partition());
    PartitionOffset value = OffsetRecords.parseValue(key, r.value());
    if (value == null) {
      Map<PartitionRef, PartitionOffset> m = result.get(key.groupId());
      if (m != null) {
        m.remove(p);
        if (m.isEmpty()) {
          result.remove(key.groupId());
        }
      }
    } else {
      result.computeIfAbsent(key.groupId(), g -> new TreeMap<>(Comparator.comparing(PartitionRef::topic)
          .thenComparingInt(PartitionRef::partition))).put(p, value);
    }
  }
}
