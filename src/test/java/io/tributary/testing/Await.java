package io.tributary.testing;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting in tests for a condition that an event makes true: polls it until a deadline, then fails. */
public final class Await {
  private Await() {}

  /** Polls {@code condition} every 20 ms for at most 30 s; fails with {@code what} when it never held. */
  public static void await(String what, BooleanSupplier condition) {
    await(what, condition, () -> "");
  }

  /**
   * Polls {@code condition} every 20 ms for at most 30 s (an upper bound, not a timing assertion).
   *
   * @param state appended to the failure message, e.g. the value last seen
   * @throws AssertionError when the condition did not hold within 30 s, or the thread was interrupted
   */
  public static void await(String what, BooleanSupplier condition, Supplier<String> state) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        String s = state.get();
        throw new AssertionError("Timed out waiting for: " + what + (s.isEmpty() ? "" : " (" + s + ")"));
      }
      try {
        Thread.sleep(20); // polling a condition with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
