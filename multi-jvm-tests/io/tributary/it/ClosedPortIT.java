package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.it.JavaProcesses.CliProcess;
import io.tributary.it.JavaProcesses.Result;
import io.tributary.protocol.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A client pointed at a port where no broker listens fails with a clear error naming the address, and returns: it
 * does not hang. The bound on each wait only keeps a hanging client from hanging the build; how long the failure
 * takes is printed, not asserted.
 */
class ClosedPortIT {
  /** Bound on one CLI process (JVM start + the client's timeout); only against hangs. */
  private static final Duration PROCESS_BOUND = Duration.ofSeconds(120);

  static Stream<Arguments> commands() {
    return Stream.of(
        Arguments.of("consume", List.of(
            "consume", "--topic", "t", "--from-beginning", "--max-messages", "1",
            "--consumer-property", "request.timeout.ms=2000"), null),
        Arguments.of("produce", List.of(
            "produce", "--topic", "t", "--producer-property", "request.timeout.ms=2000"),
            "k:v\n".getBytes(StandardCharsets.UTF_8)),
        // topics has no option for client settings: the default request.timeout.ms (30 s) applies
        Arguments.of("topics-list", List.of("topics", "--list"), null));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("commands")
  void cliCommandAgainstClosedPortExitsWithOneAndAnErrorNamingTheAddress(
      String name, List<String> args, byte[] stdin) {
    Path dir = JavaProcesses.testDir("ClosedPortIT", name);
    int closedPort = BrokerProcess.freePort();
    String address = "127.0.0.1:" + closedPort;
    List<String> command = new ArrayList<>(args);
    command.add(1, "--bootstrap-server");
    command.add(2, address);

    long start = System.nanoTime();
    Result result;
    try (CliProcess process = CliProcess.start(name, dir, stdin, command.toArray(new String[0]))) {
      result = process.awaitExit(PROCESS_BOUND);
    }
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    System.out.printf("ClosedPortIT %s: exit %d after %d ms%n", name, result.exitCode(), elapsedMs);

    assertEquals(1, result.exitCode(), result.describe());
    assertEquals(0, result.stdout().length, "nothing on stdout\n" + result.describe());
    String errorLine = result.stderr().lines().filter(l -> l.startsWith("Error: ")).findFirst().orElse(null);
    assertTrue(errorLine != null, "one 'Error: ...' line on stderr\n" + result.describe());
    assertTrue(errorLine.contains(address), "the error names the address: " + errorLine);
    assertTrue(errorLine.contains(ErrorCode.NETWORK_EXCEPTION.name()), "the error has its code: " + errorLine);
    assertTrue(result.stderr().lines().noneMatch(l -> l.startsWith("\tat ")),
        "no stack trace without --verbose\n" + result.describe());
  }

  @Test
  void connectToClosedPortThrowsNetworkExceptionNamingTheAddress() throws Exception {
    int closedPort = BrokerProcess.freePort();
    String address = "127.0.0.1:" + closedPort;
    long start = System.nanoTime();
    CompletableFuture<Throwable> outcome = CompletableFuture.supplyAsync(() -> assertThrows(
        TributaryException.class,
        () -> TributaryClient.connect(address, Map.of("request.timeout.ms", 2000)).close()));
    TributaryException e;
    try {
      e = (TributaryException) outcome.get(PROCESS_BOUND.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException timeout) {
      throw new AssertionError("connect to a closed port did not return within " + PROCESS_BOUND.toSeconds() + " s");
    } catch (ExecutionException failed) {
      throw new AssertionError("connect to a closed port", failed.getCause());
    }
    System.out.printf("ClosedPortIT in-process connect: failed after %d ms: %s%n",
        (System.nanoTime() - start) / 1_000_000, e.getMessage());
    assertEquals(ErrorCode.NETWORK_EXCEPTION, e.errorCode(), e.toString());
    assertTrue(e.getMessage().contains(address), "the message names the address: " + e.getMessage());
    // refused at once: the message says nothing listens there, not that a request timed out
    assertTrue(e.getMessage().contains("(Connection refused): nothing accepts connections there"),
        "the message says what happened: " + e.getMessage());
    assertFalse(e.getMessage().contains("request.timeout.ms"), "no timeout to blame: " + e.getMessage());
  }
}
