package io.tributary.broker;

import akka.Done;
import akka.actor.Address;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.typed.Cluster;
import akka.cluster.typed.Join;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.group.GroupSettings;
import io.tributary.log.PartitionLeader;
import io.tributary.log.TunedLeveldbJournal;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.ProtocolVersions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A standalone broker node: an ActorSystem named {@code tributary} (Akka Cluster over Artery TCP on 127.0.0.1) with
 * {@link Tributary} started in it. What {@code bin/tributary server} and {@code quickstart} run, and what the
 * multi-JVM tests start. A node without configured seed nodes forms a one-node cluster by joining itself. It has two
 * ports: the cluster port ({@code akka.remote.artery.canonical.*}, 9192 by default), for members only, and the client
 * listener ({@code tributary.broker.listeners}, 127.0.0.1:9092 by default, see {@link
 * io.tributary.gateway.ClientListener}), which {@link #bootstrapServer()} names.
 *
 * <p>Thread-safe. {@link #close()} leaves the cluster through Akka's coordinated shutdown and waits for the
 * system to terminate (journals closed, so the data directory can be reopened in the same JVM).
 */
public final class BrokerNode implements AutoCloseable {
  /** Name of the ActorSystem of a standalone node; clients address {@code host:port} with this name implied. */
  public static final String SYSTEM_NAME = "tributary";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final ActorSystem<Void> system;
  private final Tributary tributary;
  private final FileChannel lock;

  private BrokerNode(ActorSystem<Void> system, Tributary tributary, FileChannel lock) {
    this.system = system;
    this.tributary = tributary;
    this.lock = lock;
  }

  /** A second broker was started on a data directory that a running broker holds ({@code <data-dir>/.lock}). */
  public static final class DataDirInUseException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    DataDirInUseException(String message) {
      super(message);
    }
  }

  /**
   * Locks {@code dataDir/.lock} for this process, so that a second broker on the same data directory fails at once
   * with a clear message instead of fighting over the LevelDB journals.
   *
   * @throws DataDirInUseException if another process (or node in this JVM) holds it
   */
  private static FileChannel lockDataDir(Path dataDir) {
    Path file = dataDir.resolve(".lock");
    try {
      FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock held;
      try {
        held = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        held = null;
      }
      if (held == null) {
        channel.close();
        throw new DataDirInUseException("The data directory " + dataDir
            + " is in use by another Tributary broker (it holds " + file + ")");
      }
      return channel;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot lock the data directory " + dataDir, e);
    }
  }

  /**
   * The configuration of a node: {@code overrides} (paths like {@code tributary.data-dir},
   * {@code akka.remote.artery.canonical.port}), then JVM system properties, then {@code configFile} (when null:
   * {@code ./application.conf} if it exists), then the broker defaults ({@code tributary-broker.conf}) and every
   * library's {@code reference.conf}. A relative {@code tributary.data-dir} is made absolute against the working
   * directory.
   */
  public static Config config(Path configFile, Map<String, Object> overrides) {
    Path file = configFile;
    if (file == null && Files.isRegularFile(Path.of("application.conf"))) {
      file = Path.of("application.conf");
    }
    if (file != null && !Files.isRegularFile(file)) {
      throw new IllegalArgumentException("Config file " + file
          + (Files.isDirectory(file) ? " is a directory" : " does not exist"));
    }
    Config unresolved = ConfigFactory.parseMap(overrides == null ? Map.of() : overrides)
        .withFallback(ConfigFactory.systemProperties())
        .withFallback(file == null ? ConfigFactory.empty() : ConfigFactory.parseFile(file.toFile()))
        .withFallback(ConfigFactory.parseResources("tributary-broker.conf"))
        .withFallback(ConfigFactory.defaultReferenceUnresolved());
    Path dataDir = Path.of(unresolved.resolve().getString("tributary.data-dir")).toAbsolutePath().normalize();
    Map<String, Object> abs = new HashMap<>();
    abs.put("tributary.data-dir", dataDir.toString());
    return ConfigFactory.parseMap(abs).withFallback(unresolved).resolve();
  }

  /**
   * Reads every settings object a node reads while it starts ({@link BrokerSettings}, {@link ReplicationSettings},
   * {@link GroupSettings}), so that a bad value fails at once, before anything is started, naming its full key.
   *
   * @param config a config from {@link #config}
   * @throws IllegalArgumentException naming the key of a value out of range
   * @throws com.typesafe.config.ConfigException naming the key (in full) of a value missing or of the wrong type
   */
  public static void checkSettings(Config config) {
    BrokerSettings.create(config);
    io.tributary.gateway.ClientListener.Settings.create(config);
    ReplicationSettings.create(config);
    GroupSettings.create(config);
  }

  /**
   * Starts a node and waits until it is Up, its controller answers and its group coordinator has loaded the
   * committed offsets.
   *
   * @param config a config from {@link #config}
   * @throws IllegalStateException if the node does not become ready within 60 s (the system is terminated); or,
   *     before the system starts, if a journal would not start or holds partitions that belong in another (its
   *     persistence id file corrupt, lost, cut or moved, or {@code tributary.journal.instances} changed; see {@link
   *     TunedLeveldbJournal#checkStore} and {@link PartitionLeader#checkPlacement})
   * @throws DataDirInUseException if another broker holds the data directory
   * @throws IllegalArgumentException for invalid settings
   * @throws com.typesafe.config.ConfigException for settings missing or of the wrong type (see {@link
   *     #checkSettings})
   */
  public static BrokerNode start(Config config) {
    checkSettings(config); // before the ActorSystem, whose Tributary extension would fail with them later
    BrokerSettings settings = BrokerSettings.create(config);
    try {
      Files.createDirectories(settings.dataDir());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create the data directory " + settings.dataDir(), e);
    }
    FileChannel lock = lockDataDir(settings.dataDir());
    ActorSystem<Void> system;
    try {
      checkJournals(config, settings);
      system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, config);
    } catch (RuntimeException e) {
      closeQuietly(lock);
      throw e;
    }
    try {
      Cluster cluster = Cluster.get(system);
      CompletableFuture<Done> up = new CompletableFuture<>();
      akka.cluster.Cluster.get(akka.actor.typed.javadsl.Adapter.toClassic(system))
          .registerOnMemberUp(() -> up.complete(Done.getInstance()));
      if (config.getStringList("akka.cluster.seed-nodes").isEmpty()) {
        cluster.manager().tell(Join.create(cluster.selfMember().address()));
      }
      up.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      Tributary tributary = Tributary.get(system);
      awaitController(system, tributary);
      awaitGroupCoordinator(system, tributary);
      return new BrokerNode(system, tributary, lock);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      system.terminate();
      closeQuietly(lock);
      throw new IllegalStateException("Interrupted while starting the broker", e);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      system.terminate();
      awaitTermination(system);
      closeQuietly(lock);
      if (e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
        throw (RuntimeException) e;
      }
      throw new IllegalStateException("The broker did not become ready within " + START_TIMEOUT.toSeconds() + " s: "
          + e, e);
    }
  }

  /**
   * {@link TunedLeveldbJournal#checkStore} and {@link PartitionLeader#checkPlacement} for each journal, before any
   * starts: a journal that would refuse to start (a corrupt or lost persistence id file), or one holding partitions
   * that belong elsewhere (a moved file, a changed {@code tributary.journal.instances}), fails the broker's start at
   * once with one line, instead of a node half-started until the start times out or partitions started empty.
   *
   * @throws IllegalStateException "journal-N: ..." for the first journal that would refuse to start
   */
  private static void checkJournals(Config config, BrokerSettings settings) {
    for (int i = 0; config.hasPath(BrokerSettings.journalPluginId(i)); i++) {
      Config journal = config.getConfig(BrokerSettings.journalPluginId(i));
      Path dir = Path.of(journal.getString("dir"));
      try {
        if (i < settings.journalInstances()) {
          TunedLeveldbJournal.checkStore(dir, journal.getBoolean("native"));
        }
        PartitionLeader.checkPlacement(dir, i, settings.journalInstances()); // also the unused instances' dirs
      } catch (IllegalStateException e) {
        throw new IllegalStateException("journal-" + i + ": " + e.getMessage(), e);
      }
    }
  }

  private static void awaitController(ActorSystem<Void> system, Tributary tributary)
      throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      CompletionStage<AdminResponse> answer = AskPattern.ask(tributary.gateway(),
          replyTo -> new AdminRequest.ListTopics(ProtocolVersions.CURRENT, true, replyTo), Duration.ofSeconds(2),
          system.scheduler());
      try {
        answer.toCompletableFuture().get();
        return;
      } catch (ExecutionException e) {
        // the singleton is still starting: ask again
      }
    }
    throw new TimeoutException("controller did not answer");
  }

  private static void awaitGroupCoordinator(ActorSystem<Void> system, Tributary tributary)
      throws InterruptedException, TimeoutException {
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      CompletionStage<GroupProtocol.ListGroupsResponse> answer = AskPattern.ask(tributary.gateway(),
          replyTo -> new GroupProtocol.ListGroups(ProtocolVersions.CURRENT, "", replyTo), Duration.ofSeconds(2),
          system.scheduler());
      try {
        if (answer.toCompletableFuture().get().error() == io.tributary.protocol.ErrorCode.NONE) {
          return;
        }
        Thread.sleep(50); // loading committed offsets: no event to wait on from outside the singleton
      } catch (ExecutionException e) {
        // the singleton is still starting: ask again
      }
    }
    throw new TimeoutException("group coordinator did not finish loading");
  }

  /**
   * The address clients connect to, {@code host:port}: the client listener's ({@code tributary.broker.listeners}), or
   * the cluster port's when the node has no listener.
   */
  public String bootstrapServer() {
    return tributary.listener().map(io.tributary.gateway.ClientListener::bootstrapServer).orElseGet(() -> {
      Address a = Cluster.get(system).selfMember().address();
      return a.getHost().orElse("127.0.0.1") + ":" + a.getPort().orElse(0);
    });
  }

  /** The cluster port's address, {@code host:port}: what other members (and {@code --seed-node}) use. */
  public String clusterAddress() {
    Address a = Cluster.get(system).selfMember().address();
    return a.getHost().orElse("127.0.0.1") + ":" + a.getPort().orElse(0);
  }

  /** The node's ActorSystem. */
  public ActorSystem<Void> system() {
    return system;
  }

  /** The broker extension of this node. */
  public Tributary tributary() {
    return tributary;
  }

  /** Completes when the node's ActorSystem has terminated. */
  public CompletionStage<Done> whenTerminated() {
    return system.getWhenTerminated();
  }

  /** Leaves the cluster and terminates the system; waits up to 30 s. Idempotent. */
  @Override
  public void close() {
    system.terminate();
    awaitTermination(system);
    closeQuietly(lock);
  }

  /**
   * Stops this node as a crash looks to the rest of the cluster: its ActorSystem terminates without Akka's coordinated
   * shutdown, so there is no controlled shutdown (its leaderships are not moved first), no leave and no hand-off; the
   * other members find it unreachable and down it (split brain resolver, {@code stable-after}), then elect new
   * leaders from the ISR, as after {@code kill -9}. What the node acknowledged is in its journals (written before
   * each acknowledgement). Unlike a killed process, its Artery transport still tells its peers that it terminates.
   * Waits up to 30 s; releases the data directory. Idempotent; for tests (see {@code
   * io.tributary.testkit.TributaryTestCluster#kill}).
   */
  public void kill() {
    akka.actor.ActorSystem classic = akka.actor.typed.javadsl.Adapter.toClassic(system);
    if (classic instanceof akka.actor.ActorSystemImpl impl) {
      impl.finalTerminate(); // Akka's terminate() without the coordinated shutdown it runs first
    } else {
      system.terminate();
    }
    awaitTermination(system);
    closeQuietly(lock);
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close(); // releases the lock
    } catch (IOException e) {
      // nothing to do
    }
  }

  private static void awaitTermination(ActorSystem<?> system) {
    try {
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // nothing more to do
    }
  }
}
