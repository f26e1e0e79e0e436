package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.TopicNames;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The internal topic of committed offsets cannot be deleted (it would take every group's offsets with it). */
class InternalTopicTest {

  @Test
  void deletingTheOffsetsTopicIsRefusedAndAnOrdinaryTopicIsDeleted() {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of())) {
      Gw gw = new Gw(node);
      AdminResponse refused = gw.delete(TopicNames.CONSUMER_OFFSETS);
      assertEquals(ErrorCode.INVALID_REQUEST, refused.error());
      assertTrue(refused.errorMessage().contains("internal topic"), refused.errorMessage());

      assertEquals(ErrorCode.NONE, gw.create("ordinary", 1, Map.of()).error());
      assertEquals(ErrorCode.NONE, gw.delete("ordinary").error(), "other topics are deleted as before");
    }
  }
}
