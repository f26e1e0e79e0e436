package io.tributary.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine;

/**
 * A command failed for a reason the user can act on; the CLI prints {@code Error: <message>} on stderr and exits with
 * {@link Main#EXIT_FAILURE}.
 */
public final class CliException extends RuntimeException {
  public CliException(String message) {
    super(message);
  }

  public CliException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * Checks that {@code file}, given with {@code option}, is a readable regular file, before anything is started.
   *
   * @throws CommandLine.ParameterException (a usage error, exit 2) "Cannot read OPTION FILE: WHY", with WHY {@code
   *     no such file}, {@code it is a directory}, {@code it is not a regular file} (a device, a FIFO) or {@code
   *     permission denied}
   */
  static void requireReadableFile(CommandLine commandLine, String option, Path file) {
    String why = !Files.exists(file) ? "no such file"
        : Files.isDirectory(file) ? "it is a directory"
        : !Files.isRegularFile(file) ? "it is not a regular file"
        : !Files.isReadable(file) ? "permission denied" : null;
    if (why != null) {
      throw new CommandLine.ParameterException(commandLine, "Cannot read " + option + " " + file + ": " + why);
    }
  }

  /**
   * Why a file could not be read, in words: {@code no such file}, {@code permission denied}, {@code it is a
   * directory}, {@code it is not UTF-8 text}; otherwise the exception's message (the JDK's file exceptions carry only
   * the path, which the caller's message already names).
   */
  static String readFailure(java.io.IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    if (e instanceof java.nio.charset.CharacterCodingException) {
      return "it is not UTF-8 text";
    }
    if ("Is a directory".equals(e.getMessage())) {
      return "it is a directory";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }
}
