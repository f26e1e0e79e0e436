package io.tributary.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.ActorRef;
import akka.actor.ActorSystem;
import akka.cluster.Cluster;
import akka.cluster.ddata.DurableStore.LoadFailed;
import akka.cluster.ddata.Key;
import akka.cluster.ddata.LWWMap;
import akka.cluster.ddata.LWWMapKey;
import akka.cluster.ddata.ORSet;
import akka.cluster.ddata.ORSetKey;
import akka.cluster.ddata.Replicator;
import akka.cluster.ddata.SelfUniqueAddress;
import akka.event.Logging;
import akka.testkit.javadsl.TestKit;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.fusesource.leveldbjni.JniDBFactory;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LevelDbDurableStore} behind a real {@code Replicator} with the settings of Tributary's metadata replicator
 * ({@code tributary.metadata.replicator}): single-node clusters that write, terminate and start again on the same
 * directory; write-behind; corrupt values; a directory locked by another open database.
 */
class LevelDbDurableStoreTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(20);
  private static final Key<LWWMap<String, String>> ASSIGNMENTS = LWWMapKey.create("topic-assignments");
  private static final Key<ORSet<String>> TOPICS = ORSetKey.create("topics");
  private static final String LEVELDB = MetadataReplicator.CONFIG_PATH + ".durable.leveldb.";
  private static final Map<ActorSystem, ActorRef> REPLICATORS = new java.util.concurrent.ConcurrentHashMap<>();

  @TempDir Path tmp;

  private final List<ActorSystem> systems = new ArrayList<>();

  @AfterEach
  void tearDown() {
    for (ActorSystem s : systems) {
      TestKit.shutdownActorSystem(s);
    }
  }

  // ---- (a) restart ----

  @Test
  void dataSurvivesAFullRestart() throws Exception {
    Path dir = tmp.resolve("not/yet/there/ddata"); // parents are created
    ActorSystem first = start("first", dir, Map.of());
    TestKit probe = new TestKit(first);
    ActorRef replicator = replicator(first);
    SelfUniqueAddress node = selfUniqueAddress(first);

    get(probe, replicator, ASSIGNMENTS, Replicator.NotFound.class); // fresh directory: nothing loaded
    update(probe, replicator, ASSIGNMENTS, LWWMap.create(), m -> m.put(node, "orders-0", "leader=1 epoch=3 isr=1,2"));
    update(probe, replicator, ASSIGNMENTS, LWWMap.create(), m -> m.put(node, "orders-0", "leader=2 epoch=4 isr=2"));
    update(probe, replicator, ASSIGNMENTS, LWWMap.create(), m -> m.put(node, "orders-1", "leader=1 epoch=1 isr=1"));
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.add(node, "orders").add(node, "payments"));
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.remove(node, "payments").add(node, "audit"));
    assertTrue(Files.isDirectory(dir));
    terminate(first);

    ActorSystem second = start("second", dir, Map.of());
    TestKit probe2 = new TestKit(second);
    ActorRef replicator2 = replicator(second);
    assertEquals(
        Map.of("orders-0", "leader=2 epoch=4 isr=2", "orders-1", "leader=1 epoch=1 isr=1"),
        get(probe2, replicator2, ASSIGNMENTS).getEntries());
    assertEquals(Set.of("orders", "audit"), get(probe2, replicator2, TOPICS).getElements());

    // and the loaded data goes on being written: a third start sees the second one's change
    SelfUniqueAddress node2 = selfUniqueAddress(second);
    update(probe2, replicator2, TOPICS, ORSet.create(), s -> s.add(node2, "clicks"));
    terminate(second);
    ActorSystem third = start("third", dir, Map.of());
    assertEquals(
        Set.of("orders", "audit", "clicks"), get(new TestKit(third), replicator(third), TOPICS).getElements());
  }

  @Test
  void thePureJavaLevelDbReadsWhatTheNativeOneWrote() throws Exception {
    Path dir = tmp.resolve("ddata");
    writeOneTopic(dir);
    ActorSystem javaPort = start("java", dir, Map.of(LEVELDB + "native", "off"));
    TestKit probe = new TestKit(javaPort);
    ActorRef replicator = replicator(javaPort);
    assertEquals(Set.of("orders"), get(probe, replicator, TOPICS).getElements());
    SelfUniqueAddress node = selfUniqueAddress(javaPort);
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.add(node, "audit"));
    terminate(javaPort);
    ActorSystem nativeAgain = start("native", dir, Map.of());
    assertEquals(
        Set.of("orders", "audit"), get(new TestKit(nativeAgain), replicator(nativeAgain), TOPICS).getElements());
  }

  // ---- (b) write-behind ----

  @Test
  void writeBehindKeepsTheLatestValueOfEachKeyAndFlushesOnStop() throws Exception {
    Path dir = tmp.resolve("ddata");
    // an interval far beyond the test: every write below is still pending when the system stops
    Map<String, Object> writeBehind = Map.of(LEVELDB + "write-behind-interval", "1h");
    ActorSystem first = start("first", dir, writeBehind);
    TestKit probe = new TestKit(first);
    ActorRef replicator = replicator(first);
    SelfUniqueAddress node = selfUniqueAddress(first);
    for (int epoch = 1; epoch <= 20; epoch++) {
      String value = "leader=1 epoch=" + epoch;
      update(probe, replicator, ASSIGNMENTS, LWWMap.create(), m -> m.put(node, "orders-0", value));
    }
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.add(node, "orders"));
    terminate(first);

    ActorSystem second = start("second", dir, writeBehind);
    TestKit probe2 = new TestKit(second);
    assertEquals(Map.of("orders-0", "leader=1 epoch=20"), get(probe2, replicator(second), ASSIGNMENTS).getEntries());
    assertEquals(Set.of("orders"), get(probe2, replicator(second), TOPICS).getElements());
  }

  @Test
  void writeBehindWritesOneBatchAfterTheInterval() throws Exception {
    Path dir = tmp.resolve("ddata");
    Map<String, Object> o = new HashMap<>();
    o.put(LEVELDB + "write-behind-interval", "100ms");
    // the store reports each write-behind batch at debug level; the probe waits for that event
    o.put("akka.loglevel", "DEBUG");
    // akka-actor-typed's use-slf4j would filter debug events by logback's level (WARN in tests) before publishing
    o.put("akka.use-slf4j", "off");
    o.put("akka.loggers", List.of());
    ActorSystem first = start("first", dir, o);
    TestKit logs = new TestKit(first);
    first.getEventStream().subscribe(logs.getRef(), Logging.Debug.class);
    TestKit probe = new TestKit(first);
    ActorRef replicator = replicator(first);
    SelfUniqueAddress node = selfUniqueAddress(first);
    update(probe, replicator, ASSIGNMENTS, LWWMap.create(), m -> m.put(node, "orders-0", "leader=1 epoch=1"));
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.add(node, "orders"));
    logs.fishForMessage(
        TIMEOUT,
        "a write-behind batch",
        m -> String.valueOf(((Logging.Debug) m).message()).startsWith("Wrote [")
            && String.valueOf(((Logging.Debug) m).message()).contains("write-behind entries"));
    terminate(first);

    ActorSystem second = start("second", dir, Map.of());
    assertEquals(
        Map.of("orders-0", "leader=1 epoch=1"), get(new TestKit(second), replicator(second), ASSIGNMENTS).getEntries());
  }

  // ---- (c) corrupt values ----

  @Test
  void aCorruptValueFailsTheLoadNamingTheKeyAndStopsTheNode() throws Exception {
    Path dir = tmp.resolve("ddata");
    writeOneTopic(dir);
    putRaw(dir, "topic-leaders", new byte[] {LevelDbDurableStore.FORMAT_V1, 0x0a, (byte) 0xff, 0x13, 0x37});
    putRaw(dir, "topic-isr", "not a durable data envelope".getBytes(StandardCharsets.UTF_8));

    ActorSystem second = start("second", dir, Map.of());
    LoadFailed failure = expectLoadFailure(second);
    assertTrue(failure.getMessage().contains("[topic-isr, topic-leaders]"), failure.getMessage());
    assertTrue(failure.getMessage().contains(dir.toAbsolutePath().toString()), failure.getMessage());
    second.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  @Test
  void skipCorruptEntriesLoadsTheRestAndLogsTheKey() throws Exception {
    Path dir = tmp.resolve("ddata");
    writeOneTopic(dir);
    putRaw(dir, "topic-leaders", new byte[] {LevelDbDurableStore.FORMAT_V1, 0x0a, (byte) 0xff, 0x13, 0x37});

    ActorSystem second =
        start("second", dir, Map.of(LEVELDB + "skip-corrupt-entries", "on"));
    TestKit logs = new TestKit(second);
    second.getEventStream().subscribe(logs.getRef(), Logging.Error.class);
    TestKit probe = new TestKit(second);
    ActorRef replicator = replicator(second);
    assertEquals(Set.of("orders"), get(probe, replicator, TOPICS).getElements());
    logs.fishForMessage(
        TIMEOUT, "error naming the skipped key", m -> String.valueOf(((Logging.Error) m).message())
            .contains("[topic-leaders]"));
    get(probe, replicator, ORSetKey.<String>create("topic-leaders"), Replicator.NotFound.class);
  }

  // ---- (d) locked or unusable directory ----

  @Test
  void aDirectoryOpenInAnotherActorSystemFailsTheLoadClearly() throws Exception {
    Path dir = tmp.resolve("ddata");
    ActorSystem first = start("first", dir, Map.of());
    TestKit probe = new TestKit(first);
    ActorRef replicator = replicator(first);
    SelfUniqueAddress node = selfUniqueAddress(first);
    update(probe, replicator, TOPICS, ORSet.create(), s -> s.add(node, "orders")); // first has the DB open

    ActorSystem second = start("second", dir, Map.of());
    LoadFailed failure = expectLoadFailure(second);
    assertTrue(failure.getMessage().contains("locked"), failure.getMessage());
    assertTrue(failure.getMessage().contains(dir.toAbsolutePath().toString()), failure.getMessage());
    second.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

    // the first node is unharmed
    assertEquals(Set.of("orders"), get(probe, replicator, TOPICS).getElements());
  }

  @Test
  void aDirectoryLockedByAnotherProcessFailsTheLoadClearly() throws Exception {
    Path dir = tmp.resolve("ddata");
    Files.createDirectories(dir);
    Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
    Process holder =
        new ProcessBuilder(
                java.toString(),
                "-cp",
                System.getProperty("java.class.path"),
                LevelDbLockHolder.class.getName(),
                dir.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      assertEquals(LevelDbLockHolder.READY, out.readLine()); // blocks until the other process has the DB open

      ActorSystem node = start("node", dir, Map.of());
      LoadFailed failure = expectLoadFailure(node);
      assertTrue(failure.getMessage().contains("locked"), failure.getMessage());
      node.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    } finally {
      holder.getOutputStream().close(); // the holder closes the DB and exits at end of input
      holder.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
      holder.destroy();
    }
  }

  @Test
  void aDirectoryPathThatIsAFileFailsTheLoadClearly() throws Exception {
    Path file = Files.writeString(tmp.resolve("ddata"), "not a directory");
    ActorSystem node = start("node", file, Map.of());
    LoadFailed failure = expectLoadFailure(node);
    assertTrue(failure.getMessage().contains("Cannot create"), failure.getMessage());
    node.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  @Test
  void withoutTerminationOnlyTheReplicatorStops() throws Exception {
    Path dir = tmp.resolve("ddata");
    ActorSystem first = start("first", dir, Map.of());
    replicatorReady(first);
    ActorSystem second =
        start(
            "second",
            dir,
            Map.of(LEVELDB + "terminate-system-on-load-failure", "off"));
    expectLoadFailure(second);
    assertFalse(second.getWhenTerminated().toCompletableFuture().isDone());
  }

  @Test
  void aMissingDirectorySettingStopsTheReplicatorAndTheNode() throws Exception {
    // reference.conf gives a directory below tributary.data-dir: an empty one stands for a missing setting
    ActorSystem node = start("node", null, Map.of(LEVELDB + "dir", ""));
    TestKit logs = new TestKit(node);
    node.getEventStream().subscribe(logs.getRef(), Logging.Error.class); // before the replicator exists
    TestKit watcher = new TestKit(node);
    ActorRef replicator = replicator(node);
    watcher.watch(replicator);
    logs.fishForMessage(
        TIMEOUT, "the missing setting", m -> String.valueOf(((Logging.Error) m).message()).contains("leveldb.dir"));
    watcher.expectTerminated(TIMEOUT, replicator);
    node.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  // ---- settings ----

  @Test
  void settingsDefaultsAndRelativeDirectory() {
    LevelDbDurableStore.Settings s =
        LevelDbDurableStore.Settings.from(ConfigFactory.parseString("leveldb.dir = \"some/ddata\""));
    assertEquals(Paths.get(System.getProperty("user.dir"), "some", "ddata"), s.dir());
    assertFalse(s.fsync());
    assertEquals(Duration.ZERO, s.writeBehindInterval());
    assertTrue(s.nativeLevelDb());
    assertFalse(s.skipCorruptEntries());
    assertTrue(s.terminateSystemOnLoadFailure());

    LevelDbDurableStore.Settings t =
        LevelDbDurableStore.Settings.from(
            ConfigFactory.parseString(
                "leveldb { dir = /abs/ddata, fsync = on, write-behind-interval = 200ms, native = off }"));
    assertEquals(Paths.get("/abs/ddata"), t.dir());
    assertTrue(t.fsync());
    assertEquals(Duration.ofMillis(200), t.writeBehindInterval());
    assertFalse(t.nativeLevelDb());
    assertEquals(
        Duration.ZERO,
        LevelDbDurableStore.Settings.from(ConfigFactory.parseString("leveldb { dir = x, write-behind-interval = off }"))
            .writeBehindInterval());
  }

  @Test
  void aMissingDirectorySettingIsAConfigError() {
    ConfigException e =
        assertThrows(
            ConfigException.Missing.class,
            () -> LevelDbDurableStore.Settings.from(ConfigFactory.parseString("leveldb.fsync = on")));
    assertTrue(e.getMessage().contains("tributary.metadata.replicator.durable.leveldb.dir"), e.getMessage());
  }

  // ---- helpers ----

  /** A single-node cluster whose replicator keeps every key in a {@link LevelDbDurableStore} in {@code dir}. */
  private ActorSystem start(String name, Path dir, Map<String, Object> extra) {
    Map<String, Object> o = new HashMap<>();
    o.put("akka.actor.provider", "cluster");
    o.put("akka.remote.artery.canonical.hostname", "127.0.0.1");
    o.put("akka.remote.artery.canonical.port", 0);
    o.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    o.put("akka.actor.serialize-messages", "on");
    o.put("akka.loglevel", "WARNING");
    // reference.conf names LevelDbDurableStore as the store of Tributary's replicator; here every key is durable
    o.put(MetadataReplicator.CONFIG_PATH + ".durable.keys", List.of("*"));
    if (dir != null) {
      o.put(LEVELDB + "dir", dir.toString());
    }
    o.putAll(extra);
    Config config = ConfigFactory.parseMap(o).withFallback(ConfigFactory.load());
    ActorSystem system = ActorSystem.create(name, config);
    systems.add(system);
    Cluster cluster = Cluster.get(system);
    cluster.join(cluster.selfAddress());
    return system;
  }

  /**
   * The classic replicator of {@code system} with the settings of Tributary's ({@code tributary.metadata.replicator}),
   * started on first call, as {@code DistributedData} starts its own.
   */
  private static ActorRef replicator(ActorSystem system) {
    return REPLICATORS.computeIfAbsent(system, s -> ((akka.actor.ExtendedActorSystem) s).systemActorOf(
        Replicator.props(MetadataReplicator.settings(s.settings().config(), "")), "tributary-metadata-replicator"));
  }

  private static SelfUniqueAddress selfUniqueAddress(ActorSystem system) {
    return new SelfUniqueAddress(Cluster.get(system).selfUniqueAddress());
  }

  /** Waits until the replicator has loaded the durable data (it answers nothing before). */
  private static void replicatorReady(ActorSystem system) {
    get(new TestKit(system), replicator(system), TOPICS, Replicator.GetResponse.class);
  }

  private static void terminate(ActorSystem system) throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }

  private static <T extends akka.cluster.ddata.ReplicatedData> void update(
      TestKit probe, ActorRef replicator, Key<T> key, T initial, java.util.function.Function<T, T> modify) {
    replicator.tell(new Replicator.Update<>(key, initial, Replicator.writeLocal(), modify), probe.getRef());
    probe.expectMsgClass(TIMEOUT, Replicator.UpdateSuccess.class);
  }

  @SuppressWarnings("unchecked")
  private static <T extends akka.cluster.ddata.ReplicatedData> T get(TestKit probe, ActorRef replicator, Key<T> key) {
    return ((Replicator.GetSuccess<T>) get(probe, replicator, key, Replicator.GetSuccess.class)).dataValue();
  }

  private static <R> R get(TestKit probe, ActorRef replicator, Key<?> key, Class<R> expected) {
    replicator.tell(new Replicator.Get<>(key, Replicator.readLocal()), probe.getRef());
    Object reply = probe.expectMsgClass(TIMEOUT, Object.class);
    return assertInstanceOf(expected, reply);
  }

  /** A system that wrote one ORSet and stopped, leaving {@code dir} with one valid entry. */
  private void writeOneTopic(Path dir) throws Exception {
    ActorSystem first = start("first", dir, Map.of());
    SelfUniqueAddress node = selfUniqueAddress(first);
    update(new TestKit(first), replicator(first), TOPICS, ORSet.create(), s -> s.add(node, "orders"));
    terminate(first);
  }

  private static void putRaw(Path dir, String key, byte[] value) throws Exception {
    try (DB db = JniDBFactory.factory.open(dir.toFile(), new Options())) {
      db.put(key.getBytes(StandardCharsets.UTF_8), value);
    }
  }

  /**
   * Expects the durable store of {@code system}'s replicator to fail loading: the failure is logged at error level
   * with the {@link LoadFailed} as its cause, and the replicator stops.
   */
  private static LoadFailed expectLoadFailure(ActorSystem system) {
    TestKit logs = new TestKit(system);
    system.getEventStream().subscribe(logs.getRef(), Logging.Error.class); // before the replicator exists
    TestKit watcher = new TestKit(system);
    ActorRef replicator = replicator(system);
    watcher.watch(replicator);
    Logging.Error error =
        (Logging.Error)
            logs.fishForMessage(
                TIMEOUT, "an error caused by LoadFailed", m -> ((Logging.Error) m).cause() instanceof LoadFailed);
    watcher.expectTerminated(TIMEOUT, replicator);
    return (LoadFailed) error.cause();
  }
}
