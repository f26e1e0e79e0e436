package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.cli.CommandLineTest.Run;
import io.tributary.cli.GroupsCommand.Scenario;
import io.tributary.cli.GroupsCommand.TopicSpec;
import io.tributary.client.TopicPartition;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GroupProtocol.DescribeGroupResponse;
import io.tributary.protocol.GroupProtocol.MemberDescription;
import io.tributary.protocol.GroupProtocol.PartitionLag;
import io.tributary.protocol.GroupProtocol.PartitionRef;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code tributary groups} without a broker: usage errors (exit 2) for missing or contradicting options, the empty
 * group id (exit 1), the {@code consume --group} option checks, and the tables as pure functions.
 */
class GroupsCommandTest {
  private static final String BS = "127.0.0.1:9092";

  private static Run run(String... args) {
    return CommandLineTest.run(args);
  }

  private static void assertUsage(String expectedInErr, String... args) {
    Run r = run(args);
    assertEquals(Main.EXIT_USAGE, r.exitCode(), String.join(" ", args) + "\n" + r.err());
    assertTrue(r.err().contains(expectedInErr), "expected '" + expectedInErr + "' in:\n" + r.err());
    assertTrue(r.err().contains("--help' for more information"), "a pointer to the usage is shown:\n" + r.err());
  }

  // ------------------------------------------------------------------------------------------------ usage errors

  @Test
  void helpWorks() {
    Run r = run("groups", "--help");
    assertEquals(Main.EXIT_OK, r.exitCode(), r.err());
    assertTrue(r.out().startsWith("Usage: tributary groups"), r.out());
    assertTrue(r.out().contains("--reset-offsets"), r.out());
  }

  @Test
  void needsExactlyOneAction() {
    assertUsage("--list", "groups", "--bootstrap-server", BS);
    assertUsage("mutually exclusive", "groups", "--bootstrap-server", BS, "--list", "--describe", "--group", "g");
    assertUsage("mutually exclusive", "groups", "--bootstrap-server", BS, "--delete", "--reset-offsets",
        "--group", "g");
  }

  @Test
  void needsABootstrapServer() {
    assertUsage("--bootstrap-server", "groups", "--list");
    assertUsage("HOST:PORT", "groups", "--bootstrap-server", "nohost", "--list");
  }

  @ParameterizedTest
  @ValueSource(strings = {"--describe", "--delete", "--reset-offsets"})
  void actionsOnAGroupNeedTheGroup(String action) {
    assertUsage("--group", "groups", "--bootstrap-server", BS, action, "--topic", "t", "--to-earliest");
  }

  @Test
  void groupDoesNotGoWithList() {
    assertUsage("--group", "groups", "--bootstrap-server", BS, "--list", "--group", "g");
  }

  @Test
  void resetOptionsGoWithResetOnly() {
    assertUsage("--reset-offsets only", "groups", "--bootstrap-server", BS, "--describe", "--group", "g",
        "--execute");
    assertUsage("--reset-offsets only", "groups", "--bootstrap-server", BS, "--describe", "--group", "g",
        "--topic", "t");
    assertUsage("--reset-offsets only", "groups", "--bootstrap-server", BS, "--delete", "--group", "g",
        "--to-earliest");
    assertUsage("--reset-offsets only", "groups", "--bootstrap-server", BS, "--list", "--all-topics");
  }

  @Test
  void describeOptionsGoWithDescribe() {
    assertUsage("--members", "groups", "--bootstrap-server", BS, "--list", "--members");
    assertUsage("--state", "groups", "--bootstrap-server", BS, "--delete", "--group", "g", "--state");
    assertUsage("cannot be used together", "groups", "--bootstrap-server", BS, "--describe", "--group", "g",
        "--members", "--state");
  }

  @Test
  void resetNeedsExactlyOneScenario() {
    assertUsage("Missing reset scenario", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t");
    assertUsage("Exactly one reset scenario", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--to-earliest", "--to-latest");
    assertUsage("Exactly one reset scenario", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--to-offset", "3", "--shift-by", "-1");
  }

  @Test
  void resetNeedsTopicOrAllTopics() {
    assertUsage("--topic or --all-topics", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--to-earliest");
    assertUsage("not both", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--to-earliest", "--topic", "t", "--all-topics");
  }

  @Test
  void dryRunAndExecuteContradict() {
    assertUsage("--dry-run and --execute", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--to-earliest", "--dry-run", "--execute");
  }

  @Test
  void badResetValuesAreUsageErrors() {
    assertUsage("--to-offset must be >= 0", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--to-offset", "-1");
    assertUsage("--to-offset", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--to-offset", "ten");
    assertUsage("--shift-by", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
        "--topic", "t", "--shift-by", "x");
    for (String topic : new String[] {"t:x", ":0", "t:", "t:0,,1", "t:-1"}) {
      assertUsage("--topic", "groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "g",
          "--topic", topic, "--to-earliest");
    }
  }

  @Test
  void anEmptyGroupIdIsAnErrorNotAUsageError() {
    for (String action : new String[] {"--describe", "--delete"}) {
      Run r = run("groups", "--bootstrap-server", BS, action, "--group", "");
      assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
      assertEquals("Error: INVALID_GROUP_ID: group.id must not be empty", r.err().strip());
    }
    Run reset = run("groups", "--bootstrap-server", BS, "--reset-offsets", "--group", "", "--topic", "t",
        "--to-latest", "--execute");
    assertEquals(Main.EXIT_FAILURE, reset.exitCode(), reset.err());
    assertEquals("Error: INVALID_GROUP_ID: group.id must not be empty", reset.err().strip());
    Run consume = run("consume", "--bootstrap-server", BS, "--topic", "t", "--group", "");
    assertEquals(Main.EXIT_FAILURE, consume.exitCode(), consume.err());
    assertEquals("Error: INVALID_GROUP_ID: group.id must not be empty", consume.err().strip());
  }

  @Test
  void consumeWithAGroupRejectsManualAssignmentOptions() {
    assertUsage("--partition cannot be used with --group", "consume", "--bootstrap-server", BS, "--topic", "t",
        "--group", "g", "--partition", "0");
    assertUsage("--offset cannot be used with --group", "consume", "--bootstrap-server", BS, "--topic", "t",
        "--group", "g", "--offset", "3");
    assertUsage("disagree", "consume", "--bootstrap-server", BS, "--topic", "t", "--group", "g",
        "--consumer-property", "group.id=h");
    assertUsage("disagree", "consume", "--bootstrap-server", BS, "--topic", "t", "--group", "g",
        "--from-beginning", "--consumer-property", "auto.offset.reset=latest");
  }

  @Test
  void groupsIsListedInTheTopLevelHelp() {
    Run r = run("--help");
    assertTrue(r.out().contains("groups"), r.out());
  }

  // ------------------------------------------------------------------------------------------------ tables

  @Test
  void tableAlignsColumnsWithoutTrailingSpaces() {
    List<String> lines = GroupsCommand.table(List.of("A", "LONGER", "C"),
        List.of(List.of("wide-cell", "x", "last"), List.of("y", "z", "-")));
    assertEquals(List.of(
        "A          LONGER  C",
        "wide-cell  x       last",
        "y          z       -"), lines);
  }

  @Test
  void tableWithNoRowsIsTheHeader() {
    assertEquals(List.of("GROUP  TOPIC"), GroupsCommand.table(List.of("GROUP", "TOPIC"), List.of()));
  }

  private static DescribeGroupResponse sample() {
    MemberDescription m1 = new MemberDescription("consumer-g1-1-5f2a", null, "consumer-g1-1",
        "akka://tributary-client@127.0.0.1:40123",
        List.of(new PartitionRef("orders", 0), new PartitionRef("orders", 2)));
    MemberDescription m2 = new MemberDescription("consumer-g1-2-77c1", "static-2", "consumer-g1-2",
        "akka://tributary-client@127.0.0.1:40777", List.of(new PartitionRef("orders", 1)));
    return new DescribeGroupResponse(ErrorCode.NONE, null, "g1", "Stable", 4, "range", List.of(m1, m2), List.of(
        new PartitionLag("orders", 2, -1, 17, -1, "consumer-g1-1-5f2a"),
        new PartitionLag("orders", 0, 10, 12, 2, "consumer-g1-1-5f2a"),
        new PartitionLag("orders", 1, 1000, 1000, 0, "consumer-g1-2-77c1"),
        new PartitionLag("audit", 0, 3, 9, 6, null)));
  }

  @Test
  void stateLineSaysStateGenerationAssignorAndMembers() {
    assertEquals("Consumer group 'g1' state: Stable, generation: 4, assignor: range, members: 2",
        GroupsCommand.stateLine(sample()));
    DescribeGroupResponse empty =
        new DescribeGroupResponse(ErrorCode.NONE, null, "g2", "Empty", 7, null, List.of(), List.of());
    assertEquals("Consumer group 'g2' state: Empty, generation: 7, assignor: -, members: 0",
        GroupsCommand.stateLine(empty));
  }

  @Test
  void offsetTableIsKafkasWithDashesForMissingValues() {
    List<String> lines = GroupsCommand.offsetLines(sample());
    assertEquals(List.of(
        "GROUP  TOPIC   PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID         HOST             "
            + "CLIENT-ID",
        "g1     audit   0          3               9               6    -                   -                -",
        "g1     orders  0          10              12              2    consumer-g1-1-5f2a  127.0.0.1:40123  "
            + "consumer-g1-1",
        "g1     orders  1          1000            1000            0    consumer-g1-2-77c1  127.0.0.1:40777  "
            + "consumer-g1-2",
        "g1     orders  2          -               17              -    consumer-g1-1-5f2a  127.0.0.1:40123  "
            + "consumer-g1-1"), lines);
    // every column starts at the same position in every line
    int lagColumn = lines.get(0).indexOf("LAG");
    for (String line : lines) {
      assertFalse(line.endsWith(" "), line);
      assertTrue(line.charAt(lagColumn - 1) == ' ' && line.charAt(lagColumn) != ' ', line);
    }
  }

  @Test
  void memberTableShowsAssignmentsAsKafka() {
    assertEquals(List.of(
        "GROUP  CONSUMER-ID         GROUP-INSTANCE-ID  HOST             CLIENT-ID      #PARTITIONS  ASSIGNMENT",
        "g1     consumer-g1-1-5f2a  -                  127.0.0.1:40123  consumer-g1-1  2            orders(0,2)",
        "g1     consumer-g1-2-77c1  static-2           127.0.0.1:40777  consumer-g1-2  1            orders(1)"),
        GroupsCommand.memberLines(sample()));
    assertEquals("a(1,3),b(0)", GroupsCommand.assignment(List.of(
        new PartitionRef("b", 0), new PartitionRef("a", 3), new PartitionRef("a", 1))));
    assertEquals("-", GroupsCommand.assignment(List.of()));
  }

  @Test
  void stateTable() {
    assertEquals(List.of(
        "GROUP  ASSIGNMENT-STRATEGY  STATE   GENERATION  #MEMBERS",
        "g1     range                Stable  4           2"), GroupsCommand.stateLines(sample()));
  }

  @Test
  void hostDropsTheActorSystemPart() {
    assertEquals("127.0.0.1:40123", GroupsCommand.host("akka://tributary-client@127.0.0.1:40123"));
    assertEquals("-", GroupsCommand.host(""));
    assertEquals("-", GroupsCommand.host(null));
  }

  @Test
  void resetTable() {
    Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
    offsets.put(new TopicPartition("orders", 0), 0L);
    offsets.put(new TopicPartition("orders", 1), 12345L);
    assertEquals(List.of(
        "GROUP  TOPIC   PARTITION  NEW-OFFSET",
        "g1     orders  0          0",
        "g1     orders  1          12345"), GroupsCommand.resetLines("g1", offsets));
  }

  // ------------------------------------------------------------------------------------------------ reset logic

  private static final TopicPartition P0 = new TopicPartition("t", 0);
  private static final TopicPartition P1 = new TopicPartition("t", 1);
  private static final Map<TopicPartition, Long> EARLIEST = Map.of(P0, 5L, P1, 0L);
  private static final Map<TopicPartition, Long> LATEST = Map.of(P0, 20L, P1, 8L);
  private static final Map<TopicPartition, Long> COMMITTED = Map.of(P0, 10L, P1, 7L);

  private static Map<TopicPartition, Long> reset(Scenario scenario, long value, List<String> warnings) {
    return GroupsCommand.newOffsets(scenario, value, List.of(P0, P1), EARLIEST, LATEST, COMMITTED, warnings);
  }

  @Test
  void earliestAndLatestAreTheListedOffsets() {
    List<String> warnings = new ArrayList<>();
    assertEquals(Map.of(P0, 5L, P1, 0L), reset(Scenario.TO_EARLIEST, 0, warnings));
    assertEquals(Map.of(P0, 20L, P1, 8L), reset(Scenario.TO_LATEST, 0, warnings));
    assertTrue(warnings.isEmpty(), warnings.toString());
  }

  @Test
  void shiftByMovesTheCommittedOffsetWithinTheLog() {
    List<String> warnings = new ArrayList<>();
    assertEquals(Map.of(P0, 12L, P1, 8L), reset(Scenario.SHIFT_BY, 2, warnings));
    assertEquals(List.of("New offset (9) is higher than latest offset for topic partition t-1. Value will be set to 8"),
        warnings);
    warnings.clear();
    assertEquals(Map.of(P0, 5L, P1, 0L), reset(Scenario.SHIFT_BY, -100, warnings));
    assertEquals(2, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).contains("lower than earliest"), warnings.toString());
    assertEquals(Map.of(P0, 20L, P1, 8L), reset(Scenario.SHIFT_BY, Long.MAX_VALUE, new ArrayList<>()));
  }

  @Test
  void toOffsetIsClampedToTheLog() {
    List<String> warnings = new ArrayList<>();
    assertEquals(Map.of(P0, 6L, P1, 6L), reset(Scenario.TO_OFFSET, 6, warnings));
    assertTrue(warnings.isEmpty(), warnings.toString());
    assertEquals(Map.of(P0, 5L, P1, 3L), reset(Scenario.TO_OFFSET, 3, warnings));
    assertEquals(1, warnings.size(), warnings.toString());
  }

  @Test
  void shiftByWithoutACommittedOffsetFails() {
    CliException e = assertThrows(CliException.class, () -> GroupsCommand.newOffsets(Scenario.SHIFT_BY, 1,
        List.of(P0, P1), EARLIEST, LATEST, Map.of(P0, 10L), new ArrayList<>()));
    assertEquals("Cannot shift offset for partition t-1 since there is no current committed offset", e.getMessage());
  }

  @Test
  void topicSpecs() {
    assertEquals(new TopicSpec("orders", List.of()), GroupsCommand.parseTopic("orders"));
    assertEquals(new TopicSpec("orders", List.of(0, 2)), GroupsCommand.parseTopic("orders:0,2"));
    assertEquals(new TopicSpec("orders", List.of(1)), GroupsCommand.parseTopic("orders:1,1"));
    assertThrows(IllegalArgumentException.class, () -> GroupsCommand.parseTopic("orders:a"));
  }
}
