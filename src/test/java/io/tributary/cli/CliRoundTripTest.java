package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.record.Murmur2;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/**
 * The client commands against a real broker (started in this JVM; the client commands connect to it over Artery like
 * a separate process would): topics, produce from "stdin", consume to "stdout", perf. Each test uses its own topic.
 */
class CliRoundTripTest {
  static Path dataDir;
  static BrokerNode node;
  static String bootstrap;

  @BeforeAll
  static void startBroker() throws IOException {
    dataDir = Files.createTempDirectory("tributary-cli-test-");
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("tributary.data-dir", dataDir.toString());
    overrides.put("akka.remote.artery.canonical.port", 0);
    overrides.put("tributary.broker.listeners", "127.0.0.1:0"); // a free port: 9092 may be some broker's
    overrides.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    node = BrokerNode.start(BrokerNode.config(null, overrides));
    bootstrap = node.bootstrapServer();
  }

  @AfterAll
  static void stopBroker() throws IOException {
    if (node != null) {
      node.close();
    }
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** The outcome of one run; {@code raw} is what a consume command wrote to its "stdout". */
  record Run(int exitCode, String out, String err, byte[] raw) {}

  static Run run(byte[] stdin, String... args) {
    CommandLine cmd = Main.newCommandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    ByteArrayOutputStream raw = new ByteArrayOutputStream();
    ((ConsumeCommand) cmd.getSubcommands().get("consume").getCommand()).out = raw;
    if (stdin != null) {
      ((ProduceCommand) cmd.getSubcommands().get("produce").getCommand()).in = new ByteArrayInputStream(stdin);
    }
    int code = cmd.execute(args);
    return new Run(code, out.toString(), err.toString(), raw.toByteArray());
  }

  static Run run(String... args) {
    return run(null, args);
  }

  static Run ok(Run r) {
    assertEquals(Main.EXIT_OK, r.exitCode(), "stdout: " + r.out() + "\nstderr: " + r.err());
    return r;
  }

  @Test
  void topicsCreateListDescribeDelete() {
    assertEquals("Created topic orders.\n",
        ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "orders", "--partitions", "3",
            "--config", "retention.ms=60000")).out());
    assertTrue(ok(run("topics", "--bootstrap-server", bootstrap, "--list")).out().lines().toList().contains("orders"));

    List<String> describe =
        ok(run("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "orders")).out().lines().toList();
    assertEquals(4, describe.size(), describe.toString());
    assertTrue(describe.get(0).matches(
        "Topic: orders\tTopicId: \\S+\tPartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=60000"),
        describe.get(0));
    String member = node.clusterAddress(); // replicas are named by the node's cluster address
    for (int p = 0; p < 3; p++) {
      assertEquals("\tTopic: orders\tPartition: " + p + "\tLeader: " + member + "\tReplicas: " + member
          + "\tIsr: " + member + "\tLeaderEpoch: 0", describe.get(p + 1));
    }

    Run again = run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "orders", "--partitions", "3");
    assertEquals(Main.EXIT_FAILURE, again.exitCode());
    assertTrue(again.err().startsWith("Error: TOPIC_ALREADY_EXISTS"), again.err());
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "orders", "--if-not-exists"));

    assertEquals("Deleted topic orders.\n",
        ok(run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "orders")).out());
    Run gone = run("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "orders");
    assertEquals(Main.EXIT_FAILURE, gone.exitCode());
    assertTrue(gone.err().startsWith("Error: UNKNOWN_TOPIC_OR_PARTITION"), gone.err());
    ok(run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "orders", "--if-exists"));
  }

  /**
   * A newcomer's 25 bytes: Artery's magic, a stream id and a frame length of {@code 0x7fffffff} (or -1) made Akka
   * 2.6.21's framing move its reader backwards, and the broker's actors' thread parse forever (see Tributary's {@code
   * akka.stream.impl.io.ByteStringParser$ByteReader}). The broker must drop those connections and go on serving.
   */
  @Test
  void aConnectionThatSendsABadFrameLengthIsDroppedAndTheBrokerGoesOnServing() throws IOException {
    assertTrue(io.tributary.broker.Tributary.framingGuardActive(), "Tributary's ByteReader comes first");
    String[] hostPort = bootstrap.split(":");
    for (int length : new int[] {Integer.MAX_VALUE, -1, Integer.MIN_VALUE}) {
      try (java.net.Socket s = new java.net.Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
        java.nio.ByteBuffer frame = java.nio.ByteBuffer.allocate(25).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        frame.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).putInt(length);
        s.getOutputStream().write(frame.array());
        s.getOutputStream().flush();
      }
    }
    // a frame length the broker would have buffered for (0x7fffffff, then data: 184 MB and OutOfMemoryError for a
    // newcomer) closes the connection instead, before the 64 MiB that follow it are through
    try (java.net.Socket s = new java.net.Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
      java.nio.ByteBuffer header = java.nio.ByteBuffer.allocate(9).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      header.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) 1).putInt(Integer.MAX_VALUE);
      s.getOutputStream().write(header.array());
      byte[] data = new byte[1024 * 1024];
      assertThrows(IOException.class, () -> {
        for (int mib = 0; mib < 64; mib++) {
          s.getOutputStream().write(data);
        }
      }, "the broker closes a connection whose frame length is above the largest frame");
    }
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "after-garbage", "--partitions", "1"));
    ok(run("a\nb\n".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic",
        "after-garbage"));
    assertEquals(List.of("a", "b"), valuesOf("after-garbage", 2));
  }

  @Test
  void garbageFramesOnEveryStreamAreLoggedAtMostTenTimesPerWindow() throws IOException {
    // newcomers' floods: a million short garbage frames wrote a million "Dropping message" warnings (199 MB of log);
    // on Artery's large-message stream (3), a million "Dropping large message" warnings (219 MB). (Connections closed
    // within a frame log through Logback's RateLimitedTurboFilter: RateLimitedTurboFilterTest.)
    // frames that pass Tributary's TcpFraming (28 bytes or more, protocol version 0) and fail Artery's decoder: the
    // sender is a literal (tag 0) whose length, at byte 28, is 32767 bytes, beyond the frame
    byte[] frames = new byte[5 + 1000 * 36];
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(frames).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    b.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) 2);
    byte[] garbage = new byte[32];
    garbage[12] = 5; // a serializer id other than the null serializer's 0
    garbage[28] = (byte) 0xff;
    garbage[29] = 0x7f;
    for (int i = 0; i < 1000; i++) {
      b.putInt(garbage.length).put(garbage);
    }
    assertLoggedAtMostTenTimes("akka.remote.artery.De", () -> rawConnection(frames));
    frames[4] = 3; // the same frames on the large-message stream
    assertLoggedAtMostTenTimes("akka.remote.artery.ArteryTransport", () -> rawConnection(frames));
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "after-flood", "--partitions", "1"));
  }

  /**
   * A connection whose first frame cannot be an Artery envelope (shorter than its header, of another protocol
   * version, or of Akka's null serializer), or that names a stream Artery does not have, is closed at once by Tributary's TcpFraming, instead of
   * having each of its frames decoded (a newcomer's million garbage frames on one connection kept a broker busy for
   * seconds). The broker goes on serving.
   */
  @Test
  void aConnectionThatSendsWhatCannotBeAnEnvelopeIsClosedAtOnce() throws IOException {
    assertTrue(akka.remote.artery.tcp.TcpFraming.CHECKS_ENVELOPES, "Tributary's TcpFraming comes first");
    String[] hostPort = bootstrap.split(":");
    byte[] version1 = new byte[40];
    version1[0] = 1;
    // an all-zero 40-byte frame names Akka's null serializer: a newcomer's 100,000 of them crashed the dead-letter
    // listener once each (454,371 log lines) and delayed the node's heartbeats by 3.5 s
    for (Object[] attack : new Object[][] {
        {2, new byte[20]}, {2, version1}, {3, version1}, {7, new byte[40]}, {2, new byte[40]}}) {
      try (java.net.Socket s = new java.net.Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
        byte[] frame = (byte[]) attack[1];
        java.nio.ByteBuffer header = java.nio.ByteBuffer.allocate(9 + frame.length)
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
        header.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) (int) (Integer) attack[0])
            .putInt(frame.length).put(frame);
        s.getOutputStream().write(header.array());
        // then garbage frames of 20 bytes, which Akka's framing handed on to Artery's decoder one by one
        java.nio.ByteBuffer more = java.nio.ByteBuffer.allocate(24 * 43690).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        while (more.hasRemaining()) {
          more.putInt(20).put(new byte[20]);
        }
        assertThrows(IOException.class, () -> {
          for (int mib = 0; mib < 64; mib++) {
            s.getOutputStream().write(more.array());
          }
        }, "the broker closes the connection after stream " + attack[0] + "'s first frame");
      }
    }
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "after-bad-envelopes", "--partitions",
        "1"));
    ok(run("x\n".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic",
        "after-bad-envelopes"));
    assertEquals(List.of("x"), valuesOf("after-bad-envelopes", 1));
  }

  /** Sends {@code bytes} on a new TCP connection to the broker and closes it. */
  private static void rawConnection(byte[] bytes) {
    String[] hostPort = bootstrap.split(":");
    try (java.net.Socket s = new java.net.Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
      s.getOutputStream().write(bytes);
      s.getOutputStream().flush();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * Runs {@code attack} and waits for the broker's RateLimitedLoggingFilter to say it suppresses the warnings and
   * errors of a logger whose class name starts with {@code classPrefix}; before that, exactly PER_WINDOW of them.
   */
  private static void assertLoggedAtMostTenTimes(String classPrefix, Runnable attack) {
    // the garbage goes to the client listener, an ActorSystem of its own with its own event stream
    akka.actor.typed.ActorSystem<?> listener = node.tributary().listener().orElseThrow().system();
    akka.actor.ActorSystem classic = akka.actor.typed.javadsl.Adapter.toClassic(listener);
    akka.actor.testkit.typed.javadsl.TestProbe<akka.event.Logging.LogEvent> events =
        akka.actor.testkit.typed.javadsl.TestProbe.create(listener);
    akka.actor.ActorRef ref = akka.actor.typed.javadsl.Adapter.toClassic(events.ref());
    classic.eventStream().subscribe(ref, akka.event.Logging.Warning.class);
    classic.eventStream().subscribe(ref, akka.event.Logging.Error.class);
    try {
      attack.run();
      int lines = 0;
      while (true) {
        akka.event.Logging.LogEvent e = events.receiveMessage(java.time.Duration.ofSeconds(30));
        if (e.logClass() == io.tributary.util.RateLimitedLoggingFilter.class
            && e.message().toString().startsWith("More than 10 warnings and errors of " + classPrefix)) {
          break;
        }
        if (e.logClass().getName().startsWith(classPrefix)) {
          lines++;
        }
      }
      assertEquals(io.tributary.util.RateLimitedLoggingFilter.PER_WINDOW, lines, "lines let through before the cap");
    } finally {
      classic.eventStream().unsubscribe(ref);
    }
  }

  @Test
  void invalidTopicNameIsAFailureWithTheBrokersCode() {
    Run r = run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "no spaces", "--partitions", "1");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertTrue(r.err().startsWith("Error: INVALID_TOPIC_EXCEPTION"), r.err());
  }

  /** As Kafka: names that differ only in '.' against '_' collide (Kafka's metric names would be the same). */
  @Test
  void aTopicWhoseNameCollidesOnDotsAndUnderscoresIsRefused() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "clash.a_b", "--partitions", "1"));
    Run r = run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "clash_a.b", "--partitions", "1");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertEquals("Error: INVALID_TOPIC_EXCEPTION: Topic 'clash_a.b' collides with existing topic: clash.a_b\n",
        r.err());
    List<String> all = ok(run("topics", "--bootstrap-server", bootstrap, "--list")).out().lines().toList();
    assertTrue(all.contains("clash.a_b") && !all.contains("clash_a.b"), all.toString());
  }

  @Test
  void producedLinesComeBackByteIdenticalWithTheirKeys() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "verses", "--partitions", "3"));
    // real lines (the first 500 verses), keyed by their reference ("Ge1:1"), plus UTF-8 and an empty value
    QuickstartInput kjv = QuickstartInput.bundled();
    StringBuilder in = new StringBuilder();
    int lines = 500;
    for (int line = 1; line <= lines; line++) {
      String verse = new String(kjv.line(line), StandardCharsets.US_ASCII);
      int space = verse.indexOf(' ');
      in.append(verse, 0, space).append(':').append(verse.substring(space + 1)).append('\n');
    }
    in.append("Œuvre:naïve — ünïcödé\n").append("empty:\n");
    lines += 2;
    byte[] stdin = in.toString().getBytes(StandardCharsets.UTF_8);
    Run produced = run(stdin, "produce", "--bootstrap-server", bootstrap, "--topic", "verses", "--acks", "all",
        "--property", "parse.key=true", "--property", "key.separator=:");
    ok(produced);
    assertEquals("", produced.out());

    Run consumed = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "verses", "--from-beginning",
        "--max-messages", Integer.toString(lines), "--property", "print.key=true", "--property",
        "print.partition=true", "--property", "key.separator=\\t"));
    assertEquals("Processed a total of " + lines + " messages\n", consumed.err());
    List<String> out = new String(consumed.raw(), StandardCharsets.UTF_8).lines().toList();
    assertEquals(lines, out.size());

    // Every input line is back (order is per partition, so compare as sets), in the partition its key hashes to.
    Map<String, String> expected = new HashMap<>();
    for (String l : in.toString().split("\n", -1)) {
      if (!l.isEmpty()) {
        int colon = l.indexOf(':');
        expected.put(l.substring(0, colon), l.substring(colon + 1));
      }
    }
    Map<String, String> actual = new HashMap<>();
    for (String l : out) {
      String[] f = l.split("\t", 3);
      String key = f[1];
      int partition = Integer.parseInt(f[0].substring("Partition:".length()));
      assertEquals(Murmur2.partitionForKey(key.getBytes(StandardCharsets.UTF_8), 3), partition, l);
      actual.put(key, f[2]);
    }
    assertEquals(expected, actual);
  }

  @Test
  void consumeOnePartitionFromAnOffset() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "single", "--partitions", "1"));
    byte[] stdin = "zero\none\ntwo\nthree\n".getBytes(StandardCharsets.UTF_8);
    ok(run(stdin, "produce", "--bootstrap-server", bootstrap, "--topic", "single"));
    Run r = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "single", "--partition", "0", "--offset",
        "2", "--max-messages", "2", "--property", "print.offset=true"));
    assertEquals("Offset:2\ttwo\nOffset:3\tthree\n", new String(r.raw(), StandardCharsets.UTF_8));

    // beyond the end: said on stderr, then the consumer waits at the end (auto.offset.reset=latest), as Kafka's
    Run beyond = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "single", "--partition", "0",
        "--offset", "10", "--timeout-ms", "500"));
    assertEquals("", new String(beyond.raw(), StandardCharsets.UTF_8));
    assertTrue(beyond.err().contains("--offset 10 is outside partition single-0 (log start offset 0, high watermark"
        + " 4); reading from the high watermark 4 on (auto.offset.reset=latest)"), beyond.err());
    Run earliest = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "single", "--partition", "0",
        "--offset", "10", "--consumer-property", "auto.offset.reset=earliest", "--max-messages", "1"));
    assertEquals("zero\n", new String(earliest.raw(), StandardCharsets.UTF_8));
    assertTrue(earliest.err().contains("reading from the log start offset 0 (auto.offset.reset=earliest)"),
        earliest.err());
    Run inRange = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "single", "--partition", "0",
        "--offset", "4", "--timeout-ms", "200"));
    assertEquals("Processed a total of 0 messages\n", inRange.err()); // the end itself is a valid start

    Run missing = run("consume", "--bootstrap-server", bootstrap, "--topic", "single", "--partition", "5",
        "--timeout-ms", "100");
    assertEquals(Main.EXIT_FAILURE, missing.exitCode());
    assertTrue(missing.err().contains("UNKNOWN_TOPIC_OR_PARTITION: Partition 5 does not exist"), missing.err());
  }

  @Test
  void consumeStopsWhenNothingArrivesForTheTimeout() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "quiet", "--partitions", "2"));
    ok(run("produce".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic",
        "quiet"));
    Run r = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "quiet", "--from-beginning",
        "--timeout-ms", "1000"));
    assertEquals("produce\n", new String(r.raw(), StandardCharsets.UTF_8));
    assertEquals("Processed a total of 1 messages\n", r.err());
  }

  /**
   * With a group, --timeout-ms counts from the end of the first rebalance: joining takes the broker's
   * group.initial.rebalance.delay.ms (3 s here), far longer than the timeout, and the record is still read.
   */
  @Test
  void groupConsumeTimeoutStartsWhenTheGroupIsJoined() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "quiet-group", "--partitions", "2"));
    ok(run("one".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic",
        "quiet-group"));
    Run r = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "quiet-group", "--group", "g-quiet",
        "--from-beginning", "--timeout-ms", "500"));
    assertEquals("one\n", new String(r.raw(), StandardCharsets.UTF_8));
    assertEquals("Processed a total of 1 messages\n", r.err());
  }

  /**
   * As Kafka's {@code kafka-topics --list} and {@code --describe}: internal topics too, unless {@code
   * --exclude-internal}.
   */
  @Test
  void listAndDescribeShowTheInternalOffsetsTopicUnlessExcluded() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "listed", "--partitions", "1"));
    ok(run("x".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic", "listed"));
    ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "listed", "--group", "g-listed",
        "--from-beginning", "--max-messages", "1"));
    List<String> all = ok(run("topics", "--bootstrap-server", bootstrap, "--list")).out().lines().toList();
    assertTrue(all.contains("__consumer_offsets") && all.contains("listed"), all.toString());
    List<String> user =
        ok(run("topics", "--bootstrap-server", bootstrap, "--list", "--exclude-internal")).out().lines().toList();
    assertTrue(user.contains("listed") && !user.contains("__consumer_offsets"), user.toString());
    String described = ok(run("topics", "--bootstrap-server", bootstrap, "--describe")).out();
    assertTrue(described.contains("Topic: __consumer_offsets\t") && described.contains("Topic: listed\t"), described);
    String external = ok(run("topics", "--bootstrap-server", bootstrap, "--describe", "--exclude-internal")).out();
    assertTrue(!external.contains("__consumer_offsets") && external.contains("Topic: listed\t"), external);
    Run internal = run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "__.*");
    assertEquals(Main.EXIT_FAILURE, internal.exitCode());
    assertTrue(internal.err().startsWith("Error: INVALID_REQUEST")
        && internal.err().contains("Topic '__.*' matches only internal topics, which are never deleted"),
        internal.err());
    assertTrue(ok(run("topics", "--bootstrap-server", bootstrap, "--list")).out().lines().toList()
        .contains("__consumer_offsets"));
    assertEquals(Main.EXIT_USAGE,
        run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "x", "--exclude-internal").exitCode());
  }

  /** As Kafka's {@code kafka-topics --list --topic}: a regular expression the whole name matches; commas separate. */
  @Test
  void listWithATopicListsTheNamesItMatches() {
    for (String t : List.of("regex-a1", "regex-a2", "regex-b1")) {
      ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", t, "--partitions", "1"));
    }
    assertEquals(List.of("regex-a1", "regex-a2"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list",
        "--topic", "regex-a.*")).out()));
    assertEquals(List.of("regex-b1"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list",
        "--topic", "regex-b1")).out()));
    assertEquals(List.of("regex-a2", "regex-b1"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list",
        "--topic", "regex-a2,regex-b.*")).out()));
    assertEquals(List.of(), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list", "--topic",
        "regex")).out()), "the whole name must match");
    Run bad = run("topics", "--bootstrap-server", bootstrap, "--list", "--topic", "regex-(");
    assertEquals(Main.EXIT_USAGE, bad.exitCode());
    assertTrue(bad.err().contains("--topic with --list is a regular expression, and 'regex-(' is not one"), bad.err());
    Run comma = run("topics", "--bootstrap-server", bootstrap, "--list", "--topic", "regex-a{1,2}");
    assertEquals(Main.EXIT_USAGE, comma.exitCode());
    assertTrue(comma.err().contains("(commas separate alternatives, as in Kafka's, so a counted quantifier {m,n} "
        + "cannot be written: it was read as 'regex-a{1|2}')"), comma.err());
    assertEquals(List.of("regex-a1", "regex-b1"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list",
        "--topic", " \"regex-a1, regex-b1\" ")).out()), "spaces and outer quotes dropped, as Kafka's TopicFilter");
  }

  /** As Kafka's {@code kafka-topics --describe|--delete --topic}: a regular expression of whole names. */
  @Test
  void describeAndDeleteTakeRegularExpressions() {
    for (String t : List.of("rx-a1", "rx-a2", "rx.b", "rxxb")) {
      ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", t, "--partitions", "1"));
    }
    assertEquals(List.of("rx-a1", "rx-a2"), topicLines(ok(run("topics", "--bootstrap-server", bootstrap,
        "--describe", "--topic", "rx-a.*")).out()));
    assertEquals(List.of("rx.b", "rxxb"), topicLines(ok(run("topics", "--bootstrap-server", bootstrap,
        "--describe", "--topic", "rx.b")).out()), "a dot matches any character, as in Kafka");
    assertEquals("Deleted topic rx.b.\n", ok(run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic",
        "rx\\.b")).out(), "an escaped dot matches only itself");
    assertEquals("Deleted topic rx-a1.\nDeleted topic rxxb.\n", ok(run("topics", "--bootstrap-server", bootstrap,
        "--delete", "--topic", "rx-a1,rxx.*,rx-none")).out());
    assertEquals(List.of("rx-a2"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list", "--topic",
        "rx.*")).out()));

    Run none = run("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "rx-none.*");
    assertEquals(Main.EXIT_FAILURE, none.exitCode());
    assertTrue(none.err().startsWith("Error: UNKNOWN_TOPIC_OR_PARTITION"), none.err());
    assertEquals("", ok(run("topics", "--bootstrap-server", bootstrap, "--describe", "--topic", "rx-none.*",
        "--if-exists")).out());
    assertEquals("", ok(run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "rx-none.*",
        "--if-exists")).out());
    Run bad = run("topics", "--bootstrap-server", bootstrap, "--delete", "--topic", "rx-(");
    assertEquals(Main.EXIT_USAGE, bad.exitCode());
    assertTrue(bad.err().contains("--topic with --delete is a regular expression"), bad.err());
    assertEquals(List.of("rx-a2"), sorted(ok(run("topics", "--bootstrap-server", bootstrap, "--list", "--topic",
        "rx.*")).out()), "a bad expression deletes nothing");
  }

  /** The names of the topic lines ({@code Topic: t\tTopicId: ...}) of {@code --describe}'s output, in order. */
  private static List<String> topicLines(String out) {
    return out.lines().filter(l -> l.startsWith("Topic: ")).map(l -> l.substring(7, l.indexOf('\t'))).toList();
  }

  private static List<String> sorted(String lines) {
    return lines.lines().sorted().toList();
  }

  @Test
  void produceToAMissingTopicFailsWithOneLine() {
    Run r = run("x\n".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap, "--topic",
        "does-not-exist", "--producer-property", "max.block.ms=1000");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertTrue(r.err().startsWith("Error: UNKNOWN_TOPIC_OR_PARTITION"), r.err());
    assertEquals(1, r.err().strip().lines().count(), r.err());
  }

  @Test
  void produceFailsOnALineWithoutKeySeparator() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "keyed", "--partitions", "1"));
    Run r = run("a:1\nno separator\n".getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap,
        "--topic", "keyed", "--property", "parse.key=true", "--property", "key.separator=:");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertTrue(r.err().contains("No key separator found on line number 2"), r.err());
  }

  /** Lines "line-1" .. "line-10" with line 5 replaced by 300 bytes: too large for a 200-byte limit. */
  static byte[] tenLinesWithAnOversizedFifth() {
    StringBuilder in = new StringBuilder();
    for (int i = 1; i <= 10; i++) {
      in.append(i == 5 ? "x".repeat(300) : "line-" + i).append('\n');
    }
    return in.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** The values of every record of a one-partition topic, in offset order. */
  static List<String> valuesOf(String topic, int expected) {
    Run r = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", topic, "--from-beginning",
        "--max-messages", Integer.toString(expected), "--timeout-ms", "10000"));
    return new String(r.raw(), StandardCharsets.UTF_8).lines().toList();
  }

  static final List<String> ALL_BUT_THE_FIFTH = List.of("line-1", "line-2", "line-3", "line-4", "line-6", "line-7",
      "line-8", "line-9", "line-10");

  @Test
  void produceGoesOnAfterARecordTooLargeForTheProducer() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "big-fifth", "--partitions", "1"));
    Run r = run(tenLinesWithAnOversizedFifth(), "produce", "--bootstrap-server", bootstrap, "--topic", "big-fifth",
        "--producer-property", "max.request.size=200");
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    List<String> err = r.err().lines().toList();
    assertEquals(2, err.size(), r.err());
    assertTrue(err.get(0).startsWith("Line 5 failed: MESSAGE_TOO_LARGE: "), r.err());
    assertTrue(err.get(0).contains("max.request.size=200"), r.err());
    assertEquals("Error: 1 of 10 records failed (line 5)", err.get(1));
    assertEquals(ALL_BUT_THE_FIFTH, valuesOf("big-fifth", 9));
  }

  /**
   * A newcomer's finding: with {@code max.request.size} above what Artery's frame carries, a 2.5 MB record went out,
   * was dropped by Artery as oversized, timed out after 30 s per try, and the valid record after it was lost with
   * OUT_OF_ORDER_SEQUENCE_NUMBER. The producer caps its requests at the frame's limit: such a record fails at once.
   */
  @Test
  void aRecordLargerThanTheTransportCarriesFailsAtOnceAndTheNextOneIsStored() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "above-frame", "--partitions", "1"));
    String huge = "x".repeat(2_500_000);
    Run r = run(("small-1\n" + huge + "\nsmall-3\n").getBytes(StandardCharsets.UTF_8), "produce",
        "--bootstrap-server", bootstrap, "--topic", "above-frame", "--producer-property", "max.request.size=5000000");
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    List<String> err = r.err().lines().toList();
    assertEquals(2, err.size(), r.err());
    assertTrue(err.get(0).startsWith("Line 2 failed: MESSAGE_TOO_LARGE: "), r.err());
    assertTrue(err.get(0).contains("akka.remote.artery.advanced.maximum-frame-size less 64 KiB; max.request.size="
        + "5000000"), r.err());
    assertEquals("Error: 1 of 3 records failed (line 2)", err.get(1));
    assertEquals(List.of("small-1", "small-3"), valuesOf("above-frame", 2));
  }

  /**
   * Only line 5 fails, whether it is in a batch of its own (batch.size=0: with the default 5 batches in flight, the
   * lines after it that were in flight are refused with OUT_OF_ORDER_SEQUENCE_NUMBER, and the idempotent producer
   * resends them with its bumped epoch) or in one batch with the nine others (linger.ms large: the whole input is sent
   * at the flush; the broker refuses that batch as too large, and the producer splits it and resends the pieces).
   */
  @ParameterizedTest
  @ValueSource(strings = {"batch.size=0", "linger.ms=600000"})
  void produceGoesOnAfterARecordTheBrokerRejectsAsTooLarge(String producerProperty) {
    String topic = "big-fifth-broker-" + producerProperty.substring(0, producerProperty.indexOf('.'));
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "1",
        "--config", "max.message.bytes=200"));
    Run r = run(tenLinesWithAnOversizedFifth(), "produce", "--bootstrap-server", bootstrap, "--topic", topic,
        "--producer-property", producerProperty);
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    List<String> err = r.err().lines().toList();
    assertEquals(2, err.size(), r.err());
    assertTrue(err.get(0).startsWith("Line 5 failed: MESSAGE_TOO_LARGE"), r.err());
    assertEquals("Error: 1 of 10 records failed (line 5)", err.get(1));
    assertEquals(ALL_BUT_THE_FIFTH, valuesOf(topic, 9));
  }

  @Test
  void produceStopsReadingAfterAnErrorThatWouldFailEveryLaterRecord() throws Exception {
    // acks=all cannot succeed: 2 in-sync replicas needed, 1 exists; NOT_ENOUGH_REPLICAS is retried until the
    // delivery timeout, which then fails the record with REQUEST_TIMED_OUT, an error that is not about one record
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "no-isr", "--partitions", "1",
        "--config", "min.insync.replicas=2"));
    CommandLine cmd = Main.newCommandLine();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(new StringWriter(), true));
    cmd.setErr(new PrintWriter(err, true));
    PipedOutputStream stdin = new PipedOutputStream();
    ((ProduceCommand) cmd.getSubcommands().get("produce").getCommand()).in = new PipedInputStream(stdin);
    CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> cmd.execute("produce",
        "--bootstrap-server", bootstrap, "--topic", "no-isr", "--producer-property", "linger.ms=0",
        "--producer-property", "request.timeout.ms=500", "--producer-property", "delivery.timeout.ms=1000"));
    stdin.write("one\n".getBytes(StandardCharsets.UTF_8));
    stdin.flush();
    await("line 1 failed", () -> err.toString().contains("Line 1 failed: "));
    stdin.write("two\nthree\n".getBytes(StandardCharsets.UTF_8));
    stdin.close();
    assertEquals(Main.EXIT_FAILURE, exit.get(60, TimeUnit.SECONDS), err.toString());

    List<String> lines = err.toString().lines().toList();
    assertEquals(2, lines.size(), err.toString());
    assertTrue(lines.get(0).startsWith("Line 1 failed: REQUEST_TIMED_OUT: "), err.toString());
    assertTrue(lines.get(0).contains("NOT_ENOUGH_REPLICAS"), err.toString());
    assertEquals("Error: 1 of 1 records failed (line 1); lines 2 and later were not sent: REQUEST_TIMED_OUT"
        + " (line 1) is not a problem of one record; a record that timed out may have been stored all the same"
        + " (as with Kafka's producer): check before sending it again", lines.get(1));
    Run read = ok(run("consume", "--bootstrap-server", bootstrap, "--topic", "no-isr", "--from-beginning",
        "--timeout-ms", "500"));
    assertEquals("", new String(read.raw(), StandardCharsets.UTF_8)); // nothing of lines 2 and 3 was written
  }

  /** Polls {@code condition} until it holds, for at most 60 s. */
  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Timed out waiting for: " + what);
      }
      Thread.sleep(20); // polling a condition with a deadline
    }
  }

  @Test
  void perfProduceAndConsumePrintKafkasLines() {
    ok(run("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "perf", "--partitions", "1"));
    Run p = ok(run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "perf", "--num-records", "2000",
        "--record-size", "100", "--throughput", "-1", "--producer-props", "acks=1", "linger.ms=5"));
    List<String> lines = p.out().lines().toList();
    assertTrue(lines.get(lines.size() - 1).matches("2000 records sent, [0-9.]+ records/sec \\([0-9.]+ MB/sec\\),"
        + " [0-9.]+ ms avg latency, [0-9.]+ ms max latency, \\d+ ms 50th, \\d+ ms 95th, \\d+ ms 99th,"
        + " \\d+ ms 99.9th\\."), p.out());

    Run c = ok(run("perf", "consume", "--bootstrap-server", bootstrap, "--topic", "perf", "--messages", "2000"));
    List<String> out = c.out().lines().toList();
    assertEquals(PerfFormat.CONSUMER_HEADER, out.get(0));
    String[] fields = out.get(1).split(", ");
    assertEquals(10, fields.length, out.get(1));
    assertEquals("0.1907", fields[2]); // 2000 x 100 B in MB
    assertEquals("2000", fields[4]);
    assertEquals("0", fields[6]);
    assertTrue(Arrays.stream(fields).limit(2).allMatch(f -> f.matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d:\\d{3}")),
        out.get(1));
  }
}
