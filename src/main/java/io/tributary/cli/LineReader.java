package io.tributary.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Splits a byte stream into lines without decoding it, so records keep the exact bytes of the input (any encoding,
 * even invalid UTF-8). A line ends at {@code \n}; the terminator is not part of the line. With
 * {@code stripCarriageReturn}, one {@code \r} before the {@code \n} is dropped too (as Java's
 * {@code BufferedReader.readLine}, which Kafka's console producer uses). A last line without a terminator is still a
 * line; an empty input has no lines. Not thread-safe.
 */
final class LineReader {
  private final InputStream in;
  private final boolean stripCarriageReturn;
  private final byte[] buf = new byte[64 * 1024];
  private int pos;
  private int limit;
  private boolean eof;

  LineReader(InputStream in, boolean stripCarriageReturn) {
    this.in = in;
    this.stripCarriageReturn = stripCarriageReturn;
  }

  /** The next line, or {@code null} at the end of the input. */
  byte[] readLine() throws IOException {
    byte[] line = new byte[128];
    int len = 0;
    boolean any = false;
    while (true) {
      if (pos == limit) {
        if (eof || !fill()) {
          return any ? finish(line, len) : null;
        }
      }
      any = true;
      int start = pos;
      while (pos < limit && buf[pos] != '\n') {
        pos++;
      }
      int n = pos - start;
      if (len + n > line.length) {
        line = Arrays.copyOf(line, Math.max(line.length * 2, len + n));
      }
      System.arraycopy(buf, start, line, len, n);
      len += n;
      if (pos < limit) {
        pos++; // the '\n'
        return finish(line, len);
      }
    }
  }

  private byte[] finish(byte[] line, int len) {
    if (stripCarriageReturn && len > 0 && line[len - 1] == '\r') {
      len--;
    }
    return Arrays.copyOf(line, len);
  }

  private boolean fill() throws IOException {
    int n = in.read(buf);
    if (n < 0) {
      eof = true;
      return false;
    }
    pos = 0;
    limit = n;
    return true;
  }

  /** The index of the first occurrence of {@code separator} in {@code line}, or -1. */
  static int indexOf(byte[] line, byte[] separator) {
    if (separator.length == 0) {
      return -1;
    }
    outer:
    for (int i = 0; i <= line.length - separator.length; i++) {
      for (int j = 0; j < separator.length; j++) {
        if (line[i + j] != separator[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
