package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** Parsing and validation of the command line: exit codes scripts can trust. No broker needed. */
class CommandLineTest {

  /** The outcome of one run. */
  record Run(int exitCode, String out, String err) {}

  static Run run(String... args) {
    CommandLine cmd = Main.newCommandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void noCommandIsAUsageError() {
    Run r = run();
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("Missing command"), r.err());
  }

  @Test
  void unknownCommandIsAUsageError() {
    assertEquals(Main.EXIT_USAGE, run("frobnicate").exitCode());
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "topics", "groups", "produce", "consume", "server", "quickstart", "perf", "perf produce",
      "perf consume", "perf e2e-latency"})
  void helpWorksEverywhere(String command) {
    String[] words = command.isEmpty() ? new String[0] : command.split(" ");
    String[] args = new String[words.length + 1];
    System.arraycopy(words, 0, args, 0, words.length);
    args[words.length] = "--help";
    Run r = run(args);
    assertEquals(Main.EXIT_OK, r.exitCode(), r.err());
    assertTrue(r.out().startsWith("Usage: tributary"), r.out());
  }

  @Test
  void versionNamesTributaryAndAkka() {
    Run r = run("--version");
    assertEquals(Main.EXIT_OK, r.exitCode());
    assertTrue(r.out().startsWith("Tributary "), r.out());
    assertTrue(r.out().contains("Akka 2.6.21"), r.out());
  }

  @Test
  void unknownFlagIsAUsageError() {
    Run r = run("topics", "--bootstrap-server", "127.0.0.1:9092", "--list", "--bogus");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--bogus"), r.err());
  }

  /** Every command and subcommand by its words after {@code tributary} ("produce", "perf produce", ...). */
  static List<String> allCommands() {
    List<String> out = new ArrayList<>();
    collect(Main.newCommandLine(), "", out);
    return out;
  }

  private static void collect(CommandLine cmd, String prefix, List<String> out) {
    for (Map.Entry<String, CommandLine> e : cmd.getSubcommands().entrySet()) {
      if (e.getValue().getCommand() instanceof CommandLine.HelpCommand) {
        continue;
      }
      String words = prefix.isEmpty() ? e.getKey() : prefix + " " + e.getKey();
      out.add(words);
      collect(e.getValue(), words, out);
    }
  }

  @ParameterizedTest
  @MethodSource("allCommands")
  void anUnknownOptionPointsToTheCommandsHelp(String command) {
    List<String> args = new ArrayList<>(List.of(command.split(" ")));
    args.add("--bogus-flag");
    Run r = run(args.toArray(new String[0]));
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    List<String> lines = r.err().lines().toList();
    assertEquals("Error: Unknown option: '--bogus-flag'", lines.get(0), r.err());
    assertEquals("Try 'tributary " + command + " --help' for more information.", lines.get(lines.size() - 1),
        r.err());
    // nothing is close to --bogus-flag: no suggestion (picocli's would be any option sharing a letter pair)
    assertEquals(2, lines.size(), r.err());
  }

  @Test
  void anUnknownOptionOfAReadyProduceCommandIsTheErrorAndTheHelpHint() {
    Run r = run("produce", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--bogus-flag");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertEquals("Error: Unknown option: '--bogus-flag'\n"
        + "Try 'tributary produce --help' for more information.\n", r.err());
  }

  @Test
  void aMisspelledOptionGetsASuggestionAndTheHelpHint() {
    Run r = run("produce", "--bootstrap-servr", "127.0.0.1:9092", "--topic", "t");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    List<String> lines = r.err().lines().toList();
    assertTrue(lines.get(0).startsWith("Error: Unknown option"), r.err());
    assertTrue(lines.contains("Did you mean --bootstrap-server?"), r.err());
    assertEquals("Try 'tributary produce --help' for more information.", lines.get(lines.size() - 1), r.err());
  }

  @Test
  void aMisspelledCommandGetsASuggestionAndTheHelpHint() {
    Run r = run("topcs", "--list");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    List<String> lines = r.err().lines().toList();
    assertTrue(lines.contains("Did you mean tributary topics?"), r.err());
    assertEquals("Try 'tributary --help' for more information.", lines.get(lines.size() - 1), r.err());
  }

  @ParameterizedTest
  @CsvSource({
    "topics --bootstrap-server 127.0.0.1:9092 --create --topic t --config retention.ms, --config, retention.ms",
    "produce --bootstrap-server 127.0.0.1:9092 --topic t --producer-property linger.ms, --producer-property, linger.ms",
    "consume --bootstrap-server 127.0.0.1:9092 --topic t --property print.key, --property, print.key",
    // the option as typed, not picocli's longest alias of it (--command-property, Kafka 4's name)
    "perf produce --topic t --num-records 1 --record-size 1 --throughput -1 --producer-props garbage,"
        + " --producer-props, garbage",
    "perf produce --topic t --num-records 1 --record-size 1 --throughput -1 --command-property garbage,"
        + " --command-property, garbage",
    "perf consume --topic t --messages 1 --consumer-props garbage, --consumer-props, garbage"
  })
  void aKeyValueOptionWithoutEqualsSignReadsNaturally(String command, String option, String value) {
    Run r = run(command.split(" "));
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertEquals("Error: " + option + " must be KEY=VALUE, was '" + value + "'", r.err().lines().findFirst().get());
    assertFalse(r.err().contains("option option"), r.err());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "produce --topic t --producer-props acks=all linger.ms=5 | produce"
        + " | Unknown option: '--producer-props': produce takes producer settings as --producer-property KEY=VALUE,"
        + " once per setting | --producer-property acks=all --producer-property linger.ms=5",
    "consume --topic t --consumer-props max.poll.records=10 | consume"
        + " | Unknown option: '--consumer-props': consume takes consumer settings as --consumer-property KEY=VALUE,"
        + " once per setting | --consumer-property max.poll.records=10",
    "produce --topic t --command-property acks=1 | produce"
        + " | Unknown option: '--command-property': produce takes producer settings as --producer-property KEY=VALUE,"
        + " once per setting | --producer-property acks=1",
    "perf produce --topic t --num-records 1 --record-size 1 --throughput -1 --producer-property acks=1 linger.ms=5"
        + " | perf produce | Unknown option: '--producer-property': perf produce takes producer settings as"
        + " --producer-props KEY=VALUE [KEY=VALUE...] | --producer-props acks=1 linger.ms=5"
  })
  void anotherToolsFlagForClientSettingsNamesTheCommandsOwn(
      String command, String name, String error, String meant) {
    Run r = run((command + " --bootstrap-server 127.0.0.1:9092").split(" "));
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertEquals("Error: " + error + "\n"
        + "Did you mean " + meant + "?\n"
        + "Try 'tributary " + name + " --help' for more information.\n", r.err());
  }

  @Test
  void anotherToolsFlagIsTheProblemReportedEvenWhenARequiredFlagIsMissing() {
    Run r = run("produce", "--producer-props", "acks=all", "--topic", "t");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().startsWith("Error: Unknown option: '--producer-props': produce takes producer settings as"
        + " --producer-property KEY=VALUE, once per setting\nDid you mean --producer-property acks=all?\n"), r.err());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "produce --topic t --producer-property a=1 b=2 | produce | 'b=2' follows --producer-property a=1"
        + " | --producer-property | --producer-property a=1 --producer-property b=2",
    "consume --topic t --consumer-property a=1 b=2 c=3 | consume | 'b=2', 'c=3' follow --consumer-property a=1"
        + " | --consumer-property | --consumer-property a=1 --consumer-property b=2 --consumer-property c=3",
    "produce --topic t --property=parse.key=true key.separator=: | produce | 'key.separator=:' follows --property"
        + " parse.key=true | --property | --property parse.key=true --property key.separator=:",
    "topics --create --topic t --config retention.ms=1000 cleanup.policy=compact | topics"
        + " | 'cleanup.policy=compact' follows --config retention.ms=1000 | --config"
        + " | --config retention.ms=1000 --config cleanup.policy=compact"
  })
  void severalKeyValuesAfterAFlagThatTakesOneSayEachNeedsItsOwnFlag(
      String command, String name, String error, String flag, String meant) {
    Run r = run((command + " --bootstrap-server 127.0.0.1:9092").split(" "));
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertEquals("Error: " + error + ", but each KEY=VALUE needs its own " + flag + "\n"
        + "Did you mean " + meant + "?\n"
        + "Try 'tributary " + name + " --help' for more information.\n", r.err());
  }

  @Test
  void aMissingActionIsOneUsageErrorLineWithOnePrefix() {
    Run r = run("topics", "--bootstrap-server", "127.0.0.1:9092");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().startsWith("Error: "), r.err());
    assertFalse(r.err().contains("Error: Error:"), r.err());
  }

  @Test
  void produceWithoutTopicIsAUsageError() {
    Run r = run("produce", "--bootstrap-server", "127.0.0.1:9092");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--topic"), r.err());
  }

  @Test
  void consumeWithoutTopicIsAUsageError() {
    assertEquals(Main.EXIT_USAGE, run("consume", "--bootstrap-server", "127.0.0.1:9092").exitCode());
  }

  @Test
  void missingBootstrapServerIsAUsageError() {
    Run r = run("topics", "--list");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--bootstrap-server"), r.err());
  }

  @Test
  void topicsNeedsExactlyOneAction() {
    assertEquals(Main.EXIT_USAGE, run("topics", "--bootstrap-server", "127.0.0.1:9092").exitCode());
    assertEquals(
        Main.EXIT_USAGE, run("topics", "--bootstrap-server", "127.0.0.1:9092", "--list", "--create").exitCode());
  }

  @Test
  void createAndDeleteNeedATopic() {
    Run create = run("topics", "--bootstrap-server", "127.0.0.1:9092", "--create", "--partitions", "3");
    assertEquals(Main.EXIT_USAGE, create.exitCode());
    assertTrue(create.err().contains("--topic"), create.err());
    assertEquals(Main.EXIT_USAGE, run("topics", "--bootstrap-server", "127.0.0.1:9092", "--delete").exitCode());
  }

  @Test
  void createOnlyFlagsAreRejectedElsewhere() {
    assertEquals(Main.EXIT_USAGE,
        run("topics", "--bootstrap-server", "127.0.0.1:9092", "--list", "--partitions", "3").exitCode());
    assertEquals(Main.EXIT_USAGE,
        run("topics", "--bootstrap-server", "127.0.0.1:9092", "--create", "--topic", "t", "--partitions", "0")
            .exitCode());
  }

  @ParameterizedTest
  @ValueSource(strings = {"localhost", "127.0.0.1:", ":9092", "127.0.0.1:99999", "127.0.0.1:port"})
  void malformedBootstrapServerIsAUsageError(String address) {
    Run r = run("topics", "--bootstrap-server", address, "--list");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("HOST:PORT"), r.err());
  }

  @Test
  void badAcksIsAUsageError() {
    Run r = run("produce", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--acks", "2");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--acks"), r.err());
  }

  @Test
  void unknownPropertyIsAUsageError() {
    Run r = run("consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--property", "print.kee=true");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("print.kee"), r.err());
  }

  @Test
  void nonBooleanPropertyIsAUsageError() {
    assertEquals(Main.EXIT_USAGE,
        run("consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--property", "print.key=yes")
            .exitCode());
  }

  @Test
  void offsetNeedsPartitionAndExcludesFromBeginning() {
    assertEquals(Main.EXIT_USAGE,
        run("consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--offset", "5").exitCode());
    assertEquals(Main.EXIT_USAGE,
        run("consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--partition", "0", "--offset", "5",
            "--from-beginning").exitCode());
    assertEquals(Main.EXIT_USAGE,
        run("consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--partition", "0", "--offset", "-3")
            .exitCode());
  }

  @Test
  void perfProduceNeedsItsRequiredFlags() {
    Run r = run("perf", "produce", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--num-records"), r.err());
    assertEquals(Main.EXIT_USAGE, run("perf", "produce", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
        "--num-records", "10", "--record-size", "100", "--throughput", "0").exitCode());
  }

  @Test
  void perfWithoutSubcommandIsAUsageError() {
    assertEquals(Main.EXIT_USAGE, run("perf").exitCode());
  }

  @Test
  void perfConsumeNeedsMessages() {
    Run r = run("perf", "consume", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--messages") || r.err().contains("--num-records"), r.err());
  }

  @Test
  void perfEndToEndLatencyNeedsItsRequiredFlagsAndValidAcks() {
    Run r = run("perf", "e2e-latency", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--num-records", "10",
        "--record-size", "100");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--producer-acks"), r.err());
    Run badAcks = run("perf", "e2e-latency", "--bootstrap-server", "127.0.0.1:9092", "--topic", "t", "--num-records",
        "10", "--record-size", "100", "--producer-acks", "2");
    assertEquals(Main.EXIT_USAGE, badAcks.exitCode());
    assertTrue(badAcks.err().contains("--producer-acks must be 0, 1, all or -1"), badAcks.err());
  }

  @Test
  void serverRejectsAPortOutOfRange() {
    assertEquals(Main.EXIT_USAGE, run("server", "--port", "70000").exitCode());
  }

  @Test
  void serverOnABusyPortFailsWithOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
      throws IOException {
    try (ServerSocket busy = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Run r = run("server", "--port", Integer.toString(busy.getLocalPort()), "--data-dir", tmp.toString());
      assertEquals(Main.EXIT_FAILURE, r.exitCode());
      assertEquals("Error: Cannot listen on 127.0.0.1:" + busy.getLocalPort()
          + " (Address already in use); is another broker running? Choose another port with --port", r.err().strip());
    }
  }

  @Test
  void serverWarnsAboutConfigKeysNothingReadsBeforeItStarts(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
      throws IOException {
    java.nio.file.Path config = tmp.resolve("server.conf");
    java.nio.file.Files.writeString(config, "num.partitons = 3\ntributary.broker.log.retention.hour = 5\n"
        + "tributary.broker.num.partitions = 2\n");
    // a busy port stops the start right after the warnings, so that this test needs no broker
    try (ServerSocket busy = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Run r = run("server", "--config", config.toString(), "--port", Integer.toString(busy.getLocalPort()),
          "--data-dir", tmp.resolve("data").toString());
      assertEquals(Main.EXIT_FAILURE, r.exitCode());
      List<String> lines = r.err().lines().toList();
      assertEquals(3, lines.size(), r.err());
      assertEquals("Warning: " + config + ": key 'num.partitons' is not a Tributary setting and is ignored; did you"
          + " mean tributary.broker.num.partitions?", lines.get(0));
      assertEquals("Warning: " + config + ": key 'tributary.broker.log.retention.hour' is not a Tributary setting"
          + " and is ignored; did you mean tributary.broker.log.retention.ms? (for Kafka's log.retention.hours; in"
          + " milliseconds)", lines.get(1));
      assertTrue(lines.get(2).startsWith("Error: Cannot listen on"), r.err());
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
    "tributary.broker.message.max.bytes = lots"
        + " | tributary.broker.message.max.bytes has type STRING rather than NUMBER",
    "tributary { broker { num.partitions = x } } | tributary.broker.num.partitions has type STRING rather than NUMBER",
    "tributary.broker.min.insync.replicas = x | tributary.broker.min.insync.replicas has type STRING rather than NUMBER",
    "tributary.group.offsets-checkpoint-records = many"
        + " | tributary.group.offsets-checkpoint-records has type STRING rather than NUMBER",
    "tributary.log.tail-max-bytes = lots"
        + " | Invalid value at 'tributary.log.tail-max-bytes': No number in size-in-bytes value 'lots'"
  })
  void aServerConfigValueOfTheWrongTypeIsNamedByItsFullKey(
      String line, String problem, @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws IOException {
    java.nio.file.Path config = tmp.resolve("server.conf");
    java.nio.file.Files.writeString(config, line + "\n");
    Run r = run("server", "--config", config.toString(), "--port", "0", "--data-dir", tmp.resolve("data").toString());
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    assertEquals("Error: Invalid configuration: " + config + ": 1: " + problem + "\n", r.err());
  }

  @Test
  void aServerConfigValueOutOfRangeNamesEveryKeyInFull(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
      throws IOException {
    java.nio.file.Path config = tmp.resolve("server.conf");
    java.nio.file.Files.writeString(config, "tributary.broker.group.min.session.timeout.ms = 0\n");
    Run r = run("server", "--config", config.toString(), "--port", "0", "--data-dir", tmp.resolve("data").toString());
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    assertEquals("Error: tributary.broker.group.min.session.timeout.ms must be >= 1 and <="
        + " tributary.broker.group.max.session.timeout.ms\n", r.err());
  }

  @Test
  void quickstartWithAMissingFileFailsWithOneLine() {
    Run r = run("quickstart", "--file", "/nonexistent/tributary-input.txt");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertEquals("Error: No such file: /nonexistent/tributary-input.txt", r.err().strip());
  }

  @Test
  void unreachableBrokerFailsWithOneLineAndNoStackTrace() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // closed again: nothing listens there
    }
    Run r = run("produce", "--bootstrap-server", "127.0.0.1:" + port, "--topic", "t",
        "--producer-property", "request.timeout.ms=1000");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    String[] lines = r.err().strip().split("\n");
    assertEquals(1, lines.length, r.err());
    // that nothing answered at that address comes first; no request timeout is blamed (it fails at once)
    assertEquals("Error: NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port
        + " (Connection refused): nothing accepts connections there; is the broker running?", lines[0]);
    assertFalse(r.err().contains("\tat "), r.err());
  }

  @Test
  void topicsTakeClientSettingsFromACommandConfigFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp)
      throws IOException {
    // a port that accepts connections but where no broker answers: connecting waits request.timeout.ms
    try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      int port = silent.getLocalPort();
      java.nio.file.Path config = tmp.resolve("client.properties");
      java.nio.file.Files.writeString(config, "request.timeout.ms=500\n");
      Run r = run("topics", "--bootstrap-server", "127.0.0.1:" + port, "--list", "--command-config",
          config.toString());
      assertEquals(Main.EXIT_FAILURE, r.exitCode());
      assertEquals("Error: NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port + " within"
          + " request.timeout.ms=500 ms: something accepts connections there, but it is not a Tributary broker, or not"
          + " a ready one", r.err().strip());
    }
  }

  /** A port where nothing listens: a command that tries to connect fails with NETWORK_EXCEPTION at once. */
  static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "produce --topic t --producer-property linger.ms=abc | --producer-property | linger.ms | abc",
    "produce --topic t --producer-property enable.idempotence=maybe | --producer-property | enable.idempotence | maybe",
    "consume --topic t --consumer-property max.poll.records=lots | --consumer-property | max.poll.records | lots",
    "consume --topic t --consumer-property auto.offset.reset=oldest | --consumer-property | auto.offset.reset | oldest",
    "perf produce --topic t --num-records 1 --record-size 1 --throughput -1 --producer-props batch.size=big"
        + " | --producer-props | batch.size | big",
    "perf consume --topic t --messages 1 --consumer-props fetch.max.wait.ms=soon | --consumer-props"
        + " | fetch.max.wait.ms | soon"
  })
  void aBadClientSettingIsAUsageErrorBeforeConnecting(String command, String option, String key, String value)
      throws IOException {
    List<String> args = new ArrayList<>(List.of(command.split(" ")));
    args.addAll(List.of("--bootstrap-server", "127.0.0.1:" + closedPort()));
    Run r = run(args.toArray(new String[0]));
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    String first = r.err().lines().findFirst().orElse("");
    assertTrue(first.startsWith("Error: " + option + ": Invalid value " + value + " for configuration " + key), first);
    assertFalse(r.err().contains("NETWORK_EXCEPTION"), r.err());
  }

  @ParameterizedTest
  @ValueSource(strings = {"topics --list", "groups --list",
      "perf e2e-latency --topic t --num-records 1 --record-size 1 --producer-acks 1"})
  void aBadSettingInACommandConfigFileIsAUsageErrorBeforeConnecting(
      String command, @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws IOException {
    java.nio.file.Path config = tmp.resolve("client.properties");
    java.nio.file.Files.writeString(config, "request.timeout.ms=5s\n");
    List<String> args = new ArrayList<>(List.of(command.split(" ")));
    args.addAll(List.of("--bootstrap-server", "127.0.0.1:" + closedPort(), "--command-config", config.toString()));
    Run r = run(args.toArray(new String[0]));
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    assertEquals("Error: --command-config " + config + ": Invalid value 5s for configuration request.timeout.ms:"
        + " expected an integer", r.err().lines().findFirst().orElse(""));
  }

  /** A --command-config file that cannot be read is a usage error that says why, before connecting. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {"missing.properties | no such file", " | it is a directory"})
  void anUnreadableCommandConfigFileIsAUsageErrorThatSaysWhy(
      String name, String why, @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws IOException {
    java.nio.file.Path config = name == null ? tmp : tmp.resolve(name);
    Run r = run("topics", "--list", "--bootstrap-server", "127.0.0.1:" + closedPort(), "--command-config",
        config.toString());
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    assertEquals("Error: Cannot read --command-config " + config + ": " + why,
        r.err().lines().findFirst().orElse(""));
  }

  /** A server --config that is missing or a directory is a usage error that says which, before anything starts. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {"missing.conf | no such file", " | it is a directory"})
  void anUnreadableServerConfigFileIsAUsageErrorThatSaysWhy(
      String name, String why, @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) {
    java.nio.file.Path config = name == null ? tmp : tmp.resolve(name);
    Run r = run("server", "--config", config.toString(), "--port", "0", "--data-dir", tmp.resolve("data").toString());
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    assertEquals("Error: Cannot read --config " + config + ": " + why, r.err().lines().findFirst().orElse(""));
    assertFalse(java.nio.file.Files.exists(tmp.resolve("data")), "nothing started");
  }

  @Test
  void verboseAddsTheStackTrace() {
    Run r = run("quickstart", "--verbose", "--file", "/nonexistent/tributary-input.txt");
    assertEquals(Main.EXIT_FAILURE, r.exitCode());
    assertTrue(r.err().startsWith("Error: No such file"), r.err());
    assertTrue(r.err().contains("\tat "), r.err());
  }
}
