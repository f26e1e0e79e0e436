package io.tributary.util;

import akka.actor.ActorSystem;
import akka.event.EventStream;
import akka.event.Logging;
import akka.event.slf4j.Slf4jLoggingFilter;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Akka's {@link Slf4jLoggingFilter} (set as {@code akka.logging-filter} in {@code tributary-broker.conf}) that lets at
 * most {@link #PER_WINDOW} warnings and errors per {@link #WINDOW_SECONDS} seconds through from each of Artery's
 * inbound decoding stages, {@code akka.remote.artery.Decoder} ("Dropping message due to: ...") and {@code
 * akka.remote.artery.Deserializer} ("Failed to deserialize message ..."). Each of those logs one line per frame it
 * cannot decode, so a client that sends a stream of short garbage frames of valid length made a broker write a
 * million warnings (199 MB of log, found by a newcomer's test) and grow from 226 to 650 MB of RSS while Akka's log
 * queue backed up. The lines are refused before Akka formats them (this filter is asked first), so a flood costs the
 * node no logging at all.
 *
 * <p>When a stage goes over the limit, one warning says so ({@code suppressing further warnings and errors of ...});
 * at its first line after the window, one warning gives how many were suppressed. Every other logger is filtered as
 * {@link Slf4jLoggingFilter} does (by the event stream's level and the SLF4J logger's).
 *
 * <p>Thread-safe: Akka calls it from any thread that logs (here, the streams of inbound connections).
 */
public class RateLimitedLoggingFilter extends Slf4jLoggingFilter {

  /** Lines let through per stage and window. */
  public static final int PER_WINDOW = 10;

  /** Length of a window, in seconds. */
  public static final int WINDOW_SECONDS = 10;

  private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(WINDOW_SECONDS);

  private final EventStream eventStream;
  private final LongSupplier nanoClock;
  private final Map<String, Window> windows = Map.of(
      "akka.remote.artery.Decoder", new Window(),
      "akka.remote.artery.Deserializer", new Window());

  /** Constructor Akka calls (reflectively) for {@code akka.logging-filter}. */
  public RateLimitedLoggingFilter(ActorSystem.Settings settings, EventStream eventStream) {
    this(settings, eventStream, System::nanoTime);
  }

  /** As the public constructor, with a clock in nanoseconds (tests). */
  RateLimitedLoggingFilter(ActorSystem.Settings settings, EventStream eventStream, LongSupplier nanoClock) {
    super(settings, eventStream);
    this.eventStream = eventStream;
    this.nanoClock = nanoClock;
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

  private boolean admit(Class<?> logClass, String logSource) {
    Window window = logClass == null ? null : windows.get(logClass.getName());
    if (window == null) {
      return true;
    }
    String notice;
    boolean admitted;
    synchronized (window) {
      long now = nanoClock.getAsLong();
      notice = null;
      if (window.lines == 0 || now - window.start >= WINDOW_NANOS) {
        if (window.suppressed > 0) {
          notice = window.suppressed + " warnings and errors of " + logClass.getName() + " were suppressed in "
              + "the last window (at most " + PER_WINDOW + " per " + WINDOW_SECONDS + " s)";
        }
        window.start = now;
        window.lines = 0;
        window.suppressed = 0;
      }
      admitted = window.lines < PER_WINDOW;
      if (admitted) {
        window.lines++;
      } else if (window.suppressed++ == 0) {
        notice = "More than " + PER_WINDOW + " warnings and errors of " + logClass.getName() + " in "
            + WINDOW_SECONDS + " s (frames it cannot decode, e.g. from a client that speaks another protocol): "
            + "suppressing further ones until the window ends";
      }
    }
    if (notice != null) {
      eventStream.publish(new Logging.Warning(logSource, RateLimitedLoggingFilter.class, notice));
    }
    return admitted;
  }

  /** One stage's window; guarded by its own monitor. */
  private static final class Window {
    long start;
    int lines;
    long suppressed;
  }
}
