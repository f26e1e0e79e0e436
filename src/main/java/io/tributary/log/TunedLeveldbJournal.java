package io.tributary.log;

import akka.dispatch.Futures;
import akka.persistence.AtomicWrite;
import akka.persistence.PersistentRepr;
import akka.persistence.journal.Tagged;
import akka.persistence.journal.leveldb.LeveldbJournal;
import com.typesafe.config.Config;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.BoxedUnit;
import scala.util.Failure;
import scala.util.Success;
import scala.util.Try;

/**
 * Akka's LevelDB journal with LevelDB's table options taken from the plugin config, which Akka's own plugin does not
 * expose (it opens every store with LevelDB's defaults: 4 MiB write buffer, 4 KiB blocks, Snappy, 8 MiB block cache).
 *
 * <p>Plugin config keys, besides Akka's ({@code dir}, {@code fsync}, {@code native}, ...):
 *
 * <ul>
 *   <li>{@code write-buffer-size} (bytes): memtable size; LevelDB keeps up to two per store in memory. Larger means
 *       fewer, larger level-0 tables and less compaction work per byte written.
 *   <li>{@code block-size} (bytes): size of the uncompressed data blocks of a table.
 *   <li>{@code compression} ({@code snappy} or {@code none}): block compression. Snappy shrinks repetitive payloads
 *       on disk; it is wasted CPU on payloads a producer already compressed (lz4, zstd).
 *   <li>{@code cache-size} (bytes): the block cache of reads below the memtables.
 * </ul>
 *
 * <h2>One key per event</h2>
 * Akka's LevelDB store writes, with every event, a counter key {@code (persistenceId, 0)} holding the highest sequence
 * number, besides the event's own key {@code (persistenceId, sequenceNr)}. That counter sits at the start of the
 * persistence id's key range, so every level-0 table LevelDB flushes spans the whole range of the partition's log:
 * all level-0 tables overlap each other and every level-1 table, and each compaction rewrites the partition's data
 * again (measured: Snappy compression and decompression in compactions took ~10% of a broker's CPU at 100 B records,
 * more at 1 KiB). This journal writes only the event keys; the appended keys of one partition are then ascending, new
 * tables do not overlap older ones, and LevelDB moves them down the levels without rewriting them. The highest
 * sequence number is read from the last event key instead ({@link #readHighestSequenceNr}: the larger of that and the
 * counter, which existing stores and deletions still write), so stores written by Akka's journal read the same. A
 * write with tags, or while a persistence query subscribes to changes (neither is used by the broker), goes through
 * Akka's own path unchanged.
 *
 * <p>It is a journal plugin class ({@code class = "io.tributary.log.TunedLeveldbJournal"}), instantiated by Akka
 * Persistence with the plugin's config; confined to its actor like the journal it extends. The options are set on
 * the store's {@link Options} before the journal opens the store (Akka opens it in {@code preStart}).
 *
 * @throws IllegalArgumentException (from the constructor) on an unknown {@code compression} value
 */
public final class TunedLeveldbJournal extends LeveldbJournal {

  /**
   * Creates the journal for the plugin config {@code cfg}.
   *
   * @param cfg the plugin's config (Akka's LevelDB journal keys plus the keys listed on the class)
   */
  public TunedLeveldbJournal(Config cfg) {
    super(cfg);
    apply(leveldbOptions(), cfg);
  }

  /**
   * Writes every event of {@code messages} under its own key, all of them in one LevelDB write batch (one write, as
   * Akka's journal does), without the per-event counter key (see the class comment). An atomic write whose events
   * cannot be serialized is rejected alone ({@code Failure} in its slot, nothing of it written); a failing LevelDB
   * write fails the returned future (Akka then fails every write of the call, as with its own journal). Called on
   * the journal's actor, as every write of Akka's journal.
   *
   * @param messages the atomic writes of one {@code WriteMessages} request, in order
   * @return one {@code Try} per atomic write, in order
   */
  @Override
  public Future<scala.collection.immutable.Seq<Try<BoxedUnit>>> asyncWriteMessages(
      scala.collection.immutable.Seq<AtomicWrite> messages) {
    if (hasPersistenceIdSubscribers() || hasTagSubscribers() || anyTagged(messages)) {
      return super.asyncWriteMessages(messages);
    }
    List<Try<BoxedUnit>> results = new ArrayList<>(messages.size());
    DB db = leveldb();
    try (WriteBatch batch = db.createWriteBatch()) {
      long now = System.currentTimeMillis();
      scala.collection.Iterator<AtomicWrite> writes = messages.iterator();
      List<byte[]> keys = new ArrayList<>();
      List<byte[]> values = new ArrayList<>();
      while (writes.hasNext()) {
        AtomicWrite write = writes.next();
        keys.clear();
        values.clear();
        try {
          scala.collection.Iterator<PersistentRepr> events = write.payload().iterator();
          while (events.hasNext()) {
            PersistentRepr event = events.next();
            values.add(persistentToBytes(event.withTimestamp(now)));
            keys.add(eventKey(numericId(event.persistenceId()), event.sequenceNr()));
          }
        } catch (RuntimeException e) {
          results.add(new Failure<>(e));
          continue;
        }
        for (int i = 0; i < keys.size(); i++) {
          batch.put(keys.get(i), values.get(i));
        }
        results.add(new Success<>(BoxedUnit.UNIT));
      }
      db.write(batch, leveldbWriteOptions());
    } catch (IOException | RuntimeException e) {
      return Futures.failed(e);
    }
    return Futures.successful(CollectionConverters.asScala(results).toList());
  }

  /**
   * The highest sequence number of persistence id {@code nid}: the larger of Akka's counter key (written by Akka's
   * journal before this one, and by {@link #asyncDeleteMessagesTo} here) and the last event key still stored.
   * Called on the journal's actor and on its replay dispatcher; it only reads a LevelDB snapshot.
   */
  @Override
  public long readHighestSequenceNr(int nid) {
    return Math.max(super.readHighestSequenceNr(nid), lastEventSequenceNr(nid));
  }

  /**
   * Records the highest sequence number in the counter key, then deletes as Akka's journal does: once every event
   * is deleted the counter is what keeps the highest sequence number (Akka Persistence never reuses one).
   */
  @Override
  public Future<BoxedUnit> asyncDeleteMessagesTo(String persistenceId, long toSequenceNr) {
    try {
      int nid = numericId(persistenceId);
      leveldb().put(eventKey(nid, 0L), ByteBuffer.allocate(8).putLong(readHighestSequenceNr(nid)).array(),
          leveldbWriteOptions());
    } catch (RuntimeException e) {
      return Futures.failed(e);
    }
    return super.asyncDeleteMessagesTo(persistenceId, toSequenceNr);
  }

  /** The sequence number of the last key of {@code nid} (0 when it has none but the counter): one seek. */
  long lastEventSequenceNr(int nid) {
    ReadOptions ro = leveldbSnapshot();
    try (Snapshot snapshot = ro.snapshot(); DBIterator it = leveldb().iterator(ro)) {
      it.seek(eventKey(nid + 1, 0L));
      Map.Entry<byte[], byte[]> last;
      if (it.hasNext()) {
        last = it.hasPrev() ? it.peekPrev() : null;
      } else {
        it.seekToLast();
        last = it.hasNext() ? it.peekNext() : null;
      }
      if (last == null || last.getKey().length != KEY_BYTES) {
        return 0L;
      }
      ByteBuffer key = ByteBuffer.wrap(last.getKey());
      return key.getInt() == nid ? Math.max(0L, key.getLong()) : 0L;
    } catch (IOException e) {
      throw new IllegalStateException("closing a LevelDB iterator or snapshot failed", e);
    }
  }

  private static final int KEY_BYTES = 20;

  /** Akka's LevelDB key layout: persistence id (int), sequence number (long), mapping id (int, 0 for events). */
  static byte[] eventKey(int nid, long sequenceNr) {
    return ByteBuffer.allocate(KEY_BYTES).putInt(nid).putLong(sequenceNr).putInt(0).array();
  }

  private static boolean anyTagged(scala.collection.immutable.Seq<AtomicWrite> messages) {
    scala.collection.Iterator<AtomicWrite> writes = messages.iterator();
    while (writes.hasNext()) {
      scala.collection.Iterator<PersistentRepr> events = writes.next().payload().iterator();
      while (events.hasNext()) {
        if (events.next().payload() instanceof Tagged) {
          return true;
        }
      }
    }
    return false;
  }

  /** Sets the options {@code cfg} names on {@code options}; keys that are absent keep LevelDB's defaults. */
  static Options apply(Options options, Config cfg) {
    if (cfg.hasPath("write-buffer-size")) {
      options.writeBufferSize((int) cfg.getBytes("write-buffer-size").longValue());
    }
    if (cfg.hasPath("block-size")) {
      options.blockSize((int) cfg.getBytes("block-size").longValue());
    }
    if (cfg.hasPath("cache-size")) {
      options.cacheSize(cfg.getBytes("cache-size"));
    }
    if (cfg.hasPath("compression")) {
      String c = cfg.getString("compression").toLowerCase(Locale.ROOT);
      switch (c) {
        case "snappy" -> options.compressionType(CompressionType.SNAPPY);
        case "none" -> options.compressionType(CompressionType.NONE);
        default -> throw new IllegalArgumentException(
            "journal compression must be snappy or none, was " + cfg.getString("compression"));
      }
    }
    return options;
  }
}
