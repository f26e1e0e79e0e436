package io.tributary.group.assignor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AssignorsTest {

  @Test
  void namesAreTheThreeKafkaNames() {
    assertEquals(List.of("range", "roundrobin", "cooperative-sticky"), Assignors.names());
  }

  @Test
  void eachNameResolvesToTheAssignorOfThatName() {
    for (String name : Assignors.names()) {
      assertEquals(name, Assignors.byName(name).name());
      assertSame(Assignors.byName(name), Assignors.byName(name));
      assertTrue(Assignors.isKnown(name));
    }
  }

  @Test
  void defaultIsCooperativeStickyAndOnlyItIsCooperative() {
    assertEquals("cooperative-sticky", Assignors.DEFAULT);
    assertInstanceOf(CooperativeStickyAssignor.class, Assignors.byName(Assignors.DEFAULT));
    assertSame(Assignors.byName(Assignors.DEFAULT), Assignors.defaultAssignor());
    for (String name : Assignors.names()) {
      assertEquals(name.equals(Assignors.DEFAULT), Assignors.byName(name).cooperative(), name);
    }
  }

  @ParameterizedTest
  @CsvSource({
    "' Range ', range",
    "ROUNDROBIN, roundrobin",
    "Cooperative-Sticky, cooperative-sticky",
    "org.apache.kafka.clients.consumer.RangeAssignor, range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor, roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, cooperative-sticky"
  })
  void acceptsAnyCaseAndKafkaClassNames(String given, String expected) {
    assertEquals(expected, Assignors.byName(given).name());
  }

  @Test
  void unknownNameIsRejectedWithTheValidNames() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Assignors.byName("sticky"));
    assertTrue(e.getMessage().contains("'sticky'"), e.getMessage());
    assertTrue(e.getMessage().contains("range, roundrobin, cooperative-sticky"), e.getMessage());
    assertFalse(Assignors.isKnown("sticky"));
    assertFalse(Assignors.isKnown(null));
    assertThrows(NullPointerException.class, () -> Assignors.byName(null));
  }
}
