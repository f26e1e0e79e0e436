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
        "[outbound connection to [akka://tributary-client@127.0.0.1:38271], control stream] Upstream failed, cause:"
            + " StreamTcpException: The connection closed with error: Connection reset"));
  }

  @Test
  void brokerConnectionsAndOtherWarningsPass() {
    assertEquals(FilterReply.NEUTRAL, decide("akka.stream.Materializer", Level.WARN,
        "[outbound connection to [akka://tributary@127.0.0.1:29351], message stream] Upstream failed, cause:"
            + " StreamTcpException: The connection has been aborted"));
    assertEquals(FilterReply.NEUTRAL, decide("akka.remote.RemoteWatcher", Level.WARN,
        "Detected unreachable: [akka://tributary-client@127.0.0.1:38271]"));
    assertEquals(FilterReply.NEUTRAL, decide("akka.stream.Materializer", Level.ERROR,
        "[outbound connection to [akka://tributary-client@127.0.0.1:38271]] failed badly"));
  }
}
