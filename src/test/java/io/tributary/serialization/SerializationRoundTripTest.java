package io.tributary.serialization;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.Serialization;
import akka.serialization.SerializationExtension;
import akka.serialization.Serializer;
import akka.serialization.Serializers;
import com.typesafe.config.ConfigFactory;
import io.tributary.broker.TopicConfig;
import io.tributary.cluster.Controller;
import io.tributary.log.PartitionLeader;
import io.tributary.log.PartitionLog;
import io.tributary.log.PartitionSnapshot;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.TopicDescription;
import io.tributary.record.RecordBatchBuilder;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every message that crosses a node boundary (or goes into the journal) survives Akka serialization unchanged. */
class SerializationRoundTripTest {
  private static ActorTestKit testKit;
  private static Serialization serialization;
  private static TestProbe<Object> probe;

  @BeforeAll
  static void setup() {
    testKit = ActorTestKit.create("ser", ConfigFactory.parseString(
        "akka.actor.provider = cluster\nakka.remote.artery.canonical.port = 0\n"
            + "akka.remote.artery.canonical.hostname = 127.0.0.1\n"
            + "akka.actor.serialize-messages = on\nakka.cluster.jmx.multi-mbeans-in-same-jvm = on")
        .withFallback(ConfigFactory.load()));
    serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    probe = testKit.createTestProbe();
  }

  @AfterAll
  static void teardown() {
    testKit.shutdownTestKit();
  }

  @SuppressWarnings("unchecked")
  private static <T> akka.actor.typed.ActorRef<T> ref() {
    return (akka.actor.typed.ActorRef<T>) (akka.actor.typed.ActorRef<?>) probe.getRef();
  }

  private static byte[] batch() {
    RecordBatchBuilder b = new RecordBatchBuilder();
    b.append(1234L, "k".getBytes(), "v".getBytes(), null);
    b.append(1235L, null, null, new io.tributary.record.Header[] {new io.tributary.record.Header("h", null)});
    return b.build();
  }

  private static final TopicConfig CONFIG =
      new TopicConfig(1000L, -1L, 4096, Map.of("retention.ms", "1000", "max.message.bytes", "4096"));

  /** The messages bound to the hand-written {@link TributarySerializer} (the {@link HotPath} ones). */
  static Stream<Object> hotPathMessages() {
    return messages().filter(m -> m instanceof HotPath);
  }

  static Stream<Object> messages() {
    byte[] b = batch();
    return Stream.of(
        new ProduceRequest((short) 0, "t", 3, (short) -1, 30000, b, ref()),
        new ProduceRequest((short) 0, "t", 3, (short) 0, 30000, b, null),
        new ProduceRequest((short) 1, "t", 3, (short) 1, 30000, b, 0, b.length, ref(), 12345),
        new ProduceResponse("t", 3, ErrorCode.NONE, null, 42L, -1L, 0L, -7),
        new ProduceResponse("t", 3, ErrorCode.NONE, null, 42L, -1L, 0L),
        ProduceResponse.failed("t", 1, ErrorCode.MESSAGE_TOO_LARGE, "too big ü"),
        new MultiProduceRequest((short) 1, (short) -1, 30000, List.of(MultiProduceRequest.Entry.of("t", 3, b),
            MultiProduceRequest.Entry.of("ü", 0, b), MultiProduceRequest.Entry.of("t", 4, null)), ref()),
        new MultiProduceRequest((short) 1, (short) 0, 1, List.of(MultiProduceRequest.Entry.of("t", 0, b)), null),
        new MultiProduceResponse(List.of(new ProduceResponse("t", 3, ErrorCode.NONE, null, 42L, -1L, 0L),
            ProduceResponse.failed("u", 0, ErrorCode.INVALID_REQUEST, "twice"))),
        new MultiProduceResponse(List.of()),
        new FetchRequest((short) 0, "t", 0, 17L, 1 << 20, 500, ref()),
        new FetchResponse("t", 0, ErrorCode.NONE, null, 100L, 5L, List.of(b, b)),
        FetchResponse.failed("t", 0, ErrorCode.OFFSET_OUT_OF_RANGE, "out", 10, 0),
        new ListOffsetsRequest((short) 0, "t", 0, -2L, ref()),
        new ListOffsetsResponse("t", 0, ErrorCode.NONE, null, 7L, 1234L),
        new AdminRequest.CreateTopic((short) 0, "t", 3, (short) 1, Map.of("retention.ms", "1"), ref()),
        new AdminRequest.DeleteTopic((short) 0, "t", ref()),
        new AdminRequest.ListTopics((short) 0, true, ref()),
        new AdminRequest.DescribeTopics((short) 0, List.of("a", "b"), ref()),
        new AdminResponse(ErrorCode.NONE, null, List.of("a", "b"), List.of(new TopicDescription("t", "id",
            List.of(new PartitionDescription(0, "akka://tributary@127.0.0.1:9092", List.of("x"), List.of("x"), 0)),
            Map.of("retention.ms", "1")))),
        AdminResponse.failed(ErrorCode.TOPIC_ALREADY_EXISTS, "exists"),
        new Controller.Admin(new AdminRequest.ListTopics((short) 0, false, ref())),
        new Controller.AlterIsr("t", 1, "n1", 3, List.of("n1", "n2"), ref()),
        new Controller.AlterIsrResult(ErrorCode.FENCED_LEADER_EPOCH, "old"),
        new Controller.ControlledShutdown("n1", ref()),
        new Controller.ControlledShutdownResult(2),
        new Controller.SyncTopics(ref()),
        new io.tributary.log.ReplicaManager.TopicsSnapshot(List.of(new io.tributary.cluster.TopicMetadata("t", "id",
            (short) 2, Map.of("a", "b"), io.tributary.cluster.TopicMetadata.State.READY,
            List.of(new io.tributary.cluster.PartitionMetadata(0, List.of("n1", "n2"), "n1", 4, List.of("n1"))), 9L))),
        new io.tributary.log.ReplicaManager.TopicsChanged(List.of(new io.tributary.cluster.TopicMetadata("t", "id",
            (short) 2, Map.of("a", "b"), io.tributary.cluster.TopicMetadata.State.READY,
            List.of(new io.tributary.cluster.PartitionMetadata(0, List.of("n1", "n2"), "n1", 4, List.of("n1"))), 9L)),
            List.of("gone")),
        new GroupProtocol.JoinGroup((short) 0, "g", "", "inst", "client", List.of("a"), "pat.*",
            List.of("range", "cooperative-sticky"), 10000, 300000, List.of(new GroupProtocol.PartitionRef("a", 1)),
            ref(), ref()),
        new GroupProtocol.JoinGroupResponse(ErrorCode.NONE, null, "m-1", 3),
        new GroupProtocol.Heartbeat((short) 0, "g", "m-1", 3, ref()),
        new GroupProtocol.AssignmentAck((short) 0, "g", "m-1", 3, List.of(new GroupProtocol.PartitionRef("a", 0))),
        new GroupProtocol.LeaveGroup((short) 0, "g", "m-1", ref()),
        new GroupProtocol.OffsetCommit((short) 0, "g", "m-1", 3,
            List.of(new GroupProtocol.PartitionOffset("a", 0, 42L, "meta")), ref()),
        new GroupProtocol.OffsetFetch((short) 0, "g", List.of(), ref()),
        new GroupProtocol.OffsetFetchResponse(ErrorCode.NONE, null,
            List.of(new GroupProtocol.PartitionOffset("a", 0, -1L, null))),
        new GroupProtocol.ListGroups((short) 0, "", ref()),
        new GroupProtocol.ListGroupsResponse(ErrorCode.NONE, List.of(new GroupProtocol.GroupListing("g", "Stable"))),
        new GroupProtocol.DescribeGroup((short) 0, "g", ref()),
        new GroupProtocol.DescribeGroupResponse(ErrorCode.NONE, null, "g", "Stable", 4, "range",
            List.of(new GroupProtocol.MemberDescription("m-1", null, "c", "akka://x@127.0.0.1:1",
                List.of(new GroupProtocol.PartitionRef("a", 0)))),
            List.of(new GroupProtocol.PartitionLag("a", 0, 5, 9, 4, "m-1"))),
        new GroupProtocol.ResetOffsets((short) 0, "g", List.of(new GroupProtocol.PartitionOffset("a", 0, 0, null)),
            ref()),
        new GroupProtocol.DeleteGroup((short) 0, "g", ref()),
        new GroupProtocol.GroupResponse(ErrorCode.ILLEGAL_GENERATION, "stale", 7),
        new GroupProtocol.AssignmentChanged("g", "m-1", 4, "range", List.of(new GroupProtocol.PartitionRef("a", 0))),
        new GroupProtocol.MemberRemoved("g", "m-1", ErrorCode.FENCED_INSTANCE_ID, "fenced"),
        new io.tributary.group.GroupCoordinator.Request(new GroupProtocol.Heartbeat((short) 0, "g", "m", 1, ref())),
        new PartitionLeader.Produce(new ProduceRequest((short) 0, "t", 3, (short) 1, 30000, b, ref())),
        new PartitionLeader.Fetch(new FetchRequest((short) 0, "t", 0, 17L, 1024, 0, ref())),
        new PartitionLeader.ListOffsets(new ListOffsetsRequest((short) 0, "t", 0, 99L, ref())),
        new PartitionLeader.ReplicaFetch("t", 1, "akka://tributary@127.0.0.1:9093", 4, 100L, 3, 65536, ref()),
        new PartitionLeader.ReplicaFetchResponse("t", 1, ErrorCode.NONE, 4, 100L, 90L, 5L, 3, 95L, List.of(b, b)),
        new PartitionLeader.LogTruncated(95L),
        new PartitionLeader.DeletePartition("t", 1, ref()),
        new PartitionLeader.GetStatus("t", 1, ref()),
        new PartitionLeader.PartitionAck("t", 1, ErrorCode.NONE),
        new PartitionLeader.DeleteRecords("t", 1, 77L, ref()),
        new PartitionLeader.ApplyRetention("t", 1),
        new PartitionLeader.RecordsDeleted("t", 1, ErrorCode.NONE, 77L),
        new PartitionLeader.PartitionStatus("t", 1, ErrorCode.NONE, 1, 2, 3, 4, 5, 6, 7),
        new PartitionLeader.PartitionCreated("id", CONFIG, 17L),
        new PartitionLeader.RecordsAppended(b),
        new PartitionLeader.LogStartOffsetAdvanced(10L, 4L),
        PartitionLeader.PartitionDeleted.INSTANCE,
        new PartitionSnapshot(PartitionLog.Status.ACTIVE, "id", CONFIG, 1, 2, 3, 4, 5, 6,
            new long[] {1, 2}, new long[] {3, 4}, new long[] {5, 6}, new long[] {7, 8}, new int[] {0, 3},
            new long[] {0, 40}, new long[] {41}, new long[] {12}, new byte[] {1, 2, 3}),
        new PartitionSnapshot(PartitionLog.Status.ABSENT, "", null, 0, 0, 0, 0, 9, 0,
            new long[0], new long[0], new long[0], new long[0], new int[0], new long[0], new long[0], new long[0],
            new byte[0]));
  }

  private static Object roundTrip(Object m) {
    Serializer s = serialization.findSerializerFor(m);
    byte[] bytes = serialization.serialize(m).get();
    return serialization.deserialize(bytes, s.identifier(), Serializers.manifestFor(s, m)).get();
  }

  @ParameterizedTest
  @MethodSource("messages")
  void roundTripsUnchanged(Object m) {
    Object back = roundTrip(m);
    assertEquals(m.getClass(), back.getClass());
    String n = normalize(m);
    if (n == null) {
      assertEquals(m, back);
    } else {
      assertEquals(n, normalize(back));
    }
  }

  /** Records with arrays compare arrays by content: compare their string forms with arrays expanded. */
  private static String normalize(Object o) {
    if (o instanceof ProduceRequest p) {
      return p.version() + p.topic() + p.partition() + p.acks() + p.timeoutMs() + java.util.Arrays.toString(p.batch())
          + p.replyTo() + "#" + p.correlationId();
    }
    if (o instanceof PartitionLeader.Produce p) {
      return "P" + normalize(p.request());
    }
    if (o instanceof MultiProduceRequest m) {
      return "M" + m.version() + m.acks() + m.timeoutMs() + m.replyTo() + m.entries().stream()
          .map(e -> e.topic() + e.partition() + (e.batchBuffer() == null ? "null" : java.util.Arrays.toString(
              java.util.Arrays.copyOfRange(e.batchBuffer(), e.batchOffset(), e.batchOffset() + e.batchLength()))))
          .toList();
    }
    if (o instanceof FetchResponse f) {
      return f.topic() + f.partition() + f.error() + f.errorMessage() + f.highWatermark() + f.logStartOffset()
          + f.batches().stream().map(java.util.Arrays::toString).toList();
    }
    if (o instanceof PartitionLeader.RecordsAppended r) {
      return java.util.Arrays.toString(r.batch());
    }
    if (o instanceof PartitionSnapshot s) {
      return s.status() + s.topicId() + (s.config() == null ? null : new java.util.TreeMap<>(s.config().overrides()))
          + (s.config() == null ? "" : s.config().retentionMs() + "/" + s.config().maxMessageBytes()) + s.logStartOffset() + s.logEndOffset() + s.highWatermark()
          + s.leaderEpoch() + s.lastSeqNr() + s.pendingDeleteToSeqNr()
          + java.util.Arrays.toString(s.chunkBaseOffsets()) + java.util.Arrays.toString(s.chunkSeqNrs())
          + java.util.Arrays.toString(s.chunkBytes()) + java.util.Arrays.toString(s.chunkMaxTimestamps())
          + java.util.Arrays.toString(s.epochNumbers()) + java.util.Arrays.toString(s.epochStartOffsets())
          + java.util.Arrays.toString(s.truncationOffsets()) + java.util.Arrays.toString(s.truncationSeqNrs())
          + java.util.Arrays.toString(s.producerState());
    }
    if (o instanceof PartitionLeader.ReplicaFetchResponse r) {
      return r.topic() + r.partition() + r.error() + r.leaderEpoch() + r.fetchOffset() + r.highWatermark()
          + r.logStartOffset() + r.divergingEpoch() + r.divergingEndOffset()
          + r.batches().stream().map(java.util.Arrays::toString).toList();
    }
    return null; // plain records: compared with equals
  }

  /**
   * Artery's path: the message is written into and read from a shared little-endian direct envelope buffer, after
   * and before other fields; the serializer writes exactly its {@code byte[]} encoding there and leaves the buffer's
   * byte order and the bytes around it alone.
   */
  @ParameterizedTest
  @MethodSource("hotPathMessages")
  void roundTripsThroughAnEnvelopeBuffer(Object m) throws Exception {
    TributarySerializer s = (TributarySerializer) serialization.findSerializerFor(m);
    java.nio.ByteBuffer envelope = java.nio.ByteBuffer.allocateDirect(64 * 1024).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    envelope.putInt(0x01020304); // a header field before the message
    s.toBinary(m, envelope);
    assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, envelope.order());
    int end = envelope.position();
    byte[] written = new byte[end - 4];
    envelope.get(4, written);
    assertArrayEquals(s.toBinary(m), written, "the same bytes as the byte[] encoding");
    envelope.flip();
    assertEquals(0x01020304, envelope.getInt());
    Object back = s.fromBinary(envelope, s.manifest(m));
    assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, envelope.order());
    assertEquals(end, envelope.position(), "read to the end of the message");
    String n = normalize(m);
    assertEquals(n == null ? m : n, n == null ? back : normalize(back));
  }

  /**
   * Artery's TCP path: a received frame is a heap buffer over its own array (here a slice, so that its array offset is
   * not 0, with unrelated bytes around it). The message reads the same as it was written; a produce request keeps its
   * batch where it is in the frame (no copy), everything else is copied out of it: overwriting the frame afterwards
   * changes nothing in the message but a produce request's batch.
   */
  @ParameterizedTest
  @MethodSource("hotPathMessages")
  void roundTripsThroughAHeapFrameAndKeepsAViewOnlyOfAProduceRequestsBatch(Object m) throws Exception {
    TributarySerializer s = (TributarySerializer) serialization.findSerializerFor(m);
    byte[] encoded = s.toBinary(m);
    byte[] frame = new byte[7 + 4 + encoded.length + 5];
    java.util.Arrays.fill(frame, (byte) 0x5A);
    java.nio.ByteBuffer.wrap(frame, 7, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(0x01020304);
    System.arraycopy(encoded, 0, frame, 11, encoded.length);
    java.nio.ByteBuffer buf =
        java.nio.ByteBuffer.wrap(frame, 7, 4 + encoded.length).slice().order(java.nio.ByteOrder.LITTLE_ENDIAN);
    assertEquals(7, buf.arrayOffset());
    assertEquals(0x01020304, buf.getInt());
    Object back = s.fromBinary(buf, s.manifest(m));
    assertEquals(buf.limit(), buf.position(), "read to the end of the message");
    String n = normalize(m);
    assertEquals(n == null ? m : n, n == null ? back : normalize(back));
    ProduceRequest request = back instanceof PartitionLeader.Produce p ? p.request()
        : back instanceof ProduceRequest p ? p : null;
    if (request != null) {
      assertSame(frame, request.batchBuffer(), "the batch is read where it is in the frame");
      assertFalse(request.batchIsWholeBuffer());
      byte[] original = ((ProduceRequest) (m instanceof PartitionLeader.Produce p ? p.request() : m)).batch();
      assertArrayEquals(original, java.util.Arrays.copyOfRange(frame, request.batchOffset(),
          request.batchOffset() + request.batchLength()));
      assertNotSame(frame, request.batch(), "batch() copies the range out");
      assertArrayEquals(original, request.batch());
      assertArrayEquals(encoded, s.toBinary(back), "written again from the range: the same bytes");
    } else if (back instanceof MultiProduceRequest multi) {
      for (MultiProduceRequest.Entry e : multi.entries()) {
        if (e.batchBuffer() != null) {
          assertSame(frame, e.batchBuffer(), "each entry's batch is read where it is in the frame");
        }
      }
      assertArrayEquals(encoded, s.toBinary(back), "written again from the ranges: the same bytes");
    } else {
      java.util.Arrays.fill(frame, (byte) 0);
      assertEquals(n == null ? m : n, n == null ? back : normalize(back), "nothing read refers to the frame");
    }
  }

  /** Artery's pooled direct envelope buffers are reused: a produce request's batch is copied out of them. */
  @Test
  void aProduceRequestReadFromADirectBufferOwnsItsBatch() throws Exception {
    ProduceRequest m = new ProduceRequest((short) 0, "t", 3, (short) 1, 30000, batch(), ref());
    TributarySerializer s = (TributarySerializer) serialization.findSerializerFor(m);
    java.nio.ByteBuffer envelope = java.nio.ByteBuffer.allocateDirect(64 * 1024);
    s.toBinary(m, envelope);
    envelope.flip();
    ProduceRequest back = (ProduceRequest) s.fromBinary(envelope, s.manifest(m));
    envelope.clear();
    while (envelope.hasRemaining()) {
      envelope.put((byte) 0);
    }
    assertTrue(back.batchIsWholeBuffer());
    assertArrayEquals(m.batch(), back.batch());
  }

  @Test
  void aMessageLargerThanTheEnvelopeOverflowsInsteadOfBeingCut() throws Exception {
    TributarySerializer s = (TributarySerializer) serialization.serializerFor(PartitionLeader.RecordsAppended.class);
    ProduceRequest big = new ProduceRequest(ProtocolVersions.CURRENT, "t", 0, (short) 1, 1000, new byte[2048], null);
    java.nio.ByteBuffer envelope = java.nio.ByteBuffer.allocateDirect(1024);
    assertThrows(java.nio.BufferOverflowException.class, () -> s.toBinary(big, envelope));
  }

  @Test
  void hotPathMessagesUseTheHandWrittenSerializer() {
    assertTrue(serialization.findSerializerFor(new PartitionLeader.RecordsAppended(batch()))
        instanceof TributarySerializer);
    assertTrue(serialization.findSerializerFor(new FetchResponse("t", 0, ErrorCode.NONE, null, 0, 0, List.of()))
        instanceof TributarySerializer);
    // every consumer looks up its start offsets: no Jackson on that path either
    assertTrue(serialization.findSerializerFor(new ListOffsetsRequest((short) 0, "t", 0, -2L, ref()))
        instanceof TributarySerializer);
    assertTrue(serialization.findSerializerFor(new ListOffsetsResponse("t", 0, ErrorCode.NONE, null, 7L, 1234L))
        instanceof TributarySerializer);
  }

  @Test
  void journalEventIsTheRecordBatchItself() {
    byte[] b = batch();
    assertArrayEquals(b, serialization.findSerializerFor(new PartitionLeader.RecordsAppended(b))
        .toBinary(new PartitionLeader.RecordsAppended(b)));
  }

  static Stream<String> manifests() {
    return Stream.of("PQ", "PR", "PC", "MQ", "MR", "FQ", "FR", "OQ", "OR", "LP", "LF", "LO", "RQ", "RS", "ET", "DP", "GS", "PA", "PS", "DR", "RD", "AR", "EA", "EC", "EL", "ED",
        "SN", "S2", "??");
  }

  @ParameterizedTest
  @MethodSource("manifests")
  void garbageBytesFailWithMalformedMessageException(String manifest) throws Exception {
    TributarySerializer s = (TributarySerializer) serialization.serializerFor(PartitionLeader.RecordsAppended.class);
    Random random = new Random(manifest.hashCode());
    for (int size : new int[] {0, 1, 3, 7, 16, 61, 100, 1000}) {
      for (int i = 0; i < 20; i++) {
        byte[] garbage = new byte[size];
        random.nextBytes(garbage);
        try {
          s.fromBinary(garbage, manifest);
        } catch (MalformedMessageException expected) {
          assertEquals(ErrorCode.CORRUPT_MESSAGE, expected.errorCode());
        }
        // decoding may also succeed by chance (e.g. "ED" is one byte); it must never throw anything else
      }
    }
  }

  @ParameterizedTest
  @MethodSource("messages")
  void truncatedEncodingsFailWithMalformedMessageException(Object m) {
    Serializer ser = serialization.findSerializerFor(m);
    if (!(ser instanceof TributarySerializer s) || m == PartitionLeader.PartitionDeleted.INSTANCE) {
      return;
    }
    byte[] bytes = s.toBinary(m);
    String manifest = s.manifest(m);
    for (int cut = 0; cut < bytes.length; cut += Math.max(1, bytes.length / 40)) {
      byte[] shorter = java.util.Arrays.copyOf(bytes, cut);
      assertThrows(MalformedMessageException.class, () -> s.fromBinary(shorter, manifest),
          "cut at " + cut + " of " + bytes.length);
    }
  }
}
