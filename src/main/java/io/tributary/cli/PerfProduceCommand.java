package io.tributary.cli;

import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TributaryClient;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary perf produce}: Kafka's {@code ProducerPerformance}. Sends {@code --num-records} records of
 * {@code --record-size} bytes without key (the producer's sticky partitioning spreads them), optionally throttled to
 * {@code --throughput} records/s, and prints Kafka's window line every 5 s and its total line at the end. The payload
 * is Kafka's: {@code --record-size} random uppercase letters from a generator with the fixed seed 0, the same for every
 * record; or, with {@code --payload-file} instead (as Kafka's), the file's UTF-8 text split at {@code
 * --payload-delimiter} (default a newline), one of those payloads drawn at random (fixed seed) for each record. A
 * missing, unreadable or empty payload file is a usage error (exit 2), as both or neither of the two options are.
 * Latency is send → acknowledgement of each record, and the figures count acknowledged records only (all 0,
 * never NaN, when none was). When a record is not acknowledged (e.g. {@code --record-size} above the topic's
 * {@code max.message.bytes} or the producer's {@code max.request.size}), the total line is still printed, then one line
 * on stderr with how many records failed and the first error, and the exit code is 1. While records keep failing,
 * stderr gets a {@code WARN} line with the count so far at most every 5 s (none in the first 5 s), so that a run
 * whose broker is gone does not go silent.
 */
@Command(
    name = "produce",
    description = "Producer throughput and latency (as Kafka's kafka-producer-perf-test).")
final class PerfProduceCommand implements Callable<Integer> {
  /** How often a window line is printed, ms (Kafka's ProducerPerformance: 5000). */
  static final long REPORTING_INTERVAL_MS = 5000;

  @Mixin BootstrapOption bootstrap;

  @Option(names = "--topic", required = true, paramLabel = "TOPIC", description = "The topic to send to.")
  String topic;

  @Option(names = "--num-records", required = true, paramLabel = "N", description = "Records to send.")
  long numRecords;

  @Option(names = "--record-size", paramLabel = "BYTES",
      description = "Size of each record (Kafka's payload: random uppercase letters). Or --payload-file.")
  Integer recordSize;

  @Option(names = "--payload-file", paramLabel = "FILE",
      description = "Payloads from this UTF-8 text file, split at --payload-delimiter; each record gets one of them"
          + " at random (as Kafka's). Instead of --record-size.")
  java.nio.file.Path payloadFile;

  @Option(names = "--payload-delimiter", paramLabel = "DELIMITER", defaultValue = "\\n",
      description = "What separates the payloads of --payload-file (\\n, \\t and \\r escapes; default: a newline).")
  String payloadDelimiter;

  @Option(
      names = "--throughput",
      required = true,
      paramLabel = "RECORDS_PER_SEC",
      description = "Throttle to about this many records/s; -1 for no limit.")
  long throughput;

  @Option(
      names = {"--producer-props", "--command-property"},
      arity = "1..*",
      paramLabel = "KEY=VALUE",
      description = "Producer settings, Kafka's names, e.g. acks=1 linger.ms=5 batch.size=65536"
          + " (--command-property is Kafka 4's name).")
  Map<String, String> producerProps = new LinkedHashMap<>();

  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine cl = spec.commandLine();
    bootstrap.validate(cl);
    if (numRecords < 1) {
      throw new CommandLine.ParameterException(cl, "--num-records must be at least 1, was " + numRecords);
    }
    if ((recordSize == null) == (payloadFile == null)) {
      throw new CommandLine.ParameterException(cl, "Give exactly one of --record-size and --payload-file");
    }
    if (recordSize != null && recordSize < 1) {
      throw new CommandLine.ParameterException(cl, "--record-size must be at least 1, was " + recordSize);
    }
    if (throughput == 0 || throughput < -1) {
      throw new CommandLine.ParameterException(cl, "--throughput must be positive or -1, was " + throughput);
    }
    PrintWriter out = cl.getOut();
    Map<String, Object> config = new HashMap<>(producerProps);
    ClientSettingsCheck.check(cl, "--producer-props", ClientSettingsCheck.Kind.PRODUCER, config);
    byte[][] payloads = payloadFile == null ? new byte[][] {payload(recordSize)} : payloads(cl);
    SplittableRandom pick = new SplittableRandom(0);

    AtomicLong failed = new AtomicLong();
    PrintWriter err = cl.getErr();
    // stderr gets a line at most every REPORTING_INTERVAL_MS while records keep failing (the first one at the
    // earliest one interval after the start), so that a run whose broker is gone does not go silent
    AtomicLong nextFailureReportMs = new AtomicLong(System.currentTimeMillis() + REPORTING_INTERVAL_MS);
    AtomicReference<Throwable> firstError = new AtomicReference<>();
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      BootstrapOption.partitionCount(client, topic); // a missing topic fails at once, before the clock starts
      Producer<byte[], byte[]> producer = client.producer(config, Serializer.byteArray(), Serializer.byteArray());
      ProducerPerfStats stats = new ProducerPerfStats(numRecords, REPORTING_INTERVAL_MS, System::currentTimeMillis,
          line -> {
            out.println(line);
            out.flush();
          });
      Throttler throttler = new Throttler(throughput, stats.now());
      for (long i = 0; i < numRecords; i++) {
        long sendStartMs = stats.now();
        byte[] payload = payloads.length == 1 ? payloads[0] : payloads[pick.nextInt(payloads.length)];
        producer.send(new ProducerRecord<byte[], byte[]>(topic, payload), (md, ex) -> {
          long now = stats.now();
          if (ex == null) {
            stats.record((int) (now - sendStartMs), payload.length, now);
          } else {
            long n = failed.incrementAndGet();
            firstError.compareAndSet(null, Main.unwrap(ex)); // reported once, after the total line
            long due = nextFailureReportMs.get();
            if (now >= due && nextFailureReportMs.compareAndSet(due, now + REPORTING_INTERVAL_MS)) {
              err.println("WARN " + n + " records not acknowledged so far; latest error: "
                  + Main.message(Main.unwrap(ex)));
              err.flush();
            }
          }
        });
        if (throttler.shouldThrottle(i, sendStartMs)) {
          throttler.throttle();
        }
      }
      producer.flush();
      out.println(stats.total());
      out.flush();
      producer.close();
    }
    if (failed.get() > 0) {
      throw new CliException(failed.get() + " of " + numRecords + " records were not acknowledged; first error: "
          + Main.message(firstError.get()));
    }
    return Main.EXIT_OK;
  }

  /**
   * The payloads of {@code --payload-file}: its text split at the delimiter, empty pieces dropped (as Kafka's).
   *
   * @throws CommandLine.ParameterException if the file cannot be read or holds no payload
   */
  private byte[][] payloads(CommandLine cl) {
    String text;
    try {
      text = java.nio.file.Files.readString(payloadFile, java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      java.io.IOException cause = e instanceof java.io.UncheckedIOException u ? u.getCause() : (java.io.IOException) e;
      String why = cause instanceof java.nio.charset.CharacterCodingException
          ? "it is not UTF-8 text (as Kafka's, it must be)" : CliException.readFailure(cause);
      throw new CommandLine.ParameterException(cl, "Cannot read --payload-file " + payloadFile + ": " + why);
    }
    return splitPayloads(cl, text, unescape(payloadDelimiter), payloadFile.toString());
  }

  /** {@code text} split at {@code delimiter}, empty pieces dropped, each as UTF-8 bytes. */
  static byte[][] splitPayloads(CommandLine cl, String text, String delimiter, String source) {
    if (delimiter.isEmpty()) {
      throw new CommandLine.ParameterException(cl, "--payload-delimiter must not be empty");
    }
    java.util.List<byte[]> out = new java.util.ArrayList<>();
    int from = 0;
    while (from <= text.length()) {
      int at = text.indexOf(delimiter, from);
      int end = at < 0 ? text.length() : at;
      if (end > from) {
        out.add(text.substring(from, end).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      if (at < 0) {
        break;
      }
      from = at + delimiter.length();
    }
    if (out.isEmpty()) {
      throw new CommandLine.ParameterException(cl, "--payload-file " + source + " holds no payload");
    }
    return out.toArray(new byte[0][]);
  }

  /** The {@code \n}, {@code \t}, {@code \r} and {@code \\} escapes of {@code --payload-delimiter}. */
  static String unescape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(++i);
        switch (n) {
          case 'n' -> b.append('\n');
          case 't' -> b.append('\t');
          case 'r' -> b.append('\r');
          case '\\' -> b.append('\\');
          default -> b.append('\\').append(n);
        }
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  /**
   * Kafka's payload: {@code size} uppercase letters from {@code new SplittableRandom(0)}.
   *
   * @throws CliException if the tool's heap cannot hold it (a huge {@code --record-size}; exit 1, one line)
   */
  static byte[] payload(int size) {
    SplittableRandom random = new SplittableRandom(0);
    byte[] payload = allocate(size);
    for (int i = 0; i < size; i++) {
      payload[i] = (byte) (random.nextInt(26) + 65);
    }
    return payload;
  }

  /**
   * A record of {@code size} bytes, or a one-line error instead of an {@link OutOfMemoryError} stack trace when the
   * tool's heap cannot hold it (such a record could not be sent anyway: it is far above any max.request.size).
   *
   * @throws CliException if the allocation fails
   */
  static byte[] allocate(int size) {
    try {
      return new byte[size];
    } catch (OutOfMemoryError e) {
      throw new CliException("--record-size " + size + " bytes does not fit in this tool's heap ("
          + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MB); a record that large could not be sent anyway");
    }
  }

  /**
   * Kafka's {@code ThroughputThrottler}: when the average rate since the start exceeds the target, sleep one
   * inter-record interval (accumulated until it is worth sleeping). One difference: within the first millisecond
   * Kafka's never throttles (its elapsed time is 0), so a short run whose sends all fit in that millisecond was not
   * paced at all; here the first millisecond counts as one (at 2 records/s, the second record waits). Not
   * thread-safe.
   */
  static final class Throttler {
    private static final long MIN_SLEEP_NS = 2_000_000;
    private final long targetPerSec;
    private final long startMs;
    private final long sleepTimeNs;
    private long sleepDeficitNs;

    Throttler(long targetPerSec, long startMs) {
      this.targetPerSec = targetPerSec;
      this.startMs = startMs;
      this.sleepTimeNs = targetPerSec > 0 ? 1_000_000_000L / targetPerSec : Long.MAX_VALUE;
    }

    boolean shouldThrottle(long amountSoFar, long sendStartMs) {
      if (targetPerSec < 0) {
        return false;
      }
      float elapsedSec = Math.max(1, sendStartMs - startMs) / 1000.f; // the first millisecond counts as one
      return (amountSoFar / elapsedSec) > targetPerSec;
    }

    void throttle() {
      sleepDeficitNs += sleepTimeNs;
      if (sleepDeficitNs >= MIN_SLEEP_NS) {
        long deadline = System.nanoTime() + sleepDeficitNs;
        for (long left = sleepDeficitNs; left > 0; left = deadline - System.nanoTime()) {
          LockSupport.parkNanos(left);
        }
        sleepDeficitNs = 0;
      }
    }
  }
}
