package io.tributary.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.Cancellable;
import akka.actor.Scheduler;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.javadsl.Behaviors;
import akka.dispatch.ExecutionContexts;
import akka.event.NoLogging$;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import scala.concurrent.ExecutionContext;
import scala.concurrent.duration.FiniteDuration;

class DeadlineSchedulerTest {
  /** Runs tasks on the thread that hands them over (the timer thread, or the caller for a zero delay). */
  private static final ExecutionContext CALLING_THREAD = ExecutionContexts.fromExecutor(Runnable::run);

  private final DeadlineScheduler scheduler = new DeadlineScheduler(ConfigFactory.empty(), NoLogging$.MODULE$,
      r -> {
        Thread t = new Thread(r, "test-scheduler");
        t.setDaemon(true);
        return t;
      });

  @AfterEach
  void close() {
    scheduler.close();
  }

  private static FiniteDuration ms(long millis) {
    return FiniteDuration.create(millis, TimeUnit.MILLISECONDS);
  }

  /** Waits until a task scheduled {@code millis} from now has run: every task due before it has run by then. */
  private void barrier(long millis) throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    scheduler.scheduleOnce(ms(millis), done::countDown, CALLING_THREAD);
    assertTrue(done.await(30, TimeUnit.SECONDS), "the barrier task ran");
  }

  @Test
  void aOneShotTaskRunsOnItsExecutionContextAfterItsDelay() throws Exception {
    java.util.concurrent.ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-ec"));
    try {
      AtomicReference<String> ranOn = new AtomicReference<>();
      CountDownLatch ran = new CountDownLatch(1);
      long start = System.nanoTime();
      scheduler.scheduleOnce(ms(50), () -> {
        ranOn.set(Thread.currentThread().getName());
        ran.countDown();
      }, ExecutionContexts.fromExecutor(pool));
      assertTrue(ran.await(30, TimeUnit.SECONDS));
      assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "not before its delay");
      assertEquals("the-ec", ranOn.get(), "handed to its execution context, not run on the timer thread");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void tasksRunInTheOrderOfTheirDeadlinesNotOfScheduling() throws Exception {
    List<String> order = new CopyOnWriteArrayList<>();
    scheduler.scheduleOnce(ms(300), () -> order.add("300"), CALLING_THREAD);
    scheduler.scheduleOnce(ms(100), () -> order.add("100"), CALLING_THREAD);
    scheduler.scheduleOnce(ms(200), () -> order.add("200"), CALLING_THREAD);
    barrier(400);
    assertEquals(List.of("100", "200", "300"), order);
  }

  @Test
  void aCancelledTaskNeverRuns() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    Cancellable c = scheduler.scheduleOnce(ms(100), runs::incrementAndGet, CALLING_THREAD);
    assertTrue(c.cancel(), "cancelled before it was due");
    assertTrue(c.isCancelled());
    assertFalse(c.cancel(), "a second cancel has nothing to cancel");
    barrier(200);
    assertEquals(0, runs.get());
  }

  @Test
  void cancellingATaskThatRanReturnsFalse() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    Cancellable c = scheduler.scheduleOnce(ms(10), runs::incrementAndGet, CALLING_THREAD);
    barrier(50);
    assertEquals(1, runs.get());
    assertFalse(c.cancel());
    assertFalse(c.isCancelled());
  }

  @Test
  void aZeroOrNegativeDelayRunsAtOnce() {
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    Cancellable c = scheduler.scheduleOnce(ms(0), () -> ranOn.set(Thread.currentThread()), CALLING_THREAD);
    assertSame(Thread.currentThread(), ranOn.get(), "handed to the execution context by the scheduling call");
    assertFalse(c.cancel());
    scheduler.scheduleOnce(ms(-5), () -> ranOn.set(null), CALLING_THREAD);
    assertEquals(null, ranOn.get());
  }

  @Test
  void aRepeatedTaskRunsUntilCancelledAndNotAfter() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    AtomicReference<Cancellable> self = new AtomicReference<>();
    CountDownLatch third = new CountDownLatch(1);
    Cancellable c = scheduler.schedule(ms(10), ms(20), () -> {
      if (runs.incrementAndGet() == 3) {
        while (self.get() == null) {
          Thread.onSpinWait(); // the scheduling call has not returned yet (it cannot take 40 ms, but be exact)
        }
        assertTrue(self.get().cancel());
        third.countDown();
      }
    }, CALLING_THREAD);
    self.set(c);
    assertTrue(third.await(30, TimeUnit.SECONDS));
    barrier(200); // ten more periods
    assertEquals(3, runs.get(), "no run after the cancel");
    assertTrue(c.isCancelled());
  }

  @Test
  void aRepeatedTaskThatThrowsEndsItsRepetition() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch thrown = new CountDownLatch(1);
    ExecutionContext reporting = ExecutionContexts.fromExecutor(r -> {
      try {
        r.run();
      } catch (IllegalStateException e) {
        thrown.countDown();
      }
    });
    scheduler.schedule(ms(5), ms(10), () -> {
      runs.incrementAndGet();
      throw new IllegalStateException("boom");
    }, reporting);
    assertTrue(thrown.await(30, TimeUnit.SECONDS));
    barrier(100);
    assertEquals(1, runs.get());
  }

  @Test
  void repeatedRunsNeverOverlapEvenWhenOneTakesSeveralPeriods() throws Exception {
    // on a pool of four threads, a first run that takes three periods: the next runs wait for it (then catch up)
    java.util.concurrent.ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      AtomicInteger active = new AtomicInteger();
      AtomicInteger maxActive = new AtomicInteger();
      AtomicInteger runs = new AtomicInteger();
      CountDownLatch five = new CountDownLatch(5);
      Cancellable c = scheduler.schedule(ms(0), ms(20), () -> {
        maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
        if (runs.incrementAndGet() == 1) {
          long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(60);
          while (System.nanoTime() < until) {
            Thread.onSpinWait();
          }
        }
        active.decrementAndGet();
        five.countDown();
      }, ExecutionContexts.fromExecutor(pool));
      assertTrue(five.await(30, TimeUnit.SECONDS));
      c.cancel();
      assertEquals(1, maxActive.get(), "one run at a time");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void closeRunsPendingRunOnCloseTasksDropsTheOthersAndRefusesNewOnes() {
    AtomicInteger onClose = new AtomicInteger();
    AtomicInteger ordinary = new AtomicInteger();
    scheduler.scheduleOnce(ms(60_000), (Scheduler.TaskRunOnClose) onClose::incrementAndGet, CALLING_THREAD);
    Cancellable cancelled =
        scheduler.scheduleOnce(ms(60_000), (Scheduler.TaskRunOnClose) onClose::incrementAndGet, CALLING_THREAD);
    assertTrue(cancelled.cancel());
    scheduler.scheduleOnce(ms(60_000), ordinary::incrementAndGet, CALLING_THREAD);
    scheduler.close();
    assertEquals(1, onClose.get(), "the pending run-on-close task ran, the cancelled one did not");
    assertEquals(0, ordinary.get());
    assertThrows(IllegalStateException.class, () -> scheduler.scheduleOnce(ms(10), () -> {}, CALLING_THREAD));
    assertThrows(IllegalStateException.class, () -> scheduler.scheduleOnce(ms(0), () -> {}, CALLING_THREAD));
    assertThrows(IllegalStateException.class, () -> scheduler.schedule(ms(10), ms(10), () -> {}, CALLING_THREAD));
    scheduler.close(); // idempotent
  }

  @Test
  void aBrokerActorSystemRunsOnItAndItsTypedTimersFire() {
    ActorTestKit kit = ActorTestKit.create("deadline-scheduler",
        ConfigFactory.parseString("akka.actor.provider = local")
            .withFallback(ConfigFactory.parseResources("tributary-broker.conf"))
            .withFallback(ConfigFactory.load()));
    try {
      assertInstanceOf(DeadlineScheduler.class,
          akka.actor.typed.javadsl.Adapter.toClassic(kit.system()).scheduler());
      TestProbe<String> probe = kit.createTestProbe();
      ActorRef<String> ticker = kit.spawn(Behaviors.<String>withTimers(timers -> {
        timers.startTimerWithFixedDelay("tick", "tick", Duration.ofMillis(20));
        timers.startSingleTimer("once", "once", Duration.ofMillis(30));
        return Behaviors.receiveMessage(m -> {
          probe.ref().tell(m);
          return Behaviors.same();
        });
      }));
      List<String> got = new java.util.ArrayList<>();
      while (got.stream().filter("tick"::equals).count() < 3 || !got.contains("once")) {
        got.add(probe.receiveMessage(Duration.ofSeconds(30)));
      }
      assertEquals(1, got.stream().filter("once"::equals).count());
      kit.stop(ticker);
    } finally {
      kit.shutdownTestKit(); // the dispatchers shut down through the scheduler's run-on-close tasks
    }
    assertTrue(kit.system().getWhenTerminated().toCompletableFuture().isDone());
  }
}
