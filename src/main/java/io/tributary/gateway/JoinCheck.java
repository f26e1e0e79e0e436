package io.tributary.gateway;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import akka.cluster.MemberStatus;
import java.time.Duration;

/**
 * Whether this node has joined a cluster, for the gateway's answers: a node whose Akka Cluster member has not been Up
 * (or WeaklyUp) {@code tributary.join-timeout} after its gateway started answers admin and group requests at once with
 * {@link io.tributary.protocol.ErrorCode#BROKER_NOT_AVAILABLE} and a message that names seed nodes and joining,
 * instead of letting them time out blaming the controller (an embedding application that configured no
 * {@code akka.cluster.seed-nodes} and never called {@code Cluster.join} has a node that never joins). No Kafka
 * equivalent: a Kafka broker that cannot reach its controller quorum does not start serving.
 *
 * <p>Confined to the gateway actor.
 */
final class JoinCheck {
  /** The config key: how long after start a node that has not joined starts refusing requests (duration). */
  static final String JOIN_TIMEOUT_KEY = "tributary.join-timeout";

  private final akka.cluster.Cluster cluster;
  private final long deadline;
  private final Duration timeout;

  private JoinCheck(akka.cluster.Cluster cluster, Duration timeout) {
    this.cluster = cluster;
    this.timeout = timeout;
    this.deadline = System.nanoTime() + timeout.toNanos();
  }

  /**
   * The check of {@code system}'s node, counting from now; null when the system is not a cluster member at all (a
   * test's local system), for which every request passes.
   */
  static JoinCheck create(ActorSystem<?> system, Duration timeout) {
    if (!(Adapter.toClassic(system).provider() instanceof akka.cluster.ClusterActorRefProvider)) {
      return null;
    }
    return new JoinCheck(akka.cluster.Cluster.get(Adapter.toClassic(system)), timeout);
  }

  /** Set once this node has been Up (or WeaklyUp): a node that leaves later is not one that never joined. */
  private volatile boolean wasUp;

  /** Whether this node is, or has been, a member that serves: Up or WeaklyUp. */
  boolean joined() {
    if (!wasUp) {
      MemberStatus s = cluster.selfMember().status();
      wasUp = s == MemberStatus.up() || s == MemberStatus.weaklyUp();
    }
    return wasUp;
  }

  /** How long a request may still wait for the node to join: zero once joined or past the timeout. */
  Duration remaining() {
    return joined() ? Duration.ZERO : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }

  /** Why this node refuses requests (it has not joined within the timeout), or null if it does not. */
  String refusal() {
    if (joined() || System.nanoTime() - deadline < 0) {
      return null;
    }
    return "This node (" + cluster.selfAddress() + ") has not joined a Tributary cluster within " + JOIN_TIMEOUT_KEY
        + " (" + timeout.toMillis() + " ms) of its start; its member status is "
        + cluster.selfMember().status().toString().replace("$", "") + ". Set akka.cluster.seed-nodes to the addresses"
        + " of the cluster's nodes (a first node may list itself), or have the application call"
        + " Cluster.get(system).manager().tell(new Join(address)); then retry";
  }
}
