package io.tributary.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Child JVMs running {@code io.tributary.cli.Main} with the test JVM's own {@code java} binary and classpath (under
 * failsafe possibly a manifest-only jar, which works as {@code -cp} too), and where their logs go.
 */
final class JavaProcesses {
  static final String MAIN_CLASS = "io.tributary.cli.Main";

  private JavaProcesses() {}

  /**
   * {@code java -Xmx512m -cp <test classpath> io.tributary.cli.Main args...}. The CLI's own {@code logback.xml} is
   * selected explicitly, since the test classpath also holds {@code logback-test.xml}, which would win otherwise.
   */
  static List<String> javaCommand(String... args) {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> command = new ArrayList<>();
    command.add(java);
    command.add("-Xmx512m");
    command.add("-Dlogback.configurationFile=logback.xml");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(MAIN_CLASS);
    command.addAll(Arrays.asList(args));
    return command;
  }

  /**
   * {@code target/multi-jvm/<testClass>/<testMethod>}, emptied: where a test's data dirs and process logs go, kept
   * after the run for diagnosis.
   */
  static Path testDir(String testClass, String testMethod) {
    String basedir = System.getProperty("basedir", System.getProperty("user.dir"));
    Path dir = Path.of(basedir, "target", "multi-jvm", testClass, testMethod).toAbsolutePath();
    try {
      if (Files.exists(dir)) {
        try (var paths = Files.walk(dir)) {
          paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
        }
      }
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return dir;
  }

  /** The last {@code lines} lines of a file, headed by its path; a note if it does not exist. */
  static String tail(Path file, int lines) {
    if (!Files.exists(file)) {
      return "--- " + file + " (does not exist)\n";
    }
    try {
      List<String> all = Arrays.asList(
          new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1));
      List<String> last = all.subList(Math.max(0, all.size() - lines), all.size());
      return "--- " + file + " (last " + last.size() + " lines)\n" + String.join("\n", last) + "\n";
    } catch (IOException e) {
      return "--- " + file + " (unreadable: " + e + ")\n";
    }
  }

  /** A CLI command ({@code topics}, {@code produce}, {@code consume}) in its own JVM. */
  static final class CliProcess implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path stdoutFile;
    private final Path stderrFile;

    private CliProcess(String name, Process process, Path stdoutFile, Path stderrFile) {
      this.name = name;
      this.process = process;
      this.stdoutFile = stdoutFile;
      this.stderrFile = stderrFile;
    }

    /**
     * Starts {@code Main args...} with {@code stdin} as its standard input (written to {@code <dir>/<name>.stdin}
     * first; empty input if null), stdout and stderr to {@code <dir>/<name>.stdout|stderr}.
     */
    static CliProcess start(String name, Path dir, byte[] stdin, String... args) {
      try {
        Path stdinFile = dir.resolve(name + ".stdin");
        Files.write(stdinFile, stdin == null ? new byte[0] : stdin);
        Path out = dir.resolve(name + ".stdout");
        Path err = dir.resolve(name + ".stderr");
        Process p = new ProcessBuilder(javaCommand(args))
            .directory(dir.toFile())
            .redirectInput(stdinFile.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
        return new CliProcess(name, p, out, err);
      } catch (IOException e) {
        throw new UncheckedIOException("could not start " + name, e);
      }
    }

    /**
     * Waits for the process to exit, at most {@code timeout} (a bound against hangs; the process is killed and the
     * test fails if it is reached).
     */
    Result awaitExit(Duration timeout) {
      try {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
          process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
          throw new AssertionError(name + " did not exit within " + timeout.toSeconds() + " s (killed)\n"
              + tail(stdoutFile, 10) + tail(stderrFile, 40));
        }
        return new Result(
            name, process.exitValue(), Files.readAllBytes(stdoutFile),
            new String(Files.readAllBytes(stderrFile), StandardCharsets.UTF_8));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + name, e);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** Kills the process if it still runs. Idempotent. */
    @Override
    public void close() {
      if (process.isAlive()) {
        process.destroyForcibly();
        try {
          process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /** How a CLI process ended. */
  record Result(String name, int exitCode, byte[] stdout, String stderr) {
    String stdoutText() {
      return new String(stdout, StandardCharsets.UTF_8);
    }

    /** For assertion messages. */
    String describe() {
      String out = stdoutText();
      return name + " exited " + exitCode + "\n--- stdout (" + stdout.length + " bytes)\n"
          + (out.length() > 2000 ? out.substring(0, 2000) + "\n..." : out) + "\n--- stderr\n" + stderr;
    }
  }
}
