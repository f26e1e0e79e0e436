package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.BrokerNode;
import io.tributary.broker.TestNodes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The short version of {@code bin/compare-kafka}, kept in {@code mvn verify} so that the perf tools keep working:
 * {@code perf produce} (flat out and throttled), {@code perf consume} and {@code perf e2e-latency} against a broker
 * in this JVM, their output parsed with the very regular expressions the benchmark script parses Kafka's tools with
 * (read from the script), and the record counts checked.
 */
class PerfToolsSmokeTest {
  static final Path SCRIPT = Path.of("bin", "compare-kafka");
  static final Pattern SCRIPT_REGEX = Pattern.compile("^(RE_[A-Z0-9_]+)='(.*)'$");

  static Map<String, Pattern> benchRegexes;
  static Path dataDir;
  static BrokerNode node;
  static String bootstrap;

  @BeforeAll
  static void start() throws IOException {
    benchRegexes = regexesOf(SCRIPT);
    dataDir = TestNodes.tempDataDir();
    node = TestNodes.start(dataDir, Map.of());
    bootstrap = node.bootstrapServer();
  }

  @AfterAll
  static void stop() throws IOException {
    if (node != null) {
      node.close();
    }
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** The {@code RE_NAME='...'} lines of the script: POSIX extended regular expressions that Java reads alike. */
  static Map<String, Pattern> regexesOf(Path script) throws IOException {
    Map<String, Pattern> found = new LinkedHashMap<>();
    for (String line : Files.readAllLines(script, StandardCharsets.UTF_8)) {
      Matcher m = SCRIPT_REGEX.matcher(line);
      if (m.matches()) {
        found.put(m.group(1), Pattern.compile(m.group(2)));
      }
    }
    return found;
  }

  static Pattern re(String name) {
    Pattern p = benchRegexes.get(name);
    if (p == null) {
      throw new AssertionError(name + " is not defined in " + SCRIPT + " (found " + benchRegexes.keySet() + ")");
    }
    return p;
  }

  static Matcher match(String name, String line) {
    Matcher m = re(name).matcher(line);
    assertTrue(m.matches(), "'" + line + "' does not match " + name + " of " + SCRIPT);
    return m;
  }

  record Run(int exitCode, String out, String err) {
    List<String> lines() {
      return out.lines().toList();
    }
  }

  static Run ok(String... args) {
    Run r = run(args);
    assertEquals(Main.EXIT_OK, r.exitCode(), "stdout: " + r.out() + "\nstderr: " + r.err());
    return r;
  }

  @Test
  void theScriptDefinesEveryRegexAndIsValidBash() throws Exception {
    assertEquals(List.of("RE_PRODUCE_TOTAL", "RE_PRODUCE_WINDOW", "RE_CONSUME_HEADER", "RE_CONSUME_LINE", "RE_E2E_AVG",
        "RE_E2E_PERCENTILES"), List.copyOf(benchRegexes.keySet()));
    Process bash = new ProcessBuilder("bash", "-n", SCRIPT.toString()).redirectErrorStream(true).start();
    String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(60, TimeUnit.SECONDS), "bash -n did not finish");
    assertEquals(0, bash.exitValue(), output);
  }

  @Test
  void produceThenConsumeThroughTheBenchParsers() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke", "--partitions", "2");
    Run produced = ok("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke", "--num-records", "3000",
        "--record-size", "100", "--throughput", "-1", "--producer-props", "acks=1", "linger.ms=5",
        "batch.size=65536");
    List<String> lines = produced.lines();
    for (String line : lines.subList(0, lines.size() - 1)) {
      match("RE_PRODUCE_WINDOW", line);
    }
    Matcher total = match("RE_PRODUCE_TOTAL", lines.get(lines.size() - 1));
    assertEquals("3000", total.group(1));

    Run consumed = ok("perf", "consume", "--bootstrap-server", bootstrap, "--topic", "smoke", "--messages", "3000");
    assertEquals(2, consumed.lines().size(), consumed.out());
    match("RE_CONSUME_HEADER", consumed.lines().get(0));
    Matcher line = match("RE_CONSUME_LINE", consumed.lines().get(1));
    assertEquals("3000", line.group(5)); // data.consumed.in.nMsg
    assertEquals("0.2861", line.group(3)); // data.consumed.in.MB: 3000 x 100 B
  }

  @Test
  void aConsumeThatTimesOutShortOfItsMessagesWarnsAsKafkaStillPrintsItsLineAndExitsOne() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-short", "--partitions", "1");
    ok("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-short", "--num-records", "10",
        "--record-size", "100", "--throughput", "-1");
    Run r = run("perf", "consume", "--bootstrap-server", bootstrap, "--topic", "smoke-short", "--messages", "20",
        "--timeout-ms", "300");
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    assertEquals("WARNING: Exiting before consuming the expected number of records: timeout (300 ms) exceeded. You can"
        + " use the --timeout option to increase the timeout.", r.err().strip());
    assertEquals("10", match("RE_CONSUME_LINE", r.lines().get(1)).group(5), "the line counts what was read");
  }

  /** A CLI run in this JVM, as {@link CommandLineTest#run}. */
  static Run run(String... args) {
    CommandLineTest.Run r = CommandLineTest.run(args);
    return new Run(r.exitCode(), r.out(), r.err());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    // larger than the topic's max.message.bytes: refused by the leader
    "5000 | acks=1 | MESSAGE_TOO_LARGE: The record batch is",
    // larger than the producer's max.request.size: refused before it is sent
    "500 | max.request.size=100 | MESSAGE_TOO_LARGE: The record is"
  })
  void recordsTooLargeToSendGiveOneErrorLineAZeroTotalAndExitOne(int recordSize, String prop, String error) {
    String topic = "smoke-too-large-" + recordSize;
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic, "--partitions", "1", "--config",
        "max.message.bytes=1000");
    Run r = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", "20",
        "--record-size", Integer.toString(recordSize), "--throughput", "-1", "--producer-props", prop);
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    assertEquals(1, r.lines().size(), r.out());
    Matcher total = match("RE_PRODUCE_TOTAL", r.lines().get(0)); // parseable: no NaN
    assertEquals("0", total.group(1));
    assertEquals("0.00", total.group(4)); // avg latency
    List<String> errors = r.err().lines().toList();
    assertEquals(1, errors.size(), r.err());
    assertTrue(errors.get(0).startsWith("Error: 20 of 20 records were not acknowledged; first error: " + error),
        r.err());
  }

  /**
   * {@code --payload-file} (Kafka's): every record is one of the file's payloads, split at the delimiter, empty ones
   * dropped; a missing or empty file, or both or neither of --record-size and --payload-file, is a usage error.
   */
  @Test
  void payloadsFromAFileAreSentAsKafkasToolSendsThem() throws Exception {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-payloads", "--partitions", "1");
    Path file = dataDir.resolve("payloads.txt");
    Files.writeString(file, "alpha|be\u00e9ta||gamma-" + "x".repeat(300) + "|", StandardCharsets.UTF_8);
    Run produced = ok("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "300", "--payload-file", file.toString(), "--payload-delimiter", "|", "--throughput", "-1",
        "--producer-props", "acks=1");
    Matcher total = match("RE_PRODUCE_TOTAL", produced.lines().get(produced.lines().size() - 1));
    assertEquals("300", total.group(1));
    CliRoundTripTest.Run read = CliRoundTripTest.ok(CliRoundTripTest.run("consume", "--bootstrap-server", bootstrap,
        "--topic", "smoke-payloads", "--from-beginning", "--max-messages", "300"));
    java.util.Map<String, Long> counts = new String(read.raw(), StandardCharsets.UTF_8).lines()
        .collect(java.util.stream.Collectors.groupingBy(l -> l, java.util.stream.Collectors.counting()));
    assertEquals(java.util.Set.of("alpha", "be\u00e9ta", "gamma-" + "x".repeat(300)), counts.keySet(),
        "each record is one of the three payloads, the empty piece is dropped");
    assertEquals(300L, counts.values().stream().mapToLong(Long::longValue).sum());
    assertTrue(counts.values().stream().allMatch(c -> c > 30), "drawn at random: " + counts);

    Files.writeString(file, "\n\n", StandardCharsets.UTF_8);
    Run empty = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "1", "--payload-file", file.toString(), "--throughput", "-1");
    assertEquals(Main.EXIT_USAGE, empty.exitCode(), empty.err());
    assertTrue(empty.err().contains("holds no payload"), empty.err());
    Run missing = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "1", "--payload-file", dataDir.resolve("nope.txt").toString(), "--throughput", "-1");
    assertEquals(Main.EXIT_USAGE, missing.exitCode(), missing.err());
    assertTrue(missing.err().contains("no such file"), missing.err());
    Files.write(file, new byte[] {'a', (byte) 0xff, '\n'});
    Run binary = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "1", "--payload-file", file.toString(), "--throughput", "-1");
    assertEquals(Main.EXIT_USAGE, binary.exitCode(), binary.err());
    assertTrue(binary.err().contains("is not UTF-8 text"), binary.err());
    Run both = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "1", "--payload-file", file.toString(), "--record-size", "10", "--throughput", "-1");
    assertEquals(Main.EXIT_USAGE, both.exitCode(), both.err());
    Run neither = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-payloads",
        "--num-records", "1", "--throughput", "-1");
    assertEquals(Main.EXIT_USAGE, neither.exitCode(), neither.err());
    assertTrue(neither.err().contains("exactly one of --record-size and --payload-file"), neither.err());
  }

  /**
   * A --record-size no heap can hold (Integer.MAX_VALUE is above the JVM's array limit, whatever the heap) is one
   * error line and exit 1, for both tools that build records of that size; before, an OutOfMemoryError stack trace
   * (newcomer finding, with --record-size 2000000000).
   */
  @Test
  void aRecordSizeNoHeapCanHoldIsOneErrorLine() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-huge", "--partitions", "1");
    for (String tool : List.of("produce", "e2e-latency")) {
      List<String> args = new java.util.ArrayList<>(List.of("perf", tool, "--bootstrap-server", bootstrap, "--topic",
          "smoke-huge", "--num-records", "2", "--record-size", Integer.toString(Integer.MAX_VALUE)));
      args.addAll(tool.equals("produce") ? List.of("--throughput", "-1") : List.of("--producer-acks", "1"));
      Run r = run(args.toArray(new String[0]));
      assertEquals(Main.EXIT_FAILURE, r.exitCode(), tool + ": " + r.err());
      List<String> errors = r.err().lines().toList();
      assertEquals(1, errors.size(), tool + ": " + r.err());
      assertTrue(errors.get(0).contains("does not fit in this tool's heap"), r.err());
    }
  }

  @Test
  void theDelimiterEscapesAreKafkas() {
    assertEquals("\n", PerfProduceCommand.unescape("\\n"));
    assertEquals("a\tb\r\\", PerfProduceCommand.unescape("a\\tb\\r\\\\"));
    assertEquals("\\q", PerfProduceCommand.unescape("\\q"));
  }

  /**
   * Records that keep failing get a WARN line on stderr at most every 5 s with the count so far, not only the summary
   * at the end: a newcomer's run whose broker was gone printed nothing for 10 minutes. 14 records at 2 rec/s take at
   * least 6.5 s, so failures come after the first 5 s; each is refused (larger than max.message.bytes).
   */
  @Test
  void recordsThatKeepFailingAreReportedWhileTheRunGoesOn() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-failing", "--partitions", "1",
        "--config", "max.message.bytes=1000");
    Run r = run("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-failing", "--num-records", "14",
        "--record-size", "5000", "--throughput", "2", "--producer-props", "acks=1", "linger.ms=0");
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    List<String> errors = r.err().lines().toList();
    assertTrue(errors.size() >= 2, r.err());
    assertTrue(errors.get(0).matches("WARN \\d+ records not acknowledged so far; latest error: MESSAGE_TOO_LARGE.*"),
        r.err());
    assertTrue(errors.get(errors.size() - 1).startsWith("Error: 14 of 14 records were not acknowledged"), r.err());
  }

  @Test
  void throttledProduceSendsEveryRecord() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-rate", "--partitions", "1");
    Run produced = ok("perf", "produce", "--bootstrap-server", bootstrap, "--topic", "smoke-rate", "--num-records",
        "500", "--record-size", "100", "--throughput", "2000", "--producer-props", "acks=all", "linger.ms=5");
    List<String> lines = produced.lines();
    Matcher total = match("RE_PRODUCE_TOTAL", lines.get(lines.size() - 1));
    assertEquals("500", total.group(1));
  }

  @Test
  void endToEndLatencyPrintsKafkasLines() {
    ok("topics", "--bootstrap-server", bootstrap, "--create", "--topic", "smoke-e2e", "--partitions", "1");
    Run run = ok("perf", "e2e-latency", "--bootstrap-server", bootstrap, "--topic", "smoke-e2e", "--num-records",
        "30", "--record-size", "100", "--producer-acks", "all");
    List<String> lines = run.lines();
    assertEquals(3, lines.size(), run.out());
    assertTrue(lines.get(0).matches("0\t[0-9.E]+"), lines.get(0)); // progress line of record 0
    match("RE_E2E_AVG", lines.get(1));
    Matcher p = match("RE_E2E_PERCENTILES", lines.get(2));
    assertTrue(Integer.parseInt(p.group(1)) <= Integer.parseInt(p.group(2)), lines.get(2));
    assertTrue(Integer.parseInt(p.group(2)) <= Integer.parseInt(p.group(3)), lines.get(2));

    // the 30 records are in the topic, each read back once
    Run consumed = ok("perf", "consume", "--bootstrap-server", bootstrap, "--topic", "smoke-e2e", "--messages", "30",
        "--hide-header");
    assertEquals("30", match("RE_CONSUME_LINE", consumed.lines().get(0)).group(5));
  }

  @Test
  void endToEndLatencyCreatesAMissingTopicAsKafka() {
    Run run = ok("perf", "e2e-latency", "--bootstrap-server", bootstrap, "--topic", "smoke-e2e-new", "--num-records",
        "3", "--record-size", "10", "--producer-acks", "1");
    List<String> lines = run.lines();
    assertEquals("Topic \"smoke-e2e-new\" does not exist. Will create topic with 1 partition(s) and replication"
        + " factor = 1", lines.get(0));
    match("RE_E2E_PERCENTILES", lines.get(lines.size() - 1));
  }
}
