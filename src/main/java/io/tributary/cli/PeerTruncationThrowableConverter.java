package io.tributary.cli;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * The stack-trace part of the broker's log lines ({@code %ex} of {@code logback-server.xml}, conversion word {@code
 * %peerEx}): Logback's usual stack trace, except for a connection that a peer closed within a frame. Akka Streams
 * logs that as "Error in stage [...TcpFraming...]: truncated data in ByteStringParser" under {@link
 * RateLimitedTurboFilter#STREAM_STAGE_ERRORS} with a 26-line stack trace of Akka's internals that says nothing the
 * message does not (a port scanner or a client of another protocol writes one per connection); such lines are written
 * without their trace, as are that logger's {@code Framing.FramingException}s (a connection closed by Artery's
 * framing for bytes that are not Artery's: the message names the reason). The count of those lines is limited by
 * {@link RateLimitedTurboFilter}.
 *
 * <p>Thread-safe, as Logback's converters are: called by the appender holding its lock.
 */
public final class PeerTruncationThrowableConverter extends ThrowableProxyConverter {

  /** The message of the exception Akka's {@code ByteStringParser} throws on a truncated connection. */
  static final String TRUNCATED = "truncated data in ByteStringParser";

  /**
   * The exception with which Artery's framing closes a connection whose bytes are not Artery's (no magic, an unknown
   * stream, a frame length out of range, a frame that cannot be an envelope); its message says which.
   */
  static final String FRAMING = "akka.stream.scaladsl.Framing$FramingException";

  @Override
  public String convert(ILoggingEvent event) {
    if (event.getThrowableProxy() != null
        && RateLimitedTurboFilter.STREAM_STAGE_ERRORS.equals(event.getLoggerName())
        && (TRUNCATED.equals(event.getThrowableProxy().getMessage())
            || FRAMING.equals(event.getThrowableProxy().getClassName()))) {
      return "";
    }
    return super.convert(event);
  }
}
