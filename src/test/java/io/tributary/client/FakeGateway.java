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
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.TopicDescription;
import io.tributary.protocol.TopicNames;
import io.tributary.record.Record;
import io.tributary.record.RecordBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory stand-in for a node's gateway, for client tests without a broker: topics with partitions holding
 * record batches, dense offsets, long-poll fetches, and injectable faults. Single node, no replication.
 */
final class FakeGateway {

  /** Errors answered to the next produce requests, one per request (the batch is not appended). */
  final ConcurrentLinkedQueue<ErrorCode> produceFaults = new ConcurrentLinkedQueue<>();
  /** Errors answered to the next admin requests, one per request. */
  final ConcurrentLinkedQueue<ErrorCode> adminFaults = new ConcurrentLinkedQueue<>();
  /** Number of next produce requests that are appended but not answered (a lost answer). */
  final AtomicInteger dropProduceReplies = new AtomicInteger();
  /** Whether produce requests are ignored entirely (a broker that never answers). */
  volatile boolean blackholeProduce;
  /** Every request received, in order. */
  final List<ClientRequest> received = new CopyOnWriteArrayList<>();

  private final Map<String, List<Partition>> topics = new TreeMap<>();

  private static final class Partition {
    final List<byte[]> batches = new ArrayList<>();
    long logStartOffset;
    long highWatermark;
    final List<FetchRequest> parked = new ArrayList<>();
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
                  if (!(message instanceof Expire)) {
                    received.add(message);
                  }
                  handle(context, message);
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
    if (message instanceof ProduceRequest r) {
      produce(r);
    } else if (message instanceof FetchRequest r) {
      fetch(context, r);
    } else if (message instanceof Expire e) {
      expire(e.request());
    } else if (message instanceof ListOffsetsRequest r) {
      listOffsets(r);
    } else if (message instanceof AdminRequest r) {
      admin(r);
    }
  }

  private void produce(ProduceRequest r) {
    if (blackholeProduce) {
      return;
    }
    ErrorCode fault = produceFaults.poll();
    if (fault != null) {
      reply(r.replyTo(), ProduceResponse.failed(r.topic(), r.partition(), fault, "injected"));
      return;
    }
    List<Partition> partitions = topics.get(r.topic());
    if (partitions == null || r.partition() >= partitions.size()) {
      reply(
          r.replyTo(),
          ProduceResponse.failed(r.topic(), r.partition(), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "no such topic"));
      return;
    }
    Partition p = partitions.get(r.partition());
    byte[] copy = r.batch().clone();
    RecordBatch batch = RecordBatch.validate(copy);
    long base = p.highWatermark;
    batch.setBaseOffset(base);
    p.batches.add(copy);
    p.highWatermark = batch.nextOffset();
    if (dropProduceReplies.getAndUpdate(n -> Math.max(0, n - 1)) == 0) {
      reply(r.replyTo(), new ProduceResponse(r.topic(), r.partition(), ErrorCode.NONE, null, base, -1L, p.logStartOffset));
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
      parts.add(new PartitionDescription(i, "akka://fake@127.0.0.1:1", List.of(), List.of(), 0));
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

  private static <T> void reply(ActorRef<T> replyTo, T message) {
    if (replyTo != null) {
      replyTo.tell(message);
    }
  }
}
