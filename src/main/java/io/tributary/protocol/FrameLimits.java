package io.tributary.protocol;

import com.typesafe.config.Config;

/**
 * How much of an Artery frame a record batch or a produce request may fill: the frame
 * ({@code akka.remote.artery.advanced.maximum-frame-size}) less {@link #ENVELOPE_ALLOWANCE} for Artery's envelope and
 * the message's other fields. One rule for both sides: the broker caps {@code message.max.bytes} with it, the producer
 * caps {@code max.request.size} with it (a larger message is dropped by Artery as oversized and never answered).
 */
public final class FrameLimits {

  /** Bytes of a frame kept for Artery's envelope and a message's fields other than its batches: 64 KiB. */
  public static final int ENVELOPE_ALLOWANCE = 64 * 1024;

  private FrameLimits() {}

  /**
   * The largest batch or request, in bytes, that fits a frame of this ActorSystem's config (at least 1).
   *
   * @param config an ActorSystem's config (root)
   * @throws com.typesafe.config.ConfigException if the frame size is missing or not a size in bytes
   */
  public static int maxPayloadBytes(Config config) {
    long frame = config.getBytes("akka.remote.artery.advanced.maximum-frame-size");
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, frame - ENVELOPE_ALLOWANCE));
  }

  /**
   * Makes sure the JVM's bound on inbound frame lengths ({@code ByteStringParser$ByteReader.maxLength}, Tributary's
   * replacement of Akka's reader, which refuses a frame length above it and closes that connection) admits every
   * frame an ActorSystem of this config may receive: the larger of {@code maximum-frame-size} and {@code
   * maximum-large-frame-size}. Called at a broker's and a client's start. Does nothing when Akka's own reader was
   * loaded instead (see {@code Tributary.framingGuardActive}).
   *
   * @param config an ActorSystem's config (root)
   * @throws com.typesafe.config.ConfigException if a frame size is missing or not a size in bytes
   */
  public static void allowInboundFrames(Config config) {
    long frame = Math.max(config.getBytes("akka.remote.artery.advanced.maximum-frame-size"),
        config.getBytes("akka.remote.artery.advanced.maximum-large-frame-size"));
    try {
      akka.stream.impl.io.ByteStringParser.ByteReader.allowLengthsUpTo((int) Math.min(Integer.MAX_VALUE, frame));
    } catch (LinkageError akkasOwnReader) {
      // Akka's class came first on the classpath: it has no bound to raise (the broker warns at start)
    }
  }
}
