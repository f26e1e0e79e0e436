package akka.remote.artery.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.remote.artery.EnvelopeBuffer;
import akka.remote.artery.NoOpRemotingFlightRecorder$;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.scaladsl.Framing;
import akka.util.ByteString;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tributary's {@link TcpFraming} (replacing Akka's): frames split anywhere come out whole, as Akka's; a connection
 * with a bad magic, an unknown stream id, a frame that cannot be an Artery envelope, or a truncated last frame fails
 * the stage (Artery then closes that connection).
 */
class TcpFramingTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void theReplacementIsTheClassLoaded() throws Exception {
    assertTrue(Class.forName("akka.remote.artery.tcp.TcpFraming").getField("CHECKS_ENVELOPES").getBoolean(null));
  }

  /**
   * A frame of {@code size} bytes that passes as an envelope: version 0, then bytes that tell frames apart (the
   * serializer id, bytes 12 to 15, is not 0).
   */
  private static byte[] envelope(int size, int seed) {
    byte[] b = new byte[size];
    for (int i = 1; i < size; i++) {
      b[i] = (byte) (seed * 31 + i);
    }
    b[12] = 5;
    return b;
  }

  private static byte[] connection(int streamId, byte[]... frames) {
    int total = 5;
    for (byte[] f : frames) {
      total += 4 + f.length;
    }
    ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
    b.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) streamId);
    for (byte[] f : frames) {
      b.putInt(f.length).put(f);
    }
    return b.array();
  }

  private static List<EnvelopeBuffer> parse(byte[] bytes, int chunk) throws Exception {
    List<ByteString> chunks = new ArrayList<>();
    for (int i = 0; i < bytes.length; i += chunk) {
      chunks.add(ByteString.fromArray(bytes, i, Math.min(chunk, bytes.length - i)));
    }
    return Source.from(chunks)
        .via(new TcpFraming(NoOpRemotingFlightRecorder$.MODULE$))
        .runWith(Sink.seq(), KIT.system())
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  private static Throwable failure(byte[] bytes) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> parse(bytes, 3));
    return e.getCause();
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 7, 33, 4096, 1 << 20})
  void framesSplitAnywhereComeOutWhole(int chunk) throws Exception {
    byte[][] frames = {envelope(28, 1), envelope(100, 2), envelope(5000, 3)};
    List<EnvelopeBuffer> out = parse(connection(2, frames), chunk);
    assertEquals(frames.length, out.size());
    for (int i = 0; i < frames.length; i++) {
      ByteBuffer buf = out.get(i).byteBuffer();
      assertEquals(ByteOrder.LITTLE_ENDIAN, buf.order());
      byte[] got = new byte[buf.remaining()];
      buf.duplicate().get(got);
      assertArrayEquals(frames[i], got, "frame " + i);
      assertEquals(2, out.get(i).streamId());
    }
  }

  @Test
  void aConnectionWithoutTheMagicFails() {
    byte[] bytes = connection(1, envelope(28, 1));
    bytes[0] = 'G';
    Throwable t = failure(bytes);
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("didn't start with expected magic bytes, got [47 4b 4b 41"), t.getMessage());
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 4, 127, 255})
  void anUnknownStreamIdFails(int streamId) {
    Throwable t = failure(connection(streamId, envelope(28, 1))); // the stream id is one byte, read unsigned
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().startsWith("Unknown Artery stream id " + streamId + " "), t.getMessage());
  }

  @Test
  void aFrameShorterThanAnEnvelopeHeaderFails() {
    Throwable t = failure(connection(2, envelope(28, 1), envelope(27, 2)));
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("a frame of 27 bytes is shorter than an Artery envelope's header (28)"),
        t.getMessage());
  }

  @ParameterizedTest
  @ValueSource(bytes = {1, 127, -1, -128})
  void aFrameOfAnotherProtocolVersionFails(byte version) {
    byte[] frame = envelope(64, 1);
    frame[0] = version;
    Throwable t = failure(connection(3, frame));
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("Artery protocol version " + version + " (this node speaks 0 to 0)"),
        t.getMessage());
  }

  /** Akka's null serializer decodes anything to null, which no node sends: all-zero frames are garbage. */
  @Test
  void aFrameOfTheNullSerializerFails() {
    Throwable t = failure(connection(2, envelope(28, 1), new byte[40]));
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("a frame of Akka's null serializer (id 0)"), t.getMessage());
  }

  @Test
  void aTruncatedLastFrameFails() {
    byte[] whole = connection(2, envelope(28, 1), envelope(100, 2));
    byte[] cut = java.util.Arrays.copyOf(whole, whole.length - 10);
    Throwable t = failure(cut);
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("truncated final frame"), t.getMessage());
  }
}
