package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.dispatch.Dispatcher;
import akka.persistence.AtomicWrite;
import akka.persistence.DeleteMessagesSuccess;
import akka.persistence.JournalProtocol;
import akka.persistence.PersistentRepr;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.BrokerSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.jdk.javaapi.CollectionConverters;

class JournalDispatcherTest {
  private static final String PLUGIN = BrokerSettings.journalPluginId(0);
  private static final String DISPATCHER = "tributary.journal.dispatcher";
  private static final Duration WAIT = Duration.ofSeconds(15);

  @TempDir
  Path dataDir;

  /**
   * An actor system with journal-0 on the journals' dispatcher, whose {@code journal-executor} section gets
   * {@code executorConfig} (by default no stall threshold: a cold JVM's first writes may take longer than 20 ms).
   */
  private ActorTestKit start(String executorConfig) {
    return ActorTestKit.create("journal-dispatcher", ConfigFactory.parseString(
            "tributary.data-dir = \"" + dataDir + "\"\n"
                + "tributary.journal.dispatcher.journal-executor { stall-threshold = 1h\n" + executorConfig + "}\n")
        .withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve());
  }

  /** The journals' executor of {@code kit}'s actor system. */
  private static JournalDispatcher.Executor executor(ActorTestKit kit) {
    Dispatcher d = (Dispatcher) Adapter.toClassic(kit.system()).dispatchers().lookup(DISPATCHER);
    return assertInstanceOf(JournalDispatcher.Executor.class, d.executorService().executor());
  }

  /** An actor (on the actors' dispatcher, a fork-join pool) that sends each message it gets to journal-0. */
  private static Behavior<Object> sender(akka.actor.ActorRef journal) {
    return Behaviors.receive((ctx, msg) -> {
      journal.tell(msg, akka.actor.ActorRef.noSender());
      return Behaviors.same();
    });
  }

  /**
   * Starts journal-0 and waits until it has answered a write: a message that reaches a journal still starting runs
   * where the journal's start runs (the journals' threads), whatever the message.
   */
  private static void started(ActorTestKit kit) {
    TestProbe<Object> probe = kit.createTestProbe();
    journal(kit).tell(writeOf(probe, List.of(event("warm-up", 1, "w", probe))), akka.actor.ActorRef.noSender());
    written(probe);
    assertEquals(0, executor(kit).inlineRuns(), "the test thread is not an actors' thread");
    idle(kit, probe);
  }

  /**
   * Waits until the journals' threads are done: a journal replies before its mailbox run ends, and a message that
   * comes while that run is still going on is run there.
   */
  private static void idle(ActorTestKit kit, TestProbe<?> probe) {
    probe.awaitAssert(WAIT, () -> {
      assertTrue(executor(kit).poolIdle());
      return null;
    });
  }

  /** Expects a one-event write's replies in Akka's order and returns the event's sequence number. */
  private static long written(TestProbe<Object> probe) {
    probe.expectMessage(WAIT, JournalProtocol.WriteMessagesSuccessful$.MODULE$);
    return probe.expectMessageClass(JournalProtocol.WriteMessageSuccess.class, WAIT).persistent().sequenceNr();
  }

  private static akka.actor.ActorRef journal(ActorTestKit kit) {
    return new JournalAccess((akka.actor.ExtendedActorSystem) Adapter.toClassic(kit.system())).journal(PLUGIN);
  }

  private static PersistentRepr event(String pid, long seqNr, Object payload, TestProbe<Object> probe) {
    return PersistentRepr.apply(payload, seqNr, pid, "", false, Adapter.toClassic(probe.getRef()), "writer-uuid");
  }

  private static JournalProtocol.WriteMessages writeOf(TestProbe<Object> probe, List<PersistentRepr>... atomicWrites) {
    List<akka.persistence.PersistentEnvelope> writes = new java.util.ArrayList<>();
    for (List<PersistentRepr> events : atomicWrites) {
      writes.add(AtomicWrite.apply(CollectionConverters.asScala(events).toList()));
    }
    return new JournalProtocol.WriteMessages(CollectionConverters.asScala(writes).toList(),
        Adapter.toClassic(probe.getRef()), 7);
  }

  @Test
  void aSmallWriteRunsOnTheSendersThreadAndItsRepliesComeInAkkasOrderWithRejectionsInPlace() {
    ActorTestKit kit = start("");
    try {
      started(kit);
      TestProbe<Object> probe = kit.createTestProbe();
      ActorRef<Object> sender = kit.spawn(sender(journal(kit)));
      PersistentRepr a = event("p", 1, "a", probe);
      PersistentRepr unserializable = event("p", 2, new Object(), probe); // no serializer is bound to Object
      PersistentRepr c = event("p", 3, "c", probe);
      sender.tell(writeOf(probe, List.of(a), List.of(unserializable), List.of(c)));

      assertEquals(JournalProtocol.WriteMessagesSuccessful$.MODULE$, probe.receiveMessage(WAIT), "first, for the call");
      var first = assertInstanceOf(JournalProtocol.WriteMessageSuccess.class, probe.receiveMessage(WAIT));
      assertEquals(1, first.persistent().sequenceNr());
      assertEquals(7, first.actorInstanceId());
      var rejected = assertInstanceOf(JournalProtocol.WriteMessageRejected.class, probe.receiveMessage(WAIT));
      assertEquals(2, rejected.message().sequenceNr(), "the write that cannot be serialized is rejected alone");
      var third = assertInstanceOf(JournalProtocol.WriteMessageSuccess.class, probe.receiveMessage(WAIT));
      assertEquals(3, third.persistent().sequenceNr());
      assertEquals(1, executor(kit).inlineRuns(), "the write ran on the sending actor's thread");

      // and it is stored: replayed by Akka's journal protocol (events 1 and 3)
      journal(kit).tell(new JournalProtocol.ReplayMessages(1, Long.MAX_VALUE, 100, "p",
          Adapter.toClassic(probe.getRef())), akka.actor.ActorRef.noSender());
      var r1 = assertInstanceOf(JournalProtocol.ReplayedMessage.class, probe.receiveMessage(WAIT));
      var r3 = assertInstanceOf(JournalProtocol.ReplayedMessage.class, probe.receiveMessage(WAIT));
      assertEquals(List.of("a", "c"), List.of(r1.persistent().payload(), r3.persistent().payload()));
      assertEquals(3, assertInstanceOf(JournalProtocol.RecoverySuccess.class, probe.receiveMessage(WAIT))
          .highestSequenceNr());
    } finally {
      kit.shutdownTestKit();
    }
  }

  @Test
  void largeWritesAndDeletionsRunOnTheJournalsThreads() {
    ActorTestKit kit = start("inline-max-bytes = 1 KiB");
    try {
      started(kit);
      TestProbe<Object> probe = kit.createTestProbe();
      ActorRef<Object> sender = kit.spawn(sender(journal(kit)));
      JournalDispatcher.Executor executor = executor(kit);

      sender.tell(writeOf(probe, List.of(event("p", 1, new PartitionLeader.RecordsAppended(new byte[1024]), probe))));
      written(probe);
      assertEquals(1, executor.inlineRuns(), "1 KiB of record batches is not more than inline-max-bytes");
      sender.tell(writeOf(probe, List.of(event("p", 2, new PartitionLeader.RecordsAppended(new byte[1025]), probe))));
      written(probe);
      assertEquals(1, executor.inlineRuns(), "1025 bytes are: that write went to the journals' threads");
      idle(kit, probe);

      sender.tell(new JournalProtocol.DeleteMessagesTo("p", 1, Adapter.toClassic(probe.getRef())));
      probe.expectMessageClass(DeleteMessagesSuccess.class, WAIT);
      assertEquals(1, executor.inlineRuns(), "a deletion (and the compaction after it) never runs on an actor");

      idle(kit, probe);
      sender.tell(writeOf(probe, List.of(event("p", 3, "x", probe))));
      written(probe);
      assertEquals(2, executor.inlineRuns(), "a small write after them runs on the sender's thread again");
    } finally {
      kit.shutdownTestKit();
    }
  }

  @Test
  void aWriteSlowerThanTheStallThresholdSendsTheNextWritesToTheJournalsThreads() {
    ActorTestKit kit = start("stall-threshold = 0s\nhand-off-after-stall = 1h");
    try {
      started(kit);
      TestProbe<Object> probe = kit.createTestProbe();
      ActorRef<Object> sender = kit.spawn(sender(journal(kit)));
      for (long seqNr = 1; seqNr <= 3; seqNr++) {
        sender.tell(writeOf(probe, List.of(event("p", seqNr, "e" + seqNr, probe))));
        assertEquals(seqNr, written(probe));
      }
      assertEquals(1, executor(kit).inlineRuns(), "only the first: it took longer than 0 s");
    } finally {
      kit.shutdownTestKit();
    }
  }

  /** The journal actor itself (journal-0 of {@code kit}, started). */
  private static TunedLeveldbJournal journalActor(ActorTestKit kit) {
    akka.actor.Cell cell = ((akka.actor.ActorRefWithCell) journal(kit)).underlying();
    return assertInstanceOf(TunedLeveldbJournal.class, ((akka.actor.ActorCell) cell).actor());
  }

  @Test
  void theLevel0GuardReadsLevelDbsCountAndSendsWritesToTheJournalsThreadsWhileItIsBehind() {
    ActorTestKit kit = start("");
    try {
      started(kit);
      TunedLeveldbJournal journal = journalActor(kit);
      int tables = journal.level0Tables();
      assertTrue(tables >= 0 && tables < TunedLeveldbJournal.LEVEL0_BEHIND,
          "the bundled LevelDB knows leveldb.num-files-at-level0 (else the guard could never trip): " + tables);
      TestProbe<Object> probe = kit.createTestProbe();
      ActorRef<Object> sender = kit.spawn(sender(journal(kit)));

      journal.assumeWritesMayStall();
      sender.tell(writeOf(probe, List.of(event("p", 1, "a", probe))));
      assertEquals(1, written(probe));
      assertEquals(0, executor(kit).inlineRuns(), "a small write goes to the journals' threads while LevelDB is behind");

      // once a check finds LevelDB caught up (at most every 50 ms, after a write), small writes run inline again
      long[] seqNr = {1};
      probe.awaitAssert(WAIT, () -> {
        idle(kit, probe);
        sender.tell(writeOf(probe, List.of(event("p", ++seqNr[0], "b", probe))));
        assertEquals(seqNr[0], written(probe));
        assertEquals(1, executor(kit).inlineRuns());
        return null;
      });
    } finally {
      kit.shutdownTestKit();
    }
  }

  @Test
  void inlineMaxBytesZeroKeepsEveryWriteOnTheJournalsThreads() {
    ActorTestKit kit = start("inline-max-bytes = 0");
    try {
      started(kit);
      TestProbe<Object> probe = kit.createTestProbe();
      kit.spawn(sender(journal(kit))).tell(writeOf(probe, List.of(event("p", 1, "a", probe))));
      written(probe);
      assertEquals(0, executor(kit).inlineRuns());
    } finally {
      kit.shutdownTestKit();
    }
  }

  @Test
  void badExecutorSettingsAreRefusedWithTheirValues() {
    var cfg = ConfigFactory.parseString("journal-executor { threads = 0, inline-max-bytes = 1 KiB, "
        + "stall-threshold = 20ms, hand-off-after-stall = 5s }");
    var e = assertThrows(IllegalArgumentException.class, () -> new JournalDispatcher(cfg, null));
    assertTrue(e.getMessage().contains("threads"), e.getMessage());
  }
}
