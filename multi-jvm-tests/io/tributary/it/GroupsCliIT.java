package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.it.JavaProcesses.CliProcess;
import io.tributary.it.JavaProcesses.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code tributary groups} and {@code consume --group} between separate processes: a broker JVM (with
 * {@code group.initial.rebalance.delay.ms = 0}), a 3-partition topic, then each command its own JVM, as a user runs
 * them. A group consumes everything and {@code groups --describe} shows lag 0; more records show the lag of log end
 * minus committed offset; {@code --reset-offsets} (dry run, {@code --to-earliest}, {@code --shift-by}) moves the
 * committed offsets, and a group member started afterwards begins there; while it runs, reset and delete are refused
 * with NON_EMPTY_GROUP; stopped with SIGTERM it commits and leaves, and the group can be deleted. Unknown and empty
 * group ids fail with one clear error line.
 */
class GroupsCliIT {
  private static final String TOPIC = "groups-cli";
  private static final String GROUP = "g1";
  private static final int PARTITIONS = 3;
  /** Bound on each CLI process: only against hangs. */
  private static final Duration PROCESS_BOUND = Duration.ofMinutes(2);
  /** Bound on waiting for the background consumer to show up as a member. */
  private static final Duration MEMBER_BOUND = Duration.ofSeconds(60);

  private final Deque<AutoCloseable> cleanup = new ArrayDeque<>();
  private Path dir;
  private String bootstrap;
  private BrokerProcess broker;
  private int runs;

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
  void describeShowsLagResetMovesOffsetsAndActiveGroupsAreProtected() throws IOException {
    dir = JavaProcesses.testDir("GroupsCliIT", "describeResetDelete");
    Path brokerDir = Files.createDirectories(dir.resolve("broker"));
    // the server reads ./application.conf; the broker process runs in brokerDir
    Files.writeString(brokerDir.resolve("application.conf"),
        "include classpath(\"tributary-broker.conf\")\n"
            + "tributary.broker.group.initial.rebalance.delay.ms = 0\n");
    broker = track(BrokerProcess.start("broker", dir.resolve("data"), BrokerProcess.freePort(), brokerDir));
    bootstrap = broker.awaitReady();

    ok(cli("topics", "--create", "--topic", TOPIC, "--partitions", Integer.toString(PARTITIONS)));
    produce(0, 30);

    // a group reads everything from the beginning, commits on exit
    Result consumed = ok(cli("consume", "--topic", TOPIC, "--group", GROUP, "--from-beginning",
        "--max-messages", "30", "--timeout-ms", "60000"));
    assertEquals(30, consumed.stdoutText().lines().count(), consumed.describe());
    assertTrue(consumed.stderr().contains("Processed a total of 30 messages"), consumed.describe());

    // caught up: lag 0 everywhere
    Describe caughtUp = describe(GROUP);
    assertEquals(PARTITIONS, caughtUp.rows().size(), caughtUp.text());
    assertEquals(30, caughtUp.sum(Row::logEnd), caughtUp.text());
    for (Row r : caughtUp.rows()) {
      assertEquals(GROUP, r.group(), caughtUp.text());
      assertEquals(TOPIC, r.topic(), caughtUp.text());
      assertEquals(Long.toString(r.logEnd()), r.current(), "CURRENT-OFFSET = LOG-END-OFFSET\n" + caughtUp.text());
      assertEquals("0", r.lag(), "lag 0 after catching up\n" + caughtUp.text());
      assertEquals("-", r.consumerId(), "no member owns a partition now\n" + caughtUp.text());
    }
    assertTrue(caughtUp.stateLine().startsWith("Consumer group '" + GROUP + "' state: Empty, generation: "),
        caughtUp.text());
    assertTrue(caughtUp.stateLine().endsWith(", members: 0"), caughtUp.text());

    // 9 more records: lag = log end - committed, 9 in all
    produce(30, 9);
    Describe behind = describe(GROUP);
    assertEquals(39, behind.sum(Row::logEnd), behind.text());
    long lagSum = 0;
    for (Row r : behind.rows()) {
      long lag = Long.parseLong(r.lag());
      assertEquals(r.logEnd() - Long.parseLong(r.current()), lag, "LAG = LOG-END-OFFSET - CURRENT-OFFSET\n"
          + behind.text());
      assertEquals(caughtUp.row(r.partition()).current(), r.current(), "committed offsets unchanged\n"
          + behind.text());
      lagSum += lag;
    }
    assertEquals(9, lagSum, behind.text());

    // --list names the group
    Result list = ok(cli("groups", "--list"));
    assertTrue(list.stdoutText().lines().anyMatch(GROUP::equals), list.describe());

    // a dry run shows the new offsets and changes nothing
    Result dryRun = ok(cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest"));
    Map<Integer, Long> planned = resetTable(dryRun);
    assertEquals(Map.of(0, 0L, 1, 0L, 2, 0L), planned, dryRun.describe());
    assertTrue(dryRun.stderr().toLowerCase().contains("dry run"), dryRun.describe());
    assertEquals(9, describe(GROUP).sum(r -> Long.parseLong(r.lag())), "a dry run changes nothing");

    // --to-earliest --execute: committed 0, lag = log end
    Result earliest = ok(cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
        "--execute"));
    assertEquals(Map.of(0, 0L, 1, 0L, 2, 0L), resetTable(earliest), earliest.describe());
    Describe reset = describe(GROUP);
    for (Row r : reset.rows()) {
      assertEquals("0", r.current(), reset.text());
      assertEquals(Long.toString(r.logEnd()), r.lag(), reset.text());
    }

    // --shift-by 2: committed 2 (or the log end if shorter)
    Result shift = ok(cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--shift-by", "2",
        "--execute"));
    Describe shifted = describe(GROUP);
    long expectedRest = 0;
    for (Row r : shifted.rows()) {
      long want = Math.min(2, r.logEnd());
      assertEquals(Long.toString(want), r.current(), shifted.text());
      assertEquals(want, resetTable(shift).get(r.partition()), shift.describe());
      expectedRest += r.logEnd() - want;
    }

    // bad input: unknown group, empty group id
    Result unknown = cli("groups", "--describe", "--group", "no-such-group");
    assertEquals(1, unknown.exitCode(), unknown.describe());
    assertEquals("Error: GROUP_ID_NOT_FOUND: Consumer group 'no-such-group' does not exist.",
        unknown.stderr().strip(), unknown.describe());
    assertEquals("", unknown.stdoutText(), unknown.describe());
    Result empty = cli("groups", "--describe", "--group", "");
    assertEquals(1, empty.exitCode(), empty.describe());
    assertTrue(empty.stderr().strip().startsWith("Error: INVALID_GROUP_ID: "), empty.describe());
    Result usage = cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
        "--to-latest");
    assertEquals(2, usage.exitCode(), usage.describe());

    // a running member: reset and delete are refused
    Path memberOut = dir.resolve("member.stdout");
    Path memberErr = dir.resolve("member.stderr");
    Process member = track(new Background(new ProcessBuilder(JavaProcesses.javaCommand(
            "consume", "--bootstrap-server", bootstrap, "--topic", TOPIC, "--group", GROUP, "--timeout-ms", "60000",
            "--consumer-property", "session.timeout.ms=6000", "--consumer-property", "heartbeat.interval.ms=1000"))
        .directory(dir.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
        .redirectOutput(memberOut.toFile())
        .redirectError(memberErr.toFile())
        .start())).process();
    Describe active = awaitMember(member, memberErr);
    assertTrue(active.stateLine().endsWith(", members: 1"), active.text());
    String memberId = active.rows().get(0).consumerId();
    assertFalse(memberId.equals("-"), active.text());
    for (Row r : active.rows()) {
      assertEquals(memberId, r.consumerId(), "the one member owns every partition\n" + active.text());
    }

    Result refused = cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
        "--execute");
    assertEquals(1, refused.exitCode(), refused.describe());
    assertTrue(refused.stderr().startsWith("Error: NON_EMPTY_GROUP: "), refused.describe());
    assertEquals(1, refused.stderr().strip().lines().count(), refused.describe());
    Result refusedDry = cli("groups", "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest");
    assertEquals(1, refusedDry.exitCode(), refusedDry.describe());
    assertTrue(refusedDry.stderr().startsWith("Error: NON_EMPTY_GROUP: "), refusedDry.describe());
    Result refusedDelete = cli("groups", "--delete", "--group", GROUP);
    assertEquals(1, refusedDelete.exitCode(), refusedDelete.describe());
    assertTrue(refusedDelete.stderr().startsWith("Error: NON_EMPTY_GROUP: "), refusedDelete.describe());

    // the member started at the shifted offsets: it prints the rest; SIGTERM makes it commit and leave
    awaitLines(memberOut, expectedRest, member, memberErr);
    member.destroy();
    assertTrue(awaitExit(member, Duration.ofSeconds(60)), "member exits on SIGTERM\n" + tails(memberOut, memberErr));
    assertEquals(0, member.exitValue(), tails(memberOut, memberErr));
    String memberStderr = Files.readString(memberErr);
    assertTrue(memberStderr.contains("Processed a total of " + expectedRest + " messages"),
        tails(memberOut, memberErr));

    Describe left = describe(GROUP);
    assertTrue(left.stateLine().endsWith(", members: 0"), "the member left at once\n" + left.text());
    for (Row r : left.rows()) {
      assertEquals(Long.toString(r.logEnd()), r.current(), "committed on close\n" + left.text());
      assertEquals("0", r.lag(), left.text());
    }

    // now the group can be deleted
    Result deleted = ok(cli("groups", "--delete", "--group", GROUP));
    assertEquals("Deleted consumer group '" + GROUP + "'.", deleted.stdoutText().strip(), deleted.describe());
    Result listAfter = ok(cli("groups", "--list"));
    assertFalse(listAfter.stdoutText().lines().anyMatch(GROUP::equals), listAfter.describe());
    Result gone = cli("groups", "--describe", "--group", GROUP);
    assertEquals(1, gone.exitCode(), gone.describe());
    assertTrue(gone.stderr().startsWith("Error: GROUP_ID_NOT_FOUND: "), gone.describe());
    Result deleteAgain = cli("groups", "--delete", "--group", GROUP);
    assertEquals(1, deleteAgain.exitCode(), deleteAgain.describe());
    assertTrue(deleteAgain.stderr().startsWith("Error: GROUP_ID_NOT_FOUND: "), deleteAgain.describe());
  }

  // ------------------------------------------------------------------------------------------------ helpers

  /** Produces {@code count} records with keys {@code key-<i>} (so they spread over the partitions). */
  private void produce(int from, int count) {
    StringBuilder lines = new StringBuilder();
    for (int i = from; i < from + count; i++) {
      lines.append("key-").append(i).append(":value-").append(i).append('\n');
    }
    ok(run("produce", lines.toString().getBytes(StandardCharsets.UTF_8), "produce", "--bootstrap-server", bootstrap,
        "--topic", TOPIC, "--property", "parse.key=true", "--property", "key.separator=:"));
  }

  /** One row of the describe table. */
  record Row(String group, String topic, int partition, String current, long logEnd, String lag, String consumerId) {}

  /** A parsed {@code groups --describe}. */
  record Describe(String text, String stateLine, List<Row> rows) {
    long sum(java.util.function.ToLongFunction<Row> f) {
      return rows.stream().mapToLong(f).sum();
    }

    Row row(int partition) {
      return rows.stream().filter(r -> r.partition() == partition).findFirst()
          .orElseThrow(() -> new AssertionError("no row for partition " + partition + "\n" + text));
    }
  }

  private Describe describe(String group) {
    Result r = ok(cli("groups", "--describe", "--group", group));
    return parseDescribe(r);
  }

  private static Describe parseDescribe(Result r) {
    String text = r.stdoutText();
    List<String> lines = text.lines().toList();
    assertTrue(!lines.isEmpty() && lines.get(0).startsWith("Consumer group '"), r.describe());
    int header = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("GROUP")) {
        header = i;
        break;
      }
    }
    assertTrue(header > 0, "a header line\n" + text);
    assertEquals(List.of("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID",
        "HOST", "CLIENT-ID"), List.of(lines.get(header).split("\\s+")), text);
    int lagColumn = lines.get(header).indexOf("LAG");
    List<Row> rows = new ArrayList<>();
    for (String line : lines.subList(header + 1, lines.size())) {
      String[] cells = line.split("\\s+");
      assertEquals(9, cells.length, "9 columns: '" + line + "'\n" + text);
      assertTrue(line.charAt(lagColumn) != ' ' && line.charAt(lagColumn - 1) == ' ', "aligned columns\n" + text);
      rows.add(new Row(cells[0], cells[1], Integer.parseInt(cells[2]), cells[3], Long.parseLong(cells[4]), cells[5],
          cells[6]));
    }
    return new Describe(text, lines.get(0), rows);
  }

  /** {@code --reset-offsets} output: partition → new offset. */
  private static Map<Integer, Long> resetTable(Result r) {
    List<String> lines = r.stdoutText().lines().toList();
    assertEquals(List.of("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"), List.of(lines.get(0).split("\\s+")),
        r.describe());
    Map<Integer, Long> offsets = new TreeMap<>();
    for (String line : lines.subList(1, lines.size())) {
      String[] cells = line.split("\\s+");
      assertEquals(GROUP, cells[0], r.describe());
      assertEquals(TOPIC, cells[1], r.describe());
      offsets.put(Integer.parseInt(cells[2]), Long.parseLong(cells[3]));
    }
    return offsets;
  }

  /** Describes the group until it shows a member owning all partitions (or fails after {@link #MEMBER_BOUND}). */
  private Describe awaitMember(Process member, Path memberErr) {
    long deadline = System.nanoTime() + MEMBER_BOUND.toNanos();
    Describe last = null;
    while (System.nanoTime() < deadline) {
      assertTrue(member.isAlive(), "the member process ended early\n" + tails(memberErr));
      last = describe(GROUP);
      if (last.stateLine().contains("state: Stable") && last.stateLine().endsWith(", members: 1")
          && last.rows().size() == PARTITIONS && last.rows().stream().noneMatch(r -> r.consumerId().equals("-"))) {
        return last;
      }
      sleep(500);
    }
    throw new AssertionError("no member within " + MEMBER_BOUND.toSeconds() + " s; last describe:\n"
        + (last == null ? "(none)" : last.text()) + tails(memberErr) + broker.diagnostics());
  }

  private static void awaitLines(Path file, long lines, Process process, Path err) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    long seen = 0;
    while (System.nanoTime() < deadline) {
      try {
        seen = Files.readString(file).lines().count();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      if (seen >= lines) {
        assertEquals(lines, seen, "records printed by the member\n" + tails(file, err));
        return;
      }
      assertTrue(process.isAlive(), "the member process ended early\n" + tails(file, err));
      sleep(200);
    }
    throw new AssertionError("the member printed " + seen + " of " + lines + " records\n" + tails(file, err));
  }

  private static boolean awaitExit(Process p, Duration timeout) {
    try {
      return p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String tails(Path... files) {
    StringBuilder b = new StringBuilder();
    for (Path f : files) {
      b.append(JavaProcesses.tail(f, 30));
    }
    return b.toString();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** A CLI command with {@code --bootstrap-server} after the command words. */
  private Result cli(String... args) {
    int commandWords = args[0].equals("perf") ? 2 : 1;
    List<String> all = new ArrayList<>(List.of(args).subList(0, commandWords));
    all.add("--bootstrap-server");
    all.add(bootstrap);
    all.addAll(List.of(args).subList(commandWords, args.length));
    return run(args[0], null, all.toArray(new String[0]));
  }

  private Result run(String name, byte[] stdin, String... args) {
    return track(CliProcess.start(String.format("%02d-%s", ++runs, name), dir, stdin, args))
        .awaitExit(PROCESS_BOUND);
  }

  private Result ok(Result r) {
    assertEquals(0, r.exitCode(), r.describe() + broker.diagnostics());
    return r;
  }

  private <T extends AutoCloseable> T track(T resource) {
    cleanup.push(resource);
    return resource;
  }

  /** A process started here that {@link #close()} kills if it still runs. */
  private record Background(Process process) implements AutoCloseable {
    @Override
    public void close() throws InterruptedException {
      if (process.isAlive()) {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
