package akka.remote.artery.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.japi.Pair;
import akka.remote.artery.EnvelopeBuffer;
import akka.remote.artery.NoOpRemotingFlightRecorder$;
import akka.stream.OverflowStrategy;
import akka.stream.QueueOfferResult;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Source;
import akka.stream.javadsl.SourceQueueWithComplete;
import akka.stream.scaladsl.Framing;
import akka.util.ByteString;
import io.tributary.net.PartialFrameBudget;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link TcpFraming} holds incomplete frames within {@link PartialFrameBudget}: the bytes a connection has buffered of
 * a frame count until it completes or the connection ends, and a connection whose buffered part would take the
 * JVM's total past the limit is failed (closed), while the others go on. The limit is lowered to 10,000 bytes here
 * and restored after each test.
 */
class TcpFramingBudgetTest {
  private static final ActorTestKit KIT = ActorTestKit.create();
  private static final int LIMIT = 10_000;
  private long limitBefore;

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @BeforeEach
  void lowerTheLimit() {
    limitBefore = PartialFrameBudget.limit();
    await("no bytes held by earlier streams", () -> PartialFrameBudget.used() == 0);
    PartialFrameBudget.setLimit(LIMIT);
  }

  @AfterEach
  void restoreTheLimit() {
    PartialFrameBudget.setLimit(limitBefore);
    PartialFrameBudget.setTimeoutMs(PartialFrameBudget.DEFAULT_TIMEOUT_MS);
  }

  /** A connection's stream: its bytes are offered by the test, its frames collected. */
  private record Conn(SourceQueueWithComplete<ByteString> in, CompletionStage<List<EnvelopeBuffer>> out) {
    void send(byte[] bytes, int from, int to) {
      QueueOfferResult r = in.offer(ByteString.fromArray(bytes, from, to - from)).toCompletableFuture().join();
      assertEquals(QueueOfferResult.enqueued(), r);
    }
  }

  private static Conn open() {
    Pair<SourceQueueWithComplete<ByteString>, CompletionStage<List<EnvelopeBuffer>>> p =
        Source.<ByteString>queue(16, OverflowStrategy.backpressure())
            .via(new TcpFraming(NoOpRemotingFlightRecorder$.MODULE$))
            .toMat(Sink.seq(), akka.stream.javadsl.Keep.both())
            .run(KIT.system());
    return new Conn(p.first(), p.second());
  }

  /** The magic, stream id 2 and one frame of {@code size} bytes that passes as an envelope. */
  private static byte[] connectionWithFrame(int size, int seed) {
    ByteBuffer b = ByteBuffer.allocate(5 + 4 + size).order(ByteOrder.LITTLE_ENDIAN);
    b.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) 2).putInt(size);
    byte[] frame = new byte[size];
    Arrays.fill(frame, (byte) seed);
    frame[0] = 0; // protocol version 0
    frame[12] = 5; // a serializer id other than 0
    b.put(frame);
    return b.array();
  }

  private static void await(String what, BooleanSupplier condition) {
    io.tributary.testing.Await.await(what, condition, () -> "held: " + PartialFrameBudget.used());
  }

  private static Throwable failureOf(Conn c) {
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> c.out().toCompletableFuture().get(30, TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void aConnectionPastTheBudgetIsClosedAndTheOthersGoOn() throws Exception {
    byte[] a = connectionWithFrame(8000, 1);
    Conn first = open();
    first.send(a, 0, 5 + 4 + 6000); // holds its 6,004 buffered bytes (the length included) of an 8,000-byte frame
    await("the first connection's 6,004 bytes held", () -> PartialFrameBudget.used() == 6004);

    byte[] b = connectionWithFrame(8000, 2);
    long refusedBefore = PartialFrameBudget.refusedConnections();
    Conn second = open();
    second.send(b, 0, 5 + 4 + 3000); // 3,004 more fit: 9,008 in all
    await("both connections' bytes held", () -> PartialFrameBudget.used() == 9008);
    second.send(b, 5 + 4 + 3000, 5 + 4 + 5000); // 5,004 would make 11,008 > 10,000: closed
    Throwable t = failureOf(second);
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().contains("A frame of 8000 bytes on stream 2 is incomplete after 5004 bytes")
        && t.getMessage().contains(PartialFrameBudget.CONFIG_KEY + " (10000 bytes)"), t.getMessage());
    assertEquals(refusedBefore + 1, PartialFrameBudget.refusedConnections());
    await("the closed connection's bytes returned", () -> PartialFrameBudget.used() == 6004);

    // the first connection completes its frame and gets it whole; the budget is empty again
    first.send(a, 5 + 4 + 6000, a.length);
    first.in().complete();
    List<EnvelopeBuffer> frames = first.out().toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertEquals(1, frames.size());
    assertEquals(8000, frames.get(0).byteBuffer().remaining());
    assertEquals(1, frames.get(0).byteBuffer().get(100));
    assertEquals(0, PartialFrameBudget.used());

    // and a third connection may now hold what the second could not
    Conn third = open();
    third.send(b, 0, 5 + 4 + 5000);
    await("the third connection's bytes held", () -> PartialFrameBudget.used() == 5004);
    third.send(b, 5 + 4 + 5000, b.length);
    third.in().complete();
    assertEquals(1, third.out().toCompletableFuture().get(30, TimeUnit.SECONDS).size());
    assertEquals(0, PartialFrameBudget.used());
  }

  @Test
  void aConnectionThatEndsInTheMiddleOfAFrameReturnsItsBytes() {
    byte[] a = connectionWithFrame(8000, 1);
    Conn c = open();
    c.send(a, 0, 5 + 4 + 7000);
    await("7,004 bytes held", () -> PartialFrameBudget.used() == 7004);
    c.in().complete();
    Throwable t = failureOf(c);
    assertTrue(t.getMessage().contains("truncated final frame"), t.getMessage());
    await("the bytes returned", () -> PartialFrameBudget.used() == 0);
  }

  @Test
  void framesThatArriveWholeNeverCountEvenAboveTheLimit() throws Exception {
    byte[] big = connectionWithFrame(3 * LIMIT, 3);
    Conn c = open();
    c.send(big, 0, big.length);
    c.in().complete();
    List<EnvelopeBuffer> frames = c.out().toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertEquals(1, frames.size());
    assertEquals(3 * LIMIT, frames.get(0).byteBuffer().remaining());
    assertEquals(0, PartialFrameBudget.used());
  }

  @Test
  void aFrameArrivingInSmallPiecesCountsWhatIsBufferedAsItGrows() throws Exception {
    byte[] a = connectionWithFrame(9000, 4);
    Conn c = open();
    c.send(a, 0, 5);
    for (int sent = 5, step = 1000; sent < a.length; sent += step) {
      int to = Math.min(a.length, sent + step);
      c.send(a, sent, to);
      if (to < a.length) {
        int held = to - 5;
        await(held + " bytes held", () -> PartialFrameBudget.used() == held);
      }
    }
    c.in().complete();
    assertEquals(1, c.out().toCompletableFuture().get(30, TimeUnit.SECONDS).size());
    assertEquals(0, PartialFrameBudget.used());
  }

  /**
   * A frame that stays incomplete for {@code incomplete.frame.timeout.ms} (200 ms here) closes its connection and
   * returns its bytes, whatever the budget; a connection that is idle between frames, for longer than that, stays open
   * and goes on.
   */
  @Test
  void aFrameIncompleteForTooLongClosesItsConnectionButAnIdleOneStaysOpen() throws Exception {
    PartialFrameBudget.setTimeoutMs(200);
    byte[] frame = connectionWithFrame(100, 6);
    Conn idle = open();
    idle.send(frame, 0, 5 + 4 + 50); // one frame in two pieces, then nothing
    await("the first piece held", () -> PartialFrameBudget.used() == 54);
    idle.send(frame, 5 + 4 + 50, frame.length);
    await("the frame complete", () -> PartialFrameBudget.used() == 0);
    long timedOutBefore = PartialFrameBudget.timedOutConnections();

    byte[] a = connectionWithFrame(8000, 5);
    Conn stalled = open();
    stalled.send(a, 0, 5 + 4 + 3000); // then the peer stops sending
    Throwable t = failureOf(stalled);
    assertInstanceOf(Framing.FramingException.class, t);
    assertTrue(t.getMessage().startsWith("A frame stayed incomplete for ")
        && t.getMessage().contains("ms with 3004 bytes buffered (" + PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = 200)"),
        t.getMessage());
    assertEquals(timedOutBefore + 1, PartialFrameBudget.timedOutConnections());
    await("the stalled connection's bytes returned", () -> PartialFrameBudget.used() == 0);

    // the idle connection, open since before the stalled one, is idle for longer than the timeout: it goes on
    assertTrue(!idle.out().toCompletableFuture().isDone(), "an idle connection between frames stays open");
    byte[] second = connectionWithFrame(100, 7);
    idle.send(second, 5, second.length); // the next frame, without the connection header
    idle.in().complete();
    List<EnvelopeBuffer> frames = idle.out().toCompletableFuture().get(30, TimeUnit.SECONDS);
    assertEquals(2, frames.size());
    assertEquals(7, frames.get(1).byteBuffer().get(50));
  }

  /** The 5-byte connection header (sent or not) and a frame's 4-byte length count as incomplete too. */
  @Test
  void anIncompleteHeaderOrLengthAlsoTimesOut() {
    PartialFrameBudget.setTimeoutMs(200);
    Conn header = open();
    header.send("AK".getBytes(StandardCharsets.US_ASCII), 0, 2);
    String m = failureOf(header).getMessage();
    assertTrue(m.startsWith("A connection header stayed incomplete for ") && m.contains("ms with 0 bytes buffered"), m);
    Conn nothing = open(); // a peer that connects and sends nothing
    assertTrue(failureOf(nothing).getMessage().startsWith("A connection header stayed incomplete for "));

    byte[] a = connectionWithFrame(100, 8);
    Conn length = open();
    length.send(a, 0, 5 + 2); // the header and half of the frame's length
    assertTrue(failureOf(length).getMessage().startsWith("A frame stayed incomplete for "));
  }

  /** With the check off (0), an incomplete frame is held until the connection ends, as Akka's. */
  @Test
  void aTimeoutOfZeroLeavesIncompleteFramesAlone() throws Exception {
    PartialFrameBudget.setTimeoutMs(0);
    byte[] a = connectionWithFrame(8000, 9);
    Conn off = open();
    off.send(a, 0, 5 + 4 + 3000);
    await("3,004 bytes held", () -> PartialFrameBudget.used() == 3004);
    PartialFrameBudget.setTimeoutMs(200); // a stage started with it on: the next one times out, this one never checks
    byte[] b = connectionWithFrame(8000, 10);
    Conn on = open();
    on.send(b, 0, 5 + 4 + 1000);
    assertTrue(failureOf(on).getMessage().startsWith("A frame stayed incomplete for "));
    assertTrue(!off.out().toCompletableFuture().isDone(), "the stage started with the check off stays open");
    off.send(a, 5 + 4 + 3000, a.length);
    off.in().complete();
    assertEquals(1, off.out().toCompletableFuture().get(30, TimeUnit.SECONDS).size());
    assertEquals(0, PartialFrameBudget.used());
  }

  /** The timeout's key takes a number of ms, as Kafka's {@code *.ms} keys, or a HOCON duration; 0 turns it off. */
  @Test
  void theTimeoutIsReadAsMillisecondsOrADuration() {
    PartialFrameBudget.configure(com.typesafe.config.ConfigFactory.parseString(
        PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = 2500"));
    assertEquals(2500, PartialFrameBudget.timeoutMs());
    PartialFrameBudget.configure(com.typesafe.config.ConfigFactory.parseString(
        PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = 45s"));
    assertEquals(45_000, PartialFrameBudget.timeoutMs());
    PartialFrameBudget.configure(com.typesafe.config.ConfigFactory.parseString(
        PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = 0"));
    assertEquals(0, PartialFrameBudget.timeoutMs());
    assertThrows(com.typesafe.config.ConfigException.class, () -> PartialFrameBudget.configure(
        com.typesafe.config.ConfigFactory.parseString(PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = soon")));
  }
}
