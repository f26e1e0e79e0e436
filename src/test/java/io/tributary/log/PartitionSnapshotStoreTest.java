package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ActorRef;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.javadsl.Adapter;
import akka.pattern.Patterns;
import akka.persistence.DeleteSnapshotsSuccess;
import akka.persistence.Persistence;
import akka.persistence.SaveSnapshotFailure;
import akka.persistence.SaveSnapshotSuccess;
import akka.persistence.SelectedSnapshot;
import akka.persistence.SnapshotMetadata;
import akka.persistence.SnapshotProtocol;
import akka.persistence.SnapshotSelectionCriteria;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.TestNodes;
import io.tributary.protocol.TopicNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * {@link PartitionSnapshotStore} through Akka Persistence's snapshot protocol, side by side with Akka's own {@code
 * LocalSnapshotStore} on the same directory: the persistence id of a partition of a topic with the longest legal name
 * (249 characters) is too long for Akka's file name, so Akka's store fails to save it and Tributary's saves and loads
 * it under a hashed name; ids of ordinary length keep Akka's exact file names, in both directions.
 */
class PartitionSnapshotStoreTest {
  private static final Path DIR = TestNodes.tempDataDir().resolve("snapshots");
  private static final Config CONFIG = ConfigFactory.parseString(
      "ours = ${akka.persistence.snapshot-store.local} { class = \"io.tributary.log.PartitionSnapshotStore\" }\n"
          + "akkas = ${akka.persistence.snapshot-store.local}\n"
          + "ours.dir = \"" + DIR + "\"\nakkas.dir = \"" + DIR + "\"\n")
      .withFallback(ConfigFactory.load())
      .resolve();
  private static final ActorTestKit KIT = ActorTestKit.create("snapshots", CONFIG);
  private static final ActorRef OURS = store("ours");
  private static final ActorRef AKKAS = store("akkas");

  private static final String SHORT_ID = PartitionLeader.PERSISTENCE_TYPE + "|orders-3";
  private static final String LONG_ID =
      PartitionLeader.PERSISTENCE_TYPE + "|" + "t".repeat(TopicNames.MAX_LENGTH) + "-1023";

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  private static ActorRef store(String pluginId) {
    return Persistence.get(Adapter.toClassic(KIT.system())).snapshotStoreFor(pluginId, CONFIG.getConfig(pluginId));
  }

  private static Object ask(ActorRef store, Object message) throws Exception {
    return Patterns.ask(store, message, Duration.ofSeconds(10)).toCompletableFuture().get();
  }

  private static Object save(ActorRef store, String id, long seqNr, String data) throws Exception {
    return ask(store, new SnapshotProtocol.SaveSnapshot(SnapshotMetadata.apply(id, seqNr, 0L), data));
  }

  private static Option<SelectedSnapshot> load(ActorRef store, String id, long maxSeqNr) throws Exception {
    Object r = ask(store, new SnapshotProtocol.LoadSnapshot(id, SnapshotSelectionCriteria.create(maxSeqNr,
        Long.MAX_VALUE), Long.MAX_VALUE));
    return ((SnapshotProtocol.LoadSnapshotResult) r).snapshot();
  }

  private static List<String> files() throws Exception {
    try (Stream<Path> s = Files.list(DIR)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void theLongestLegalTopicNameSnapshotsUnderAHashedNameWhereAkkasStoreFails() throws Exception {
    Object akkas = save(AKKAS, LONG_ID, 7, "akka's");
    assertInstanceOf(SaveSnapshotFailure.class, akkas, "Akka's file name is too long: " + akkas);

    assertInstanceOf(SaveSnapshotSuccess.class, save(OURS, LONG_ID, 7, "state at 7"));
    assertInstanceOf(SaveSnapshotSuccess.class, save(OURS, LONG_ID, 14, "state at 14"));
    List<String> names = files().stream().filter(n -> n.startsWith("snapshot-~")).toList();
    assertEquals(2, names.size(), files().toString());
    for (String n : names) {
      assertTrue(n.length() <= PartitionSnapshotStore.MAX_NAME_BYTES, n);
      assertTrue(n.startsWith("snapshot-" + PartitionSnapshotStore.hashedId(LONG_ID) + "-"), n);
    }
    assertEquals("state at 14", load(OURS, LONG_ID, Long.MAX_VALUE).get().snapshot());
    SelectedSnapshot at7 = load(OURS, LONG_ID, 13).get();
    assertEquals("state at 7", at7.snapshot());
    assertEquals(LONG_ID, at7.metadata().persistenceId());
    assertEquals(7, at7.metadata().sequenceNr());

    // retention deletes snapshots below a sequence number
    assertInstanceOf(DeleteSnapshotsSuccess.class, ask(OURS, new SnapshotProtocol.DeleteSnapshots(LONG_ID,
        SnapshotSelectionCriteria.create(13, Long.MAX_VALUE))));
    assertTrue(load(OURS, LONG_ID, 13).isEmpty());
    assertEquals("state at 14", load(OURS, LONG_ID, Long.MAX_VALUE).get().snapshot());
  }

  @Test
  void idsOfOrdinaryLengthKeepAkkasFileNamesInBothDirections() throws Exception {
    // written by Akka's store (a broker before this store), read by Tributary's
    assertInstanceOf(SaveSnapshotSuccess.class, save(AKKAS, SHORT_ID, 1000, "from akka's store"));
    assertEquals("from akka's store", load(OURS, SHORT_ID, Long.MAX_VALUE).get().snapshot());
    // written by Tributary's, under Akka's exact name, read by Akka's
    assertInstanceOf(SaveSnapshotSuccess.class, save(OURS, SHORT_ID, 2000, "from ours"));
    // (the store sets the timestamp when it saves, as Akka's)
    assertTrue(files().stream().anyMatch(n -> n.matches("snapshot-partition%7Corders-3-2000-[0-9]+")),
        files().toString());
    assertEquals("from ours", load(AKKAS, SHORT_ID, Long.MAX_VALUE).get().snapshot());
    assertEquals("from akka's store", load(OURS, SHORT_ID, 1999).get().snapshot());
    // another id that starts with this one's name and a dash is not this id's
    assertInstanceOf(SaveSnapshotSuccess.class, save(OURS, SHORT_ID + "-5", 3000, "another partition"));
    assertEquals("from ours", load(OURS, SHORT_ID, Long.MAX_VALUE).get().snapshot());
    assertEquals(SHORT_ID + "-5", load(OURS, SHORT_ID + "-5", Long.MAX_VALUE).get().metadata().persistenceId());
  }

  @Test
  void theNameFormSwitchesExactlyWhereAkkasNameStopsFitting() {
    for (int len = 150; len <= 260; len++) {
      String id = "x".repeat(len);
      SnapshotMetadata md = SnapshotMetadata.apply(id, 123_456_789L, 1_700_000_000_000L);
      String akkas = "snapshot-" + id + "-123456789-1700000000000";
      String name = PartitionSnapshotStore.fileName(md);
      if (akkas.length() + 3 <= PartitionSnapshotStore.MAX_NAME_BYTES) {
        assertEquals(akkas, name);
      } else {
        assertEquals("snapshot-" + PartitionSnapshotStore.hashedId(id) + "-123456789-1700000000000", name);
        assertEquals(74, PartitionSnapshotStore.hashedId(id).length() + 9);
      }
    }
  }
}
