package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import io.tributary.log.JournalStores;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node whose journals are Akka's own LevelDB journal (not {@code TunedLeveldbJournal}, so nothing is registered in
 * {@link JournalStores}) still serves fetches behind the in-memory tail: through Akka's replay protocol.
 */
class ReplayReadPathTest {
  private static BrokerNode node;
  private static Gw gw;

  @BeforeAll
  static void start() {
    Map<String, Object> config = new HashMap<>();
    config.put("tributary.log.tail-idle-ms", "200");
    for (int i = 0; i < 8; i++) {
      config.put("tributary.persistence.journal-" + i + ".class", "akka.persistence.journal.leveldb.LeveldbJournal");
    }
    node = TestNodes.start(TestNodes.tempDataDir(), config);
    gw = new Gw(node);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void recordsBehindTheTailAreReadThroughAkkasReplayWhenTheJournalIsNotTheTunedOne() {
    assertEquals(ErrorCode.NONE, gw.create("replayed", 1, Map.of()).error());
    assertEquals(ErrorCode.NONE, gw.produce("replayed", 0, Gw.batch("a", 3, 1_000L)).error());
    assertEquals(ErrorCode.NONE, gw.produce("replayed", 0, Gw.batch("b", 2, 2_000L)).error());
    for (int i = 0; i < 8; i++) {
      assertNull(JournalStores.get(Adapter.toClassic(node.system())).store(BrokerSettings.journalPluginId(i)),
          "no direct store for journal-" + i);
    }
    TestProbe<Object> probe = TestProbe.create(node.system());
    probe.awaitAssert(Duration.ofSeconds(20), () -> {
      assertEquals(0, gw.status("replayed", 0).tailBytes(), "the idle partition dropped its tail");
      return null;
    });
    FetchResponse r = gw.fetch("replayed", 0, 1, 1 << 20, 0);
    assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
    List<String> read = Gw.values(r);
    assertEquals(List.of("a0", "a1", "a2", "b0", "b1"), read, "whole batches, in order");
  }
}
