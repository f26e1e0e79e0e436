package io.tributary.protocol;

import akka.actor.typed.ActorRef;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import java.util.List;

/**
 * The consumer group protocol between a consumer (an actor in the client JVM, or in-process when embedded) and the
 * group coordinator singleton, through any node's gateway. Control plane: Jackson CBOR.
 *
 * <h2>Membership (push, actor-based)</h2>
 * A consumer {@link JoinGroup joins} with its subscription, its assignors in order of preference and its member actor.
 * The coordinator answers with a member id at once ({@link JoinGroupResponse}) and later <em>pushes</em>
 * {@link AssignmentChanged} to the member actor each time the member's assignment changes; each push carries the
 * group's new generation. The member applies it (revoking first, then assigning, calling its rebalance listener) and
 * answers {@link AssignmentAck}: only then does the coordinator consider the revoked partitions free, so a partition
 * is never owned by two members at once. With the cooperative assignor only the partitions that move are revoked.
 * The coordinator also watches the member actor (Akka death watch) and expects a {@link Heartbeat} every
 * {@code heartbeat.interval.ms}; a member silent for {@code session.timeout.ms} is removed.
 *
 * <h2>Offsets</h2>
 * {@link OffsetCommit} stores the next offset to read for partitions the member owns (generation checked: a stale
 * generation gets {@link ErrorCode#ILLEGAL_GENERATION}, an unknown member {@link ErrorCode#UNKNOWN_MEMBER_ID}).
 * A consumer outside any active group (manual assignment) commits with member id "" and generation -1, accepted
 * while the group has no members, as Kafka's simple consumers. {@link OffsetFetch} reads them back.
 */
public final class GroupProtocol {
  private GroupProtocol() {}

  /** A topic and partition. */
  public record PartitionRef(@JsonProperty("topic") String topic, @JsonProperty("partition") int partition)
      implements CborSerializable {
    @JsonCreator
    public PartitionRef {}

    @Override
    public String toString() {
      return topic + "-" + partition;
    }
  }

  /** A committed offset: {@code offset} is the next offset to read; -1 when nothing is committed. */
  public record PartitionOffset(
      @JsonProperty("topic") String topic,
      @JsonProperty("partition") int partition,
      @JsonProperty("offset") long offset,
      @JsonProperty("metadata") String metadata)
      implements CborSerializable {
    @JsonCreator
    public PartitionOffset {}
  }

  /** Requests to the group coordinator. */
  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
  @JsonSubTypes({
    @JsonSubTypes.Type(value = JoinGroup.class, name = "join"),
    @JsonSubTypes.Type(value = Heartbeat.class, name = "heartbeat"),
    @JsonSubTypes.Type(value = AssignmentAck.class, name = "ack"),
    @JsonSubTypes.Type(value = LeaveGroup.class, name = "leave"),
    @JsonSubTypes.Type(value = OffsetCommit.class, name = "commit"),
    @JsonSubTypes.Type(value = OffsetFetch.class, name = "fetch"),
    @JsonSubTypes.Type(value = ListGroups.class, name = "list"),
    @JsonSubTypes.Type(value = DescribeGroup.class, name = "describe"),
    @JsonSubTypes.Type(value = ResetOffsets.class, name = "reset"),
    @JsonSubTypes.Type(value = DeleteGroup.class, name = "delete")
  })
  public interface GroupRequest extends ClientRequest, CborSerializable {
    /** The group this request is about. */
    String groupId();

    /**
     * Where the answer goes: each answered request's {@code replyTo} component; {@code null} for a request that is
     * not answered ({@link AssignmentAck}). Any thread.
     */
    default ActorRef<?> replyTo() {
      return null;
    }
  }

  /**
   * Joins (or rejoins) a group.
   *
   * @param memberId "" for a new member, else the id the coordinator gave (a rejoin after a lost push or a restart)
   * @param groupInstanceId {@code group.instance.id} for static membership, or null
   * @param topics the subscribed topics (empty when {@code topicPattern} is used)
   * @param topicPattern a Java regex matched against topic names (internal topics excluded), or null
   * @param assignors assignor names in order of preference ({@code partition.assignment.strategy})
   * @param sessionTimeoutMs {@code session.timeout.ms}
   * @param rebalanceTimeoutMs {@code max.poll.interval.ms}: how long the coordinator waits for revocations
   * @param owned partitions the member owns now (after a coordinator move or a rejoin)
   * @param member the member actor that receives {@link MemberEvent}s
   */
  public record JoinGroup(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("groupInstanceId") String groupInstanceId,
      @JsonProperty("clientId") String clientId,
      @JsonProperty("topics") List<String> topics,
      @JsonProperty("topicPattern") String topicPattern,
      @JsonProperty("assignors") List<String> assignors,
      @JsonProperty("sessionTimeoutMs") int sessionTimeoutMs,
      @JsonProperty("rebalanceTimeoutMs") int rebalanceTimeoutMs,
      @JsonProperty("owned") List<PartitionRef> owned,
      @JsonProperty("member") ActorRef<MemberEvent> member,
      @JsonProperty("replyTo") ActorRef<JoinGroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public JoinGroup {}
  }

  /**
   * The answer to {@link JoinGroup}: the member id to use from now on and the group's generation. The assignment
   * follows as an {@link AssignmentChanged} push. Errors: INVALID_GROUP_ID, INVALID_SESSION_TIMEOUT,
   * INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID (rejoin with "" then), COORDINATOR_LOAD_IN_PROGRESS.
   */
  public record JoinGroupResponse(
      @JsonProperty("error") ErrorCode error,
      @JsonProperty("errorMessage") String errorMessage,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("generation") int generation)
      implements CborSerializable {
    @JsonCreator
    public JoinGroupResponse {}
  }

  /** Liveness and generation check; answered with a {@link GroupResponse} carrying the group's generation. */
  public record Heartbeat(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("generation") int generation,
      @JsonProperty("replyTo") ActorRef<GroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public Heartbeat {}
  }

  /**
   * The member applied the assignment of {@code generation} and now owns exactly {@code owned}. Not answered.
   */
  public record AssignmentAck(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("generation") int generation,
      @JsonProperty("owned") List<PartitionRef> owned)
      implements GroupRequest {
    @JsonCreator
    public AssignmentAck {}
  }

  /** Leaves the group at once (consumer close); its partitions are reassigned without waiting. */
  public record LeaveGroup(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("replyTo") ActorRef<GroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public LeaveGroup {}
  }

  /**
   * Commits offsets (the next offset to read) of partitions the member owns. Errors: ILLEGAL_GENERATION (stale
   * generation, or a partition not owned by the member), UNKNOWN_MEMBER_ID, INVALID_COMMIT_OFFSET_SIZE (negative),
   * INVALID_GROUP_ID, COORDINATOR_LOAD_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION.
   */
  public record OffsetCommit(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("generation") int generation,
      @JsonProperty("offsets") List<PartitionOffset> offsets,
      @JsonProperty("replyTo") ActorRef<GroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public OffsetCommit {}
  }

  /** Reads committed offsets ({@code partitions} empty: all of the group's). */
  public record OffsetFetch(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("partitions") List<PartitionRef> partitions,
      @JsonProperty("replyTo") ActorRef<OffsetFetchResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public OffsetFetch {}
  }

  /** Committed offsets; a partition without a commit has offset -1. */
  public record OffsetFetchResponse(
      @JsonProperty("error") ErrorCode error,
      @JsonProperty("errorMessage") String errorMessage,
      @JsonProperty("offsets") List<PartitionOffset> offsets)
      implements CborSerializable {
    @JsonCreator
    public OffsetFetchResponse {}
  }

  /** Lists groups (those with members or committed offsets). {@code groupId} is ignored. */
  public record ListGroups(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("replyTo") ActorRef<ListGroupsResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public ListGroups {}
  }

  /** One group in a listing; {@code state} is Empty, PreparingRebalance, CompletingRebalance or Stable. */
  public record GroupListing(@JsonProperty("groupId") String groupId, @JsonProperty("state") String state)
      implements CborSerializable {
    @JsonCreator
    public GroupListing {}
  }

  /** The answer to {@link ListGroups}, sorted by group id. */
  public record ListGroupsResponse(
      @JsonProperty("error") ErrorCode error, @JsonProperty("groups") List<GroupListing> groups)
      implements CborSerializable {
    @JsonCreator
    public ListGroupsResponse {}
  }

  /** Describes a group: state, members and their partitions, offsets and lag. Error: GROUP_ID_NOT_FOUND. */
  public record DescribeGroup(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("replyTo") ActorRef<DescribeGroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public DescribeGroup {}
  }

  /** A member as shown by describe. */
  public record MemberDescription(
      @JsonProperty("memberId") String memberId,
      @JsonProperty("groupInstanceId") String groupInstanceId,
      @JsonProperty("clientId") String clientId,
      @JsonProperty("host") String host,
      @JsonProperty("assignment") List<PartitionRef> assignment)
      implements CborSerializable {
    @JsonCreator
    public MemberDescription {}
  }

  /**
   * A partition's committed offset (-1: none), log end offset (the high watermark) and lag (log end minus
   * committed; -1 when nothing is committed).
   */
  public record PartitionLag(
      @JsonProperty("topic") String topic,
      @JsonProperty("partition") int partition,
      @JsonProperty("committedOffset") long committedOffset,
      @JsonProperty("logEndOffset") long logEndOffset,
      @JsonProperty("lag") long lag,
      @JsonProperty("memberId") String memberId)
      implements CborSerializable {
    @JsonCreator
    public PartitionLag {}
  }

  /** The answer to {@link DescribeGroup}. */
  public record DescribeGroupResponse(
      @JsonProperty("error") ErrorCode error,
      @JsonProperty("errorMessage") String errorMessage,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("state") String state,
      @JsonProperty("generation") int generation,
      @JsonProperty("assignor") String assignor,
      @JsonProperty("members") List<MemberDescription> members,
      @JsonProperty("offsets") List<PartitionLag> offsets)
      implements CborSerializable {
    @JsonCreator
    public DescribeGroupResponse {}
  }

  /**
   * Sets committed offsets of an inactive group (as {@code kafka-consumer-groups --reset-offsets --execute}).
   * Errors: NON_EMPTY_GROUP while the group has members, INVALID_COMMIT_OFFSET_SIZE, INVALID_GROUP_ID.
   */
  public record ResetOffsets(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("offsets") List<PartitionOffset> offsets,
      @JsonProperty("replyTo") ActorRef<GroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public ResetOffsets {}
  }

  /** Deletes an inactive group and its committed offsets. Errors: NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND. */
  public record DeleteGroup(
      @JsonProperty("version") short version,
      @JsonProperty("groupId") String groupId,
      @JsonProperty("replyTo") ActorRef<GroupResponse> replyTo)
      implements GroupRequest {
    @JsonCreator
    public DeleteGroup {}
  }

  /** A plain answer: an error (NONE on success) and the group's current generation (-1 if unknown). */
  public record GroupResponse(
      @JsonProperty("error") ErrorCode error,
      @JsonProperty("errorMessage") String errorMessage,
      @JsonProperty("generation") int generation)
      implements CborSerializable {
    @JsonCreator
    public GroupResponse {}
  }

  /**
   * A copy of {@code r} answered to {@code replyTo} instead of its own reply-to (the gateway's forwarding child uses
   * it); {@link AssignmentAck}, which is not answered, is returned as it is. A pure function: any thread.
   *
   * @param replyTo must accept the response type of {@code r} (e.g. {@link GroupResponse} for a commit); it is cast
   *     unchecked
   */
  @SuppressWarnings("unchecked")
  public static GroupRequest withReplyTo(GroupRequest r, ActorRef<?> replyTo) {
    if (r instanceof JoinGroup j) {
      return new JoinGroup(j.version(), j.groupId(), j.memberId(), j.groupInstanceId(), j.clientId(), j.topics(),
          j.topicPattern(), j.assignors(), j.sessionTimeoutMs(), j.rebalanceTimeoutMs(), j.owned(), j.member(),
          (ActorRef<JoinGroupResponse>) replyTo);
    } else if (r instanceof Heartbeat h) {
      return new Heartbeat(h.version(), h.groupId(), h.memberId(), h.generation(), (ActorRef<GroupResponse>) replyTo);
    } else if (r instanceof LeaveGroup l) {
      return new LeaveGroup(l.version(), l.groupId(), l.memberId(), (ActorRef<GroupResponse>) replyTo);
    } else if (r instanceof OffsetCommit c) {
      return new OffsetCommit(c.version(), c.groupId(), c.memberId(), c.generation(), c.offsets(),
          (ActorRef<GroupResponse>) replyTo);
    } else if (r instanceof OffsetFetch f) {
      return new OffsetFetch(f.version(), f.groupId(), f.partitions(), (ActorRef<OffsetFetchResponse>) replyTo);
    } else if (r instanceof ListGroups l) {
      return new ListGroups(l.version(), l.groupId(), (ActorRef<ListGroupsResponse>) replyTo);
    } else if (r instanceof DescribeGroup d) {
      return new DescribeGroup(d.version(), d.groupId(), (ActorRef<DescribeGroupResponse>) replyTo);
    } else if (r instanceof ResetOffsets reset) {
      return new ResetOffsets(reset.version(), reset.groupId(), reset.offsets(), (ActorRef<GroupResponse>) replyTo);
    } else if (r instanceof DeleteGroup d) {
      return new DeleteGroup(d.version(), d.groupId(), (ActorRef<GroupResponse>) replyTo);
    }
    return r;
  }

  /**
   * Answers {@code r} with {@code error} and {@code message} in its own response type (nothing for {@link
   * AssignmentAck}); the group's generation in the answer is -1. Only sends a message: any thread or actor.
   */
  public static void fail(GroupRequest r, ErrorCode error, String message) {
    if (r instanceof JoinGroup j) {
      j.replyTo().tell(new JoinGroupResponse(error, message, j.memberId(), -1));
    } else if (r instanceof Heartbeat h) {
      h.replyTo().tell(new GroupResponse(error, message, -1));
    } else if (r instanceof LeaveGroup l) {
      l.replyTo().tell(new GroupResponse(error, message, -1));
    } else if (r instanceof OffsetCommit c) {
      c.replyTo().tell(new GroupResponse(error, message, -1));
    } else if (r instanceof OffsetFetch f) {
      f.replyTo().tell(new OffsetFetchResponse(error, message, List.of()));
    } else if (r instanceof ListGroups l) {
      l.replyTo().tell(new ListGroupsResponse(error, List.of()));
    } else if (r instanceof DescribeGroup d) {
      d.replyTo().tell(new DescribeGroupResponse(error, message, d.groupId(), "Dead", -1, "", List.of(), List.of()));
    } else if (r instanceof ResetOffsets reset) {
      reset.replyTo().tell(new GroupResponse(error, message, -1));
    } else if (r instanceof DeleteGroup d) {
      d.replyTo().tell(new GroupResponse(error, message, -1));
    }
  }

  /** Pushed by the coordinator to a member actor. */
  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME)
  @JsonSubTypes({
    @JsonSubTypes.Type(value = AssignmentChanged.class, name = "assignment"),
    @JsonSubTypes.Type(value = MemberRemoved.class, name = "removed")
  })
  public interface MemberEvent extends CborSerializable {}

  /**
   * The member's assignment for {@code generation}: it must own exactly {@code assigned} from now on (revoking
   * what it owns beyond that first), then answer {@link AssignmentAck}.
   */
  public record AssignmentChanged(
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("generation") int generation,
      @JsonProperty("assignor") String assignor,
      @JsonProperty("assigned") List<PartitionRef> assigned)
      implements MemberEvent {
    @JsonCreator
    public AssignmentChanged {}
  }

  /**
   * The member is no longer in the group (session expired, fenced by a newer static member, group deleted): it must
   * drop its partitions at once (they may already belong to others) and rejoin with member id "".
   */
  public record MemberRemoved(
      @JsonProperty("groupId") String groupId,
      @JsonProperty("memberId") String memberId,
      @JsonProperty("error") ErrorCode error,
      @JsonProperty("reason") String reason)
      implements MemberEvent {
    @JsonCreator
    public MemberRemoved {}
  }
}
