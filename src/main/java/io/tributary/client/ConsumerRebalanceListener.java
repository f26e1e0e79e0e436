package io.tributary.client;

import java.util.Collection;

/**
 * Called when the group coordinator changes the partitions of a subscribed consumer ({@link
 * Consumer#subscribe(java.util.Collection, ConsumerRebalanceListener)}), as Kafka's {@code ConsumerRebalanceListener}.
 *
 * <p>Threading: every method runs on the application's consumer thread, inside {@link Consumer#poll} (or {@link
 * Consumer#close} / {@link Consumer#unsubscribe}), never concurrently with another consumer call. The listener may
 * call the consumer (e.g. {@link Consumer#commitSync()}, {@link Consumer#seek}, {@link Consumer#position}) but not
 * {@link Consumer#poll}. While a method runs, the coordinator waits (up to {@code max.poll.interval.ms}) before it
 * gives the revoked partitions to another member.
 *
 * <p>An exception thrown by a method does not stop the rebalance: the consumer finishes applying the new assignment
 * (and acknowledges it), then rethrows the exception from the {@code poll} (or {@code close}) that ran the listener.
 *
 * <p>Order within one assignment change: {@link #onPartitionsRevoked} (after the revoked partitions stopped fetching
 * and, with {@code enable.auto.commit}, after their positions were committed), then {@link #onPartitionsAssigned}.
 */
public interface ConsumerRebalanceListener {

  /**
   * Partitions are taken away in an orderly way: this is the moment to commit what was processed (their positions
   * are still readable, {@link Consumer#assignment()} still holds them). Called with the revoked partitions: with the
   * cooperative assignor only when some are revoked; with the eager ones (range, roundrobin) once per rebalance, at
   * its start, with everything the consumer owned (possibly nothing). Also called with every owned partition by
   * {@link Consumer#close} and {@link Consumer#unsubscribe} (when there are some).
   *
   * @param partitions the partitions revoked, unmodifiable
   */
  void onPartitionsRevoked(Collection<TopicPartition> partitions);

  /**
   * Partitions were added to the assignment. Called at the end of every rebalance, with the partitions added
   * (possibly none; with the cooperative assignor after each assignment change, so also after a change that only
   * revoked). Positions not set here (by {@link Consumer#seek}) start at the committed offset, else per {@code
   * auto.offset.reset}.
   *
   * @param partitions the partitions added, unmodifiable
   */
  void onPartitionsAssigned(Collection<TopicPartition> partitions);

  /**
   * Partitions were lost: the consumer is no longer a member (removed after its session timed out, fenced by another
   * static member, or it left because {@code poll} was not called within {@code max.poll.interval.ms}), so other
   * members may already own them. Offsets can no longer be committed for them. Called only with a non-empty
   * collection. By default calls {@link #onPartitionsRevoked}, as Kafka's.
   *
   * @param partitions the partitions lost, unmodifiable
   */
  default void onPartitionsLost(Collection<TopicPartition> partitions) {
    onPartitionsRevoked(partitions);
  }
}
