package io.tributary.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.tributary.protocol.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class RecordBatchTest {

  private static final Header[] NO_HEADERS = new Header[0];

  // -------------------------------------------------------------------------------------------------------------
  // Round trips

  /** One record's fields, for parameterized round trips. */
  record Input(String name, byte[] key, byte[] value, Header[] headers) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Input> singleRecords() {
    return List.of(
        new Input("empty key", new byte[0], bytes("v"), NO_HEADERS),
        new Input("null key", null, bytes("v"), NO_HEADERS),
        new Input("null value", bytes("k"), null, NO_HEADERS),
        new Input("empty value", bytes("k"), new byte[0], NO_HEADERS),
        new Input("null key and value", null, null, null),
        new Input("null headers array", bytes("k"), bytes("v"), null),
        new Input(
            "headers",
            bytes("k"),
            bytes("v"),
            new Header[] {new Header("a", bytes("1")), new Header("a", bytes("2")), new Header("b", new byte[0])}),
        new Input("null header value", bytes("k"), bytes("v"), new Header[] {new Header("trace", null)}),
        new Input(
            "unicode header keys",
            null,
            bytes("v"),
            new Header[] {
              new Header("ключ", bytes("x")), new Header("鍵", null), new Header("🔑", bytes("y")), new Header("", null)
            }),
        new Input("binary key and value", new byte[] {0, -1, -128, 127}, new byte[] {-1, -1, 0}, NO_HEADERS),
        new Input("1 MiB value", bytes("big"), randomBytes(1 << 20, 7), NO_HEADERS));
  }

  @ParameterizedTest
  @MethodSource("singleRecords")
  void singleRecordRoundTripsThroughBuilderValidateAndRecords(Input in) {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    assertEquals(0, builder.append(1_700_000_000_000L, in.key(), in.value(), in.headers()));
    byte[] bytes = builder.build();

    RecordBatch batch = RecordBatch.validate(bytes);
    assertSame(bytes, batch.bytes());
    assertEquals(1, batch.recordCount());
    assertEquals(0, batch.lastOffsetDelta());
    assertEquals(0L, batch.baseOffset());
    assertEquals(0L, batch.lastOffset());
    assertEquals(1L, batch.nextOffset());
    assertTrue(batch.isValid());

    List<Record> records = batch.records();
    assertEquals(1, records.size());
    Record r = records.get(0);
    assertEquals(0L, r.offset());
    assertEquals(1_700_000_000_000L, r.timestamp());
    assertArrayEquals(in.key(), r.key());
    assertArrayEquals(in.value(), r.value());
    assertEquals(in.headers() == null ? List.of() : List.of(in.headers()), r.headers());
    assertEquals(bytes.length - RecordBatch.HEADER_SIZE, r.sizeInBytes());
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 63, 64, 65, 1000})
  void manyRecordsRoundTripWithDenseOffsetsAndTheirOwnFields(int n) {
    RecordBatchBuilder builder = new RecordBatchBuilder(100L, 7L, (short) 3, 42, 5);
    for (int i = 0; i < n; i++) {
      Header[] headers = i % 3 == 0 ? new Header[] {new Header("i", bytes(Integer.toString(i)))} : null;
      byte[] key = i % 5 == 0 ? null : bytes("key-" + i);
      assertEquals(i, builder.append(1000L + i, key, bytes("value-" + i), headers));
    }
    RecordBatch batch = RecordBatch.validate(builder.build());
    assertEquals(n, batch.recordCount());
    assertEquals(100L, batch.baseOffset());
    assertEquals(100L + n - 1, batch.lastOffset());
    assertEquals(7L, batch.producerId());
    assertEquals((short) 3, batch.producerEpoch());
    assertEquals(42, batch.baseSequence());
    assertEquals(5, batch.partitionLeaderEpoch());
    assertEquals(1000L, batch.baseTimestamp());
    assertEquals(1000L + n - 1, batch.maxTimestamp());

    int i = 0;
    int totalSize = 0;
    for (Record r : batch) {
      assertEquals(100L + i, r.offset());
      assertEquals(1000L + i, r.timestamp());
      assertArrayEquals(i % 5 == 0 ? null : bytes("key-" + i), r.key());
      assertArrayEquals(bytes("value-" + i), r.value());
      assertEquals(i % 3 == 0 ? 1 : 0, r.headers().size());
      totalSize += r.sizeInBytes();
      i++;
    }
    assertEquals(n, i);
    assertEquals(batch.sizeInBytes() - RecordBatch.HEADER_SIZE, totalSize);
  }

  @Test
  void timestampsOutOfOrderKeepTheirValuesAndMaxTimestampIsTheLargest() {
    long[] timestamps = {5_000L, 1_000L, 9_000L, 0L, 7_000L, -1L};
    RecordBatchBuilder builder = new RecordBatchBuilder();
    for (long t : timestamps) {
      builder.append(t, null, bytes("v"), null);
    }
    RecordBatch batch = RecordBatch.validate(builder.build());
    assertEquals(5_000L, batch.baseTimestamp());
    assertEquals(9_000L, batch.maxTimestamp());
    assertArrayEquals(timestamps, batch.records().stream().mapToLong(Record::timestamp).toArray());
  }

  @Test
  void batchWithoutTimestampsHasMinusOneTimestamps() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(-1L, null, bytes("v"), null);
    RecordBatch batch = RecordBatch.validate(builder.build());
    assertEquals(-1L, batch.baseTimestamp());
    assertEquals(-1L, batch.maxTimestamp());
    assertEquals(-1L, batch.records().get(0).timestamp());
  }

  @Test
  void logAppendTimeBatchGivesEveryRecordTheMaxTimestamp() {
    byte[] bytes = build(3);
    short attributes = ByteUtils.readShort(bytes, RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeShort((short) (attributes | RecordBatch.TIMESTAMP_TYPE_MASK), bytes, RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeLong(123_456L, bytes, RecordBatch.MAX_TIMESTAMP_OFFSET);
    fixCrc(bytes);
    RecordBatch batch = RecordBatch.validate(bytes);
    assertTrue(batch.isLogAppendTime());
    batch.forEach(r -> assertEquals(123_456L, r.timestamp()));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Layout

  @Test
  void simpleBatchBytesMatchHandComputedLayout() {
    RecordBatchBuilder builder = new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1);
    builder.append(1_000L, bytes("k"), bytes("v"), null);
    byte[] actual = builder.build();

    // the record: body = attributes 1 + timestampDelta 1 + offsetDelta 1 + keyLength 1 + key 1 + valueLength 1
    // + value 1 + headerCount 1 = 8 bytes; zigzag(8) = 16 = 0x10; zigzag(1) = 2
    byte[] record = {0x10, 0x00, 0x00, 0x00, 0x02, 'k', 0x02, 'v', 0x00};
    ByteBuffer expected = ByteBuffer.allocate(RecordBatch.HEADER_SIZE + record.length);
    expected.putLong(RecordBatch.BASE_OFFSET_OFFSET, 0L);
    expected.putInt(RecordBatch.LENGTH_OFFSET, 61 + 9 - 12);
    expected.putInt(RecordBatch.PARTITION_LEADER_EPOCH_OFFSET, -1);
    expected.put(RecordBatch.MAGIC_OFFSET, (byte) 2);
    expected.putShort(RecordBatch.ATTRIBUTES_OFFSET, (short) 0);
    expected.putInt(RecordBatch.LAST_OFFSET_DELTA_OFFSET, 0);
    expected.putLong(RecordBatch.BASE_TIMESTAMP_OFFSET, 1_000L);
    expected.putLong(RecordBatch.MAX_TIMESTAMP_OFFSET, 1_000L);
    expected.putLong(RecordBatch.PRODUCER_ID_OFFSET, -1L);
    expected.putShort(RecordBatch.PRODUCER_EPOCH_OFFSET, (short) -1);
    expected.putInt(RecordBatch.BASE_SEQUENCE_OFFSET, -1);
    expected.putInt(RecordBatch.RECORDS_COUNT_OFFSET, 1);
    expected.put(RecordBatch.RECORDS_OFFSET, record);
    CRC32C crc = new CRC32C();
    crc.update(expected.array(), 21, expected.capacity() - 21);
    expected.putInt(RecordBatch.CRC_OFFSET, (int) crc.getValue());

    assertEquals(70, actual.length);
    assertEquals(HexFormat.of().formatHex(expected.array()), HexFormat.of().formatHex(actual));
  }

  @Test
  void layoutConstantsAreKafkasRecordBatchV2Positions() {
    assertEquals(0, RecordBatch.BASE_OFFSET_OFFSET);
    assertEquals(8, RecordBatch.LENGTH_OFFSET);
    assertEquals(12, RecordBatch.PARTITION_LEADER_EPOCH_OFFSET);
    assertEquals(16, RecordBatch.MAGIC_OFFSET);
    assertEquals(17, RecordBatch.CRC_OFFSET);
    assertEquals(21, RecordBatch.ATTRIBUTES_OFFSET);
    assertEquals(23, RecordBatch.LAST_OFFSET_DELTA_OFFSET);
    assertEquals(27, RecordBatch.BASE_TIMESTAMP_OFFSET);
    assertEquals(35, RecordBatch.MAX_TIMESTAMP_OFFSET);
    assertEquals(43, RecordBatch.PRODUCER_ID_OFFSET);
    assertEquals(51, RecordBatch.PRODUCER_EPOCH_OFFSET);
    assertEquals(53, RecordBatch.BASE_SEQUENCE_OFFSET);
    assertEquals(57, RecordBatch.RECORDS_COUNT_OFFSET);
    assertEquals(61, RecordBatch.RECORDS_OFFSET);
    assertEquals(61, RecordBatch.HEADER_SIZE);
    assertEquals(12, RecordBatch.LOG_OVERHEAD);
  }

  /**
   * A batch written by librdkafka (empty key, value "hello kafka", header foo=bar), as captured in the rskafka project's
   * test {@code test_decode_fixture_nocompression}: we accept its CRC32C, decode it, and write the same bytes.
   */
  @Test
  void librdkafkaBatchDecodesAndIsReproducedByteForByte() {
    byte[] kafka =
        HexFormat.of()
            .parseHex(
                "0000000000000000" // baseOffset 0
                    + "0000004b" // length 75
                    + "00000000" // partitionLeaderEpoch 0
                    + "02" // magic
                    + "2724fecd" // crc
                    + "0000" // attributes
                    + "00000000" // lastOffsetDelta
                    + "0000000061d59b77" // baseTimestamp 1641388919
                    + "0000000061d59b77" // maxTimestamp
                    + "ffffffffffffffff" // producerId -1
                    + "ffff" // producerEpoch -1
                    + "ffffffff" // baseSequence -1
                    + "00000001" // recordsCount 1
                    + "32" // record length 25
                    + "00" // attributes
                    + "00" // timestampDelta 0
                    + "00" // offsetDelta 0
                    + "00" // keyLength 0 (empty key)
                    + "16" // valueLength 11
                    + "68656c6c6f206b61666b61" // "hello kafka"
                    + "02" // headerCount 1
                    + "06" // header keyLength 3
                    + "666f6f" // "foo"
                    + "06" // header valueLength 3
                    + "626172"); // "bar"
    RecordBatch batch = RecordBatch.validate(kafka);
    assertEquals(0x2724fecdL, batch.crc());
    assertEquals(1641388919L, batch.baseTimestamp());
    assertEquals(0, batch.partitionLeaderEpoch());
    Record r = batch.records().get(0);
    assertArrayEquals(new byte[0], r.key());
    assertArrayEquals(bytes("hello kafka"), r.value());
    assertEquals(List.of(new Header("foo", bytes("bar"))), r.headers());

    RecordBatchBuilder builder = new RecordBatchBuilder(0L, -1L, (short) -1, -1, 0);
    builder.append(1641388919L, new byte[0], bytes("hello kafka"), new Header[] {new Header("foo", bytes("bar"))});
    assertEquals(HexFormat.of().formatHex(kafka), HexFormat.of().formatHex(builder.build()));
  }

  /**
   * A gzip batch written by librdkafka (fixture {@code test_decode_fixture_gzip} of the rskafka project): key 100 x's,
   * value "hello kafka", header foo=bar. It validates and decodes (interop of the compressed format with a Kafka
   * client).
   */
  @Test
  void librdkafkaGzipBatchValidatesAndDecodes() {
    byte[] kafka =
        HexFormat.of()
            .parseHex(
                "00000000000000000000006400000000"
                + "02ba4146650001000000000000017e90"
                + "b334670000017e90b33467ffffffffff"
                + "ffffffffffffffffff000000011f8b08"
                + "00000000000003fbc3c8c0c07082b182"
                + "0e402c233527275f213b312d3b91892d"
                + "2d3f9f2d29b10800e4cdba1f80000000");
    RecordBatch batch = RecordBatch.validate(kafka);
    assertEquals(RecordBatch.COMPRESSION_GZIP, batch.compressionType());
    List<Record> records = batch.records();
    assertEquals(1, records.size());
    Record r = records.get(0);
    assertEquals(0L, r.offset());
    assertArrayEquals(bytes("x".repeat(100)), r.key());
    assertArrayEquals(bytes("hello kafka"), r.value());
    assertEquals(List.of(new Header("foo", bytes("bar"))), r.headers());
  }

  // -------------------------------------------------------------------------------------------------------------
  // Leader mutators

  @Test
  void setBaseOffsetAndLeaderEpochKeepCrcValidAndShiftRecordOffsets() {
    byte[] bytes = build(5);
    long crcBefore = RecordBatch.wrap(bytes).crc();
    RecordBatch batch = RecordBatch.wrap(bytes);
    batch.setBaseOffset(1_000_000_000_000L);
    batch.setPartitionLeaderEpoch(17);

    assertEquals(crcBefore, batch.crc());
    assertTrue(batch.isValid());
    RecordBatch revalidated = RecordBatch.validate(bytes);
    assertEquals(1_000_000_000_000L, revalidated.baseOffset());
    assertEquals(1_000_000_000_004L, revalidated.lastOffset());
    assertEquals(1_000_000_000_005L, revalidated.nextOffset());
    assertEquals(17, revalidated.partitionLeaderEpoch());
    long[] offsets = revalidated.records().stream().mapToLong(Record::offset).toArray();
    assertArrayEquals(consecutive(1_000_000_000_000L, 5), offsets);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Producer state copies

  /**
   * An idempotent producer resealing a batch: the copy carries the new producer fields and a valid CRC, every other
   * byte (also a compressed section) is the same, and the original array is untouched.
   */
  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"NONE", "GZIP", "LZ4", "ZSTD"})
  void withProducerStateCopiesTheBatchWithNewProducerFieldsAndAValidCrc(CompressionType type) {
    RecordBatchBuilder builder = new RecordBatchBuilder(0L, 42L, (short) 3, 17, -1);
    for (int i = 0; i < 20; i++) {
      builder.append(1000L + i, bytes("k" + i), bytes("value-" + i), null);
    }
    byte[] original =
        builder.build(type == CompressionType.NONE ? null : new Compression.Compressor(type, type.defaultLevel()));
    byte[] before = original.clone();

    byte[] copy = RecordBatch.withProducerState(original, 43L, (short) 0, Integer.MAX_VALUE - 5);

    assertArrayEquals(before, original, "the original is not changed");
    RecordBatch b = RecordBatch.validate(copy);
    assertEquals(43L, b.producerId());
    assertEquals(0, b.producerEpoch());
    assertEquals(Integer.MAX_VALUE - 5, b.baseSequence());
    assertEquals(13, b.lastSequence(), "wraps past Integer.MAX_VALUE");
    assertEquals(original.length, copy.length);
    for (int i = 0; i < copy.length; i++) {
      boolean producerField = i >= RecordBatch.PRODUCER_ID_OFFSET && i < RecordBatch.RECORDS_COUNT_OFFSET;
      boolean crc = i >= RecordBatch.CRC_OFFSET && i < RecordBatch.ATTRIBUTES_OFFSET;
      if (!producerField && !crc) {
        assertEquals(original[i], copy[i], "byte " + i);
      }
    }
    assertEquals(
        RecordBatch.validate(original).records().stream().map(r -> new String(r.value())).toList(),
        b.records().stream().map(r -> new String(r.value())).toList());
  }

  /**
   * The broker's recompression of an uncompressed batch (journal {@code event-compression = lz4}): every header field
   * but length, codec bits and CRC is kept, the records decode the same (headers, null key, timestamps, offsets after
   * the leader set the base offset), the original is not changed.
   */
  @Test
  void withCompressedRecordsKeepsTheHeaderAndTheRecordsAndRecomputesTheCrc() {
    RecordBatchBuilder builder = new RecordBatchBuilder(0L, 42L, (short) 3, 17, -1);
    for (int i = 0; i < 200; i++) {
      Header[] headers = i % 2 == 0 ? new Header[] {new Header("h", bytes("v" + i))} : null;
      builder.append(1000L + i, i % 3 == 0 ? null : bytes("k" + i), bytes("value-" + i + "-" + "x".repeat(50)), headers);
    }
    byte[] original = builder.build();
    RecordBatch.wrap(original).setBaseOffset(5000L);
    RecordBatch.wrap(original).setPartitionLeaderEpoch(7);
    byte[] before = original.clone();
    Compression.Compressor lz4 = new Compression.Compressor(CompressionType.LZ4, CompressionType.LZ4.defaultLevel());

    byte[] copy = RecordBatch.withCompressedRecords(original, lz4, original.length / 8);

    assertArrayEquals(before, original, "the original is not changed");
    RecordBatch b = RecordBatch.validate(copy);
    RecordBatch o = RecordBatch.wrap(original);
    assertEquals(RecordBatch.COMPRESSION_LZ4, b.compressionType());
    assertTrue(copy.length < original.length / 4, copy.length + " of " + original.length + " bytes");
    assertEquals(copy.length - RecordBatch.LOG_OVERHEAD, ByteBuffer.wrap(copy).getInt(RecordBatch.LENGTH_OFFSET));
    assertEquals(o.baseOffset(), b.baseOffset());
    assertEquals(7, b.partitionLeaderEpoch());
    assertEquals(o.lastOffset(), b.lastOffset());
    assertEquals(o.baseTimestamp(), b.baseTimestamp());
    assertEquals(o.maxTimestamp(), b.maxTimestamp());
    assertEquals(o.producerId(), b.producerId());
    assertEquals(o.producerEpoch(), b.producerEpoch());
    assertEquals(o.baseSequence(), b.baseSequence());
    assertEquals(o.recordCount(), b.recordCount());
    assertEquals(o.attributes() & ~RecordBatch.COMPRESSION_CODEC_MASK, b.attributes() & ~RecordBatch.COMPRESSION_CODEC_MASK);
    List<Record> expected = o.records();
    List<Record> actual = b.records();
    assertEquals(expected.size(), actual.size());
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).offset(), actual.get(i).offset());
      assertEquals(expected.get(i).timestamp(), actual.get(i).timestamp());
      assertArrayEquals(expected.get(i).key(), actual.get(i).key());
      assertArrayEquals(expected.get(i).value(), actual.get(i).value());
      assertEquals(expected.get(i).headers().size(), actual.get(i).headers().size());
    }
  }

  @Test
  void withCompressedRecordsKeepsABatchThatDoesNotShrinkEnoughAndRefusesACompressedOne() {
    Compression.Compressor lz4 = new Compression.Compressor(CompressionType.LZ4, CompressionType.LZ4.defaultLevel());
    byte[] noise = new byte[2000];
    new Random(11).nextBytes(noise);
    RecordBatchBuilder random = new RecordBatchBuilder();
    random.append(1000L, null, noise, null);
    byte[] incompressible = random.build();
    assertEquals(null, RecordBatch.withCompressedRecords(incompressible, lz4, incompressible.length / 8));

    RecordBatchBuilder text = new RecordBatchBuilder();
    text.append(1000L, null, bytes("a".repeat(2000)), null);
    byte[] compressed = text.build(lz4);
    assertThrows(IllegalArgumentException.class, () -> RecordBatch.withCompressedRecords(compressed, lz4, 0));
  }

  /** A batch in the middle of a larger array validates and compresses from there as the same batch on its own. */
  @Test
  void aBatchInsideALargerArrayValidatesAndCompressesAsTheSameBatchOnItsOwn() {
    byte[] original = build(300);
    byte[] frame = new byte[7 + original.length + 11];
    Arrays.fill(frame, (byte) 0x80);
    System.arraycopy(original, 0, frame, 7, original.length);
    RecordBatch.validate(frame, 7, original.length, original.length);
    InvalidRecordException tooLarge = assertThrows(InvalidRecordException.class,
        () -> RecordBatch.validate(frame, 7, original.length, original.length - 1));
    assertEquals(ErrorCode.MESSAGE_TOO_LARGE, tooLarge.errorCode());
    assertThrows(IndexOutOfBoundsException.class, () -> RecordBatch.validate(frame, 19, original.length, 1 << 20));
    assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(frame, 7, original.length - 1, 1 << 20));

    Compression.Compressor lz4 = new Compression.Compressor(CompressionType.LZ4, CompressionType.LZ4.defaultLevel());
    byte[] fromRange = RecordBatch.withCompressedRecords(frame, 7, original.length, lz4, 0);
    byte[] fromWhole = RecordBatch.withCompressedRecords(original, lz4, 0);
    assertArrayEquals(fromWhole, fromRange);
    assertEquals(RecordBatch.wrap(original).records().size(), RecordBatch.validate(fromRange).records().size());
    assertThrows(IndexOutOfBoundsException.class,
        () -> RecordBatch.withCompressedRecords(frame, 8, original.length + 11, lz4, 0));
  }

  /**
   * The one-pass varint reads of the record walk accept every length a varint can have (1-5 bytes for ints, 1-10 for
   * the timestamp delta varlong), including non-minimal encodings, as {@link ByteUtils#readVarint} does.
   */
  @Test
  void recordFieldsOfEveryVarintLengthValidateAndDecode() {
    long[] timestamps = {0L, 63L, 64L, 8191L, 8192L, 1L << 20, 1L << 27, 1L << 34, 1L << 41, 1L << 48, 1L << 55,
        Long.MAX_VALUE / 2};
    for (long delta : timestamps) {
      RecordBatchBuilder builder = new RecordBatchBuilder();
      builder.append(1000L, null, bytes("a"), null);
      builder.append(1000L + delta, new byte[200], new byte[70_000], null);
      byte[] batch = builder.build();
      List<Record> records = RecordBatch.validate(batch).records();
      assertEquals(1000L + delta, records.get(1).timestamp());
      assertEquals(70_000, records.get(1).value().length);
      assertRangeAgrees(batch);
    }
    // a non-minimal varint: the header count 0 written as 0x80 0x00 (two bytes), with the record length fixed
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(1000L, null, bytes("a"), null);
    byte[] minimal = builder.build();
    byte[] padded = new byte[minimal.length + 1];
    System.arraycopy(minimal, 0, padded, 0, minimal.length - 1);
    padded[minimal.length - 1] = (byte) 0x80;
    padded[minimal.length] = 0;
    padded[RecordBatch.RECORDS_OFFSET] += 2; // the record length varint (zigzag: +1 byte is +2)
    ByteUtils.writeInt(padded.length - RecordBatch.LOG_OVERHEAD, padded, RecordBatch.LENGTH_OFFSET);
    fixCrc(padded);
    assertEquals(0, RecordBatch.validate(padded).records().get(0).headers().size());
    assertRangeAgrees(padded);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Corruption

  @Test
  void everyFlippedByteIsDetectedExceptInBaseOffsetAndLeaderEpoch() {
    byte[] original = buildWithHeaders();
    for (int pos = 0; pos < original.length; pos++) {
      byte[] bytes = original.clone();
      bytes[pos] ^= (byte) 0xFF;
      assertRangeAgrees(bytes);
      boolean outsideCrc =
          pos < RecordBatch.LENGTH_OFFSET
              || (pos >= RecordBatch.PARTITION_LEADER_EPOCH_OFFSET && pos < RecordBatch.MAGIC_OFFSET);
      if (outsideCrc) {
        RecordBatch.validate(bytes);
      } else {
        int at = pos;
        CorruptRecordException e =
            assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(bytes), () -> "flip at " + at);
        assertEquals(ErrorCode.CORRUPT_MESSAGE, e.errorCode());
      }
    }
  }

  @ParameterizedTest
  @MethodSource("positionsAfterCrc")
  void flippedBitAfterCrcFailsValidateWithCorruptMessage(int pos) {
    byte[] bytes = buildWithHeaders();
    bytes[pos] ^= 0x01;
    CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.CORRUPT_MESSAGE, e.errorCode());
    assertFalse(RecordBatch.wrap(bytes).isValid());
  }

  static IntStream positionsAfterCrc() {
    return IntStream.range(RecordBatch.CRC_OFFSET + 4, buildWithHeaders().length);
  }

  @Test
  void everyTruncationIsCorrupt() {
    byte[] original = build(3);
    for (int len = 0; len < original.length; len++) {
      byte[] truncated = Arrays.copyOf(original, len);
      assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(truncated));
      assertThrows(CorruptRecordException.class, () -> RecordBatch.wrap(truncated));
    }
  }

  @Test
  void truncationWithFixedLengthAndCrcIsInvalidRecord() {
    byte[] original = build(3);
    for (int len = RecordBatch.HEADER_SIZE; len < original.length; len++) {
      byte[] truncated = Arrays.copyOf(original, len);
      ByteUtils.writeInt(len - RecordBatch.LOG_OVERHEAD, truncated, RecordBatch.LENGTH_OFFSET);
      fixCrc(truncated);
      InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(truncated));
      assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
      assertRejectedOrDecodes(truncated);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 1, 57, 58, 60, Integer.MAX_VALUE})
  void wrongLengthFieldIsCorrupt(int delta) {
    byte[] bytes = build(1);
    int length = ByteUtils.readInt(bytes, RecordBatch.LENGTH_OFFSET);
    ByteUtils.writeInt(delta == 0 ? length + 1 : length + delta, bytes, RecordBatch.LENGTH_OFFSET);
    assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(bytes));
    assertThrows(CorruptRecordException.class, () -> RecordBatch.wrap(bytes));
  }

  @ParameterizedTest
  @ValueSource(bytes = {0, 1, 3, -1, 127})
  void wrongMagicIsCorrupt(byte magic) {
    byte[] bytes = build(1);
    bytes[RecordBatch.MAGIC_OFFSET] = magic;
    fixCrc(bytes);
    CorruptRecordException e = assertThrows(CorruptRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.CORRUPT_MESSAGE, e.errorCode());
    assertThrows(CorruptRecordException.class, () -> RecordBatch.wrap(bytes));
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 5, 6, 7})
  void snappyOrUnassignedCodecIsUnsupportedCompressionType(int codec) {
    byte[] bytes = build(2);
    ByteUtils.writeShort((short) codec, bytes, RecordBatch.ATTRIBUTES_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, e.errorCode());
    RecordBatch wrapped = RecordBatch.wrap(bytes);
    assertEquals(codec, wrapped.compressionType());
    assertThrows(InvalidRecordException.class, wrapped::iterator);
  }

  /** Plain records whose attributes claim gzip, lz4 or zstd do not decompress: INVALID_RECORD, never a codec error. */
  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4})
  void plainRecordsLabelledCompressedAreInvalidRecord(int codec) {
    byte[] bytes = build(2);
    ByteUtils.writeShort((short) codec, bytes, RecordBatch.ATTRIBUTES_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    InvalidRecordException e2 = assertThrows(InvalidRecordException.class, RecordBatch.wrap(bytes)::iterator);
    assertEquals(ErrorCode.INVALID_RECORD, e2.errorCode());
  }

  @ParameterizedTest
  @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 2, 4, 1000, Integer.MAX_VALUE})
  void recordsCountDisagreeingWithRecordsIsInvalidRecord(int count) {
    byte[] bytes = build(3);
    ByteUtils.writeInt(count, bytes, RecordBatch.RECORDS_COUNT_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    assertRejectedOrDecodes(bytes);
  }

  @ParameterizedTest
  @ValueSource(ints = {Integer.MIN_VALUE, -1, 0, 1, 3, Integer.MAX_VALUE})
  void lastOffsetDeltaDisagreeingWithCountIsInvalidRecord(int lastOffsetDelta) {
    byte[] bytes = build(3);
    ByteUtils.writeInt(lastOffsetDelta, bytes, RecordBatch.LAST_OFFSET_DELTA_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
  }

  @Test
  void offsetDeltaOtherThanIndexIsInvalidRecord() {
    byte[] bytes = build(2);
    // second record starts after the first; its offsetDelta is its fourth byte (length, attributes, tsDelta)
    int second = RecordBatch.RECORDS_OFFSET + 1 + ByteUtils.readVarint(bytes, RecordBatch.RECORDS_OFFSET);
    assertEquals(0x02, bytes[second + 3]);
    bytes[second + 3] = 0x04;
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 1})
  void recordLengthDisagreeingWithItsFieldsIsInvalidRecord(int delta) {
    byte[] bytes = build(2);
    int length = ByteUtils.readVarint(bytes, RecordBatch.RECORDS_OFFSET);
    ByteUtils.writeVarint(length + delta, bytes, RecordBatch.RECORDS_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    assertRejectedOrDecodes(bytes);
  }

  @Test
  void trailingBytesAfterLastRecordAreInvalidRecord() {
    byte[] bytes = Arrays.copyOf(build(2), build(2).length + 1);
    ByteUtils.writeInt(bytes.length - RecordBatch.LOG_OVERHEAD, bytes, RecordBatch.LENGTH_OFFSET);
    fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    Iterator<Record> it = RecordBatch.wrap(bytes).iterator();
    it.next();
    assertThrows(InvalidRecordException.class, it::next);
  }

  @Test
  void batchLargerThanMaximumIsMessageTooLarge() {
    byte[] bytes = build(3);
    InvalidRecordException e =
        assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes, bytes.length - 1));
    assertEquals(ErrorCode.MESSAGE_TOO_LARGE, e.errorCode());
    RecordBatch.validate(bytes, bytes.length);
  }

  @Test
  void garbageBytesOfEverySizeAreRejectedOnlyWithRecordExceptions() {
    Random random = new Random(20240601L);
    List<Integer> sizes = new ArrayList<>();
    IntStream.rangeClosed(0, 70).forEach(sizes::add);
    sizes.addAll(List.of(100, 128, 255, 256, 1000, 4096, 65_536));
    for (int size : sizes) {
      for (int trial = 0; trial < 50; trial++) {
        byte[] garbage = new byte[size];
        random.nextBytes(garbage);
        assertRejected(garbage, true);
        if (size >= RecordBatch.HEADER_SIZE) {
          // a plausible frame and a correct CRC over garbage, so the record walk itself sees the garbage
          ByteUtils.writeInt(size - RecordBatch.LOG_OVERHEAD, garbage, RecordBatch.LENGTH_OFFSET);
          garbage[RecordBatch.MAGIC_OFFSET] = RecordBatch.MAGIC;
          if (trial % 2 == 0) {
            ByteUtils.writeShort((short) 0, garbage, RecordBatch.ATTRIBUTES_OFFSET);
          }
          if (trial % 4 == 0) {
            int count = 1 + random.nextInt(4);
            ByteUtils.writeInt(count, garbage, RecordBatch.RECORDS_COUNT_OFFSET);
            ByteUtils.writeInt(count - 1, garbage, RecordBatch.LAST_OFFSET_DELTA_OFFSET);
          }
          fixCrc(garbage);
          assertRejected(garbage, false);
          assertRejectedOrDecodes(garbage);
          assertRangeAgrees(garbage);
        }
      }
    }
  }

  @Test
  void randomlyMutatedRecordsWithFixedCrcAreRejectedOnlyWithRecordExceptions() {
    Random random = new Random(99L);
    byte[] original = buildWithHeaders();
    for (int trial = 0; trial < 20_000; trial++) {
      byte[] bytes = original.clone();
      int mutations = 1 + random.nextInt(3);
      for (int m = 0; m < mutations; m++) {
        int pos = RecordBatch.RECORDS_OFFSET + random.nextInt(bytes.length - RecordBatch.RECORDS_OFFSET);
        bytes[pos] = (byte) random.nextInt();
      }
      fixCrc(bytes);
      assertRangeAgrees(bytes);
      try {
        RecordBatch.validate(bytes).records();
      } catch (CorruptRecordException | InvalidRecordException expected) {
        // fine
      } catch (RuntimeException e) {
        fail("unexpected " + e + " for " + HexFormat.of().formatHex(bytes), e);
      }
      assertRejectedOrDecodes(bytes);
    }
  }

  @Test
  void nullArrayIsANullPointerException() {
    assertThrows(NullPointerException.class, () -> RecordBatch.validate(null));
    assertThrows(NullPointerException.class, () -> RecordBatch.wrap(null));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Misc

  @Test
  void iteratorEndsWithNoSuchElement() {
    Iterator<Record> it = RecordBatch.validate(build(1)).iterator();
    it.next();
    assertFalse(it.hasNext());
    assertThrows(java.util.NoSuchElementException.class, it::next);
  }

  @Test
  void batchesWithEqualBytesAreEqual() {
    byte[] a = build(2);
    RecordBatch x = RecordBatch.wrap(a);
    RecordBatch y = RecordBatch.wrap(a.clone());
    assertEquals(x, y);
    assertEquals(x.hashCode(), y.hashCode());
    assertTrue(x.toString().contains("count=2"));
  }

  @Test
  void attributeFlagsAreDecoded() {
    byte[] bytes = build(1);
    ByteUtils.writeShort(
        (short) (RecordBatch.TRANSACTIONAL_FLAG_MASK | RecordBatch.CONTROL_FLAG_MASK),
        bytes,
        RecordBatch.ATTRIBUTES_OFFSET);
    fixCrc(bytes);
    RecordBatch batch = RecordBatch.validate(bytes);
    assertTrue(batch.isTransactional());
    assertTrue(batch.isControlBatch());
    assertFalse(batch.isLogAppendTime());
    assertEquals(RecordBatch.COMPRESSION_NONE, batch.compressionType());
    assertEquals(RecordBatch.MAGIC, batch.magic());
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers

  /** validate and wrap+iterate must throw one of our two exceptions and nothing else. */
  private static void assertRejected(byte[] bytes, boolean corrupt) {
    try {
      RecordBatch.validate(bytes);
      fail("accepted garbage " + HexFormat.of().formatHex(bytes));
    } catch (CorruptRecordException e) {
      assertEquals(ErrorCode.CORRUPT_MESSAGE, e.errorCode());
    } catch (InvalidRecordException e) {
      if (corrupt) {
        fail("expected CorruptRecordException, got " + e);
      }
    } catch (RuntimeException e) {
      fail("unexpected " + e + " for " + HexFormat.of().formatHex(bytes), e);
    }
  }

  /**
   * The ranged validate ({@link RecordBatch#validate(byte[], int, int, int)}) of the same bytes inside a larger array
   * (a produce request's batch in its frame) agrees with the whole-array validate: both accept, or both throw the same
   * exception with the same error code. The bytes around the range are 0x80 (a varint that continues), so that a read
   * past the range's end would change the outcome.
   */
  private static void assertRangeAgrees(byte[] bytes) {
    String whole = outcome(() -> RecordBatch.validate(bytes));
    byte[] frame = new byte[13 + bytes.length + 9];
    Arrays.fill(frame, (byte) 0x80);
    System.arraycopy(bytes, 0, frame, 13, bytes.length);
    byte[] before = frame.clone();
    String ranged = outcome(() -> RecordBatch.validate(frame, 13, bytes.length, Integer.MAX_VALUE));
    assertEquals(whole, ranged, () -> "ranged validate disagrees for " + HexFormat.of().formatHex(bytes));
    assertArrayEquals(before, frame, "validate changes nothing");
  }

  private static String outcome(Runnable validate) {
    try {
      validate.run();
      return "accepted";
    } catch (CorruptRecordException e) {
      return "CorruptRecordException " + e.errorCode();
    } catch (InvalidRecordException e) {
      return "InvalidRecordException " + e.errorCode();
    } catch (RuntimeException e) {
      return e.toString();
    }
  }

  /** Wrapping and decoding unvalidated bytes either works or throws one of our two exceptions. */
  private static void assertRejectedOrDecodes(byte[] bytes) {
    try {
      RecordBatch batch = RecordBatch.wrap(bytes);
      batch.records();
      batch.toString();
    } catch (CorruptRecordException | InvalidRecordException expected) {
      // fine
    } catch (RuntimeException e) {
      fail("unexpected " + e + " for " + HexFormat.of().formatHex(bytes), e);
    }
  }

  static void fixCrc(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, RecordBatch.ATTRIBUTES_OFFSET, bytes.length - RecordBatch.ATTRIBUTES_OFFSET);
    ByteUtils.writeUnsignedInt(crc.getValue(), bytes, RecordBatch.CRC_OFFSET);
  }

  private static byte[] build(int n) {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    for (int i = 0; i < n; i++) {
      builder.append(1000L + i, bytes("k" + i), bytes("v" + i), null);
    }
    return builder.build();
  }

  private static byte[] buildWithHeaders() {
    RecordBatchBuilder builder = new RecordBatchBuilder(0L, 5L, (short) 1, 0, -1);
    builder.append(1000L, bytes("key"), bytes("value"), new Header[] {new Header("h", bytes("x"))});
    builder.append(900L, null, bytes("tombstone?"), new Header[] {new Header("🔑", null)});
    builder.append(2000L, new byte[0], null, null);
    return builder.build();
  }

  private static long[] consecutive(long start, int n) {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      out[i] = start + i;
    }
    return out;
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] randomBytes(int n, long seed) {
    byte[] out = new byte[n];
    new Random(seed).nextBytes(out);
    return out;
  }
}
