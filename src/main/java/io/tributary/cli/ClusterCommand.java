package io.tributary.cli;

import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary cluster start|status|stop|kill|restart}: a local cluster of broker JVMs on 127.0.0.1 for tests and
 * experiments, managed through the pid files in its data directory (see {@link LocalCluster}).
 */
@Command(
    name = "cluster",
    description = {
      "Run a local multi-node cluster: several broker JVMs on 127.0.0.1, two ports and a data dir each"
          + " (node I's client listener on port P+I-1, its cluster port P+I+99, data in D/node-I), seed nodes wired,"
          + " the Split Brain Resolver (keep-majority) on.",
      "Process ids are kept in D/node-I/pid and only those processes are ever signalled.",
      "",
      "Create topics with --replication-factor 3 to survive a node failure; give clients every node's address."
          + " With keep-majority, a node left alone (the other two down) shuts itself down; start the others again,"
          + " node 1 first when none runs (only node 1, the first seed node, forms a cluster)."
    },
    subcommands = {
      ClusterCommand.Start.class,
      ClusterCommand.Status.class,
      ClusterCommand.Stop.class,
      ClusterCommand.Kill.class,
      ClusterCommand.Restart.class
    })
final class ClusterCommand implements Runnable {
  @Spec CommandLine.Model.CommandSpec spec;

  /** With no subcommand: a usage error. */
  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: choose one of "
        + String.join(", ", spec.subcommands().keySet()));
  }

  /** {@code --data-dir D} of every cluster command. */
  static final class DataDirOption {
    @Option(
        names = "--data-dir",
        paramLabel = "DIR",
        defaultValue = "cluster-data",
        description = "The cluster's directory: cluster.properties, and node-I/ per node (data, logs, pid,"
            + " server.out). Default: ${DEFAULT-VALUE}.")
    Path dataDir;

    Path dir() {
      return dataDir.toAbsolutePath().normalize();
    }
  }

  /** {@code --node I} of kill and restart, checked against the cluster's size. */
  static int checkNode(CommandLine cl, LocalCluster cluster, int node) {
    if (node < 1 || node > cluster.nodes()) {
      throw new CommandLine.ParameterException(cl, "--node must be 1.." + cluster.nodes() + " (the cluster in "
          + cluster.dir() + " has " + cluster.nodes() + " nodes), was " + node);
    }
    return node;
  }

  static void checkTimeout(CommandLine cl, int seconds) {
    if (seconds < 1) {
      throw new CommandLine.ParameterException(cl, "--timeout must be at least 1 second, was " + seconds);
    }
  }

  /** Fails with one line when a node's port is taken (e.g. by a broker of another cluster). */
  static void checkPortFree(LocalCluster cluster, int node) {
    for (int port : new int[] {cluster.port(node), cluster.clusterPort(node)}) {
      try (ServerSocket socket = new ServerSocket()) {
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getByName(LocalCluster.HOST), port));
      } catch (IOException e) {
        throw new CliException("Port " + LocalCluster.HOST + ":" + port + " of node " + node + " is in use ("
            + e.getMessage() + "); stop what listens there or choose another --base-port");
      }
    }
  }

  /** A running cluster refuses a new start in the same directory. */
  static void refuseIfRunning(LocalCluster cluster) {
    Map<Integer, Long> running = cluster.runningNodes();
    if (!running.isEmpty()) {
      throw new CliException("A cluster is already running in " + cluster.dir() + ": "
          + running.entrySet().stream().map(e -> "node " + e.getKey() + " (pid " + e.getValue() + ")")
              .collect(Collectors.joining(", "))
          + ". Stop it first: tributary cluster stop --data-dir " + cluster.dir());
    }
  }

  /** The first line of a (multi-line) message. */
  static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }

  /** Removes a shutdown hook unless the JVM is already shutting down (then it runs, which is what we want). */
  static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // shutting down
    }
  }

  // ------------------------------------------------------------------ start

  @Command(
      name = "start",
      description = {
        "Start N broker JVMs on 127.0.0.1 (node I on port P+I-1, data in D/node-I, output in D/node-I/server.out),"
            + " wait until every node is ready and the cluster has N Up members, print the bootstrap address and exit;"
            + " the nodes keep running in the background. Refused while nodes of D still run; interrupted (Ctrl-C), it"
            + " stops the nodes it started.",
        "An existing D is reused: the nodes start on their earlier data."
      })
  static final class Start implements Callable<Integer> {
    @Option(names = "--nodes", required = true, paramLabel = "N", description = "Number of nodes (1..64).")
    int nodes;

    @Option(
        names = "--base-port",
        paramLabel = "P",
        defaultValue = "9092",
        description = "Client port of node 1; node I gets P+I-1 for clients and P+I+99 for the other nodes (its"
            + " cluster port). Default: ${DEFAULT-VALUE}.")
    int basePort;

    @Mixin DataDirOption dataDir;

    @Option(
        names = "--config",
        paramLabel = "FILE",
        description = "A HOCON config file for every node (as server --config).")
    Path config;

    @Option(
        names = "--jvm-option",
        paramLabel = "OPT",
        description = "An extra JVM flag for every node, e.g. --jvm-option=-Xmx1g (repeatable).")
    List<String> jvmOptions = new ArrayList<>();

    @Option(
        names = "--timeout",
        paramLabel = "SECONDS",
        defaultValue = "180",
        description = "How long to wait for the cluster to be up. Default: ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @Spec CommandLine.Model.CommandSpec spec;

    /** Usage errors, before anything is touched. */
    LocalCluster validate() {
      CommandLine cl = spec.commandLine();
      if (nodes < 1 || nodes > 64) {
        throw new CommandLine.ParameterException(cl, "--nodes must be 1..64, was " + nodes);
      }
      int offset = ServerCommand.CLUSTER_PORT_OFFSET;
      if (basePort < 1 || basePort + nodes - 1 + offset > 65535) {
        throw new CommandLine.ParameterException(cl, "--base-port must be 1.." + (65535 - nodes + 1 - offset)
            + " for " + nodes + " nodes (client ports P..P+" + (nodes - 1) + ", cluster ports P+" + offset + "..P+"
            + (nodes - 1 + offset) + "), was " + basePort);
      }
      checkTimeout(cl, timeoutSeconds);
      if (config != null) {
        CliException.requireReadableFile(cl, "--config", config);
      }
      return new LocalCluster(dataDir.dir(), nodes, basePort, config, jvmOptions);
    }

    @Override
    public Integer call() {
      LocalCluster cluster = validate();
      PrintWriter out = spec.commandLine().getOut();
      refuseIfRunning(cluster);
      for (int i = 1; i <= nodes; i++) {
        checkPortFree(cluster, i);
      }
      cluster.save();
      out.println("Starting " + nodes + " node" + (nodes == 1 ? "" : "s") + " in " + cluster.dir() + " ...");
      out.flush();
      List<LocalCluster.Launched> launched = new java.util.concurrent.CopyOnWriteArrayList<>();
      // Ctrl-C (or SIGTERM) while waiting: the nodes started so far are told to stop (they run in sessions of their
      // own, so the terminal's signal does not reach them).
      Thread abandon = new Thread(() -> launched.forEach(l -> cluster.signal(l.node(), true)), "cluster-start-abort");
      Runtime.getRuntime().addShutdownHook(abandon);
      try {
        for (int i = 1; i <= nodes; i++) {
          launched.add(cluster.launch(i));
        }
        cluster.awaitReady(launched, Duration.ofSeconds(timeoutSeconds), out);
      } catch (RuntimeException e) {
        cluster.stopLaunched(launched, "the cluster start failed: " + firstLine(Main.message(e)),
            Duration.ofSeconds(30));
        throw new CliException(Main.message(e) + "\n(the nodes this command started were stopped)", e);
      } finally {
        removeHook(abandon);
      }
      out.println("Cluster of " + nodes + " node" + (nodes == 1 ? "" : "s") + " up: bootstrap "
          + cluster.bootstrap());
      out.flush();
      return Main.EXIT_OK;
    }
  }

  // ------------------------------------------------------------------ status

  @Command(
      name = "status",
      description = {
        "Show each node (port, pid, alive), the cluster membership as a running node sees it (status, roles,"
            + " reachability), and which node leads which partitions.",
        "Exit 0 when every node is alive and an Up, reachable member; 1 otherwise."
      })
  static final class Status implements Callable<Integer> {
    @Mixin DataDirOption dataDir;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      LocalCluster cluster = LocalCluster.load(dataDir.dir());
      PrintWriter out = spec.commandLine().getOut();
      int n = cluster.nodes();
      out.println("Local cluster in " + cluster.dir() + ": " + n + " node" + (n == 1 ? "" : "s") + ", client ports "
          + cluster.port(1) + ".." + cluster.port(n) + ", cluster ports " + cluster.clusterPort(1) + ".."
          + cluster.clusterPort(n));
      out.println();

      Set<Integer> running = new TreeSet<>();
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"NODE", "ADDRESS", "PID", "PROCESS"});
      for (int i = 1; i <= n; i++) {
        OptionalLong pid = cluster.pid(i);
        boolean alive = cluster.isRunning(i);
        if (alive) {
          running.add(i);
        }
        rows.add(new String[] {Integer.toString(i), cluster.hostPort(i),
            pid.isPresent() ? Long.toString(pid.getAsLong()) : "-",
            alive ? "alive" : pid.isPresent() ? "dead" : "stopped"});
      }
      printTable(out, rows, "");
      Map<Integer, Long> others = cluster.runningNodes();
      others.keySet().removeIf(i -> i <= n);
      others.forEach((i, pid) -> out.println("Also running: node " + i + " (pid " + pid + ") of an earlier, larger"
          + " cluster in this directory; stop it with tributary cluster stop"));
      out.println();

      boolean membersOk = printMembers(cluster, running, out);
      out.println();
      printLeaders(cluster, running, out);
      out.println();

      boolean healthy = running.size() == n && membersOk && others.isEmpty();
      Set<Integer> dead = new TreeSet<>();
      for (int i = 1; i <= n; i++) {
        if (!running.contains(i)) {
          dead.add(i);
        }
      }
      if (healthy) {
        out.println("Healthy: " + n + " of " + n + " nodes alive and Up.");
      } else {
        out.println("Not healthy: " + running.size() + " of " + n + " nodes alive"
            + (dead.isEmpty() ? "" : " (down: " + dead.stream().map(i -> "node " + i)
                .collect(Collectors.joining(", ")) + ")")
            + (membersOk ? "" : "; the membership is not all Up and reachable") + ".");
      }
      out.flush();
      return healthy ? Main.EXIT_OK : Main.EXIT_FAILURE;
    }

    /** @return whether every node is an Up, reachable member in the view shown */
    private static boolean printMembers(LocalCluster cluster, Set<Integer> running, PrintWriter out) {
      MembershipFile.View view = null;
      int viewer = 0;
      for (int i : running) {
        view = cluster.freshView(i, 0);
        if (view != null) {
          viewer = i;
          break;
        }
      }
      if (view == null) {
        out.println("Members: unknown (" + (running.isEmpty() ? "no node is running" : "no running node has reported"
            + " its view in the last " + LocalCluster.STALE_VIEW.toSeconds() + " s") + ")");
        return false;
      }
      long age = System.currentTimeMillis() - view.updatedMillis();
      out.println("Members as node " + viewer + " sees them (" + String.format("%.1f", age / 1000.0) + " s ago;"
          + " leader " + TopicsCommand.node(view.leader()) + ", oldest " + TopicsCommand.node(view.oldest())
          + " runs the controller and the group coordinator):");
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"ADDRESS", "NODE", "STATUS", "ROLES", "REACHABILITY"});
      Set<String> upReachable = new TreeSet<>();
      for (MembershipFile.MemberView m : view.members()) {
        int node = cluster.nodeOf(m.hostPort());
        rows.add(new String[] {m.hostPort(), node == 0 ? "?" : Integer.toString(node), m.status(),
            String.join(",", m.roles()), m.reachable() ? "reachable" : "UNREACHABLE"});
        if ("Up".equals(m.status()) && m.reachable()) {
          upReachable.add(m.hostPort());
        }
      }
      printTable(out, rows, "  ");
      for (int i = 1; i <= cluster.nodes(); i++) {
        if (!upReachable.contains(cluster.clusterHostPort(i))) {
          return false;
        }
      }
      return view.members().size() == cluster.nodes();
    }

    private static void printLeaders(LocalCluster cluster, Set<Integer> running, PrintWriter out) {
      if (running.isEmpty()) {
        out.println("Partition leaders: unknown (no node is running)");
        return;
      }
      String bootstrap = running.stream().map(cluster::hostPort).collect(Collectors.joining(","));
      List<TopicDescription> topics;
      try (TributaryClient client = TributaryClient.connect(bootstrap,
              Map.of("request.timeout.ms", 10_000, "default.api.timeout.ms", 15_000));
          Admin admin = client.admin()) {
        topics = admin.describeTopics(List.of());
      } catch (RuntimeException e) {
        out.println("Partition leaders: unknown (" + Main.message(Main.unwrap(e)) + ")");
        return;
      }
      if (topics.isEmpty()) {
        out.println("Partition leaders: no topics yet");
        return;
      }
      Map<String, Map<String, List<Integer>>> byLeader = new TreeMap<>();
      for (TopicDescription t : topics) {
        for (PartitionDescription p : t.partitions()) {
          byLeader.computeIfAbsent(TopicsCommand.node(p.leader()), k -> new TreeMap<>())
              .computeIfAbsent(t.name(), k -> new ArrayList<>()).add(p.partition());
        }
      }
      out.println("Partition leaders (" + topics.size() + " topic" + (topics.size() == 1 ? "" : "s") + "):");
      List<String[]> rows = new ArrayList<>();
      rows.add(new String[] {"NODE", "ADDRESS", "PARTITIONS", "LEADS"});
      for (int i = 1; i <= cluster.nodes(); i++) {
        Map<String, List<Integer>> parts = byLeader.remove(cluster.clusterHostPort(i));
        rows.add(new String[] {Integer.toString(i), cluster.hostPort(i), Integer.toString(count(parts)),
            partitionList(parts)});
      }
      byLeader.forEach((leader, parts) -> rows.add(new String[] {"?", leader, Integer.toString(count(parts)),
          partitionList(parts)}));
      printTable(out, rows, "  ");
    }
  }

  private static int count(Map<String, List<Integer>> parts) {
    return parts == null ? 0 : parts.values().stream().mapToInt(List::size).sum();
  }

  /**
   * Partitions by topic, compactly: {@code orders[0,3] __consumer_offsets[0-49]} (runs of consecutive partitions as
   * ranges); {@code -} if none.
   */
  static String partitionList(Map<String, List<Integer>> byTopic) {
    if (byTopic == null || byTopic.isEmpty()) {
      return "-";
    }
    List<String> out = new ArrayList<>();
    byTopic.forEach((topic, partitions) -> {
      List<Integer> sorted = new ArrayList<>(new TreeSet<>(partitions));
      List<String> runs = new ArrayList<>();
      for (int i = 0; i < sorted.size(); ) {
        int j = i;
        while (j + 1 < sorted.size() && sorted.get(j + 1) == sorted.get(j) + 1) {
          j++;
        }
        runs.add(j - i >= 2 ? sorted.get(i) + "-" + sorted.get(j)
            : j == i ? Integer.toString(sorted.get(i)) : sorted.get(i) + "," + sorted.get(j));
        i = j + 1;
      }
      out.add(topic + "[" + String.join(",", runs) + "]");
    });
    return String.join(" ", out);
  }

  /** Prints rows as left-aligned columns (the last column unpadded). */
  static void printTable(PrintWriter out, List<String[]> rows, String indent) {
    int cols = rows.get(0).length;
    int[] width = new int[cols];
    for (String[] r : rows) {
      for (int c = 0; c < cols; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder sb = new StringBuilder(indent);
      for (int c = 0; c < cols; c++) {
        sb.append(c == cols - 1 ? r[c] : String.format("%-" + (width[c] + 2) + "s", r[c]));
      }
      out.println(sb.toString().stripTrailing());
    }
  }

  // ------------------------------------------------------------------ stop

  @Command(
      name = "stop",
      description = "Stop every node gracefully (SIGTERM: it leaves the cluster through Akka's coordinated shutdown),"
          + " wait for them to exit (SIGKILL after --timeout), and remove the pid files.")
  static final class Stop implements Callable<Integer> {
    @Mixin DataDirOption dataDir;

    @Option(
        names = "--timeout",
        paramLabel = "SECONDS",
        defaultValue = "60",
        description = "How long to wait for a graceful shutdown before SIGKILL. Default: ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      checkTimeout(spec.commandLine(), timeoutSeconds);
      Path dir = dataDir.dir();
      LocalCluster cluster = Files.isRegularFile(dir.resolve(LocalCluster.PROPERTIES_FILE))
          ? LocalCluster.load(dir)
          : new LocalCluster(dir, 0, 0, null, List.of());
      if (!Files.isDirectory(dir)) {
        throw new CliException("No local cluster in " + dir + " (the directory does not exist)");
      }
      PrintWriter out = spec.commandLine().getOut();
      Map<Integer, Long> running = cluster.runningNodes();
      Set<Integer> withPidFiles = cluster.nodesWithPidFiles();
      if (running.isEmpty()) {
        withPidFiles.forEach(cluster::deletePidFile);
        out.println("No node of the cluster in " + dir + " is running.");
        out.flush();
        return Main.EXIT_OK;
      }
      out.println("Stopping " + running.size() + " node" + (running.size() == 1 ? "" : "s") + " ...");
      out.flush();
      long t0 = System.nanoTime();
      // The oldest node last: it hosts the controller and group coordinator singletons, which would otherwise move
      // to a node that is itself leaving (and, in this version, has no copy of the controller's journal).
      int oldest = oldestNode(cluster, running.keySet());
      Set<Integer> first = new TreeSet<>(running.keySet());
      first.remove(oldest);
      Map<Integer, String> result = new TreeMap<>(cluster.stop(first, Duration.ofSeconds(timeoutSeconds)));
      result.putAll(cluster.stop(Set.of(oldest), Duration.ofSeconds(timeoutSeconds)));
      boolean allGone = true;
      for (var e : result.entrySet()) {
        out.println("Node " + e.getKey() + " (pid " + running.get(e.getKey()) + "): " + e.getValue());
        allGone &= !"still running".equals(e.getValue());
      }
      for (int n : withPidFiles) {
        if (!cluster.isRunning(n)) {
          cluster.deletePidFile(n);
        }
      }
      if (!allGone) {
        throw new CliException("Some nodes are still running after SIGKILL (see above)");
      }
      out.println("Cluster stopped in " + String.format("%.1f", (System.nanoTime() - t0) / 1e9) + " s.");
      out.flush();
      return Main.EXIT_OK;
    }
  }

  /** The oldest member among {@code running} as a fresh view reports it; else the lowest node number. */
  static int oldestNode(LocalCluster cluster, Set<Integer> running) {
    for (int i : running) {
      MembershipFile.View v = cluster.freshView(i, 0);
      if (v != null && v.oldest() != null) {
        int n = cluster.nodeOf(TopicsCommand.node(v.oldest()));
        if (running.contains(n)) {
          return n;
        }
      }
    }
    return running.iterator().next();
  }

  // ------------------------------------------------------------------ kill

  @Command(
      name = "kill",
      description = "Kill one node with SIGKILL (a crash: no graceful leave; the others down it through the Split"
          + " Brain Resolver). Its pid file stays, so status shows it dead; cluster restart starts it again.")
  static final class Kill implements Callable<Integer> {
    @Option(names = "--node", required = true, paramLabel = "I", description = "The node to kill (1..N).")
    int node;

    @Mixin DataDirOption dataDir;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      LocalCluster cluster = LocalCluster.load(dataDir.dir());
      checkNode(spec.commandLine(), cluster, node);
      OptionalLong pid = cluster.pid(node);
      if (!cluster.isRunning(node)) {
        throw new CliException("Node " + node + " is not running" + (pid.isPresent() ? " (pid " + pid.getAsLong()
            + " is gone)" : ""));
      }
      cluster.signal(node, false);
      if (!cluster.awaitExit(Set.of(node), Duration.ofSeconds(30)).isEmpty()) {
        throw new CliException("Node " + node + " (pid " + pid.getAsLong() + ") is still running 30 s after SIGKILL");
      }
      PrintWriter out = spec.commandLine().getOut();
      out.println("Killed node " + node + " (pid " + pid.getAsLong() + ", " + cluster.hostPort(node)
          + ") with SIGKILL.");
      out.flush();
      return Main.EXIT_OK;
    }
  }

  // ------------------------------------------------------------------ restart

  @Command(
      name = "restart",
      description = "Start a node that is not running (killed, or crashed) again, with the same port, data dir and"
          + " seed nodes, and wait until it is ready and every running node sees it Up.")
  static final class Restart implements Callable<Integer> {
    @Option(names = "--node", required = true, paramLabel = "I", description = "The node to start again (1..N).")
    int node;

    @Mixin DataDirOption dataDir;

    @Option(
        names = "--timeout",
        paramLabel = "SECONDS",
        defaultValue = "180",
        description = "How long to wait for the node to be up. Default: ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    @Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      checkTimeout(spec.commandLine(), timeoutSeconds);
      LocalCluster cluster = LocalCluster.load(dataDir.dir());
      checkNode(spec.commandLine(), cluster, node);
      if (cluster.isRunning(node)) {
        throw new CliException("Node " + node + " is running (pid " + cluster.pid(node).getAsLong() + "); kill it"
            + " first (tributary cluster kill --node " + node + ") or stop the cluster");
      }
      if (node != 1 && cluster.runningNodes().isEmpty()) {
        // it would wait for a seed node to answer until the timeout: only the first seed (node 1) forms a cluster
        throw new CliException("No node of the cluster in " + cluster.dir() + " runs, and only node 1 (the first"
            + " seed node) can form the cluster: restart node 1 first (tributary cluster restart --node 1"
            + " --data-dir " + cluster.dir() + "), then node " + node);
      }
      checkPortFree(cluster, node);
      PrintWriter out = spec.commandLine().getOut();
      LocalCluster.Launched launched = cluster.launch(node);
      Thread abandon = new Thread(() -> cluster.signal(node, true), "cluster-restart-abort");
      Runtime.getRuntime().addShutdownHook(abandon);
      try {
        cluster.awaitReady(List.of(launched), Duration.ofSeconds(timeoutSeconds), out);
      } catch (RuntimeException e) {
        cluster.stopLaunched(List.of(launched), "the restart failed: " + firstLine(Main.message(e)),
            Duration.ofSeconds(30));
        throw new CliException(Main.message(e) + "\n(node " + node + " was stopped again)", e);
      } finally {
        removeHook(abandon);
      }
      out.println("Node " + node + " restarted on " + cluster.hostPort(node) + " (pid " + launched.pid() + "); "
          + cluster.runningNodes().size() + " of " + cluster.nodes() + " nodes up.");
      out.flush();
      return Main.EXIT_OK;
    }
  }
}
