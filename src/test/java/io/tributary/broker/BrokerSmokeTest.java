package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import akka.actor.typed.javadsl.AskPattern;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.RecordBatch;
import io.tributary.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerSmokeTest {
  private static final Duration T = Duration.ofSeconds(20);

  @Test
  void createProduceFetchThroughTheGateway() throws Exception {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of())) {
      var gw = node.tributary().gateway();
      var sys = node.system();
      AdminResponse created = AskPattern.<io.tributary.protocol.ClientRequest, AdminResponse>ask(gw,
          r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, "smoke", 2, (short) 1, Map.of(), r), T,
          sys.scheduler()).toCompletableFuture().get();
      assertEquals(ErrorCode.NONE, created.error(), String.valueOf(created.errorMessage()));
      for (int i = 0; i < 3; i++) {
        RecordBatchBuilder b = new RecordBatchBuilder();
        b.append(1000L + i, ("k" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8),
            null);
        b.append(1000L + i, null, "x".getBytes(StandardCharsets.UTF_8), null);
        byte[] bytes = b.build();
        ProduceResponse pr = AskPattern.<io.tributary.protocol.ClientRequest, ProduceResponse>ask(gw,
            r -> new ProduceRequest(ProtocolVersions.CURRENT, "smoke", 1, (short) 1, 30000, bytes, r), T,
            sys.scheduler()).toCompletableFuture().get();
        assertEquals(ErrorCode.NONE, pr.error(), String.valueOf(pr.errorMessage()));
        assertEquals(2L * i, pr.baseOffset());
      }
      FetchResponse fr = AskPattern.<io.tributary.protocol.ClientRequest, FetchResponse>ask(gw,
          r -> new FetchRequest(ProtocolVersions.CURRENT, "smoke", 1, 1, 1 << 20, 0, r), T, sys.scheduler())
          .toCompletableFuture().get();
      assertEquals(ErrorCode.NONE, fr.error());
      assertEquals(6, fr.highWatermark());
      assertEquals(3, fr.batches().size());
      assertEquals(0, RecordBatch.wrap(fr.batches().get(0)).baseOffset());

      // metadata of a name no topic can have: INVALID_TOPIC_EXCEPTION (as Kafka's metadata answer), not "unknown"
      AdminResponse invalid = AskPattern.<io.tributary.protocol.ClientRequest, AdminResponse>ask(gw,
          r -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, java.util.List.of("bad name"), r), T,
          sys.scheduler()).toCompletableFuture().get();
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid.error(), invalid.errorMessage());
      AdminResponse missing = AskPattern.<io.tributary.protocol.ClientRequest, AdminResponse>ask(gw,
          r -> new AdminRequest.DescribeTopics(ProtocolVersions.CURRENT, java.util.List.of("missing"), r), T,
          sys.scheduler()).toCompletableFuture().get();
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, missing.error(), missing.errorMessage());
    }
  }
}
