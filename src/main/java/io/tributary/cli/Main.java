package io.tributary.cli;

import io.tributary.client.TributaryException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;

/**
 * The {@code tributary} command line: {@code server}, {@code cluster}, {@code topics}, {@code groups}, {@code produce},
 * {@code consume}, {@code perf produce|consume} and {@code quickstart}, with Kafka's flag names.
 *
 * <p>Exit codes scripts can trust: {@value #EXIT_OK} success, {@value #EXIT_FAILURE} failure (one line
 * {@code Error: ...} on stderr; the stack trace only with {@code --verbose}), {@value #EXIT_USAGE} usage error (bad
 * or missing flags; picocli prints the problem and the usage).
 */
@Command(
    name = "tributary",
    scope = ScopeType.INHERIT,
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = "Tributary: a distributed streaming platform in the spirit of Apache Kafka, built on Akka Cluster.",
    subcommands = {
      ServerCommand.class,
      ClusterCommand.class,
      ChaosCommand.class,
      TopicsCommand.class,
      GroupsCommand.class,
      ProduceCommand.class,
      ConsumeCommand.class,
      PerfCommand.class,
      QuickstartCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {
      "",
      "Start here: tributary quickstart",
      "Exit codes: 0 ok, 1 failure (message on stderr), 2 usage error."
    })
public final class Main implements Runnable {
  /** Success. */
  public static final int EXIT_OK = 0;
  /** The command failed; the reason is on stderr. */
  public static final int EXIT_FAILURE = 1;
  /** The command line was wrong (unknown or missing flag, bad value). */
  public static final int EXIT_USAGE = 2;

  @Option(
      names = "--verbose",
      scope = ScopeType.INHERIT,
      description = "Print stack traces of errors.")
  boolean verbose;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Entry point of {@code bin/tributary}. */
  public static void main(String[] args) {
    Logging.initForCommandLine();
    System.exit(newCommandLine().execute(args));
  }

  /**
   * The configured command line: usage errors give {@value #EXIT_USAGE}, failures give {@value #EXIT_FAILURE} with a
   * one-line message. Tests use it as {@code newCommandLine().execute(args)}.
   */
  public static CommandLine newCommandLine() {
    CommandLine cmd = new CommandLine(new Main());
    cmd.setExecutionExceptionHandler(Main::handleExecutionException);
    cmd.setParameterExceptionHandler(Main::handleParameterException);
    cmd.setCaseInsensitiveEnumValuesAllowed(true);
    return cmd;
  }

  /** With no subcommand: print the usage, and fail as a usage error. */
  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "Missing command: choose one of "
        + String.join(", ", spec.subcommands().keySet()));
  }

  /** A usage error: its message and a pointer to --help (not the whole help text), exit code 2. */
  private static int handleParameterException(CommandLine.ParameterException ex, String[] args) {
    CommandLine cmd = ex.getCommandLine();
    PrintWriter err = cmd.getErr();
    String message = String.valueOf(ex.getMessage());
    // picocli's own messages for argument groups already start with "Error: "
    err.println(message.startsWith("Error: ") ? message : "Error: " + message);
    if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, err)) {
      err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
    }
    err.flush();
    return EXIT_USAGE;
  }

  private static int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult) {
    PrintWriter err = cmd.getErr();
    Throwable cause = unwrap(ex);
    err.println("Error: " + message(cause));
    if (isVerbose(parseResult)) {
      ex.printStackTrace(err);
    }
    err.flush();
    return EXIT_FAILURE;
  }

  /** Whether {@code --verbose} was given on the top command or any subcommand. */
  static boolean isVerbose(ParseResult parseResult) {
    for (ParseResult pr = parseResult; pr != null; pr = pr.subcommand()) {
      if (pr.hasMatchedOption("--verbose")) {
        return true;
      }
    }
    return false;
  }

  /** The underlying failure of wrappers that only add noise (completion, execution, unchecked I/O). */
  static Throwable unwrap(Throwable t) {
    Throwable cur = t;
    while ((cur instanceof CompletionException
            || cur instanceof ExecutionException
            || cur instanceof UncheckedIOException)
        && cur.getCause() != null) {
      cur = cur.getCause();
    }
    return cur;
  }

  /** The one-line message shown for a failure. */
  static String message(Throwable t) {
    if (t instanceof TributaryException || t instanceof CliException || t instanceof IllegalArgumentException) {
      return t.getMessage();
    }
    if (t instanceof IOException) {
      return "I/O error: " + t.getMessage();
    }
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m + " (" + t.getClass().getSimpleName() + ")";
  }
}
