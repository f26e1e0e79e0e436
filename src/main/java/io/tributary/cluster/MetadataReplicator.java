package io.tributary.cluster;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.ActorContext;
import akka.cluster.ddata.LWWMap;
import akka.cluster.ddata.ReplicatorSettings;
import akka.cluster.ddata.typed.javadsl.Replicator;
import akka.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.time.Duration;

/**
 * Tributary's own Distributed Data replicator, which holds the cluster metadata ({@link ClusterMetadata#TOPICS}),
 * apart from the replicator of Akka's {@code DistributedData} extension that the embedding application may use for its
 * own data. It is configured from {@value #CONFIG_PATH} (reference.conf: Akka's {@code akka.cluster.distributed-data}
 * layout and values, with Tributary's durable keys and {@link LevelDbDurableStore}), so Tributary sets no key of
 * Akka's own replicator: the application's durable store and keys stay the application's, and Tributary's metadata
 * stays durable whichever jar's {@code reference.conf} comes first on the class path. The idea is Akka's own: the
 * typed receptionist and Cluster Sharding each run a replicator of their own, configured from a section of their own
 * laid out as {@code akka.cluster.distributed-data}.
 *
 * <h2>Shape</h2>
 *
 * One per node: {@link #start} runs a typed {@link Replicator#behavior} as the system actor
 * {@code /system/<name>} (default {@code tributary-metadata-replicator}), whose classic replicator is its child
 * {@code underlying}. Replicators find their peers by path, so {@code name} must be the same on every node. Its
 * replicas are the members with the role {@code tributary.role} (all members when it is empty): the nodes that run
 * Tributary, so a majority is counted over the nodes that hold the metadata. The {@code role} key of the section is
 * therefore not read.
 *
 * <p>Actors use it through {@link #adapter}, a {@link ReplicatorMessageAdapter} with Akka's unexpected-ask timeout
 * ({@value #UNEXPECTED_ASK_TIMEOUT_PATH}), as {@code DistributedData.withReplicatorMessageAdapter} builds for the
 * extension's replicator.
 *
 * <h2>Errors</h2>
 *
 * {@link #start} and {@link #settings} throw {@link ConfigException} (naming the key) when the section is missing
 * (Tributary's reference.conf is not in the config) or holds a value of the wrong type. A durable store that cannot
 * load stops the replicator (and, by default, the node): see {@link LevelDbDurableStore}.
 *
 * <p>Immutable and thread-safe; the replicator's state is confined to its actor.
 */
public final class MetadataReplicator {

  /** The config section of Tributary's replicator, laid out as {@code akka.cluster.distributed-data}. */
  public static final String CONFIG_PATH = "tributary.metadata.replicator";

  /** The ask timeout of {@link ReplicatorMessageAdapter}s that Akka's typed {@code DistributedData} uses. */
  public static final String UNEXPECTED_ASK_TIMEOUT_PATH =
      "akka.cluster.ddata.typed.replicator-message-adapter-unexpected-ask-timeout";

  private final ActorRef<Replicator.Command> ref;
  private final Duration unexpectedAskTimeout;

  private MetadataReplicator(ActorRef<Replicator.Command> ref, Duration unexpectedAskTimeout) {
    this.ref = ref;
    this.unexpectedAskTimeout = unexpectedAskTimeout;
  }

  /**
   * Starts the node's metadata replicator as a system actor. Call once per system (the {@code Tributary} extension
   * does); a second call fails with {@code InvalidActorNameException}, as the name is taken.
   *
   * @param role the cluster role of the nodes that run Tributary ({@code tributary.role}); empty: every member
   * @throws ConfigException if {@value #CONFIG_PATH} or {@value #UNEXPECTED_ASK_TIMEOUT_PATH} is missing or invalid
   */
  public static MetadataReplicator start(ActorSystem<?> system, String role) {
    Config config = system.settings().config();
    ReplicatorSettings settings = settings(config, role);
    Duration timeout = config.getDuration(UNEXPECTED_ASK_TIMEOUT_PATH);
    String name = config.getString(CONFIG_PATH + ".name");
    if (name.isBlank()) {
      throw new ConfigException.BadValue(CONFIG_PATH + ".name", "the replicator's actor name is empty");
    }
    return new MetadataReplicator(system.systemActorOf(Replicator.behavior(settings), name, Props.empty()), timeout);
  }

  /**
   * The replicator's settings: {@value #CONFIG_PATH} of {@code config}, with its replicas on the nodes with
   * {@code role}.
   *
   * @throws ConfigException if the section is missing or a value in it is missing or of the wrong type
   */
  public static ReplicatorSettings settings(Config config, String role) {
    Config section = config.getConfig(CONFIG_PATH);
    try {
      return ReplicatorSettings.apply(section).withRole(role);
    } catch (ConfigException e) {
      // Akka's messages name the key relative to the section
      throw new ConfigException.BadValue(CONFIG_PATH, e.getMessage(), e);
    }
  }

  /** The replicator (typed protocol). */
  public ActorRef<Replicator.Command> ref() {
    return ref;
  }

  /**
   * A message adapter for the topic map, to be created in the actor's setup and used only by that actor (as every
   * {@link ReplicatorMessageAdapter}): subscriptions and asks whose replies come back as {@code A}.
   */
  public <A> ReplicatorMessageAdapter<A, LWWMap<String, TopicMetadata>> adapter(ActorContext<A> ctx) {
    return new ReplicatorMessageAdapter<>(ctx, ref, unexpectedAskTimeout);
  }
}
