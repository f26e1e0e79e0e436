/*
 * Replaces the class of the same binary name in akka-stream 2.6.21 (Apache License 2.0, Lightbend Inc.) with the same
 * public methods and behaviour, except that a length read from the wire can no longer move the reader backwards.
 */
package akka.stream.impl.io;

import akka.stream.scaladsl.Framing;
import akka.util.ByteString;

/**
 * Akka's {@code ByteStringParser.ByteReader} (a cursor over the bytes a {@link ByteStringParser} stage has buffered),
 * with {@link #take} and {@link #skip} safe against any {@code n}. Akka 2.6.21 checks {@code off + n <= length} in
 * {@code int}: a negative {@code n}, or one near {@code Integer.MAX_VALUE} (which overflows the sum), passed the check
 * and moved the cursor backwards. Artery's TCP framing ({@code akka.remote.artery.tcp.TcpFraming}) takes each frame's
 * length from the wire unchecked, so one connection that sent the 4-byte magic, a stream id and a frame length of
 * {@code 0x7fffffff} or {@code -1} (25 bytes in all, found by a newcomer's test) made the node's actors' thread parse
 * the same bytes again forever, or decode garbage frames and log a warning for each, without end: the broker stopped
 * answering and was downed from its cluster. Here a negative {@code n} fails the stage with a {@link
 * Framing.FramingException} (Artery closes that connection; other connections are untouched), and an {@code n} beyond
 * the buffered bytes waits for more data, as any incomplete frame does (a connection that closes first fails with
 * Artery's "truncated final frame").
 *
 * <p>A length above {@link #maxLength()} also fails the stage at once, instead of buffering up to that many bytes from
 * one connection (a newcomer's frame length of {@code 0x7fffffff} followed by a stream of data had a broker buffer 184
 * MB and die of {@code OutOfMemoryError}). The bound starts at the larger of {@code
 * akka.remote.artery.advanced.maximum-frame-size} and {@code maximum-large-frame-size} in the default config ({@code
 * ConfigFactory.load()}, 2 MiB with Tributary's {@code reference.conf}), the largest frame an Artery peer sends;
 * {@link #allowLengthsUpTo} raises it for an ActorSystem with larger frames (Tributary's broker and client do that at
 * their start, {@code io.tributary.protocol.FrameLimits.allowInboundFrames}). It is one bound per JVM, never lowered,
 * so that no ActorSystem's legitimate frames are refused.
 *
 * <p>Tributary's jar must come before akka-stream's on the classpath for this class to replace Akka's: {@code
 * bin/tributary}, the local cluster's nodes and the tests put it first; {@code io.tributary.broker.Tributary}
 * logs a warning at a broker's start when Akka's own class was loaded instead ({@code Tributary.framingGuardActive}).
 * The methods without a comment of their own do what Akka's do; a read past the buffered bytes throws Akka's {@code
 * NeedMoreData}, which the parsing stage catches to wait for more.
 *
 * <p>Not thread-safe: confined to the stream stage that created it, as Akka's.
 */
public class ByteStringParser$ByteReader {
  private final ByteString input;
  private int off;

  /** A reader at the start of {@code input}. */
  public ByteStringParser$ByteReader(ByteString input) {
    this.input = input;
    this.off = 0;
  }

  /** Marks this class as Tributary's replacement (looked up by reflection; see the class comment). */
  public static final boolean OVERFLOW_SAFE = true;

  /** Used when the default config cannot be read: Akka's own {@code maximum-large-frame-size}, 2 MiB. */
  private static final int FALLBACK_MAX_LENGTH = 2 * 1024 * 1024;

  private static volatile int maxLength = defaultMaxLength();

  private static int defaultMaxLength() {
    try {
      com.typesafe.config.Config c =
          com.typesafe.config.ConfigFactory.load(ByteStringParser$ByteReader.class.getClassLoader());
      long frame = Math.max(c.getBytes("akka.remote.artery.advanced.maximum-frame-size"),
          c.getBytes("akka.remote.artery.advanced.maximum-large-frame-size"));
      return (int) Math.min(Integer.MAX_VALUE, Math.max(FALLBACK_MAX_LENGTH, frame));
    } catch (RuntimeException e) {
      return FALLBACK_MAX_LENGTH;
    }
  }

  /**
   * The largest length, in bytes, that {@link #take} and {@link #skip} accept from any reader in this JVM; larger
   * ones fail the stage with a {@link Framing.FramingException}.
   */
  public static int maxLength() {
    return maxLength;
  }

  /**
   * Raises {@link #maxLength()} to at least {@code bytes} (never lowers it: other ActorSystems in the JVM may need
   * the larger bound). Thread-safe.
   *
   * @param bytes the largest frame an ActorSystem of this JVM may receive, in bytes
   */
  public static synchronized void allowLengthsUpTo(int bytes) {
    if (bytes > maxLength) {
      maxLength = bytes;
    }
  }

  public boolean hasRemaining() {
    return off < input.length();
  }

  public int remainingSize() {
    return input.length() - off;
  }

  public int currentOffset() {
    return off;
  }

  public ByteString remainingData() {
    return input.drop(off);
  }

  public ByteString fromStartToHere() {
    return input.take(off);
  }

  /**
   * The next {@code n} bytes.
   *
   * @throws Framing.FramingException if {@code n} is negative or above {@link #maxLength()}
   * @throws Exception Akka's {@code NeedMoreData} when fewer than {@code n} bytes are buffered
   */
  public ByteString take(int n) {
    checkLength(n);
    if (n > input.length() - off) {
      throw needMoreData();
    }
    int start = off;
    off = start + n;
    return input.slice(start, off);
  }

  public ByteString takeAll() {
    ByteString rest = remainingData();
    off = input.size();
    return rest;
  }

  public int readByte() {
    if (off < input.length()) {
      byte b = input.apply(off);
      off++;
      return b & 0xff;
    }
    throw needMoreData();
  }

  public int readShortLE() {
    return readByte() | (readByte() << 8);
  }

  public int readIntLE() {
    return readShortLE() | (readShortLE() << 16);
  }

  public long readLongLE() {
    return (readIntLE() & 0xffffffffL) | ((readIntLE() & 0xffffffffL) << 32);
  }

  public int readShortBE() {
    return (readByte() << 8) | readByte();
  }

  public int readIntBE() {
    return (readShortBE() << 16) | readShortBE();
  }

  public long readLongBE() {
    return ((readIntBE() & 0xffffffffL) << 32) | (readIntBE() & 0xffffffffL);
  }

  /**
   * Skips {@code n} bytes.
   *
   * @throws Framing.FramingException if {@code n} is negative or above {@link #maxLength()}
   * @throws Exception Akka's {@code NeedMoreData} when fewer than {@code n} bytes are buffered
   */
  public void skip(int n) {
    checkLength(n);
    if (n > input.length() - off) {
      throw needMoreData();
    }
    off += n;
  }

  public void skipZeroTerminatedString() {
    while (readByte() != 0) {
      // skip
    }
  }

  private static void checkLength(int n) {
    if (n < 0) {
      throw new Framing.FramingException("negative length " + n + " in the byte stream");
    }
    if (n > maxLength) {
      throw new Framing.FramingException("length " + n + " in the byte stream is above the largest frame, "
          + maxLength + " bytes");
    }
  }

  /** Akka's shared {@code NeedMoreData} signal, which the parsing stage catches to wait for more bytes. */
  private static RuntimeException needMoreData() {
    return sneaky(ByteStringParser$.MODULE$.NeedMoreData());
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
    throw (T) t;
  }
}
