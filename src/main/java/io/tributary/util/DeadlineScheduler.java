package io.tributary.util;

import akka.actor.Cancellable;
import akka.actor.Scheduler;
import akka.event.LoggingAdapter;
import com.typesafe.config.Config;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import scala.concurrent.ExecutionContext;
import scala.concurrent.duration.FiniteDuration;

/**
 * An Akka {@link Scheduler} whose one timer thread sleeps until the next task is due, instead of waking at every tick
 * as Akka's default {@code LightArrayRevolverScheduler} does (every {@code akka.scheduler.tick-duration}, 10 ms: 100
 * wake-ups a second whether or not anything is due). Selected with {@code akka.scheduler.implementation =
 * "io.tributary.util.DeadlineScheduler"} (Akka's documented extension point; a broker's {@code
 * tributary-broker.conf} does so).
 *
 * <p>Why: profiled on 2 cores (async-profiler, cpu), the tick thread was half of an idle broker's CPU (~1.3% of a
 * core) and ~5% of a broker's CPU at 20,000 records/s; a broker's timers are few and far apart (cluster gossip and
 * heartbeats every second, the group coordinator's 250 ms tick, request timeouts).
 *
 * <p>Built on the JDK's {@link ScheduledThreadPoolExecutor} with one thread from Akka's thread factory: a task that is
 * due is handed to its {@link ExecutionContext} (so the timer thread only dispatches); cancelled tasks are removed
 * from its queue at once. Semantics as Akka's scheduler contract ({@code ActorSystemImpl.createScheduler}):
 *
 * <ul>
 *   <li>a delay of zero or less runs the task on its execution context now;
 *   <li>{@link #schedule(FiniteDuration, FiniteDuration, Runnable, ExecutionContext)} repeats at a fixed rate, without
 *       overlapping runs, catching up after a pause as Akka's; a run that throws ends the repetition;
 *   <li>after {@link #close()}, scheduling throws {@link IllegalStateException};
 *   <li>{@link #close()} runs every task still pending that is a {@link Scheduler.TaskRunOnClose} (Akka's dispatchers
 *       shut down through those), and drops the others.
 * </ul>
 *
 * <p>Timing: a task runs when its delay has passed, to the precision of the OS's timed wait (no rounding up to a
 * tick); {@link #maxFrequency()} is 1000 (one per millisecond), as Akka's with a 1 ms tick.
 *
 * <p>Thread-safe.
 */
public final class DeadlineScheduler implements Scheduler, Closeable {

  private final ScheduledThreadPoolExecutor timer;
  private final LoggingAdapter log;
  /** Pending tasks to run on {@link #close()} (Akka's dispatcher shutdowns): few, and only at system shutdown. */
  private final Set<OnClose> runOnClose = ConcurrentHashMap.newKeySet();

  /**
   * Akka's scheduler constructor signature.
   *
   * @param config the actor system's config (unused: there is no tick to configure)
   * @param log where a failing on-close task is reported
   * @param threadFactory Akka's factory for the {@code <system>-scheduler} thread
   */
  public DeadlineScheduler(Config config, LoggingAdapter log, ThreadFactory threadFactory) {
    this.log = log;
    this.timer = new ScheduledThreadPoolExecutor(1, threadFactory);
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    timer.setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
  }

  /**
   * Runs {@code runnable} on {@code executor} once {@code delay} has passed (at once, on the calling thread's hand-off
   * to {@code executor}, for a delay ≤ 0). Callable from any thread.
   *
   * @return cancels the task while it is still queued ({@code cancel()} true) and removes it from the queue
   * @throws IllegalStateException after {@link #close()}
   */
  @Override
  public Cancellable scheduleOnce(FiniteDuration delay, Runnable runnable, ExecutionContext executor) {
    long nanos = delay.toNanos();
    if (nanos <= 0) {
      ensureRunning();
      executor.execute(runnable);
      return NotCancellable.INSTANCE;
    }
    if (runnable instanceof Scheduler.TaskRunOnClose) {
      OnClose task = new OnClose(runnable, executor);
      runOnClose.add(task);
      try {
        task.future = submit(task, nanos);
      } catch (IllegalStateException e) {
        runOnClose.remove(task);
        throw e;
      }
      return task;
    }
    return new Once(submit(() -> dispatch(executor, runnable), nanos));
  }

  /**
   * Runs {@code runnable} on {@code executor} after {@code initialDelay} and then at the fixed rate {@code interval}
   * (Akka's {@code scheduleAtFixedRate}): a run is queued only when the previous one has ended, for the next point of
   * the rate, so runs never overlap and late ones catch up. A run that throws ends the repetition. Callable from any
   * thread.
   *
   * @return stops the repetition, also between two runs
   * @throws IllegalArgumentException if {@code interval} is not positive
   * @throws IllegalStateException after {@link #close()}
   */
  @Override
  public Cancellable schedule(
      FiniteDuration initialDelay, FiniteDuration interval, Runnable runnable, ExecutionContext executor) {
    long intervalNanos = interval.toNanos();
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("interval must be positive, was " + interval);
    }
    long initialNanos = Math.max(0, initialDelay.toNanos());
    Repeated task = new Repeated(runnable, executor, intervalNanos, System.nanoTime() + initialNanos);
    task.arm(initialNanos);
    return task;
  }

  /** 1000 per second: the JDK's timed wait has no tick; Akka reads this to bound its own rates. */
  @Override
  public double maxFrequency() {
    return 1000.0;
  }

  /**
   * Stops the timer thread, runs the pending {@link Scheduler.TaskRunOnClose} tasks on the calling thread and drops
   * the rest, as Akka's scheduler does at actor system termination. Idempotent.
   */
  @Override
  public void close() {
    timer.shutdownNow();
    List<OnClose> pending = new ArrayList<>(runOnClose);
    runOnClose.clear();
    for (OnClose task : pending) {
      if (task.claim()) { // not yet run nor cancelled
        try {
          task.runnable.run();
        } catch (RuntimeException e) {
          log.error(e, "exception while executing timer task");
        }
      }
    }
  }

  private ScheduledFuture<?> submit(Runnable task, long nanos) {
    try {
      return timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      throw new IllegalStateException("cannot enqueue after timer shutdown", e);
    }
  }

  private void ensureRunning() {
    if (timer.isShutdown()) {
      throw new IllegalStateException("cannot enqueue after timer shutdown");
    }
  }

  /** Removes a queued task from the timer's queue, if it is there (null: not queued yet). */
  private static void unqueue(ScheduledFuture<?> queued) {
    if (queued != null) {
      queued.cancel(false);
    }
  }

  /** On the timer thread: hands a due task to its execution context; one that is shut down drops it, as Akka's. */
  private static void dispatch(ExecutionContext executor, Runnable runnable) {
    try {
      executor.execute(runnable);
    } catch (RejectedExecutionException e) {
      // the dispatcher shut down (actor system terminating): nothing left to run it
    }
  }

  private enum NotCancellable implements Cancellable {
    INSTANCE;

    @Override
    public boolean cancel() {
      return false;
    }

    @Override
    public boolean isCancelled() {
      return false;
    }
  }

  /** A one-shot task: cancelled while still queued, it is removed from the timer's queue. */
  private static final class Once implements Cancellable {
    private final ScheduledFuture<?> future;

    Once(ScheduledFuture<?> future) {
      this.future = future;
    }

    @Override
    public boolean cancel() {
      return future.cancel(false);
    }

    @Override
    public boolean isCancelled() {
      return future.isCancelled();
    }
  }

  /** A one-shot {@link Scheduler.TaskRunOnClose}: runs once, when due or at close, whichever comes first. */
  private final class OnClose implements Cancellable, Runnable {
    final Runnable runnable;
    final ExecutionContext executor;
    volatile ScheduledFuture<?> future;
    /** 0 pending, 1 run (or running), 2 cancelled. */
    private final java.util.concurrent.atomic.AtomicInteger state = new java.util.concurrent.atomic.AtomicInteger();

    OnClose(Runnable runnable, ExecutionContext executor) {
      this.runnable = runnable;
      this.executor = executor;
    }

    /** True for the one caller that may run the task. */
    boolean claim() {
      return state.compareAndSet(0, 1);
    }

    @Override
    public void run() {
      if (claim()) {
        runOnClose.remove(this);
        dispatch(executor, runnable);
      }
    }

    @Override
    public boolean cancel() {
      if (!state.compareAndSet(0, 2)) {
        return false;
      }
      runOnClose.remove(this);
      unqueue(future);
      return true;
    }

    @Override
    public boolean isCancelled() {
      return state.get() == 2;
    }
  }

  /**
   * A fixed-rate repetition, as Akka's: each run is queued after the previous one ended (no overlap), for the next
   * point of the rate (a late run is followed at once by the ones it missed); cancel stops it, also between two runs.
   */
  private final class Repeated implements Cancellable, Runnable {
    private final Runnable runnable;
    private final ExecutionContext executor;
    private final long intervalNanos;
    /** Confined to the runs, which never overlap. */
    private long nextAtNanos;
    private volatile ScheduledFuture<?> queued;
    private volatile boolean cancelled;

    Repeated(Runnable runnable, ExecutionContext executor, long intervalNanos, long firstAtNanos) {
      this.runnable = runnable;
      this.executor = executor;
      this.intervalNanos = intervalNanos;
      this.nextAtNanos = firstAtNanos;
    }

    /** Queues the next run in {@code delayNanos}; IllegalStateException when the timer is shut down. */
    void arm(long delayNanos) {
      queued = submit(() -> dispatch(executor, this), Math.max(1, delayNanos));
      if (cancelled) { // cancel() may have seen the previous future
        queued.cancel(false);
      }
    }

    /** One run, on the execution context. */
    @Override
    public void run() {
      if (cancelled) {
        return;
      }
      runnable.run(); // a run that throws ends the repetition (the execution context reports it)
      nextAtNanos += intervalNanos;
      if (!cancelled) {
        try {
          arm(nextAtNanos - System.nanoTime());
        } catch (IllegalStateException e) {
          // the actor system is terminating: the repetition ends
        }
      }
    }

    @Override
    public boolean cancel() {
      if (cancelled) {
        return false;
      }
      cancelled = true;
      unqueue(queued);
      return true;
    }

    @Override
    public boolean isCancelled() {
      return cancelled;
    }
  }
}
