package io.tributary.client;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads records from partitions, as Kafka's {@code KafkaConsumer}: either partitions chosen by the application
 * ({@link #assign}) or partitions given by a consumer group ({@link #subscribe}), never both at once.
 *
 * <h2>Threading</h2>
 * Not thread-safe: use one consumer from one thread (the "application thread"). The only method that may be called
 * from any thread is {@link #wakeup()}. Rebalance listeners ({@link ConsumerRebalanceListener}) and commit callbacks
 * ({@link OffsetCommitCallback}) run on the application thread, inside {@link #poll} (callbacks also inside {@code
 * commitSync}, {@code commitAsync} and {@code close}), never concurrently with another call.
 *
 * <h2>Positions</h2>
 * The consumer keeps a position (the next offset to read) per assigned partition and fetches ahead in the background
 * (long polls of {@code fetch.max.wait.ms}). Records come in offset order per partition, never above the high
 * watermark. A new partition starts at the group's committed offset when a {@code group.id} is set and one is
 * committed, else per {@code auto.offset.reset}.
 *
 * <h2>Consumer groups</h2>
 * {@link #subscribe} makes the consumer a member of the group {@code group.id}: a member actor in the client's
 * ActorSystem joins the group coordinator on the brokers, heartbeats, and receives assignments pushed by the
 * coordinator. Each assignment change is applied inside the next {@link #poll}: revoked partitions stop fetching, their
 * positions are committed ({@code enable.auto.commit}), {@link ConsumerRebalanceListener#onPartitionsRevoked} runs,
 * then {@link ConsumerRebalanceListener#onPartitionsAssigned} for the added ones, then the consumer acknowledges the
 * change to the coordinator (only then may another member get the revoked partitions). Records of a partition are never
 * returned once it is revoked. If {@code poll} is not called within {@code max.poll.interval.ms}, the member leaves the
 * group and the next {@code poll} reports its partitions lost and rejoins.
 *
 * <p>Settings: {@code max.poll.records} (500), {@code fetch.max.wait.ms} (500), {@code max.partition.fetch.bytes}
 * (1048576), {@code auto.offset.reset} (earliest|latest|none, default latest), {@code request.timeout.ms} (30000),
 * {@code default.api.timeout.ms} (60000), {@code group.id}, {@code group.instance.id}, {@code client.id}, {@code
 * session.timeout.ms} (45000), {@code heartbeat.interval.ms} (3000), {@code max.poll.interval.ms} (300000), {@code
 * partition.assignment.strategy} (cooperative-sticky), {@code enable.auto.commit} (true with a group id), {@code
 * auto.commit.interval.ms} (5000); see {@link ClientConfig}.
 *
 * <p>Every method except {@link #wakeup()} and {@link #close} throws {@link IllegalStateException} once the consumer
 * is closed.
 */
public interface Consumer<K, V> extends AutoCloseable {

  // ---------------------------------------------------------------------------------------------------------------
  // Manual assignment

  /**
   * Replaces the assignment with {@code partitions} (manual assignment, no group membership). Positions of partitions
   * kept stay; new ones start at the committed offset (with a {@code group.id}) or per {@code auto.offset.reset} on
   * first poll, unless {@link #seek} sets them. An empty collection is {@link #unsubscribe()}.
   *
   * @param partitions the partitions to read
   * @throws IllegalArgumentException if {@code partitions} is null or holds an invalid partition
   * @throws IllegalStateException if the consumer is subscribed ({@link #subscribe}): the two are exclusive
   */
  void assign(Collection<TopicPartition> partitions);

  /**
   * The partitions the consumer reads now: those given to {@link #assign}, or those the group assigned to this member
   * (empty until the first assignment is applied by {@link #poll}).
   *
   * @return an unmodifiable copy
   */
  Set<TopicPartition> assignment();

  // ---------------------------------------------------------------------------------------------------------------
  // Subscription

  /**
   * {@code subscribe(topics, listener)} with a listener that does nothing.
   *
   * @param topics the topics
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id} or with an empty one
   * @throws IllegalArgumentException if {@code topics} is null or holds a null or blank topic
   * @throws IllegalStateException if partitions are assigned manually ({@link #assign})
   */
  void subscribe(Collection<String> topics);

  /**
   * Joins the group {@code group.id} as a consumer of {@code topics} (as Kafka's {@code subscribe}): the group's
   * coordinator divides the partitions of the topics among the group's members, and {@link #poll} applies this
   * member's share, calling {@code listener}. Joining starts at once, in the background. Calling it again replaces the
   * subscription and the listener (the member rejoins with the new topics). An empty collection is {@link
   * #unsubscribe()}.
   *
   * @param topics the topics; topics that do not exist yet are assigned once they are created
   * @param listener told of partitions revoked, assigned and lost, on the application thread inside {@code poll}
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id} or with an empty one
   * @throws IllegalArgumentException if {@code topics} or {@code listener} is null, or a topic is null or blank
   * @throws IllegalStateException if partitions are assigned manually ({@link #assign}): the two are exclusive
   */
  void subscribe(Collection<String> topics, ConsumerRebalanceListener listener);

  /**
   * {@code subscribe(pattern, listener)} with a listener that does nothing.
   *
   * @param pattern a Java regular expression matched against whole topic names
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id} or with an empty one
   * @throws IllegalArgumentException if {@code pattern} is null or empty
   * @throws IllegalStateException if partitions are assigned manually ({@link #assign})
   */
  void subscribe(Pattern pattern);

  /**
   * Joins the group {@code group.id} as a consumer of every topic whose whole name matches {@code pattern}, now and
   * later (the coordinator matches it against the cluster's topics, internal ones excluded; a topic created later is
   * picked up by a rebalance). Otherwise as {@link #subscribe(Collection, ConsumerRebalanceListener)}.
   *
   * @param pattern a Java regular expression matched against whole topic names
   * @param listener told of partitions revoked, assigned and lost
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id} or with an empty one
   * @throws IllegalArgumentException if {@code pattern} or {@code listener} is null, or the pattern is empty
   * @throws IllegalStateException if partitions are assigned manually ({@link #assign})
   */
  void subscribe(Pattern pattern, ConsumerRebalanceListener listener);

  /**
   * Ends the subscription or the manual assignment. A subscribed consumer commits its positions ({@code
   * enable.auto.commit}), calls {@link ConsumerRebalanceListener#onPartitionsRevoked} with its partitions, and leaves
   * the group (a static member, with {@code group.instance.id}, does not send a leave: it only stops). Blocks up to
   * {@code default.api.timeout.ms}.
   *
   * @throws RuntimeException what the rebalance listener threw (after the consumer left)
   */
  void unsubscribe();

  /**
   * The subscribed topics: those given to {@link #subscribe(Collection)}; for a pattern subscription, the topics of
   * this member's current assignment; empty when not subscribed.
   *
   * @return an unmodifiable copy
   */
  Set<String> subscription();

  /**
   * The group membership as of the last assignment applied.
   *
   * @return group id, generation (-1 outside a group), member id ("" outside a group), group instance id
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id} or with an empty one
   */
  ConsumerGroupMetadata groupMetadata();

  // ---------------------------------------------------------------------------------------------------------------
  // Positions

  /**
   * Sets the position of an assigned partition. An offset out of range is detected on the next fetch and handled by
   * {@code auto.offset.reset}.
   *
   * @param partition an assigned partition
   * @param offset the next offset to read, ≥ 0
   * @throws IllegalArgumentException if {@code offset} is negative
   * @throws IllegalStateException if the partition is not assigned
   */
  void seek(TopicPartition partition, long offset);

  /**
   * Moves the positions to the log start offsets, looked up lazily by the next {@link #poll} or {@link #position}. An
   * empty collection means every assigned partition.
   *
   * @param partitions assigned partitions
   * @throws IllegalStateException if a partition is not assigned
   */
  void seekToBeginning(Collection<TopicPartition> partitions);

  /**
   * Moves the positions to the high watermarks (only records written from now on are read), looked up lazily by the
   * next {@link #poll} or {@link #position}. An empty collection means every assigned partition.
   *
   * @param partitions assigned partitions
   * @throws IllegalStateException if a partition is not assigned
   */
  void seekToEnd(Collection<TopicPartition> partitions);

  /**
   * The position (next offset to read) of an assigned partition, looking it up if not yet known (the committed offset,
   * else per {@code auto.offset.reset}).
   *
   * @param partition an assigned partition
   * @return the next offset to read
   * @throws IllegalStateException if the partition is not assigned
   * @throws NoOffsetForPartitionException when {@code auto.offset.reset=none} and no position and no committed offset
   *     exist
   * @throws WakeupException if {@link #wakeup()} was called
   */
  long position(TopicPartition partition);

  /**
   * As {@link #position(TopicPartition)}, waiting at most {@code timeout} for a lookup (Kafka's {@code
   * position(TopicPartition, Duration)}).
   *
   * @param partition an assigned partition
   * @param timeout the longest wait for the lookups, at least 0
   * @return the next offset to read
   * @throws TributaryException a retriable one (e.g. REQUEST_TIMED_OUT, LEADER_NOT_AVAILABLE) when the position could
   *     not be looked up within {@code timeout}
   * @throws IllegalStateException if the partition is not assigned
   * @throws NoOffsetForPartitionException when {@code auto.offset.reset=none} and no position and no committed offset
   *     exist
   * @throws WakeupException if {@link #wakeup()} was called
   */
  long position(TopicPartition partition, java.time.Duration timeout);

  // ---------------------------------------------------------------------------------------------------------------
  // Polling

  /**
   * Returns the records available now, waiting up to {@code timeout} for some. At most {@code max.poll.records}. A
   * subscribed consumer first applies what the group coordinator sent (assignment changes with their listener calls,
   * removal from the group), runs completed commit callbacks, and auto-commits ({@code enable.auto.commit}, at most
   * every {@code auto.commit.interval.ms}). Records of paused partitions are not returned.
   *
   * @param timeout the longest wait, ≥ 0
   * @return records in offset order per partition; empty if none arrived in time
   * @throws NoOffsetForPartitionException when a partition has no position and no committed offset and {@code
   *     auto.offset.reset=none}
   * @throws TributaryException OFFSET_OUT_OF_RANGE when a position is out of range and {@code auto.offset.reset=none};
   *     UNKNOWN_TOPIC_OR_PARTITION if an assigned topic does not exist (after retrying for the timeout);
   *     FENCED_INSTANCE_ID when another consumer with the same {@code group.instance.id} took this one's place (its
   *     partitions are reported lost first; a later {@code poll} rejoins); INVALID_GROUP_ID,
   *     INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT when the group refused the join (a later {@code poll}
   *     tries again)
   * @throws WakeupException if {@link #wakeup()} was called before or during the poll
   * @throws RuntimeException what a rebalance listener or commit callback threw (the rebalance was completed first)
   * @throws IllegalStateException if the consumer is neither subscribed nor assigned
   */
  List<ConsumerRecord<K, V>> poll(Duration timeout);

  /**
   * Stops fetching from the partitions: {@link #poll} returns none of their records until {@link #resume}. Their
   * positions do not change. A paused partition stays paused across a rebalance as long as it stays assigned.
   *
   * @param partitions assigned partitions
   * @throws IllegalStateException if a partition is not assigned (none is paused then)
   */
  void pause(Collection<TopicPartition> partitions);

  /**
   * Resumes paused partitions; resuming a partition that is not paused does nothing.
   *
   * @param partitions assigned partitions
   * @throws IllegalStateException if a partition is not assigned
   */
  void resume(Collection<TopicPartition> partitions);

  /**
   * The paused partitions.
   *
   * @return an unmodifiable copy
   */
  Set<TopicPartition> paused();

  /**
   * Makes the ongoing blocking call ({@link #poll}, {@link #commitSync}, {@link #committed}, {@link #position}) or, if
   * none is running, the next one, throw {@link WakeupException}. Thread-safe: the one method meant to be called from
   * another thread, e.g. a shutdown hook. Calling it several times before the exception is thrown throws it once.
   */
  void wakeup();

  // ---------------------------------------------------------------------------------------------------------------
  // Offsets

  /**
   * Commits the positions of every assigned partition with a known position, blocking up to {@code
   * default.api.timeout.ms}. See {@link #commitSync(Map, Duration)}.
   */
  void commitSync();

  /**
   * Commits the positions of every assigned partition with a known position, blocking up to {@code timeout}. See
   * {@link #commitSync(Map, Duration)}.
   *
   * @param timeout the longest wait
   */
  void commitSync(Duration timeout);

  /**
   * Commits {@code offsets}, blocking up to {@code default.api.timeout.ms}. See {@link #commitSync(Map, Duration)}.
   *
   * @param offsets the offsets (each the next offset to read)
   */
  void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets);

  /**
   * Commits {@code offsets} (each the next offset to read) for the group {@code group.id}, blocking until the
   * coordinator stored them. A subscribed consumer commits as its member in its current generation; with manual
   * assignment it commits as a simple consumer (member id "", generation -1), accepted only while the group has no
   * members. Completed {@link #commitAsync} callbacks run first. Retriable errors (COORDINATOR_LOAD_IN_PROGRESS,
   * COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT, ...) are retried every {@code retry.backoff.ms} until {@code timeout}.
   *
   * @param offsets the offsets; an empty map commits nothing
   * @param timeout the longest wait
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id}; ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID or
   *     REBALANCE_IN_PROGRESS when the group rebalanced in between (Kafka's {@code CommitFailedException}: the
   *     offsets were not committed; the member rejoins, and {@code UNKNOWN_MEMBER_ID} makes the next {@code poll}
   *     report its partitions lost), also REBALANCE_IN_PROGRESS when a subscribed consumer has no assignment yet;
   *     INVALID_COMMIT_OFFSET_SIZE; the last retriable error when {@code timeout} passed
   * @throws WakeupException if {@link #wakeup()} was called
   */
  void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout);

  /** {@code commitAsync(null)}: failures are only logged. */
  void commitAsync();

  /**
   * Commits the positions of every assigned partition with a known position without waiting.
   *
   * @param callback called with the outcome on the application thread during a later {@code poll}, {@code
   *     commitSync}, {@code commitAsync} or {@code close}; may be null
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id}
   */
  void commitAsync(OffsetCommitCallback callback);

  /**
   * Commits {@code offsets} without waiting, as {@link #commitSync(Map, Duration)} but never retried (a retry could
   * overwrite a later commit).
   *
   * @param offsets the offsets (each the next offset to read)
   * @param callback called with the outcome on the application thread during a later {@code poll}, {@code
   *     commitSync}, {@code commitAsync} or {@code close}; may be null
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id}
   */
  void commitAsync(Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback);

  /**
   * The group's committed offsets of {@code partitions}, blocking up to {@code default.api.timeout.ms}.
   *
   * @param partitions the partitions (any, assigned or not)
   * @return a map with an entry for every partition asked; the value is {@code null} when nothing is committed
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id}; the last retriable error when the time
   *     passed
   * @throws WakeupException if {@link #wakeup()} was called
   */
  Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions);

  /**
   * The group's committed offsets of {@code partitions}, blocking up to {@code timeout}.
   *
   * @param partitions the partitions (any, assigned or not)
   * @param timeout the longest wait
   * @return a map with an entry for every partition asked; the value is {@code null} when nothing is committed
   * @throws TributaryException INVALID_GROUP_ID without a {@code group.id}; the last retriable error when the time
   *     passed
   * @throws WakeupException if {@link #wakeup()} was called
   */
  Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions, Duration timeout);

  // ---------------------------------------------------------------------------------------------------------------
  // Metadata

  /**
   * The log start offsets of the partitions. Blocks up to {@code default.api.timeout.ms}.
   *
   * @param partitions the partitions
   * @return offset per partition
   */
  Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions);

  /**
   * The high watermarks (log end offsets as a consumer sees them) of the partitions. Blocks up to {@code
   * default.api.timeout.ms}.
   *
   * @param partitions the partitions
   * @return offset per partition
   */
  Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions);

  /**
   * As {@link #beginningOffsets(Collection)}, blocking up to {@code timeout} (Kafka's overload with a {@code
   * Duration}).
   *
   * @throws TributaryException a retriable one (e.g. REQUEST_TIMED_OUT, LEADER_NOT_AVAILABLE) when not answered in time
   */
  Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions, Duration timeout);

  /**
   * As {@link #endOffsets(Collection)}, blocking up to {@code timeout} (Kafka's overload with a {@code Duration}).
   *
   * @throws TributaryException a retriable one (e.g. REQUEST_TIMED_OUT, LEADER_NOT_AVAILABLE) when not answered in time
   */
  Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout);

  /**
   * The number of partitions of {@code topic}. Blocks up to {@code default.api.timeout.ms}.
   *
   * @param topic the topic
   * @return its partition count
   */
  int partitionsFor(String topic);

  // ---------------------------------------------------------------------------------------------------------------
  // Closing

  /** {@code close(Duration.ofSeconds(30))}. */
  @Override
  void close();

  /**
   * Closes the consumer, taking up to {@code timeout}: a subscribed consumer commits its positions ({@code
   * enable.auto.commit}, synchronously), calls {@link ConsumerRebalanceListener#onPartitionsRevoked} with its
   * partitions, and leaves the group at once so that its partitions go to the others — except a static member ({@code
   * group.instance.id}), which does not leave: if it comes back within {@code session.timeout.ms} it gets its
   * partitions back. A consumer with manual assignment commits its positions ({@code enable.auto.commit}). Completed
   * and pending async commits are awaited and their callbacks run. Idempotent; {@link #wakeup()} does not interrupt it.
   *
   * <p>{@code timeout} also bounds the consumer calls the rebalance listener makes meanwhile (a {@code commitSync} in
   * {@code onPartitionsRevoked} gets what is left of it, not {@code default.api.timeout.ms}). Once the client cannot
   * reach a broker any more because it is shutting down, retriable errors are not retried: close ends early.
   *
   * @param timeout the longest time to spend, ≥ 0
   * @throws RuntimeException what the rebalance listener or a commit callback threw (after closing)
   */
  void close(Duration timeout);
}
