package io.tributary.broker;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Extension;
import akka.actor.typed.ExtensionId;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.Adapter;
import akka.cluster.typed.Cluster;
import io.tributary.client.TributaryClient;
import io.tributary.cluster.Controller;
import io.tributary.cluster.MetadataReplicator;
import io.tributary.gateway.ClientListener;
import io.tributary.gateway.Gateway;
import io.tributary.group.GroupCoordinator;
import io.tributary.group.GroupSettings;
import io.tributary.log.JournalAccess;
import io.tributary.log.PartitionLeader;
import io.tributary.log.ReplicaManager;
import io.tributary.protocol.ClientRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;

/**
 * Turns a cluster-enabled Akka {@link ActorSystem} into a Tributary broker node: {@code Tributary.get(system)}.
 *
 * <p>On first use on a system it reads and validates {@link BrokerSettings}, creates the data directory, and starts
 * the node's parts: the partition router, the shard region of partition leaders (each a Cluster Sharding entity on
 * the node the controller elected, {@link PartitionLeader}, {@link io.tributary.log.LeaderSharding}) and the replica
 * manager that hosts this node's followers ({@link ReplicaManager}), the {@link Controller} and {@link
 * GroupCoordinator} singletons, the Distributed Data replicator of the topic metadata ({@link MetadataReplicator},
 * Tributary's own: Akka's {@code DistributedData} extension and its settings stay the application's), the node's
 * {@link Gateway} at {@code /system/tributary-node-gateway}, and, when {@code tributary.broker.listeners} is set
 * ({@code HOST:PORT}), the {@link ClientListener}: the address remote clients connect to ({@code
 * TributaryClient.connect("host:port")}), apart from the cluster's own port, which only members use. The application
 * itself uses {@link #client()}.
 *
 * <pre>{@code
 * ActorSystem<Void> system = ActorSystem.create(guardian, "my-app", config); // provider=cluster, roles=[broker]
 * Tributary broker = Tributary.get(system);
 * Producer<String, String> producer =
 *     broker.client().producer(Map.of("acks", "all"), Serializer.string(), Serializer.string());
 * }</pre>
 *
 * <p>Requirements on the system (checked, {@link IllegalStateException} with the fix otherwise):
 * {@code akka.actor.provider = cluster}, the node has the cluster role {@code tributary.role} (default
 * {@code broker}), and the config holds Tributary's {@code reference.conf} (it does when the jar is on the class
 * path). The system's own cluster formation (seed nodes, joining) stays the application's.
 *
 * <p>Thread-safe.
 */
public final class Tributary implements Extension {
  /** Tributary's own logger for the node's start-up notices (not Akka's {@code ActorSystem} logger). */
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Tributary.class);


  /** The extension id. */
  public static final ExtensionId<Tributary> ID = new ExtensionId<>() {
    @Override
    public Tributary createExtension(ActorSystem<?> system) {
      return new Tributary(system);
    }
  };

  /** The broker of {@code system}, started on first call. */
  public static Tributary get(ActorSystem<?> system) {
    return ID.apply(system);
  }

  private final ActorSystem<?> system;
  private final BrokerSettings settings;
  private final JournalAccess journal;
  private final ActorRef<PartitionLeader.Command> partitions;
  private final ActorRef<Controller.Command> controller;
  private final ActorRef<ClientRequest> gateway;
  private final ActorRef<GroupCoordinator.Command> groupCoordinator;
  private final ClientListener listener;
  private volatile TributaryClient client;

  private Tributary(ActorSystem<?> system) {
    this.system = system;
    String provider = system.settings().config().getString("akka.actor.provider");
    if (!provider.equals("cluster") && !provider.equals("akka.cluster.ClusterActorRefProvider")) {
      throw new IllegalStateException(
          "Tributary needs a cluster ActorSystem: set akka.actor.provider = cluster (was " + provider + ")");
    }
    this.settings = BrokerSettings.create(system.settings().config());
    checkDirectoriesFollowDataDir(system.settings().config(), settings);
    io.tributary.protocol.FrameLimits.allowInboundFrames(system.settings().config());
    io.tributary.net.PartialFrameBudget.configure(system.settings().config());
    if (!settings.role().isEmpty() && !Cluster.get(system).selfMember().hasRole(settings.role())) {
      throw new IllegalStateException("This node lacks the cluster role '" + settings.role()
          + "' that broker nodes need: set akka.cluster.roles = [\"" + settings.role() + "\"]");
    }
    try {
      // native LevelDB creates its own directory but not missing parents
      Files.createDirectories(settings.dataDir());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create the data directory " + settings.dataDir(), e);
    }
    if (!framingGuardActive()) {
      LOG.warn("Akka's own akka.stream.impl.io.ByteStringParser$ByteReader or "
          + "akka.remote.artery.tcp.TcpFraming was loaded, not Tributary's: a client connection that sends a negative "
          + "or overflowing Artery frame length, or garbage frames, can then stall this node. Put Tributary's jar "
          + "before akka-stream's and akka-remote's on the classpath (see README, Guarantees)");
    }
    String frameNotice = BrokerSettings.frameNotice(system.settings().config());
    if (frameNotice != null) {
      LOG.warn(frameNotice);
    }
    if (!readingSelectorActive()) {
      LOG.warn("Akka's own akka.io.TcpIncomingConnection was loaded, not Tributary's: incoming connections "
          + "are then read through akka.io's selector, which costs more CPU per request. Put Tributary's jar before "
          + "akka-actor's on the classpath");
    }
    this.journal = new JournalAccess((akka.actor.ExtendedActorSystem) Adapter.toClassic(system));
    ReplicationSettings replication = ReplicationSettings.create(system.settings().config());
    // Tributary's own replicator for the topic metadata: Akka's DistributedData extension stays the application's
    MetadataReplicator metadata = MetadataReplicator.start(system, settings.role());
    this.partitions = ReplicaManager.initRouter(system, metadata);
    this.controller = Controller.init(system, settings, replication, partitions, metadata);
    ReplicaManager.initManager(system, settings, replication, journal, partitions, controller, metadata);
    addControlledShutdown(system, replication);
    this.groupCoordinator = GroupCoordinator.init(system, settings, GroupSettings.create(system.settings().config()),
        partitions, controller);
    this.gateway = system.systemActorOf(Gateway.create(partitions, controller, groupCoordinator,
            replication.metadataWriteTimeout().multipliedBy(2),
            system.settings().config().getDuration("tributary.join-timeout")), Gateway.NODE_NAME,
        Props.empty());
    ClientListener.Settings listenerSettings = ClientListener.Settings.create(system.settings().config());
    this.listener = listenerSettings == null ? null : ClientListener.start(system, gateway, listenerSettings);
    if (listener != null) {
      closeListenerOnShutdown(system, listener);
    }
  }

  /**
   * Closes the client listener when the node leaves through coordinated shutdown: after the controlled shutdown (its
   * clients are still served while leaderships move away, and its gateway routes them to the new leaders), before
   * the node leaves the cluster (from then on its gateway could no longer reach the other nodes). The listener tells
   * its clients, which move to another node at once. Also when the system terminates without that phase.
   */
  private static void closeListenerOnShutdown(ActorSystem<?> system, ClientListener listener) {
    akka.actor.CoordinatedShutdown.get(Adapter.toClassic(system)).addTask(
        akka.actor.CoordinatedShutdown.PhaseClusterShardingShutdownRegion(), "tributary-close-client-listener",
        () -> listener.close().toCompletableFuture().handle((d, e) -> akka.Done.getInstance()));
    system.getWhenTerminated().thenRun(listener::close);
  }

  /**
   * Whether the loaded {@code akka.stream.impl.io.ByteStringParser$ByteReader} and {@code
   * akka.remote.artery.tcp.TcpFraming} are Tributary's replacements (in this jar): the first refuses the negative,
   * overflowing and oversized frame lengths that Akka 2.6.21's lets stall Artery's TCP inbound stream, the second
   * closes a connection at its first frame that cannot be an Artery envelope or of an unknown stream; false when one
   * of Akka's own classes came first on the classpath.
   */
  public static boolean framingGuardActive() {
    try {
      return Class.forName("akka.stream.impl.io.ByteStringParser$ByteReader").getField("OVERFLOW_SAFE")
          .getBoolean(null)
          && Class.forName("akka.remote.artery.tcp.TcpFraming").getField("CHECKS_ENVELOPES").getBoolean(null);
    } catch (ReflectiveOperationException | LinkageError e) {
      return false;
    }
  }

  /**
   * Whether the loaded {@code akka.io.TcpIncomingConnection} is Tributary's replacement (in this jar), which reads
   * incoming pull-mode connections on {@link io.tributary.net.ReadingSelector}; false when Akka's own came first on
   * the classpath (everything still works, at a higher CPU cost per request).
   */
  public static boolean readingSelectorActive() {
    try {
      return Class.forName("akka.io.TcpIncomingConnection").getField("READS_ON_SELECTOR").getBoolean(null);
    } catch (ReflectiveOperationException | LinkageError e) {
      return false;
    }
  }

  /**
   * Refuses a config whose journal, snapshot and metadata directories were resolved against the default {@code
   * tributary.data-dir} ({@code data}) while {@code tributary.data-dir} itself says another: what {@code
   * ConfigFactory.parseString("tributary.data-dir = ...").withFallback(ConfigFactory.load())} makes, since {@code
   * load()} resolves {@code reference.conf}'s {@code ${tributary.data-dir}} before the application's value is there.
   * Such a node would write into {@code ./data}, which may be another broker's data directory.
   *
   * @throws IllegalStateException naming the directories and how to build the config instead
   */
  static void checkDirectoriesFollowDataDir(com.typesafe.config.Config config, BrokerSettings settings) {
    java.nio.file.Path defaultDir = java.nio.file.Path.of(
        com.typesafe.config.ConfigFactory.defaultReference().getString("tributary.data-dir")).toAbsolutePath()
        .normalize();
    if (defaultDir.equals(settings.dataDir().toAbsolutePath().normalize())) {
      return;
    }
    java.util.List<String> keys = new java.util.ArrayList<>();
    for (int i = 0; i < BrokerSettings.MAX_JOURNAL_INSTANCES; i++) {
      keys.add("tributary.persistence.journal-" + i + ".dir");
    }
    keys.add("tributary.persistence.snapshot.dir");
    keys.add("tributary.metadata.replicator.durable.leveldb.dir");
    java.util.List<String> stale = new java.util.ArrayList<>();
    for (String key : keys) {
      if (config.hasPath(key)) {
        java.nio.file.Path dir = java.nio.file.Path.of(config.getString(key)).toAbsolutePath().normalize();
        if (dir.startsWith(defaultDir) && !dir.startsWith(settings.dataDir().toAbsolutePath().normalize())) {
          stale.add(key + " = " + config.getString(key));
        }
      }
    }
    if (!stale.isEmpty()) {
      throw new IllegalStateException("tributary.data-dir is " + settings.dataDir() + " but " + String.join(", ", stale)
          + ": the config was resolved before tributary.data-dir was set (ConfigFactory.load() resolves"
          + " reference.conf's ${tributary.data-dir} at once), so this node would write into " + defaultDir
          + ". Set tributary.data-dir in application.conf, or build the config with ConfigFactory.load(yourConfig)"
          + " or yourConfig.withFallback(ConfigFactory.defaultReferenceUnresolved()).resolve()");
    }
  }

  /**
   * How long the controlled shutdown waits for the controller: {@code controlled.shutdown.timeout.ms}, cut to Akka's
   * timeout of the phase it runs in ({@code akka.coordinated-shutdown.phases.before-cluster-shutdown.timeout}) less a
   * second, so that the phase does not time out under it; a standalone node's {@code tributary-broker.conf} sets that
   * phase to 20 s, Akka's default is 5 s. Says so at WARN when it cuts.
   */
  static java.time.Duration controlledShutdownTimeout(ActorSystem<?> system, ReplicationSettings replication) {
    java.time.Duration configured = replication.controlledShutdownTimeout();
    java.time.Duration phase = java.time.Duration.ofMillis(akka.actor.CoordinatedShutdown.get(Adapter.toClassic(system))
        .timeout(akka.actor.CoordinatedShutdown.PhaseBeforeClusterShutdown()).toMillis());
    java.time.Duration room = phase.minusSeconds(1);
    if (room.compareTo(configured) >= 0) {
      return configured;
    }
    java.time.Duration cut = room.compareTo(java.time.Duration.ofMillis(500)) < 0 ? java.time.Duration.ofMillis(500)
        : room;
    LOG.warn("The controlled shutdown waits at most {} ms for the controller, not "
        + "tributary.broker.controlled.shutdown.timeout.ms = {}: Akka's phase it runs in, "
        + "akka.coordinated-shutdown.phases.before-cluster-shutdown.timeout, is {} ms. Set that phase's timeout above "
        + "the controlled shutdown's (a standalone node's tributary-broker.conf sets 20s)",
        cut.toMillis(), configured.toMillis(), phase.toMillis());
    return cut;
  }

  /**
   * As Kafka's controlled shutdown: when this node leaves through Akka's coordinated shutdown (SIGTERM, {@code cluster
   * stop}, {@code ActorSystem.terminate()}), before it leaves the cluster it asks the controller to move the
   * leadership of its partitions to in-sync replicas on other nodes and to drop it from the ISRs, and waits for that
   * (at most {@code controlled.shutdown.timeout.ms}). Clients then see NOT_LEADER_OR_FOLLOWER, which they retry.
   */
  private void addControlledShutdown(ActorSystem<?> system, ReplicationSettings replication) {
    java.time.Duration timeout = controlledShutdownTimeout(system, replication);
    akka.actor.CoordinatedShutdown.get(Adapter.toClassic(system)).addTask(
        akka.actor.CoordinatedShutdown.PhaseBeforeClusterShutdown(), "tributary-controlled-shutdown", () -> {
          Cluster cluster = Cluster.get(system);
          boolean others = false;
          for (akka.cluster.Member m : cluster.state().getMembers()) {
            if (!m.address().equals(cluster.selfMember().address())
                && m.status() == akka.cluster.MemberStatus.up()) {
              others = true;
            }
          }
          if (!others || cluster.selfMember().status() != akka.cluster.MemberStatus.up()) {
            return java.util.concurrent.CompletableFuture.completedFuture(akka.Done.getInstance());
          }
          String self = system.address().toString();
          return akka.actor.typed.javadsl.AskPattern.<Controller.Command, Controller.ControlledShutdownResult>ask(
                  controller, replyTo -> new Controller.ControlledShutdown(self, replyTo),
                  timeout, system.scheduler())
              .handle((r, ex) -> {
                if (ex != null) {
                  LOG.warn("Controlled shutdown: the controller did not answer in {} ms ({}); leaving anyway",
                      timeout.toMillis(), ex.toString());
                } else if (r.remainingLeaderships() > 0) {
                  LOG.warn("Controlled shutdown: {} partitions had no other in-sync replica and go offline",
                      r.remainingLeaderships());
                }
                return akka.Done.getInstance();
              });
        });
  }

  /** The node's settings. */
  public BrokerSettings settings() {
    return settings;
  }

  /**
   * The node's client listener ({@code tributary.broker.listeners}): where remote clients connect, apart from the
   * cluster port. Empty when the key is empty (an embedding application's node serves only in-process clients unless
   * it sets one).
   */
  public java.util.Optional<ClientListener> listener() {
    return java.util.Optional.ofNullable(listener);
  }

  /** The node's gateway (what remote clients' requests reach through the client listener). */
  public ActorRef<ClientRequest> gateway() {
    return gateway;
  }

  /**
   * The in-process client of this node: {@code client().admin()}, {@code client().producer(...)},
   * {@code client().consumer(...)}. Requests go straight to this node's gateway (no remoting). Created on first
   * call; closing it does not stop the node.
   */
  public TributaryClient client() {
    TributaryClient c = client;
    if (c == null) {
      synchronized (this) {
        c = client;
        if (c == null) {
          c = TributaryClient.embedded(system, gateway);
          client = c;
        }
      }
    }
    return c;
  }

  /** The node's partition router: send it {@link PartitionLeader.Command}s, they reach the partition's leader. */
  public ActorRef<PartitionLeader.Command> partitions() {
    return partitions;
  }

  /** The controller singleton's proxy. */
  public ActorRef<Controller.Command> controller() {
    return controller;
  }

  /** The group coordinator singleton's proxy. */
  public ActorRef<GroupCoordinator.Command> groupCoordinator() {
    return groupCoordinator;
  }

  /** Direct access to this node's journals (retention, tests). */
  public JournalAccess journal() {
    return journal;
  }

  /** The system this broker runs in. */
  public ActorSystem<?> system() {
    return system;
  }
}
