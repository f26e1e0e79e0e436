package io.tributary.client;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Behaviors;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.GroupProtocol.AssignmentChanged;
import io.tributary.protocol.GroupProtocol.GroupRequest;
import io.tributary.protocol.GroupProtocol.GroupResponse;
import io.tributary.protocol.GroupProtocol.Heartbeat;
import io.tributary.protocol.GroupProtocol.JoinGroup;
import io.tributary.protocol.GroupProtocol.JoinGroupResponse;
import io.tributary.protocol.GroupProtocol.LeaveGroup;
import io.tributary.protocol.GroupProtocol.MemberEvent;
import io.tributary.protocol.GroupProtocol.MemberRemoved;
import io.tributary.protocol.GroupProtocol.OffsetCommit;
import io.tributary.protocol.GroupProtocol.OffsetFetch;
import io.tributary.protocol.GroupProtocol.OffsetFetchResponse;
import io.tributary.protocol.GroupProtocol.PartitionOffset;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.PartitionDescription;
import io.tributary.gateway.ProduceGathering;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import io.tributary.log.ProducerStateTable;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory stand-in for a node's gateway, for client tests without a broker: topics with partitions holding
 * record batches, dense offsets, long-poll fetches, and injectable faults. Single node, no replication.
 *
 * <p>It also plays a scripted group coordinator: {@code JoinGroup} is answered at once (a new member id for "", the
 * group's generation), heartbeats are answered NONE for known members, commits are checked against the group's
 * generation (member "" with generation -1 only while the group has no members) and stored, {@code OffsetFetch}
 * reads them back. Nothing is pushed by itself: tests push with {@link #push} and {@link #removeMember}, and await
 * what the consumer sends with {@link #awaitRequest}.
 *
 * <p>Produce requests go through a {@link ProducerStateTable} per partition, as the partition leader's: a retry of an
 * idempotent producer's batch is answered NONE with its original offset, a batch out of sequence is rejected with
 * OUT_OF_ORDER_SEQUENCE_NUMBER.
 */
final class FakeGateway {

  /** Errors answered to the next produce requests, one per request (the batch is not appended). */
  final ConcurrentLinkedQueue<ErrorCode> produceFaults = new ConcurrentLinkedQueue<>();
  /** The leader a topic-partition ("t-0") is described with; by default one address for every partition. */
  final Map<String, String> partitionLeaders = new java.util.concurrent.ConcurrentHashMap<>();
  /** Errors answered to the next admin requests, one per request. */
  final ConcurrentLinkedQueue<ErrorCode> adminFaults = new ConcurrentLinkedQueue<>();
  /** Admin requests to leave unanswered (after the faults are used up), as a coordinator lost while it moves. */
  final java.util.concurrent.atomic.AtomicInteger adminDrops = new java.util.concurrent.atomic.AtomicInteger();
  /** Number of next produce requests that are appended but not answered (a lost answer). */
  final AtomicInteger dropProduceReplies = new AtomicInteger();
  /** Whether produce requests are ignored entirely (a broker that never answers). */
  volatile boolean blackholeProduce;
  /** Whether list-offsets requests are answered LEADER_NOT_AVAILABLE (a partition whose leader is down). */
  volatile boolean listOffsetsLeaderNotAvailable;
  /** Whether every request is ignored (a node that stopped answering but whose actor is still there). */
  volatile boolean blackholeAll;
  /**
   * Produce requests are held (not handled) until this many are waiting, then handled together in arrival order;
   * 0 = handled at once. Reset to 0 once released. Lets a test get exactly n batches in flight.
   */
  volatile int holdProduceUntil;
  /** Errors answered to the next fetch requests, one per request. */
  final ConcurrentLinkedQueue<ErrorCode> fetchFaults = new ConcurrentLinkedQueue<>();
  /** The answer given to each produce request, in order (error code; NONE for appends and duplicates). */
  final List<ErrorCode> produceAnswers = new CopyOnWriteArrayList<>();
  private final List<ProduceRequest> heldProduce = new ArrayList<>();
  /** Every request received, in order. */
  final List<ClientRequest> received = new CopyOnWriteArrayList<>();
  /** Errors answered to the next JoinGroup requests, one per request. */
  final ConcurrentLinkedQueue<ErrorCode> joinFaults = new ConcurrentLinkedQueue<>();
  /** Errors answered to the next heartbeats, one per heartbeat. */
  final ConcurrentLinkedQueue<ErrorCode> heartbeatFaults = new ConcurrentLinkedQueue<>();
  /** Errors answered to the next OffsetCommit requests, one per request (nothing is stored). */
  final ConcurrentLinkedQueue<ErrorCode> commitFaults = new ConcurrentLinkedQueue<>();
  /** Whether OffsetCommit requests are ignored entirely (a coordinator that never answers). */
  volatile boolean blackholeCommits;
  /** Whether heartbeats are ignored entirely (an unreachable coordinator). */
  volatile boolean blackholeHeartbeats;
  /** Number of next OffsetFetch requests left unanswered (an answer still on its way, or lost with a coordinator). */
  final AtomicInteger dropOffsetFetchReplies = new AtomicInteger();

  private final Map<String, FakeGroup> groups = new HashMap<>();

  private static final class FakeGroup {
    int generation;
    int nextMember;
    final Map<String, ActorRef<MemberEvent>> members = new LinkedHashMap<>();
    final Map<PartitionRef, PartitionOffset> offsets = new HashMap<>();
  }

  private final Map<String, List<Partition>> topics = new TreeMap<>();

  private static final class Partition {
    final List<byte[]> batches = new ArrayList<>();
    long logStartOffset;
    long highWatermark;
    final List<FetchRequest> parked = new ArrayList<>();
    final ProducerStateTable producers = new ProducerStateTable();
  }

  private ProduceGathering gathering;

  /** A produce answer to the gatherer of multi-partition requests (see {@link ProduceGathering}). */
  private record Gathered(ProduceResponse response) implements ClientRequest {
    @Override
    public short version() {
      return 0;
    }
  }

  private record Expire(FetchRequest request) implements ClientRequest {
    @Override
    public short version() {
      return 0;
    }
  }

  Behavior<ClientRequest> behavior() {
    return Behaviors.setup(
        context ->
            Behaviors.receiveMessage(
                message -> {
                  handle(context, message);
                  synchronized (received) {
                    received.notifyAll();
                  }
                  return Behaviors.same();
                }));
  }

  /** All values of a partition in log order, decoded as UTF-8 (null values as "null"). */
  synchronized List<String> values(String topic, int partition) {
    List<String> out = new ArrayList<>();
    for (byte[] bytes : topics.get(topic).get(partition).batches) {
      for (Record r : RecordBatch.wrap(bytes)) {
        out.add(r.value() == null ? "null" : new String(r.value(), java.nio.charset.StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /**
   * Appends a batch as it is, without the validation a produce request gets (to store bytes a broker would refuse,
   * e.g. a compressed section that does not decompress); offsets are assigned as for a produce.
   */
  synchronized void appendUnchecked(String topic, int partition, byte[] batch) {
    Partition p = topics.get(topic).get(partition);
    byte[] copy = batch.clone();
    RecordBatch b = RecordBatch.wrap(copy);
    b.setBaseOffset(p.highWatermark);
    p.batches.add(copy);
    p.highWatermark = b.nextOffset();
  }

  synchronized void createTopic(String name, int partitions) {
    List<Partition> list = new ArrayList<>();
    for (int i = 0; i < partitions; i++) {
      list.add(new Partition());
    }
    topics.put(name, list);
  }

  /** Moves the log start offset of a partition (as retention would), dropping whole batches below it. */
  synchronized void truncateBefore(String topic, int partition, long offset) {
    Partition p = topics.get(topic).get(partition);
    Iterator<byte[]> it = p.batches.iterator();
    while (it.hasNext()) {
      RecordBatch b = RecordBatch.wrap(it.next());
      if (b.nextOffset() <= offset) {
        it.remove();
        p.logStartOffset = b.nextOffset();
      }
    }
  }

  long countOf(Class<?> type) {
    return received.stream().filter(type::isInstance).count();
  }

  private synchronized void handle(ActorContext<ClientRequest> context, ClientRequest message) {
    if (blackholeAll && !(message instanceof Expire) && !(message instanceof Gathered)) {
      return;
    }
    if (!(message instanceof Expire) && !(message instanceof Gathered)) {
      received.add(message); // before any answer, and under the lock that push() and friends take
    }
    if (message instanceof ProduceRequest r) {
      produceOrHold(r);
    } else if (message instanceof MultiProduceRequest m) {
      // as the real gateway: each entry as a request of its own, the answers gathered into one (no expiry here)
      if (gathering == null) {
        gathering = new ProduceGathering(context.messageAdapter(ProduceResponse.class, Gathered::new));
      }
      List<ProduceRequest> entries = new ArrayList<>();
      if (m.replyTo() == null) {
        m.entries().forEach(e -> entries.add(e.toProduceRequest(m.version(), m.acks(), m.timeoutMs(), null)));
      } else {
        entries.addAll(gathering.register(m, System.nanoTime()));
      }
      for (ProduceRequest r : entries) {
        produceOrHold(r);
      }
    } else if (message instanceof Gathered g) {
      gathering.onResponse(g.response());
    } else if (message instanceof FetchRequest r) {
      fetch(context, r);
    } else if (message instanceof Expire e) {
      expire(e.request());
    } else if (message instanceof ListOffsetsRequest r) {
      listOffsets(r);
    } else if (message instanceof AdminRequest r) {
      admin(r);
    } else if (message instanceof GroupRequest r) {
      group(r);
    }
  }

  /** Produce requests (a multi-partition request's entries each count as one) held or handled, see holdProduceUntil. */
  private void produceOrHold(ProduceRequest r) {
    if (holdProduceUntil > 0) {
      heldProduce.add(r);
      if (heldProduce.size() >= holdProduceUntil) {
        holdProduceUntil = 0;
        for (ProduceRequest held : heldProduce) {
          produce(held);
        }
        heldProduce.clear();
      }
    } else {
      produce(r);
    }
  }

  private void produce(ProduceRequest r) {
    if (blackholeProduce) {
      return;
    }
    ErrorCode fault = produceFaults.poll();
    if (fault != null) {
      produceAnswers.add(fault);
      r.reply(ProduceResponse.failed(r.topic(), r.partition(), fault, "injected"));
      return;
    }
    List<Partition> partitions = topics.get(r.topic());
    if (partitions == null || r.partition() >= partitions.size()) {
      r.reply(ProduceResponse.failed(r.topic(), r.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no such topic"));
      return;
    }
    Partition p = partitions.get(r.partition());
    byte[] copy = r.batch().clone();
    RecordBatch batch = RecordBatch.validate(copy);
    ProducerStateTable.Check check =
        p.producers.check(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.lastSequence());
    produceAnswers.add(check.errorCode());
    if (check.result() == ProducerStateTable.Result.DUPLICATE) {
      r.reply(new ProduceResponse(r.topic(), r.partition(), ErrorCode.NONE, null, check.baseOffset(), -1L, p.logStartOffset));
      return;
    }
    if (check.result() != ProducerStateTable.Result.APPEND) {
      r.reply(ProduceResponse.failed(r.topic(), r.partition(), check.errorCode(), check.message()));
      return;
    }
    long base = p.highWatermark;
    batch.setBaseOffset(base);
    p.batches.add(copy);
    p.highWatermark = batch.nextOffset();
    p.producers.onAppended(
        batch.producerId(),
        batch.producerEpoch(),
        batch.baseSequence(),
        batch.lastSequence(),
        base,
        batch.lastOffset(),
        batch.maxTimestamp());
    if (dropProduceReplies.getAndUpdate(n -> Math.max(0, n - 1)) == 0) {
      r.reply(new ProduceResponse(r.topic(), r.partition(), ErrorCode.NONE, null, base, -1L, p.logStartOffset));
    }
    List<FetchRequest> parked = new ArrayList<>(p.parked);
    p.parked.clear();
    for (FetchRequest f : parked) {
      answerFetch(p, f);
    }
  }

  private void fetch(ActorContext<ClientRequest> context, FetchRequest r) {
    List<Partition> partitions = topics.get(r.topic());
    if (partitions == null || r.partition() >= partitions.size()) {
      r.replyTo()
          .tell(
              FetchResponse.failed(
                  r.topic(), r.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no such topic", -1, -1));
      return;
    }
    Partition p = partitions.get(r.partition());
    ErrorCode fault = fetchFaults.poll();
    if (fault != null) {
      r.replyTo()
          .tell(
              FetchResponse.failed(
                  r.topic(), r.partition(), fault, "injected", p.highWatermark, p.logStartOffset));
      return;
    }
    if (r.fetchOffset() < p.logStartOffset || r.fetchOffset() > p.highWatermark) {
      r.replyTo()
          .tell(
              FetchResponse.failed(
                  r.topic(),
                  r.partition(),
                  ErrorCode.OFFSET_OUT_OF_RANGE,
                  "out of range",
                  p.highWatermark,
                  p.logStartOffset));
      return;
    }
    if (r.fetchOffset() == p.highWatermark && r.maxWaitMs() > 0) {
      p.parked.add(r);
      context.scheduleOnce(Duration.ofMillis(r.maxWaitMs()), context.getSelf(), new Expire(r));
      return;
    }
    answerFetch(p, r);
  }

  private void expire(FetchRequest r) {
    Partition p = topics.get(r.topic()) == null ? null : topics.get(r.topic()).get(r.partition());
    if (p != null && p.parked.remove(r)) {
      answerFetch(p, r);
    }
  }

  private void answerFetch(Partition p, FetchRequest r) {
    List<byte[]> out = new ArrayList<>();
    int bytes = 0;
    for (byte[] b : p.batches) {
      RecordBatch batch = RecordBatch.wrap(b);
      if (batch.nextOffset() <= r.fetchOffset()) {
        continue;
      }
      if (!out.isEmpty() && bytes + b.length > r.maxBytes()) {
        break;
      }
      out.add(b);
      bytes += b.length;
    }
    r.replyTo()
        .tell(
            new FetchResponse(
                r.topic(), r.partition(), ErrorCode.NONE, null, p.highWatermark, p.logStartOffset, out));
  }

  private void listOffsets(ListOffsetsRequest r) {
    if (listOffsetsLeaderNotAvailable) {
      r.replyTo().tell(new ListOffsetsResponse(r.topic(), r.partition(), ErrorCode.LEADER_NOT_AVAILABLE,
          "no leader (injected)", -1, -1));
      return;
    }
    List<Partition> partitions = topics.get(r.topic());
    if (partitions == null || r.partition() >= partitions.size()) {
      r.replyTo()
          .tell(
              new ListOffsetsResponse(
                  r.topic(), r.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no such topic", -1, -1));
      return;
    }
    Partition p = partitions.get(r.partition());
    long offset = r.timestamp() == ListOffsetsRequest.EARLIEST_TIMESTAMP ? p.logStartOffset : p.highWatermark;
    r.replyTo().tell(new ListOffsetsResponse(r.topic(), r.partition(), ErrorCode.NONE, null, offset, -1));
  }

  private void admin(AdminRequest request) {
    ActorRef<AdminResponse> replyTo = replyToOf(request);
    ErrorCode fault = adminFaults.poll();
    if (fault != null) {
      replyTo.tell(AdminResponse.failed(fault, "injected"));
      return;
    }
    if (adminDrops.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      return; // never answered
    }
    if (request instanceof AdminRequest.CreateTopic c) {
      String invalid = TopicNames.invalidReason(c.name());
      if (invalid != null) {
        replyTo.tell(AdminResponse.failed(ErrorCode.INVALID_TOPIC_EXCEPTION, invalid));
      } else if (c.partitions() == 0 || c.partitions() < -1) {
        replyTo.tell(AdminResponse.failed(ErrorCode.INVALID_PARTITIONS, "partitions " + c.partitions()));
      } else if (topics.containsKey(c.name())) {
        replyTo.tell(AdminResponse.failed(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic '" + c.name() + "' already exists."));
      } else {
        createTopic(c.name(), c.partitions() == -1 ? 1 : c.partitions());
        replyTo.tell(new AdminResponse(ErrorCode.NONE, null, List.of(), List.of(describe(c.name()))));
      }
    } else if (request instanceof AdminRequest.DeleteTopic d) {
      if (topics.remove(d.name()) == null) {
        replyTo.tell(AdminResponse.failed(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no topic " + d.name()));
      } else {
        replyTo.tell(AdminResponse.ok());
      }
    } else if (request instanceof AdminRequest.ListTopics) {
      replyTo.tell(new AdminResponse(ErrorCode.NONE, null, List.copyOf(topics.keySet()), List.of()));
    } else if (request instanceof AdminRequest.DescribeTopics d) {
      List<String> names = d.names().isEmpty() ? List.copyOf(topics.keySet()) : d.names();
      List<TopicDescription> out = new ArrayList<>();
      for (String name : names) {
        if (!topics.containsKey(name)) {
          replyTo.tell(
              AdminResponse.failed(
                  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic: " + name));
          return;
        }
        out.add(describe(name));
      }
      replyTo.tell(new AdminResponse(ErrorCode.NONE, null, List.of(), out));
    }
  }

  private TopicDescription describe(String name) {
    List<PartitionDescription> parts = new ArrayList<>();
    for (int i = 0; i < topics.get(name).size(); i++) {
      parts.add(new PartitionDescription(i, partitionLeaders.getOrDefault(name + "-" + i, "akka://fake@127.0.0.1:1"),
          List.of(), List.of(), 0));
    }
    return new TopicDescription(name, "id-" + name, parts, Map.of());
  }

  private static ActorRef<AdminResponse> replyToOf(AdminRequest request) {
    if (request instanceof AdminRequest.CreateTopic c) {
      return c.replyTo();
    } else if (request instanceof AdminRequest.DeleteTopic d) {
      return d.replyTo();
    } else if (request instanceof AdminRequest.ListTopics l) {
      return l.replyTo();
    }
    return ((AdminRequest.DescribeTopics) request).replyTo();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Scripted group coordinator

  /**
   * Waits (up to 30 s) until a request of {@code type} matching {@code condition} was received (handled already).
   *
   * @return the first such request
   * @throws AssertionError if none came in time
   */
  <T extends ClientRequest> T awaitRequest(Class<T> type, Predicate<T> condition) {
    return awaitRequest(type, condition, 1);
  }

  /**
   * Waits (up to 30 s) until {@code nth} requests of {@code type} matching {@code condition} were received.
   *
   * @return the nth such request (1 = the first)
   * @throws AssertionError if they did not come in time
   */
  <T extends ClientRequest> T awaitRequest(Class<T> type, Predicate<T> condition, int nth) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    synchronized (received) {
      while (true) {
        int seen = 0;
        for (ClientRequest r : received) {
          if (type.isInstance(r) && condition.test(type.cast(r)) && ++seen == nth) {
            return type.cast(r);
          }
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new AssertionError("no " + type.getSimpleName() + " as expected within 30 s; received: " + received);
        }
        try {
          received.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError("interrupted", e);
        }
      }
    }
  }

  /** The requests of {@code type} received so far matching {@code condition}, in order. */
  <T extends ClientRequest> List<T> requests(Class<T> type, Predicate<T> condition) {
    List<T> out = new ArrayList<>();
    for (ClientRequest r : received) {
      if (type.isInstance(r) && condition.test(type.cast(r))) {
        out.add(type.cast(r));
      }
    }
    return out;
  }

  /** Sets the group's generation and pushes {@code partitions} to a member, as the coordinator would. */
  synchronized void push(String groupId, String memberId, int generation, String assignor, TopicPartition... partitions) {
    FakeGroup g = groupOf(groupId);
    g.generation = generation;
    List<PartitionRef> refs = new ArrayList<>();
    for (TopicPartition tp : partitions) {
      refs.add(new PartitionRef(tp.topic(), tp.partition()));
    }
    g.members.get(memberId).tell(new AssignmentChanged(groupId, memberId, generation, assignor, refs));
  }

  /** Moves the group to {@code generation} without telling its members (they rebalanced without this one). */
  synchronized void setGeneration(String groupId, int generation) {
    groupOf(groupId).generation = generation;
  }

  /** Removes a member and tells it so, as the coordinator does after a session timeout or a fencing. */
  synchronized void removeMember(String groupId, String memberId, ErrorCode error, String reason) {
    ActorRef<MemberEvent> ref = groupOf(groupId).members.remove(memberId);
    ref.tell(new MemberRemoved(groupId, memberId, error, reason));
  }

  /** Stores a committed offset directly. */
  synchronized void setCommitted(String groupId, TopicPartition tp, long offset) {
    groupOf(groupId).offsets.put(
        new PartitionRef(tp.topic(), tp.partition()), new PartitionOffset(tp.topic(), tp.partition(), offset, ""));
  }

  /** The committed offset of a partition, or -1. */
  synchronized long committedOffset(String groupId, TopicPartition tp) {
    PartitionOffset o = groupOf(groupId).offsets.get(new PartitionRef(tp.topic(), tp.partition()));
    return o == null ? -1 : o.offset();
  }

  private FakeGroup groupOf(String groupId) {
    return groups.computeIfAbsent(groupId, k -> new FakeGroup());
  }

  private void group(GroupRequest request) {
    FakeGroup g = groupOf(request.groupId());
    if (request instanceof JoinGroup j) {
      ErrorCode fault = joinFaults.poll();
      if (fault != null) {
        j.replyTo().tell(new JoinGroupResponse(fault, "injected", j.memberId(), -1));
        return;
      }
      String id = j.memberId();
      if (id.isEmpty()) {
        id = j.groupId() + "-member-" + (++g.nextMember);
      } else if (!g.members.containsKey(id)) {
        j.replyTo().tell(new JoinGroupResponse(ErrorCode.UNKNOWN_MEMBER_ID, "unknown member " + id, id, -1));
        return;
      }
      g.members.put(id, j.member());
      j.replyTo().tell(new JoinGroupResponse(ErrorCode.NONE, null, id, g.generation));
    } else if (request instanceof Heartbeat h) {
      if (blackholeHeartbeats) {
        return;
      }
      ErrorCode fault = heartbeatFaults.poll();
      if (fault != null) {
        h.replyTo().tell(new GroupResponse(fault, "injected", g.generation));
      } else if (!g.members.containsKey(h.memberId())) {
        h.replyTo().tell(new GroupResponse(ErrorCode.UNKNOWN_MEMBER_ID, "unknown member", g.generation));
      } else {
        h.replyTo().tell(new GroupResponse(ErrorCode.NONE, null, g.generation));
      }
    } else if (request instanceof LeaveGroup l) {
      boolean known = g.members.remove(l.memberId()) != null;
      l.replyTo().tell(new GroupResponse(known ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID, null, g.generation));
    } else if (request instanceof OffsetCommit c) {
      if (blackholeCommits) {
        return;
      }
      ErrorCode fault = commitFaults.poll();
      ErrorCode error = fault != null ? fault : ErrorCode.NONE;
      if (error == ErrorCode.NONE) {
        if (c.memberId().isEmpty()) {
          if (c.generation() != -1 || !g.members.isEmpty()) {
            error = ErrorCode.UNKNOWN_MEMBER_ID;
          }
        } else if (!g.members.containsKey(c.memberId())) {
          error = ErrorCode.UNKNOWN_MEMBER_ID;
        } else if (c.generation() != g.generation) {
          error = ErrorCode.ILLEGAL_GENERATION;
        }
      }
      if (error == ErrorCode.NONE) {
        for (PartitionOffset o : c.offsets()) {
          g.offsets.put(new PartitionRef(o.topic(), o.partition()), o);
        }
      }
      c.replyTo().tell(new GroupResponse(error, error == ErrorCode.NONE ? null : "fake: " + error, g.generation));
    } else if (request instanceof OffsetFetch f) {
      if (dropOffsetFetchReplies.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        return;
      }
      List<PartitionOffset> out = new ArrayList<>();
      for (PartitionRef p : f.partitions()) {
        PartitionOffset o = g.offsets.get(p);
        out.add(o != null ? o : new PartitionOffset(p.topic(), p.partition(), -1, ""));
      }
      f.replyTo().tell(new OffsetFetchResponse(ErrorCode.NONE, null, out));
    }
  }

  private static <T> void reply(ActorRef<T> replyTo, T message) {
    if (replyTo != null) {
      replyTo.tell(message);
    }
  }
}
