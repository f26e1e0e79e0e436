package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link TopicConfig#create}: overrides over the broker defaults, and a clear message for each bad value. */
class TopicConfigTest {

  private final BrokerSettings defaults = BrokerSettings.create(ConfigFactory.load());

  private String refusal(String key, String value) {
    return assertThrows(TopicConfig.InvalidConfigException.class, () -> TopicConfig.create(Map.of(key, value), defaults))
        .getMessage();
  }

  @Test
  void overridesReplaceTheBrokerDefaults() {
    TopicConfig c = TopicConfig.create(Map.of("retention.ms", " 5000 ", "retention.bytes", "-1"), defaults);
    assertEquals(5000, c.retentionMs());
    assertEquals(-1, c.retentionBytes());
    assertEquals(defaults.messageMaxBytes(), c.maxMessageBytes());
  }

  @Test
  void aNumberTooLargeForALongIsOutOfRangeNotNotANumber() {
    assertEquals("Invalid value 99999999999999999999 for retention.ms: out of range, at most 9223372036854775807",
        refusal("retention.ms", "99999999999999999999"));
    assertEquals("Invalid value -99999999999999999999 for retention.bytes: out of range, at most 9223372036854775807",
        refusal("retention.bytes", "-99999999999999999999"));
  }

  @Test
  void textAndFractionsAreNotWholeNumbers() {
    assertEquals("Invalid value 1.5 for retention.ms: not a whole number", refusal("retention.ms", "1.5"));
    assertEquals("Invalid value 7d for retention.ms: not a whole number", refusal("retention.ms", "7d"));
  }

  @Test
  void valuesBelowTheMinimumAreRefused() {
    assertEquals("Invalid value -2 for retention.ms: must be at least -1", refusal("retention.ms", "-2"));
    assertEquals("Invalid value 0 for min.insync.replicas: must be at least 1", refusal("min.insync.replicas", "0"));
  }
}
