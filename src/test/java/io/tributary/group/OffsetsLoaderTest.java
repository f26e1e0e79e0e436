package io.tributary.group;

import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.ConfigFactory;
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
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.TopicDescription;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link OffsetsLoader} against a stand-in controller and partition leader: a leader just elected, whose high
 * watermark (learned as a follower) lags records the old leader had acknowledged.
 */
class OffsetsLoaderTest {
  private static final int PARTITIONS = 1;
  private static ActorTestKit kit;
  private static BrokerSettings settings;
  private static GroupSettings groupSettings;

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create("offsets-loader", ConfigFactory.parseMap(Map.of(
        "tributary.broker.offsets.topic.num.partitions", PARTITIONS)).withFallback(ConfigFactory.load()));
    settings = BrokerSettings.create(kit.system().settings().config());
    groupSettings = GroupSettings.create(kit.system().settings().config());
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  /**
   * A partition leader's log: one batch per append. Its high watermark starts at {@code highWatermark} and reaches
   * the log end once an {@code acks=all} append is answered (the followers fetched everything).
   */
  static final class Log {
    final List<byte[]> batches = new ArrayList<>();
    final List<Long> baseOffsets = new ArrayList<>();
    long end;
    long highWatermark;

    void append(byte[] batch) {
      RecordBatch.wrap(batch).setBaseOffset(end);
      baseOffsets.add(end);
      batches.add(batch);
      end += countRecords(batch);
    }

    private static int countRecords(byte[] batch) {
      int n = 0;
      for (var r : RecordBatch.wrap(batch)) {
        n++;
      }
      return n;
    }

    FetchResponse fetch(FetchRequest f) {
      List<byte[]> out = new ArrayList<>();
      if (f.fetchOffset() < highWatermark) {
        for (int i = 0; i < batches.size(); i++) {
          long last = (i + 1 < batches.size() ? baseOffsets.get(i + 1) : end) - 1;
          if (last >= f.fetchOffset()) {
            out.add(batches.get(i));
          }
        }
      }
      return new FetchResponse(f.topic(), f.partition(), ErrorCode.NONE, null, highWatermark, 0, out);
    }
  }

  private static byte[] commit(String group, String topic, int partition, long offset) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(0, OffsetRecords.key(group, topic, partition), OffsetRecords.value(offset, null), null);
    return b.build();
  }

  private static ActorRef<PartitionLeader.Command> leader(Log log) {
    return kit.spawn(Behaviors.receiveMessage(c -> {
      if (c instanceof PartitionLeader.ListOffsets l) {
        ListOffsetsRequest r = l.request();
        r.replyTo().tell(new ListOffsetsResponse(r.topic(), r.partition(), ErrorCode.NONE, null,
            r.timestamp() == ListOffsetsRequest.EARLIEST_TIMESTAMP ? 0 : log.highWatermark, -1));
      } else if (c instanceof PartitionLeader.Fetch f) {
        f.request().replyTo().tell(log.fetch(f.request()));
      } else if (c instanceof PartitionLeader.Produce p) {
        ProduceRequest r = p.request();
        long base = log.end;
        log.append(r.batch());
        log.highWatermark = log.end;
        r.replyTo().tell(new ProduceResponse(r.topic(), r.partition(), ErrorCode.NONE, null, base, -1, 0));
      }
      return Behaviors.same();
    }));
  }

  private static ActorRef<Controller.Command> controller() {
    return kit.spawn(Behaviors.receiveMessage(c -> {
      if (c instanceof Controller.Admin a && a.request() instanceof AdminRequest.DescribeTopics d) {
        List<PartitionDescription> ps = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
          ps.add(new PartitionDescription(p, "leader", List.of("leader"), List.of("leader"), 1));
        }
        d.replyTo().tell(new AdminResponse(ErrorCode.NONE, null, List.of(),
            List.of(new TopicDescription(GroupSettings.OFFSETS_TOPIC, "id", ps, Map.of()))));
      }
      return Behaviors.same();
    }));
  }

  @Test
  void loadsTheRecordsANewLeaderHoldsAboveItsLaggingHighWatermark() throws Exception {
    Log log = new Log();
    log.append(commit("workers", "t", 0, 100));
    log.append(commit("workers", "t", 1, 50));
    log.append(commit("workers", "t", 0, 164)); // acknowledged by the old leader; this one's high watermark lags
    log.append(commit("workers", "t", 1, 196));
    log.highWatermark = 2;

    Map<String, Map<PartitionRef, PartitionOffset>> loaded = OffsetsLoader.load(kit.system(), controller(),
        leader(log), settings, groupSettings).toCompletableFuture().get(20, TimeUnit.SECONDS);

    Map<PartitionRef, PartitionOffset> workers = loaded.get("workers");
    assertEquals(164, workers.get(new PartitionRef("t", 0)).offset(), "the newest commit of t-0: " + loaded);
    assertEquals(196, workers.get(new PartitionRef("t", 1)).offset(), "the newest commit of t-1: " + loaded);
    assertEquals(1, loaded.size(), "the barrier record is no group's: " + loaded);
  }

  @Test
  void anEmptyPartitionLoadsNothing() throws Exception {
    Map<String, Map<PartitionRef, PartitionOffset>> loaded = OffsetsLoader.load(kit.system(), controller(),
        leader(new Log()), settings, groupSettings).toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(Map.of(), loaded);
  }
}
