package io.tributary.util;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Plain {@link CompletableFuture}s in place of the ones Akka's Java ask APIs return.
 *
 * <p>{@code AskPattern.ask} and {@code Patterns.ask} hand out Scala's {@code FutureConverters} wrapper, which turns
 * every non-async dependent ({@code whenComplete}, {@code thenApply}, ... and so Akka's own {@code pipeToSelf}) into
 * an async one on the default executor. With fewer than three cores (the common pool's parallelism below 2) that
 * executor is {@code CompletableFuture}'s thread-per-task fallback: every answer started a new thread (measured on
 * this 2-core machine: thread creation in a producer's profile for every produce answer). {@link #direct} completes
 * a plain future on the thread that completes the answer (the Akka thread that delivers the reply), so dependents
 * registered without an executor run there, as they would on any {@code CompletableFuture}: they must be short and
 * must not block.
 *
 * <p>Stateless and thread-safe.
 */
public final class Completions {
  /** Runs a task on the calling thread. */
  public static final Executor DIRECT = Runnable::run;

  private Completions() {}

  /**
   * A plain future that completes, on the completing thread of {@code stage}, as {@code stage} does (with its value
   * or with its exception, e.g. Akka's {@code TimeoutException} of an unanswered ask).
   *
   * @param stage typically the answer of an Akka ask
   * @return a new {@code CompletableFuture}; completing it yourself does not affect {@code stage}
   */
  public static <T> CompletableFuture<T> direct(CompletionStage<T> stage) {
    CompletableFuture<T> out = new CompletableFuture<>();
    stage.whenCompleteAsync((value, failure) -> {
      if (failure == null) {
        out.complete(value);
      } else {
        out.completeExceptionally(failure);
      }
    }, DIRECT);
    return out;
  }
}
