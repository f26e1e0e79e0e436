package io.tributary.cli.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

class LedgerTest {
  @Test
  void valuesRoundTripAndForeignOnesAreRecognised() {
    assertEquals(new Ledger.Entry(3, 12345L), Ledger.parse(Ledger.value(3, 12345L)));
    assertNull(Ledger.parse("hello"));
    assertNull(Ledger.parse("p-1"));
    assertNull(Ledger.parse("p1-x"));
    assertNull(Ledger.parse(null));
  }

  @Test
  void stallMeterReportsTheLongestTimeWithoutAnAcknowledgement() {
    long[] now = {1_000};
    StallMeter m = new StallMeter(() -> now[0]);
    Ledger ledger = new Ledger(m);
    assertNull(m.longest(), "nothing before start");
    ledger.acknowledged(0, 0, 0, 0); // before start: not measured
    m.start();
    now[0] += 2_000_000_000L;
    ledger.acknowledged(0, 1, 0, 1);
    now[0] += 500_000_000L;
    ledger.acknowledged(0, 2, 0, 2);
    now[0] += 7_000_000_000L; // a stall
    assertEquals(7.0, m.sinceLastNanos() / 1e9, 1e-9);
    assertEquals(7.0, m.longest().seconds(), 1e-9, "an open stall counts");
    assertTrue(m.longest().ongoing());
    ledger.acknowledged(0, 3, 0, 3);
    StallMeter.Stall s = m.longest();
    assertEquals(7.0, s.seconds(), 1e-9);
    assertFalse(s.ongoing());
    assertEquals(1_000 + 2_500_000_000L, s.fromNanos());
    now[0] += 9_000_000_000L; // the producers stop while blocked: counts until the stop
    m.stop();
    now[0] += 60_000_000_000L; // late answers after the stop do not count
    ledger.acknowledged(0, 4, 0, 4);
    assertEquals(9.0, m.longest().seconds(), 1e-9);
    assertTrue(m.longest().ongoing());
    assertEquals(0, m.sinceLastNanos());
  }

  @Test
  void cleanRunIsOk() {
    Ledger ledger = new Ledger();
    for (int s = 0; s < 4; s++) {
      ledger.sent(0, s);
      ledger.acknowledged(0, s, s % 2, s / 2);
    }
    Ledger.Reader r = ledger.reader("r");
    r.read(0, 0, "p0-0");
    r.read(0, 1, "p0-2");
    r.read(1, 0, "p0-1");
    r.read(1, 1, "p0-3");
    r.read(1, 1, "p0-3"); // reading one offset again is not a duplicate, but the reader went back
    Ledger.Result result = ledger.result();
    assertEquals("acknowledged 4, lost 0, duplicated 0, reordered 0", result.line());
    assertEquals(1, result.rewound());
    assertFalse(result.ok(), "a reader going back is an anomaly");
    assertTrue(ledger.allAcknowledgedRead());
  }

  @Test
  void lostDuplicatedReorderedAndMisplacedAreCounted() {
    Ledger ledger = new Ledger();
    ledger.acknowledged(0, 0, 0, 0);
    ledger.acknowledged(0, 1, 0, 1);
    ledger.acknowledged(0, 2, 0, 2);
    ledger.acknowledged(0, 3, 0, 3); // never read: lost
    ledger.acknowledged(1, 0, 0, 4);
    ledger.failed(1, 1, new TributaryException(ErrorCode.NOT_ENOUGH_REPLICAS, "x"));
    Ledger.Reader r = ledger.reader("r");
    r.read(0, 0, "p0-0");
    r.read(0, 1, "p0-2"); // 2 before 1: p0-1 is reordered
    r.read(0, 2, "p0-1"); // and misplaced (acknowledged at 0@1)
    r.read(0, 3, "p0-0"); // p0-0 again at another offset: duplicated
    r.read(0, 4, "p1-0");
    r.read(0, 5, "p1-1"); // a failed send may be there: fine
    Ledger.Result result = ledger.result();
    assertEquals(5, result.acknowledged());
    assertEquals(1, result.lost());
    assertEquals(1, result.duplicated());
    assertEquals(1, result.reordered());
    assertEquals(2, result.misplaced()); // p0-1 read at 0@2, p0-2 read at 0@1
    assertEquals(1, result.readUnacknowledged());
    assertEquals(1L, result.failures().get("NOT_ENOUGH_REPLICAS"));
    assertFalse(result.ok());
    assertEquals(1, ledger.unreadAcknowledged());
  }

  @Test
  void twoValuesAtOneOffsetAreDivergentAndGapsAreSkips() {
    Ledger ledger = new Ledger();
    ledger.acknowledged(0, 0, 0, 0);
    ledger.reader("a").read(0, 0, "p0-0");
    Ledger.Reader b = ledger.reader("b");
    b.read(0, 0, "p0-1");
    b.read(0, 2, "p0-2");
    Ledger.Result result = ledger.result();
    assertEquals(1, result.divergent());
    assertEquals(1, result.skipped());
    assertFalse(result.ok());
  }

  @Test
  void nothingAcknowledgedIsNotOk() {
    assertFalse(new Ledger().result().ok());
  }
}
