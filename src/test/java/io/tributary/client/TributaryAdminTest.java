package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.typed.ActorRef;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.TopicDescription;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The admin client against an in-memory {@link FakeGateway} (no broker). */
class TributaryAdminTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void shutdown() {
    testKit.shutdownTestKit();
  }

  private static FakeGateway fake;

  private static TributaryClient client(Map<String, Object> config) {
    fake = new FakeGateway();
    ActorRef<ClientRequest> gateway = testKit.spawn(fake.behavior());
    return TributaryClient.embedded(testKit.system(), gateway, config);
  }

  @Test
  void createDescribeListDelete() {
    try (TributaryClient client = client(Map.of());
        Admin admin = client.admin()) {
      TopicDescription created = admin.createTopic("orders", 3, (short) 1, Map.of());
      assertEquals("orders", created.name());
      assertEquals(3, created.partitions().size());
      admin.createTopic("audit", 1, (short) -1, Map.of("retention.ms", "1000"));
      assertEquals(List.of("audit", "orders"), admin.listTopics());
      assertEquals(3, admin.describeTopics(List.of("orders")).get(0).partitions().size());
      assertEquals(2, admin.describeTopics(List.of()).size());
      admin.deleteTopic("audit");
      assertEquals(List.of("orders"), admin.listTopics());
    }
  }

  @Test
  void brokerErrorsAreThrownWithTheirCodeAndNotRetried() {
    try (TributaryClient client = client(Map.of());
        Admin admin = client.admin()) {
      admin.createTopic("once", 1, (short) 1, Map.of());
      assertCode(ErrorCode.TOPIC_ALREADY_EXISTS, () -> admin.createTopic("once", 1, (short) 1, Map.of()));
      assertCode(ErrorCode.INVALID_PARTITIONS, () -> admin.createTopic("zero", 0, (short) 1, Map.of()));
      assertCode(ErrorCode.INVALID_TOPIC_EXCEPTION, () -> admin.createTopic("bad/name", 1, (short) 1, Map.of()));
      assertCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, () -> admin.deleteTopic("nope"));
      assertCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, () -> admin.describeTopics(List.of("nope")));
      assertEquals(6, fake.countOf(AdminRequest.class), "one request per call");
    }
  }

  @Test
  void retriableErrorsAreRetriedUntilTheyClear() {
    try (TributaryClient client = client(Map.of(ClientConfig.RETRY_BACKOFF_MS, 10));
        Admin admin = client.admin()) {
      fake.adminFaults.add(ErrorCode.REQUEST_TIMED_OUT);
      fake.adminFaults.add(ErrorCode.LEADER_NOT_AVAILABLE);
      assertEquals(3, admin.createTopic("flaky", 3, (short) 1, Map.of()).partitions().size());
      assertEquals(3, fake.countOf(AdminRequest.class));
    }
  }

  @Test
  void retriableErrorsGiveUpAfterDefaultApiTimeout() {
    try (TributaryClient client =
            client(Map.of(ClientConfig.RETRY_BACKOFF_MS, 10, ClientConfig.DEFAULT_API_TIMEOUT_MS, 200));
        Admin admin = client.admin()) {
      for (int i = 0; i < 1000; i++) {
        fake.adminFaults.add(ErrorCode.REQUEST_TIMED_OUT);
      }
      TributaryException e = assertThrows(TributaryException.class, admin::listTopics);
      assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode(), e.getMessage());
      assertTrue(e.getMessage().startsWith("REQUEST_TIMED_OUT: list topics: no success within"
          + " default.api.timeout.ms=200 ms; last error: "), e.getMessage());
    }
  }

  /**
   * The broker answered a retriable error, then nothing until default.api.timeout.ms ran out: the give-up message
   * names the broker's last answer, not only the last attempt's timeout (cut to what was left of the time).
   */
  @Test
  void theGiveUpMessageNamesTheBrokersLastAnswer() {
    try (TributaryClient client = client(Map.of(ClientConfig.RETRY_BACKOFF_MS, 10,
            ClientConfig.REQUEST_TIMEOUT_MS, 300, ClientConfig.DEFAULT_API_TIMEOUT_MS, 1000));
        Admin admin = client.admin()) {
      fake.adminFaults.add(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      fake.adminDrops.set(1000);
      TributaryException e = assertThrows(TributaryException.class, admin::listTopics);
      assertEquals(ErrorCode.REQUEST_TIMED_OUT, e.errorCode(), e.getMessage());
      assertTrue(e.getMessage().startsWith("REQUEST_TIMED_OUT: list topics: no success within"
          + " default.api.timeout.ms=1000 ms; last answer from the broker: COORDINATOR_NOT_AVAILABLE: injected;"
          + " last error: "), e.getMessage());
    }
  }

  @Test
  void aClosedAdminRefusesCalls() {
    try (TributaryClient client = client(Map.of())) {
      Admin admin = client.admin();
      admin.close();
      admin.close();
      assertThrows(IllegalStateException.class, admin::listTopics);
    }
  }

  @Test
  void aClosedClientRefusesNewResourcesAndClosesItsOwn() {
    TributaryClient client = client(Map.of());
    Admin admin = client.admin();
    client.close();
    assertThrows(IllegalStateException.class, admin::listTopics);
    assertThrows(IllegalStateException.class, client::admin);
    client.close();
  }

  private static void assertCode(ErrorCode code, Runnable call) {
    TributaryException e = assertThrows(TributaryException.class, call::run);
    assertEquals(code, e.errorCode(), e.getMessage());
  }
}
