package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code tributary chaos}, shortened, as a user runs it: its own JVM starts a local cluster of three broker JVMs,
 * produces with idempotent {@code acks=all} producers and consumes while SIGKILLing and restarting a random node every
 * 10 s, and must exit 0 with {@code acknowledged N, lost 0, duplicated 0, reordered 0} (N > 0) as its only stdout line,
 * leaving no broker process behind.
 *
 * <p>The replication factor is {@link ReplicatedClusters#RF} (3, or {@code -Dtributary.it.rf=1} to check the harness
 * without replication).
 */
class ChaosIT {
  private static final Duration BOUND = Duration.ofMinutes(8);
  private static final Pattern RESULT =
      Pattern.compile("acknowledged (\\d+), lost (\\d+), duplicated (\\d+), reordered (\\d+)");

  private Path clusterDir;

  /** Kills any broker the chaos process left behind (it stops them itself; this is for a failed or hung run). */
  @AfterEach
  void killLeftovers() throws IOException {
    if (clusterDir == null || !Files.isDirectory(clusterDir)) {
      return;
    }
    try (var nodes = Files.list(clusterDir)) {
      for (Path node : nodes.filter(p -> p.getFileName().toString().startsWith("node-")).toList()) {
        Path pidFile = node.resolve("pid");
        if (!Files.exists(pidFile)) {
          continue;
        }
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        if (isBroker(pid, node)) {
          ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
    }
  }

  private static boolean isBroker(long pid, Path nodeDir) {
    try {
      String cmdline = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
          StandardCharsets.UTF_8);
      return cmdline.contains("io.tributary.cli.Main\0server\0") && cmdline.contains("\0" + nodeDir + "\0");
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void chaosRunLosesDuplicatesAndReordersNothing() throws IOException {
    Path dir = JavaProcesses.testDir("ChaosIT", "chaos");
    clusterDir = dir.resolve("cluster");
    int base = ReplicatedClusters.freeBasePort(3);
    long t0 = System.nanoTime();
    JavaProcesses.Result r;
    try (JavaProcesses.CliProcess chaos = JavaProcesses.CliProcess.start("chaos", dir, null,
        "chaos", "--nodes", "3", "--duration", "30s", "--kill-every", "10s", "--base-port", Integer.toString(base),
        "--data-dir", clusterDir.toString(), "--partitions", "6", "--producers", "2", "--rate", "300",
        "--replication-factor", Short.toString(ReplicatedClusters.RF), "--seed", "20240601",
        "--final-read-timeout", "90s")) {
      r = chaos.awaitExit(BOUND);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    String out = r.stdoutText();
    List<String> lines = out.lines().toList();
    assertEquals(1, lines.size(), "exactly one line on stdout\n" + r.describe());
    Matcher m = RESULT.matcher(lines.get(0));
    assertTrue(m.matches(), "the result line\n" + r.describe());
    assertTrue(Long.parseLong(m.group(1)) > 0, "something acknowledged\n" + r.describe());
    assertEquals("0 lost, 0 duplicated, 0 reordered", m.group(2) + " lost, " + m.group(3) + " duplicated, "
        + m.group(4) + " reordered", r.describe());
    assertEquals(0, r.exitCode(), r.describe());
    for (int n = 1; n <= 3; n++) {
      Path node = clusterDir.resolve("node-" + n);
      Path pidFile = node.resolve("pid");
      if (Files.exists(pidFile)) {
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        assertTrue(!isBroker(pid, node), "node " + n + " (pid " + pid + ") stopped by the chaos command");
      }
    }
    System.out.printf("ChaosIT: %s in %d ms (rf %d)%n--- chaos stderr\n%s%n", lines.get(0), ms,
        ReplicatedClusters.RF, r.stderr());
  }
}
