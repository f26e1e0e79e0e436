package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchResponse;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Retention, restarts on the same data directory, snapshots, topic metadata durability. */
class RetentionAndRestartTest {

  /** Bytes of the regular files under {@code dir}; a file LevelDB deletes during the walk (a compaction) counts 0. */
  static long dirSize(Path dir) {
    long[] total = new long[1];
    try {
      Files.walkFileTree(dir, new java.nio.file.SimpleFileVisitor<Path>() {
        @Override
        public java.nio.file.FileVisitResult visitFile(Path file, java.nio.file.attribute.BasicFileAttributes attrs) {
          if (attrs.isRegularFile()) {
            total[0] += attrs.size();
          }
          return java.nio.file.FileVisitResult.CONTINUE;
        }

        @Override
        public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
          return java.nio.file.FileVisitResult.CONTINUE; // deleted between listing and reading: gone
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return total[0];
  }

  /** Polls {@code check} until it holds, up to 60 s (an event we cannot subscribe to: a timer-driven retention run). */
  static void await(String what, java.util.function.BooleanSupplier check) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!check.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private static List<Record> readAll(Gw gw, String topic, int partition, long from) {
    List<Record> out = new ArrayList<>();
    long next = from;
    while (true) {
      FetchResponse r = gw.fetch(topic, partition, next, 1 << 20, 0);
      assertEquals(ErrorCode.NONE, r.error(), r.errorMessage());
      if (r.batches().isEmpty()) {
        return out;
      }
      for (byte[] b : r.batches()) {
        for (Record rec : RecordBatch.validate(b)) {
          if (rec.offset() >= next) {
            out.add(rec);
          }
        }
      }
      next = out.get(out.size() - 1).offset() + 1;
    }
  }

  @Test
  void sizeRetentionAdvancesLogStartAndKeepsDiskUseBounded() {
    Path dir = TestNodes.tempDataDir();
    try (BrokerNode node = TestNodes.start(dir, Map.of(
        "tributary.broker.log.retention.check.interval.ms", 100,
        "tributary.journal.instances", 1))) {
      Gw gw = new Gw(node);
      assertEquals(ErrorCode.NONE, gw.create("ret-bytes", 1, Map.of("retention.bytes", "1048576")).error());
      // incompressible values (each record its own), so neither the stored LZ4 batches nor LevelDB hide growth;
      // retention counts the bytes as stored
      java.util.Random random = new java.util.Random(1);
      long produced = 0;
      List<Long> sizes = new ArrayList<>();
      for (int round = 0; round < 12; round++) {
        // read before the round: the 100 ms retention check may run (and do all it can) while the round is produced
        long startBeforeRound = gw.status("ret-bytes", 0).logStartOffset();
        for (int i = 0; i < 32; i++) { // 32 batches of 32 records of ~1 KB: ~1 MB per round
          io.tributary.record.RecordBatchBuilder b = new io.tributary.record.RecordBatchBuilder();
          for (int j = 0; j < 32; j++) {
            byte[] value = new byte[1000];
            random.nextBytes(value);
            b.append(System.currentTimeMillis(), null, value, null);
          }
          byte[] batch = b.build();
          produced += batch.length;
          assertEquals(ErrorCode.NONE, gw.produce("ret-bytes", 0, batch).error());
        }
        if (round >= 2) { // ~2 MB retained before retention: it drops ~1 MB of this round's batches' worth
          await("retention moves the log start offset",
              () -> gw.status("ret-bytes", 0).logStartOffset() > startBeforeRound);
        }
        sizes.add(dirSize(dir.resolve("journal-0")));
      }
      PartitionLeader.PartitionStatus st = gw.status("ret-bytes", 0);
      assertTrue(st.logStartOffset() > 0);
      assertTrue(st.sizeInBytes() < 2 * 1048576 + 70_000, "retained " + st.sizeInBytes());
      assertEquals(ErrorCode.OFFSET_OUT_OF_RANGE, gw.fetch("ret-bytes", 0, 0, 1024, 0).error());
      // the 100 ms check may still be dropping the last round's surplus: a fetch at the log start offset read just
      // before it can meet a newer one; the fetch must succeed at the log start offset of its moment
      await("a fetch at the log start offset succeeds", () ->
          gw.fetch("ret-bytes", 0, gw.status("ret-bytes", 0).logStartOffset(), 1024, 0).error() == ErrorCode.NONE);
      // the journal gives disk space back: after 12 MB produced, it holds a small multiple of retention.bytes
      System.out.println("retention.bytes=1 MiB: journal bytes after each ~1 MB round " + sizes + ", produced "
          + produced + ", log start offset " + st.logStartOffset());
      long last = sizes.get(sizes.size() - 1);
      assertTrue(last < produced / 2, "journal " + last + " bytes after " + produced + " produced; sizes " + sizes);
    }
  }

  @Test
  void timeRetentionDeletesExpiredBatches() {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(),
        Map.of("tributary.broker.log.retention.check.interval.ms", 100, "tributary.broker.index.interval.bytes", 1))) {
      Gw gw = new Gw(node);
      gw.create("ret-time", 1, Map.of("retention.ms", "3600000"));
      long now = System.currentTimeMillis();
      gw.produce("ret-time", 0, Gw.batch("old", 5, now - 7_200_000)); // two hours old: expired
      gw.produce("ret-time", 0, Gw.batch("new", 5, now));
      await("expired batch deleted", () -> gw.status("ret-time", 0).logStartOffset() == 5);
      List<Record> left = readAll(gw, "ret-time", 0, 5);
      assertEquals(5, left.size());
      assertEquals("new0", new String(left.get(0).value(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void restartKeepsRecordsOffsetsAndTopics() {
    Path dir = TestNodes.tempDataDir();
    Map<String, Object> cfg = Map.of("tributary.log.snapshot-every-batches", 7);
    try (BrokerNode node = TestNodes.start(dir, cfg)) {
      Gw gw = new Gw(node);
      assertEquals(ErrorCode.NONE, gw.create("durable", 3, Map.of("retention.ms", "-1")).error());
      for (int i = 0; i < 25; i++) {
        assertEquals(ErrorCode.NONE, gw.produce("durable", i % 3, Gw.batch("b" + i + "-", 4, 1000 + i)).error());
      }
    }
    try (BrokerNode node = TestNodes.start(dir, cfg)) {
      Gw gw = new Gw(node);
      assertEquals(List.of("durable"), gw.list());
      AdminResponse dup = gw.create("durable", 3, Map.of());
      assertEquals(ErrorCode.TOPIC_ALREADY_EXISTS, dup.error());
      List<Record> p0 = readAll(gw, "durable", 0, 0);
      assertEquals(36, p0.size()); // batches 0,3,...,24: 9 batches of 4
      for (int i = 0; i < p0.size(); i++) {
        assertEquals(i, p0.get(i).offset());
        assertEquals("b" + (3 * (i / 4)) + "-" + (i % 4), new String(p0.get(i).value(), StandardCharsets.UTF_8));
      }
      // offsets continue after the restart
      assertEquals(36, gw.produce("durable", 0, Gw.batch("after", 1, 5000)).baseOffset());
    }
  }

  /**
   * A topic with the longest legal name (249 characters) snapshots (its persistence id is too long for Akka's snapshot
   * file name, so its snapshots failed, and retention never deleted its journal events) and recovers from it.
   */
  @Test
  void aTopicWithTheLongestLegalNameSnapshotsAndRecovers() throws Exception {
    String topic = "L".repeat(io.tributary.protocol.TopicNames.MAX_LENGTH);
    Path dir = TestNodes.tempDataDir();
    Map<String, Object> cfg = Map.of("tributary.log.snapshot-every-batches", 7);
    try (BrokerNode node = TestNodes.start(dir, cfg)) {
      Gw gw = new Gw(node);
      assertEquals(ErrorCode.NONE, gw.create(topic, 1, Map.of("retention.ms", "-1")).error());
      for (int i = 0; i < 25; i++) {
        assertEquals(ErrorCode.NONE, gw.produce(topic, 0, Gw.batch("b" + i + "-", 4, 1000 + i)).error());
      }
      await("a snapshot of the long-named partition", () -> {
        try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("snapshots"))) {
          return files.anyMatch(f -> f.getFileName().toString().startsWith("snapshot-~"));
        } catch (java.io.IOException e) {
          return false;
        }
      });
    }
    try (BrokerNode node = TestNodes.start(dir, cfg)) {
      Gw gw = new Gw(node);
      List<Record> all = readAll(gw, topic, 0, 0);
      assertEquals(100, all.size());
      for (int i = 0; i < all.size(); i++) {
        assertEquals(i, all.get(i).offset());
        assertEquals("b" + (i / 4) + "-" + (i % 4), new String(all.get(i).value(), StandardCharsets.UTF_8));
      }
      assertEquals(100, gw.produce(topic, 0, Gw.batch("after", 1, 5000)).baseOffset());
    }
  }

  @Test
  void deletedTopicIsGoneAndARecreatedOneStartsAtZero() {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of())) {
      Gw gw = new Gw(node);
      gw.create("cycle", 1, Map.of());
      gw.produce("cycle", 0, Gw.batch("first", 3, 1000));
      assertEquals(ErrorCode.NONE, gw.delete("cycle").error());
      assertEquals(List.of(), gw.list());
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.produce("cycle", 0, Gw.batch("x", 1, 1)).error());
      assertEquals(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, gw.delete("cycle").error());
      assertEquals(ErrorCode.NONE, gw.create("cycle", 1, Map.of()).error());
      assertEquals(0, gw.produce("cycle", 0, Gw.batch("second", 2, 1000)).baseOffset());
      List<Record> all = readAll(gw, "cycle", 0, 0);
      assertEquals(2, all.size());
      assertEquals("second0", new String(all.get(0).value(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void aSecondNodeOnTheSameDataDirFailsAtOnceAndTheFirstIsUnharmed() {
    Path dir = TestNodes.tempDataDir();
    try (BrokerNode first = TestNodes.start(dir, Map.of())) {
      Gw gw = new Gw(first);
      gw.create("kept", 1, Map.of());
      BrokerNode.DataDirInUseException e = org.junit.jupiter.api.Assertions.assertThrows(
          BrokerNode.DataDirInUseException.class, () -> TestNodes.start(dir, Map.of()));
      assertTrue(e.getMessage().contains("in use by another Tributary broker"), e.getMessage());
      assertEquals(ErrorCode.NONE, gw.produce("kept", 0, Gw.batch("x", 1, 1000)).error());
    }
    try (BrokerNode again = TestNodes.start(dir, Map.of())) { // the lock is released on close
      assertEquals(List.of("kept"), new Gw(again).list());
    }
  }

  /**
   * A journal whose persistence id file lost the mapping of a partition it stores (the file cut, deleted or
   * replaced) would start that partition empty or give its events to the next new partition: the broker refuses to
   * start, at once and naming the file, and the stored data is still there once the file is back.
   */
  @Test
  void aLostPersistenceIdMappingFailsTheStartAtOnceAndLosesNothing() throws Exception {
    Path dir = TestNodes.tempDataDir();
    try (BrokerNode node = TestNodes.start(dir, Map.of())) {
      Gw gw = new Gw(node);
      assertEquals(ErrorCode.NONE, gw.create("mapped", 4, Map.of()).error());
      for (int p = 0; p < 4; p++) {
        assertEquals(ErrorCode.NONE, gw.produce("mapped", p, Gw.batch("m" + p + "-", 3, 1000)).error());
      }
    }
    Path file = null;
    byte[] kept = null;
    for (int i = 0; i < 8 && file == null; i++) {
      Path f = dir.resolve("journal-" + i).resolve("persistence-ids");
      if (Files.exists(f) && new String(Files.readAllBytes(f), StandardCharsets.UTF_8).contains("mapped-")) {
        file = f;
        kept = Files.readAllBytes(f);
      }
    }
    assertTrue(file != null, "a journal maps a partition of the topic");
    Files.write(file, java.util.Arrays.copyOf(kept, kept.length - 3)); // the last entry cut: a partition unmapped
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalStateException.class, () -> TestNodes.start(dir, Map.of()));
    assertTrue(e.getMessage().startsWith("journal-") && e.getMessage().contains(file + " does not map the numeric id"),
        e.getMessage());
    assertTrue(Files.size(file) == kept.length - 3, "the check changes nothing");

    Files.write(file, kept);
    try (BrokerNode node = TestNodes.start(dir, Map.of())) {
      Gw gw = new Gw(node);
      for (int p = 0; p < 4; p++) {
        List<Record> all = readAll(gw, "mapped", p, 0);
        assertEquals(3, all.size(), "partition " + p);
        assertEquals("m" + p + "-0", new String(all.get(0).value(), StandardCharsets.UTF_8));
      }
    }
  }

  /**
   * Partitions belong in the journal their name hashes to: a persistence id file moved to another journal, or a
   * changed {@code tributary.journal.instances}, would start those partitions empty; the start is refused instead.
   */
  @Test
  void aMovedIdFileOrChangedJournalInstancesFailsTheStart() throws Exception {
    Path dir = TestNodes.tempDataDir();
    try (BrokerNode node = TestNodes.start(dir, Map.of())) {
      assertEquals(ErrorCode.NONE, new Gw(node).create("placed", 8, Map.of()).error());
    }
    Path f0 = dir.resolve("journal-0").resolve("persistence-ids");
    Path f1 = dir.resolve("journal-1").resolve("persistence-ids");
    byte[] b0 = Files.readAllBytes(f0);
    byte[] b1 = Files.readAllBytes(f1);
    Files.write(f0, b1);
    Files.write(f1, b0);
    IllegalStateException swapped = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalStateException.class, () -> TestNodes.start(dir, Map.of()));
    assertTrue(swapped.getMessage().contains("journal-0/persistence-ids maps partition ")
        && swapped.getMessage().contains("the file was moved from another journal"), swapped.getMessage());
    Files.write(f0, b0);
    Files.write(f1, b1);

    IllegalStateException fewer = org.junit.jupiter.api.Assertions.assertThrows(
        IllegalStateException.class, () -> TestNodes.start(dir, Map.of("tributary.journal.instances", 2)));
    assertTrue(fewer.getMessage().contains("with tributary.journal.instances = 2"), fewer.getMessage());

    try (BrokerNode node = TestNodes.start(dir, Map.of())) { // as it was: starts
      assertEquals(List.of("placed"), new Gw(node).list());
    }
  }

  @Test
  void topicAdminRejectsBadRequestsWithTypedErrors() {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of())) {
      Gw gw = new Gw(node);
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, gw.create("has space", 1, Map.of()).error());
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, gw.create("..", 1, Map.of()).error());
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, gw.create("x".repeat(250), 1, Map.of()).error());
      assertEquals(ErrorCode.NONE, gw.create("x".repeat(249), 1, Map.of()).error());
      assertEquals(ErrorCode.INVALID_PARTITIONS, gw.create("zero", 0, Map.of()).error());
      assertEquals(ErrorCode.INVALID_PARTITIONS, gw.create("negative", -3, Map.of()).error());
      assertEquals(ErrorCode.INVALID_PARTITIONS, gw.create("huge", 100_000, Map.of()).error(),
          "above max.partitions.per.topic");
      assertEquals(ErrorCode.INVALID_CONFIG, gw.create("cfg", 1, Map.of("retention.ms", "soon")).error());
      assertEquals(ErrorCode.INVALID_CONFIG, gw.create("cfg", 1, Map.of("no.such.key", "1")).error());
      AdminResponse rf = gw.<AdminResponse>ask(
          r -> new io.tributary.protocol.AdminRequest.CreateTopic((short) 0, "rf", 1, (short) 2, Map.of(), r));
      assertEquals(ErrorCode.INVALID_REPLICATION_FACTOR, rf.error());
      AdminResponse version = gw.<AdminResponse>ask(
          r -> new io.tributary.protocol.AdminRequest.ListTopics((short) 99, false, r));
      assertEquals(ErrorCode.UNSUPPORTED_VERSION, version.error());
      assertEquals(List.of("x".repeat(249)), gw.list());
    }
  }
}
