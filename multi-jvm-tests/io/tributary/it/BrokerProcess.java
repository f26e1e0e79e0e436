package io.tributary.it;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A Tributary broker in its own JVM ({@code io.tributary.cli.Main server}), started with the test's own classpath and
 * {@code java} binary, as a user would run {@code bin/tributary server}.
 *
 * <p>The child's stdout is copied line by line to {@code <logDir>/<name>.stdout} by a pump thread, which also watches
 * for the ready line; stderr goes to {@code <logDir>/<name>.stderr}; the broker's own log is
 * {@code <dataDir>/logs/tributary.log}. Every failure message includes the tails of these files.
 *
 * <p>Not thread-safe; one test thread drives it. {@link #close()} always leaves no process behind.
 */
final class BrokerProcess implements AutoCloseable {
  /** What the server prints on stdout once it serves clients. */
  static final String READY_PREFIX = "Tributary broker started: bootstrap ";

  /** Bound on waiting for the ready line, so a broken start fails the test instead of hanging it. */
  static final Duration READY_TIMEOUT = Duration.ofSeconds(90);

  /** Bound on a graceful stop before the process is killed. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);

  private final String name;
  private final Path dataDir;
  private final int port;
  private final Path stdoutFile;
  private final Path stderrFile;
  private final Process process;
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private final Thread pump;

  private BrokerProcess(String name, Path dataDir, int port, Path logDir) throws IOException {
    this.name = name;
    this.dataDir = dataDir;
    this.port = port;
    Files.createDirectories(logDir);
    this.stdoutFile = logDir.resolve(name + ".stdout");
    this.stderrFile = logDir.resolve(name + ".stderr");
    List<String> command = JavaProcesses.javaCommand(
        "server", "--data-dir", dataDir.toAbsolutePath().toString(), "--port", Integer.toString(port));
    ProcessBuilder pb = new ProcessBuilder(command)
        .directory(logDir.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(nullDevice()))
        .redirectOutput(ProcessBuilder.Redirect.PIPE)
        .redirectError(ProcessBuilder.Redirect.appendTo(stderrFile.toFile()));
    Files.writeString(stdoutFile, "");
    this.process = pb.start();
    this.pump = new Thread(this::pumpStdout, "stdout-" + name);
    pump.setDaemon(true);
    pump.start();
    process.onExit().thenAccept(p -> ready.completeExceptionally(
        new IllegalStateException(name + " exited with code " + p.exitValue() + " before it was ready")));
  }

  /**
   * Starts {@code server --data-dir dataDir --port port} in a new JVM; does not wait for it to be ready.
   *
   * @param name names the log files (e.g. {@code broker-1}, {@code broker-restarted})
   * @param logDir where stdout and stderr files go (created if missing)
   */
  static BrokerProcess start(String name, Path dataDir, int port, Path logDir) {
    try {
      return new BrokerProcess(name, dataDir, port, logDir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start broker " + name, e);
    }
  }

  /**
   * Waits for the ready line (at most {@link #READY_TIMEOUT}).
   *
   * @return the bootstrap address the broker printed, {@code 127.0.0.1:PORT}
   * @throws AssertionError if the broker exits or does not become ready in time, with the logs' tails
   */
  String awaitReady() {
    try {
      String line = ready.get(READY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      String rest = line.substring(READY_PREFIX.length());
      int comma = rest.indexOf(',');
      return comma < 0 ? rest.trim() : rest.substring(0, comma).trim();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while waiting for " + name, e);
    } catch (ExecutionException e) {
      throw new AssertionError(e.getCause().getMessage() + "\n" + diagnostics(), e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError(name + " printed no ready line within " + READY_TIMEOUT.toSeconds() + " s\n"
          + diagnostics());
    }
  }

  /** SIGKILL (on Linux, {@code destroyForcibly}), then waits until the process is gone. No shutdown hook runs. */
  void kill() {
    process.destroyForcibly();
    awaitExit(STOP_TIMEOUT);
  }

  /**
   * SIGTERM ({@code destroy}) and waits up to {@link #STOP_TIMEOUT} for the graceful shutdown; kills it if it has not
   * exited by then.
   *
   * @return the exit code, or -1 if it had to be killed
   */
  int stop() {
    if (!process.isAlive()) {
      return process.exitValue();
    }
    process.destroy();
    if (awaitExit(STOP_TIMEOUT)) {
      return process.exitValue();
    }
    kill();
    return -1;
  }

  /** Kills the process if it still runs (for {@code @AfterEach} and {@code finally}). Idempotent. */
  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }

  boolean isAlive() {
    return process.isAlive();
  }

  long pid() {
    return process.pid();
  }

  int port() {
    return port;
  }

  Path dataDir() {
    return dataDir;
  }

  Path stdoutFile() {
    return stdoutFile;
  }

  Path stderrFile() {
    return stderrFile;
  }

  /** The broker's own log file (INFO and above). */
  Path serverLogFile() {
    return dataDir.resolve("logs").resolve("tributary.log");
  }

  /** The tails of stdout, stderr and the broker log, for failure messages. */
  String diagnostics() {
    return "--- " + name + " (pid " + process.pid() + (process.isAlive() ? ", running" : ", exited "
        + process.exitValue()) + ")\n"
        + JavaProcesses.tail(stdoutFile, 20) + JavaProcesses.tail(stderrFile, 40)
        + JavaProcesses.tail(serverLogFile(), 40);
  }

  private boolean awaitExit(Duration timeout) {
    try {
      boolean exited = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (exited) {
        pump.join(TimeUnit.SECONDS.toMillis(10));
      }
      return exited;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      return false;
    }
  }

  /** Copies the child's stdout to its file line by line, completing {@link #ready} at the ready line. */
  private void pumpStdout() {
    try (InputStream in = new BufferedInputStream(process.getInputStream());
        OutputStream out = Files.newOutputStream(stdoutFile)) {
      byte[] line = new byte[8192];
      int len = 0;
      int b;
      while ((b = in.read()) >= 0) {
        out.write(b);
        if (b == '\n') {
          out.flush();
          String text = new String(line, 0, len, StandardCharsets.UTF_8);
          if (text.startsWith(READY_PREFIX)) {
            ready.complete(text);
          }
          len = 0;
        } else if (len < line.length) {
          line[len++] = (byte) b;
        }
      }
    } catch (IOException e) {
      ready.completeExceptionally(e);
    }
  }

  private static java.io.File nullDevice() {
    return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
  }

  /**
   * A port nobody listens on right now (bound to 127.0.0.1, then released), and below 65436 with the port 100 above
   * it free as well: {@code server --port P} puts its cluster port at P + 100.
   */
  static int freePort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
        socket.setReuseAddress(true);
        int port = socket.getLocalPort();
        if (port + 100 <= 65535 && isFree(port + 100)) {
          return port;
        }
      } catch (IOException e) {
        throw new UncheckedIOException("no free port", e);
      }
    }
    throw new IllegalStateException("no free port P with P + 100 free too");
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
