package io.tributary.cli;

import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TributaryClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary produce}: one record per line of stdin, as Kafka's {@code kafka-console-producer}. Values (and
 * keys with {@code parse.key}) are the line's bytes as they are; a {@code \r} before the {@code \n} is dropped as
 * Kafka does. At the end of the input the producer flushes; the command exits 0 when every record was acknowledged,
 * else 1 with the first error on stderr (it stops reading at the first failed send).
 */
@Command(
    name = "produce",
    description = {
      "Send lines from stdin to a topic, one record per line (as Kafka's kafka-console-producer).",
      "Properties: parse.key=true|false (default false), key.separator=S (default \\t),"
          + " ignore.error=true|false (skip lines without the separator instead of failing)."
    })
final class ProduceCommand implements Callable<Integer> {
  private static final Set<String> PROPERTIES = Set.of("parse.key", "key.separator", "ignore.error");

  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to send to.")
  String topic;

  @Option(
      names = "--acks",
      paramLabel = "all|-1|1|0",
      description = "Acknowledgements to wait for (default all).")
  String acks;

  @Option(
      names = "--property",
      paramLabel = "KEY=VALUE",
      description = "Line parsing: parse.key, key.separator, ignore.error (repeatable).")
  Map<String, String> properties = new LinkedHashMap<>();

  @Option(
      names = "--producer-property",
      paramLabel = "KEY=VALUE",
      description = "A producer setting, Kafka's names (linger.ms, batch.size, ...; repeatable).")
  Map<String, String> producerProperties = new LinkedHashMap<>();

  @Spec CommandLine.Model.CommandSpec spec;

  /** Where lines come from; stdin unless a test sets it. */
  InputStream in = System.in;

  @Override
  public Integer call() throws IOException {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    CliProperties props = new CliProperties(properties, PROPERTIES, cl);
    boolean parseKey = props.flag("parse.key", false);
    byte[] separator = props.text("key.separator", "\t").getBytes(StandardCharsets.UTF_8);
    boolean ignoreError = props.flag("ignore.error", false);
    if (parseKey && separator.length == 0) {
      throw new CommandLine.ParameterException(cl, "--property key.separator must not be empty");
    }
    Map<String, Object> config = new HashMap<>(producerProperties);
    if (acks != null) {
      if (!Set.of("all", "-1", "1", "0").contains(acks)) {
        throw new CommandLine.ParameterException(cl, "--acks must be all, -1, 1 or 0, was '" + acks + "'");
      }
      config.put("acks", acks);
    }
    config.putIfAbsent("acks", "all");
    ClientSettingsCheck.check(cl, "--producer-property", ClientSettingsCheck.Kind.PRODUCER, config);

    PrintWriter err = cl.getErr();
    AtomicLong failed = new AtomicLong();
    AtomicReference<Throwable> firstError = new AtomicReference<>();
    long sent = 0;
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      BootstrapOption.partitionCount(client, topic); // a missing topic fails at once, clearly
      Producer<byte[], byte[]> producer = client.producer(config, Serializer.byteArray(), Serializer.byteArray());
      LineReader reader = new LineReader(in, true);
      long lineNumber = 0;
      for (byte[] line = reader.readLine(); line != null && firstError.get() == null; line = reader.readLine()) {
        lineNumber++;
        byte[] key = null;
        byte[] value = line;
        if (parseKey) {
          int at = LineReader.indexOf(line, separator);
          if (at < 0) {
            if (ignoreError) {
              err.println("Skipped line " + lineNumber + ": no key separator");
              continue;
            }
            throw new CliException("No key separator found on line number " + lineNumber + ": '"
                + new String(line, StandardCharsets.UTF_8) + "'");
          }
          key = Arrays.copyOfRange(line, 0, at);
          value = Arrays.copyOfRange(line, at + separator.length, line.length);
        }
        sent++;
        producer.send(new ProducerRecord<>(topic, key, value)).whenComplete((md, ex) -> {
          if (ex != null) {
            failed.incrementAndGet();
            firstError.compareAndSet(null, Main.unwrap(ex));
          }
        });
      }
      producer.flush();
      producer.close();
    }
    if (firstError.get() != null) {
      throw new CliException(failed.get() + " of " + sent + " records sent were not acknowledged; first error: "
          + Main.message(firstError.get()), firstError.get());
    }
    return Main.EXIT_OK;
  }
}
