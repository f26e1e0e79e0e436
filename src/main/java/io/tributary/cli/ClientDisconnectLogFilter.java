package io.tributary.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import io.tributary.client.TributaryClient;

/**
 * Keeps a broker's stderr free of Akka's warnings about a client that went away: its connection's streams ({@code
 * WARN akka.stream.Materializer - [outbound connection to [akka://tributary-client-ID@127.0.0.1:PORT], message stream]
 * Upstream failed, cause: StreamTcpException: The connection closed with error: Connection reset}) and, for a client
 * killed without closing, the failure detector and quarantine ({@code akka.cluster.Cluster - Detected unreachable:
 * [akka://tributary-client-ID@...]}, {@code akka.remote.artery.Association - Association to [akka://tributary-client-ID@...]
 * ... is irrecoverably failed}). A client JVM that exits (every CLI command, every application that stops or
 * crashes) is routine for a broker, not a warning for the person watching it. The broker's log file still has them
 * (this filter sits on the stderr appender of {@code logback-server.xml} only). Warnings from Akka's loggers that name
 * no client address (connections between brokers) and every other warning pass.
 *
 * <p>Thread-safe (stateless); called by Logback on the logging thread.
 */
public final class ClientDisconnectLogFilter extends Filter<ILoggingEvent> {

  private static final String AKKA = "akka.";
  private static final String CLIENT_ADDRESS = "akka://" + TributaryClient.CLIENT_SYSTEM_NAME + "-";

  @Override
  public FilterReply decide(ILoggingEvent event) {
    if (event.getLevel() == Level.WARN
        && event.getLoggerName() != null
        && event.getLoggerName().startsWith(AKKA)
        && event.getFormattedMessage() != null
        && event.getFormattedMessage().contains(CLIENT_ADDRESS)) {
      return FilterReply.DENY;
    }
    return FilterReply.NEUTRAL;
  }
}
