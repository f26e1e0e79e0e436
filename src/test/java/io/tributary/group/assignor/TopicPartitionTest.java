package io.tributary.group.assignor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TopicPartitionTest {

  @Test
  void ordersByTopicThenPartitionNumberNotByString() {
    List<TopicPartition> list = new ArrayList<>(List.of(
        new TopicPartition("b", 0), new TopicPartition("a", 10), new TopicPartition("a", 2)));
    Collections.sort(list);
    assertEquals(List.of(new TopicPartition("a", 2), new TopicPartition("a", 10), new TopicPartition("b", 0)), list);
  }

  @Test
  void toStringIsKafkaNotation() {
    assertEquals("orders-3", new TopicPartition("orders", 3).toString());
  }

  @Test
  void rejectsNullTopicAndNegativePartition() {
    assertThrows(NullPointerException.class, () -> new TopicPartition(null, 0));
    assertThrows(IllegalArgumentException.class, () -> new TopicPartition("t", -1));
  }

  @Test
  void subscriptionCopiesItsCollections() {
    Set<String> topics = new HashSet<>(Set.of("t"));
    Set<TopicPartition> owned = new HashSet<>(Set.of(new TopicPartition("t", 0)));
    MemberSubscription m = new MemberSubscription("m", null, topics, owned);
    topics.add("u");
    owned.clear();
    assertEquals(Set.of("t"), m.topics());
    assertEquals(Set.of(new TopicPartition("t", 0)), m.ownedPartitions());
    assertThrows(UnsupportedOperationException.class, () -> m.topics().add("v"));
    assertNull(m.groupInstanceId());
    assertEquals(Set.of(), new MemberSubscription("x", Set.of("t")).ownedPartitions());
    assertEquals(Set.of(new TopicPartition("t", 1)),
        m.withOwnedPartitions(Set.of(new TopicPartition("t", 1))).ownedPartitions());
    assertThrows(NullPointerException.class, () -> new MemberSubscription(null, Set.of()));
  }
}
