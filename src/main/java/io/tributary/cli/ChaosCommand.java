package io.tributary.cli;

import io.tributary.cli.chaos.ChaosConsumer;
import io.tributary.cli.chaos.ChaosProducer;
import io.tributary.cli.chaos.Ledger;
import io.tributary.cli.chaos.StallMeter;
import io.tributary.client.Admin;
import io.tributary.client.TributaryClient;
import io.tributary.protocol.PartitionDescription;
import io.tributary.protocol.TopicDescription;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary chaos}: starts a local cluster, produces and consumes through it while SIGKILLing and restarting
 * one random node at a time, and checks with a {@link Ledger} that nothing acknowledged was lost, duplicated or
 * reordered. One result line on stdout; progress on stderr; exit 0 only when the run was clean.
 */
@Command(
    name = "chaos",
    description = {
      "Chaos test on a local cluster: start N broker JVMs on 127.0.0.1 (as `cluster start`, in D/node-I), create a"
          + " topic with --replication-factor and min.insync.replicas, run --producers producers (acks=all,"
          + " idempotent) and a verifying consumer, and every --kill-every SIGKILL a random node and start it again"
          + " (the next kill waits until it is Up again; never two nodes down at once).",
      "At the end: stop the producers, wait for the consumer to read everything acknowledged, read the whole topic"
          + " once more from the beginning, stop every node this command started, and print one line:",
      "  acknowledged N, lost L, duplicated D, reordered R",
      "Each record's value is p<producer>-<sequence>. Acknowledged: send() succeeded. Lost: acknowledged, never read."
          + " Duplicated: one record at two offsets. Reordered: in one partition, one producer's higher sequence at a"
          + " lower offset. Also checked (details on stderr): one value per offset, acknowledged offsets kept, the"
          + " consumer's offsets dense and never going back.",
      "A node that does not come back is started again up to 3 times (each failure's reason on stderr); then the run"
          + " is cut short: producers stopped, the final read made with the nodes that are up, every node stopped,"
          + " the result line printed, and `chaos: the run was cut short ...` on stderr. The summary on stderr gives"
          + " the longest stall: the longest time without an acknowledgement while producing.",
      "Exit 0 only if N > 0, every count is 0, the final read reached the end and the run was not cut short; 1"
          + " otherwise (or if the cluster could not be run); 2 usage error.",
      "Node logs: D/node-I/logs/tributary.log and D/node-I/server.out (with a `=== tributary cluster:` line giving"
          + " the exit status of a start that ended before the node was ready)."
    })
final class ChaosCommand implements Callable<Integer> {
  private static final String TOPIC = "chaos";
  /** Bounds against hangs, not performance limits. */
  private static final Duration START_TIMEOUT = Duration.ofMinutes(3);
  private static final Duration TOPIC_READY_TIMEOUT = Duration.ofMinutes(2);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);
  /** Starts of a node that does not come back before the run is cut short. */
  static final int START_ATTEMPTS = 3;

  @Option(names = "--nodes", defaultValue = "3", paramLabel = "N", description = "Nodes (2..16). Default: ${DEFAULT-VALUE}.")
  int nodes;

  @Option(
      names = "--duration",
      defaultValue = "300s",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description = "How long to produce under failures, e.g. 300s, 5m. Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(
      names = "--kill-every",
      defaultValue = "10s",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description = "Time between two kills (from kill to kill; a kill also waits until the previous victim is Up"
          + " again). Default: ${DEFAULT-VALUE}.")
  Duration killEvery;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "The cluster's directory; must be empty or absent. Default: chaos-<date>-<time> in the working"
          + " directory.")
  Path dataDir;

  @Option(
      names = "--base-port",
      defaultValue = "9092",
      paramLabel = "P",
      description = "Port of node 1; node I gets P+I-1. Default: ${DEFAULT-VALUE}.")
  int basePort;

  @Option(names = "--partitions", defaultValue = "6", paramLabel = "N", description = "Partitions. Default: ${DEFAULT-VALUE}.")
  int partitions;

  @Option(names = "--producers", defaultValue = "2", paramLabel = "N", description = "Producers. Default: ${DEFAULT-VALUE}.")
  int producers;

  @Option(
      names = "--rate",
      defaultValue = "500",
      paramLabel = "RECORDS/S",
      description = "Records per second per producer (at most 1000 unanswered at once). Default: ${DEFAULT-VALUE}.")
  int rate;

  @Option(
      names = "--replication-factor",
      paramLabel = "R",
      description = "Replicas per partition. Default: 3, or N if smaller.")
  Short replicationFactor;

  @Option(
      names = "--min-insync-replicas",
      paramLabel = "M",
      description = "The topic's min.insync.replicas (set only when R > 1). Default: 2, or R if smaller.")
  Integer minInsyncReplicas;

  @Option(
      names = "--final-read-timeout",
      defaultValue = "120s",
      paramLabel = "TIME",
      converter = DurationConverter.class,
      description = "How long to wait at the end for the consumer to read everything acknowledged, and for the final"
          + " read. Default: ${DEFAULT-VALUE}.")
  Duration finalReadTimeout;

  @Option(names = "--seed", paramLabel = "SEED", description = "Seed of the choice of victims (printed; random if absent).")
  Long seed;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "A HOCON file of node settings, applied on top of chaos's own (fast failure detection).")
  Path config;

  @Spec CommandLine.Model.CommandSpec spec;

  private PrintWriter err;
  private long t0;
  /** Nodes found down that chaos had not killed. */
  private int unexpectedExits;
  /** Whether the final read reached the end offsets (else the run is not verified, and fails). */
  private boolean finalReadComplete;
  /** Kills so far. */
  private int kills;
  /** Why the run ended before its duration (a node did not come back, the cluster did not start), or null. */
  private String cutShort;
  /** When (nanoseconds since the start) it was cut short. */
  private long cutShortAt;

  @Override
  public Integer call() {
    validate();
    err = spec.commandLine().getErr();
    PrintWriter out = spec.commandLine().getOut();
    Path dir = (dataDir != null ? dataDir
        : Path.of("chaos-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"))))
        .toAbsolutePath().normalize();
    prepare(dir);
    short rf = replicationFactor != null ? replicationFactor : (short) Math.min(3, nodes);
    int minIsr = minInsyncReplicas != null ? minInsyncReplicas : Math.min(2, rf);
    long victimSeed = seed != null ? seed : new Random().nextLong();
    Random random = new Random(victimSeed);
    t0 = System.nanoTime();
    progress("chaos: " + nodes + " nodes on 127.0.0.1:" + basePort + ".." + (basePort + nodes - 1)
        + " (cluster ports " + (basePort + ServerCommand.CLUSTER_PORT_OFFSET) + ".."
        + (basePort + nodes - 1 + ServerCommand.CLUSTER_PORT_OFFSET) + "), data in "
        + dir + "; topic " + TOPIC + " (" + partitions + " partitions, replication factor " + rf
        + (rf > 1 ? ", min.insync.replicas " + minIsr : "") + "); " + producers + " producers at " + rate
        + " records/s each; a kill every " + killEvery.toMillis() / 1000.0 + " s for " + duration.toMillis() / 1000.0
        + " s; seed " + victimSeed);

    Ledger ledger = new Ledger();
    List<ChaosProducer> senders = new ArrayList<>();
    ChaosConsumer consumer = null;
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "chaos-progress");
      t.setDaemon(true);
      return t;
    });
    LocalClusterDriver cluster = LocalClusterDriver.create(dir, nodes, basePort, writeNodeConfig(dir), List.of(), err);
    // Ctrl-C / SIGTERM: the nodes run in sessions of their own, so stop them here
    Thread abandon = new Thread(cluster::close, "chaos-abort");
    Runtime.getRuntime().addShutdownHook(abandon);
    TributaryClient client = null;
    try {
      try {
        cluster.startAll(START_TIMEOUT);
        progress("cluster up: bootstrap " + cluster.bootstrap());
        client = TributaryClient.connect(cluster.bootstrap(), Map.of());
        createTopic(client, rf, minIsr);

        consumer = new ChaosConsumer(client, TOPIC, partitions, ledger, "consumer");
        consumer.start();
        ledger.stalls().start();
        for (int i = 0; i < producers; i++) {
          ChaosProducer p = new ChaosProducer(client, TOPIC, i, ledger,
              Map.of("acks", "all", "enable.idempotence", "true"), rate, 1000);
          senders.add(p);
          p.start();
        }
        ChaosConsumer c = consumer;
        ticker.scheduleAtFixedRate(() -> progress(ledger.progress() + ", unread acknowledged "
                + ledger.unreadAcknowledged() + "; nodes up " + cluster.runningNodes()
                + stallNote(ledger.stalls())
                + (c.errors().isEmpty() ? "" : "; consumer errors " + c.errors())),
            PROGRESS_EVERY.toMillis(), PROGRESS_EVERY.toMillis(), TimeUnit.MILLISECONDS);

        chaos(cluster, random);
      } catch (RuntimeException e) {
        // the cluster could not be run as planned (a node did not come back, ...): end the run here, but stop the
        // producers, verify what was acknowledged so far with the nodes that are up, and print the result line
        cutShortAt = System.nanoTime() - t0;
        cutShort = ClusterCommand.firstLine(Main.message(e));
        progress("the run is cut short: " + Main.message(e));
      }

      senders.forEach(ChaosProducer::stopSending);
      ledger.stalls().stop();
      if (!senders.isEmpty()) {
        progress("producers stopped after " + kills + " kills"
            + (unexpectedExits == 0 ? "" : " (and " + unexpectedExits + " nodes found down that chaos had not killed)")
            + "; nodes up " + cluster.runningNodes() + "; waiting for the answers of " + senders.stream()
            .mapToLong(ChaosProducer::unanswered).sum() + " sends");
        long answersDue = System.nanoTime() + finalReadTimeout.toNanos();
        for (ChaosProducer p : senders) {
          if (!p.awaitAnswers(Duration.ofNanos(Math.max(0, answersDue - System.nanoTime())))) {
            progress("producer " + p.id() + ": " + p.unanswered() + " sends still unanswered after "
                + finalReadTimeout.toSeconds() + " s (they count as not acknowledged)");
          }
        }
      }
      if (consumer != null) {
        awaitCondition(ledger::allAcknowledgedRead, finalReadTimeout);
        progress("consumer: " + (ledger.allAcknowledgedRead() ? "read everything acknowledged"
            : ledger.unreadAcknowledged() + " acknowledged records still unread after " + finalReadTimeout.toSeconds()
                + " s"));
        consumer.close();
        String missing = ChaosConsumer.readAll(client, TOPIC, partitions, ledger.reader("final read"),
            finalReadTimeout);
        progress("final read from the beginning (nodes up " + cluster.runningNodes() + "): "
            + (missing == null ? "complete" : missing));
        finalReadComplete = missing == null;
      }
    } finally {
      ticker.shutdownNow();
      senders.forEach(ChaosProducer::close);
      if (consumer != null) {
        consumer.close();
      }
      if (client != null) {
        client.close();
      }
      progress("stopping the cluster");
      cluster.stopAll(STOP_TIMEOUT);
      cluster.close();
      ClusterCommand.removeHook(abandon);
    }
    Ledger.Result result = ledger.result();
    err.println(result.details());
    StallMeter.Stall stall = ledger.stalls().longest();
    if (stall != null) {
      err.println(String.format("longest stall: %.1f s without an acknowledgement (%.1f s .. %.1f s of the run%s)",
          stall.seconds(), (stall.fromNanos() - t0) / 1e9, (stall.toNanos() - t0) / 1e9,
          stall.ongoing() ? ", until the producers stopped" : ""));
    }
    err.println("node logs: " + dir.resolve("node-I").resolve("logs").resolve("tributary.log"));
    err.flush();
    out.println(result.line());
    out.flush();
    if (!finalReadComplete) {
      err.println("the final read from the beginning did not complete: the run is not verified");
      err.flush();
    }
    if (cutShort != null) {
      err.println("chaos: the run was cut short after " + kills + " kills (" + String.format("%.1f", cutShortAt / 1e9)
          + " s): " + cutShort);
      err.flush();
      return Main.EXIT_FAILURE;
    }
    return result.ok() && finalReadComplete ? Main.EXIT_OK : Main.EXIT_FAILURE;
  }

  /** {@code ; no acknowledgement for N s} while the producers have waited more than 2 s for one. */
  private static String stallNote(StallMeter stalls) {
    long since = stalls.sinceLastNanos();
    return since < TimeUnit.SECONDS.toNanos(2) ? "" : String.format("; no acknowledgement for %.1f s", since / 1e9);
  }

  /**
   * Kills and restarts nodes until the duration is over, counting {@link #kills}.
   *
   * @throws CliException if a node cannot be killed, or does not come back after {@value #START_ATTEMPTS} starts
   */
  private void chaos(LocalClusterDriver cluster, Random random) {
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    long nextKill = start + killEvery.toNanos();
    while (true) {
      long now = System.nanoTime();
      if (now >= end) {
        return;
      }
      if (now < nextKill) {
        // the schedule of the test itself: the next kill is due at a time, not on an event
        sleepNanos(Math.min(nextKill, end) - now);
        continue;
      }
      for (int n = 1; n <= nodes; n++) {
        if (!cluster.isRunning(n)) {
          // not one of ours: e.g. downed by the Split Brain Resolver. Never two nodes down at once: start it first.
          progress("node " + n + " is down although chaos did not kill it (see " + cluster.logFile(n)
              + "); starting it again");
          unexpectedExits++;
          bringBack(cluster, n);
        }
      }
      int victim = 1 + random.nextInt(nodes);
      long killedAt = System.nanoTime();
      cluster.kill(victim);
      kills++;
      progress("kill " + kills + ": SIGKILLed node " + victim + " (" + cluster.hostPort(victim) + ")");
      bringBack(cluster, victim);
      progress("node " + victim + " Up again " + String.format("%.1f", (System.nanoTime() - killedAt) / 1e9)
          + " s after the kill");
      nextKill = killedAt + killEvery.toNanos();
    }
  }

  /**
   * Starts node {@code node} again, up to {@value #START_ATTEMPTS} times, each failure's reason on stderr.
   *
   * @throws CliException with the last reason if it does not come back
   */
  private void bringBack(LocalClusterDriver cluster, int node) {
    for (int attempt = 1; ; attempt++) {
      try {
        cluster.restart(node, START_TIMEOUT);
        if (attempt > 1) {
          progress("node " + node + " started at attempt " + attempt);
        }
        return;
      } catch (CliException e) {
        String reason = ClusterCommand.firstLine(Main.message(e));
        progress("node " + node + " did not come back (attempt " + attempt + " of " + START_ATTEMPTS + "): "
            + reason + " (" + cluster.outFile(node) + ")");
        if (attempt >= START_ATTEMPTS) {
          throw new CliException("node " + node + " did not come back after " + START_ATTEMPTS + " starts; the last"
              + " failure: " + Main.message(e), e);
        }
      }
    }
  }

  private void createTopic(TributaryClient client, short rf, int minIsr) {
    Map<String, String> configs = new LinkedHashMap<>();
    if (rf > 1) {
      configs.put("min.insync.replicas", Integer.toString(minIsr));
    }
    try (Admin admin = client.admin()) {
      admin.createTopic(TOPIC, partitions, rf, configs);
      long deadline = System.nanoTime() + TOPIC_READY_TIMEOUT.toNanos();
      while (true) {
        List<TopicDescription> d = admin.describeTopics(List.of(TOPIC));
        List<PartitionDescription> ps = d.isEmpty() ? List.of() : d.get(0).partitions();
        boolean ready = ps.size() == partitions && ps.stream().allMatch(p -> p.leader() != null
            && !p.leader().isEmpty() && p.isr() != null && p.replicas() != null && p.isr().size() == p.replicas().size()
            && p.replicas().size() == rf);
        if (ready) {
          progress("topic " + TOPIC + " created; every partition has a leader and " + rf + " in-sync replicas");
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new CliException("Topic " + TOPIC + " not ready (a leader and " + rf + " in-sync replicas per"
              + " partition) within " + TOPIC_READY_TIMEOUT.toSeconds() + " s: " + ps);
        }
        sleepNanos(TimeUnit.MILLISECONDS.toNanos(200));
      }
    }
  }

  /**
   * The nodes' config: failure detection and downing in seconds (a killed node's partitions move soon), a short
   * replica lag time, then the user's {@code --config}.
   */
  private Path writeNodeConfig(Path dir) {
    StringBuilder conf = new StringBuilder();
    conf.append("# Written by tributary chaos for every node of this run.\n");
    conf.append(nodeConfig());
    if (config != null) {
      conf.append("include file(\"").append(config.toAbsolutePath().normalize().toString().replace("\\", "\\\\")
          .replace("\"", "\\\"")).append("\")\n");
    }
    Path file = dir.resolve("chaos-node.conf");
    try {
      Files.writeString(file, conf.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException("Cannot write " + file + ": " + e.getMessage(), e);
    }
    return file;
  }

  /** The settings chaos gives every node (HOCON). */
  static String nodeConfig() {
    return String.join("\n",
        "# a killed node is unreachable after ~3 s and downed 5 s later (defaults: 3 s and 20 s)",
        "akka.cluster.failure-detector.acceptable-heartbeat-pause = 3s",
        "akka.cluster.split-brain-resolver.stable-after = 5s",
        "# a follower that is down leaves the ISR after 5 s (Kafka's default is 30 s)",
        "tributary.broker.replica.lag.time.max.ms = 5000",
        "tributary.broker.group.initial.rebalance.delay.ms = 500",
        "tributary.broker.offsets.topic.num.partitions = 5",
        "");
  }

  private void prepare(Path dir) {
    try {
      if (Files.exists(dir)) {
        try (var entries = Files.list(dir)) {
          if (entries.findAny().isPresent()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--data-dir " + dir
                + " is not empty (an earlier run?); remove it or choose another directory");
          }
        }
      }
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new CliException("Cannot create " + dir + ": " + e.getMessage(), e);
    }
  }

  private void validate() {
    CommandLine cl = spec.commandLine();
    if (nodes < 2 || nodes > 16) {
      throw new CommandLine.ParameterException(cl, "--nodes must be 2..16, was " + nodes);
    }
    if (basePort < 1 || basePort + nodes - 1 + ServerCommand.CLUSTER_PORT_OFFSET > 65535) {
      throw new CommandLine.ParameterException(cl, "--base-port must be 1.."
          + (65535 - nodes + 1 - ServerCommand.CLUSTER_PORT_OFFSET) + " (cluster ports are "
          + ServerCommand.CLUSTER_PORT_OFFSET + " above the client ports), was " + basePort);
    }
    if (duration.isZero() || duration.isNegative()) {
      throw new CommandLine.ParameterException(cl, "--duration must be positive, was " + duration);
    }
    if (killEvery.toMillis() < 1) {
      throw new CommandLine.ParameterException(cl, "--kill-every must be positive, was " + killEvery);
    }
    if (partitions < 1 || producers < 1 || rate < 1) {
      throw new CommandLine.ParameterException(cl, "--partitions, --producers and --rate must be at least 1");
    }
    if (replicationFactor != null && (replicationFactor < 1 || replicationFactor > nodes)) {
      throw new CommandLine.ParameterException(cl, "--replication-factor must be 1.." + nodes + ", was "
          + replicationFactor);
    }
    if (minInsyncReplicas != null && minInsyncReplicas < 1) {
      throw new CommandLine.ParameterException(cl, "--min-insync-replicas must be at least 1, was "
          + minInsyncReplicas);
    }
    if (config != null) {
      CliException.requireReadableFile(cl, "--config", config);
    }
  }

  private void progress(String line) {
    if (err == null) {
      return;
    }
    synchronized (err) {
      err.println(String.format("[%6.1f s] ", (System.nanoTime() - t0) / 1e9) + line);
      err.flush();
    }
  }

  private static void awaitCondition(java.util.function.BooleanSupplier condition, Duration bound) {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      sleepNanos(TimeUnit.MILLISECONDS.toNanos(200));
    }
  }

  private static void sleepNanos(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(Math.max(0, nanos));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("Interrupted");
    }
  }

  /** {@code 300s}, {@code 5m}, {@code 500ms}, {@code 1h}, or a plain number of seconds. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern FORMAT = Pattern.compile("(\\d+)(ms|s|m|h)?");

    @Override
    public Duration convert(String value) {
      Matcher m = FORMAT.matcher(value.trim());
      if (!m.matches()) {
        throw new CommandLine.TypeConversionException("'" + value + "' is not a duration like 300s, 5m or 500ms");
      }
      long n = Long.parseLong(m.group(1));
      String unit = m.group(2) == null ? "s" : m.group(2);
      return switch (unit) {
        case "ms" -> Duration.ofMillis(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofSeconds(n);
      };
    }
  }
}
