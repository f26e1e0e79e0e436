package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.cli.CommandLineTest.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code tributary cluster} and the cluster options of {@code server} without starting a broker: parsing, validation,
 * the data directory's files, and that only processes of the cluster's own pid files are ever signalled.
 */
class ClusterCommandTest {
  @TempDir Path tmp;

  private Process fake;

  @AfterEach
  void killFake() throws InterruptedException {
    if (fake != null && fake.isAlive()) {
      fake.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static Run run(String... args) {
    return CommandLineTest.run(args);
  }

  private String dir() {
    return tmp.resolve("cd").toString();
  }

  // ------------------------------------------------------------------ parsing and validation

  @Test
  void clusterWithoutSubcommandIsAUsageError() {
    Run r = run("cluster");
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("Missing command") && r.err().contains("start"), r.err());
  }

  @ParameterizedTest
  @ValueSource(strings = {"cluster", "cluster start", "cluster status", "cluster stop", "cluster kill",
      "cluster restart"})
  void helpWorks(String command) {
    String[] words = (command + " --help").split(" ");
    Run r = run(words);
    assertEquals(Main.EXIT_OK, r.exitCode(), r.err());
    assertTrue(r.out().startsWith("Usage: tributary " + command), r.out());
  }

  @Test
  void helpTellsHowToSurviveANodeFailure() {
    Run r = run("cluster", "--help");
    assertTrue(r.out().contains("--replication-factor 3"), r.out());
    assertTrue(r.out().contains("keep-majority"), r.out());
  }

  @Test
  void withNoNodeRunningEveryNodeStartsFromTheConfiguredSeeds() {
    LocalCluster c = new LocalCluster(java.nio.file.Path.of(dir()), 3, 9092, null, List.of());
    assertEquals(c.seedNodes(), c.seedNodesFor(1));
    assertEquals(c.seedNodes(), c.seedNodesFor(3));
  }

  @Test
  void startNeedsNodes() {
    Run r = run("cluster", "start", "--data-dir", dir());
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().contains("--nodes"), r.err());
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "--nodes 0",
    "--nodes 65",
    "--nodes -1",
    "--nodes 3 --base-port 0",
    "--nodes 3 --base-port 65534",
    "--nodes 2 --base-port 70000",
    "--nodes 3 --timeout 0",
    "--nodes x"
  })
  void startRejectsBadValuesAsUsageErrorsAndTouchesNothing(String options) {
    String[] args = ("cluster start --data-dir " + dir() + " " + options).split(" ");
    Run r = run(args);
    assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
    assertFalse(Files.exists(tmp.resolve("cd")), "nothing written for a usage error");
  }

  @Test
  void startRejectsAMissingConfigFile() {
    Run r = run("cluster", "start", "--nodes", "1", "--data-dir", dir(), "--config", tmp.resolve("nope.conf")
        .toString());
    assertEquals(Main.EXIT_USAGE, r.exitCode());
    assertTrue(r.err().startsWith("Error: Cannot read --config " + tmp.resolve("nope.conf") + ": no such file"),
        r.err());
    Run dir = run("cluster", "start", "--nodes", "1", "--data-dir", dir(), "--config", tmp.toString());
    assertEquals(Main.EXIT_USAGE, dir.exitCode());
    assertTrue(dir.err().startsWith("Error: Cannot read --config " + tmp + ": it is a directory"), dir.err());
  }

  @Test
  void killAndRestartNeedNode() {
    assertEquals(Main.EXIT_USAGE, run("cluster", "kill", "--data-dir", dir()).exitCode());
    assertEquals(Main.EXIT_USAGE, run("cluster", "restart", "--data-dir", dir()).exitCode());
  }

  @Test
  void commandsOnADirectoryWithoutAClusterFailClearly() {
    for (String[] args : List.of(
        new String[] {"cluster", "status", "--data-dir", dir()},
        new String[] {"cluster", "kill", "--node", "1", "--data-dir", dir()},
        new String[] {"cluster", "restart", "--node", "1", "--data-dir", dir()},
        new String[] {"cluster", "stop", "--data-dir", dir()})) {
      Run r = run(args);
      assertEquals(Main.EXIT_FAILURE, r.exitCode(), String.join(" ", args) + ": " + r.err());
      assertTrue(r.err().startsWith("Error: No local cluster in "), r.err());
    }
  }

  @Test
  void restartingAnotherNodeThanTheFirstWhenNoneRunsSaysToRestartNodeOneFirst() {
    java.nio.file.Path d = tmp.resolve("none-running");
    new LocalCluster(d, 3, 19192, null, List.of()).save(); // a cluster whose nodes are all down (none started)
    Run r = run("cluster", "restart", "--node", "2", "--data-dir", d.toString());
    assertEquals(Main.EXIT_FAILURE, r.exitCode(), r.err());
    assertTrue(r.err().contains("only node 1 (the first seed node) can form the cluster: restart node 1 first"),
        r.err());
    assertFalse(java.nio.file.Files.exists(LocalCluster.load(d).pidFile(2)), "nothing was started");
  }

  @Test
  void nodeOutOfRangeIsAUsageError() {
    new LocalCluster(tmp.resolve("cd"), 3, 19092, null, List.of()).save();
    for (String node : new String[] {"0", "4"}) {
      Run r = run("cluster", "kill", "--node", node, "--data-dir", dir());
      assertEquals(Main.EXIT_USAGE, r.exitCode(), r.err());
      assertTrue(r.err().contains("--node must be 1..3"), r.err());
      assertEquals(Main.EXIT_USAGE, run("cluster", "restart", "--node", node, "--data-dir", dir()).exitCode());
    }
  }

  @Test
  void serverRejectsBadSeedNodesAndNodeIds() {
    for (String[] args : List.of(
        new String[] {"server", "--seed-node", "nohost"},
        new String[] {"server", "--seed-node", "127.0.0.1:0"},
        new String[] {"server", "--seed-node", "127.0.0.1:9092", "--seed-node", "127.0.0.1:99999"},
        new String[] {"server", "--node-id", "-1"})) {
      Run r = run(args);
      assertEquals(Main.EXIT_USAGE, r.exitCode(), String.join(" ", args) + ": " + r.err());
    }
  }

  @Test
  void seedNodeAddresses() {
    assertEquals("akka://tributary@127.0.0.1:9092", ServerCommand.seedNodeAddress("127.0.0.1:9092"));
    assertEquals("akka://tributary@localhost:1", ServerCommand.seedNodeAddress(" localhost:1 "));
    assertEquals("akka://other@10.0.0.1:2552", ServerCommand.seedNodeAddress("akka://other@10.0.0.1:2552"));
    for (String bad : new String[] {"", "host", ":9092", "host:", "host:65536", "host:0", "a b:1", "akka://h:1",
        "akka://@h:1", "h:12x"}) {
      assertThrows(IllegalArgumentException.class, () -> ServerCommand.seedNodeAddress(bad), bad);
    }
  }

  // ------------------------------------------------------------------ the data directory

  @Test
  void nodesGetConsecutivePortsOwnDirectoriesAndTheFirstTwoNodesAsSeeds() {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 3, 9092, null, List.of("-Xmx1g"));
    assertEquals("127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094", c.bootstrap());
    assertEquals(List.of("127.0.0.1:9192", "127.0.0.1:9193"), c.seedNodes(), "seeds are named by cluster port");
    assertEquals(3, c.nodeOf("127.0.0.1:9194"), "members are named by cluster port");
    assertEquals(0, c.nodeOf("127.0.0.1:9094"), "a client port names no member");
    assertEquals(0, c.nodeOf("127.0.0.1:9195"));
    List<String> cmd = c.command(3);
    int main = cmd.indexOf(LocalCluster.MAIN_CLASS);
    assertTrue(main > 0, cmd.toString());
    assertEquals(List.of("server", "--node-id", "3", "--port", "9094", "--cluster-port", "9194", "--data-dir",
        c.nodeDir(3).toString(), "--members-file", c.membersFile(3).toString(), "--seed-node", "127.0.0.1:9192",
        "--seed-node", "127.0.0.1:9193"), cmd.subList(main + 1, cmd.size()));
    assertTrue(cmd.subList(0, main).contains("-Xmx1g"), "extra JVM options before the main class: " + cmd);
    assertTrue(cmd.indexOf("-Xmx1g") > cmd.indexOf("-Xmx512m"), "extra JVM options win over the defaults");
    assertTrue(LocalCluster.isNodeCommandLine(cmd, c.nodeDir(3)));
    assertFalse(LocalCluster.isNodeCommandLine(cmd, c.nodeDir(2)), "another node's data dir");
    assertEquals(List.of("127.0.0.1:9192"), new LocalCluster(tmp, 1, 9092, null, List.of()).seedNodes());
  }

  @Test
  void commandLineCheckWantsMainServerAndTheDataDir() {
    Path d = tmp.resolve("cd").resolve("node-1");
    assertTrue(LocalCluster.isNodeCommandLine(
        List.of("java", "-cp", "x", "io.tributary.cli.Main", "server", "--data-dir", d.toString()), d));
    assertFalse(LocalCluster.isNodeCommandLine(
        List.of("java", "-cp", "x", "io.tributary.cli.Main", "consume", "--data-dir", d.toString()), d));
    assertFalse(LocalCluster.isNodeCommandLine(List.of("sleep", "60"), d));
    assertFalse(LocalCluster.isNodeCommandLine(List.of("java", "io.tributary.cli.Main", "server"), d));
  }

  @Test
  void aProcessJustLaunchedThroughSetsidIsSeenRunningEvenWhileItExecs() throws Exception {
    // setsid execs its program right after start() returns; during that execve /proc/PID/cmdline reads empty (or a
    // part of the new arguments, "/") for a moment, which once made a node restarted by chaos look as if it had
    // exited (and the tool then killed it). Every read must give the old or the new command line.
    org.junit.jupiter.api.Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/setsid"))
        && Files.isExecutable(Path.of("/bin/sleep")) && Files.isDirectory(Path.of("/proc/self")),
        "needs setsid, sleep and /proc");
    for (int i = 0; i < 100; i++) {
      Process p = new ProcessBuilder("/usr/bin/setsid", "/bin/sleep", "30").start();
      try {
        for (int read = 0; ; read++) {
          List<String> args = LocalCluster.commandLine(p.pid());
          assertTrue(args != null && (args.equals(List.of("/usr/bin/setsid", "/bin/sleep", "30"))
              || args.equals(List.of("/bin/sleep", "30"))), "launch " + i + ", read " + read + ": " + args);
          if (args.get(0).equals("/bin/sleep")) {
            break;
          }
          assertTrue(read < 100_000, "setsid never exec'd sleep");
        }
      } finally {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aProcessThatEndedHasNoCommandLine() throws Exception {
    Process p = new ProcessBuilder("true").start();
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertNull(LocalCluster.commandLine(p.pid()));
  }

  @Test
  void aNodeThatDiesBeforeItIsReadySaysHowInItsOutput() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 9092, null, List.of());
    Files.createDirectories(c.nodeDir(1));
    Files.writeString(c.outFile(1), "=== tributary cluster: starting node 1\n");
    long offset = Files.size(c.outFile(1));
    // a process that prints nothing and is killed, as a JVM killed before its first line
    fake = new ProcessBuilder("sh", "-c", "kill -9 $$").start();
    LocalCluster.Launched l = new LocalCluster.Launched(1, fake.pid(), offset, System.currentTimeMillis(), fake);
    java.io.StringWriter sw = new java.io.StringWriter();
    CliException e = assertThrows(CliException.class,
        () -> c.awaitReady(List.of(l), java.time.Duration.ofSeconds(30), new java.io.PrintWriter(sw)));
    assertTrue(e.getMessage().contains("exited before it was ready: killed by SIGKILL (exit code 137), printing"
        + " nothing"), e.getMessage());
    String out = Files.readString(c.outFile(1));
    assertTrue(out.contains("=== tributary cluster: node 1 (pid " + fake.pid() + ") ended before it was ready:"
        + " killed by SIGKILL"), out);
  }

  @Test
  void aNodeThatFailsToStartIsQuotedInTheError() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 9092, null, List.of());
    Files.createDirectories(c.nodeDir(1));
    Files.writeString(c.outFile(1), "Error: an earlier start\n");
    long offset = Files.size(c.outFile(1));
    fake = new ProcessBuilder("sh", "-c", "echo 'Error: The data directory is in use'; exit 1")
        .redirectOutput(ProcessBuilder.Redirect.appendTo(c.outFile(1).toFile())).redirectErrorStream(true).start();
    LocalCluster.Launched l = new LocalCluster.Launched(1, fake.pid(), offset, System.currentTimeMillis(), fake);
    CliException e = assertThrows(CliException.class, () -> c.awaitReady(List.of(l), java.time.Duration.ofSeconds(30),
        new java.io.PrintWriter(new java.io.StringWriter())));
    assertTrue(e.getMessage().startsWith("Node 1 (pid " + fake.pid() + ", 127.0.0.1:9092) exited before it was ready:"
        + " exit code 1; its last line: Error: The data directory is in use\n"), e.getMessage());
  }

  @Test
  void stopLaunchedStopsThroughTheProcessAndNotesWhy() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 9092, null, List.of());
    Files.createDirectories(c.nodeDir(1));
    fake = new ProcessBuilder("sleep", "60").start();
    Files.writeString(c.pidFile(1), fake.pid() + "\n");
    LocalCluster.Launched l = new LocalCluster.Launched(1, fake.pid(), 0, System.currentTimeMillis(), fake);
    // not a node's command line: the pid-file path (signal) refuses it, the Process handle does not need it
    assertFalse(c.signal(1, true));
    assertEquals(Set.of(), c.stopLaunched(List.of(l), "test", java.time.Duration.ofSeconds(10)));
    assertFalse(fake.isAlive());
    assertFalse(Files.exists(c.pidFile(1)), "pid file of the stopped process removed");
    String out = Files.readString(c.outFile(1));
    assertTrue(out.contains("stopping node 1 (pid " + fake.pid() + "): test"), out);
    assertTrue(out.contains("stopped: ended by SIGTERM (exit code 143)"), out);
  }

  @Test
  void exitCodesAreDescribed() {
    assertEquals("killed by SIGKILL (exit code 137)", LocalCluster.describeExit(137));
    assertEquals("ended by SIGTERM (exit code 143)", LocalCluster.describeExit(143));
    assertEquals("killed by signal 11 (exit code 139)", LocalCluster.describeExit(139));
    assertEquals("exit code 1", LocalCluster.describeExit(1));
  }

  @Test
  void propertiesRoundTrip() {
    Path conf = tmp.resolve("a.conf");
    new LocalCluster(tmp.resolve("cd"), 5, 12000, conf, List.of("-Xmx2g", "-Dx=a b")).save();
    LocalCluster c = LocalCluster.load(tmp.resolve("cd"));
    assertEquals(5, c.nodes());
    assertEquals(12000, c.basePort());
    List<String> cmd = c.command(1);
    assertTrue(cmd.contains("-Dx=a b") && cmd.contains("-Xmx2g"), cmd.toString());
    assertEquals(conf.toString(), cmd.get(cmd.indexOf("--config") + 1));
  }

  @Test
  void readyLineIsFoundOnlyAfterTheOffsetAndOnlyWhenComplete() throws IOException {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 9092, null, List.of());
    Files.createDirectories(c.nodeDir(1));
    String earlier = "Tributary broker started: bootstrap 127.0.0.1:9092, data dir x\n";
    Files.writeString(c.outFile(1), earlier);
    long offset = Files.size(c.outFile(1));
    assertNull(c.readyLine(1, offset));
    Files.writeString(c.outFile(1), earlier + "Tributary broker started: bootstrap 127.0.0.1:9092, da");
    assertNull(c.readyLine(1, offset), "half a line");
    Files.writeString(c.outFile(1), earlier + "Tributary broker started: bootstrap 127.0.0.1:9092, data dir y\n");
    assertTrue(c.readyLine(1, offset).endsWith("data dir y"));
  }

  // ------------------------------------------------------------------ membership views

  @Test
  void membersFileRoundTrip() {
    MembershipFile.View v = view("127.0.0.1:9092", 11, List.of(
        new MembershipFile.MemberView("akka://tributary@127.0.0.1:9092", 11, "Up", List.of("broker", "dc-default"),
            true),
        new MembershipFile.MemberView("akka://tributary@127.0.0.1:9093", -22, "Leaving", List.of(), false)));
    MembershipFile.View back = MembershipFile.parse(MembershipFile.format(v));
    assertEquals(v, back);
    assertEquals("127.0.0.1:9093", back.members().get(1).hostPort());
    assertThrows(IllegalArgumentException.class, () -> MembershipFile.parse("hello\tworld\n"));
    assertThrows(IllegalArgumentException.class, () -> MembershipFile.parse("updated\t1\nmember\tx\n"));
    assertNull(MembershipFile.read(tmp.resolve("missing.txt")));
  }

  @Test
  void anUnchangedViewIsOnlyTouchedAndReadsAsOfTheFilesModificationTime() throws Exception {
    MembershipFile.View v = view("127.0.0.1:9092", 11, List.of());
    MembershipFile.View old = new MembershipFile.View(1_000L, v.self(), v.selfUid(), v.selfStatus(), v.leader(),
        v.oldest(), v.members());
    Path file = tmp.resolve("members-touched.txt");
    MembershipFile.writeAtomically(file, MembershipFile.format(old));
    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(1_000L));
    assertEquals(1_000L, MembershipFile.read(file).updatedMillis(), "as written");
    Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(5_000_000L));
    assertEquals(5_000_000L, MembershipFile.read(file).updatedMillis(), "the writer touched it: the view is fresh");
    assertEquals(v.members(), MembershipFile.read(file).members());
  }

  @Test
  void convergenceNeedsEveryRunningNodeUpReachableAndTheSameIncarnationInEveryView() throws IOException {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 3, 9092, null, List.of());
    Map<Integer, Long> uids = new LinkedHashMap<>(Map.of(1, 101L, 2, 102L, 3, 103L));
    for (int n = 1; n <= 3; n++) {
      writeView(c, n, uids, Set.of(1, 2, 3), Set.of());
    }
    assertEquals(List.of(), c.convergenceProblems(Set.of(1, 2, 3), Map.of()));

    writeView(c, 1, uids, Set.of(1, 2, 3), Set.of(3));
    List<String> problems = c.convergenceProblems(Set.of(1, 2, 3), Map.of());
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).contains("node 1 sees 127.0.0.1:9194 Up unreachable"), problems.toString());

    // node 3 restarted: a new uid; node 1 still lists the old one
    Map<Integer, Long> restarted = new LinkedHashMap<>(uids);
    restarted.put(3, 333L);
    writeView(c, 1, uids, Set.of(1, 2, 3), Set.of());
    writeView(c, 3, restarted, Set.of(1, 2, 3), Set.of());
    writeView(c, 2, restarted, Set.of(1, 2, 3), Set.of());
    problems = c.convergenceProblems(Set.of(1, 2, 3), Map.of());
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).contains("earlier incarnation"), problems.toString());

    // node 3 down and removed: nodes 1 and 2 converge without it; a view that still lists it does not
    writeView(c, 1, uids, Set.of(1, 2), Set.of());
    writeView(c, 2, uids, Set.of(1, 2, 3), Set.of(3));
    problems = c.convergenceProblems(Set.of(1, 2), Map.of());
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).startsWith("node 2 sees"), problems.toString());
    writeView(c, 2, uids, Set.of(1, 2), Set.of());
    assertEquals(List.of(), c.convergenceProblems(Set.of(1, 2), Map.of()));

    // a view from before the node's start does not count
    problems = c.convergenceProblems(Set.of(1, 2), Map.of(2, System.currentTimeMillis() + 60_000));
    assertEquals(List.of("node 2 has not reported its view of the cluster"), problems);
  }

  @Test
  void partitionListsAreCompact() {
    Map<String, List<Integer>> m = new LinkedHashMap<>();
    m.put("__consumer_offsets", List.of(0, 1, 2, 3, 4, 5));
    m.put("orders", List.of(5, 1, 2));
    m.put("x", List.of(7));
    assertEquals("__consumer_offsets[0-5] orders[1,2,5] x[7]", ClusterCommand.partitionList(m));
    assertEquals("-", ClusterCommand.partitionList(null));
  }

  // ------------------------------------------------------------------ signalling only our own processes

  @Test
  void aPidFileNamingAnotherProcessIsNeverSignalled() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 2, 19092, null, List.of());
    c.save();
    fake = new ProcessBuilder("sleep", "120").start();
    Files.createDirectories(c.nodeDir(1));
    Files.writeString(c.pidFile(1), fake.pid() + "\n"); // a reused pid: not a broker
    Files.createDirectories(c.nodeDir(2));
    Files.writeString(c.pidFile(2), ProcessHandle.current().pid() + "\n"); // this test JVM

    Run kill = run("cluster", "kill", "--node", "1", "--data-dir", dir());
    assertEquals(Main.EXIT_FAILURE, kill.exitCode());
    assertTrue(kill.err().contains("Node 1 is not running"), kill.err());
    Run status = run("cluster", "status", "--data-dir", dir());
    assertEquals(Main.EXIT_FAILURE, status.exitCode());
    assertTrue(status.out().contains("dead"), status.out());
    Run stop = run("cluster", "stop", "--data-dir", dir());
    assertEquals(Main.EXIT_OK, stop.exitCode(), stop.err());
    assertTrue(stop.out().contains("is running"), stop.out());
    assertTrue(fake.isAlive(), "the process of a reused pid is left alone");
    assertFalse(Files.exists(c.pidFile(1)), "stale pid files are removed by stop");
    assertFalse(Files.exists(c.pidFile(2)));
  }

  @Test
  void aRunningNodeRefusesStartAndRestartAndIsKilledByKill() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 19092, null, List.of());
    c.save();
    Files.createDirectories(c.nodeDir(1));
    // a stand-in for a broker: its command line names the main class, server and node 1's data dir
    fake = new ProcessBuilder("sh", "-c", "sleep 120; true", LocalCluster.MAIN_CLASS, "server", "--data-dir",
        c.nodeDir(1).toString()).start();
    Files.writeString(c.pidFile(1), fake.pid() + "\n");
    assertTrue(c.isRunning(1));

    Run start = run("cluster", "start", "--nodes", "1", "--base-port", "19092", "--data-dir", dir());
    assertEquals(Main.EXIT_FAILURE, start.exitCode());
    assertTrue(start.err().contains("already running") && start.err().contains("node 1 (pid " + fake.pid()),
        start.err());
    Run restart = run("cluster", "restart", "--node", "1", "--data-dir", dir());
    assertEquals(Main.EXIT_FAILURE, restart.exitCode());
    assertTrue(restart.err().contains("Node 1 is running"), restart.err());

    Run kill = run("cluster", "kill", "--node", "1", "--data-dir", dir());
    assertEquals(Main.EXIT_OK, kill.exitCode(), kill.err());
    assertTrue(kill.out().contains("Killed node 1 (pid " + fake.pid()), kill.out());
    assertTrue(fake.waitFor(10, TimeUnit.SECONDS));
    assertEquals(137, fake.exitValue(), "SIGKILL");
    assertTrue(Files.exists(c.pidFile(1)), "kill keeps the pid file, so status shows the node dead");
  }

  @Test
  void stopSendsSigtermToRunningNodesAndRemovesPidFiles() throws Exception {
    LocalCluster c = new LocalCluster(tmp.resolve("cd"), 1, 19092, null, List.of());
    c.save();
    Files.createDirectories(c.nodeDir(1));
    fake = new ProcessBuilder("sh", "-c", "sleep 120; true", LocalCluster.MAIN_CLASS, "server", "--data-dir",
        c.nodeDir(1).toString()).start();
    Files.writeString(c.pidFile(1), fake.pid() + "\n");
    Run stop = run("cluster", "stop", "--data-dir", dir(), "--timeout", "10");
    assertEquals(Main.EXIT_OK, stop.exitCode(), stop.err());
    assertTrue(stop.out().contains("Node 1 (pid " + fake.pid() + "): stopped"), stop.out());
    assertTrue(fake.waitFor(10, TimeUnit.SECONDS));
    assertEquals(143, fake.exitValue(), "SIGTERM");
    assertFalse(Files.exists(c.pidFile(1)));
  }

  private static MembershipFile.View view(String self, long uid, List<MembershipFile.MemberView> members) {
    return new MembershipFile.View(System.currentTimeMillis(), "akka://tributary@" + self, uid, "Up",
        "akka://tributary@127.0.0.1:9092", "akka://tributary@127.0.0.1:9092", members);
  }

  private static void writeView(LocalCluster c, int node, Map<Integer, Long> uids, Set<Integer> members,
      Set<Integer> unreachable) throws IOException {
    List<MembershipFile.MemberView> list = members.stream().sorted().map(m -> new MembershipFile.MemberView(
        "akka://tributary@" + c.clusterHostPort(m), uids.get(m), "Up", List.of("broker"), !unreachable.contains(m)))
        .toList();
    Files.createDirectories(c.nodeDir(node));
    MembershipFile.writeAtomically(c.membersFile(node),
        MembershipFile.format(view(c.clusterHostPort(node), uids.get(node), list)));
  }
}
