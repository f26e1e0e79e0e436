package io.tributary.broker;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/** Starts single-node brokers for tests: free Artery port, fresh data dir, Akka's serialization checks on. */
public final class TestNodes {
  private TestNodes() {}

  /** A fresh temporary data directory. */
  public static Path tempDataDir() {
    try {
      return Files.createTempDirectory("tributary-test-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Config of a test node on a free port with {@code dataDir}, plus {@code extra} overrides. */
  public static Config config(Path dataDir, Map<String, Object> extra) {
    Map<String, Object> o = new HashMap<>();
    o.put("tributary.data-dir", dataDir.toString());
    o.put("akka.remote.artery.canonical.port", 0);
    o.put("tributary.broker.listeners", "127.0.0.1:0");
    // every message is serialized even between local actors, so every message type is proven to cross JVMs
    o.put("akka.actor.serialize-messages", "on");
    o.put("akka.loglevel", "WARNING");
    o.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    o.putAll(extra);
    return BrokerNode.config(null, o);
  }

  private static final Map<Path, Integer> PORTS = new java.util.concurrent.ConcurrentHashMap<>();
  private static final Map<Path, String> LISTENERS = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Starts a node with {@code dataDir}. A node restarted on a data dir it used before gets the same cluster port and
   * client listener again: a node's replicas are named by its address, so a node that came back elsewhere would be a
   * new, empty broker, and its clients know it by its listener.
   */
  public static BrokerNode start(Path dataDir, Map<String, Object> extra) {
    Map<String, Object> o = new HashMap<>(extra);
    Integer port = PORTS.get(dataDir.toAbsolutePath());
    if (port != null && !o.containsKey("akka.remote.artery.canonical.port")) {
      o.put("akka.remote.artery.canonical.port", port);
    }
    String listener = LISTENERS.get(dataDir.toAbsolutePath());
    if (listener != null && !o.containsKey("tributary.broker.listeners")) {
      o.put("tributary.broker.listeners", listener);
    }
    BrokerNode node = BrokerNode.start(config(dataDir, o));
    PORTS.put(dataDir.toAbsolutePath(), (Integer) node.system().address().getPort().get());
    LISTENERS.put(dataDir.toAbsolutePath(), node.bootstrapServer());
    return node;
  }

  /** The port of {@code node}'s client listener (what remote clients connect to). */
  public static int clientPort(BrokerNode node) {
    String b = node.bootstrapServer();
    return Integer.parseInt(b.substring(b.lastIndexOf(':') + 1));
  }
}
