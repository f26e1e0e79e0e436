package io.tributary.log;

import akka.actor.ActorRef;
import akka.dispatch.Futures;
import akka.persistence.AtomicWrite;
import akka.persistence.JournalProtocol;
import akka.persistence.PersistentRepr;
import akka.persistence.journal.Tagged;
import akka.persistence.journal.leveldb.LeveldbJournal;
import com.typesafe.config.Config;
import io.tributary.record.RecordBatch;
import io.tributary.serialization.TributarySerializer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBException;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.impl.Iq80DBFactory;
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
 *   <li>{@code event-compression} ({@code lz4} or {@code none}): see "Compressed record batches" below.
 * </ul>
 *
 * <h2>Compressed record batches</h2>
 * With {@code event-compression = lz4}, the partition leaders whose partitions this journal holds append a record
 * batch whose records are not compressed already (the producer's {@code compression.type=none}) as an LZ4 record batch
 * (Kafka's format, codec 3), when that saves at least an eighth (see {@code PartitionLeader.storedForm}): LevelDB then
 * copies, checksums and writes fewer bytes (write-ahead log, memtable, tables), and fetches are served as stored
 * (compressed over the network, decompressed by the consumer). The journal itself stores every event as Akka
 * serializes it. Stores written before this, whose record batch events were LZ4-compressed as a whole (byte {@code 0},
 * which never starts Akka's protobuf message, the uncompressed length as an unsigned varint, then an LZ4 block of the
 * event), are still read ({@link #persistentFromBytes}, {@link #readRecordBatches}); the setting can change at any
 * time.
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
 * <p>For the same reason a new persistence id's numeric id is recorded in a file beside the store
 * ({@link PersistenceIdLog}), not under Akka's mapping key {@code (1, 0, numericId)}: that key sits below every event
 * key, so the first table flushed after a partition is created would span the whole store and its compaction rewrite
 * every table it overlaps. Ids Akka's journal (or an earlier version of this one) mapped in the store are still read
 * from there and keep their numbers; a store with such a file is not readable by Akka's own journal.
 *
 * <p>It is a journal plugin class ({@code class = "io.tributary.log.TunedLeveldbJournal"}), instantiated by Akka
 * Persistence with the plugin's config; confined to its actor like the journal it extends. The options are set on
 * the store's {@link Options} before the journal opens the store (Akka opens it in {@code preStart}).
 *
 * <h2>Direct reads</h2>
 * Once its store is open, the journal registers itself in {@link JournalStores} under its plugin id, and partitions
 * read their record batches with {@link #readRecordBatches} on their own read threads: one LevelDB iterator over the
 * event keys, no replay protocol (Akka's replay reads the highest sequence number first, copies every event out of
 * LevelDB twice, deserializes it into a {@code PersistentRepr} and sends one message per event). The journal leaves
 * the registry and waits for reads in progress before it closes the store.
 *
 * @throws IllegalArgumentException (from the constructor) on an unknown {@code compression} value
 */
public final class TunedLeveldbJournal extends LeveldbJournal {

  /** Thrown by {@link #readRecordBatches} once the journal has closed its store (the node is stopping). */
  public static final class StoreClosedException extends IllegalStateException {
    StoreClosedException(String pluginId) {
      super("journal " + pluginId + " is closed");
    }
  }

  /** Receives the record batches of {@link #readRecordBatches}, in sequence number order. */
  @FunctionalInterface
  public interface BatchVisitor {
    /**
     * One record batch (Kafka's v2 format, as appended), journaled at {@code seqNr}.
     *
     * @return whether to go on reading
     */
    boolean visit(long seqNr, byte[] batch);
  }

  private final String pluginId;
  private final boolean publishPluginCommands;
  // readers hold the read lock while they use the store; postStop takes the write lock before the store closes
  private final ReentrantReadWriteLock storeLock = new ReentrantReadWriteLock();
  private boolean storeOpen; // guarded by storeLock

  /**
   * Creates the journal for the plugin config {@code cfg}; it is not registered in {@link JournalStores} (no plugin
   * id), so only Akka's replay reads it.
   *
   * @param cfg the plugin's config (Akka's LevelDB journal keys plus the keys listed on the class)
   */
  public TunedLeveldbJournal(Config cfg) {
    this(cfg, null);
  }

  /**
   * Creates the journal for the plugin config {@code cfg} at config path {@code pluginId} (the constructor Akka
   * Persistence calls), registered in {@link JournalStores} under {@code pluginId} while its store is open.
   *
   * @param cfg the plugin's config (Akka's LevelDB journal keys plus the keys listed on the class)
   * @param pluginId the plugin's config path, e.g. {@code tributary.persistence.journal-0}
   */
  public TunedLeveldbJournal(Config cfg, String pluginId) {
    super(cfg);
    this.pluginId = pluginId;
    this.publishPluginCommands =
        akka.persistence.Persistence.get(context().system()).settings().internal().publishPluginCommands();
    apply(leveldbOptions(), cfg);
    lz4Events(cfg); // refuses an unknown event-compression here, before any leader reads it
  }

  /**
   * Opens the store (Akka's journal, which reads the id mappings stored in it), reads the id mappings of the
   * {@link PersistenceIdLog}, then registers the store for direct reads.
   *
   * @throws IllegalStateException if the persistence id file cannot be read or is corrupt (the journal fails to
   *     start: a broker must not guess which partition's events are which)
   */
  @Override
  public void preStart() {
    super.preStart();
    openIds();
    storeLock.writeLock().lock();
    try {
      storeOpen = true;
    } finally {
      storeLock.writeLock().unlock();
    }
    if (pluginId != null) {
      JournalStores.get(context().system()).register(pluginId, this);
    }
  }

  /** Leaves the registry, waits for direct reads in progress, then closes the store (Akka's journal). */
  @Override
  public void postStop() {
    if (pluginId != null) {
      JournalStores.get(context().system()).unregister(pluginId, this);
    }
    storeLock.writeLock().lock();
    try {
      storeOpen = false;
    } finally {
      storeLock.writeLock().unlock();
    }
    synchronized (idLock) {
      if (idLog != null) {
        try {
          idLog.close();
        } catch (IOException e) {
          context().system().log().warning("closing {} failed: {}", idLog.file(), e.getMessage());
        }
        idLog = null;
      }
    }
    super.postStop();
  }

  // --- persistence id mapping (see PersistenceIdLog)

  private final Object idLock = new Object();
  private final Map<String, Integer> ids = new HashMap<>(); // guarded by idLock
  private int nextId; // guarded by idLock
  private PersistenceIdLog idLog; // guarded by idLock; null before preStart and after postStop

  /** Akka's first numeric id ({@code LeveldbIdMapping.idOffset}); 1 is its mapping keys' own. */
  private static final int FIRST_ID = 10;

  private void openIds() {
    synchronized (idLock) {
      scala.collection.Iterator<String> old = super.allPersistenceIds().iterator();
      while (old.hasNext()) {
        String id = old.next();
        ids.put(id, super.numericId(id)); // known to Akka's mapping: no write
      }
      PersistenceIdLog log = null;
      try {
        log = PersistenceIdLog.open(leveldbDir().toPath(), ids);
        requireMapped(leveldb(), ids.values(), leveldbDir().toPath());
      } catch (IOException e) {
        closeQuietly(log);
        throw new IllegalStateException("journal " + pluginId + ": " + e.getMessage(), e);
      }
      idLog = log;
      int max = FIRST_ID - 1;
      for (int id : ids.values()) {
        max = Math.max(max, id);
      }
      nextId = max + 1; // requireMapped: every id the store holds keys of is mapped, so none is handed out again
    }
  }

  private static void closeQuietly(PersistenceIdLog log) {
    if (log != null) {
      try {
        log.close();
      } catch (IOException e) {
        // failing already; the first error is the one to report
      }
    }
  }

  /**
   * Checks, before a broker starts its journals, that the LevelDB store in {@code dir} (a journal's {@code dir}) and
   * its {@link PersistenceIdLog} agree: the file reads, and every numeric id the store holds keys of is mapped (by the
   * file, or by Akka's mapping keys in the store). Opens the store and closes it again; does nothing if {@code dir}
   * holds no store. Call it with the data directory locked and before the journal opens the store.
   *
   * @param nativeLeveldb the journal's {@code native} setting (leveldbjni, or the Java port)
   * @throws IllegalStateException naming the file or the unmapped ids, if the file is corrupt or mappings are
   *     missing (the journal would refuse to start; a broker should not start half-way); or if LevelDB cannot open
   *     the store
   */
  public static void checkStore(Path dir, boolean nativeLeveldb) {
    if (!Files.exists(dir.resolve("CURRENT"))) {
      return; // no store yet
    }
    DBFactory factory = nativeLeveldb ? JniDBFactory.factory
        : Iq80DBFactory.factory;
    try (DB db = factory.open(dir.toFile(), new Options().createIfMissing(false))) {
      Set<Integer> mapped = new HashSet<>(PersistenceIdLog.read(dir).values());
      try (DBIterator it = db.iterator()) {
        for (it.seek(eventKey(MAPPING_ID, 0L)); it.hasNext(); ) {
          ByteBuffer key = ByteBuffer.wrap(it.next().getKey());
          if (key.remaining() < KEY_BYTES || key.getInt() != MAPPING_ID) {
            break;
          }
          mapped.add(key.getInt(12)); // Akka's mapping key (1, 0, id)
        }
      }
      requireMapped(db, mapped, dir);
    } catch (IOException | DBException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** Akka's mapping keys' persistence id ({@code Key.mappingKey}). */
  private static final int MAPPING_ID = 1;

  /**
   * Fails if {@code db} holds keys of a numeric id (10 and above) that {@code mapped} does not name: one seek per
   * id.
   *
   * @throws IOException naming the ids and {@code dir}'s id file
   */
  static void requireMapped(DB db, Collection<Integer> mapped, Path dir) throws IOException {
    Set<Integer> known = new HashSet<>(mapped);
    List<Integer> unmapped = new ArrayList<>();
    try (DBIterator it = db.iterator()) {
      for (it.seek(eventKey(FIRST_ID, 0L)); it.hasNext(); ) {
        byte[] key = it.next().getKey();
        if (key.length < 4) {
          break;
        }
        int id = ByteBuffer.wrap(key).getInt();
        if (!known.contains(id)) {
          unmapped.add(id);
        }
        if (id == Integer.MAX_VALUE) {
          break;
        }
        it.seek(eventKey(id + 1, 0L)); // the next id's first key
      }
    }
    if (!unmapped.isEmpty()) {
      throw new IOException(dir.resolve(PersistenceIdLog.FILE_NAME) + " does not map the numeric id(s) " + unmapped
          + " whose events the store holds (the file was lost, cut or replaced): refusing to start rather than give"
          + " those partitions' logs to others or start them empty");
    }
  }

  /**
   * The numeric id of {@code persistenceId} in this store's keys; a new persistence id gets the next one, recorded
   * in the {@link PersistenceIdLog} (forced to disk) instead of under Akka's mapping key in the store. Ids that
   * Akka's journal mapped in the store keep their numbers. Thread-safe (the journal's actor, its replay dispatcher,
   * and the direct readers call it).
   *
   * @throws IllegalStateException if the journal is not open, or the id file cannot be written (then nothing is
   *     mapped, and the write or read that asked fails)
   */
  @Override
  public int numericId(String persistenceId) {
    synchronized (idLock) {
      Integer known = ids.get(persistenceId);
      if (known != null) {
        return known;
      }
      if (idLog == null) {
        throw new StoreClosedException(pluginId);
      }
      int id = nextId;
      try {
        idLog.append(persistenceId, id);
      } catch (IOException e) {
        throw new IllegalStateException("journal " + pluginId + ": recording persistence id '" + persistenceId
            + "' in " + idLog.file() + " failed: " + e.getMessage(), e);
      }
      nextId = id + 1;
      ids.put(persistenceId, id);
      newPersistenceIdAdded(persistenceId);
      return id;
    }
  }

  /** Whether {@code persistenceId} has no numeric id yet (nothing was ever written or read for it). Thread-safe. */
  @Override
  public boolean isNewPersistenceId(String persistenceId) {
    synchronized (idLock) {
      return !ids.containsKey(persistenceId);
    }
  }

  /** Every persistence id that has a numeric id in this store. Thread-safe. */
  @Override
  public scala.collection.immutable.Set<String> allPersistenceIds() {
    synchronized (idLock) {
      return scala.collection.immutable.Set$.MODULE$.from(CollectionConverters.asScala(List.copyOf(ids.keySet())));
    }
  }

  /**
   * Reads the record batches journaled for {@code persistenceId} at sequence numbers {@code fromSeqNr..toSeqNr},
   * in order, from one snapshot of the store, and hands each to {@code visitor} until it returns {@code false}.
   * Events that are not record batches (a partition's other events) are skipped; deleted events are not seen.
   *
   * <p>Runs on the calling thread, which it blocks on disk reads: call it from a thread meant for that (the broker's
   * {@code tributary.log.read-dispatcher}), never from an actor of the hot path. Thread-safe; it may run while the
   * journal writes.
   *
   * @throws StoreClosedException if the journal has closed its store
   * @throws IllegalStateException if LevelDB fails or an event is not a well-formed Akka persistent message
   */
  public void readRecordBatches(String persistenceId, long fromSeqNr, long toSeqNr, BatchVisitor visitor) {
    if (!storeLock.readLock().tryLock()) {
      throw new StoreClosedException(pluginId); // it is closing
    }
    try {
      if (!storeOpen) {
        throw new StoreClosedException(pluginId);
      }
      if (isNewPersistenceId(persistenceId)) {
        return; // never written: nothing to read (and numericId would create a mapping)
      }
      int nid = numericId(persistenceId);
      ReadOptions ro = leveldbSnapshot();
      try (Snapshot snapshot = ro.snapshot(); DBIterator it = leveldb().iterator(ro)) {
        it.seek(eventKey(nid, Math.max(1L, fromSeqNr)));
        long pendingSeqNr = -1;
        byte[] pending = null;
        while (it.hasNext()) {
          Map.Entry<byte[], byte[]> entry = it.next();
          ByteBuffer key = ByteBuffer.wrap(entry.getKey());
          if (entry.getKey().length != KEY_BYTES || key.getInt() != nid) {
            break;
          }
          long seqNr = key.getLong();
          int mapping = key.getInt();
          if (mapping != 0) {
            // Akka 2.3's per-event deletion marker (nid, seqNr, 1) follows the event it deletes
            if (seqNr == pendingSeqNr) {
              pending = null;
            }
            continue;
          }
          if (pending != null && !visitor.visit(pendingSeqNr, pending)) {
            return;
          }
          pending = null;
          if (seqNr > toSeqNr) {
            return;
          }
          pendingSeqNr = seqNr;
          pending = recordBatchOf(uncompressed(entry.getValue()));
        }
        if (pending != null) {
          visitor.visit(pendingSeqNr, pending);
        }
      } catch (IOException | DBException e) {
        throw new IllegalStateException("journal read failed: " + e.getMessage(), e);
      }
    } finally {
      storeLock.readLock().unlock();
    }
  }

  /**
   * The record batch inside a journaled event, or {@code null} if the event is not a record batch: the event is
   * Akka's {@code PersistentMessage} protobuf (field 1: {@code PersistentPayload} with field 1 serializer id, 2 the
   * payload bytes, 3 the manifest), and a record batch is a payload of {@link TributarySerializer} with manifest
   * {@value TributarySerializer#RECORDS_APPENDED_MANIFEST}, which holds the batch's bytes unchanged. One copy.
   *
   * @throws IllegalStateException if {@code event} is not well-formed protobuf
   */
  static byte[] recordBatchOf(byte[] event) {
    Protobuf msg = new Protobuf(event, 0, event.length);
    int payloadStart = -1;
    int payloadEnd = -1;
    while (msg.more()) {
      int tag = msg.tag();
      if (tag == ((1 << 3) | 2)) {
        int len = msg.length();
        payloadStart = msg.pos;
        payloadEnd = msg.skipBytes(len);
      } else {
        msg.skip(tag);
      }
    }
    if (payloadStart < 0) {
      return null;
    }
    Protobuf payload = new Protobuf(event, payloadStart, payloadEnd);
    long serializerId = -1;
    int dataStart = -1;
    int dataLen = 0;
    boolean recordsAppended = false;
    while (payload.more()) {
      int tag = payload.tag();
      if (tag == ((1 << 3) | 0)) {
        serializerId = payload.varint();
      } else if (tag == ((2 << 3) | 2)) {
        dataLen = payload.length();
        dataStart = payload.pos;
        payload.skipBytes(dataLen);
      } else if (tag == ((3 << 3) | 2)) {
        int len = payload.length();
        recordsAppended = len == 2 && event[payload.pos] == 'E' && event[payload.pos + 1] == 'A';
        payload.skipBytes(len);
      } else {
        payload.skip(tag);
      }
    }
    if (serializerId != TributarySerializer.IDENTIFIER || !recordsAppended || dataStart < 0) {
      return null;
    }
    return java.util.Arrays.copyOfRange(event, dataStart, dataStart + dataLen);
  }

  /** A bounds-checked protobuf wire-format cursor over {@code buf[pos, end)}. */
  private static final class Protobuf {
    private final byte[] buf;
    private int pos;
    private final int end;

    Protobuf(byte[] buf, int pos, int end) {
      this.buf = buf;
      this.pos = pos;
      this.end = end;
    }

    boolean more() {
      return pos < end;
    }

    int tag() {
      return (int) varint();
    }

    long varint() {
      long v = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (pos >= end) {
          throw malformed();
        }
        byte b = buf[pos++];
        v |= (long) (b & 0x7f) << shift;
        if (b >= 0) {
          return v;
        }
      }
      throw malformed();
    }

    int length() {
      long len = varint();
      if (len < 0 || len > end - pos) {
        throw malformed();
      }
      return (int) len;
    }

    int skipBytes(int len) {
      pos += len;
      return pos;
    }

    void skip(int tag) {
      switch (tag & 7) {
        case 0 -> varint();
        case 1 -> fixed(8);
        case 2 -> skipBytes(length());
        case 5 -> fixed(4);
        default -> throw malformed();
      }
    }

    private void fixed(int n) {
      if (end - pos < n) {
        throw malformed();
      }
      pos += n;
    }

    private IllegalStateException malformed() {
      return new IllegalStateException("journal event is not a well-formed Akka persistent message");
    }
  }

  /**
   * Writes every event of {@code messages} under its own key, all of them in one LevelDB write batch (one write, as
   * Akka's journal does), without the per-event counter key (see the class comment). An atomic write whose events
   * cannot be serialized is rejected alone ({@code Failure} in its slot, nothing of it written); a failing LevelDB
   * write fails the returned future (Akka then fails every write of the call, as with its own journal). Called on
   * the journal's actor, as every write of Akka's journal; the broker's writes take {@link #aroundReceive} instead.
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
    try {
      return Futures.successful(CollectionConverters.asScala(write(messages)).toList());
    } catch (IOException | RuntimeException e) {
      return Futures.failed(e);
    }
  }

  /**
   * The write of {@link #asyncWriteMessages}, on the calling thread: one LevelDB write batch.
   *
   * @return one {@code Try} per atomic write, in order ({@code Failure}: rejected, nothing of it written)
   * @throws IOException or a {@code RuntimeException} ({@code DBException}) if LevelDB fails the write
   */
  private List<Try<BoxedUnit>> write(scala.collection.immutable.Seq<AtomicWrite> messages) throws IOException {
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
        } catch (Exception e) { // Akka's serialization throws java.io.NotSerializableException undeclared
          results.add(new Failure<>(e));
          continue;
        }
        for (int i = 0; i < keys.size(); i++) {
          batch.put(keys.get(i), values.get(i));
        }
        results.add(new Success<>(BoxedUnit.UNIT));
      }
      db.write(batch, leveldbWriteOptions());
    }
    checkLevel0(db);
    return results;
  }

  /** Level-0 tables at which {@link #writesMayStall} turns true: LevelDB's compaction trigger (it slows writes at 8). */
  static final int LEVEL0_BEHIND = 4;
  private static final long LEVEL0_CHECK_NANOS = 50_000_000L;
  private long level0CheckedAt = System.nanoTime() - LEVEL0_CHECK_NANOS;
  private volatile boolean writesMayStall;

  /** At most every 50 ms: reads LevelDB's count of level-0 tables (one JNI call) into {@link #writesMayStall}. */
  private void checkLevel0(DB db) {
    long now = System.nanoTime();
    if (now - level0CheckedAt < LEVEL0_CHECK_NANOS) {
      return;
    }
    level0CheckedAt = now;
    try {
      writesMayStall = level0Tables(db) >= LEVEL0_BEHIND;
    } catch (RuntimeException e) {
      writesMayStall = true; // unknown: assume the worst
    }
  }

  /**
   * LevelDB's count of level-0 tables ({@code leveldb.num-files-at-level0}); -1 if the store does not know that
   * property (then {@link #writesMayStall} stays false).
   *
   * @throws RuntimeException if the store is closed or the property is not a number
   */
  static int level0Tables(DB db) {
    String files = db.getProperty("leveldb.num-files-at-level0");
    return files == null ? -1 : Integer.parseInt(files.trim());
  }

  /** This journal's store's {@link #level0Tables}, from any thread (for tests). */
  int level0Tables() {
    return level0Tables(leveldb());
  }

  /**
   * Makes {@link #writesMayStall} true until this journal's next level-0 check (the first write at least 50 ms after
   * the last one), as a store with {@value #LEVEL0_BEHIND} level-0 tables does (for tests: a unit test cannot make
   * LevelDB's background compaction fall behind on cue).
   */
  void assumeWritesMayStall() {
    writesMayStall = true;
  }

  /**
   * Whether LevelDB may delay this journal's next writes: at its last check (at most 50 ms before its last write)
   * the store had {@value #LEVEL0_BEHIND} or more level-0 tables waiting for compaction. LevelDB delays each write by
   * 1 ms from 8 such tables and blocks writes from 12. Read by {@link JournalDispatcher} on any thread.
   */
  boolean writesMayStall() {
    return writesMayStall;
  }

  /**
   * Takes a journal write ({@link JournalProtocol.WriteMessages}) off Akka's asynchronous write path when nothing
   * needs that path, and writes it here, replying to the persistent actor directly; every other message goes to
   * Akka's journal as before.
   *
   * <p>Akka's {@code AsyncWriteJournal} runs each write through a circuit breaker and two future callbacks on the
   * journal's dispatcher, then sends one reply per event plus one for the call to its resequencer actor, which
   * forwards them to the persistent actor in order: for a write of one event, two executor tasks and four messages
   * besides the write, and the resequencer runs on the actors' dispatcher, so a journal on its own thread wakes that
   * dispatcher's thread for it. The resequencer exists because asynchronous writes may complete out of order; this
   * journal writes synchronously, so replies sent at once are in order already. The replies are Akka's own, in
   * Akka's order: {@code WriteMessagesSuccessful} (sender: the journal), then per event {@code WriteMessageSuccess}
   * ({@code WriteMessageRejected} for the events of an atomic write that could not be serialized), each with the
   * event's sender; a LevelDB failure answers {@code WriteMessagesFailed}, then {@code WriteMessageFailure} per event,
   * as Akka's journal does (without counting it in Akka's circuit breaker); an event adapter that throws rejects
   * every write of the call, as Akka's journal does.
   *
   * <p>Akka's path is kept for a write with tags, one that holds a deferred (non-persistent) message, while a
   * persistence query subscribes to changes, and while Akka Persistence publishes plugin commands (its tests); none
   * of them happen in a broker. Per persistent actor, writes are one at a time (a persistent actor sends its next
   * write after the replies to the last), so replies of the two paths never overtake one another.
   *
   * <p>Called by Akka on the journal's actor (its dispatcher: {@link JournalDispatcher}).
   */
  @Override
  public void aroundReceive(scala.PartialFunction<Object, BoxedUnit> receive, Object msg) {
    if (msg instanceof JournalProtocol.WriteMessages w && writeDirectly(w)) {
      return;
    }
    super.aroundReceive(receive, msg);
  }

  private boolean writeDirectly(JournalProtocol.WriteMessages w) {
    if (publishPluginCommands || hasPersistenceIdSubscribers() || hasTagSubscribers() || w.messages().isEmpty()) {
      return false;
    }
    scala.collection.Iterator<akka.persistence.PersistentEnvelope> it = w.messages().iterator();
    while (it.hasNext()) {
      if (!(it.next() instanceof AtomicWrite a) || anyTagged(a)) {
        return false;
      }
    }
    ActorRef replyTo = w.persistentActor();
    int instanceId = w.actorInstanceId();
    List<Try<BoxedUnit>> results = null; // one per atomic write; null when the LevelDB write failed
    Throwable writeFailure = null;
    scala.collection.immutable.Seq<AtomicWrite> prepared = null;
    try {
      prepared = preparePersistentBatch(w.messages());
    } catch (RuntimeException e) { // an event adapter threw: every write is rejected, as Akka's journal does
      results = java.util.Collections.nCopies(w.messages().size(), new Failure<>(e));
    }
    if (prepared != null) {
      try {
        results = write(prepared);
      } catch (IOException | RuntimeException e) {
        writeFailure = e;
      }
    }
    replyTo.tell(writeFailure == null
        ? JournalProtocol.WriteMessagesSuccessful$.MODULE$
        : new JournalProtocol.WriteMessagesFailed(writeFailure, w.messages().size()), self());
    scala.collection.Iterator<akka.persistence.PersistentEnvelope> writes = w.messages().iterator();
    for (int i = 0; writes.hasNext(); i++) {
      Try<BoxedUnit> result = results == null ? null : results.get(i);
      scala.collection.Iterator<PersistentRepr> events = ((AtomicWrite) writes.next()).payload().iterator();
      while (events.hasNext()) {
        PersistentRepr p = events.next();
        Object reply;
        if (writeFailure != null) {
          reply = new JournalProtocol.WriteMessageFailure(p, writeFailure, instanceId);
        } else if (result instanceof Failure<BoxedUnit> f) {
          reply = new JournalProtocol.WriteMessageRejected(p, f.exception(), instanceId);
        } else {
          reply = new JournalProtocol.WriteMessageSuccess(p, instanceId);
        }
        replyTo.tell(reply, p.sender());
      }
    }
    return true;
  }

  /**
   * Reads an event as Akka's journal does, after undoing this journal's LZ4 compression (see the class comment).
   * Called on the journal's replay dispatcher.
   *
   * @throws IllegalStateException if a compressed event does not decompress to its recorded length
   */
  @Override
  public PersistentRepr persistentFromBytes(byte[] bytes) {
    return super.persistentFromBytes(uncompressed(bytes));
  }

  /** Byte that starts a compressed event: never the first byte of a protobuf message (field number 0). */
  static final byte COMPRESSED_EVENT = 0;

  private static final int MIN_COMPRESSED_BYTES = 256;
  private static final int MAX_EVENT_BYTES = 256 << 20;
  private static final LZ4Factory LZ4 = LZ4Factory.fastestInstance();

  /**
   * {@code raw} as a compressed event in the earlier stored form (see "Compressed record batches"), or {@code raw}
   * itself if it is small or does not shrink by an eighth. Nothing writes this form any more; tests use it to check
   * that stores holding it are still read.
   */
  static byte[] compress(byte[] raw) {
    if (raw.length < MIN_COMPRESSED_BYTES) {
      return raw;
    }
    LZ4Compressor lz4 = LZ4.fastCompressor();
    int max = lz4.maxCompressedLength(raw.length);
    byte[] out = new byte[6 + max];
    out[0] = COMPRESSED_EVENT;
    int pos = 1;
    for (int v = raw.length; ; v >>>= 7) {
      if ((v & ~0x7f) == 0) {
        out[pos++] = (byte) v;
        break;
      }
      out[pos++] = (byte) ((v & 0x7f) | 0x80);
    }
    int n = lz4.compress(raw, 0, raw.length, out, pos, max);
    if (pos + n > raw.length - raw.length / 8) {
      return raw;
    }
    return java.util.Arrays.copyOf(out, pos + n);
  }

  /**
   * The event as Akka serialized it: {@code stored} itself, or decompressed if it starts with
   * {@link #COMPRESSED_EVENT}.
   *
   * @throws IllegalStateException if a compressed event is malformed or does not decompress to its recorded length
   */
  static byte[] uncompressed(byte[] stored) {
    if (stored.length == 0 || stored[0] != COMPRESSED_EVENT) {
      return stored;
    }
    int pos = 1;
    int len = 0;
    for (int shift = 0; ; shift += 7) {
      if (pos >= stored.length || shift > 28) {
        throw new IllegalStateException("compressed journal event has a malformed length");
      }
      byte b = stored[pos++];
      len |= (b & 0x7f) << shift;
      if (b >= 0) {
        break;
      }
    }
    if (len < 0 || len > MAX_EVENT_BYTES) {
      throw new IllegalStateException("compressed journal event claims " + len + " bytes");
    }
    byte[] raw = new byte[len];
    try {
      int n = LZ4.safeDecompressor().decompress(stored, pos, stored.length - pos, raw, 0, len);
      if (n != len) {
        throw new IllegalStateException("compressed journal event decompressed to " + n + " of " + len + " bytes");
      }
    } catch (LZ4Exception e) {
      throw new IllegalStateException("compressed journal event is corrupt: " + e.getMessage(), e);
    }
    return raw;
  }

  /**
   * Whether {@code cfg} (a journal plugin's config) asks for LZ4 record batches ({@code event-compression}; absent:
   * none).
   *
   * @throws IllegalArgumentException if the value is neither lz4 nor none
   */
  static boolean lz4Events(Config cfg) {
    if (!cfg.hasPath("event-compression")) {
      return false;
    }
    String c = cfg.getString("event-compression").toLowerCase(Locale.ROOT);
    return switch (c) {
      case "lz4" -> true;
      case "none" -> false;
      default -> throw new IllegalArgumentException(
          "journal event-compression must be lz4 or none, was " + cfg.getString("event-compression"));
    };
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
      if (anyTagged(writes.next())) {
        return true;
      }
    }
    return false;
  }

  private static boolean anyTagged(AtomicWrite write) {
    scala.collection.Iterator<PersistentRepr> events = write.payload().iterator();
    while (events.hasNext()) {
      if (events.next().payload() instanceof Tagged) {
        return true;
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
