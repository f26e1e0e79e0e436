package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Adapter;
import akka.persistence.DeleteMessagesSuccess;
import akka.persistence.DeleteSnapshotsSuccess;
import akka.persistence.JournalProtocol;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.BrokerSettings;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The internal-API corner: replaying a journal range and deleting events/snapshots through the journal protocol. */
class JournalAccessTest {
  private static ActorTestKit testKit;
  private static JournalAccess journal;
  private static final String PLUGIN = BrokerSettings.journalPluginId(0);

  @BeforeAll
  static void setup() throws Exception {
    String dir = Files.createTempDirectory("journal-access-").toString();
    testKit = ActorTestKit.create("journal", ConfigFactory.parseString("tributary.data-dir = \"" + dir + "\"")
        .withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve());
    journal = new JournalAccess((akka.actor.ExtendedActorSystem) Adapter.toClassic(testKit.system()));
  }

  @AfterAll
  static void teardown() {
    testKit.shutdownTestKit();
  }

  /** Persists each String it receives, then replies "ok". */
  static final class Writer extends EventSourcedBehavior<Writer.Write, String, List<String>> {
    record Write(String value, ActorRef<String> replyTo) {}

    Writer(String id) {
      super(PersistenceId.ofUniqueId(id));
    }

    static Behavior<Write> create(String id) {
      return new Writer(id);
    }

    @Override
    public String journalPluginId() {
      return PLUGIN;
    }

    @Override
    public String snapshotPluginId() {
      return BrokerSettings.SNAPSHOT_PLUGIN_ID;
    }

    @Override
    public List<String> emptyState() {
      return new ArrayList<>();
    }

    @Override
    public CommandHandler<Write, String, List<String>> commandHandler() {
      return newCommandHandlerBuilder().forAnyState()
          .onCommand(Write.class, (s, w) -> Effect().persist(w.value()).thenRun(x -> w.replyTo().tell("ok")))
          .build();
    }

    @Override
    public EventHandler<List<String>, String> eventHandler() {
      return newEventHandlerBuilder().forAnyState().onAnyEvent((s, e) -> {
        s.add(e);
        return s;
      });
    }
  }

  private static List<Object> replay(String pid, long from, long to) {
    TestProbe<Object> probe = testKit.createTestProbe();
    journal.replay(PLUGIN, pid, from, to, to - from + 1, Adapter.toClassic(probe.getRef()));
    List<Object> payloads = new ArrayList<>();
    while (true) {
      Object m = probe.receiveMessage(Duration.ofSeconds(10));
      if (m instanceof JournalProtocol.ReplayedMessage r) {
        payloads.add(r.persistent().sequenceNr() + ":" + r.persistent().payload());
      } else {
        assertInstanceOf(JournalProtocol.RecoverySuccess.class, m);
        return payloads;
      }
    }
  }

  @Test
  void replaysARangeAndDeletesUpToASequenceNumber() throws Exception {
    ActorRef<Writer.Write> writer = testKit.spawn(Writer.create("w1"));
    TestProbe<String> ok = testKit.createTestProbe();
    for (int i = 1; i <= 20; i++) {
      writer.tell(new Writer.Write("e" + i, ok.getRef()));
      ok.expectMessage("ok");
    }
    assertEquals(List.of("5:e5", "6:e6", "7:e7"), replay("w1", 5, 7));
    Object deleted = journal.deleteMessagesTo(PLUGIN, "w1", 12, Duration.ofSeconds(10)).toCompletableFuture().get();
    assertInstanceOf(DeleteMessagesSuccess.class, deleted);
    List<Object> rest = replay("w1", 1, 100);
    assertEquals(8, rest.size());
    assertEquals("13:e13", rest.get(0));
    Object snaps = journal.deleteSnapshotsTo(BrokerSettings.SNAPSHOT_PLUGIN_ID, "w1", 100, Duration.ofSeconds(10))
        .toCompletableFuture().get();
    assertInstanceOf(DeleteSnapshotsSuccess.class, snaps);
  }
}
