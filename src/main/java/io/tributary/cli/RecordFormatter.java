package io.tributary.cli;

import io.tributary.client.ConsumerRecord;
import io.tributary.record.Header;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * Prints consumed records as Kafka's {@code DefaultMessageFormatter}: optional {@code CreateTime:<ms>},
 * {@code Partition:<p>}, {@code Offset:<o>}, headers and key, each followed by the key separator, then the value and
 * the line separator. Keys and values are written as their raw bytes; a null one prints as {@code null.literal}.
 * Not thread-safe.
 */
final class RecordFormatter {
  /** The {@code --property} keys the console consumer accepts. */
  static final Set<String> PROPERTIES = Set.of(
      "print.timestamp", "print.partition", "print.offset", "print.headers", "print.key", "print.value",
      "key.separator", "line.separator", "headers.separator", "null.literal");

  private final boolean printTimestamp;
  private final boolean printPartition;
  private final boolean printOffset;
  private final boolean printHeaders;
  private final boolean printKey;
  private final boolean printValue;
  private final byte[] keySeparator;
  private final byte[] lineSeparator;
  private final byte[] headersSeparator;
  private final byte[] nullLiteral;

  RecordFormatter(CliProperties p) {
    this.printTimestamp = p.flag("print.timestamp", false);
    this.printPartition = p.flag("print.partition", false);
    this.printOffset = p.flag("print.offset", false);
    this.printHeaders = p.flag("print.headers", false);
    this.printKey = p.flag("print.key", false);
    this.printValue = p.flag("print.value", true);
    this.keySeparator = bytes(p.text("key.separator", "\t"));
    this.lineSeparator = bytes(p.text("line.separator", "\n"));
    this.headersSeparator = bytes(p.text("headers.separator", ","));
    this.nullLiteral = bytes(p.text("null.literal", "null"));
  }

  /** Writes one record. */
  void write(ConsumerRecord<byte[], byte[]> r, OutputStream out) throws IOException {
    if (printTimestamp) {
      out.write(bytes("CreateTime:" + r.timestamp()));
      separator(out, printPartition || printOffset || printHeaders || printKey || printValue);
    }
    if (printPartition) {
      out.write(bytes("Partition:" + r.partition()));
      separator(out, printOffset || printHeaders || printKey || printValue);
    }
    if (printOffset) {
      out.write(bytes("Offset:" + r.offset()));
      separator(out, printHeaders || printKey || printValue);
    }
    if (printHeaders) {
      if (r.headers() == null || r.headers().isEmpty()) {
        out.write(bytes("NO_HEADERS"));
      } else {
        boolean first = true;
        for (Header h : r.headers()) {
          if (!first) {
            out.write(headersSeparator);
          }
          first = false;
          out.write(bytes(h.key() + ":"));
          out.write(h.value() == null ? nullLiteral : h.value());
        }
      }
      separator(out, printKey || printValue);
    }
    if (printKey) {
      out.write(r.key() == null ? nullLiteral : r.key());
      separator(out, printValue);
    }
    if (printValue) {
      out.write(r.value() == null ? nullLiteral : r.value());
    }
    out.write(lineSeparator);
  }

  private void separator(OutputStream out, boolean more) throws IOException {
    if (more) {
      out.write(keySeparator);
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
