package io.tributary.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Metadata versions across controller failovers: a replica manager keeps the highest version it was pushed, so a new
 * controller must write above every version the previous one pushed, also those whose Distributed Data write never
 * reached a majority before its node died (the new controller cannot read them).
 */
class ControllerVersionTest {

  @Test
  void aControllerStartsAboveWhatItLoaded() {
    long now = 1_764_000_000_000L;
    assertTrue(Controller.firstVersion(0, now) > 0);
    long loadedFromTheFuture = now * 1000 + 5_000_000; // a clock that ran ahead once: versions keep increasing
    assertEquals(loadedFromTheFuture + 1, Controller.firstVersion(loadedFromTheFuture, now));
  }

  @Test
  void aLaterControllerStartsAboveEveryVersionAnEarlierOnePushedEvenIfItsLastWritesWereLost() {
    long earlierStart = 1_764_000_000_000L;
    long first = Controller.firstVersion(0, earlierStart);
    // the earlier controller wrote 50,000 versions in its minute; the last 49 (a burst of ISR changes) were pushed to
    // the replica managers but never reached a majority: the next controller loads the version before them
    long lastPushed = first + 50_000;
    long lastLoaded = lastPushed - 49;
    long laterStart = earlierStart + 60_000;
    assertTrue(Controller.firstVersion(lastLoaded, laterStart) > lastPushed,
        "the new controller's first write must not be ignored by a manager that saw " + lastPushed);
    // even right after: a failover takes seconds (failure detection, downing), not milliseconds
    assertTrue(Controller.firstVersion(lastLoaded, earlierStart + 5_000 + 50) > lastPushed);
  }
}
