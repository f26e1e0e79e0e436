package io.tributary.record;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Murmur2Test {

  /** Vectors from Kafka's {@code UtilsTest.testMurmur2}. */
  @ParameterizedTest
  @CsvSource({
    "21, -973932308",
    "foobar, -790332482",
    "a-little-bit-long-string, -985981536",
    "a-little-bit-longer-string, -1486304829",
    "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8, -58897971"
  })
  void murmur2MatchesKafkaVectors(String key, int expected) {
    assertEquals(expected, Murmur2.murmur2(key.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void murmur2OfThreeBytesMatchesKafkaVector() {
    assertEquals(479470107, Murmur2.murmur2(new byte[] {'a', 'b', 'c'}));
  }

  @Test
  void toPositiveClearsTheSignBitLikeKafka() {
    assertEquals(0, Murmur2.toPositive(0));
    assertEquals(1, Murmur2.toPositive(1));
    assertEquals(Integer.MAX_VALUE, Murmur2.toPositive(-1));
    assertEquals(0, Murmur2.toPositive(Integer.MIN_VALUE));
    assertEquals(Integer.MAX_VALUE, Murmur2.toPositive(Integer.MAX_VALUE));
  }

  @Test
  void partitionForKeyIsToPositiveMurmur2ModuloPartitions() {
    byte[] key = "foobar".getBytes(StandardCharsets.UTF_8);
    assertEquals((-790332482 & 0x7fffffff) % 7, Murmur2.partitionForKey(key, 7));
    assertEquals(0, Murmur2.partitionForKey(key, 1));
    for (int n = 1; n < 50; n++) {
      int p = Murmur2.partitionForKey(("key-" + n).getBytes(StandardCharsets.UTF_8), n);
      assertTrue(p >= 0 && p < n);
    }
  }

  @Test
  void partitionForKeyRejectsNonPositivePartitionCount() {
    assertThrows(IllegalArgumentException.class, () -> Murmur2.partitionForKey(new byte[] {1}, 0));
  }
}
