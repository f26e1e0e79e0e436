package io.tributary.protocol;

import java.util.HashMap;
import java.util.Map;

/**
 * Stable error codes carried by every reply of the Tributary protocol.
 *
 * <p>The numeric codes are Apache Kafka's own (see Kafka's {@code org.apache.kafka.common.protocol.Errors}), so that
 * a later Kafka-protocol listener can pass them through unchanged and so that Kafka users recognise them. A code is
 * never renumbered or reused. {@link #retriable()} tells whether a client may retry the same request unchanged (possibly
 * after refreshing metadata); clients map non-retriable codes to exceptions at once.
 */
public enum ErrorCode {
  /** Not an error: the request succeeded. */
  NONE(0, false, "no error"),
  /** A server-side failure not covered by a more specific code. */
  UNKNOWN_SERVER_ERROR(-1, false, "unexpected server error"),
  /** The requested offset is below the log start offset or above the high watermark. */
  OFFSET_OUT_OF_RANGE(1, false, "the requested offset is not within the range of offsets of this partition"),
  /** A record batch failed its CRC32C check, or its bytes do not follow the record batch v2 layout. */
  CORRUPT_MESSAGE(2, true, "the record batch is corrupt (CRC or layout check failed)"),
  /** The topic or partition does not exist (or is not yet known to this node). */
  UNKNOWN_TOPIC_OR_PARTITION(3, true, "this topic or partition does not exist"),
  /** A fetch asked for a negative or zero maximum number of bytes. */
  INVALID_FETCH_SIZE(4, false, "the requested fetch size is invalid"),
  /** The partition has no leader right now (it is starting or moving). */
  LEADER_NOT_AVAILABLE(5, true, "there is no leader for this partition right now"),
  /** The request went to a node that is not the leader (or follower) of the partition. */
  NOT_LEADER_OR_FOLLOWER(6, true, "this node is not the leader or a follower of the partition"),
  /** The request did not complete in time on the broker, or the client saw no reply within request.timeout.ms. */
  REQUEST_TIMED_OUT(7, true, "the request timed out"),
  /** A record batch is larger than message.max.bytes (broker/topic) or max.request.size (producer). */
  MESSAGE_TOO_LARGE(10, false, "the record batch is larger than the maximum the server accepts"),
  /** The connection to the broker failed. */
  NETWORK_EXCEPTION(13, true, "the connection to the broker failed"),
  /** The group coordinator is still loading committed offsets; retry shortly. */
  COORDINATOR_LOAD_IN_PROGRESS(14, true, "the group coordinator is loading and cannot process requests yet"),
  /** The group coordinator is not running right now (starting or moving to another node). */
  COORDINATOR_NOT_AVAILABLE(15, true, "the group coordinator is not available"),
  /** The topic name is invalid (Kafka's rules: [a-zA-Z0-9._-], 1 to 249 characters, not '.' or '..'). */
  INVALID_TOPIC_EXCEPTION(17, false, "the topic name is invalid"),
  /** Not enough in-sync replicas to accept an acks=all write. */
  NOT_ENOUGH_REPLICAS(19, true, "not enough in-sync replicas for an acks=all write"),
  /** The batch was appended but the ISR shrank below {@code min.insync.replicas} before it was replicated. */
  NOT_ENOUGH_REPLICAS_AFTER_APPEND(20, true, "the ISR shrank below min.insync.replicas after the append"),
  /** The acks value of a produce request is not -1, 0 or 1. */
  INVALID_REQUIRED_ACKS(21, false, "acks must be -1 (all), 0 or 1"),
  /** A group request carried a generation that is not the group's current one (or a partition the member does not own). */
  ILLEGAL_GENERATION(22, false, "the generation is not the group's current generation"),
  /** The member's assignors have nothing in common with the group's. */
  INCONSISTENT_GROUP_PROTOCOL(23, false, "the member's assignors are not supported by the group"),
  /** The group id is empty or invalid. */
  INVALID_GROUP_ID(24, false, "the group id is invalid"),
  /** The member id is not known to the group (it left, was removed, or never joined). */
  UNKNOWN_MEMBER_ID(25, false, "the member id is not known to the group"),
  /** session.timeout.ms is outside the broker's allowed range. */
  INVALID_SESSION_TIMEOUT(26, false, "the session timeout is not within the allowed range"),
  /** The group is rebalancing: the member should wait for its new assignment (or rejoin). */
  REBALANCE_IN_PROGRESS(27, false, "the group is rebalancing"),
  /** The committed offset is negative. */
  INVALID_COMMIT_OFFSET_SIZE(28, false, "the committed offset is invalid"),
  /** A record timestamp is invalid (negative other than -1). */
  INVALID_TIMESTAMP(32, false, "the record timestamp is invalid"),
  /** The request's protocol version is not supported by this broker. */
  UNSUPPORTED_VERSION(35, false, "the request version is not supported by this broker"),
  /** A topic with this name already exists. */
  TOPIC_ALREADY_EXISTS(36, false, "a topic with this name already exists"),
  /** The number of partitions is invalid (must be at least 1). */
  INVALID_PARTITIONS(37, false, "the number of partitions is invalid"),
  /** The replication factor is invalid or larger than the number of live brokers. */
  INVALID_REPLICATION_FACTOR(38, false, "the replication factor is invalid"),
  /** A topic config key or value is invalid. */
  INVALID_CONFIG(40, false, "a configuration key or value is invalid"),
  /** The request is malformed. */
  INVALID_REQUEST(42, false, "the request is invalid"),
  /** The group still has active members (delete or reset refused). */
  NON_EMPTY_GROUP(68, false, "the group is not empty"),
  /** The group does not exist. */
  GROUP_ID_NOT_FOUND(69, false, "the group id does not exist"),
  /** A static member with the same group.instance.id joined later: this one is fenced. */
  FENCED_INSTANCE_ID(82, false, "a newer member with the same group.instance.id replaced this one"),
  /** The record batch uses a compression codec this broker does not support. */
  UNSUPPORTED_COMPRESSION_TYPE(76, false, "the compression type is not supported"),
  /** A record in the batch is invalid (for example, its size fields disagree with the batch). */
  INVALID_RECORD(87, false, "a record in the batch is invalid"),
  /**
   * An idempotent producer's batch does not follow the last sequence number the leader has for that producer id and
   * partition (a batch before it is missing). Not retriable in itself: the idempotent producer resends such a batch
   * (after the earlier one's retry, or with a new epoch once the earlier one failed), as Kafka's producer does.
   */
  OUT_OF_ORDER_SEQUENCE_NUMBER(45, false, "the batch's sequence number is out of order for this producer"),
  /** The batch was already appended (a retry); the leader answers NONE with the original offset instead. */
  DUPLICATE_SEQUENCE_NUMBER(46, false, "the batch is a duplicate of one already appended"),
  /** The producer epoch is older than the one the leader has for that producer id. */
  INVALID_PRODUCER_EPOCH(47, false, "the producer epoch is older than the current one"),
  /** The leader has no state for this producer id (it expired) and the batch does not start at sequence 0. */
  UNKNOWN_PRODUCER_ID(59, false, "the leader has no state for this producer id"),
  /** A replica request carried a leader epoch older than the partition's current one. */
  FENCED_LEADER_EPOCH(74, true, "the leader epoch in the request is older than the current one"),
  /** A replica request carried a leader epoch newer than the one this node knows (its metadata is behind). */
  UNKNOWN_LEADER_EPOCH(75, true, "the leader epoch in the request is newer than the one this node knows"),
  /**
   * A newly elected leader does not know its high watermark yet (its followers have not reported since the election),
   * so it cannot say where the log ends; retry shortly (as Kafka's KIP-207).
   */
  OFFSET_NOT_AVAILABLE(78, true, "the leader's high watermark is not known yet after a leader change"),
  /**
   * The node does not serve: it has not joined a cluster (no seed nodes configured, none reachable, or never told to
   * join). Not retriable: the message says what to configure. (Kafka's BROKER_NOT_AVAILABLE.)
   */
  BROKER_NOT_AVAILABLE(8, false, "the broker is not available: it has not joined a cluster"),
  /** The local log storage failed. */
  KAFKA_STORAGE_ERROR(56, true, "the broker's log storage failed");

  private static final Map<Integer, ErrorCode> BY_CODE = new HashMap<>();

  static {
    for (ErrorCode e : values()) {
      BY_CODE.put(e.code, e);
    }
  }

  private final int code;
  private final boolean retriable;
  private final String message;

  ErrorCode(int code, boolean retriable, String message) {
    this.code = code;
    this.retriable = retriable;
    this.message = message;
  }

  /** The stable numeric code (Kafka's). */
  public int code() {
    return code;
  }

  /** Whether the client may retry the same request (after a metadata refresh where relevant). */
  public boolean retriable() {
    return retriable;
  }

  /** A short human-readable description of the error. */
  public String defaultMessage() {
    return message;
  }

  /**
   * The error with the given numeric code.
   *
   * @return the matching error, or {@link #UNKNOWN_SERVER_ERROR} for a code this version does not know
   */
  public static ErrorCode forCode(int code) {
    return BY_CODE.getOrDefault(code, UNKNOWN_SERVER_ERROR);
  }
}
