package io.tributary.record;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ByteUtilsTest {

  @ParameterizedTest
  @ValueSource(
      ints = {
        0, 1, -1, 2, -2, 63, -64, 64, -65, 127, 128, 8191, -8192, 8192, 1 << 20, -(1 << 20), 1 << 27, 1 << 28,
        Integer.MAX_VALUE, Integer.MIN_VALUE, Integer.MAX_VALUE - 1, Integer.MIN_VALUE + 1
      })
  void varintRoundTripsAndSizeOfMatchesBytesWritten(int value) {
    byte[] buf = new byte[ByteUtils.MAX_VARINT_SIZE + 3];
    int end = ByteUtils.writeVarint(value, buf, 3);
    assertEquals(3 + ByteUtils.sizeOfVarint(value), end);
    assertEquals(end, ByteUtils.varintEnd(buf, 3, buf.length));
    assertEquals(value, ByteUtils.readVarint(buf, 3));
  }

  @ParameterizedTest
  @ValueSource(
      longs = {
        0L, 1L, -1L, 63L, -64L, 64L, -65L, 1L << 31, -(1L << 31), 1L << 35, 1L << 48, 1L << 55, 1L << 56, 1L << 62,
        Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 1, Long.MIN_VALUE + 1, Integer.MAX_VALUE, Integer.MIN_VALUE
      })
  void varlongRoundTripsAndSizeOfMatchesBytesWritten(long value) {
    byte[] buf = new byte[ByteUtils.MAX_VARLONG_SIZE + 1];
    int end = ByteUtils.writeVarlong(value, buf, 1);
    assertEquals(1 + ByteUtils.sizeOfVarlong(value), end);
    assertEquals(end, ByteUtils.varlongEnd(buf, 1, buf.length));
    assertEquals(value, ByteUtils.readVarlong(buf, 1));
  }

  @Test
  void varintsRoundTripForRandomValues() {
    Random random = new Random(42);
    byte[] buf = new byte[ByteUtils.MAX_VARLONG_SIZE];
    for (int i = 0; i < 100_000; i++) {
      int vi = random.nextInt() >> random.nextInt(32);
      assertEquals(ByteUtils.sizeOfVarint(vi), ByteUtils.writeVarint(vi, buf, 0));
      assertEquals(vi, ByteUtils.readVarint(buf, 0));
      long vl = random.nextLong() >> random.nextInt(64);
      assertEquals(ByteUtils.sizeOfVarlong(vl), ByteUtils.writeVarlong(vl, buf, 0));
      assertEquals(vl, ByteUtils.readVarlong(buf, 0));
    }
  }

  @Test
  void varintEncodingIsZigzagLikeKafka() {
    assertArrayEquals(new byte[] {0x00}, varint(0));
    assertArrayEquals(new byte[] {0x01}, varint(-1));
    assertArrayEquals(new byte[] {0x02}, varint(1));
    assertArrayEquals(new byte[] {0x03}, varint(-2));
    assertArrayEquals(new byte[] {(byte) 0xD8, 0x04}, varint(300)); // zigzag 600
    assertArrayEquals(
        new byte[] {(byte) 0xFE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F}, varint(Integer.MAX_VALUE));
    assertArrayEquals(
        new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x0F}, varint(Integer.MIN_VALUE));
  }

  @Test
  void nonMinimalVarintIsAcceptedLikeKafka() {
    byte[] buf = {(byte) 0x82, (byte) 0x80, 0x00};
    assertEquals(3, ByteUtils.varintEnd(buf, 0, buf.length));
    assertEquals(1, ByteUtils.readVarint(buf, 0));
  }

  @Test
  void varintEndReportsTruncatedAndOverlongVarints() {
    byte[] continuing = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01};
    assertEquals(-1, ByteUtils.varintEnd(continuing, 0, 3)); // runs into the limit
    assertEquals(-1, ByteUtils.varintEnd(continuing, 0, continuing.length)); // longer than 5 bytes
    assertEquals(7, ByteUtils.varlongEnd(continuing, 0, continuing.length));
    assertEquals(-1, ByteUtils.varintEnd(continuing, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> ByteUtils.readVarint(continuing, 0));
    byte[] elevenBytes = new byte[11];
    java.util.Arrays.fill(elevenBytes, (byte) 0x80);
    assertEquals(-1, ByteUtils.varlongEnd(elevenBytes, 0, elevenBytes.length));
    assertThrows(IllegalArgumentException.class, () -> ByteUtils.readVarlong(elevenBytes, 0));
  }

  @Test
  void fixedWidthHelpersAreBigEndian() {
    byte[] buf = new byte[16];
    assertEquals(9, ByteUtils.writeLong(0x0102030405060708L, buf, 1));
    assertEquals(0x0102030405060708L, ByteBuffer.wrap(buf, 1, 8).getLong());
    assertEquals(0x0102030405060708L, ByteUtils.readLong(buf, 1));
    assertEquals(13, ByteUtils.writeInt(-2, buf, 9));
    assertEquals(-2, ByteBuffer.wrap(buf).getInt(9));
    assertEquals(-2, ByteUtils.readInt(buf, 9));
    assertEquals(0xFFFF_FFFEL, ByteUtils.readUnsignedInt(buf, 9));
    assertEquals(15, ByteUtils.writeShort((short) 0x1234, buf, 13));
    assertEquals(0x12, buf[13]);
    assertEquals((short) 0x1234, ByteUtils.readShort(buf, 13));
    ByteUtils.writeUnsignedInt(0xCAFEBABEL, buf, 0);
    assertEquals(0xCAFEBABEL, ByteUtils.readUnsignedInt(buf, 0));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "a", "key", "ключ", "鍵", "🔑", "a🔑b", "é\u0000z", "\uD800", "x\uDC00y", "\uD83D", "\uFFFF"})
  void utf8EncodingMatchesStringGetBytes(String s) {
    byte[] expected = s.getBytes(StandardCharsets.UTF_8);
    assertEquals(expected.length, ByteUtils.utf8Length(s));
    byte[] buf = new byte[expected.length + 2];
    assertEquals(expected.length + 1, ByteUtils.writeUtf8(s, buf, 1));
    assertArrayEquals(expected, java.util.Arrays.copyOfRange(buf, 1, expected.length + 1));
  }

  private static byte[] varint(int value) {
    byte[] buf = new byte[ByteUtils.sizeOfVarint(value)];
    ByteUtils.writeVarint(value, buf, 0);
    return buf;
  }
}
