package io.tributary.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import io.tributary.protocol.ErrorCode;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPInputStream;
import net.jpountz.lz4.LZ4FrameInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The compressed record batch format: round trips per codec, the stream formats, and damaged compressed data. */
class CompressionTest {

  private static final long T0 = 1_700_000_000_000L;

  /** A builder with producer fields and mixed records: null/empty keys and values, headers, timestamps back and forth. */
  private static RecordBatchBuilder builder(int n) {
    RecordBatchBuilder b = new RecordBatchBuilder(0L, 42L, (short) 3, 1000, -1);
    for (int i = 0; i < n; i++) {
      byte[] key = i % 5 == 0 ? null : i % 7 == 0 ? new byte[0] : ("key-" + (i % 10)).getBytes(StandardCharsets.UTF_8);
      byte[] value = i % 11 == 0 ? null : ("value-" + i + "-" + "abc".repeat(i % 20)).getBytes(StandardCharsets.UTF_8);
      Header[] headers =
          i % 3 == 0 ? null : new Header[] {new Header("h" + (i % 4), i % 2 == 0 ? null : new byte[] {(byte) i})};
      b.append(T0 + (i % 13) * 7 - 20, key, value, headers);
    }
    return b;
  }

  private static Compression.Compressor compressor(CompressionType type) {
    return new Compression.Compressor(type, type.defaultLevel());
  }

  /**
   * The LZ4 frames the compressor writes are byte for byte lz4-java's {@code LZ4FrameOutputStream}'s with 64 KiB
   * independent blocks and no checksums (the format Tributary wrote before framing blocks itself): empty input, a
   * part of a block, exactly one block, one byte more, several blocks mixing compressible and incompressible ones
   * (stored plain), at the default and a high level.
   */
  @Test
  void lz4FramesAreThoseOfLz4JavasFrameOutputStream() throws IOException {
    Random random = new Random(5);
    byte[] noise = new byte[70_000];
    random.nextBytes(noise);
    byte[] text = "tributary record batch ".repeat(9000).getBytes(StandardCharsets.UTF_8);
    byte[] mixed = new byte[300_000];
    for (int i = 0; i < mixed.length; i += 50_000) {
      byte[] part = (i / 50_000) % 2 == 0 ? noise : text;
      System.arraycopy(part, 0, mixed, i, Math.min(50_000, mixed.length - i));
    }
    for (int level : new int[] {CompressionType.LZ4.defaultLevel(), 12}) {
      Compression.Compressor ours = new Compression.Compressor(CompressionType.LZ4, level);
      net.jpountz.lz4.LZ4Factory f = net.jpountz.lz4.LZ4Factory.fastestInstance();
      net.jpountz.lz4.LZ4Compressor theirs = level == CompressionType.LZ4.defaultLevel()
          ? f.fastCompressor() : f.highCompressor(level);
      for (int n : new int[] {0, 1, 1000, 65_536, 65_537, 140_000, 300_000}) {
        byte[] in = Arrays.copyOf(n <= 65_537 ? text : mixed, n);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        try (net.jpountz.lz4.LZ4FrameOutputStream s = new net.jpountz.lz4.LZ4FrameOutputStream(expected,
            net.jpountz.lz4.LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB, -1L, theirs,
            net.jpountz.xxhash.XXHashFactory.fastestInstance().hash32(),
            net.jpountz.lz4.LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE)) {
          s.write(in);
        }
        byte[] got = ours.compress(in, 0, in.length, 3);
        assertArrayEquals(expected.toByteArray(), Arrays.copyOfRange(got, 3, got.length), n + " bytes, level " + level);
        assertArrayEquals(in, new LZ4FrameInputStream(new ByteArrayInputStream(got, 3, got.length - 3)).readAllBytes());
      }
    }
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void compressedBatchRoundTripsEveryRecordAndHeaderField(CompressionType type) {
    byte[] plain = builder(500).build();
    byte[] compressed = builder(500).build(compressor(type));

    RecordBatch p = RecordBatch.validate(plain);
    RecordBatch c = RecordBatch.validate(compressed);
    assertEquals(type.id, c.compressionType());
    assertTrue(c.isCompressed());
    assertTrue(compressed.length < plain.length / 2, type + " should shrink repetitive records: " + compressed.length);
    assertEquals(compressed.length - RecordBatch.LOG_OVERHEAD, ByteUtils.readInt(compressed, RecordBatch.LENGTH_OFFSET));
    assertEquals(p.recordCount(), c.recordCount());
    assertEquals(p.lastOffsetDelta(), c.lastOffsetDelta());
    assertEquals(p.baseTimestamp(), c.baseTimestamp());
    assertEquals(p.maxTimestamp(), c.maxTimestamp());
    assertEquals(42L, c.producerId());
    assertEquals((short) 3, c.producerEpoch());
    assertEquals(1000, c.baseSequence());
    assertEquals(p.records(), c.records());
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void recordsSectionIsOneStandardStreamOfThePlainRecords(CompressionType type) throws IOException {
    byte[] plain = builder(200).build();
    byte[] compressed = builder(200).build(compressor(type));
    byte[] section = Arrays.copyOfRange(compressed, RecordBatch.RECORDS_OFFSET, compressed.length);
    byte[] decompressed;
    switch (type) {
      case GZIP:
        assertEquals("1f8b", HexFormat.of().formatHex(section, 0, 2));
        decompressed = new GZIPInputStream(new ByteArrayInputStream(section)).readAllBytes();
        break;
      case LZ4:
        assertEquals("04224d18", HexFormat.of().formatHex(section, 0, 4)); // LZ4 frame magic 0x184D2204
        decompressed = new LZ4FrameInputStream(new ByteArrayInputStream(section)).readAllBytes();
        break;
      default:
        assertEquals("28b52ffd", HexFormat.of().formatHex(section, 0, 4)); // zstd frame magic 0xFD2FB528
        decompressed = Zstd.decompress(section, (int) Zstd.getFrameContentSize(section));
        break;
    }
    assertArrayEquals(Arrays.copyOfRange(plain, RecordBatch.RECORDS_OFFSET, plain.length), decompressed);
    // the header is the plain one but for length, attributes and CRC
    assertArrayEquals(
        Arrays.copyOfRange(plain, RecordBatch.LAST_OFFSET_DELTA_OFFSET, RecordBatch.HEADER_SIZE),
        Arrays.copyOfRange(compressed, RecordBatch.LAST_OFFSET_DELTA_OFFSET, RecordBatch.HEADER_SIZE));
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void everyLevelInRangeRoundTrips(CompressionType type) {
    List<Record> expected = RecordBatch.wrap(builder(50).build()).records();
    int[] levels =
        type == CompressionType.ZSTD ? new int[] {-5, 1, 3, 19} : new int[] {type.minLevel(), type.maxLevel()};
    for (int level : levels) {
      byte[] bytes = builder(50).build(new Compression.Compressor(type, level));
      assertEquals(expected, RecordBatch.validate(bytes).records(), type + " level " + level);
    }
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void leaderMutatorsKeepCrcAndShiftOffsetsOfCompressedBatch(CompressionType type) {
    byte[] bytes = builder(10).build(compressor(type));
    RecordBatch batch = RecordBatch.wrap(bytes);
    batch.setBaseOffset(1_000L);
    batch.setPartitionLeaderEpoch(7);
    RecordBatch again = RecordBatch.validate(bytes);
    assertEquals(7, again.partitionLeaderEpoch());
    List<Record> records = again.records();
    for (int i = 0; i < records.size(); i++) {
      assertEquals(1_000L + i, records.get(i).offset());
    }
  }

  @Test
  void zstdStreamWithoutContentSizeAndSeveralFramesDecodes() throws IOException {
    byte[] plain = builder(300).build();
    int half = RecordBatch.RECORDS_OFFSET + 1; // split inside the first record: frames are just bytes
    ByteArrayOutputStream section = new ByteArrayOutputStream();
    try (ZstdOutputStream z = new ZstdOutputStream(section)) {
      z.write(plain, RecordBatch.RECORDS_OFFSET, half - RecordBatch.RECORDS_OFFSET);
    }
    section.write(Zstd.compress(Arrays.copyOfRange(plain, half, plain.length)));
    byte[] bytes = withSection(plain, RecordBatch.COMPRESSION_ZSTD, section.toByteArray());
    assertEquals(RecordBatch.wrap(plain).records(), RecordBatch.validate(bytes).records());
  }

  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void garbageCompressedSectionWithValidCrcIsInvalidRecord(CompressionType type) {
    byte[] good = builder(100).build(compressor(type));
    byte[] garbage = good.clone();
    byte[] noise = new byte[good.length - RecordBatch.RECORDS_OFFSET];
    new Random(7).nextBytes(noise);
    System.arraycopy(noise, 0, garbage, RecordBatch.RECORDS_OFFSET, noise.length);
    RecordBatchTest.fixCrc(garbage);
    assertTrue(RecordBatch.wrap(garbage).isValid());

    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(garbage));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
    InvalidRecordException e2 = assertThrows(InvalidRecordException.class, RecordBatch.wrap(garbage)::iterator);
    assertEquals(ErrorCode.INVALID_RECORD, e2.errorCode());
    // the same thread still validates good batches (the per-thread scratch buffer is not poisoned)
    assertEquals(100, RecordBatch.validate(good).records().size());
  }

  /**
   * Truncated, bit-flipped and extended compressed sections (CRC fixed up each time): validate and iteration throw
   * only {@link InvalidRecordException}, or accept, never a codec exception or an error.
   */
  @ParameterizedTest
  @EnumSource(value = CompressionType.class, names = {"GZIP", "LZ4", "ZSTD"})
  void damagedCompressedSectionsOnlyEverThrowInvalidRecord(CompressionType type) {
    byte[] good = builder(60).build(compressor(type));
    Random random = new Random(type.id);
    for (int round = 0; round < 300; round++) {
      byte[] bytes;
      int kind = round % 3;
      if (kind == 0) {
        int cut = RecordBatch.RECORDS_OFFSET + random.nextInt(good.length - RecordBatch.RECORDS_OFFSET);
        bytes = Arrays.copyOf(good, cut);
      } else if (kind == 1) {
        bytes = good.clone();
        int at = RecordBatch.RECORDS_OFFSET + random.nextInt(good.length - RecordBatch.RECORDS_OFFSET);
        bytes[at] ^= (byte) (1 << random.nextInt(8));
      } else {
        bytes = Arrays.copyOf(good, good.length + 1 + random.nextInt(16));
        for (int i = good.length; i < bytes.length; i++) {
          bytes[i] = (byte) random.nextInt();
        }
      }
      ByteUtils.writeInt(bytes.length - RecordBatch.LOG_OVERHEAD, bytes, RecordBatch.LENGTH_OFFSET);
      RecordBatchTest.fixCrc(bytes);
      for (boolean validate : new boolean[] {true, false}) {
        try {
          if (validate) {
            RecordBatch.validate(bytes);
          } else {
            RecordBatch.wrap(bytes).records();
          }
        } catch (InvalidRecordException expected) {
          // fine
        } catch (RuntimeException e) {
          fail("round " + round + ": unexpected " + e, e);
        }
      }
    }
  }

  @Test
  void decompressedRecordsMustMatchTheHeaderCount() {
    byte[] plain = builder(5).build();
    byte[] section = Zstd.compress(Arrays.copyOfRange(plain, RecordBatch.RECORDS_OFFSET, plain.length));
    byte[] bytes = withSection(plain, RecordBatch.COMPRESSION_ZSTD, section);
    ByteUtils.writeInt(6, bytes, RecordBatch.RECORDS_COUNT_OFFSET);
    ByteUtils.writeInt(5, bytes, RecordBatch.LAST_OFFSET_DELTA_OFFSET);
    RecordBatchTest.fixCrc(bytes);
    InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> RecordBatch.validate(bytes));
    assertEquals(ErrorCode.INVALID_RECORD, e.errorCode());
  }

  @Test
  void compressorRefusesNoneSnappyAndLevelsOutOfRange() {
    assertThrows(IllegalArgumentException.class, () -> new Compression.Compressor(CompressionType.NONE, 0));
    assertThrows(IllegalArgumentException.class, () -> new Compression.Compressor(CompressionType.SNAPPY, 0));
    assertThrows(IllegalArgumentException.class, () -> new Compression.Compressor(CompressionType.LZ4, 18));
    assertThrows(IllegalArgumentException.class, () -> new Compression.Compressor(CompressionType.ZSTD, 23));
    assertThrows(IllegalArgumentException.class, () -> new Compression.Compressor(CompressionType.GZIP, 10));
  }

  @Test
  void compressionTypeNamesAndIdsAreKafkas() {
    assertEquals(CompressionType.LZ4, CompressionType.forName(" LZ4 "));
    assertEquals(CompressionType.ZSTD, CompressionType.forId(4));
    assertEquals(2, CompressionType.forName("snappy").id);
    assertEquals(null, CompressionType.forId(5));
    assertThrows(IllegalArgumentException.class, () -> CompressionType.forName("brotli"));
  }

  /** {@code plain}'s header with {@code codec} in the attributes, followed by {@code section}; length and CRC fixed. */
  private static byte[] withSection(byte[] plain, int codec, byte[] section) {
    byte[] bytes = Arrays.copyOf(plain, RecordBatch.RECORDS_OFFSET + section.length);
    System.arraycopy(section, 0, bytes, RecordBatch.RECORDS_OFFSET, section.length);
    ByteUtils.writeInt(bytes.length - RecordBatch.LOG_OVERHEAD, bytes, RecordBatch.LENGTH_OFFSET);
    ByteUtils.writeShort((short) codec, bytes, RecordBatch.ATTRIBUTES_OFFSET);
    RecordBatchTest.fixCrc(bytes);
    return bytes;
  }
}
