package io.tributary.group;

import java.util.function.BooleanSupplier;

/** Polls a condition that no event announces (a background step) until it holds, for at most 60 s. */
final class RetentionAwait {
  private RetentionAwait() {}

  static void until(String what, BooleanSupplier check) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!check.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
