package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.TopicNames;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The internal topic of committed offsets cannot be deleted (it would take every group's offsets with it) nor written
 * by clients (their records would be read as commits); only the group coordinator writes it.
 */
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

  @Test
  void clientsCannotAppendToTheOffsetsTopic() {
    try (BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of())) {
      Gw gw = new Gw(node);
      long before = gw.status(TopicNames.CONSUMER_OFFSETS, 0).logEndOffset();
      ProduceResponse refused = gw.produce(TopicNames.CONSUMER_OFFSETS, 0, Gw.batch("garbage", 2, 1000));
      assertEquals(ErrorCode.INVALID_TOPIC_EXCEPTION, refused.error());
      assertEquals("Cannot append to internal topic __consumer_offsets", refused.errorMessage());
      assertEquals(before, gw.status(TopicNames.CONSUMER_OFFSETS, 0).logEndOffset(), "nothing was appended");

      assertEquals(ErrorCode.NONE, gw.create("ordinary", 1, Map.of()).error());
      assertEquals(ErrorCode.NONE, gw.produce("ordinary", 0, Gw.batch("x", 1, 1000)).error(), "others are written");
    }
  }
}
