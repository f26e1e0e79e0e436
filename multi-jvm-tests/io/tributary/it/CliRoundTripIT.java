package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.Consumer;
import io.tributary.client.Deserializer;
import io.tributary.client.TopicPartition;
import io.tributary.client.TributaryClient;
import io.tributary.it.JavaProcesses.CliProcess;
import io.tributary.it.JavaProcesses.Result;
import io.tributary.record.Murmur2;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The command line between separate processes, as in the README's tour: a {@code server} JVM, then
 * {@code topics --create}, {@code produce} (lines on stdin, {@code key:value} with {@code parse.key}) and
 * {@code consume --from-beginning --max-messages N} (with {@code print.partition} and {@code print.key}), each its
 * own JVM. The consumer's output, minus the {@code Partition:P:} prefix, must be the producer's input lines byte for
 * byte (as a multiset), with per-key order kept and every key in one partition, the one Kafka's murmur2 partitioner
 * picks.
 *
 * <p>Strings here are ISO-8859-1 views of bytes (one char per byte), so comparisons are of exact bytes whatever the
 * encoding; messages show them decoded as UTF-8.
 */
class CliRoundTripIT {
  private static final String TOPIC = "cli-roundtrip";
  private static final int PARTITIONS = 3;
  private static final int LINES = 400;
  /** Bound on each CLI process: only against hangs. */
  private static final Duration PROCESS_BOUND = Duration.ofMinutes(2);

  private final Deque<AutoCloseable> cleanup = new ArrayDeque<>();

  @AfterEach
  void stopEverythingStarted() {
    while (!cleanup.isEmpty()) {
      try {
        cleanup.pop().close();
      } catch (Exception e) {
        // go on with the rest
      }
    }
  }

  @Test
  void producedLinesComeBackByteIdenticalWithKeysAndPerKeyPartitions() {
    Path dir = JavaProcesses.testDir("CliRoundTripIT", "producedLinesComeBack");
    int port = BrokerProcess.freePort();
    BrokerProcess broker = track(BrokerProcess.start("broker", dir.resolve("data"), port, dir));
    String bootstrap = broker.awaitReady();

    Result create = run(dir, "topics-create", null,
        "topics", "--bootstrap-server", bootstrap, "--create", "--topic", TOPIC, "--partitions", "3");
    assertEquals(0, create.exitCode(), create.describe() + broker.diagnostics());
    assertTrue(create.stdoutText().contains("Created topic " + TOPIC), create.describe());

    List<String> lines = inputLines();
    ByteArrayOutputStream stdin = new ByteArrayOutputStream();
    for (int i = 0; i < lines.size(); i++) {
      stdin.writeBytes(lines.get(i).getBytes(StandardCharsets.ISO_8859_1));
      if (i < lines.size() - 1) {
        stdin.write('\n'); // the last line has no terminator: it is still a record
      }
    }
    Result produce = run(dir, "produce", stdin.toByteArray(),
        "produce", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--acks", "1",
        "--property", "parse.key=true", "--property", "key.separator=:");
    assertEquals(0, produce.exitCode(), produce.describe() + broker.diagnostics());

    Result consume = run(dir, "consume", null,
        "consume", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--from-beginning",
        "--max-messages", Integer.toString(LINES), "--timeout-ms", "60000",
        "--property", "print.key=true", "--property", "key.separator=:", "--property", "print.partition=true");
    assertEquals(0, consume.exitCode(), consume.describe() + broker.diagnostics());
    assertTrue(consume.stderr().contains("Processed a total of " + LINES + " messages"), consume.describe());

    List<Printed> printed = parse(consume.stdout());
    assertEquals(LINES, printed.size(), "records printed\n" + consume.describe());

    // byte-identical: the printed key:value parts are exactly the input lines
    List<String> missing = multisetMinus(lines, printed.stream().map(Printed::line).toList());
    List<String> extra = multisetMinus(printed.stream().map(Printed::line).toList(), lines);
    assertTrue(missing.isEmpty() && extra.isEmpty(),
        "printed key:value lines are the input lines, byte for byte; missing " + missing.size() + ": "
            + utf8(missing.subList(0, Math.min(10, missing.size()))) + "; not in the input " + extra.size() + ": "
            + utf8(extra.subList(0, Math.min(10, extra.size()))));

    // per key: one partition, Kafka's murmur2 choice, values in input order
    Map<String, List<String>> inputByKey = byKey(lines);
    Map<String, List<String>> outputByKey = new LinkedHashMap<>();
    Map<String, Set<Integer>> partitionsByKey = new TreeMap<>();
    for (Printed p : printed) {
      outputByKey.computeIfAbsent(key(p.line()), k -> new ArrayList<>()).add(p.line());
      partitionsByKey.computeIfAbsent(key(p.line()), k -> new TreeSet<>()).add(p.partition());
    }
    List<String> problems = new ArrayList<>();
    partitionsByKey.forEach((key, partitions) -> {
      int murmur2 = Murmur2.partitionForKey(key.getBytes(StandardCharsets.ISO_8859_1), PARTITIONS);
      if (!partitions.equals(Set.of(murmur2))) {
        problems.add("key '" + utf8(key) + "' is in partitions " + partitions + ", murmur2 gives " + murmur2);
      }
    });
    inputByKey.forEach((key, values) -> {
      if (!values.equals(outputByKey.get(key))) {
        problems.add(
            "key '" + utf8(key) + "': input order " + utf8(values) + ", printed " + utf8(outputByKey.get(key)));
      }
    });
    assertTrue(problems.isEmpty(), problems.toString());
    Set<Integer> used = new TreeSet<>();
    partitionsByKey.values().forEach(used::addAll);
    assertEquals(Set.of(0, 1, 2), used, "the keys spread over all partitions");

    // nothing beyond what was produced: the partitions end where the records printed end
    try (TributaryClient client = TributaryClient.connect(bootstrap, Map.of());
        Consumer<byte[], byte[]> consumer =
            client.consumer(Map.of(), Deserializer.byteArray(), Deserializer.byteArray())) {
      List<TopicPartition> tps = List.of(
          new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1), new TopicPartition(TOPIC, 2));
      long total = consumer.endOffsets(tps).values().stream().mapToLong(Long::longValue).sum();
      assertEquals(LINES, total, "records stored in " + TOPIC);
    }
  }

  /**
   * {@value #LINES} {@code key:value} lines: a few keys repeated many times (per-key order), unique keys, UTF-8 keys
   * and values (accents, CJK, emoji, Cyrillic), empty values, an empty key, values holding the separator, tabs and
   * spaces. As ISO-8859-1 strings of their UTF-8 bytes.
   */
  private static List<String> inputLines() {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < LINES; i++) {
      String key = switch (i % 5) {
        case 0, 1 -> "user-" + (i % 7);
        case 2 -> "ключ-" + (i % 3);
        case 3 -> "solo-" + i;
        default -> i % 20 == 4 ? "" : "🔑-" + (i % 4);
      };
      String value = switch (i % 8) {
        case 0 -> "";
        case 1 -> "Grüße aus Köln №" + i + " 日本語 🎉";
        case 2 -> "a:b:c:" + i;
        case 3 -> "  tab\there " + i + "  ";
        case 4 -> "{\"n\":" + i + ",\"s\":\"q\\\"uote\"}";
        default -> "value-" + i;
      };
      lines.add(new String((key + ":" + value).getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1));
    }
    return lines;
  }

  /** One printed record: its partition and the rest of the line ({@code key:value}). */
  private record Printed(int partition, String line) {}

  /** Splits the consumer's stdout ({@code Partition:P:key:value\n} per record). */
  private static List<Printed> parse(byte[] stdout) {
    String all = new String(stdout, StandardCharsets.ISO_8859_1);
    assertTrue(all.isEmpty() || all.endsWith("\n"), "output ends with a line separator");
    List<Printed> printed = new ArrayList<>();
    if (all.isEmpty()) {
      return printed;
    }
    for (String line : all.substring(0, all.length() - 1).split("\n", -1)) {
      assertTrue(line.startsWith("Partition:"), "printed line starts with Partition: '" + utf8(line) + "'");
      int colon = line.indexOf(':', "Partition:".length());
      assertTrue(colon > 0, "partition field ends with the key separator: '" + utf8(line) + "'");
      printed.add(new Printed(Integer.parseInt(line.substring("Partition:".length(), colon)),
          line.substring(colon + 1)));
    }
    return printed;
  }

  private static String key(String line) {
    return line.substring(0, line.indexOf(':'));
  }

  private static Map<String, List<String>> byKey(List<String> lines) {
    Map<String, List<String>> result = new HashMap<>();
    for (String line : lines) {
      result.computeIfAbsent(key(line), k -> new ArrayList<>()).add(line);
    }
    return result;
  }

  /** {@code a} minus {@code b}, counting duplicates. */
  private static List<String> multisetMinus(List<String> a, List<String> b) {
    Map<String, Integer> counts = new HashMap<>();
    b.forEach(s -> counts.merge(s, 1, Integer::sum));
    List<String> rest = new ArrayList<>();
    for (String s : a) {
      if (counts.merge(s, -1, Integer::sum) < 0) {
        rest.add(s);
      }
    }
    return rest;
  }

  private static String utf8(String latin1) {
    return new String(latin1.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
  }

  private static List<String> utf8(List<String> latin1) {
    return latin1 == null ? null : latin1.stream().map(CliRoundTripIT::utf8).toList();
  }

  private Result run(Path dir, String name, byte[] stdin, String... args) {
    return track(CliProcess.start(name, dir, stdin, args)).awaitExit(PROCESS_BOUND);
  }

  private <T extends AutoCloseable> T track(T resource) {
    cleanup.push(resource);
    return resource;
  }
}
