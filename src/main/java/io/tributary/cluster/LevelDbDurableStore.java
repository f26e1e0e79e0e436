package io.tributary.cluster;

import akka.actor.AbstractActorWithTimers;
import akka.actor.ActorRef;
import akka.actor.CoordinatedShutdown;
import akka.actor.DeadLetterSuppression;
import akka.actor.NoSerializationVerificationNeeded;
import akka.cluster.ddata.DurableStore;
import akka.cluster.ddata.DurableStore.DurableDataEnvelope;
import akka.cluster.ddata.DurableStore.LoadFailed;
import akka.cluster.ddata.DurableStore.Store;
import akka.cluster.ddata.DurableStore.StoreReply;
import akka.cluster.ddata.GCounter;
import akka.event.Logging;
import akka.event.LoggingAdapter;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.SerializerWithStringManifest;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.io.File;
import java.io.IOException;
import java.io.NotSerializableException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBFactory;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;
import org.iq80.leveldb.impl.Iq80DBFactory;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Durable store of Akka Distributed Data's {@code Replicator}, backed by LevelDB instead of Akka's default LMDB, so
 * that no JVM embedding a broker node needs {@code --add-opens java.base/java.nio=ALL-UNNAMED} (LMDB's requirement on
 * JDK 17). It implements the protocol of {@link DurableStore} and is modelled on Akka 2.6's
 * {@code akka.cluster.ddata.LmdbDurableStore}: same message handling, same serialization, same write-behind option.
 *
 * <h2>Wiring</h2>
 *
 * Tributary's metadata replicator ({@link MetadataReplicator}) creates it from
 * {@code tributary.metadata.replicator.durable.store-actor-class} as
 * {@code Props.create(LevelDbDurableStore.class, durableConfig)}, where {@code durableConfig} is the section
 * {@code tributary.metadata.replicator.durable}, on the dispatcher named by its {@code use-dispatcher} (Akka's default
 * is a pinned thread, which suits the blocking LevelDB calls). Any other {@code Replicator} can use it the same way
 * from its own {@code durable} section; the error messages name Tributary's keys. Settings, all below
 * {@code durable.leveldb}:
 *
 * <ul>
 *   <li>{@code dir} (string, path; required): the LevelDB directory, created with its parents if missing. A relative
 *       path is resolved against the JVM's working directory ({@code user.dir}), as Akka does for {@code lmdb.dir}.
 *       Unlike {@code lmdb.dir}, a path ending in {@code ddata} is <em>not</em> suffixed with the system name and the
 *       Artery port: with port 0 that suffix changes on every start and the data would silently not be found.
 *   <li>{@code fsync} (boolean, default off): sync every write to disk. Off, like the partition journals: a write is
 *       in the OS page cache when acknowledged and survives a process crash but not a power loss.
 *   <li>{@code write-behind-interval} (duration or {@code off}, default off): off writes each {@code Store} at once,
 *       before acknowledging it. A duration keeps the latest value of each key in memory and writes all of them in
 *       one atomic {@link WriteBatch} that long after the first pending change, and on stop. As in Akka, the
 *       {@code Store} is then acknowledged <em>before</em> it is written: a JVM crash loses up to one interval of
 *       changes (other replicas still have them).
 *   <li>{@code native} (boolean, default on): leveldbjni's native LevelDB; off uses the pure-Java port (e.g. on
 *       platforms leveldbjni has no binary for). Tables are written uncompressed, so either can open a directory the
 *       other wrote.
 *   <li>{@code skip-corrupt-entries} (boolean, default off): see <em>Errors</em>.
 *   <li>{@code terminate-system-on-load-failure} (boolean, default on): see <em>Errors</em>.
 * </ul>
 *
 * <h2>Shapes on disk</h2>
 *
 * One LevelDB entry per durable key. LevelDB key: the UTF-8 bytes of the {@code KeyId} (for example
 * {@code topic-metadata}). LevelDB value: one format byte ({@value #FORMAT_V1}), then the bytes of the
 * {@link DurableDataEnvelope} as written by the serializer Akka binds to it (the protobuf
 * {@code ReplicatorMessageSerializer}, manifest {@code "P"}), which embeds the {@code ReplicatedData} with its own
 * serializer id and manifest, plus the envelope's pruning-performed markers. The format byte is Tributary's; the rest
 * is what {@code LmdbDurableStore} stores.
 *
 * <h2>Protocol</h2>
 *
 * <ul>
 *   <li>{@code LoadAll} (first message, from the {@code Replicator}): opens the database (always, even when the
 *       directory is new, so that a locked or inaccessible directory fails at start-up rather than at the first
 *       write), decodes every entry, replies one {@code LoadData} with all of them (none if the store is empty) and
 *       then {@code LoadAllCompleted} to the sender.
 *   <li>{@code Store(key, envelope, reply)}: writes (or queues, with write-behind) the envelope; replies
 *       {@code reply.successMsg} or, if the immediate write failed, {@code reply.failureMsg} to {@code reply.replyTo}.
 *       A failed write is logged with the key; the actor keeps running, as {@code LmdbDurableStore} does.
 * </ul>
 *
 * <h2>Errors</h2>
 *
 * A load that cannot complete throws {@link LoadFailed} with the directory and the reason in its message: the
 * directory cannot be created, LevelDB refuses to open it (most often because another process, or another
 * {@code ActorSystem} in this JVM, holds its {@code LOCK}: LevelDB allows one open per directory), a block checksum
 * fails, or stored values cannot be decoded. The {@code Replicator}'s supervisor then logs the error and stops both
 * itself and this store; from then on every {@code Get} and {@code Update} of the node times out. As a node in that
 * state is of no use, this store also runs {@link CoordinatedShutdown} of the {@code ActorSystem} (reason
 * {@link LoadFailure}) unless {@code terminate-system-on-load-failure = off}. The same happens when the settings are
 * invalid (for example {@code dir} is missing): the constructor throws and the {@code Replicator} stops on the
 * resulting {@code ActorInitializationException}.
 *
 * <p>Values that cannot be decoded (unknown format byte, bytes the serializer rejects): by default the load fails,
 * naming every such key, since losing topic metadata silently is worse than a node that refuses to start. With
 * {@code skip-corrupt-entries = on} each is logged at error level with its key and left out of the load instead
 * (the entry stays on disk until the key is next written); the node then relies on the other replicas for it.
 *
 * <h2>Confinement</h2>
 *
 * All state (the open {@link DB}, the pending write-behind map) is confined to this actor; LevelDB is called only from
 * its message handlers and {@link #postStop()}, which flushes pending writes and closes the database, releasing the
 * directory lock. A restart (after an unexpected exception) closes the database in {@code postStop} and reopens it
 * on the next {@code Store}; it does not load again.
 */
public final class LevelDbDurableStore extends AbstractActorWithTimers {

  /** Where Tributary's config holds this store's settings (what error messages name). */
  static final String LEVELDB_PATH = MetadataReplicator.CONFIG_PATH + ".durable.leveldb";

  /** The format byte that starts every stored value. */
  public static final byte FORMAT_V1 = 1;

  /** Reason of the {@link CoordinatedShutdown} run when the durable data cannot be loaded. */
  public static final class LoadFailure implements CoordinatedShutdown.Reason {
    /** The only instance. */
    public static final LoadFailure INSTANCE = new LoadFailure();

    private LoadFailure() {}

    @Override
    public String toString() {
      return "LevelDbDurableStore.LoadFailure";
    }
  }

  /** Timer message of write-behind. */
  private enum WriteBehind implements DeadLetterSuppression, NoSerializationVerificationNeeded {
    INSTANCE
  }

  /** The parsed {@code leveldb} settings. */
  record Settings(
      Path dir,
      boolean fsync,
      Duration writeBehindInterval,
      boolean nativeLevelDb,
      boolean skipCorruptEntries,
      boolean terminateSystemOnLoadFailure) {

    /** Parses {@code durableConfig.leveldb}; throws {@link ConfigException} on a missing dir or a bad value. */
    static Settings from(Config durableConfig) {
      Config c = durableConfig.hasPath("leveldb") ? durableConfig.getConfig("leveldb") : ConfigFactory.empty();
      if (!c.hasPath("dir")) {
        throw new ConfigException.Missing(c.origin(), LEVELDB_PATH + ".dir");
      }
      String dirString = c.getString("dir");
      if (dirString.isBlank()) {
        throw new ConfigException.BadValue(c.origin(), LEVELDB_PATH + ".dir",
            "LevelDB durable store directory is empty");
      }
      Duration writeBehind = Duration.ZERO;
      if (c.hasPath("write-behind-interval")) {
        String raw = c.getValue("write-behind-interval").unwrapped().toString().trim().toLowerCase(Locale.ROOT);
        if (!raw.equals("off") && !raw.equals("false")) {
          writeBehind = c.getDuration("write-behind-interval");
          if (writeBehind.isNegative()) {
            throw new ConfigException.BadValue(c.origin(), LEVELDB_PATH + ".write-behind-interval",
                "must not be negative");
          }
        }
      }
      return new Settings(
          Paths.get(dirString).toAbsolutePath().normalize(),
          bool(c, "fsync", false),
          writeBehind,
          bool(c, "native", true),
          bool(c, "skip-corrupt-entries", false),
          bool(c, "terminate-system-on-load-failure", true));
    }

    private static boolean bool(Config c, String path, boolean dflt) {
      return c.hasPath(path) ? c.getBoolean(path) : dflt;
    }
  }

  private final LoggingAdapter log = Logging.getLogger(getContext().getSystem(), this);
  private final Settings settings;
  private final SerializerWithStringManifest serializer;
  private final String manifest;
  private final WriteOptions writeOptions;

  /** Latest envelope of each key not yet written (write-behind only); insertion order for the log. */
  private final Map<String, DurableDataEnvelope> pending = new LinkedHashMap<>();

  /** Open database, or null before the first use and after {@link #postStop()}. */
  private DB db;

  /**
   * @param durableConfig the section {@code tributary.metadata.replicator.durable}, as the {@code Replicator}
   *     passes it
   * @throws ConfigException if the {@code leveldb} settings are missing or invalid
   */
  public LevelDbDurableStore(Config durableConfig) {
    Settings parsed;
    try {
      parsed = Settings.from(durableConfig);
    } catch (ConfigException e) {
      boolean terminate = true;
      try {
        terminate = Settings.bool(durableConfig.getConfig("leveldb"), "terminate-system-on-load-failure", true);
      } catch (ConfigException ignored) {
        // keep the default
      }
      log.error(e, "Invalid LevelDB durable store settings: {}", e.getMessage());
      if (terminate) {
        terminateSystem();
      }
      throw e;
    }
    this.settings = parsed;
    Serialization serialization = SerializationExtension.get(getContext().getSystem());
    try {
      this.serializer = (SerializerWithStringManifest) serialization.serializerFor(DurableDataEnvelope.class);
    } catch (NotSerializableException e) {
      throw new IllegalStateException("No serializer for DurableDataEnvelope (akka-distributed-data's reference.conf"
          + " binds ReplicatorMessageSerializer to it)", e);
    }
    this.manifest = serializer.manifest(new DurableDataEnvelope(GCounter.empty()));
    this.writeOptions = new WriteOptions().sync(settings.fsync());
  }

  @Override
  public Receive createReceive() {
    return receiveBuilder().matchEquals(DurableStore.LoadAll$.MODULE$, m -> loadAll()).build();
  }

  private Receive active() {
    return receiveBuilder()
        .match(Store.class, this::store)
        .matchEquals(WriteBehind.INSTANCE, m -> writeBehind())
        .build();
  }

  @Override
  public void postRestart(Throwable reason) throws Exception {
    super.postRestart(reason);
    // loading is done once, on the first start
    getContext().become(active());
  }

  @Override
  public void postStop() throws Exception {
    try {
      writeBehind();
    } finally {
      if (db != null) {
        try {
          db.close();
        } catch (IOException | RuntimeException e) {
          log.warning("Closing LevelDB durable store [{}] failed: {}", settings.dir(), e);
        }
        db = null;
      }
      super.postStop();
    }
  }

  // ---- load ----

  private void loadAll() {
    ActorRef replicator = getSender();
    long t0 = System.nanoTime();
    Map<String, DurableDataEnvelope> loaded = new LinkedHashMap<>();
    List<String> corrupt = new ArrayList<>();
    Throwable firstCorruption = null;
    try {
      DB d = db();
      try (DBIterator it = d.iterator(new ReadOptions().verifyChecksums(true).fillCache(false))) {
        for (it.seekToFirst(); it.hasNext(); ) {
          Map.Entry<byte[], byte[]> e = it.next();
          String key = new String(e.getKey(), StandardCharsets.UTF_8);
          try {
            loaded.put(key, decode(e.getValue()));
          } catch (RuntimeException decodeError) {
            if (settings.skipCorruptEntries()) {
              log.error(
                  decodeError,
                  "Skipping durable data key [{}] in LevelDB durable store [{}]: its value ({} bytes) cannot be"
                      + " decoded",
                  key,
                  settings.dir(),
                  e.getValue().length);
            } else {
              corrupt.add(key);
              if (firstCorruption == null) {
                firstCorruption = decodeError;
              }
            }
          }
        }
      }
    } catch (LoadFailed e) {
      failLoad(e);
      return;
    } catch (IOException | RuntimeException e) {
      failLoad(new LoadFailed("Reading LevelDB durable store [" + settings.dir() + "] failed: " + e, e));
      return;
    }
    if (!corrupt.isEmpty()) {
      failLoad(
          new LoadFailed(
              "LevelDB durable store ["
                  + settings.dir()
                  + "]: the stored values of durable data keys "
                  + corrupt
                  + " cannot be decoded (first error: "
                  + firstCorruption
                  + "). Refusing to start without them; remove the directory to take the data from the other"
                  + " replicas, or set " + LEVELDB_PATH + ".skip-corrupt-entries = on",
              firstCorruption));
      return;
    }
    if (!loaded.isEmpty()) {
      replicator.tell(new DurableStore.LoadData(toScala(loaded)), getSelf());
    }
    replicator.tell(DurableStore.LoadAllCompleted$.MODULE$, getSelf());
    log.debug(
        "Loaded [{}] entries from LevelDB durable store [{}] in [{} ms]",
        loaded.size(),
        settings.dir(),
        (System.nanoTime() - t0) / 1_000_000);
    getContext().become(active());
  }

  private DurableDataEnvelope decode(byte[] value) {
    if (value.length == 0 || value[0] != FORMAT_V1) {
      throw new IllegalArgumentException(
          "unknown value format " + (value.length == 0 ? "(empty value)" : Byte.toString(value[0])));
    }
    Object o;
    try {
      o = serializer.fromBinary(Arrays.copyOfRange(value, 1, value.length), manifest);
    } catch (Exception e) { // also the undeclared checked ones Scala code throws, e.g. protobuf's parse errors
      throw new IllegalArgumentException(e.toString(), e);
    }
    if (!(o instanceof DurableDataEnvelope envelope)) {
      throw new IllegalArgumentException("decoded a " + o.getClass().getName() + ", not a DurableDataEnvelope");
    }
    return envelope;
  }

  private void failLoad(LoadFailed e) {
    if (settings.terminateSystemOnLoadFailure()) {
      // the Replicator logs the LoadFailed itself, with its message and stack trace
      log.error(
          "Terminating the ActorSystem: durable distributed data in [{}] cannot be loaded"
              + " (leveldb.terminate-system-on-load-failure = on)",
          settings.dir());
      terminateSystem();
    }
    // the Replicator's supervisor stops the Replicator and this store on LoadFailed, and logs it
    throw e;
  }

  private void terminateSystem() {
    CoordinatedShutdown.get(getContext().getSystem()).run(LoadFailure.INSTANCE);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static scala.collection.immutable.Map<String, DurableDataEnvelope> toScala(
      Map<String, DurableDataEnvelope> m) {
    return (scala.collection.immutable.Map) scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(m));
  }

  // ---- store ----

  private void store(Store s) {
    String key = s.key();
    Option<StoreReply> reply = s.reply();
    try {
      if (settings.writeBehindInterval().isZero()) {
        DB d = db();
        d.put(key.getBytes(StandardCharsets.UTF_8), encode(s.data()), writeOptions);
      } else {
        db(); // fail now, not at the flush, if the database cannot be opened
        if (pending.isEmpty()) {
          getTimers().startSingleTimer(WriteBehind.INSTANCE, WriteBehind.INSTANCE, settings.writeBehindInterval());
        }
        pending.put(key, s.data());
      }
      if (reply.isDefined()) {
        reply.get().replyTo().tell(reply.get().successMsg(), getSelf());
      }
    } catch (RuntimeException e) {
      log.error(e, "Failed to store durable data key [{}] in LevelDB durable store [{}]", key, settings.dir());
      if (reply.isDefined()) {
        reply.get().replyTo().tell(reply.get().failureMsg(), getSelf());
      }
    }
  }

  private byte[] encode(DurableDataEnvelope envelope) {
    byte[] payload = serializer.toBinary(envelope);
    byte[] value = new byte[payload.length + 1];
    value[0] = FORMAT_V1;
    System.arraycopy(payload, 0, value, 1, payload.length);
    return value;
  }

  private void writeBehind() {
    if (pending.isEmpty()) {
      return;
    }
    long t0 = System.nanoTime();
    int n = pending.size();
    try {
      DB d = db();
      try (WriteBatch batch = d.createWriteBatch()) {
        for (Map.Entry<String, DurableDataEnvelope> e : pending.entrySet()) {
          batch.put(e.getKey().getBytes(StandardCharsets.UTF_8), encode(e.getValue()));
        }
        d.write(batch, writeOptions);
      }
      log.debug(
          "Wrote [{}] write-behind entries to LevelDB durable store [{}] in [{} ms]",
          n,
          settings.dir(),
          (System.nanoTime() - t0) / 1_000_000);
    } catch (RuntimeException | IOException e) {
      log.error(
          e, "Failed to store durable data keys {} in LevelDB durable store [{}]", pending.keySet(), settings.dir());
    } finally {
      pending.clear();
    }
  }

  // ---- database ----

  /** The open database, opening it (and creating the directory) on first use. */
  private DB db() {
    if (db != null) {
      return db;
    }
    Path dir = settings.dir();
    try {
      Files.createDirectories(dir);
    } catch (IOException | RuntimeException e) {
      throw new LoadFailed("Cannot create the LevelDB durable store directory [" + dir + "]: " + e, e);
    }
    File file = dir.toFile();
    if (!Files.isReadable(dir) || !Files.isWritable(dir)) {
      throw new LoadFailed("The LevelDB durable store directory [" + dir + "] is not readable and writable");
    }
    DBFactory factory = settings.nativeLevelDb() ? JniDBFactory.factory : Iq80DBFactory.factory;
    // no compression: metadata is small, and the pure-Java port cannot read Snappy blocks without snappy on the
    // class path, so both implementations can open the same directory
    Options options = new Options().createIfMissing(true).compressionType(CompressionType.NONE);
    log.info("Using durable data in LevelDB directory [{}]", dir);
    try {
      db = factory.open(file, options);
    } catch (Exception e) {
      String msg = String.valueOf(e.getMessage());
      String hint =
          msg.toLowerCase(Locale.ROOT).contains("lock") || e instanceof java.nio.channels.OverlappingFileLockException
              ? " It is locked: another process, or another ActorSystem in this JVM, has this directory open"
                  + " (LevelDB allows one open per directory; give each node its own leveldb.dir)."
              : "";
      throw new LoadFailed("Cannot open the LevelDB durable store in [" + dir + "]: " + e + "." + hint, e);
    }
    return db;
  }
}
