package io.tributary.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.tributary.broker.BrokerNode;
import io.tributary.gateway.ClientListener;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import sun.misc.Signal;

/**
 * {@code tributary server}: runs one broker node in the foreground until SIGTERM or SIGINT, then shuts it down
 * gracefully (Akka's coordinated shutdown: leave the cluster, close the journals) and exits 0. Before it starts, it
 * warns on stderr about keys of its config file that nothing reads ({@link ServerConfigCheck}), then checks the
 * broker's settings ({@link BrokerNode#checkSettings}): a bad value fails with one line naming its full key, as the
 * file writes it ({@code tributary.broker.message.max.bytes}), exit code 1.
 */
@Command(
    name = "server",
    description = {
      "Run a broker node in the foreground (as Kafka's kafka-server-start).",
      "Prints one line on stdout once the node is ready; logs go to <data-dir>/logs/tributary.log (warnings also to"
          + " stderr). SIGTERM or Ctrl-C shuts it down gracefully and exits 0.",
      "Keys of the config file that look like broker settings but are not read (a typo, a Kafka name) get a warning"
          + " line on stderr each, with the setting meant when it is close; the node starts all the same."
    })
final class ServerCommand implements Callable<Integer> {
  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "HOCON config file (default: ./application.conf if it exists, else the built-in defaults).")
  Path config;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "Data directory: journals, snapshots, logs (overrides tributary.data-dir; default ./data).")
  Path dataDir;

  @Option(
      names = "--port",
      paramLabel = "N",
      description = "Port of the client listener, what clients' --bootstrap-server names (overrides the port of"
          + " tributary.broker.listeners; default 9092; 0 = any free port). Without --cluster-port, the cluster port"
          + " is N + 100 (any free port when N is 0).")
  Integer port;

  @Option(
      names = "--cluster-port",
      paramLabel = "N",
      description = "Port other nodes of the cluster connect to, members only; what their --seed-node names"
          + " (overrides akka.remote.artery.canonical.port; default 9192, or --port + 100; 0 = any free port).")
  Integer clusterPort;

  @Option(
      names = "--seed-node",
      paramLabel = "HOST:PORT",
      description = "A node of the cluster to join, by its cluster port (an Akka seed node, akka://tributary@HOST:PORT;"
          + " repeatable;"
          + " overrides akka.cluster.seed-nodes). List the same seed nodes, in the same order, on every node; the"
          + " first one forms the cluster when no other seed node answers. Without any, the node forms a one-node"
          + " cluster of its own.")
  List<String> seedNodes = new ArrayList<>();

  @Option(
      names = "--node-id",
      paramLabel = "N",
      description = "A number naming this node in its ready and stopping lines (as set by `tributary cluster`).")
  Integer nodeId;

  @Option(
      names = "--members-file",
      paramLabel = "FILE",
      description = "Write this node's view of the cluster membership (members, status, roles, reachability) to"
          + " FILE every second (what `tributary cluster status` reads).")
  Path membersFile;

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    if (port != null && (port < 0 || port > 65535)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--port must be 0..65535, was " + port);
    }
    if (clusterPort != null && (clusterPort < 0 || clusterPort > 65535)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--cluster-port must be 0..65535, was "
          + clusterPort);
    }
    Integer cluster = clusterPort != null ? clusterPort
        : port == null ? null : port == 0 ? Integer.valueOf(0) : Integer.valueOf(port + CLUSTER_PORT_OFFSET);
    if (cluster != null && cluster > 65535) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--port " + port + " would put the cluster port"
          + " at " + cluster + ", above 65535: give --cluster-port");
    }
    if (port != null && cluster != null && port.equals(cluster) && port != 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--port and --cluster-port must differ, both were "
          + port);
    }
    if (nodeId != null && nodeId < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--node-id must be 0 or more, was " + nodeId);
    }
    List<String> seeds = new ArrayList<>();
    for (String seed : seedNodes) {
      try {
        seeds.add(seedNodeAddress(seed));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
    }
    Map<String, Object> overrides = new HashMap<>();
    if (dataDir != null) {
      overrides.put("tributary.data-dir", dataDir.toAbsolutePath().normalize().toString());
    }
    if (cluster != null) {
      overrides.put("akka.remote.artery.canonical.port", cluster);
    }
    if (!seeds.isEmpty()) {
      overrides.put("akka.cluster.seed-nodes", seeds);
    }
    if (config != null) {
      CliException.requireReadableFile(spec.commandLine(), "--config", config);
    }
    Config nodeConfig;
    try {
      if (port != null) { // the host of the configured listener, or of the built-in default
        String host = BrokerNode.config(config, overrides).getString(ClientListener.LISTENERS_KEY).trim();
        int colon = host.lastIndexOf(':');
        host = colon > 0 ? host.substring(0, colon) : "127.0.0.1";
        overrides.put(ClientListener.LISTENERS_KEY, (host.contains(":") && !host.startsWith("[") ? "[" + host + "]"
            : host) + ":" + port);
      }
      nodeConfig = BrokerNode.config(config, overrides);
    } catch (ConfigException e) {
      throw new CliException("Invalid configuration: " + e.getMessage(), e);
    }
    Path configFile = config != null ? config
        : Files.isRegularFile(Path.of("application.conf")) ? Path.of("application.conf") : null;
    if (configFile != null) {
      PrintWriter err = spec.commandLine().getErr();
      ServerConfigCheck.warnings(configFile, nodeConfig).forEach(err::println);
      err.flush();
    }
    try {
      BrokerNode.checkSettings(nodeConfig);
    } catch (ConfigException e) {
      // e.g. "server.conf: 3: tributary.broker.message.max.bytes has type STRING rather than NUMBER"
      throw new CliException("Invalid configuration: " + e.getMessage(), e);
    }
    checkPortFree(nodeConfig);
    Path data = Path.of(nodeConfig.getString("tributary.data-dir"));
    Path logFile = Logging.useServerLogging(data.resolve("logs"));

    MembershipFile.Writer membership = null;
    if (membersFile != null) {
      membership = MembershipFile.Writer.create(membersFile.toAbsolutePath().normalize());
    }
    BrokerNode node;
    try {
      node = BrokerNode.start(nodeConfig);
    } catch (RuntimeException e) {
      if (membership != null) {
        membership.close();
      }
      if (e instanceof BrokerNode.DataDirInUseException) {
        throw new CliException(e.getMessage(), e); // a plain one-line error, not an internal failure
      }
      throw e;
    }
    if (membership != null) {
      membership.start(node.system());
    }
    String nodeName = nodeId == null ? "" : " (node " + nodeId + ")";
    CompletableFuture<String> stopSignal = new CompletableFuture<>();
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), s -> stopSignal.complete("SIG" + s.getName()));
    }
    PrintWriter out = spec.commandLine().getOut();
    out.println("Tributary broker started: bootstrap " + node.bootstrapServer() + ", cluster port "
        + node.clusterAddress() + ", data dir " + data
        + (logFile == null ? "" : ", log " + logFile) + (nodeId == null ? "" : ", node " + nodeId));
    out.flush();

    CompletableFuture.anyOf(stopSignal, node.whenTerminated().toCompletableFuture()).join();
    if (stopSignal.isDone()) {
      PrintWriter err = spec.commandLine().getErr();
      err.println("Tributary broker" + nodeName + " stopping (" + stopSignal.join() + ")");
      err.flush();
    }
    node.close();
    if (membership != null) {
      membership.close();
    }
    return Main.EXIT_OK;
  }

  /**
   * The Akka address of a {@code --seed-node}: {@code HOST:PORT} becomes {@code akka://tributary@HOST:PORT}; a full
   * {@code akka://SYSTEM@HOST:PORT} address is kept as it is.
   *
   * @throws IllegalArgumentException if it is neither
   */
  static String seedNodeAddress(String seed) {
    String s = seed == null ? "" : seed.trim();
    String hostPort = s;
    String prefix = "akka://" + BrokerNode.SYSTEM_NAME + "@";
    if (s.startsWith("akka://")) {
      int at = s.indexOf('@');
      if (at < 0 || !s.substring("akka://".length(), at).matches("[A-Za-z0-9][A-Za-z0-9_-]*")) {
        throw new IllegalArgumentException("--seed-node must be HOST:PORT or akka://SYSTEM@HOST:PORT, was '" + seed
            + "'");
      }
      prefix = s.substring(0, at + 1);
      hostPort = s.substring(at + 1);
    }
    int colon = hostPort.lastIndexOf(':');
    boolean ok = colon > 0 && !hostPort.substring(0, colon).matches(".*[\\s/@].*")
        && hostPort.substring(colon + 1).matches("\\d{1,5}");
    if (ok) {
      int p = Integer.parseInt(hostPort.substring(colon + 1));
      ok = p >= 1 && p <= 65535;
    }
    if (!ok) {
      throw new IllegalArgumentException("--seed-node must be HOST:PORT (port 1..65535) or akka://SYSTEM@HOST:PORT,"
          + " was '" + seed + "'");
    }
    return prefix + hostPort;
  }

  /**
   * Fails with one clear line when the node's port is taken (Akka would log a bind stack trace and then fail). The
   * port is free again when this returns; a race with another process is possible but harmless (Akka then fails).
   */
  private static void checkPortFree(Config config) {
    String bindHost = config.getString("akka.remote.artery.bind.hostname");
    String host = bindHost.isEmpty() ? config.getString("akka.remote.artery.canonical.hostname") : bindHost;
    String bindPort = config.getString("akka.remote.artery.bind.port");
    int port = bindPort.isEmpty() ? config.getInt("akka.remote.artery.canonical.port") : Integer.parseInt(bindPort);
    checkPortFree(host, port, "--cluster-port");
    ClientListener.Settings listener;
    try {
      listener = ClientListener.Settings.create(config);
    } catch (IllegalArgumentException e) {
      throw new CliException("Invalid configuration: " + e.getMessage(), e);
    }
    if (listener != null) {
      checkPortFree(listener.host(), listener.port(), "--port");
    }
  }

  private static void checkPortFree(String host, int port, String option) {
    if (port == 0) {
      return;
    }
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new CliException("Cannot listen on " + host + ":" + port + " (" + e.getMessage()
          + "); is another broker running? Choose another port with " + option, e);
    }
  }

  /** Without {@code --cluster-port}, the cluster port is {@code --port} plus this. */
  static final int CLUSTER_PORT_OFFSET = 100;
}
