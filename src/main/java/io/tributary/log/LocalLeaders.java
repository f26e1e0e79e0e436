package io.tributary.log;

import akka.actor.AbstractExtensionId;
import akka.actor.ExtendedActorSystem;
import akka.actor.Extension;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import java.util.Map;

/**
 * The partition replicas of this node that the replicated metadata names as their partition's leader, by topic and
 * partition, so that the node's gateway can hand a client's produce, fetch or list-offsets request straight to the
 * leader instead of through the {@link ReplicaManager}'s router and manager (two actor hand-offs fewer per request,
 * each a thread wake-up on a busy broker).
 *
 * <p>A shortcut, never the authority: the replica's own role decides. A replica that has just stopped leading
 * answers NOT_LEADER_OR_FOLLOWER, as one reached through the router does, and the client refreshes its metadata. Only
 * the node's replica manager publishes ({@link #publish}), whenever its metadata view changes; requests for
 * partitions not listed go through the router.
 *
 * <p>An Akka extension (one per ActorSystem); thread-safe: the manager swaps an immutable view, the gateway reads it.
 */
public final class LocalLeaders implements Extension {

  /** The extension's id. */
  public static final Id ID = new Id();

  private static final ActorRef<?>[] NONE = new ActorRef<?>[0];

  /** Topic -> leader replica by partition number (null where this node does not lead). Never mutated once set. */
  private volatile Map<String, ActorRef<?>[]> leaders = Map.of();

  private LocalLeaders() {}

  /** The extension of {@code system}. */
  public static LocalLeaders get(ActorSystem<?> system) {
    return ID.get(Adapter.toClassic(system));
  }

  /**
   * The local replica that leads {@code topic}-{@code partition} by the node's metadata, or {@code null} if there is
   * none (not led here, unknown, or being deleted). Allocation-free; any thread.
   */
  @SuppressWarnings("unchecked")
  public ActorRef<PartitionLeader.Command> leader(String topic, int partition) {
    ActorRef<?>[] byPartition = leaders.getOrDefault(topic, NONE);
    return partition >= 0 && partition < byPartition.length
        ? (ActorRef<PartitionLeader.Command>) byPartition[partition] : null;
  }

  /**
   * Replaces the view: topic -> array indexed by partition, holding the local leader replica or {@code null}. The
   * caller must not change the map or its arrays afterwards. The node's replica manager is the one publisher (a test
   * may stand in for it).
   */
  public void publish(Map<String, ActorRef<?>[]> view) {
    leaders = Map.copyOf(view);
  }

  /** Creates the extension. */
  public static final class Id extends AbstractExtensionId<LocalLeaders> {
    private Id() {}

    @Override
    public LocalLeaders createExtension(ExtendedActorSystem system) {
      return new LocalLeaders();
    }
  }
}
