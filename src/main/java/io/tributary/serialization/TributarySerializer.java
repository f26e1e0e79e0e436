package io.tributary.serialization;

import akka.actor.ExtendedActorSystem;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.serialization.ByteBufferSerializer;
import akka.serialization.SerializerWithStringManifest;
import io.tributary.broker.TopicConfig;
import io.tributary.log.PartitionLeader;
import io.tributary.log.PartitionLog;
import io.tributary.log.PartitionSnapshot;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.RecordBatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The hot-path serializer: record batches between JVMs and into the journal, and the partition leader's commands,
 * events and snapshots. A hand-written binary layout (big-endian; strings and byte arrays are an int32 length, -1 for
 * null, then the bytes; actor refs are their serialized path as a string), one two-letter manifest per type:
 *
 * <table>
 *   <caption>Manifests</caption>
 *   <tr><td>PQ</td><td>{@link ProduceRequest}: i16 version, str topic, i32 partition, i16 acks, i32 timeoutMs,
 *       bytes batch, str replyTo, and from version 1 ({@link ProtocolVersions#MULTI_PRODUCE}) i32 correlationId</td></tr>
 *   <tr><td>PR</td><td>{@link ProduceResponse}: str topic, i32 partition, i32 error, str message, i64 baseOffset,
 *       i64 logAppendTime, i64 logStartOffset (a response with correlation id 0: what every client gets)</td></tr>
 *   <tr><td>PC</td><td>{@link ProduceResponse} with a correlation id (to a gateway's gatherer): PR, i32
 *       correlationId</td></tr>
 *   <tr><td>MQ</td><td>{@link MultiProduceRequest}: i16 version, i16 acks, i32 timeoutMs, str replyTo, i32 count,
 *       count × (str topic, i32 partition, bytes batch)</td></tr>
 *   <tr><td>MR</td><td>{@link MultiProduceResponse}: i32 count, count × PR</td></tr>
 *   <tr><td>FQ</td><td>{@link FetchRequest}: i16 version, str topic, i32 partition, i64 fetchOffset, i32 maxBytes,
 *       i32 maxWaitMs, str replyTo</td></tr>
 *   <tr><td>FR</td><td>{@link FetchResponse}: str topic, i32 partition, i32 error, str message, i64 hw,
 *       i64 logStartOffset, i32 count, count × bytes batch</td></tr>
 *   <tr><td>OQ</td><td>{@link ListOffsetsRequest}: i16 version, str topic, i32 partition, i64 timestamp,
 *       str replyTo</td></tr>
 *   <tr><td>OR</td><td>{@link ListOffsetsResponse}: str topic, i32 partition, i32 error, str message, i64 offset,
 *       i64 timestamp</td></tr>
 *   <tr><td>LP / LF / LO</td><td>the leader's Produce / Fetch / ListOffsets: the wrapped request as PQ / FQ /
 *       (i16 version, str topic, i32 partition, i64 timestamp, str replyTo)</td></tr>
 *   <tr><td>CP, DP, GS, PA, PS, DR, RD</td><td>partition admin commands and replies</td></tr>
 *   <tr><td>EA</td><td>event RecordsAppended: the record batch bytes as they are (no framing: the journal stores the
 *       Kafka v2 batch unchanged)</td></tr>
 *   <tr><td>EC, EL, ED</td><td>events PartitionCreated, LogStartOffsetAdvanced, PartitionDeleted</td></tr>
 *   <tr><td>SN</td><td>{@link PartitionSnapshot}</td></tr>
 * </table>
 *
 * <p>Every decode is bounds-checked: bytes that do not decode throw {@link MalformedMessageException} (Akka then drops
 * the message), never another exception. Thread-safe (stateless apart from the resolver).
 */
public final class TributarySerializer extends SerializerWithStringManifest implements ByteBufferSerializer {
  /** The identifier registered in reference.conf. */
  public static final int IDENTIFIER = 7301;

  /**
   * The manifest of a journaled record batch ({@code PartitionLeader.RecordsAppended}), whose bytes are the batch
   * unchanged (read straight from the journal by {@code TunedLeveldbJournal.readRecordBatches}).
   */
  public static final String RECORDS_APPENDED_MANIFEST = "EA";

  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;
  private final TempRefResolver tempRefs;

  public TributarySerializer(ExtendedActorSystem system) {
    this.system = system;
    this.tempRefs = new TempRefResolver(system);
  }

  private ActorRefResolver resolver() {
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof PartitionLeader.RecordsAppended) return "EA";
    if (o instanceof PartitionLeader.Produce) return "LP";
    if (o instanceof PartitionLeader.Fetch) return "LF";
    if (o instanceof ProduceRequest) return "PQ";
    if (o instanceof ProduceResponse r) return r.correlationId() == 0 ? "PR" : "PC";
    if (o instanceof MultiProduceRequest) return "MQ";
    if (o instanceof MultiProduceResponse) return "MR";
    if (o instanceof FetchRequest) return "FQ";
    if (o instanceof ListOffsetsRequest) return "OQ";
    if (o instanceof ListOffsetsResponse) return "OR";
    if (o instanceof FetchResponse) return "FR";
    if (o instanceof PartitionLeader.ListOffsets) return "LO";
    if (o instanceof PartitionLeader.ReplicaFetch) return "RQ";
    if (o instanceof PartitionLeader.ReplicaFetchResponse) return "RS";
    if (o instanceof PartitionLeader.LogTruncated) return "ET";
    if (o instanceof PartitionLeader.DeletePartition) return "DP";
    if (o instanceof PartitionLeader.GetStatus) return "GS";
    if (o instanceof PartitionLeader.PartitionAck) return "PA";
    if (o instanceof PartitionLeader.DeleteRecords) return "DR";
    if (o instanceof PartitionLeader.ApplyRetention) return "AR";
    if (o instanceof PartitionLeader.RecordsDeleted) return "RD";
    if (o instanceof PartitionLeader.PartitionStatus) return "PS";
    if (o instanceof PartitionLeader.PartitionCreated) return "EC";
    if (o instanceof PartitionLeader.LogStartOffsetAdvanced) return "EL";
    if (o instanceof PartitionLeader.PartitionDeleted) return "ED";
    if (o instanceof PartitionSnapshot) return "S2";
    throw new IllegalArgumentException("TributarySerializer cannot serialize " + o.getClass().getName());
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof PartitionLeader.RecordsAppended e) {
      return e.batch(); // the journal stores the v2 batch unchanged
    }
    Wire.Out out = new Wire.Out(sizeHint(o));
    write(o, out);
    return out.toArray();
  }

  /**
   * Writes {@code o} straight into {@code buf} (Artery's envelope buffer: no intermediate array). A message larger
   * than the buffer's remaining space throws {@link java.nio.BufferOverflowException}, which Artery reports as an
   * oversized message.
   */
  @Override
  public void toBinary(Object o, ByteBuffer buf) {
    if (o instanceof PartitionLeader.RecordsAppended e) {
      buf.put(e.batch());
      return;
    }
    ByteOrder order = buf.order(); // Artery's envelope is little-endian: restore it for the frame's other fields
    try {
      write(o, new Wire.Out(buf));
    } finally {
      buf.order(order);
    }
  }

  /** Initial size of a heap buffer for {@code o}: enough for its record batches plus the fields around them. */
  private static int sizeHint(Object o) {
    if (o instanceof ProduceRequest p) {
      return p.batchLength() + 512;
    } else if (o instanceof PartitionLeader.Produce p) {
      return p.request().batchLength() + 512;
    } else if (o instanceof MultiProduceRequest m) {
      int n = 512;
      for (MultiProduceRequest.Entry e : m.entries()) {
        n += e.batchLength() + e.topic().length() * 3 + 16;
      }
      return n;
    } else if (o instanceof FetchResponse r) {
      return batchBytes(r.batches()) + 512;
    } else if (o instanceof PartitionLeader.ReplicaFetchResponse r) {
      return batchBytes(r.batches()) + 512;
    }
    return 256;
  }

  private static int batchBytes(List<byte[]> batches) {
    int n = 0;
    for (byte[] b : batches) {
      n += 4 + b.length;
    }
    return n;
  }

  private void write(Object o, Wire.Out out) {
    if (o instanceof PartitionLeader.Produce p) {
      writeProduceRequest(out, p.request());
    } else if (o instanceof PartitionLeader.Fetch f) {
      writeFetchRequest(out, f.request());
    } else if (o instanceof ProduceRequest p) {
      writeProduceRequest(out, p);
    } else if (o instanceof ProduceResponse r) {
      writeProduceResponse(out, r);
      if (r.correlationId() != 0) {
        out.i32(r.correlationId());
      }
    } else if (o instanceof MultiProduceRequest m) {
      out.i16(m.version()).i16(m.acks()).i32(m.timeoutMs()).str(ref(m.replyTo())).i32(m.entries().size());
      for (MultiProduceRequest.Entry e : m.entries()) {
        out.str(e.topic()).i32(e.partition()).bytes(e.batchBuffer(), e.batchOffset(), e.batchLength());
      }
    } else if (o instanceof MultiProduceResponse m) {
      out.i32(m.responses().size());
      for (ProduceResponse r : m.responses()) {
        writeProduceResponse(out, r);
      }
    } else if (o instanceof FetchRequest f) {
      writeFetchRequest(out, f);
    } else if (o instanceof FetchResponse r) {
      out.str(r.topic()).i32(r.partition()).i32(r.error().code()).str(r.errorMessage()).i64(r.highWatermark())
          .i64(r.logStartOffset()).i32(r.batches().size());
      for (byte[] b : r.batches()) {
        out.bytes(b);
      }
    } else if (o instanceof PartitionLeader.ReplicaFetch r) {
      out.str(r.topic()).i32(r.partition()).str(r.replica()).i32(r.leaderEpoch()).i64(r.fetchOffset())
          .i32(r.lastFetchedEpoch()).i32(r.maxBytes()).str(ref(r.replyTo()));
    } else if (o instanceof PartitionLeader.ReplicaFetchResponse r) {
      out.str(r.topic()).i32(r.partition()).i32(r.error().code()).i32(r.leaderEpoch()).i64(r.fetchOffset())
          .i64(r.highWatermark()).i64(r.logStartOffset()).i32(r.divergingEpoch()).i64(r.divergingEndOffset())
          .i32(r.batches().size());
      for (byte[] b : r.batches()) {
        out.bytes(b);
      }
    } else {
      writeRare(o, out);
    }
  }

  /**
   * The messages that a partition's lifetime or an admin request sends a few times, apart from the produce, fetch
   * and replication path of {@link #write(Object, Wire.Out)}, for the JIT's sake (see {@link #fromBinaryRare}).
   *
   * @throws IllegalArgumentException for a type this serializer does not know
   */
  private void writeRare(Object o, Wire.Out out) {
    if (o instanceof PartitionLeader.ListOffsets l) {
      writeListOffsetsRequest(out, l.request());
    } else if (o instanceof ListOffsetsRequest r) {
      writeListOffsetsRequest(out, r);
    } else if (o instanceof ListOffsetsResponse r) {
      out.str(r.topic()).i32(r.partition()).i32(r.error().code()).str(r.errorMessage()).i64(r.offset())
          .i64(r.timestamp());
    } else if (o instanceof PartitionLeader.LogTruncated t) {
      out.i64(t.offset());
    } else if (o instanceof PartitionLeader.DeletePartition d) {
      out.str(d.topic()).i32(d.partition()).str(ref(d.replyTo()));
    } else if (o instanceof PartitionLeader.GetStatus g) {
      out.str(g.topic()).i32(g.partition()).str(ref(g.replyTo()));
    } else if (o instanceof PartitionLeader.ApplyRetention a) {
      out.str(a.topic()).i32(a.partition());
    } else if (o instanceof PartitionLeader.DeleteRecords d) {
      out.str(d.topic()).i32(d.partition()).i64(d.beforeOffset()).str(ref(d.replyTo()));
    } else if (o instanceof PartitionLeader.RecordsDeleted d) {
      out.str(d.topic()).i32(d.partition()).i32(d.error().code()).i64(d.logStartOffset());
    } else if (o instanceof PartitionLeader.PartitionAck a) {
      out.str(a.topic()).i32(a.partition()).i32(a.error().code());
    } else if (o instanceof PartitionLeader.PartitionStatus s) {
      out.str(s.topic()).i32(s.partition()).i32(s.error().code()).i64(s.logStartOffset()).i64(s.logEndOffset())
          .i64(s.highWatermark()).i32(s.leaderEpoch()).i64(s.sizeInBytes()).i64(s.journalWrites()).i64(s.tailBytes());
    } else if (o instanceof PartitionLeader.PartitionCreated c) {
      out.str(c.topicId());
      writeConfig(out, c.config());
      out.i64(c.seqNr());
    } else if (o instanceof PartitionLeader.LogStartOffsetAdvanced l) {
      out.i64(l.logStartOffset()).i64(l.deleteToSeqNr());
    } else if (o instanceof PartitionLeader.PartitionDeleted) {
      out.i8(0);
    } else if (o instanceof PartitionSnapshot s) {
      out.i8(s.status().ordinal()).str(s.topicId());
      out.i8(s.config() == null ? 0 : 1);
      if (s.config() != null) {
        writeConfig(out, s.config());
      }
      out.i64(s.logStartOffset()).i64(s.logEndOffset()).i64(s.highWatermark()).i32(s.leaderEpoch())
          .i64(s.lastSeqNr()).i64(s.pendingDeleteToSeqNr());
      int n = s.chunkBaseOffsets().length;
      out.i32(n);
      for (int i = 0; i < n; i++) {
        out.i64(s.chunkBaseOffsets()[i]).i64(s.chunkSeqNrs()[i]).i64(s.chunkBytes()[i])
            .i64(s.chunkMaxTimestamps()[i]);
      }
      out.i32(s.epochNumbers().length);
      for (int i = 0; i < s.epochNumbers().length; i++) {
        out.i32(s.epochNumbers()[i]).i64(s.epochStartOffsets()[i]);
      }
      out.i32(s.truncationOffsets().length);
      for (int i = 0; i < s.truncationOffsets().length; i++) {
        out.i64(s.truncationOffsets()[i]).i64(s.truncationSeqNrs()[i]);
      }
      out.bytes(s.producerState());
    } else {
      throw new IllegalArgumentException("TributarySerializer cannot serialize " + o.getClass().getName());
    }
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) {
    if (manifest.equals("EA")) {
      try {
        return new PartitionLeader.RecordsAppended(RecordBatch.wrap(bytes).bytes());
      } catch (RuntimeException e) {
        throw new MalformedMessageException("cannot decode [EA]: " + e, e);
      }
    }
    return fromBinary(ByteBuffer.wrap(bytes), manifest);
  }

  /**
   * Reads a message from {@code buf}'s position to its limit (Artery's envelope buffer). Strings and the record
   * batches of responses are copied out. The record batch of a produce request (PQ, LP) read from a heap buffer stays
   * in the buffer's array ({@link ProduceRequest#batchBuffer()}, the range {@code batchOffset}/{@code batchLength}):
   * a produce request is mostly its batch, up to {@code batch.size} (64 KiB by default), and the partition leader
   * copies or compresses it anyway when it appends it. That is safe because nobody writes such an array again:
   * Artery's TCP transport reads each frame into an array of its own ({@code TcpFraming}: {@code
   * ByteBuffer.wrap(frame.toArray)}) and its buffer pool takes back only direct buffers ({@code
   * EnvelopeBufferPool.release}: "only reuse direct buffers, e.g. not those wrapping ByteString", Akka 2.6.21), and
   * {@link #fromBinary(byte[], String)} is given arrays that are the message's own (sharding envelopes, the
   * journal). A direct buffer (Artery's pooled envelope buffers) is copied from.
   *
   * @throws MalformedMessageException on an unknown manifest, truncated or trailing bytes, or bad counts
   */
  @Override
  public Object fromBinary(ByteBuffer buf, String manifest) {
    ByteOrder order = buf.order();
    try {
      if (manifest.equals("EA")) {
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        return new PartitionLeader.RecordsAppended(RecordBatch.wrap(bytes).bytes());
      }
      Wire.In in = new Wire.In(buf);
      int totalBytes = in.length();
      Object result = switch (manifest) {
        case "LP" -> new PartitionLeader.Produce(readProduceRequest(in));
        case "LF" -> new PartitionLeader.Fetch(readFetchRequest(in));
        case "PQ" -> readProduceRequest(in);
        case "PR" -> readProduceResponse(in);
        case "PC" -> readProduceResponse(in).withCorrelationId(in.i32());
        case "MQ" -> readMultiProduceRequest(in, totalBytes);
        case "MR" -> {
          int n = in.i32();
          if (n < 0 || n > totalBytes) {
            throw new MalformedMessageException("bad response count " + n);
          }
          List<ProduceResponse> responses = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            responses.add(readProduceResponse(in));
          }
          yield new MultiProduceResponse(responses);
        }
        case "FQ" -> readFetchRequest(in);
        case "FR" -> {
          String topic = in.str();
          int partition = in.i32();
          ErrorCode error = error(in.i32());
          String message = in.str();
          long hw = in.i64();
          long logStart = in.i64();
          int n = in.i32();
          if (n < 0 || n > totalBytes) {
            throw new MalformedMessageException("bad batch count " + n);
          }
          List<byte[]> batches = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            batches.add(in.bytes());
          }
          yield new FetchResponse(topic, partition, error, message, hw, logStart, batches);
        }
        case "RQ" -> new PartitionLeader.ReplicaFetch(in.str(), in.i32(), in.str(), in.i32(), in.i64(), in.i32(),
            in.i32(), resolve(in.str()));
        case "RS" -> readReplicaFetchResponse(in, totalBytes);
        default -> fromBinaryRare(in, manifest, totalBytes);
      };
      in.end();
      return result;
    } catch (MalformedMessageException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new MalformedMessageException("cannot decode [" + manifest + "]: " + e, e);
    } finally {
      buf.order(order);
    }
  }

  /**
   * The messages that a partition's lifetime or an admin request sends a few times (offsets lookups, status,
   * retention, deletion, the leader's own events and snapshots), apart from the produce and fetch path above: a
   * method of their own, not inlined into {@link #fromBinary(ByteBuffer, String)}, so that a manifest first seen after
   * the JIT compiled the hot path does not make it compile the whole decoder again (a 0.49 s C2 compile of this
   * method was measured in one benchmark run).
   *
   * @throws MalformedMessageException for an unknown manifest
   */
  private Object fromBinaryRare(Wire.In in, String manifest, int totalBytes) {
    return switch (manifest) {
      case "LO" -> new PartitionLeader.ListOffsets(readListOffsetsRequest(in));
      case "OQ" -> readListOffsetsRequest(in);
      case "OR" -> new ListOffsetsResponse(in.str(), in.i32(), error(in.i32()), in.str(), in.i64(), in.i64());
      case "ET" -> new PartitionLeader.LogTruncated(in.i64());
      case "DP" -> new PartitionLeader.DeletePartition(in.str(), in.i32(), resolve(in.str()));
      case "GS" -> new PartitionLeader.GetStatus(in.str(), in.i32(), resolve(in.str()));
      case "PA" -> new PartitionLeader.PartitionAck(in.str(), in.i32(), error(in.i32()));
      case "AR" -> new PartitionLeader.ApplyRetention(in.str(), in.i32());
      case "DR" -> new PartitionLeader.DeleteRecords(in.str(), in.i32(), in.i64(), resolve(in.str()));
      case "RD" -> new PartitionLeader.RecordsDeleted(in.str(), in.i32(), error(in.i32()), in.i64());
      case "PS" -> new PartitionLeader.PartitionStatus(
          in.str(), in.i32(), error(in.i32()), in.i64(), in.i64(), in.i64(), in.i32(), in.i64(), in.i64(), in.i64());
      case "EC" -> new PartitionLeader.PartitionCreated(in.str(), readConfig(in), in.i64());
      case "EL" -> new PartitionLeader.LogStartOffsetAdvanced(in.i64(), in.i64());
      case "ED" -> {
        in.i8();
        yield PartitionLeader.PartitionDeleted.INSTANCE;
      }
      case "SN" -> readSnapshot(in, totalBytes, false);
      case "S2" -> readSnapshot(in, totalBytes, true);
      default -> throw new MalformedMessageException("unknown manifest [" + manifest + "]");
    };
  }

  private static ErrorCode error(int code) {
    return ErrorCode.forCode(code);
  }

  private void writeProduceRequest(Wire.Out out, ProduceRequest p) {
    out.i16(p.version()).str(p.topic()).i32(p.partition()).i16(p.acks()).i32(p.timeoutMs())
        .bytes(p.batchBuffer(), p.batchOffset(), p.batchLength())
        .str(ref(p.replyTo()));
    if (p.version() >= ProtocolVersions.MULTI_PRODUCE) {
      out.i32(p.correlationId());
    } else if (p.correlationId() != 0) {
      throw new IllegalArgumentException("a version " + p.version() + " produce request has no correlation id");
    }
  }

  /** The batch stays in the frame's array when the frame is a heap buffer (see {@link #fromBinary(ByteBuffer, String)}). */
  private ProduceRequest readProduceRequest(Wire.In in) {
    short version = in.i16();
    String topic = in.str();
    int partition = in.i32();
    short acks = in.i16();
    int timeoutMs = in.i32();
    Wire.Range batch = in.range();
    ActorRef<ProduceResponse> replyTo = resolve(in.str());
    int correlationId = version >= ProtocolVersions.MULTI_PRODUCE ? in.i32() : 0;
    return batch == null
        ? new ProduceRequest(version, topic, partition, acks, timeoutMs, null, 0, 0, replyTo, correlationId)
        : new ProduceRequest(version, topic, partition, acks, timeoutMs, batch.array(), batch.offset(), batch.length(),
            replyTo, correlationId);
  }

  private static void writeProduceResponse(Wire.Out out, ProduceResponse r) {
    out.str(r.topic()).i32(r.partition()).i32(r.error().code()).str(r.errorMessage()).i64(r.baseOffset())
        .i64(r.logAppendTimeMs()).i64(r.logStartOffset());
  }

  private static ProduceResponse readProduceResponse(Wire.In in) {
    return new ProduceResponse(in.str(), in.i32(), error(in.i32()), in.str(), in.i64(), in.i64(), in.i64());
  }

  /** The entries' batches stay in the frame's array, as a {@link ProduceRequest}'s (see {@link #readProduceRequest}). */
  private MultiProduceRequest readMultiProduceRequest(Wire.In in, int totalBytes) {
    short version = in.i16();
    short acks = in.i16();
    int timeoutMs = in.i32();
    ActorRef<MultiProduceResponse> replyTo = resolve(in.str());
    int n = in.i32();
    if (n < 0 || n > totalBytes) {
      throw new MalformedMessageException("bad entry count " + n);
    }
    List<MultiProduceRequest.Entry> entries = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String topic = in.str();
      if (topic == null) {
        throw new MalformedMessageException("entry " + i + " has no topic");
      }
      int partition = in.i32();
      Wire.Range batch = in.range();
      entries.add(batch == null
          ? new MultiProduceRequest.Entry(topic, partition, null, 0, 0)
          : new MultiProduceRequest.Entry(topic, partition, batch.array(), batch.offset(), batch.length()));
    }
    return new MultiProduceRequest(version, acks, timeoutMs, entries, replyTo);
  }

  private void writeListOffsetsRequest(Wire.Out out, ListOffsetsRequest r) {
    out.i16(r.version()).str(r.topic()).i32(r.partition()).i64(r.timestamp()).str(ref(r.replyTo()));
  }

  private ListOffsetsRequest readListOffsetsRequest(Wire.In in) {
    return new ListOffsetsRequest(in.i16(), in.str(), in.i32(), in.i64(), resolve(in.str()));
  }

  private void writeFetchRequest(Wire.Out out, FetchRequest f) {
    out.i16(f.version()).str(f.topic()).i32(f.partition()).i64(f.fetchOffset()).i32(f.maxBytes()).i32(f.maxWaitMs())
        .str(ref(f.replyTo()));
  }

  private FetchRequest readFetchRequest(Wire.In in) {
    return new FetchRequest(in.i16(), in.str(), in.i32(), in.i64(), in.i32(), in.i32(), resolve(in.str()));
  }

  private static void writeConfig(Wire.Out out, TopicConfig c) {
    out.i64(c.retentionMs()).i64(c.retentionBytes()).i32(c.maxMessageBytes()).i32(c.overrides().size());
    for (Map.Entry<String, String> e : c.overrides().entrySet()) {
      out.str(e.getKey()).str(e.getValue());
    }
  }

  private static TopicConfig readConfig(Wire.In in) {
    long retentionMs = in.i64();
    long retentionBytes = in.i64();
    int maxMessage = in.i32();
    int n = in.i32();
    if (n < 0 || n > 10_000) {
      throw new MalformedMessageException("bad config count " + n);
    }
    Map<String, String> overrides = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      overrides.put(in.str(), in.str());
    }
    return new TopicConfig(retentionMs, retentionBytes, maxMessage, Map.copyOf(overrides));
  }

  private static PartitionLeader.ReplicaFetchResponse readReplicaFetchResponse(Wire.In in, int totalBytes) {
    String topic = in.str();
    int partition = in.i32();
    ErrorCode error = error(in.i32());
    int epoch = in.i32();
    long fetchOffset = in.i64();
    long hw = in.i64();
    long logStart = in.i64();
    int divEpoch = in.i32();
    long divEnd = in.i64();
    int n = in.i32();
    if (n < 0 || n > totalBytes) {
      throw new MalformedMessageException("bad batch count " + n);
    }
    List<byte[]> batches = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      batches.add(in.bytes());
    }
    return new PartitionLeader.ReplicaFetchResponse(topic, partition, error, epoch, fetchOffset, hw, logStart, divEpoch,
        divEnd, batches);
  }

  private static PartitionSnapshot readSnapshot(Wire.In in, int totalBytes, boolean v2) {
    int status = in.i8();
    if (status < 0 || status >= PartitionLog.Status.values().length) {
      throw new MalformedMessageException("bad partition status " + status);
    }
    String topicId = in.str();
    TopicConfig config = in.i8() == 1 ? readConfig(in) : null;
    long logStart = in.i64();
    long logEnd = in.i64();
    long hw = in.i64();
    int epoch = in.i32();
    long lastSeqNr = in.i64();
    long pendingDelete = in.i64();
    int n = in.i32();
    if (n < 0 || n > totalBytes / 32) {
      throw new MalformedMessageException("bad index size " + n);
    }
    long[] bo = new long[n];
    long[] sq = new long[n];
    long[] by = new long[n];
    long[] ts = new long[n];
    for (int i = 0; i < n; i++) {
      bo[i] = in.i64();
      sq[i] = in.i64();
      by[i] = in.i64();
      ts[i] = in.i64();
    }
    int[] en = new int[0];
    long[] es = new long[0];
    long[] to = new long[0];
    long[] ta = new long[0];
    byte[] producers = new byte[0];
    if (v2) {
      int ne = in.i32();
      if (ne < 0 || ne > totalBytes / 12) {
        throw new MalformedMessageException("bad epoch count " + ne);
      }
      en = new int[ne];
      es = new long[ne];
      for (int i = 0; i < ne; i++) {
        en[i] = in.i32();
        es[i] = in.i64();
      }
      int nt = in.i32();
      if (nt < 0 || nt > totalBytes / 16) {
        throw new MalformedMessageException("bad truncation count " + nt);
      }
      to = new long[nt];
      ta = new long[nt];
      for (int i = 0; i < nt; i++) {
        to[i] = in.i64();
        ta[i] = in.i64();
      }
      producers = in.bytes();
    }
    return new PartitionSnapshot(PartitionLog.Status.values()[status], topicId, config, logStart, logEnd, hw, epoch,
        lastSeqNr, pendingDelete, bo, sq, by, ts, en, es, to, ta, producers);
  }

  private String ref(ActorRef<?> ref) {
    return ref == null ? null : resolver().toSerializationFormat(ref);
  }

  /** A reply-to from another JVM: an ask's temporary actor through {@link TempRefResolver}, anything else Akka's way. */
  private <T> ActorRef<T> resolve(String s) {
    if (s == null) {
      return null;
    }
    akka.actor.ActorRef temp = tempRefs.resolve(s);
    if (temp != null) {
      return Adapter.toTyped(temp);
    }
    ActorRef<T> ref = resolver().resolveActorRef(s);
    tempRefs.learn(s, Adapter.toClassic(ref));
    return ref;
  }
}
