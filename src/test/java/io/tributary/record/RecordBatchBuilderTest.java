package io.tributary.record;

import static io.tributary.record.RecordBatchTest.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class RecordBatchBuilderTest {

  /** Appends the same mixed records (keys, nulls, headers, growing timestamps) to {@code builder}. */
  private static RecordBatchBuilder fill(RecordBatchBuilder builder) {
    for (int i = 0; i < 40; i++) {
      builder.append(1_000L + 3 * i, i % 3 == 0 ? null : bytes("key-" + i), i % 5 == 0 ? null : new byte[i * 11],
          i % 4 == 0 ? new Header[] {new Header("h" + i, i % 8 == 0 ? null : bytes("v"))} : null);
    }
    return builder;
  }

  /**
   * A builder given a reused array (of garbage) builds the same bytes as one with a new array, compressed or not, and
   * gives the array back once it is no longer the batch; a batch that is its exactly full array gives nothing back.
   */
  @Test
  void aReusedBufferBuildsTheSameBatchAndIsGivenBackWhenFree() {
    for (Compression.Compressor compressor : new Compression.Compressor[] {null,
        new Compression.Compressor(CompressionType.LZ4, CompressionType.LZ4.defaultLevel())}) {
      byte[] expected = fill(new RecordBatchBuilder(0L, 7L, (short) 1, 5, 2, 64)).build(compressor);
      byte[] garbage = new byte[64 * 1024];
      new java.util.Random(42).nextBytes(garbage);
      RecordBatchBuilder reused = fill(new RecordBatchBuilder(0L, 7L, (short) 1, 5, 2, garbage));
      assertEquals(null, reused.takeSpareBuffer(), "nothing to give back before the build");
      byte[] built = reused.build(compressor);
      org.junit.jupiter.api.Assertions.assertArrayEquals(expected, built, "compressor " + compressor);
      RecordBatch.validate(built);
      assertTrue(reused.takeSpareBuffer() == garbage, "the array is free once the batch is a copy");
      assertEquals(null, reused.takeSpareBuffer(), "given back once");
    }
    RecordBatchBuilder exact = new RecordBatchBuilder();
    exact.append(1L, null, bytes("v"), null);
    byte[] full = new byte[exact.estimatedSizeInBytes()];
    RecordBatchBuilder intoFull = new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, full);
    intoFull.append(1L, null, bytes("v"), null);
    assertTrue(intoFull.build() == full, "an exactly full array is the batch");
    assertEquals(null, intoFull.takeSpareBuffer(), "so it is not given back");
    assertThrows(IllegalArgumentException.class,
        () -> new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, new byte[RecordBatch.HEADER_SIZE - 1]));
  }

  @Test
  void emptyBuilderAlwaysHasRoomForOneRecordEvenIfTooLarge() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    assertTrue(builder.isEmpty());
    assertTrue(builder.hasRoomFor(10, 0L, null, new byte[1000], null));
  }

  @Test
  void hasRoomForIsExactAgainstTheBatchSizeLimit() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(1000L, bytes("k"), bytes("v"), null);
    int before = builder.estimatedSizeInBytes();

    RecordBatchBuilder probe = new RecordBatchBuilder();
    probe.append(1000L, bytes("k"), bytes("v"), null);
    probe.append(1005L, bytes("key"), bytes("value"), null);
    int after = probe.estimatedSizeInBytes();

    assertTrue(after > before);
    assertTrue(builder.hasRoomFor(after, 1005L, bytes("key"), bytes("value"), null));
    assertFalse(builder.hasRoomFor(after - 1, 1005L, bytes("key"), bytes("value"), null));
  }

  @Test
  void estimatedSizeInBytesIsTheBuiltLength() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    assertEquals(RecordBatch.HEADER_SIZE, builder.estimatedSizeInBytes());
    for (int i = 0; i < 100; i++) {
      builder.append(i, bytes("k" + i), new byte[i * 7], new Header[] {new Header("h", null)});
    }
    assertEquals(100, builder.recordCount());
    int estimated = builder.estimatedSizeInBytes();
    byte[] built = builder.build();
    assertEquals(estimated, built.length);
    RecordBatch.validate(built);
  }

  static List<Object[]> recordShapes() {
    return List.of(
        new Object[] {null, null, null},
        new Object[] {new byte[0], new byte[0], new Header[0]},
        new Object[] {new byte[63], new byte[64], null},
        new Object[] {new byte[200], new byte[20_000], new Header[] {new Header("🔑ключ", new byte[300])}},
        new Object[] {null, new byte[1 << 20], new Header[] {new Header("a", null), new Header("", new byte[0])}});
  }

  @ParameterizedTest
  @MethodSource("recordShapes")
  void estimateSizeInBytesIsAnUpperBoundOfTheEncodedRecord(byte[] key, byte[] value, Header[] headers) {
    int estimate = RecordBatchBuilder.estimateSizeInBytes(key, value, headers);
    for (long timestamp : new long[] {0L, 1L << 40, Long.MAX_VALUE}) {
      RecordBatchBuilder builder = new RecordBatchBuilder();
      builder.append(0L, null, null, null);
      builder.append(timestamp, key, value, headers); // worst timestamp delta for the second record
      RecordBatch batch = RecordBatch.validate(builder.build());
      int actual = batch.records().get(1).sizeInBytes();
      assertTrue(actual <= estimate, () -> "actual " + actual + " > estimate " + estimate);
      assertTrue(estimate - actual <= 15, () -> "estimate " + estimate + " is loose for " + actual);
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {-2L, -1000L, Long.MIN_VALUE})
  void negativeTimestampOtherThanMinusOneIsRejected(long timestamp) {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    assertThrows(IllegalArgumentException.class, () -> builder.append(timestamp, null, null, null));
    assertEquals(0, builder.recordCount());
  }

  @Test
  void nullHeaderIsRejectedWithoutChangingTheBatch() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(1L, null, bytes("v"), null);
    int size = builder.estimatedSizeInBytes();
    assertThrows(NullPointerException.class, () -> builder.append(2L, null, null, new Header[] {null}));
    assertEquals(size, builder.estimatedSizeInBytes());
    assertEquals(1, RecordBatch.validate(builder.build()).recordCount());
  }

  @Test
  void buildWithoutRecordsIsIllegal() {
    assertThrows(IllegalStateException.class, () -> new RecordBatchBuilder().build());
  }

  @Test
  void builderIsSingleUse() {
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(1L, null, bytes("v"), null);
    builder.build();
    assertThrows(IllegalStateException.class, builder::build);
    assertThrows(IllegalStateException.class, () -> builder.append(2L, null, bytes("v"), null));
    assertFalse(builder.hasRoomFor(Integer.MAX_VALUE, 2L, null, null, null));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 61, 62, 70, 71, 4096})
  void buildReturnsAnExactlySizedArrayWhateverTheInitialCapacity(int initialCapacity) {
    RecordBatchBuilder builder = new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, initialCapacity);
    builder.append(1_000L, bytes("k"), bytes("v"), null); // a 70-byte batch
    int size = builder.estimatedSizeInBytes();
    RecordBatch batch = builder.buildBatch();
    assertEquals(70, size);
    assertEquals(size, batch.bytes().length);
    assertTrue(batch.isValid());
  }

  @Test
  void appendedArraysAreCopiedSoCallersMayReuseThem() {
    byte[] value = bytes("first");
    RecordBatchBuilder builder = new RecordBatchBuilder();
    builder.append(1L, null, value, null);
    value[0] = 'X';
    assertEquals("first", new String(RecordBatch.validate(builder.build()).records().get(0).value()));
  }

  @Test
  void headerAndRecordEqualityIsByContent() {
    assertEquals(new Header("a", bytes("x")), new Header("a", bytes("x")));
    assertEquals(new Header("a", null).hashCode(), new Header("a", null).hashCode());
    assertFalse(new Header("a", null).equals(new Header("a", new byte[0])));
    assertThrows(NullPointerException.class, () -> new Header(null, null));
    Record a = new Record(1L, 2L, bytes("k"), null, List.of(new Header("h", null)), 10);
    Record b = new Record(1L, 2L, bytes("k"), null, List.of(new Header("h", null)), 10);
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    assertTrue(a.hasKey());
    assertFalse(a.hasValue());
  }
}
