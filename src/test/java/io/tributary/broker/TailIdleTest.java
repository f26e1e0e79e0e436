package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.TestProbe;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An idle partition gives its in-memory tail back ({@code tributary.log.tail-idle-ms}); its records are then read from
 * the journal, and the next append starts a new tail.
 */
class TailIdleTest {
  private static BrokerNode node;
  private static Gw gw;

  @BeforeAll
  static void start() {
    node = TestNodes.start(TestNodes.tempDataDir(), Map.of("tributary.log.tail-idle-ms", "200"));
    gw = new Gw(node);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static void awaitTailBytes(String topic, boolean empty) {
    TestProbe<Object> probe = TestProbe.create(node.system());
    probe.awaitAssert(Duration.ofSeconds(20), () -> {
      long tail = gw.status(topic, 0).tailBytes();
      assertTrue(empty ? tail == 0 : tail > 0, "tail bytes " + tail);
      return null;
    });
  }

  @Test
  void anIdlePartitionDropsItsTailAndStillServesEveryRecordFromTheJournal() {
    assertEquals(ErrorCode.NONE, gw.create("idle", 1, Map.of()).error());
    assertEquals(ErrorCode.NONE, gw.produce("idle", 0, Gw.batch("a", 3, 1_000L)).error());
    assertTrue(gw.status("idle", 0).tailBytes() > 0, "a fresh append is in the tail");

    awaitTailBytes("idle", true);
    FetchResponse fromJournal = gw.fetch("idle", 0, 0, 1 << 20, 0);
    assertEquals(ErrorCode.NONE, fromJournal.error(), fromJournal.errorMessage());
    assertEquals(3, Gw.values(fromJournal).size(), "read back from the journal");

    assertEquals(ErrorCode.NONE, gw.produce("idle", 0, Gw.batch("b", 2, 2_000L)).error());
    assertTrue(gw.status("idle", 0).tailBytes() > 0, "the next append starts a new tail");
    List<String> read = new ArrayList<>();
    for (int i = 0; i < 5 && read.size() < 5; i++) { // a journal read may stop where the tail begins: go on from there
      FetchResponse r = gw.fetch("idle", 0, read.size(), 1 << 20, 0);
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      read.addAll(Gw.values(r));
    }
    assertEquals(List.of("a0", "a1", "a2", "b0", "b1"), read, "old records from the journal, new ones from the tail");
  }
}
