package io.tributary.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A local cluster of broker JVMs on 127.0.0.1 driven from Java: what {@code tributary chaos} and the multi-JVM tests
 * use to start nodes, SIGKILL or SIGTERM them and start them again. It is {@link LocalCluster} (the layout and
 * processes of {@code tributary cluster}) behind a public API: node I listens on {@code basePort + I - 1}, keeps its
 * data, logs and pid file in {@code dir/node-I}, and joins through the seed nodes 1 and 2.
 *
 * <p>Only processes this driver launched are ever signalled, found by the pids it recorded and checked against their
 * command line ({@code io.tributary.cli.Main server --data-dir dir/node-I}), so a reused pid is never touched.
 * {@link #close()} SIGKILLs whatever of them still runs.
 *
 * <p>This class is thread-safe for reads ({@link #isRunning}, {@link #bootstrap}); start, stop and kill calls are meant
 * to come from one thread at a time.
 */
public final class LocalClusterDriver implements AutoCloseable {
  /** How long a SIGKILLed or SIGTERMed (after its timeout) process may take to disappear, in seconds. */
  private static final long EXIT_BOUND_SECONDS = 30;
  private static final Duration EXIT_BOUND = Duration.ofSeconds(EXIT_BOUND_SECONDS);

  private final LocalCluster cluster;
  private final PrintWriter progress;
  /** node → pid of the process this driver launched last for it. */
  private final Map<Integer, Long> launched = new ConcurrentHashMap<>();
  /** Every process this driver launched (this JVM is their parent): {@link #close()} makes sure none is left. */
  private final List<LocalCluster.Launched> processes = new java.util.concurrent.CopyOnWriteArrayList<>();

  private LocalClusterDriver(LocalCluster cluster, PrintWriter progress) {
    this.cluster = cluster;
    this.progress = progress;
  }

  /**
   * A driver for a cluster of {@code nodes} nodes in {@code dir}; nothing is started yet.
   *
   * @param dir the cluster's directory (created on start; {@code cluster.properties} is written there, so that
   *     {@code tributary cluster status --data-dir dir} works on it too)
   * @param basePort port of node 1; node I gets {@code basePort + I - 1}
   * @param configFile a HOCON file every node reads ({@code server --config}), or null for the default
   *     ({@code ./application.conf} of this process's working directory if it exists)
   * @param jvmOptions extra JVM flags of every node (e.g. {@code -Dlogback.configurationFile=logback.xml})
   * @param progress where a line goes as each node becomes ready (people read it; e.g. stderr)
   */
  public static LocalClusterDriver create(Path dir, int nodes, int basePort, Path configFile,
      List<String> jvmOptions, PrintWriter progress) {
    if (nodes < 1 || basePort < 1 || basePort + nodes - 1 > 65535) {
      throw new IllegalArgumentException("nodes " + nodes + " from port " + basePort + " do not fit in 1..65535");
    }
    return new LocalClusterDriver(new LocalCluster(dir, nodes, basePort, configFile, jvmOptions), progress);
  }

  /** Number of nodes. */
  public int nodes() {
    return cluster.nodes();
  }

  /** The cluster's directory (absolute). */
  public Path dir() {
    return cluster.dir();
  }

  /** {@code 127.0.0.1:PORT} of node {@code node}. */
  public String hostPort(int node) {
    return cluster.hostPort(node);
  }

  /** Every node's address, comma-separated: the bootstrap list a client that must survive node failures gets. */
  public String bootstrap() {
    return cluster.bootstrap();
  }

  /**
   * The node of an address, given as {@code host:port} or as an Akka address {@code akka://tributary@host:port}.
   *
   * @return the node number, or 0 if the address is none of this cluster's
   */
  public int nodeOf(String address) {
    return address == null ? 0 : cluster.nodeOf(TopicsCommand.node(address));
  }

  /** Node {@code node}'s stdout and stderr (appended at every start, with this tool's own notes). */
  public Path outFile(int node) {
    return cluster.outFile(node);
  }

  /** Node {@code node}'s broker log (INFO and above). */
  public Path logFile(int node) {
    return cluster.logFile(node);
  }

  /**
   * Whether node {@code node}'s broker process runs: for a process this driver launched, what its {@link Process}
   * says (exact, even while it is still exec'ing); else the pid file and {@code /proc}.
   */
  public boolean isRunning(int node) {
    LocalCluster.Launched own = current(node);
    return own != null ? own.alive() : cluster.isRunning(node);
  }

  /** The nodes whose broker processes run. */
  public Set<Integer> runningNodes() {
    Set<Integer> running = new TreeSet<>();
    for (int n = 1; n <= nodes(); n++) {
      if (isRunning(n)) {
        running.add(n);
      }
    }
    return running;
  }

  /** The pid of node {@code node}'s process (running or not), if this driver launched one. */
  public OptionalLong pid(int node) {
    Long pid = launched.get(node);
    return pid == null ? OptionalLong.empty() : OptionalLong.of(pid);
  }

  /**
   * Starts every node and waits until each is ready and the cluster has converged (every node sees all of them Up
   * and reachable). Nodes that do not come up are stopped again before this throws.
   *
   * @throws CliException if a node of this directory already runs, a port is taken, or the cluster is not up within
   *     {@code timeout}
   */
  public void startAll(Duration timeout) {
    ClusterCommand.refuseIfRunning(cluster);
    List<Integer> all = new ArrayList<>();
    for (int n = 1; n <= nodes(); n++) {
      all.add(n);
    }
    cluster.save();
    start(all, timeout);
  }

  /**
   * Starts the given nodes (which must not be running) on their existing data and waits until they are ready and
   * every running node sees every running node Up: after a SIGKILL this includes the old incarnation being removed.
   *
   * @throws CliException if a node is running already, its port is taken, it exits, or the cluster has not converged
   *     within {@code timeout}; the nodes launched by this call are then stopped again
   */
  public synchronized void start(Collection<Integer> nodesToStart, Duration timeout) {
    List<LocalCluster.Launched> started = new ArrayList<>();
    try {
      for (int n : nodesToStart) {
        checkNode(n);
        LocalCluster.Launched own = current(n);
        if (own != null && own.alive() && !cluster.isRunning(n)) {
          // stopped or killed a moment ago: gone from /proc already, not yet reaped by this JVM
          try {
            own.process().waitFor(EXIT_BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new CliException("Interrupted while waiting for node " + n + " to exit");
          }
        }
        if (isRunning(n)) {
          throw new CliException("Node " + n + " is running already (pid " + cluster.pid(n).getAsLong() + ")");
        }
        awaitPortFree(n);
        LocalCluster.Launched l = cluster.launch(n);
        launched.put(n, l.pid());
        processes.add(l);
        started.add(l);
      }
      cluster.awaitReady(started, timeout, progress);
    } catch (RuntimeException e) {
      // through the Process handles: a process that is still exec'ing, or one whose pid file was rewritten, is
      // stopped all the same
      Set<Integer> stuck = cluster.stopLaunched(started, "its start failed: " + ClusterCommand.firstLine(
          Main.message(e)), EXIT_BOUND);
      if (!stuck.isEmpty()) {
        e.addSuppressed(new CliException("Node(s) " + stuck + " still run after SIGTERM and SIGKILL"));
      }
      throw e;
    }
  }

  /**
   * Waits (up to {@value #EXIT_BOUND_SECONDS} s) until node {@code node}'s port can be bound: right after a SIGKILL the
   * kernel may still hold the dead process's listening socket for a moment.
   *
   * @throws CliException if it is still taken then (by another process)
   */
  private void awaitPortFree(int node) {
    long deadline = System.nanoTime() + EXIT_BOUND.toNanos();
    while (true) {
      try {
        ClusterCommand.checkPortFree(cluster, node);
        return;
      } catch (CliException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        LocalCluster.sleep(100);
      }
    }
  }

  /** {@code start(List.of(node), timeout)}. */
  public void restart(int node, Duration timeout) {
    start(List.of(node), timeout);
  }

  /**
   * SIGKILLs node {@code node} (a crash: no shutdown hook, no leaving) and waits until its process is gone. Its pid
   * file stays, as after a real crash.
   *
   * @throws CliException if it is not running or still runs {@value #EXIT_BOUND_SECONDS} s later
   */
  public void kill(int node) {
    killAll(List.of(node));
  }

  /**
   * SIGKILLs all of {@code nodesToKill} at once (no waiting in between), then waits until every one is gone.
   *
   * @throws CliException if one of them is not running, or one still runs {@value #EXIT_BOUND_SECONDS} s later
   */
  public void killAll(Collection<Integer> nodesToKill) {
    for (int n : nodesToKill) {
      checkNode(n);
      if (!isRunning(n)) {
        throw new CliException("Node " + n + " is not running");
      }
    }
    for (int n : nodesToKill) {
      LocalCluster.Launched own = current(n);
      if (own != null) {
        own.process().destroyForcibly();
      } else {
        cluster.signal(n, false);
      }
    }
    for (int n : nodesToKill) {
      LocalCluster.Launched own = current(n);
      if (own != null) {
        try {
          // the kernel has released its locks and sockets once the parent (this JVM) sees it ended
          own.process().waitFor(EXIT_BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new CliException("Interrupted");
        }
      }
    }
    Set<Integer> left = cluster.awaitExit(new TreeSet<>(nodesToKill), EXIT_BOUND);
    if (!left.isEmpty()) {
      throw new CliException("Node(s) " + left + " still run " + EXIT_BOUND.toSeconds() + " s after SIGKILL");
    }
  }

  /**
   * Stops node {@code node} gracefully: SIGTERM (the broker's controlled shutdown, then it leaves the cluster), and
   * waits up to {@code timeout} for it to exit; SIGKILL after that.
   *
   * @return true if it exited by itself within {@code timeout}, false if it had to be killed
   * @throws CliException if it is not running, or still runs after SIGKILL
   */
  public boolean stop(int node, Duration timeout) {
    checkNode(node);
    if (!cluster.isRunning(node)) {
      throw new CliException("Node " + node + " is not running");
    }
    String how = cluster.stop(Set.of(node), timeout).get(node);
    if (how == null || "still running".equals(how)) {
      throw new CliException("Node " + node + " still runs after SIGTERM and SIGKILL");
    }
    return "stopped".equals(how);
  }

  /**
   * Waits until node {@code node}'s process has exited by itself (e.g. a node that downed itself), at most
   * {@code timeout}.
   *
   * @return whether it is gone
   */
  public boolean awaitExit(int node, Duration timeout) {
    return cluster.awaitExit(Set.of(node), timeout).isEmpty();
  }

  /**
   * Stops every running node of this directory gracefully (SIGTERM; the oldest last, so the singletons move only
   * once), each within {@code timeout} or SIGKILL.
   */
  public void stopAll(Duration timeout) {
    Set<Integer> running = runningNodes();
    if (running.isEmpty()) {
      return;
    }
    int oldest = ClusterCommand.oldestNode(cluster, running);
    Set<Integer> first = new TreeSet<>(running);
    first.remove(oldest);
    cluster.stop(first, timeout);
    cluster.stop(Set.of(oldest), timeout);
  }

  /**
   * The oldest Up broker member (where the controller and group coordinator singletons run), as the running nodes'
   * fresh membership views report it.
   */
  public OptionalInt oldestNode() {
    for (int n : runningNodes()) {
      MembershipFile.View v = cluster.freshView(n, 0);
      if (v != null && v.oldest() != null) {
        int oldest = nodeOf(v.oldest());
        if (oldest > 0) {
          return OptionalInt.of(oldest);
        }
      }
    }
    return OptionalInt.empty();
  }

  /** The tails of every node's output and broker log, for failure messages. */
  public String diagnostics(int lines) {
    StringBuilder sb = new StringBuilder();
    for (int n = 1; n <= nodes(); n++) {
      sb.append("--- node ").append(n).append(" (").append(hostPort(n)).append(isRunning(n) ? ", running" : ", not running")
          .append(") output ").append(cluster.outFile(n)).append('\n').append(cluster.outTail(n, lines)).append('\n');
      sb.append("--- node ").append(n).append(" log ").append(cluster.logFile(n)).append('\n')
          .append(tail(cluster.logFile(n), lines)).append('\n');
    }
    return sb.toString();
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = java.nio.file.Files.readAllLines(file);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  /** The process this driver launched last for node {@code node}, if it is the one its pid file names. */
  private LocalCluster.Launched current(int node) {
    Long pid = launched.get(node);
    if (pid == null || cluster.pid(node).orElse(-1) != pid) {
      return null;
    }
    for (LocalCluster.Launched l : processes) {
      if (l.pid() == pid && l.node() == node) {
        return l;
      }
    }
    return null;
  }

  /** SIGKILLs every process this driver launched that still runs, and waits for them to go. Idempotent. */
  @Override
  public void close() {
    List<LocalCluster.Launched> alive = processes.stream().filter(LocalCluster.Launched::alive).toList();
    alive.forEach(l -> l.process().destroyForcibly());
    for (LocalCluster.Launched l : alive) {
      try {
        l.process().waitFor(EXIT_BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    Set<Integer> toKill = new TreeSet<>();
    launched.forEach((node, pid) -> {
      if (LocalCluster.isNodeProcess(pid, cluster.nodeDir(node))) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        toKill.add(node);
      }
    });
    cluster.awaitExit(toKill, EXIT_BOUND);
  }

  private void checkNode(int node) {
    if (node < 1 || node > nodes()) {
      throw new IllegalArgumentException("node must be 1.." + nodes() + ", was " + node);
    }
  }
}
