package io.tributary.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The input of the quickstart: a file's bytes split into lines at {@code \n} (the terminator is not part of a line;
 * a {@code \r} before it is kept, so a line is exactly the bytes between two {@code \n}). A last line without
 * terminator is a line; a trailing {@code \n} does not start another. Line numbers are 1-based, as in an editor.
 * Held in memory so the verifier can compare every consumed record with the original bytes. Immutable.
 */
final class QuickstartInput {
  /** The data set that ships in the jar (see {@code src/main/resources/quickstart/README.md}). */
  static final String BUNDLED_RESOURCE = "/quickstart/kjv.txt";

  /** Largest file the quickstart accepts: it keeps the file in memory to verify it. */
  static final long MAX_BYTES = 256L * 1024 * 1024;

  private final String name;
  private final byte[] data;
  private final int[] starts;
  private final int[] ends;
  private final long lineBytes;

  private QuickstartInput(String name, byte[] data) {
    this.name = name;
    this.data = data;
    int count = 0;
    for (byte b : data) {
      if (b == '\n') {
        count++;
      }
    }
    if (data.length > 0 && data[data.length - 1] != '\n') {
      count++;
    }
    starts = new int[count];
    ends = new int[count];
    int line = 0;
    int start = 0;
    long total = 0;
    for (int i = 0; i < data.length; i++) {
      if (data[i] == '\n') {
        starts[line] = start;
        ends[line] = i;
        total += i - start;
        line++;
        start = i + 1;
      }
    }
    if (line < count) {
      starts[line] = start;
      ends[line] = data.length;
      total += data.length - start;
    }
    lineBytes = total;
  }

  /** Lines of {@code data}, shown as {@code name}. */
  static QuickstartInput of(String name, byte[] data) {
    return new QuickstartInput(name, data);
  }

  /** The bundled data set. */
  static QuickstartInput bundled() {
    try (InputStream in = QuickstartInput.class.getResourceAsStream(BUNDLED_RESOURCE)) {
      if (in == null) {
        throw new CliException("The bundled quickstart data " + BUNDLED_RESOURCE + " is missing from the classpath");
      }
      return new QuickstartInput("kjv.txt (the King James Bible, bundled)", in.readAllBytes());
    } catch (IOException e) {
      throw new CliException("Cannot read the bundled quickstart data: " + e.getMessage(), e);
    }
  }

  /** The lines of a file. */
  static QuickstartInput file(Path file) {
    try {
      if (!Files.isRegularFile(file)) {
        throw new CliException("No such file: " + file);
      }
      long size = Files.size(file);
      if (size > MAX_BYTES) {
        throw new CliException("File " + file + " has " + size + " bytes; the quickstart holds its input in memory"
            + " to verify it and takes at most " + MAX_BYTES + " bytes");
      }
      return new QuickstartInput(file.toString(), Files.readAllBytes(file));
    } catch (IOException e) {
      throw new CliException("Cannot read " + file + ": " + CliException.readFailure(e), e);
    }
  }

  String name() {
    return name;
  }

  /** Number of lines. */
  int lines() {
    return starts.length;
  }

  /** Bytes of all lines, terminators excluded: the record value bytes the quickstart sends. */
  long lineBytes() {
    return lineBytes;
  }

  /** A copy of line {@code lineNumber} (1-based). */
  byte[] line(int lineNumber) {
    return Arrays.copyOfRange(data, starts[lineNumber - 1], ends[lineNumber - 1]);
  }

  /** Whether {@code value} has exactly the bytes of line {@code lineNumber} (1-based). */
  boolean lineEquals(int lineNumber, byte[] value) {
    return value != null
        && Arrays.equals(value, 0, value.length, data, starts[lineNumber - 1], ends[lineNumber - 1]);
  }
}
