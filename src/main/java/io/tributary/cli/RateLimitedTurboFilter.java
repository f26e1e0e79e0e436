package io.tributary.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import io.tributary.util.LogRateLimiter;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Logback's side of the broker's log rate limit ({@code logback-server.xml}): at most {@link
 * LogRateLimiter#PER_WINDOW} warnings and errors per {@link LogRateLimiter#WINDOW_SECONDS} seconds from the logger
 * {@code akka.actor.RepointableActorRef}, under which Akka Streams logs a stage's failure. Artery's inbound TCP
 * stream fails so for every connection closed within a frame or within Artery's 5-byte header (a port scanner, a
 * client of another protocol that gives up): "Error in stage [akka.remote.artery.tcp.TcpFraming$$anon$1-
 * ByteStringParser]: truncated data in ByteStringParser" with a stack trace of ~28 lines each (a newcomer's 400
 * dropped connections wrote 2,800 lines). Akka logs those through a logging adapter that does not ask {@code
 * akka.logging-filter}, so {@link io.tributary.util.RateLimitedLoggingFilter} cannot limit them.
 *
 * <p>Over the limit, one warning (logger {@code io.tributary.cli.RateLimitedTurboFilter}) says so, and one gives the
 * count of the suppressed when the window ends. Calls that only ask whether a level is enabled (no message) and every
 * other logger are left alone.
 *
 * <p>Thread-safe; called by Logback on every logging thread.
 */
public final class RateLimitedTurboFilter extends TurboFilter {

  /** The logger limited. */
  public static final String STREAM_STAGE_ERRORS = "akka.actor.RepointableActorRef";

  private final LogRateLimiter limiter;

  /** The filter Logback makes from {@code logback-server.xml}. */
  public RateLimitedTurboFilter() {
    this.limiter = new LogRateLimiter(this::notice);
  }

  /** A filter whose limiter runs on {@code nanoClock} and {@code windowEnd} (see {@link LogRateLimiter}; tests). */
  RateLimitedTurboFilter(java.util.function.LongSupplier nanoClock, java.util.concurrent.Executor windowEnd) {
    this.limiter = new LogRateLimiter(nanoClock, windowEnd, this::notice);
  }

  /** Logs a notice of the limiter as a warning of this class, in the Logback context this filter belongs to. */
  private void notice(String logSource, String notice) {
    org.slf4j.Logger log = getContext() instanceof ch.qos.logback.classic.LoggerContext c
        ? c.getLogger(RateLimitedTurboFilter.class)
        : LoggerFactory.getLogger(RateLimitedTurboFilter.class);
    log.warn(notice);
  }

  @Override
  public FilterReply decide(Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (format == null || level == null || !level.isGreaterOrEqual(Level.WARN)
        || !STREAM_STAGE_ERRORS.equals(logger.getName())) {
      return FilterReply.NEUTRAL;
    }
    return limiter.admit(logger.getName(), logger.getName()) ? FilterReply.NEUTRAL : FilterReply.DENY;
  }
}
