package io.tributary.log;

import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ProduceRequest;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The client requests a node's router forwarded to other nodes, remembered (without their records) so that they can be
 * answered when such a node becomes unreachable or leaves before it answers: it cannot, and the client (or the
 * gateway gathering a multi-partition request's answers) would otherwise wait its whole {@code request.timeout.ms}.
 * Kafka's client gets the same effect from its connection to the dead broker closing.
 *
 * <p>Remembered: {@link PartitionLeader.Produce} with a reply-to (its reply-to and correlation id, so that a gathering
 * gateway can tell the answer apart; not its records), {@link PartitionLeader.Fetch} and {@link
 * PartitionLeader.ListOffsets}. Nothing tells the router that a request was answered (answers go straight to the
 * client), so an entry is kept {@link #KEEP_NANOS} and at most {@link #MAX_PER_NODE} per node, oldest forgotten first;
 * a request answered already and then failed here gets a second answer, which its asker no longer waits for (a
 * temporary reply-to is gone, a gathering has filed that correlation id), or which the idempotent producer's retry
 * resolves (a duplicate batch is recognised by the new leader).
 *
 * <p>Not thread-safe: confined to the router actor.
 */
final class InFlightForwards {
  /** How long a forwarded request is remembered: beyond Kafka's default request.timeout.ms (30 s) the client gave up. */
  static final long KEEP_NANOS = java.time.Duration.ofSeconds(35).toNanos();

  /** The most requests remembered per node; older ones are forgotten first (they then time out at the client). */
  static final int MAX_PER_NODE = 50_000;

  private record InFlight(long sentAtNanos, PartitionLeader.Command command) {}

  private final Map<String, ArrayDeque<InFlight>> byNode = new HashMap<>();

  /**
   * Remembers {@code cmd}, forwarded to {@code node} (an Akka address string) at {@code nowNanos} ({@link
   * System#nanoTime()}); commands of other kinds, and produce requests without a reply-to ({@code acks=0}), are not.
   */
  void remember(String node, PartitionLeader.Command cmd, long nowNanos) {
    PartitionLeader.Command light;
    if (cmd instanceof PartitionLeader.Produce p) {
      ProduceRequest r = p.request();
      if (r.replyTo() == null) {
        return;
      }
      // the reply address and correlation id, not the records
      light = new PartitionLeader.Produce(new ProduceRequest(r.version(), r.topic(), r.partition(), r.acks(),
          r.timeoutMs(), null, 0, 0, r.replyTo(), r.correlationId()));
    } else if (cmd instanceof PartitionLeader.Fetch || cmd instanceof PartitionLeader.ListOffsets) {
      light = cmd;
    } else {
      return;
    }
    ArrayDeque<InFlight> q = byNode.computeIfAbsent(node, k -> new ArrayDeque<>());
    while (!q.isEmpty() && (nowNanos - q.peekFirst().sentAtNanos() > KEEP_NANOS || q.size() >= MAX_PER_NODE)) {
      q.removeFirst();
    }
    q.addLast(new InFlight(nowNanos, light));
  }

  /**
   * Answers every request remembered for {@code node} {@link ErrorCode#NOT_LEADER_OR_FOLLOWER} (retriable: the client
   * refreshes its metadata and resends) and forgets them.
   *
   * @return how many were answered
   */
  int failAll(String node, String message) {
    ArrayDeque<InFlight> q = byNode.remove(node);
    if (q == null) {
      return 0;
    }
    for (InFlight f : q) {
      ReplicaManager.reject(f.command(), ErrorCode.NOT_LEADER_OR_FOLLOWER, message);
    }
    return q.size();
  }
}
