package akka.stream.impl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.stream.scaladsl.Framing;
import akka.util.ByteString;
import org.junit.jupiter.api.Test;

/** Tributary's replacement of Akka's {@code ByteStringParser.ByteReader}: no length moves the reader backwards. */
class ByteReaderTest {

  private static ByteStringParser.ByteReader reader(int... bytes) {
    byte[] b = new byte[bytes.length];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) bytes[i];
    }
    return new ByteStringParser.ByteReader(ByteString.fromArray(b));
  }

  private static void needsMoreData(Runnable r) {
    Throwable t = assertThrows(Throwable.class, r::run);
    assertSame(ByteStringParser$.MODULE$.NeedMoreData(), t, "Akka's signal to wait for more bytes");
  }

  @Test
  void lengthsBeyondTheBufferWaitForMoreDataWithoutMoving() {
    ByteStringParser.ByteReader r = reader(1, 2, 3, 4, 5);
    r.skip(2);
    int max = ByteStringParser.ByteReader.maxLength();
    needsMoreData(() -> r.take(max));
    needsMoreData(() -> r.skip(max));
    needsMoreData(() -> r.take(4));
    assertEquals(2, r.currentOffset());
    assertEquals(ByteString.fromArray(new byte[] {3, 4, 5}), r.take(3));
    assertEquals(0, r.remainingSize());
  }

  @Test
  void lengthsAboveTheLargestFrameFailTheStageInsteadOfBuffering() {
    ByteStringParser.ByteReader r = reader(1, 2, 3);
    int max = ByteStringParser.ByteReader.maxLength();
    assertTrue(max >= 2 * 1024 * 1024, "at least Tributary's maximum-frame-size: " + max);
    assertThrows(Framing.FramingException.class, () -> r.take(Integer.MAX_VALUE)); // 0 + MAX_VALUE: Akka waited
    assertThrows(Framing.FramingException.class, () -> r.skip(max + 1));
    assertEquals(0, r.currentOffset());
    ByteStringParser.ByteReader.allowLengthsUpTo(max - 1); // never lowered
    assertEquals(max, ByteStringParser.ByteReader.maxLength());
    ByteStringParser.ByteReader.allowLengthsUpTo(max + 1);
    needsMoreData(() -> r.take(max + 1));
  }

  @Test
  void negativeLengthsFailTheStage() {
    ByteStringParser.ByteReader r = reader(1, 2, 3);
    r.skip(1);
    assertThrows(Framing.FramingException.class, () -> r.take(-1));
    assertThrows(Framing.FramingException.class, () -> r.skip(Integer.MIN_VALUE));
    assertEquals(1, r.currentOffset());
  }

  @Test
  void readsAsAkkasReader() {
    ByteStringParser.ByteReader r = reader(0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 'a', 0, 0xff);
    assertEquals(0x04030201, r.readIntLE());
    assertEquals(0x0506, r.readShortBE());
    assertEquals(0x0807, r.readShortLE());
    r.skipZeroTerminatedString();
    assertEquals(0xff, r.readByte());
    assertEquals(11, r.fromStartToHere().size());
    needsMoreData(r::readByte);
    assertEquals(ByteString.emptyByteString(), r.takeAll());
    ByteStringParser.ByteReader longs = reader(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2);
    assertEquals(1L, longs.readLongLE());
    assertEquals(2L, longs.readLongBE());
  }
}
