package io.tributary.util;

import akka.actor.ActorSystem;
import akka.event.EventStream;
import akka.event.Logging;
import akka.event.slf4j.Slf4jLoggingFilter;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * Akka's {@link Slf4jLoggingFilter} (set as {@code akka.logging-filter} in {@code tributary-broker.conf}) that lets at
 * most {@link #PER_WINDOW} warnings and errors per {@link #WINDOW_SECONDS} seconds through from each class of Akka's
 * remoting ({@code akka.remote.artery.*}, {@link #limited}; the limiter is {@link LogRateLimiter}). Those log one
 * line per frame or connection that a client gets wrong, so that a client that sends garbage can fill a broker's disk
 * with log:
 * <ul>
 *   <li>short garbage frames of a valid length: {@code akka.remote.artery.Decoder} "Dropping message due to: ..." and
 *       {@code akka.remote.artery.Deserializer} "Failed to deserialize message ..." per frame (a newcomer's million
 *       frames wrote 199 MB of log, and the broker grew from 226 to 650 MB of RSS while Akka's log queue backed up);
 *   <li>the same on Artery's large-message stream: {@code akka.remote.artery.ArteryTransport} "Dropping large
 *       message, missing large-message-destinations configuration." per frame (219 MB for a million);
 * </ul>
 * The lines are refused before Akka formats them (this filter is asked first), so a flood costs the node no logging.
 * Akka Streams' stage errors (a connection closed within a frame or Artery's magic: "Error in stage
 * [...TcpFraming...]: truncated data in ByteStringParser" with a stack trace, per connection) are logged through a
 * logging adapter that does not ask this filter; {@code io.tributary.cli.RateLimitedTurboFilter} limits them in
 * Logback.
 *
 * <p>When a class goes over the limit, one warning says so ({@code suppressing further warnings and errors of ...});
 * when its window ends, one warning gives how many were suppressed. Every other logger (Tributary's own, Akka's
 * cluster, persistence, ...) is filtered as {@link Slf4jLoggingFilter} does, by the event stream's level and the SLF4J
 * logger's.
 *
 * <p>Thread-safe: Akka calls it from any thread that logs (here, the streams of inbound connections).
 */
public class RateLimitedLoggingFilter extends Slf4jLoggingFilter {

  /** Lines let through per class and window ({@link LogRateLimiter#PER_WINDOW}). */
  public static final int PER_WINDOW = LogRateLimiter.PER_WINDOW;

  /** Length of a window, in seconds ({@link LogRateLimiter#WINDOW_SECONDS}). */
  public static final int WINDOW_SECONDS = LogRateLimiter.WINDOW_SECONDS;

  private final LogRateLimiter limiter;

  /** Constructor Akka calls (reflectively) for {@code akka.logging-filter}. */
  public RateLimitedLoggingFilter(ActorSystem.Settings settings, EventStream eventStream) {
    super(settings, eventStream);
    this.limiter = new LogRateLimiter(notices(eventStream));
  }

  /** As the public constructor, with {@link LogRateLimiter}'s clock and window-end executor (tests). */
  RateLimitedLoggingFilter(
      ActorSystem.Settings settings, EventStream eventStream, LongSupplier nanoClock, Executor windowEnd) {
    super(settings, eventStream);
    this.limiter = new LogRateLimiter(nanoClock, windowEnd, notices(eventStream));
  }

  private static BiConsumer<String, String> notices(EventStream eventStream) {
    return (logSource, notice) ->
        eventStream.publish(new Logging.Warning(logSource, RateLimitedLoggingFilter.class, notice));
  }

  @Override
  public boolean isWarningEnabled(Class<?> logClass, String logSource) {
    return super.isWarningEnabled(logClass, logSource) && admit(logClass, logSource);
  }

  @Override
  public boolean isWarningEnabled(Class<?> logClass, String logSource, akka.event.LogMarker marker) {
    return super.isWarningEnabled(logClass, logSource, marker) && admit(logClass, logSource);
  }

  @Override
  public boolean isErrorEnabled(Class<?> logClass, String logSource) {
    return super.isErrorEnabled(logClass, logSource) && admit(logClass, logSource);
  }

  @Override
  public boolean isErrorEnabled(Class<?> logClass, String logSource, akka.event.LogMarker marker) {
    return super.isErrorEnabled(logClass, logSource, marker) && admit(logClass, logSource);
  }

  /** Whether {@code logClass}'s warnings and errors are limited: Akka's remoting, {@code akka.remote.artery.*}. */
  static boolean limited(Class<?> logClass) {
    return logClass != null && logClass.getName().startsWith("akka.remote.artery.");
  }

  private boolean admit(Class<?> logClass, String logSource) {
    return !limited(logClass) || limiter.admit(logClass.getName(), logSource);
  }
}
