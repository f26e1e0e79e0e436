package io.tributary.cli;

import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import io.tributary.protocol.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tributary produce}: one record per line of stdin, as Kafka's {@code kafka-console-producer}. Values (and
 * keys with {@code parse.key}) are the line's bytes as they are; a {@code \r} before the {@code \n} is dropped as
 * Kafka does. At the end of the input the producer flushes and the command waits for every record's answer.
 *
 * <p>Failures, as Kafka's console producer (which logs a failed record and goes on):
 *
 * <ul>
 *   <li>A record that fails on its own ({@link #PER_RECORD_ERRORS}: too large for {@code max.request.size} or the
 *       topic's {@code max.message.bytes}, an invalid record or timestamp, or a batch that was in flight behind
 *       such a record and was refused for its sequence number) is reported on stderr as {@code Line N failed: CODE:
 *       why}, and the following lines are still sent, in order. The records batched together with a record the
 *       broker refuses as too large do not fail with it: the producer splits a refused batch and resends its records
 *       (as Kafka's), so only the record too large on its own fails.
 *   <li>Any other error means the later records would fail too: the delivery timeout ran out (the cluster or the
 *       partition's leader is gone, not enough in-sync replicas), the producer's state was refused, the topic went
 *       away, {@code send} blocked longer than {@code max.block.ms}. The command reports it the same way, stops
 *       reading its input (the lines after it are not sent), and still waits for the records already sent: the
 *       lines read before the error came (up to {@code buffer.memory} of them, which for short lines can be the
 *       whole input) are each still delivered or failed. Further failures with that same error are counted in one line instead of one line each.
 *   <li>A line without the key separator (with {@code parse.key=true}) stops the command the same way, unless
 *       {@code ignore.error=true} skips it.
 * </ul>
 *
 * <p>Exit 0 when every line was sent and acknowledged; else 1, with a last line {@code Error: F of N records failed
 * (lines 5-6, 9, ...)} (the failed lines as ranges: the first 8, then how many more), plus which lines were not sent
 * when the command stopped early, and, if a record timed out, that it may have been stored all the same (Kafka's
 * producer semantics: a timeout does not say whether the broker appended the record). Records that were acknowledged stay
 * acknowledged whatever fails later, and the records of a partition keep their line order (the producer never
 * reorders a partition's batches, also when a batch between them fails).
 */
@Command(
    name = "produce",
    description = {
      "Send lines from stdin to a topic, one record per line (as Kafka's kafka-console-producer).",
      "Properties: parse.key=true|false (default false), key.separator=S (default \\t),"
          + " ignore.error=true|false (skip lines without the separator instead of failing).",
      "A record that fails on its own (e.g. MESSAGE_TOO_LARGE) is reported on stderr with its line number and the"
          + " next lines are still sent (a batch the broker refuses as too large is split and resent, so only the"
          + " record too large on its own fails); an error that would fail every later record too (delivery timeout,"
          + " e.g. the cluster is gone) stops reading the input; the lines read before it came are in the producer's"
          + " buffer already and are still sent (or fail) each on its own. Exit 1 if any record failed or a line was"
          + " not sent."
    })
final class ProduceCommand implements Callable<Integer> {
  private static final Set<String> PROPERTIES = Set.of("parse.key", "key.separator", "ignore.error");

  /**
   * Errors that concern one record (or its batch) only: the command reports the record and goes on with the next
   * lines. OUT_OF_ORDER_SEQUENCE_NUMBER and UNKNOWN_PRODUCER_ID are what the idempotent producer's batches that were
   * in flight behind a failed batch of the same partition get from the leader; the producer resends them with a new
   * epoch (see the client's {@code RecordAccumulator}), so they reach the command only when those retries run out.
   */
  static final Set<ErrorCode> PER_RECORD_ERRORS =
      EnumSet.of(
          ErrorCode.MESSAGE_TOO_LARGE,
          ErrorCode.INVALID_RECORD,
          ErrorCode.INVALID_TIMESTAMP,
          ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          ErrorCode.UNKNOWN_PRODUCER_ID);

  /** How many failed line numbers the summary line lists. */

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
    Outcome outcome = new Outcome(err);
    long sent = 0;
    long notSentFrom = 0; // the first line not sent because the command stopped, 0 if none
    String stopReason = null;
    try (TributaryClient client = bootstrap.connect(cl, config)) {
      BootstrapOption.partitionCount(client, topic); // a missing topic fails at once, clearly
      Producer<byte[], byte[]> producer = client.producer(config, Serializer.byteArray(), Serializer.byteArray());
      LineReader reader = new LineReader(in, true);
      long lineNumber = 0;
      for (byte[] line = reader.readLine(); line != null; line = reader.readLine()) {
        lineNumber++;
        if (outcome.stopped()) {
          notSentFrom = lineNumber;
          break;
        }
        byte[] key = null;
        byte[] value = line;
        if (parseKey) {
          int at = LineReader.indexOf(line, separator);
          if (at < 0) {
            if (ignoreError) {
              err.println("Skipped line " + lineNumber + ": no key separator");
              continue;
            }
            stopReason = "No key separator found on line number " + lineNumber + ": '"
                + new String(line, StandardCharsets.UTF_8) + "'";
            notSentFrom = lineNumber;
            break;
          }
          key = Arrays.copyOfRange(line, 0, at);
          value = Arrays.copyOfRange(line, at + separator.length, line.length);
        }
        sent++;
        long number = lineNumber;
        try {
          producer.send(new ProducerRecord<>(topic, key, value)).whenComplete((md, ex) -> {
            if (ex != null) {
              outcome.failed(number, Main.unwrap(ex));
            }
          });
        } catch (TributaryException e) {
          outcome.failed(number, e); // refused at once: buffer.memory full for max.block.ms, producer closed
        }
      }
      producer.flush();
      producer.close();
    }
    String summary = outcome.summary(sent, notSentFrom, stopReason);
    if (summary != null) {
      throw new CliException(summary);
    }
    return Main.EXIT_OK;
  }

  /**
   * What became of the records sent: failures are reported as they come (from the producer's sender thread, or the
   * reading thread for a record refused at once). Thread-safe.
   */
  static final class Outcome {
    private final PrintWriter err;
    private long failed;
    /** Every failed line, as ranges of consecutive lines. */
    private final LineRanges failedLines = new LineRanges();
    /** The first failure that is not about one record; null while there is none. */
    private Throwable fatal;
    private ErrorCode fatalCode;
    private long fatalLine;
    /** Failures with the fatal error's code after it, counted but not printed one by one. */
    private long repeats;
    /**
     * The lines of those repeats, so that the summary names exactly the lines that failed: the lines between them
     * may have been stored (their requests were answered before the error, or went to another partition's leader).
     */
    private final LineRanges repeatLines = new LineRanges();
    /** Whether a record failed with REQUEST_TIMED_OUT: it may have been stored all the same. */
    private boolean timedOut;

    Outcome(PrintWriter err) {
      this.err = err;
    }

    synchronized void failed(long line, Throwable error) {
      failed++;
      failedLines.add(line);
      ErrorCode code = error instanceof TributaryException te ? te.errorCode() : null;
      timedOut |= code == ErrorCode.REQUEST_TIMED_OUT;
      if (fatal != null && code == fatalCode) {
        repeats++;
        repeatLines.add(line);
        return;
      }
      err.println("Line " + line + " failed: " + Main.message(error));
      err.flush();
      if (fatal == null && (code == null || !PER_RECORD_ERRORS.contains(code))) {
        fatal = error;
        fatalCode = code;
        fatalLine = line;
      }
    }

    /** Whether an error that is not about one record happened: the command sends no more lines. */
    synchronized boolean stopped() {
      return fatal != null;
    }

    /** The last line of a run that did not fully succeed, without "Error: "; null if every record went through. */
    synchronized String summary(long sent, long notSentFrom, String stopReason) {
      if (repeats > 0) {
        err.println("... and " + repeats + " more record" + (repeats == 1 ? "" : "s") + " ("
            + repeatLines.describe(repeats) + ") failed with " + fatalCode);
        err.flush();
      }
      List<String> parts = new ArrayList<>();
      if (stopReason != null) {
        parts.add(stopReason + "; lines " + notSentFrom + " and later were not sent");
      }
      if (failed > 0) {
        parts.add(failed + " of " + sent + " records failed (" + failedLines.describe(failed) + ")");
      }
      if (stopReason == null && notSentFrom > 0) {
        String what = fatalCode != null ? fatalCode.name() : Main.message(fatal);
        parts.add("lines " + notSentFrom + " and later were not sent: " + what + " (line " + fatalLine
            + ") is not a problem of one record");
      }
      if (timedOut) {
        parts.add("a record that timed out may have been stored all the same (as with Kafka's producer): check"
            + " before sending it again");
      }
      return parts.isEmpty() ? null : String.join("; ", parts);
    }
  }

  /**
   * Line numbers as ranges of consecutive lines (first line -> last line), for messages that name exactly the lines
   * that failed. Keeps at most {@link #RANGES_KEPT} ranges; lines that would start more are counted, not named. Not
   * thread-safe (its owner, {@link Outcome}, synchronizes).
   */
  static final class LineRanges {
    /** Most ranges kept; more are counted but not named. */
    static final int RANGES_KEPT = 10_000;

    /** Ranges named by {@link #describe}; the rest are counted. */
    static final int RANGES_LISTED = 8;

    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    private boolean incomplete;

    /** Adds {@code line}, merging it with the ranges it touches. */
    void add(long line) {
      Map.Entry<Long, Long> below = ranges.floorEntry(line);
      if (below != null && below.getValue() >= line) {
        return; // already in a range
      }
      long start = line;
      long end = line;
      if (below != null && below.getValue() == line - 1) {
        start = below.getKey();
      }
      Long aboveEnd = ranges.get(line + 1);
      if (aboveEnd != null) {
        ranges.remove(line + 1);
        end = aboveEnd;
      }
      if (start == line && end == line && ranges.size() >= RANGES_KEPT) {
        incomplete = true; // a new range beyond the cap: counted, not named
        return;
      }
      ranges.put(start, end);
    }

    /**
     * "line 5" ({@code count} 1), "lines 5-6, 9, 12-40", or the first {@link #RANGES_LISTED} ranges, then how many
     * ranges there are and where the last ends.
     *
     * @param count how many lines were added (1 makes "line", else "lines")
     */
    String describe(long count) {
      List<String> listed = new ArrayList<>();
      for (Map.Entry<Long, Long> r : ranges.entrySet()) {
        if (listed.size() == RANGES_LISTED) {
          break;
        }
        listed.add(r.getKey().equals(r.getValue()) ? Long.toString(r.getKey()) : r.getKey() + "-" + r.getValue());
      }
      String text = (count == 1 ? "line " : "lines ") + String.join(", ", listed);
      if (ranges.size() > RANGES_LISTED || incomplete) {
        text += ", ... (" + (incomplete ? "more than " + ranges.size() : ranges.size())
            + " ranges, the last ending at line " + ranges.lastEntry().getValue() + ")";
      }
      return text;
    }
  }
}
