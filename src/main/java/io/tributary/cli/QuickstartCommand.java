package io.tributary.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tributary quickstart}: the main job end to end on real data, see {@link Quickstart}. */
@Command(
    name = "quickstart",
    description = {
      "Stream a real file through an embedded broker and check that it all came back (the main job, end to end).",
      "",
      "Starts a single-node broker on a free port, creates a 3-partition topic, sends every line as one record"
          + " keyed by its line number (acks=all), reads everything back from the beginning of all partitions and"
          + " checks that every line arrived exactly once, in order per partition and byte-identical. Exits 0 on"
          + " success, 1 if anything is missing, duplicated, out of order or altered.",
      "Without --file it streams the King James Bible (31,102 verses, 4.2 MiB) that ships with Tributary."
    })
final class QuickstartCommand implements Callable<Integer> {
  @Option(
      names = "--file",
      paramLabel = "FILE",
      description = "A text file to stream, one record per line (at most 256 MB; default: the bundled data set).")
  Path file;

  @Option(
      names = "--data-dir",
      paramLabel = "DIR",
      description = "The broker's data directory (default: a fresh temporary directory, deleted after success).")
  Path dataDir;

  @Option(names = "--keep-data", description = "Keep the temporary data directory after success.")
  boolean keepData;

  @Spec CommandLine.Model.CommandSpec spec;

  /** Extra broker config; tests set it. */
  Map<String, Object> brokerOverrides = Map.of();

  @Override
  public Integer call() throws IOException {
    QuickstartInput input = file == null ? QuickstartInput.bundled() : QuickstartInput.file(file);
    if (input.lines() == 0) {
      throw new CliException("The input " + input.name() + " has no lines");
    }
    PrintWriter out = spec.commandLine().getOut();
    Quickstart.Settings settings = new Quickstart.Settings(
        input, dataDir, keepData, brokerOverrides, Duration.ofSeconds(30), Duration.ofSeconds(2));
    Quickstart.Result result = new Quickstart(settings, out).run();
    if (result.report().ok()) {
      Quickstart.summary(result, input).forEach(out::println);
      out.flush();
      return Main.EXIT_OK;
    }
    PrintWriter err = spec.commandLine().getErr();
    Quickstart.summary(result, input).forEach(err::println);
    err.flush();
    throw new CliException("quickstart verification failed: " + result.report().problems());
  }
}
