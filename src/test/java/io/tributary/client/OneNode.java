package io.tributary.client;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.broker.TestNodes;
import java.util.Map;

/**
 * A single-node broker in this JVM on a free port, a remote {@link TributaryClient} connected to it over TCP
 * (request timeout 20 s), and a {@link Gw} for asking the broker directly: the fixture of the client tests that need a
 * real broker. {@link #close()} closes the client, then the node.
 */
final class OneNode implements AutoCloseable {
  final BrokerNode node;
  final TributaryClient client;
  final Gw gw;

  private OneNode(BrokerNode node, TributaryClient client) {
    this.node = node;
    this.client = client;
    this.gw = new Gw(node);
  }

  /** Starts the node (fresh data dir) and connects the client. */
  static OneNode start() {
    BrokerNode node = TestNodes.start(TestNodes.tempDataDir(), Map.of());
    try {
      int port = TestNodes.clientPort(node);
      return new OneNode(node,
          TributaryClient.connect("127.0.0.1:" + port, Map.of(ClientConfig.REQUEST_TIMEOUT_MS, 20_000)));
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      client.close();
    } finally {
      node.close();
    }
  }
}
