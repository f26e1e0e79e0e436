package io.tributary.testkit;

import io.tributary.broker.BrokerNode;
import io.tributary.client.TributaryClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * A local multi-node Tributary cluster for an application's own tests (JUnit or any other): {@code n} broker nodes in
 * the test's JVM, each an ActorSystem of its own on 127.0.0.1 with a free cluster port, a free client listener port
 * and a data directory of its own under one temporary directory. A test gets the bootstrap string of every node,
 * connects clients, kills, stops and restarts nodes, and closes everything, as Kafka's {@code EmbeddedKafkaCluster}
 * (Kafka Streams' integration tests) or Testcontainers' Kafka cluster are used:
 *
 * <pre>{@code
 * try (TributaryTestCluster cluster = TributaryTestCluster.start(3);
 *      TributaryClient client = TributaryClient.connect(cluster.bootstrapServers())) {
 *   client.admin().createTopic("orders", 3, (short) 3, Map.of("min.insync.replicas", "2"));
 *   cluster.kill(1);      // as kill -9 looks to the other nodes
 *   cluster.restart(1);   // same ports, same data directory
 * }
 * }</pre>
 *
 * <p>Nodes are numbered from {@code 0} to {@code n - 1} (the CLI's local clusters number theirs from 1). Node {@code
 * 0} is started first and the others join it; a node restarted joins the nodes running then (or
 * itself when none is). A node keeps its cluster port, its listener port and its data directory across restarts, as
 * a broker keeps its identity: its replicas are named by its cluster address. Settings: Tributary's standalone
 * defaults ({@code tributary-broker.conf}), then the {@code config} given to {@link #start(int, Map)} for every node
 * (Kafka's broker keys under {@code tributary.broker}, or Akka's), with Akka's JMX beans of several nodes in one JVM
 * allowed. Nodes do not read {@code ./application.conf}.
 *
 * <p>{@link #kill} stops a node without coordinated shutdown (see {@link BrokerNode#kill}); {@link #stop} stops it
 * as {@code SIGTERM} does (controlled shutdown, then it leaves). {@link #close} stops every running node, node 0
 * last, and deletes the directory.
 *
 * <p>Thread-safe (methods are synchronized); a start or restart blocks until the node is up, has the controller and
 * group coordinator in view, and serves (up to 60 s per node).
 */
public final class TributaryTestCluster implements AutoCloseable {

  private final Path root;
  private final Path configFile;
  private final Map<String, Object> config;
  private final BrokerNode[] nodes;
  private final int[] clusterPorts;
  private final String[] listeners;
  private boolean closed;

  private TributaryTestCluster(int size, Map<String, Object> config) throws IOException {
    this.root = Files.createTempDirectory("tributary-test-cluster-");
    this.configFile = Files.writeString(root.resolve("nodes.conf"), "# settings are given to the test kit\n");
    this.config = new HashMap<>(config);
    this.nodes = new BrokerNode[size];
    this.clusterPorts = new int[size];
    this.listeners = new String[size];
  }

  /** {@code start(nodes, Map.of())}. */
  public static TributaryTestCluster start(int nodes) {
    return start(nodes, Map.of());
  }

  /**
   * Starts {@code nodes} broker nodes: node 0, then the others joining it, in parallel.
   *
   * @param nodes how many, at least 1
   * @param config settings for every node, by full key ({@code "tributary.broker.default.replication.factor"}, {@code
   *     "akka.cluster.split-brain-resolver.stable-after"}); not the ports or the data directory, which the kit picks
   * @return the running cluster; close it
   * @throws IllegalArgumentException if {@code nodes < 1} or a setting is invalid (naming its key)
   * @throws IllegalStateException if a node did not start (every node started is stopped again)
   * @throws UncheckedIOException if the temporary directory cannot be made
   */
  public static TributaryTestCluster start(int nodes, Map<String, ?> config) {
    if (nodes < 1) {
      throw new IllegalArgumentException("a test cluster needs at least 1 node, was " + nodes);
    }
    TributaryTestCluster cluster;
    try {
      cluster = new TributaryTestCluster(nodes, new HashMap<>(config));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot make the test cluster's temporary directory", e);
    }
    try {
      cluster.startNode(0);
      List<CompletableFuture<Void>> joining = new ArrayList<>();
      for (int i = 1; i < nodes; i++) {
        int node = i;
        joining.add(CompletableFuture.runAsync(() -> cluster.startNode(node)));
      }
      RuntimeException failed = null;
      for (CompletableFuture<Void> j : joining) {
        try {
          j.join();
        } catch (RuntimeException e) {
          failed = failed == null ? e : failed;
        }
      }
      if (failed != null) {
        throw failed.getCause() instanceof RuntimeException r ? r : failed;
      }
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  /** How many nodes the cluster has (running or not). */
  public int size() {
    return nodes.length;
  }

  /**
   * The client listener of every node, {@code "127.0.0.1:p0,127.0.0.1:p1,..."}: what {@code TributaryClient.connect}
   * and the CLI's {@code --bootstrap-server} take. Stopped nodes are listed too (a client moves past them); a node's
   * address does not change when it restarts.
   */
  public synchronized String bootstrapServers() {
    if (closed) {
      throw new IllegalStateException("the test cluster is closed");
    }
    List<String> all = new ArrayList<>();
    for (String l : listeners) {
      if (l != null) {
        all.add(l);
      }
    }
    return String.join(",", all);
  }

  /** Node {@code node}'s client listener, {@code 127.0.0.1:port}. */
  public synchronized String bootstrapServer(int node) {
    check(node);
    return listeners[node];
  }

  /**
   * The running node {@code node} (its ActorSystem, its {@code Tributary} extension, its in-process client).
   *
   * @throws IllegalStateException if it is not running
   */
  public synchronized BrokerNode node(int node) {
    check(node);
    if (nodes[node] == null) {
      throw new IllegalStateException("node " + node + " of the test cluster is not running");
    }
    return nodes[node];
  }

  /** Whether node {@code node} runs. */
  public synchronized boolean isRunning(int node) {
    check(node);
    return nodes[node] != null;
  }

  /**
   * Stops node {@code node} as a crash looks to the others ({@link BrokerNode#kill}): no controlled shutdown, no
   * leave; the others down it after the split brain resolver's {@code stable-after} (7 s) and elect new leaders.
   *
   * @throws IllegalStateException if it is not running
   */
  public synchronized void kill(int node) {
    node(node).kill();
    nodes[node] = null;
  }

  /**
   * Stops node {@code node} gracefully, as {@code SIGTERM}: its leaderships move to in-sync replicas on other nodes
   * (controlled shutdown), then it leaves the cluster.
   *
   * @throws IllegalStateException if it is not running
   */
  public synchronized void stop(int node) {
    node(node).close();
    nodes[node] = null;
  }

  /**
   * Starts node {@code node} again with its ports and data directory: it joins the nodes running now (itself when
   * none is), recovers its journals and catches up as a follower.
   *
   * @throws IllegalStateException if it is running, or did not start
   */
  public synchronized void restart(int node) {
    check(node);
    if (nodes[node] != null) {
      throw new IllegalStateException("node " + node + " of the test cluster is running: stop or kill it first");
    }
    startNode(node);
  }

  /** Stops every running node (node 0 last) and deletes the cluster's temporary directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int i = nodes.length - 1; i >= 0; i--) {
      if (nodes[i] != null) {
        try {
          nodes[i].close();
        } catch (RuntimeException e) {
          // go on stopping the others
        }
        nodes[i] = null;
      }
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // a temporary directory left behind
    }
  }

  private void check(int node) {
    if (node < 0 || node >= nodes.length) {
      throw new IllegalArgumentException("no node " + node + " in a test cluster of " + nodes.length);
    }
    if (closed) {
      throw new IllegalStateException("the test cluster is closed");
    }
  }

  /** Starts node {@code i}; not synchronized on the whole start, so that nodes start in parallel. */
  private void startNode(int i) {
    Map<String, Object> o = new HashMap<>(config);
    List<String> seeds = new ArrayList<>();
    synchronized (this) {
      for (int k = 0; k < nodes.length; k++) {
        if (k != i && nodes[k] != null) {
          seeds.add(nodes[k].system().address().toString());
        }
      }
      o.put("tributary.data-dir", root.resolve("node-" + i).toString());
      o.put("akka.remote.artery.canonical.hostname", "127.0.0.1");
      o.put("akka.remote.artery.canonical.port", clusterPorts[i]);
      o.put("akka.remote.artery.bind.hostname", "127.0.0.1");
      o.put("tributary.broker.listeners", listeners[i] == null ? "127.0.0.1:0" : listeners[i]);
      o.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
      o.put("akka.cluster.seed-nodes", seeds);
    }
    BrokerNode started = BrokerNode.start(BrokerNode.config(configFile, o));
    synchronized (this) {
      if (closed) {
        started.close();
        throw new IllegalStateException("the test cluster was closed while node " + i + " started");
      }
      nodes[i] = started;
      clusterPorts[i] = started.system().address().getPort().orElseThrow();
      listeners[i] = started.bootstrapServer();
    }
  }

  /**
   * A new client connected to every node ({@link #bootstrapServers}); the caller closes it.
   *
   * @throws IllegalStateException if the cluster is closed
   */
  public TributaryClient connect() {
    return TributaryClient.connect(bootstrapServers());
  }
}
