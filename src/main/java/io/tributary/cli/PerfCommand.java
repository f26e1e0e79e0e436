package io.tributary.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** {@code tributary perf produce|consume}: Kafka's producer and consumer performance tools, same figures. */
@Command(
    name = "perf",
    description = "Benchmarks that print what Kafka's kafka-producer-perf-test and kafka-consumer-perf-test print.",
    subcommands = {PerfProduceCommand.class, PerfConsumeCommand.class})
final class PerfCommand implements Runnable {
  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: produce or consume");
  }
}
