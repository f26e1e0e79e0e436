package io.tributary.cli;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A local cluster of broker JVMs on 127.0.0.1, as {@code tributary cluster} manages it: the layout of its data
 * directory, the command line of each node, and the processes (found through their pid files only).
 *
 * <pre>
 * D/cluster.properties        nodes, base port, config file, extra JVM options (written by cluster start)
 * D/node-I/                   node I's data dir (journals, snapshots, logs/tributary.log)
 * D/node-I/pid                node I's process id while it runs (or after it was killed)
 * D/node-I/server.out         node I's stdout and stderr, appended at every start
 * D/node-I/members.txt        node I's view of the cluster membership, rewritten every second
 * </pre>
 *
 * <p>Node I listens for clients on {@code basePort + I - 1} and for the other nodes on its cluster port, {@value
 * ServerCommand#CLUSTER_PORT_OFFSET} above that; every node has node 1 (and node 2 when there are several) as seed
 * nodes, so the cluster forms around node 1 and a restarted node 1 rejoins through node 2.
 *
 * <p>A process is signalled only if its pid is in a pid file of this directory and its command line (from
 * {@code /proc/PID/cmdline}) is {@code io.tributary.cli.Main server} with this node's data directory: a pid reused by
 * another process is never touched.
 */
final class LocalCluster {
  static final String HOST = "127.0.0.1";
  static final String PROPERTIES_FILE = "cluster.properties";
  static final String MAIN_CLASS = "io.tributary.cli.Main";
  /** What a node prints on stdout once it serves clients (see {@link ServerCommand}). */
  static final String READY_PREFIX = "Tributary broker started: bootstrap ";
  /**
   * JVM flags of every node, as {@code bin/tributary}'s, with a smaller heap (several nodes share one machine) and the
   * C1 JIT only ({@code -XX:TieredStopAtLevel=1}). A local cluster lives for a test or a development session, on a
   * machine that also runs the application: C2 spends a core recompiling Akka's code for the first tens of millions
   * of records (measured on 2 cores, one node, 1M x 100 B after a 500k warm-up: C2 287-327k records/s at 3.3-3.8
   * broker CPU-s per 1M, C1 404-426k at 1.7; C2 overtakes it only after ~10M records, 384k against 335k). A
   * long-running {@code bin/tributary server} keeps C2; {@code --jvm-option=-XX:TieredStopAtLevel=4} gives C2 back.
   * The {@code CompileCommand}s are {@code bin/tributary server}'s (see there): they keep C2 from inlining the compute
   * step of Akka remoting's LRU caches into their shared {@code getOrCompute}, which it otherwise recompiled, at ~1
   * CPU-s each time, for every new client connection; and from inlining the message readers of {@code
   * TributarySerializer} into its {@code fromBinary}, which C2 otherwise recompiled whole (0.05-0.21 CPU-s) whenever a
   * manifest it had not yet seen arrived.
   */
  static final List<String> DEFAULT_JVM_OPTIONS = List.of(
      "-Xms128m", "-Xmx512m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-Dfile.encoding=UTF-8",
      "-XX:CompileCommand=quiet",
      "-XX:CompileCommand=dontinline,akka.remote.artery.ActorRefResolveCacheWithAddress::compute",
      "-XX:CompileCommand=dontinline,akka.remote.serialization.ActorRefResolveCache::compute",
      "-XX:CompileCommand=dontinline,akka.remote.artery.SerializationFormatCache::compute",
      "-XX:CompileCommand=dontinline,io.tributary.serialization.TributarySerializer::read*",
      "-XX:CompileCommand=dontinline,io.tributary.serialization.TributarySerializer::fromBinaryRare",
      "--add-opens", "java.base/java.nio=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED");
  /** A members file older than this is a stale view (its node writes it every second). */
  static final Duration STALE_VIEW = Duration.ofSeconds(5);

  private static final Pattern NODE_DIR = Pattern.compile("node-(\\d+)");

  private final Path dir;
  private final int nodes;
  private final int basePort;
  private final Path config;
  private final List<String> jvmOptions;

  LocalCluster(Path dir, int nodes, int basePort, Path config, List<String> jvmOptions) {
    this.dir = dir.toAbsolutePath().normalize();
    this.nodes = nodes;
    this.basePort = basePort;
    this.config = config == null ? null : config.toAbsolutePath().normalize();
    this.jvmOptions = List.copyOf(jvmOptions);
  }

  /**
   * The cluster described by {@code dir/cluster.properties}.
   *
   * @throws CliException if there is none (no cluster was started in {@code dir}) or it is unreadable
   */
  static LocalCluster load(Path dir) {
    Path file = dir.resolve(PROPERTIES_FILE);
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(in);
    } catch (NoSuchFileException e) {
      throw new CliException("No local cluster in " + dir.toAbsolutePath().normalize() + " (no " + PROPERTIES_FILE
          + "); start one with: tributary cluster start --nodes N --data-dir " + dir);
    } catch (IOException e) {
      throw new CliException("Cannot read " + file + ": " + CliException.readFailure(e), e);
    }
    try {
      int nodes = Integer.parseInt(p.getProperty("nodes", "").trim());
      int basePort = Integer.parseInt(p.getProperty("base-port", "").trim());
      String config = p.getProperty("config");
      List<String> jvm = new ArrayList<>();
      for (int i = 1; p.getProperty("jvm-option." + i) != null; i++) {
        jvm.add(p.getProperty("jvm-option." + i));
      }
      return new LocalCluster(dir, nodes, basePort, config == null || config.isEmpty() ? null : Path.of(config), jvm);
    } catch (NumberFormatException e) {
      throw new CliException(file + " is damaged (nodes and base-port must be numbers): " + e.getMessage(), e);
    }
  }

  /** Writes {@code cluster.properties} (creating the directory). */
  void save() {
    Properties p = new Properties();
    p.setProperty("nodes", Integer.toString(nodes));
    p.setProperty("base-port", Integer.toString(basePort));
    if (config != null) {
      p.setProperty("config", config.toString());
    }
    for (int i = 0; i < jvmOptions.size(); i++) {
      p.setProperty("jvm-option." + (i + 1), jvmOptions.get(i));
    }
    try {
      Files.createDirectories(dir);
      try (Writer out = Files.newBufferedWriter(dir.resolve(PROPERTIES_FILE), StandardCharsets.UTF_8)) {
        p.store(out, "A local Tributary cluster (written by tributary cluster start)");
      }
    } catch (IOException e) {
      throw new CliException("Cannot write " + dir.resolve(PROPERTIES_FILE) + ": " + e.getMessage(), e);
    }
  }

  Path dir() {
    return dir;
  }

  int nodes() {
    return nodes;
  }

  int basePort() {
    return basePort;
  }

  int port(int node) {
    return basePort + node - 1;
  }

  /** Node {@code node}'s client listener, {@code 127.0.0.1:port}: what clients bootstrap from. */
  String hostPort(int node) {
    return HOST + ":" + port(node);
  }

  /** Node {@code node}'s cluster port: what the other nodes (and membership views) use. */
  int clusterPort(int node) {
    return port(node) + ServerCommand.CLUSTER_PORT_OFFSET;
  }

  /** Node {@code node}'s cluster address, {@code 127.0.0.1:port}, as membership views and partition leaders name it. */
  String clusterHostPort(int node) {
    return HOST + ":" + clusterPort(node);
  }

  /** The bootstrap list of every node: {@code 127.0.0.1:P,127.0.0.1:P+1,...}. */
  String bootstrap() {
    List<String> all = new ArrayList<>();
    for (int i = 1; i <= nodes; i++) {
      all.add(hostPort(i));
    }
    return String.join(",", all);
  }

  /** The node whose cluster address is {@code host:port}, or 0. */
  int nodeOf(String hostPort) {
    for (int i = 1; i <= nodes; i++) {
      if (clusterHostPort(i).equals(hostPort)) {
        return i;
      }
    }
    return 0;
  }

  Path nodeDir(int node) {
    return dir.resolve("node-" + node);
  }

  Path pidFile(int node) {
    return nodeDir(node).resolve("pid");
  }

  Path outFile(int node) {
    return nodeDir(node).resolve("server.out");
  }

  Path membersFile(int node) {
    return nodeDir(node).resolve("members.txt");
  }

  Path logFile(int node) {
    return nodeDir(node).resolve("logs").resolve("tributary.log");
  }

  /** The seed nodes of every node: node 1, and node 2 if there are several. */
  List<String> seedNodes() {
    return nodes == 1 ? List.of(clusterHostPort(1)) : List.of(clusterHostPort(1), clusterHostPort(2));
  }

  /**
   * The command line of node {@code node}: this JVM's {@code java} and classpath, the default JVM flags, the extra
   * ones, then {@code io.tributary.cli.Main server ...}.
   */
  List<String> command(int node) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.addAll(DEFAULT_JVM_OPTIONS);
    String logback = System.getProperty("logback.configurationFile");
    if (logback != null) {
      cmd.add("-Dlogback.configurationFile=" + logback);
    }
    cmd.addAll(jvmOptions);
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(MAIN_CLASS);
    cmd.addAll(serverArguments(node));
    return cmd;
  }

  /**
   * The seed nodes node {@code node} starts with. When other nodes of the cluster run, only they: a node that
   * restarts must join the running cluster and never form a cluster of its own (Akka lets the first seed node join
   * itself when the other seeds do not answer in time, which under load split a restarted node 1 off into a second
   * cluster with its own controller). When none runs, {@link #seedNodes()}, so that node 1 forms the cluster.
   */
  List<String> seedNodesFor(int node) {
    List<String> running = new ArrayList<>();
    for (int m = 1; m <= nodes; m++) {
      if (m != node && isRunning(m)) {
        running.add(clusterHostPort(m));
      }
    }
    return running.isEmpty() ? seedNodes() : running;
  }

  /** The {@code server} arguments of node {@code node}. */
  List<String> serverArguments(int node) {
    List<String> args = new ArrayList<>(List.of(
        "server",
        "--node-id", Integer.toString(node),
        "--port", Integer.toString(port(node)),
        "--cluster-port", Integer.toString(clusterPort(node)),
        "--data-dir", nodeDir(node).toString(),
        "--members-file", membersFile(node).toString()));
    for (String seed : seedNodesFor(node)) {
      args.add("--seed-node");
      args.add(seed);
    }
    if (config != null) {
      args.add("--config");
      args.add(config.toString());
    }
    return args;
  }

  /**
   * A node process that was just launched: where its output of this start begins, and its {@link Process} (this JVM
   * is its parent, so whether it still runs and how it ended are known for sure, without reading {@code /proc}).
   */
  record Launched(int node, long pid, long outOffset, long startedMillis, Process process) {
    /** Whether the process still runs. */
    boolean alive() {
      return process.isAlive();
    }

    /** How it ended ({@code exit code 1}, {@code killed by SIGKILL}, ...), or {@code still running}. */
    String exitStatus() {
      return process.isAlive() ? "still running" : describeExit(process.exitValue());
    }
  }

  /** An exit code as a person reads it: {@code 128 + N} is how a process killed by signal N ends. */
  static String describeExit(int code) {
    return switch (code) {
      case 137 -> "killed by SIGKILL (exit code 137)";
      case 143 -> "ended by SIGTERM (exit code 143)";
      case 130 -> "ended by SIGINT (exit code 130)";
      case 134 -> "aborted, SIGABRT (exit code 134)";
      default -> code > 128 && code < 160 ? "killed by signal " + (code - 128) + " (exit code " + code + ")"
          : "exit code " + code;
    };
  }

  /**
   * Appends a line of this tool's own to node {@code node}'s {@code server.out} ({@code === tributary cluster: ...}),
   * so that its output says why a start ended even when the process itself could print nothing (e.g. it was killed).
   */
  void note(int node, String line) {
    try {
      Files.createDirectories(nodeDir(node));
      Files.writeString(outFile(node), "=== tributary cluster: " + line + " at " + Instant.now() + "\n",
          StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      // the note is for people; the caller reports the same on its own output
    }
  }

  /**
   * Starts node {@code node} detached: in a session of its own when {@code setsid} exists (so Ctrl-C or a hang-up of
   * this terminal does not reach it), stdin from {@code /dev/null}, stdout and stderr appended to its
   * {@code server.out}; writes its pid file. Does not wait.
   */
  Launched launch(int node) {
    Path nodeDir = nodeDir(node);
    try {
      Files.createDirectories(nodeDir);
      Files.deleteIfExists(membersFile(node));
      Path out = outFile(node);
      Files.writeString(out, "=== tributary cluster: starting node " + node + " on " + hostPort(node) + " at "
              + Instant.now() + "\n", StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
      long offset = Files.size(out);
      List<String> cmd = new ArrayList<>();
      Optional<String> setsid = setsid();
      setsid.ifPresent(cmd::add);
      cmd.addAll(command(node));
      long started = System.currentTimeMillis();
      Process p = new ProcessBuilder(cmd)
          .directory(new File(System.getProperty("user.dir")))
          .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
          .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
          .redirectErrorStream(true)
          .start();
      Files.writeString(pidFile(node), p.pid() + "\n", StandardCharsets.UTF_8);
      return new Launched(node, p.pid(), offset, started, p);
    } catch (IOException e) {
      throw new CliException("Cannot start node " + node + ": " + e.getMessage(), e);
    }
  }

  private static Optional<String> setsid() {
    for (String candidate : new String[] {"/usr/bin/setsid", "/bin/setsid"}) {
      if (Files.isExecutable(Path.of(candidate))) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }

  /** The pid in node {@code node}'s pid file, if there is one. */
  OptionalLong pid(int node) {
    try {
      return OptionalLong.of(Long.parseLong(Files.readString(pidFile(node), StandardCharsets.UTF_8).trim()));
    } catch (NoSuchFileException e) {
      return OptionalLong.empty();
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /** Whether node {@code node}'s pid file names a live process that is this node's broker. */
  boolean isRunning(int node) {
    OptionalLong pid = pid(node);
    return pid.isPresent() && isNodeProcess(pid.getAsLong(), nodeDir(node));
  }

  /**
   * Whether {@code pid} is a live (not zombie) {@code io.tributary.cli.Main server} with {@code --data-dir nodeDir}.
   */
  static boolean isNodeProcess(long pid, Path nodeDir) {
    List<String> args = commandLine(pid);
    return args != null && isNodeCommandLine(args, nodeDir);
  }

  /** The check of {@link #isNodeProcess} on a command line. */
  static boolean isNodeCommandLine(List<String> args, Path nodeDir) {
    int main = args.indexOf(MAIN_CLASS);
    if (main < 0 || main + 1 >= args.size() || !"server".equals(args.get(main + 1))) {
      return false;
    }
    int dd = args.indexOf("--data-dir");
    return dd > main && dd + 1 < args.size()
        && Path.of(args.get(dd + 1)).toAbsolutePath().normalize().equals(nodeDir.toAbsolutePath().normalize());
  }

  /** How long a live process's {@code /proc/PID/cmdline} may read empty while it execs its program. */
  private static final Duration EXEC_WINDOW = Duration.ofSeconds(2);

  /**
   * The arguments of a live process ({@code /proc/PID/cmdline}; elsewhere what the JDK reports), or null if it does
   * not exist, is a zombie, or cannot be read.
   *
   * <p>An empty {@code cmdline} means a zombie or a kernel thread, but also a live process in the middle of
   * {@code execve} (the new image's arguments are not set up yet): a node just launched as {@code setsid java ...} is
   * in that state for a moment when {@code setsid} execs {@code java}. So an empty one of a process that is not a
   * zombie ({@code /proc/PID/stat}) is read again until it has arguments, for at most {@link #EXEC_WINDOW}; and as a
   * read during the exec may also return a part of the new arguments (e.g. just {@code /}), the arguments are those of
   * two reads in a row that agree.
   */
  static List<String> commandLine(long pid) {
    Path proc = Path.of("/proc", Long.toString(pid), "cmdline");
    if (Files.isDirectory(Path.of("/proc", "self"))) {
      try {
        byte[] raw = Files.readAllBytes(proc);
        long deadline = System.nanoTime() + EXEC_WINDOW.toNanos();
        while (true) {
          if (raw.length == 0 && !isLiveUserProcess(pid)) {
            return null; // a zombie (or a kernel thread, or gone)
          }
          // a second read that agrees: not a half-built argument list of an exec in progress (seen as "/")
          byte[] again = Files.readAllBytes(proc);
          if (raw.length > 0 && Arrays.equals(raw, again)) {
            break;
          }
          if (System.nanoTime() > deadline) {
            if (again.length == 0) {
              return null;
            }
            raw = again;
            break;
          }
          if (again.length == 0 || !Arrays.equals(raw, again)) {
            sleep(1); // a deadline-bounded poll: the exec completes within microseconds to milliseconds
          }
          raw = again;
        }
        String s = new String(raw, StandardCharsets.UTF_8);
        if (s.endsWith("\0")) {
          s = s.substring(0, s.length() - 1);
        }
        return Arrays.asList(s.split("\0", -1));
      } catch (IOException e) {
        return null;
      }
    }
    Optional<ProcessHandle> handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || !handle.get().isAlive()) {
      return null;
    }
    ProcessHandle.Info info = handle.get().info();
    if (info.command().isEmpty() || info.arguments().isEmpty()) {
      return null;
    }
    List<String> args = new ArrayList<>();
    args.add(info.command().get());
    args.addAll(Arrays.asList(info.arguments().get()));
    return args;
  }

  /**
   * Whether {@code /proc/PID/stat} names a process that is neither a zombie nor dead and not a kernel thread (whose
   * {@code cmdline} is always empty: their parent is kthreadd, pid 2, or they are it).
   */
  private static boolean isLiveUserProcess(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
      int close = stat.lastIndexOf(')'); // "PID (COMM) STATE PPID ...", COMM may contain anything
      if (close < 0 || close + 2 >= stat.length()) {
        return false;
      }
      String[] rest = stat.substring(close + 2).split(" ");
      char state = rest[0].isEmpty() ? 'X' : rest[0].charAt(0);
      boolean kernelThread = pid == 2 || (rest.length > 1 && "2".equals(rest[1]));
      return state != 'Z' && state != 'X' && state != 'x' && !kernelThread;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Sends SIGTERM ({@code graceful}) or SIGKILL to node {@code node}, if it runs. @return whether it ran */
  boolean signal(int node, boolean graceful) {
    OptionalLong pid = pid(node);
    if (pid.isEmpty() || !isNodeProcess(pid.getAsLong(), nodeDir(node))) {
      return false;
    }
    Optional<ProcessHandle> handle = ProcessHandle.of(pid.getAsLong());
    if (handle.isEmpty()) {
      return false;
    }
    return graceful ? handle.get().destroy() : handle.get().destroyForcibly();
  }

  /** Waits until none of {@code nodes} runs, at most {@code timeout}. @return those still running */
  Set<Integer> awaitExit(Set<Integer> nodes, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Set<Integer> running = new TreeSet<>(nodes);
    while (true) {
      running.removeIf(n -> !isRunning(n));
      if (running.isEmpty() || System.nanoTime() > deadline) {
        return running;
      }
      sleep(100);
    }
  }

  /** The node numbers of every {@code node-N} directory in the data directory with a pid file. */
  Set<Integer> nodesWithPidFiles() {
    Set<Integer> found = new TreeSet<>();
    if (!Files.isDirectory(dir)) {
      return found;
    }
    try (var children = Files.list(dir)) {
      children.forEach(p -> {
        Matcher m = NODE_DIR.matcher(p.getFileName().toString());
        if (m.matches() && Files.isRegularFile(p.resolve("pid"))) {
          found.add(Integer.parseInt(m.group(1)));
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  /** Node number → pid of every node (of any {@code node-N} directory) whose process runs. */
  Map<Integer, Long> runningNodes() {
    Map<Integer, Long> running = new TreeMap<>();
    for (int n : nodesWithPidFiles()) {
      if (isRunning(n)) {
        running.put(n, pid(n).getAsLong());
      }
    }
    return running;
  }

  void deletePidFile(int node) {
    try {
      Files.deleteIfExists(pidFile(node));
    } catch (IOException e) {
      // a stale pid file is harmless: its process is gone and the check of the command line protects a reused pid
    }
  }

  /**
   * The first line starting with {@link #READY_PREFIX} in node {@code node}'s output from {@code offset} on, or null.
   */
  String readyLine(int node, long offset) {
    try {
      byte[] all = Files.readAllBytes(outFile(node));
      if (all.length <= offset) {
        return null;
      }
      String text = new String(all, (int) offset, all.length - (int) offset, StandardCharsets.UTF_8);
      String[] lines = text.split("\n", -1);
      for (int i = 0; i < lines.length - 1; i++) { // the last one is not complete yet
        if (lines[i].startsWith(READY_PREFIX)) {
          return lines[i];
        }
      }
      return null;
    } catch (IOException e) {
      return null;
    }
  }

  /** The last non-blank line node {@code node} printed from {@code offset} on (not this tool's notes), or null. */
  String lastOutputLine(int node, long offset) {
    try {
      byte[] all = Files.readAllBytes(outFile(node));
      if (all.length <= offset) {
        return null;
      }
      String[] lines = new String(all, (int) offset, all.length - (int) offset, StandardCharsets.UTF_8).split("\n");
      for (int i = lines.length - 1; i >= 0; i--) {
        if (!lines[i].isBlank() && !lines[i].startsWith("=== tributary cluster: ")) {
          return lines[i].strip();
        }
      }
      return null;
    } catch (IOException e) {
      return null;
    }
  }

  /** The last {@code lines} lines of node {@code node}'s output, for error messages. */
  String outTail(int node, int lines) {
    try {
      List<String> all = Files.readAllLines(outFile(node), StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  /** Node {@code node}'s view of the membership if it is fresh (written less than {@link #STALE_VIEW} ago). */
  MembershipFile.View freshView(int node, long notBeforeMillis) {
    MembershipFile.View v = MembershipFile.read(membersFile(node));
    long now = System.currentTimeMillis();
    if (v == null || v.updatedMillis() < notBeforeMillis || now - v.updatedMillis() > STALE_VIEW.toMillis()) {
      return null;
    }
    return v;
  }

  /**
   * What keeps the running nodes from being one converged cluster, or an empty list: every running node's fresh view
   * must list exactly the running nodes, each Up and reachable, each with the uid it reports for itself.
   *
   * @param running the nodes whose processes run
   * @param notBefore per node, the time before which its view is from an earlier process (0 if any is fine)
   */
  List<String> convergenceProblems(Set<Integer> running, Map<Integer, Long> notBefore) {
    List<String> problems = new ArrayList<>();
    Map<Integer, MembershipFile.View> views = new HashMap<>();
    for (int n : running) {
      MembershipFile.View v = freshView(n, notBefore.getOrDefault(n, 0L));
      if (v == null) {
        problems.add("node " + n + " has not reported its view of the cluster");
      } else {
        views.put(n, v);
      }
    }
    Set<String> expected =
        running.stream().map(this::clusterHostPort).collect(Collectors.toCollection(TreeSet::new));
    for (var e : views.entrySet()) {
      List<String> wrong = new ArrayList<>();
      Set<String> seen = new TreeSet<>();
      for (MembershipFile.MemberView m : e.getValue().members()) {
        seen.add(m.hostPort());
        MembershipFile.View own = views.get(nodeOf(m.hostPort()));
        boolean right = expected.contains(m.hostPort()) && "Up".equals(m.status()) && m.reachable()
            && (own == null || own.selfUid() == m.uid());
        if (!right) {
          wrong.add(m.hostPort() + " " + m.status() + (m.reachable() ? "" : " unreachable")
              + (own != null && own.selfUid() != m.uid() ? " (an earlier incarnation)" : ""));
        }
      }
      for (String hp : expected) {
        if (!seen.contains(hp)) {
          wrong.add(hp + " missing");
        }
      }
      if (!wrong.isEmpty()) {
        problems.add("node " + e.getKey() + " sees " + String.join(", ", wrong));
      }
    }
    return problems;
  }

  /**
   * Waits until every node of {@code launched} has printed its ready line and the running nodes form one converged
   * cluster ({@link #convergenceProblems}), printing a line as each node becomes ready.
   *
   * @throws CliException if a launched node exits first, or on timeout (with what was missing and the output tail)
   */
  void awaitReady(List<Launched> launched, Duration timeout, PrintWriter out) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Map<Integer, Launched> pending = new LinkedHashMap<>();
    launched.forEach(l -> pending.put(l.node(), l));
    Map<Integer, Long> notBefore = new HashMap<>();
    launched.forEach(l -> notBefore.put(l.node(), l.startedMillis()));
    List<String> problems = List.of();
    while (true) {
      for (Launched l : launched) {
        if (!l.alive()) {
          String status = l.exitStatus();
          note(l.node(), "node " + l.node() + " (pid " + l.pid() + ") ended before it was ready: " + status);
          String said = lastOutputLine(l.node(), l.outOffset());
          throw new CliException("Node " + l.node() + " (pid " + l.pid() + ", " + hostPort(l.node())
              + ") exited before it was ready: " + status
              + (said == null ? ", printing nothing" : "; its last line: " + said)
              + "\nIts output (" + outFile(l.node()) + "):\n" + outTail(l.node(), 30) + "\nIts log: "
              + logFile(l.node()));
        }
      }
      for (var it = pending.values().iterator(); it.hasNext(); ) {
        Launched l = it.next();
        if (readyLine(l.node(), l.outOffset()) != null) {
          it.remove();
          out.println("Node " + l.node() + " ready on " + hostPort(l.node()) + " (pid " + l.pid() + ")");
          out.flush();
        }
      }
      if (pending.isEmpty()) {
        problems = convergenceProblems(runningNodes().keySet(), notBefore);
        if (problems.isEmpty()) {
          return;
        }
      }
      if (System.nanoTime() > deadline) {
        StringBuilder msg = new StringBuilder("Timed out after " + timeout.toSeconds() + " s: ");
        if (!pending.isEmpty()) {
          msg.append("no ready line yet from node(s) ")
              .append(pending.keySet().stream().map(String::valueOf).collect(Collectors.joining(", ")));
          Launched first = pending.values().iterator().next();
          msg.append(". Output of node ").append(first.node()).append(" (").append(outFile(first.node()))
              .append("):\n").append(outTail(first.node(), 20)).append("\nIts log: ").append(logFile(first.node()));
        } else {
          msg.append("the cluster did not converge: ").append(String.join("; ", problems));
        }
        pending.values().forEach(l -> note(l.node(), "node " + l.node() + " (pid " + l.pid() + ") not ready within "
            + timeout.toSeconds() + " s"));
        throw new CliException(msg.toString());
      }
      sleep(250);
    }
  }

  /**
   * Stops {@code nodes}: SIGTERM, up to {@code timeout} for the graceful shutdown, then SIGKILL; removes their pid
   * files.
   *
   * @return node → how it ended ({@code stopped}, {@code killed after N s}, or {@code still running})
   */
  Map<Integer, String> stop(Set<Integer> nodesToStop, Duration timeout) {
    Map<Integer, String> result = new TreeMap<>();
    Set<Integer> signalled = new TreeSet<>();
    for (int n : nodesToStop) {
      if (signal(n, true)) {
        signalled.add(n);
      }
    }
    Set<Integer> left = awaitExit(signalled, timeout);
    for (int n : left) {
      signal(n, false);
    }
    Set<Integer> stuck = awaitExit(left, Duration.ofSeconds(30));
    for (int n : signalled) {
      if (stuck.contains(n)) {
        result.put(n, "still running");
      } else {
        result.put(n, left.contains(n) ? "killed (SIGKILL) after " + timeout.toSeconds() + " s" : "stopped");
        deletePidFile(n);
      }
    }
    return result;
  }

  /**
   * Stops processes this JVM launched (e.g. those of a start that failed), through their {@link Process} handles, not
   * their pid files: SIGTERM, up to {@code timeout}, then SIGKILL, and waits until they are gone (at most 30 s more).
   * Notes in each one's {@code server.out} why it was stopped and how it ended; removes the pid files of those gone.
   *
   * @return those still running after all that (normally none)
   */
  Set<Integer> stopLaunched(List<Launched> launched, String reason, Duration timeout) {
    List<Launched> alive = launched.stream().filter(Launched::alive).toList();
    for (Launched l : alive) {
      note(l.node(), "stopping node " + l.node() + " (pid " + l.pid() + "): " + reason);
      l.process().destroy();
    }
    awaitProcesses(alive, timeout);
    for (Launched l : alive) {
      if (l.alive()) {
        l.process().destroyForcibly();
      }
    }
    awaitProcesses(alive, Duration.ofSeconds(30));
    Set<Integer> stuck = new TreeSet<>();
    for (Launched l : launched) {
      if (l.alive()) {
        stuck.add(l.node());
      } else {
        if (alive.contains(l)) {
          note(l.node(), "node " + l.node() + " (pid " + l.pid() + ") stopped: " + l.exitStatus());
        }
        if (pid(l.node()).orElse(-1) == l.pid()) {
          deletePidFile(l.node());
        }
      }
    }
    return stuck;
  }

  private static void awaitProcesses(List<Launched> launched, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Launched l : launched) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        l.process().waitFor(left, java.util.concurrent.TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CliException("Interrupted");
      }
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("Interrupted");
    }
  }
}
