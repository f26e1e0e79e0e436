package io.tributary.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * {@code tributary perf produce|consume|e2e-latency}: Kafka's producer and consumer performance tools and its
 * end-to-end latency tool, same figures and same output lines.
 */
@Command(
    name = "perf",
    description = "Benchmarks that print what Kafka's kafka-producer-perf-test, kafka-consumer-perf-test and"
        + " kafka-e2e-latency print.",
    subcommands = {PerfProduceCommand.class, PerfConsumeCommand.class, PerfEndToEndLatencyCommand.class})
final class PerfCommand implements Runnable {
  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: produce, consume or e2e-latency");
  }
}
