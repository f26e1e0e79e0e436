package io.tributary.client;

import java.util.Map;

/**
 * Called when an asynchronous commit ({@link Consumer#commitAsync}) completes, as Kafka's {@code
 * OffsetCommitCallback}.
 *
 * <p>Threading: the callback runs on the application's consumer thread, inside a later call to {@link Consumer#poll},
 * {@link Consumer#commitSync}, {@link Consumer#commitAsync} or {@link Consumer#close}, never concurrently with another
 * consumer call. Callbacks run in the order the commits completed. An exception thrown by the callback propagates out
 * of the consumer call that ran it.
 */
@FunctionalInterface
public interface OffsetCommitCallback {
  /**
   * The commit completed.
   *
   * @param offsets the offsets the commit carried
   * @param exception {@code null} on success; else a {@link TributaryException} with the error code, e.g.
   *     ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID / REBALANCE_IN_PROGRESS when the group rebalanced in between (the
   *     consumer rejoins; asynchronous commits are never retried), REQUEST_TIMED_OUT, COORDINATOR_NOT_AVAILABLE
   */
  void onComplete(Map<TopicPartition, OffsetAndMetadata> offsets, Exception exception);
}
