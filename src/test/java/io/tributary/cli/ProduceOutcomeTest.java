package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** What {@code tributary produce} reports about failed records, without a broker. */
class ProduceOutcomeTest {
  final StringWriter err = new StringWriter();
  final ProduceCommand.Outcome outcome = new ProduceCommand.Outcome(new PrintWriter(err, true));

  static TributaryException error(ErrorCode code) {
    return new TributaryException(code, "why");
  }

  @Test
  void nothingFailedIsNoSummary() {
    assertNull(outcome.summary(10, 0, null));
    assertEquals("", err.toString());
  }

  @Test
  void perRecordFailuresAreEachReportedAndDoNotStopTheCommand() {
    outcome.failed(7, error(ErrorCode.MESSAGE_TOO_LARGE));
    outcome.failed(3, error(ErrorCode.INVALID_RECORD));
    outcome.failed(8, error(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER));
    assertFalse(outcome.stopped());
    assertEquals("Line 7 failed: MESSAGE_TOO_LARGE: why\n"
        + "Line 3 failed: INVALID_RECORD: why\n"
        + "Line 8 failed: OUT_OF_ORDER_SEQUENCE_NUMBER: why\n", err.toString());
    assertEquals("3 of 10 records failed (lines 3, 7-8)", outcome.summary(10, 0, null));
  }

  @Test
  void theSummaryNamesTheFailedLinesAsRangesTheFirstEightThenHowManyMore() {
    for (long line = 20; line >= 2; line -= 2) {
      outcome.failed(line, error(ErrorCode.MESSAGE_TOO_LARGE));
    }
    assertEquals("10 of 20 records failed (lines 2, 4, 6, 8, 10, 12, 14, 16, ... (10 ranges, the last ending at"
        + " line 20))", outcome.summary(20, 0, null));
  }

  @Test
  void anErrorThatIsNotAboutOneRecordStopsTheCommandAndItsRepeatsAreCounted() {
    outcome.failed(2, error(ErrorCode.MESSAGE_TOO_LARGE));
    assertFalse(outcome.stopped());
    outcome.failed(4, error(ErrorCode.REQUEST_TIMED_OUT));
    assertTrue(outcome.stopped());
    outcome.failed(5, error(ErrorCode.REQUEST_TIMED_OUT));
    outcome.failed(6, error(ErrorCode.REQUEST_TIMED_OUT));
    outcome.failed(7, error(ErrorCode.INVALID_TIMESTAMP)); // another error: reported on its own
    assertEquals("5 of 9 records failed (lines 2, 4-7); lines 10 and later were not sent: REQUEST_TIMED_OUT"
        + " (line 4) is not a problem of one record; a record that timed out may have been stored all the same"
        + " (as with Kafka's producer): check before sending it again", outcome.summary(9, 10, null));
    assertEquals("Line 2 failed: MESSAGE_TOO_LARGE: why\n"
        + "Line 4 failed: REQUEST_TIMED_OUT: why\n"
        + "Line 7 failed: INVALID_TIMESTAMP: why\n"
        + "... and 2 more records (lines 5-6) failed with REQUEST_TIMED_OUT\n", err.toString());
  }

  @Test
  void theRepeatsNameExactlyTheLinesThatFailedNotTheSpanBetweenTheFirstAndTheLast() {
    outcome.failed(100, error(ErrorCode.REQUEST_TIMED_OUT));
    // out of order, as answers arrive; 104 and 110-119 succeeded
    for (long line : new long[] {103, 101, 102, 105, 109, 108, 107, 106, 120, 121}) {
      outcome.failed(line, error(ErrorCode.REQUEST_TIMED_OUT));
    }
    assertTrue(outcome.summary(121, 0, null).startsWith("11 of 121 records failed (lines 100-103, 105-109, 120-121);"),
        "the summary's ranges take in the first failure, printed on its own line");
    assertEquals("Line 100 failed: REQUEST_TIMED_OUT: why\n"
        + "... and 10 more records (lines 101-103, 105-109, 120-121) failed with REQUEST_TIMED_OUT\n", err.toString());
  }

  @Test
  void rangesBeyondTheCapAreCountedNotNamed() {
    outcome.failed(1, error(ErrorCode.REQUEST_TIMED_OUT));
    int ranges = ProduceCommand.LineRanges.RANGES_KEPT + 5;
    for (long i = 0; i < ranges; i++) {
      outcome.failed(3 + 2 * i, error(ErrorCode.REQUEST_TIMED_OUT)); // single lines 3, 5, 7, ...
    }
    outcome.summary(3 + 2L * ranges, 0, null);
    assertTrue(err.toString().endsWith("... and " + ranges + " more records (lines 3, 5, 7, 9, 11, 13, 15, 17, ..."
        + " (more than " + ProduceCommand.LineRanges.RANGES_KEPT + " ranges, the last ending at line "
        + (3 + 2L * (ProduceCommand.LineRanges.RANGES_KEPT - 1)) + ")) failed with REQUEST_TIMED_OUT\n"), err.toString());
  }

  @Test
  void manyRangesOfRepeatsAreListedFirstThenCounted() {
    outcome.failed(1, error(ErrorCode.REQUEST_TIMED_OUT));
    for (long line = 3; line <= 40; line += 2) { // 3, 5, ..., 39: 19 single lines
      outcome.failed(line, error(ErrorCode.REQUEST_TIMED_OUT));
    }
    outcome.summary(40, 0, null);
    assertEquals("Line 1 failed: REQUEST_TIMED_OUT: why\n"
        + "... and 19 more records (lines 3, 5, 7, 9, 11, 13, 15, 17, ... (19 ranges, the last ending at line 39))"
        + " failed with REQUEST_TIMED_OUT\n", err.toString());
  }

  @Test
  void aStopAfterTheLastLineSaysNothingAboutLinesNotSent() {
    outcome.failed(3, error(ErrorCode.NOT_ENOUGH_REPLICAS));
    assertEquals("1 of 3 records failed (line 3)", outcome.summary(3, 0, null));
  }

  @Test
  void aLineThatCannotBeParsedStopsTheCommand() {
    outcome.failed(1, error(ErrorCode.MESSAGE_TOO_LARGE));
    assertEquals("No key separator found on line number 2: 'x'; lines 2 and later were not sent; 1 of 1 records"
        + " failed (line 1)", outcome.summary(1, 2, "No key separator found on line number 2: 'x'"));
  }
}
