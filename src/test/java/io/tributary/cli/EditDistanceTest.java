package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EditDistanceTest {

  @ParameterizedTest
  @CsvSource({
    "num.partitions, num.partitions, 0",
    "num.partitons, num.partitions, 1", // a letter missing
    "num.partitiions, num.partitions, 1", // one too many
    "num.partitinos, num.partitions, 1", // two neighbours swapped
    "log.retention.hour, log.retention.ms, 4",
    "'', abc, 3"
  })
  void countsInsertionsDeletionsSubstitutionsAndSwaps(String a, String b, int distance) {
    assertEquals(distance, EditDistance.between(a, b));
    assertEquals(distance, EditDistance.between(b, a));
  }

  @Test
  void closestKeepsNearMissesNearestFirstAndIgnoresShortWords() {
    List<String> names = List.of("--partitions", "--partition", "--topic", "-v");
    assertEquals(List.of("--partition", "--partitions"), EditDistance.closest("--partiton", names, 2));
    assertEquals(List.of(), EditDistance.closest("--bogus-flag", names, 2));
    assertEquals(List.of(), EditDistance.closest("-x", names, 2)); // 1 edit from -v, but half of its length
  }
}
