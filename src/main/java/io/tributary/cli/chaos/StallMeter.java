package io.tributary.cli.chaos;

import java.util.function.LongSupplier;

/**
 * The longest time without an acknowledgement while producers send: a chaos run's stalls (e.g. producers blocked on
 * sends to a leader that died, each waiting for its request timeout) show here even when nothing is lost.
 *
 * <p>Measuring runs from {@link #start()} to {@link #stop()}; a gap still open at {@code stop()} counts up to then.
 * Thread-safe.
 */
public final class StallMeter {
  /** A time without acknowledgements, in the clock's nanoseconds; {@code ongoing} if no acknowledgement ended it. */
  public record Stall(long fromNanos, long toNanos, boolean ongoing) {
    public double seconds() {
      return (toNanos - fromNanos) / 1e9;
    }
  }

  private final LongSupplier clock;
  private boolean measuring;
  private boolean stopped;
  private long last;
  private Stall longest;

  public StallMeter() {
    this(System::nanoTime);
  }

  /** With a clock of nanoseconds (tests). */
  public StallMeter(LongSupplier clock) {
    this.clock = clock;
  }

  /** Starts measuring (the producers start now): the first gap runs from here to the first acknowledgement. */
  public synchronized void start() {
    if (!measuring && !stopped) {
      measuring = true;
      last = clock.getAsLong();
    }
  }

  /** An acknowledgement arrived. */
  public synchronized void acknowledged() {
    if (measuring) {
      long now = clock.getAsLong();
      record(now, false);
      last = now;
    }
  }

  /** Stops measuring (the producers stop now); an open gap counts up to now. Acknowledgements after it do not count. */
  public synchronized void stop() {
    if (measuring) {
      record(clock.getAsLong(), true);
      measuring = false;
      stopped = true;
    }
  }

  /** The longest gap so far, including the one open now; null before {@link #start()}. */
  public synchronized Stall longest() {
    if (!measuring) {
      return longest;
    }
    Stall open = new Stall(last, clock.getAsLong(), true);
    return longest == null || open.seconds() > longest.seconds() ? open : longest;
  }

  /** Nanoseconds since the last acknowledgement (or the start) while measuring, else 0. */
  public synchronized long sinceLastNanos() {
    return measuring ? clock.getAsLong() - last : 0;
  }

  private void record(long now, boolean open) {
    if (longest == null || now - last > longest.toNanos() - longest.fromNanos()) {
      longest = new Stall(last, now, open);
    }
  }
}
