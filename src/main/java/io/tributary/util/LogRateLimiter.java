package io.tributary.util;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * At most {@link #PER_WINDOW} log lines per {@link #WINDOW_SECONDS} seconds for each of the loggers that a client
 * can make write a line per frame or per connection it gets wrong; shared by the broker's two log filters, {@link
 * RateLimitedLoggingFilter} (Akka's, before a line is formatted: Artery's per-frame warnings) and {@code
 * io.tributary.cli.RateLimitedTurboFilter} (Logback's: Akka Streams' per-connection stage errors, which bypass
 * Akka's filter).
 *
 * <p>When a logger goes over the limit, the notice sink gets one line saying so; when its window ends (at its next
 * line after {@link #WINDOW_SECONDS}, or {@link #WINDOW_SECONDS} after the first suppressed line, whichever is first),
 * one line with the count of the suppressed.
 *
 * <p>Thread-safe: one monitor per logger.
 */
public final class LogRateLimiter {

  /** Lines let through per logger and window. */
  public static final int PER_WINDOW = 10;

  /** Length of a window, in seconds. */
  public static final int WINDOW_SECONDS = 10;

  private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(WINDOW_SECONDS);

  private final LongSupplier nanoClock;
  private final Executor windowEnd;
  private final BiConsumer<String, String> notices;
  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * A limiter on the real clock.
   *
   * @param notices gets (the log source of the line that caused it, the notice) for each notice, on the logging
   *     thread or on the JDK's delayed-task thread
   */
  public LogRateLimiter(BiConsumer<String, String> notices) {
    this(System::nanoTime, CompletableFuture.delayedExecutor(WINDOW_SECONDS, TimeUnit.SECONDS), notices);
  }

  /**
   * As {@link #LogRateLimiter(BiConsumer)}, with a clock in nanoseconds and an executor that runs a task when a window
   * ends, i.e. {@link #WINDOW_SECONDS} after it is given (tests).
   */
  public LogRateLimiter(LongSupplier nanoClock, Executor windowEnd, BiConsumer<String, String> notices) {
    this.nanoClock = nanoClock;
    this.windowEnd = windowEnd;
    this.notices = notices;
  }

  /**
   * Counts one line of the logger (or Akka log class) {@code name}.
   *
   * @param logSource where the line comes from, handed to the notice sink
   * @return whether the line may be logged
   */
  public boolean admit(String name, String logSource) {
    Window window = windows.computeIfAbsent(name, n -> new Window());
    String notice;
    boolean admitted;
    long scheduleGeneration = -1;
    synchronized (window) {
      long now = nanoClock.getAsLong();
      notice = window.lines == 0 || now - window.start >= WINDOW_NANOS ? window.roll(name, now) : null;
      admitted = window.lines < PER_WINDOW;
      if (admitted) {
        window.lines++;
      } else if (window.suppressed++ == 0) {
        notice = "More than " + PER_WINDOW + " warnings and errors of " + name + " in " + WINDOW_SECONDS
            + " s (frames or connections it cannot decode, e.g. from a client that speaks another protocol): "
            + "suppressing further ones until the window ends";
        scheduleGeneration = window.generation;
      }
    }
    if (notice != null) {
      notices.accept(logSource, notice);
    }
    if (scheduleGeneration >= 0) {
      long generation = scheduleGeneration;
      windowEnd.execute(() -> {
        String count;
        synchronized (window) {
          count = window.generation == generation ? window.roll(name, nanoClock.getAsLong()) : null;
        }
        if (count != null) {
          notices.accept(logSource, count);
        }
      });
    }
    return admitted;
  }

  /** One logger's window; guarded by its own monitor. */
  private static final class Window {
    long start;
    int lines;
    long suppressed;
    long generation;

    /** Starts a new window at {@code now}; the count of the old one's suppressed lines, or null if none. */
    String roll(String name, long now) {
      String count = suppressed == 0 ? null : suppressed + " warnings and errors of " + name
          + " were suppressed in the last window (at most " + PER_WINDOW + " per " + WINDOW_SECONDS + " s)";
      start = now;
      lines = 0;
      suppressed = 0;
      generation++;
      return count;
    }
  }
}
