package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.spi.FilterReply;
import org.junit.jupiter.api.Test;

class ClientDisconnectLogFilterTest {

  private static FilterReply decide(String logger, Level level, String message) {
    LoggerContext context = new LoggerContext();
    LoggingEvent event = new LoggingEvent(
        logger, context.getLogger(logger), level, message, null, null);
    return new ClientDisconnectLogFilter().decide(event);
  }

  @Test
  void aClientConnectionThatEndedIsKeptOffStderr() {
    assertEquals(FilterReply.DENY, decide("akka.stream.Materializer", Level.WARN,
        "[outbound connection to [akka://tributary-client-5f3a9c01d2e4b867@127.0.0.1:38271], control stream]"
            + " Upstream failed, cause: StreamTcpException: The connection closed with error: Connection reset"));
  }

  @Test
  void aClientKilledWithoutClosingIsKeptOffStderr() {
    assertEquals(FilterReply.DENY, decide("akka.cluster.Cluster", Level.WARN,
        "Detected unreachable: [akka://tributary-client-5f3a9c01d2e4b867@127.0.0.1:37345]"));
    assertEquals(FilterReply.DENY, decide("akka.remote.artery.Association", Level.WARN,
        "Association to [akka://tributary-client-5f3a9c01d2e4b867@127.0.0.1:37345] with UID [1] is irrecoverably"
            + " failed. UID is now quarantined and all messages to this UID will be delivered to dead letters."));
  }

  @Test
  void brokerConnectionsAndOtherWarningsPass() {
    assertEquals(FilterReply.NEUTRAL, decide("akka.cluster.Cluster", Level.WARN,
        "Detected unreachable: [akka://tributary@127.0.0.1:29351]"));
    assertEquals(FilterReply.NEUTRAL, decide("io.tributary.log.PartitionLeader", Level.WARN,
        "reply to akka://tributary-client-5f3a9c01d2e4b867@127.0.0.1:1 failed"));
    assertEquals(FilterReply.NEUTRAL, decide("akka.stream.Materializer", Level.WARN,
        "[outbound connection to [akka://tributary@127.0.0.1:29351], message stream] Upstream failed, cause:"
            + " StreamTcpException: The connection has been aborted"));
    assertEquals(FilterReply.NEUTRAL, decide("akka.stream.Materializer", Level.ERROR,
        "[outbound connection to [akka://tributary-client-5f3a9c01d2e4b867@127.0.0.1:38271]] failed badly"));
  }
}
