package io.tributary.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import scala.concurrent.Promise;
import scala.jdk.javaapi.FutureConverters;

class CompletionsTest {
  /** What Akka's Java ask APIs return: Scala's future seen through FutureConverters. */
  private static <T> Promise<T> promise() {
    return Promise.apply();
  }

  @Test
  void dependentsRunOnTheCompletingThreadNotOnAThreadPerAnswer() throws Exception {
    Promise<String> p = promise();
    CompletionStage<String> akkaStyle = FutureConverters.asJava(p.future());
    AtomicReference<Thread> ranOn = new AtomicReference<>();
    CompletableFuture<String> done =
        Completions.direct(akkaStyle).whenComplete((v, e) -> ranOn.set(Thread.currentThread()));

    AtomicReference<Thread> completer = new AtomicReference<>();
    Thread t = new Thread(() -> {
      completer.set(Thread.currentThread());
      p.success("answer");
    }, "completer");
    t.start();
    t.join();
    assertEquals("answer", done.get(10, TimeUnit.SECONDS));
    assertSame(completer.get(), ranOn.get(), "the dependent ran on the thread that completed the answer");
  }

  @Test
  void aFailureIsPassedOn() {
    Promise<String> p = promise();
    CompletableFuture<String> direct = Completions.direct(FutureConverters.asJava(p.future()));
    IllegalStateException boom = new IllegalStateException("boom");
    p.failure(boom);
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
        () -> direct.get(10, TimeUnit.SECONDS));
    assertSame(boom, e.getCause());
    assertTrue(direct.isCompletedExceptionally());
  }
}
