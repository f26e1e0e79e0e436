package io.tributary.broker;

import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.RecordBatchBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** Raw protocol calls to a node's gateway, for broker tests (no client library in between). */
public final class Gw {
  public static final Duration T = Duration.ofSeconds(30);
  private final ActorRef<ClientRequest> gateway;
  private final ActorSystem<?> system;
  private final ActorRef<PartitionLeader.Command> partitions;

  public Gw(BrokerNode node) {
    this.gateway = node.tributary().gateway();
    this.system = node.system();
    this.partitions = node.tributary().partitions();
  }

  /** Sends a request that gets no answer. */
  public void tell(ClientRequest request) {
    gateway.tell(request);
  }

  public <R> R ask(Function<ActorRef<R>, ClientRequest> f) {
    return askAsync(f).toCompletableFuture().join();
  }

  public <R> CompletionStage<R> askAsync(Function<ActorRef<R>, ClientRequest> f) {
    return AskPattern.ask(gateway, f::apply, T, system.scheduler());
  }

  public AdminResponse create(String topic, int partitions, Map<String, String> configs) {
    return ask(r -> new AdminRequest.CreateTopic(ProtocolVersions.CURRENT, topic, partitions, (short) 1, configs, r));
  }

  public AdminResponse delete(String topic) {
    return ask(r -> new AdminRequest.DeleteTopic(ProtocolVersions.CURRENT, topic, r));
  }

  public List<String> list() {
    AdminResponse r = ask(rt -> new AdminRequest.ListTopics(ProtocolVersions.CURRENT, false, rt));
    return r.topicNames();
  }

  public ProduceResponse produce(String topic, int partition, byte[] batch) {
    return ask(r -> new ProduceRequest(ProtocolVersions.CURRENT, topic, partition, (short) 1, 30000, batch, r));
  }

  public CompletionStage<ProduceResponse> produceAsync(String topic, int partition, byte[] batch) {
    return askAsync(r -> new ProduceRequest(ProtocolVersions.CURRENT, topic, partition, (short) 1, 30000, batch, r));
  }

  public FetchResponse fetch(String topic, int partition, long offset, int maxBytes, int maxWaitMs) {
    return ask(r -> new FetchRequest(ProtocolVersions.CURRENT, topic, partition, offset, maxBytes, maxWaitMs, r));
  }

  public CompletionStage<FetchResponse> fetchAsync(String topic, int partition, long offset, int maxWaitMs) {
    return askAsync(r -> new FetchRequest(ProtocolVersions.CURRENT, topic, partition, offset, 1 << 20, maxWaitMs, r));
  }

  public ListOffsetsResponse listOffsets(String topic, int partition, long timestamp) {
    return ask(r -> new ListOffsetsRequest(ProtocolVersions.CURRENT, topic, partition, timestamp, r));
  }

  public PartitionLeader.PartitionStatus status(String topic, int partition) {
    return AskPattern.<PartitionLeader.Command, PartitionLeader.PartitionStatus>ask(partitions,
        r -> new PartitionLeader.GetStatus(topic, partition, r), T, system.scheduler()).toCompletableFuture().join();
  }

  /** The values of the records of {@code r}'s batches, as UTF-8 strings, in order. */
  public static List<String> values(FetchResponse r) {
    List<String> out = new ArrayList<>();
    for (byte[] b : r.batches()) {
      for (io.tributary.record.Record rec : io.tributary.record.RecordBatch.validate(b)) {
        out.add(new String(rec.value(), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  /** A batch of {@code n} records with values {@code prefix + i}, keys {@code "k" + i}, timestamps {@code ts}. */
  public static byte[] batch(String prefix, int n, long ts) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    for (int i = 0; i < n; i++) {
      b.append(ts, ("k" + i).getBytes(StandardCharsets.UTF_8), (prefix + i).getBytes(StandardCharsets.UTF_8), null);
    }
    return b.build();
  }

  /** As {@link #batch(String, int, long)}, the records compressed with {@code type} at its default level. */
  public static byte[] batch(String prefix, int n, long ts, io.tributary.record.CompressionType type) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    for (int i = 0; i < n; i++) {
      b.append(ts, ("k" + i).getBytes(StandardCharsets.UTF_8), (prefix + i).getBytes(StandardCharsets.UTF_8), null);
    }
    return b.build(
        type == io.tributary.record.CompressionType.NONE
            ? null
            : new io.tributary.record.Compression.Compressor(type, type.defaultLevel()));
  }

  /** A batch of one record whose value has {@code size} bytes. */
  public static byte[] batchOfSize(int size, long ts) {
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(ts, null, new byte[size], null);
    return b.build();
  }
}
