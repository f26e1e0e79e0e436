package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.persistence.DeleteMessagesSuccess;
import akka.persistence.JournalProtocol;
import akka.persistence.typed.PersistenceId;
import akka.persistence.typed.javadsl.CommandHandler;
import akka.persistence.typed.javadsl.EventHandler;
import akka.persistence.typed.javadsl.EventSourcedBehavior;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.BrokerSettings;
import io.tributary.record.RecordBatch;
import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TunedLeveldbJournalTest {
  private static final String PLUGIN = BrokerSettings.journalPluginId(0);
  private static final String PID = "writer-1";

  @TempDir
  Path dataDir;

  /** Persists the values of each command as one atomic write and answers the sequence number of the last event. */
  static final class Writer extends EventSourcedBehavior<Writer.Write, Object, List<Object>> {
    record Write(List<Object> values, ActorRef<Long> replyTo) {}

    private final ActorContext<Write> ctx;

    private Writer(ActorContext<Write> ctx, String persistenceId) {
      super(PersistenceId.ofUniqueId(persistenceId));
      this.ctx = ctx;
    }

    static Behavior<Write> create(String persistenceId) {
      return Behaviors.setup(ctx -> new Writer(ctx, persistenceId));
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
    public List<Object> emptyState() {
      return new ArrayList<>();
    }

    @Override
    public CommandHandler<Write, Object, List<Object>> commandHandler() {
      return newCommandHandlerBuilder().forAnyState()
          .onCommand(Write.class, (s, w) -> w.values().isEmpty()
              ? Effect().none().thenRun(x -> w.replyTo().tell(lastSequenceNumber(ctx)))
              : Effect().persist(w.values()).thenRun(x -> w.replyTo().tell(lastSequenceNumber(ctx))))
          .build();
    }

    @Override
    public EventHandler<List<Object>, Object> eventHandler() {
      return newEventHandlerBuilder().forAnyState().onAnyEvent((s, e) -> {
        s.add(e);
        return s;
      });
    }
  }

  private ActorTestKit start(String journalClass) {
    return start(journalClass, "");
  }

  /** As {@link #start(String)}, with more config lines (e.g. journal-0's options). */
  private ActorTestKit start(String journalClass, String extra) {
    return ActorTestKit.create("tuned", ConfigFactory.parseString(
            "tributary.data-dir = \"" + dataDir + "\"\n"
                + "tributary.persistence.journal-0.class = \"" + journalClass + "\"\n" + extra)
        .withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve());
  }

  /** Sends {@code values} (empty: only asks) to a fresh writer incarnation and returns its last sequence number. */
  private static long write(ActorTestKit kit, Object... values) {
    return writeAs(kit, PID, values);
  }

  /** As {@link #write}, by a writer of persistence id {@code persistenceId}. */
  private static long writeAs(ActorTestKit kit, String persistenceId, Object... values) {
    TestProbe<Long> probe = kit.createTestProbe();
    ActorRef<Writer.Write> writer = kit.spawn(Writer.create(persistenceId));
    writer.tell(new Writer.Write(List.of(values), probe.getRef()));
    long seqNr = probe.receiveMessage(Duration.ofSeconds(15));
    kit.stop(writer);
    return seqNr;
  }

  /** One stored entry of {@link #PID}: its key's sequence number and mapping id, and its value. */
  private record Entry(long seqNr, int mapping, byte[] value) {}

  /** Every entry of {@link #PID} in journal-0, in key order; call with the store closed. */
  private List<Entry> entriesOfWriter() throws Exception {
    File dir = dataDir.resolve("journal-0").toFile();
    List<Entry> entries = new ArrayList<>();
    try (DB db = JniDBFactory.factory.open(dir, new Options()); DBIterator it = db.iterator()) {
      int nid = PersistenceIdLog.read(dir.toPath()).getOrDefault(PID, -1);
      for (it.seekToFirst(); it.hasNext(); ) {
        Map.Entry<byte[], byte[]> e = it.next();
        ByteBuffer k = ByteBuffer.wrap(e.getKey());
        int id = k.getInt();
        long seqNr = k.getLong();
        int mapping = k.getInt();
        if (id == 1 && PID.equals(new String(e.getValue(), StandardCharsets.UTF_8))) {
          nid = mapping; // Akka's id mapping key (1, 0, nid) -> persistence id, in a store Akka's journal wrote
        } else if (id == nid) {
          entries.add(new Entry(seqNr, mapping, e.getValue()));
        }
      }
    }
    return entries;
  }

  /** The stored values of {@link #PID}'s events (not its counter key), in key order; call with the store closed. */
  private List<byte[]> valuesOfWriter() throws Exception {
    return entriesOfWriter().stream().filter(e -> e.seqNr() > 0).map(Entry::value).toList();
  }

  /** Every key of {@link #PID} in journal-0 as (sequence number, mapping id); call with the store closed. */
  private List<long[]> keysOfWriter() throws Exception {
    return entriesOfWriter().stream().map(e -> new long[] {e.seqNr(), e.mapping()}).toList();
  }

  @Test
  void eventsAreWrittenUnderTheirOwnKeysOnlyAndTheHighestSequenceNumberSurvivesARestart() throws Exception {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(1, write(kit, "a"));
      assertEquals(4, write(kit, "b", "c", "d"), "one atomic write of three events");
      assertEquals(4, write(kit), "a recovered incarnation continues from the stored events");
    } finally {
      kit.shutdownTestKit();
    }
    List<long[]> keys = keysOfWriter();
    assertEquals(List.of(1L, 2L, 3L, 4L), keys.stream().map(k -> k[0]).toList(),
        "one key per event and no counter key (sequence number 0) in front of them");

    ActorTestKit again = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(5, write(again, "e"), "numbering continues after a restart");
    } finally {
      again.shutdownTestKit();
    }
  }

  /** The numeric ids of Akka's mapping keys {@code (1, 0, nid)} in journal-0; call with the store closed. */
  private List<Integer> mappingKeysInStore() throws Exception {
    List<Integer> ids = new ArrayList<>();
    try (DB db = JniDBFactory.factory.open(dataDir.resolve("journal-0").toFile(), new Options());
        DBIterator it = db.iterator()) {
      for (it.seekToFirst(); it.hasNext(); ) {
        ByteBuffer k = ByteBuffer.wrap(it.next().getKey());
        if (k.getInt() == 1) {
          ids.add(k.getInt(12));
        }
      }
    }
    return ids;
  }

  @Test
  void aNewPersistenceIdIsMappedInTheIdFileNotUnderAKeyBelowEveryEvent() throws Exception {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(2, write(kit, "a", "b"));
      assertEquals(1, writeAs(kit, "writer-2", "c"));
    } finally {
      kit.shutdownTestKit();
    }
    assertEquals(List.of(), mappingKeysInStore(), "no mapping key in the store");
    Map<String, Integer> ids = PersistenceIdLog.read(dataDir.resolve("journal-0"));
    assertEquals(Map.of(PID, 10, "writer-2", 11), ids, "Akka's numbering (from 10), in the id file");
    assertEquals(List.of(1L, 2L), keysOfWriter().stream().map(k -> k[0]).toList());

    ActorTestKit again = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(2, write(again), "each writer recovers its own events after a restart");
      assertEquals(1, writeAs(again, "writer-2"));
      assertEquals(1, writeAs(again, "writer-3", "d"), "a third persistence id starts at 1");
    } finally {
      again.shutdownTestKit();
    }
    assertEquals(12, PersistenceIdLog.read(dataDir.resolve("journal-0")).get("writer-3"));
  }

  @Test
  void idsAkkasJournalMappedInTheStoreKeepTheirNumbersAndAreNotHandedOutAgain() throws Exception {
    ActorTestKit akkas = start("akka.persistence.journal.leveldb.LeveldbJournal");
    try {
      assertEquals(2, write(akkas, "a", "b"));
      assertEquals(1, writeAs(akkas, "writer-2", "c"));
    } finally {
      akkas.shutdownTestKit();
    }
    assertEquals(List.of(10, 11), mappingKeysInStore(), "Akka's journal maps ids in the store");
    TunedLeveldbJournal.checkStore(dataDir.resolve("journal-0"), true); // and they count as mapped

    ActorTestKit tuned = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(1, writeAs(tuned, "writer-3", "d"));
      assertEquals(2, write(tuned), "Akka's mapping still finds the first writer's events");
      assertEquals(1, writeAs(tuned, "writer-2"), "and the second's");
    } finally {
      tuned.shutdownTestKit();
    }
    assertEquals(Map.of("writer-3", 12), PersistenceIdLog.read(dataDir.resolve("journal-0")),
        "only the new id is in the file, numbered after Akka's");
    assertEquals(List.of(10, 11), mappingKeysInStore(), "no mapping key added");
  }

  @Test
  void aStoreWhoseEventsTheIdFileDoesNotAllMapIsRefusedAndAnIntactOneIsNot() throws Exception {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(3, write(kit, "a", "b", "c"));
      assertEquals(1, writeAs(kit, "writer-2", "d"));
    } finally {
      kit.shutdownTestKit();
    }
    Path dir = dataDir.resolve("journal-0");
    Path file = dir.resolve(PersistenceIdLog.FILE_NAME);
    TunedLeveldbJournal.checkStore(dir, true); // intact: no error

    byte[] whole = Files.readAllBytes(file);
    Files.write(file, java.util.Arrays.copyOf(whole, whole.length - 3)); // writer-2's entry cut
    IllegalStateException cut =
        assertThrows(IllegalStateException.class, () -> TunedLeveldbJournal.checkStore(dir, true));
    assertTrue(cut.getMessage().startsWith(file + " does not map the numeric id(s) [11]"), cut.getMessage());

    Files.delete(file);
    IllegalStateException lost =
        assertThrows(IllegalStateException.class, () -> TunedLeveldbJournal.checkStore(dir, true));
    assertTrue(lost.getMessage().startsWith(file + " does not map the numeric id(s) [10, 11]"), lost.getMessage());

    Files.write(file, whole);
    TunedLeveldbJournal.checkStore(dir, true);
    TunedLeveldbJournal.checkStore(dataDir.resolve("journal-5"), true); // no store there: nothing to check
  }

  @Test
  void aStoreWrittenByAkkasJournalIsReadAndContinued() throws Exception {
    ActorTestKit akkas = start("akka.persistence.journal.leveldb.LeveldbJournal");
    try {
      assertEquals(2, write(akkas, "a", "b"));
    } finally {
      akkas.shutdownTestKit();
    }
    assertTrue(keysOfWriter().stream().anyMatch(k -> k[0] == 0), "Akka's journal writes a counter key");

    ActorTestKit tuned = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(2, write(tuned), "recovers Akka's events");
      assertEquals(4, write(tuned, "c", "d"));
      assertEquals(4, write(tuned), "the stale counter (2) does not hide the newer events");
    } finally {
      tuned.shutdownTestKit();
    }
  }

  @Test
  void deletingEveryEventKeepsTheHighestSequenceNumber() throws Exception {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(3, write(kit, "a", "b", "c"));
      JournalAccess journal = new JournalAccess((akka.actor.ExtendedActorSystem) Adapter.toClassic(kit.system()));
      TestProbe<Object> probe = kit.createTestProbe();
      journal.journal(PLUGIN).tell(new JournalProtocol.DeleteMessagesTo(PID, Long.MAX_VALUE,
          Adapter.toClassic(probe.getRef())), akka.actor.ActorRef.noSender());
      probe.expectMessageClass(DeleteMessagesSuccess.class, Duration.ofSeconds(15));
    } finally {
      kit.shutdownTestKit();
    }
    assertEquals(List.of(0L), keysOfWriter().stream().map(k -> k[0]).toList(),
        "only the counter is left, holding the highest sequence number");

    ActorTestKit again = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(3, write(again), "no events, but the sequence number is not reset");
      assertEquals(4, write(again, "d"), "and never reused");
    } finally {
      again.shutdownTestKit();
    }
  }

  @Test
  void theJournalConfigOfReferenceConfReachesLevelDbsOptions() {
    var plugin = ConfigFactory.load().getConfig("tributary.persistence.journal-1");
    assertEquals(TunedLeveldbJournal.class.getName(), plugin.getString("class"), "every instance uses the tuned journal");
    Options o = TunedLeveldbJournal.apply(new Options(), plugin);
    assertEquals(plugin.getBytes("write-buffer-size").intValue(), o.writeBufferSize());
    assertEquals(plugin.getBytes("block-size").intValue(), o.blockSize());
    assertEquals(plugin.getBytes("cache-size").longValue(), o.cacheSize());
    assertEquals(CompressionType.NONE, o.compressionType(), "record batches are compressed by the journal itself");
    assertTrue(TunedLeveldbJournal.lz4Events(plugin), "event-compression = lz4");
    assertEquals(0, plugin.getDuration("circuit-breaker.call-timeout").toMillis(),
        "no timeout timer per journal call: writes are synchronous, a timeout could only misreport a slow one");
  }

  @Test
  void aRecordBatchEventIsStoredAsAkkaSerializesItAndReadBackByAkkasReplayAndDirectly() throws Exception {
    byte[] plain = batch("x".repeat(4000));
    byte[] lz4 = RecordBatch.withCompressedRecords(plain,
        new io.tributary.record.Compression.Compressor(io.tributary.record.CompressionType.LZ4,
            io.tributary.record.CompressionType.LZ4.defaultLevel()), 0);
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(3, write(kit, new PartitionLeader.RecordsAppended(plain), "a small event",
          new PartitionLeader.RecordsAppended(lz4)));
      TunedLeveldbJournal store = JournalStores.get(Adapter.toClassic(kit.system())).store(PLUGIN);
      assertEquals(List.of("1:" + "x".repeat(4000), "3:" + "x".repeat(4000)), readDirect(store, 1, 3, 100));
      List<byte[]> stored = new ArrayList<>();
      store.readRecordBatches(PID, 1, 3, (seqNr, b) -> stored.add(b));
      assertArrayEquals(plain, stored.get(0), "the batch's bytes as appended");
      assertArrayEquals(lz4, stored.get(1), "the batch's bytes as appended");
    } finally {
      kit.shutdownTestKit();
    }
    List<byte[]> values = valuesOfWriter();
    assertTrue(values.get(0).length > 4000, "the journal does not compress: " + values.get(0).length + " bytes");
    assertTrue(values.get(2).length < 1000, "an lz4 batch stays small: " + values.get(2).length + " bytes");
    for (byte[] v : values) {
      assertTrue(v[0] != TunedLeveldbJournal.COMPRESSED_EVENT, "every event is Akka's protobuf (no event-level LZ4)");
    }

    // a restarted writer replays the three events through Akka's recovery (persistentFromBytes): a failed replay
    // would stop it before it answers
    ActorTestKit again = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(3, write(again), "recovered the three events");
      assertEquals(4, write(again, "c"), "and goes on");
    } finally {
      again.shutdownTestKit();
    }
  }

  @Test
  void eventsStoredInTheEarlierEventLevelLz4FormAreStillReadByAkkasReplayAndDirectly() throws Exception {
    byte[] big = batch("y".repeat(4000));
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName(), "tributary.persistence.journal-0.event-compression = none");
    try {
      assertEquals(1, write(kit, new PartitionLeader.RecordsAppended(big)));
    } finally {
      kit.shutdownTestKit();
    }
    // rewrite the event as the journal stored it before record batches were compressed themselves
    File dir = dataDir.resolve("journal-0").toFile();
    Entry event = entriesOfWriter().stream().filter(e -> e.seqNr() == 1).findFirst().orElseThrow();
    byte[] oldForm = TunedLeveldbJournal.compress(event.value());
    assertEquals(TunedLeveldbJournal.COMPRESSED_EVENT, oldForm[0]);
    try (DB db = JniDBFactory.factory.open(dir, new Options()); DBIterator it = db.iterator()) {
      for (it.seekToFirst(); it.hasNext(); ) {
        Map.Entry<byte[], byte[]> e = it.next();
        if (java.util.Arrays.equals(e.getValue(), event.value())) {
          db.put(e.getKey(), oldForm);
        }
      }
    }
    assertArrayEquals(oldForm, valuesOfWriter().get(0));

    ActorTestKit again = start(TunedLeveldbJournal.class.getName());
    try {
      assertEquals(1, write(again), "Akka's recovery replays it");
      TunedLeveldbJournal store = JournalStores.get(Adapter.toClassic(again.system())).store(PLUGIN);
      List<byte[]> read = new ArrayList<>();
      store.readRecordBatches(PID, 1, 1, (seqNr, b) -> read.add(b));
      assertEquals(1, read.size());
      assertArrayEquals(big, read.get(0), "the batch as it was appended");
      assertEquals(2, write(again, "z"), "and goes on");
    } finally {
      again.shutdownTestKit();
    }
  }

  @Test
  void anIncompressibleBatchIsStoredUncompressedAndACorruptCompressedEventIsAnError() {
    byte[] noise = new byte[4000];
    new java.util.Random(7).nextBytes(noise);
    assertArrayEquals(noise, TunedLeveldbJournal.compress(noise), "random bytes do not shrink: stored as they are");
    byte[] text = "abc".repeat(1000).getBytes(StandardCharsets.UTF_8);
    byte[] packed = TunedLeveldbJournal.compress(text);
    assertTrue(packed.length < text.length / 8, "compressible: " + packed.length);
    assertArrayEquals(text, TunedLeveldbJournal.uncompressed(packed));
    assertArrayEquals(noise, TunedLeveldbJournal.uncompressed(noise), "an uncompressed event is returned as it is");
    byte[] cut = java.util.Arrays.copyOf(packed, packed.length - 4);
    assertThrows(IllegalStateException.class, () -> TunedLeveldbJournal.uncompressed(cut));
    byte[] lying = packed.clone();
    lying[1] = (byte) (lying[1] + 1); // the recorded length no longer matches
    assertThrows(IllegalStateException.class, () -> TunedLeveldbJournal.uncompressed(lying));
    assertThrows(IllegalStateException.class, () -> TunedLeveldbJournal.uncompressed(new byte[] {0, (byte) 0x80}));
  }

  @Test
  void explicitValuesAreApplied() {
    Options o = TunedLeveldbJournal.apply(new Options(), ConfigFactory.parseString(
        "write-buffer-size = 16 MiB, block-size = 64 KiB, compression = NONE, cache-size = 1 MiB"));
    assertEquals(16 << 20, o.writeBufferSize());
    assertEquals(64 << 10, o.blockSize());
    assertEquals(CompressionType.NONE, o.compressionType());
    assertEquals(1 << 20, o.cacheSize());
  }

  @Test
  void anUnknownCompressionIsAClearError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TunedLeveldbJournal.apply(new Options(), ConfigFactory.parseString("compression = lz4")));
    assertEquals("journal compression must be snappy or none, was lz4", e.getMessage());
  }

  private static byte[] batch(String value) {
    io.tributary.record.RecordBatchBuilder b = new io.tributary.record.RecordBatchBuilder();
    b.append(1_000L, null, value.getBytes(StandardCharsets.UTF_8), null);
    return b.build();
  }

  /** Reads {@code from..to} of {@link #PID} straight from the store: "seqNr:value" per batch. */
  private static List<String> readDirect(TunedLeveldbJournal store, long from, long to, int stopAfter) {
    List<String> read = new ArrayList<>();
    store.readRecordBatches(PID, from, to, (seqNr, batch) -> {
      for (io.tributary.record.Record r : io.tributary.record.RecordBatch.validate(batch)) {
        read.add(seqNr + ":" + new String(r.value(), StandardCharsets.UTF_8));
      }
      return read.size() < stopAfter;
    });
    return read;
  }

  @Test
  void recordBatchesAreReadStraightFromTheStoreInOrderWithinTheRangeAndOtherEventsAreSkipped() {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    TunedLeveldbJournal store;
    try {
      assertEquals(4, write(kit, new PartitionLeader.RecordsAppended(batch("a")), "not a batch",
          new PartitionLeader.RecordsAppended(batch("b")), new PartitionLeader.RecordsAppended(batch("c"))));
      assertEquals(5, write(kit, new PartitionLeader.RecordsAppended(batch("d"))));
      store = JournalStores.get(Adapter.toClassic(kit.system())).store(PLUGIN);
      assertTrue(store != null, "the open journal is registered under its plugin id");
      assertEquals(List.of("1:a", "3:b", "4:c", "5:d"), readDirect(store, 1, Long.MAX_VALUE, 100));
      assertEquals(List.of("3:b", "4:c"), readDirect(store, 2, 4, 100), "from..to, both inclusive");
      assertEquals(List.of("1:a", "3:b"), readDirect(store, 0, 5, 2), "the visitor stops the read");
      assertEquals(List.of(), readDirect(store, 6, 10, 100), "nothing past the last event");
      List<String> none = new ArrayList<>();
      store.readRecordBatches("never-written", 1, 10, (seqNr, b) -> none.add("x"));
      assertEquals(List.of(), none, "an unknown persistence id has no batches");
    } finally {
      kit.shutdownTestKit();
    }
    assertThrows(TunedLeveldbJournal.StoreClosedException.class, () -> readDirect(store, 1, 5, 100),
        "a stopped journal's store is closed to readers");
  }

  @Test
  void theRecordBatchOfAJournaledEventIsFoundInAkkasMessageFormatAndGarbageIsAnError() {
    ActorTestKit kit = start(TunedLeveldbJournal.class.getName());
    try {
      akka.serialization.Serialization ser = akka.serialization.SerializationExtension.get(Adapter.toClassic(kit.system()));
      byte[] b = batch("x");
      byte[] event = ser.serialize(akka.persistence.PersistentRepr.apply(new PartitionLeader.RecordsAppended(b), 7L,
          PID, "", false, null, "writer-uuid").withTimestamp(123L)).get();
      assertArrayEquals(b, TunedLeveldbJournal.recordBatchOf(event));
      byte[] other = ser.serialize(akka.persistence.PersistentRepr.apply("text", 8L, PID, "", false, null, "w")).get();
      assertEquals(null, TunedLeveldbJournal.recordBatchOf(other), "an event that is not a record batch");
      assertThrows(IllegalStateException.class,
          () -> TunedLeveldbJournal.recordBatchOf(java.util.Arrays.copyOf(event, event.length / 2)), "cut in the batch");
      assertThrows(IllegalStateException.class,
          () -> TunedLeveldbJournal.recordBatchOf(new byte[] {(byte) 0x0a, (byte) 0xff, (byte) 0xff}), "garbage");
    } finally {
      kit.shutdownTestKit();
    }
  }
}
