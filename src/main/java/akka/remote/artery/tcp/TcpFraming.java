/*
 * Replaces the class of the same binary name in akka-remote 2.6.21 (Apache License 2.0, Lightbend Inc.) with the same
 * public methods and behaviour, except that a frame that cannot be an Artery envelope, or an incomplete frame past
 * the JVM's budget of buffered bytes or its time limit, closes its connection.
 */
package akka.remote.artery.tcp;

import akka.remote.artery.ArteryTransport;
import akka.remote.artery.EnvelopeBuffer;
import akka.remote.artery.RemotingFlightRecorder;
import akka.actor.Cancellable;
import akka.stream.Attributes;
import akka.stream.impl.io.ByteStringParser;
import akka.stream.scaladsl.Framing;
import akka.stream.stage.AsyncCallback;
import akka.stream.stage.GraphStageLogic;
import akka.util.ByteString;
import io.tributary.net.PartialFrameBudget;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import scala.Option;
import scala.concurrent.duration.FiniteDuration;

/**
 * Artery's TCP framing stage, as Akka 2.6.21's: a connection starts with the 4-byte magic {@code AKKA} and a stream
 * id byte, then carries frames of a 4-byte little-endian length and that many bytes, each handed on as an {@link
 * EnvelopeBuffer} to Artery's decoder. One difference: a frame that cannot be an Artery envelope, because it is
 * shorter than the envelope's fixed header ({@value #ENVELOPE_HEADER_BYTES} bytes), its first byte (the protocol
 * version) is not one this node speaks (0 to {@code ArteryTransport.HighestVersion}), or its serializer is Akka's
 * null serializer (see {@link #NULL_SERIALIZER_ID}), fails the stage with a {@link
 * Framing.FramingException}, which closes that connection. Akka handed such frames on, and its decoder dropped each
 * with a warning and read the next: a newcomer's one connection sending a million garbage frames kept a broker's
 * actors busy for seconds, delaying its cluster heartbeats by 2.9-4.5 s (near the 4 s that gets a node marked
 * unreachable). Now such a connection is closed at its first bad frame (a random frame passes this check with a
 * chance of 1/256, and then fails Artery's decoder as before). Every frame an Artery 2.6 peer sends passes.
 *
 * <p>A stream id other than Artery's three (1 control, 2 ordinary, 3 large messages) closes the connection as soon as
 * it is read, with a message that says so (Akka's closed it at its first frame, in the stage that routes frames to
 * the three streams, with "Unexpected streamId").
 *
 * <p>Incomplete frames are held within {@link PartialFrameBudget}, one budget of the JVM's heap for all incoming
 * connections (Akka buffered each connection's frame until complete, up to {@code maximum-frame-size}, with no bound
 * on their sum): a connection whose buffered part of a frame would take the total past it fails the stage with a
 * {@link Framing.FramingException}, which closes that connection; a frame's bytes return to the budget when it
 * completes or the connection closes. A frame that stays incomplete longer than {@link PartialFrameBudget#timeoutMs}
 * (from when its first bytes were buffered) fails the stage the same way.
 *
 * <p>Errors are Akka's otherwise: a connection that does not start with the magic fails with {@link
 * Framing.FramingException}, one closed within a frame with "truncated final frame". Tributary's jar must come before
 * akka-remote's on the classpath for this class to replace Akka's ({@code io.tributary.broker.Tributary} warns at a
 * broker's start when it did not), as for {@code akka.stream.impl.io.ByteStringParser$ByteReader}.
 *
 * <p>Not thread-safe: each {@link #createLogic} is confined to its stream stage, as Akka's.
 */
public class TcpFraming extends ByteStringParser<EnvelopeBuffer> {

  /** Marks this class as Tributary's replacement (looked up by reflection; see the class comment). */
  public static final boolean CHECKS_ENVELOPES = true;

  /**
   * The fixed part of an Artery envelope's header, in bytes: version, flags, two compression table versions, uid (8),
   * serializer id (4), sender and recipient (4 each), class manifest (4); Akka 2.6.21's {@code
   * EnvelopeBuffer.MetadataContainerAndLiteralSectionOffset}.
   */
  public static final int ENVELOPE_HEADER_BYTES = 28;

  /** Where an envelope's serializer id is (4 bytes, little-endian): Akka 2.6.21's {@code SerializerOffset}. */
  static final int SERIALIZER_OFFSET = 12;

  /**
   * The id of Akka's {@code NullSerializer}, which decodes any bytes to {@code null}. Akka never sends a null message
   * ({@code tell(null)} throws), so a frame with it is garbage; Akka delivered such frames, and each null message
   * crashed the node's dead-letter listener with a stack trace (a newcomer's 100,000 all-zero 40-byte frames wrote
   * 454,371 log lines and delayed the node's cluster heartbeats by 3.5 s).
   */
  static final int NULL_SERIALIZER_ID = 0;

  /** Akka's field name (Scala's name for the constructor's parameter). */
  public final RemotingFlightRecorder akka$remote$artery$tcp$TcpFraming$$flightRecorder;

  /** As Akka's constructor. */
  public TcpFraming(RemotingFlightRecorder flightRecorder) {
    this.akka$remote$artery$tcp$TcpFraming$$flightRecorder = flightRecorder;
  }

  /** Akka's default for the constructor's parameter (Scala's static forwarder to the companion object). */
  public static RemotingFlightRecorder $lessinit$greater$default$1() {
    return TcpFraming$.MODULE$.$lessinit$greater$default$1();
  }

  /** As Akka's: the frame header, 4 bytes little-endian. */
  public static ByteString encodeFrameHeader(int frameLength) {
    return TcpFraming$.MODULE$.encodeFrameHeader(frameLength);
  }

  /** As Akka's: the magic and the stream id, sent first on a connection. */
  public static ByteString encodeConnectionHeader(int streamId) {
    return TcpFraming$.MODULE$.encodeConnectionHeader(streamId);
  }

  /** As Akka's: {@code AKKA}. */
  public static ByteString Magic() {
    return TcpFraming$.MODULE$.Magic();
  }

  /** As Akka's. */
  public static int Undefined() {
    return TcpFraming$.MODULE$.Undefined();
  }

  /**
   * Why {@code frame} cannot be an Artery envelope (see the class comment), or null when it may be one.
   *
   * @param frame the frame's bytes, little-endian, from index 0 to its limit
   */
  static String notAnEnvelope(ByteBuffer frame) {
    if (frame.limit() < ENVELOPE_HEADER_BYTES) {
      return "a frame of " + frame.limit() + " bytes is shorter than an Artery envelope's header ("
          + ENVELOPE_HEADER_BYTES + ")";
    }
    byte version = frame.get(0);
    if (version < 0 || version > ArteryTransport.HighestVersion()) {
      return "a frame of Artery protocol version " + version + " (this node speaks 0 to "
          + ArteryTransport.HighestVersion() + ")";
    }
    if (frame.getInt(SERIALIZER_OFFSET) == NULL_SERIALIZER_ID) {
      return "a frame of Akka's null serializer (id 0): no Akka node sends a null message";
    }
    return null;
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new Logic();
  }

  /** The parsing steps, as Akka's: magic, stream id, then frames. */
  private final class Logic extends ParsingLogic {
    private final ParseStep<EnvelopeBuffer> readStreamId = new ParseStep<>() {
      @Override
      public ParseResult<EnvelopeBuffer> parse(ByteReader reader) {
        int streamId = reader.readByte();
        if (streamId < ArteryTransport.ControlStreamId() || streamId > ArteryTransport.LargeStreamId()) {
          throw new Framing.FramingException("Unknown Artery stream id " + streamId + " (known: "
              + ArteryTransport.ControlStreamId() + " to " + ArteryTransport.LargeStreamId()
              + "); the connection is closed");
        }
        incompleteSinceNanos = 0; // the connection header is complete
        headerRead = true;
        return new ParseResult<>(Option.empty(), new ReadFrame(streamId), true);
      }
    };

    private final ParseStep<EnvelopeBuffer> readMagic = new ParseStep<>() {
      @Override
      public ParseResult<EnvelopeBuffer> parse(ByteReader reader) {
        ByteString magic = reader.take(Magic().length());
        if (magic.equals(Magic())) {
          return new ParseResult<>(Option.empty(), readStreamId, true);
        }
        ByteString seen = magic.concat(reader.remainingData()).take(10);
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < seen.length(); i++) {
          hex.append(i == 0 ? "" : " ").append(String.format("%02x", seen.apply(i)));
        }
        throw new Framing.FramingException("Stream didn't start with expected magic bytes, got [" + hex
            + "] Connection is rejected. Probably invalid accidental access.");
      }
    };

    /** This connection's share of {@link PartialFrameBudget}: the bytes of its incomplete frame. */
    private final PartialFrameBudget.Holder budget = PartialFrameBudget.holder();

    /**
     * {@link System#nanoTime} (never 0) when the current frame was first found incomplete, or when the connection
     * started while its 5-byte header (magic and stream id, which an Artery peer sends as soon as it connects) is not
     * complete; 0 while nothing is incomplete.
     */
    private long incompleteSinceNanos = System.nanoTime() | 1;

    /** Whether the 5-byte connection header (magic and stream id) has been read. */
    private boolean headerRead;

    /** The periodic check of {@link PartialFrameBudget#timeoutMs} (every tenth of it), or null when off. */
    private Cancellable timeoutCheck;

    Logic() {
      startWith(readMagic);
    }

    @Override
    public void preStart() {
      long timeout = PartialFrameBudget.timeoutMs();
      if (timeout > 0) {
        AsyncCallback<Long> check = createAsyncCallback(this::checkIncompleteFrame);
        FiniteDuration every = FiniteDuration.create(Math.max(10, timeout / 10), TimeUnit.MILLISECONDS);
        timeoutCheck = materializer().scheduleWithFixedDelay(every, every, () -> check.invoke(0L));
      }
    }

    /** Fails the stage when its current frame has been incomplete longer than {@link PartialFrameBudget#timeoutMs}. */
    private void checkIncompleteFrame(Long ignored) {
      long timeout = PartialFrameBudget.timeoutMs();
      if (incompleteSinceNanos == 0 || timeout <= 0) {
        return;
      }
      long incompleteMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - incompleteSinceNanos);
      if (incompleteMs >= timeout) {
        long held = budget.held();
        String what = headerRead ? "frame" : "connection header";
        PartialFrameBudget.countTimedOut(what, held, incompleteMs);
        failStage(new Framing.FramingException("A " + what + " stayed incomplete for " + incompleteMs + " ms with "
            + held + " bytes buffered (" + PartialFrameBudget.TIMEOUT_CONFIG_KEY + " = " + timeout
            + "); the connection is closed"));
      }
    }

    @Override
    public void postStop() {
      if (timeoutCheck != null) {
        timeoutCheck.cancel();
      }
      budget.releaseAll();
    }

    /** One frame after another of the stream {@code streamId}. */
    private final class ReadFrame implements ParseStep<EnvelopeBuffer> {
      private final int streamId;

      ReadFrame(int streamId) {
        this.streamId = streamId;
      }

      @Override
      public void onTruncation() {
        failStage(new Framing.FramingException("Stream finished but there was a truncated final frame in the buffer"));
      }

      @Override
      public ParseResult<EnvelopeBuffer> parse(ByteReader reader) {
        int buffered = reader.remainingSize();
        if (buffered < 4 && incompleteSinceNanos == 0) {
          incompleteSinceNanos = System.nanoTime() | 1; // part of a frame's length: readIntLE needs more data
        }
        int frameLength = reader.readIntLE();
        if (frameLength > buffered - 4 && frameLength >= 0 && frameLength <= ByteReader.maxLength()
            && !budget.hold(buffered)) {
          throw new Framing.FramingException("A frame of " + frameLength + " bytes on stream " + streamId
              + " is incomplete after " + buffered + " bytes, and the incomplete frames of this JVM's connections "
              + "already hold what " + PartialFrameBudget.CONFIG_KEY + " (" + PartialFrameBudget.limit()
              + " bytes) allows; the connection is closed");
        }
        if (frameLength > buffered - 4 && incompleteSinceNanos == 0) {
          incompleteSinceNanos = System.nanoTime() | 1; // never 0
        }
        ByteString frame = reader.take(frameLength); // Akka's NeedMoreData when incomplete: held until more arrives
        budget.releaseAll();
        incompleteSinceNanos = 0;
        ByteBuffer buffer = ByteBuffer.wrap(frame.toArray());
        buffer.order(ByteOrder.LITTLE_ENDIAN);
        String bad = notAnEnvelope(buffer);
        if (bad != null) {
          throw new Framing.FramingException("Not an Artery envelope on stream " + streamId + ": " + bad
              + "; the connection is closed");
        }
        akka$remote$artery$tcp$TcpFraming$$flightRecorder.tcpInboundReceived(buffer.limit());
        EnvelopeBuffer envelope = new EnvelopeBuffer(buffer);
        envelope.setStreamId(streamId);
        return new ParseResult<>(Option.apply(envelope), this, true);
      }
    }
  }
}
