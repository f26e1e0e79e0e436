package io.tributary.cli;

import io.tributary.client.TributaryException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * or missing flags: {@code Error: ...}, a "Did you mean" line for a near miss, then {@code Try 'tributary <command>
 * --help' for more information.}).
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

  /**
   * A usage error, the same for every command: {@code Error: <message>}, a "Did you mean" line when an unknown option
   * or command is a near miss of a real one, and always a last line pointing to the command's --help (not the whole
   * help text); exit code {@value #EXIT_USAGE}. Client settings given with another tool's flag ({@code produce
   * --producer-props ...}) or several {@code KEY=VALUE} after a flag that takes one ({@code --producer-property a=1
   * b=2}) are said so, with the arguments rewritten in the "Did you mean" line ({@link KeyValueFlagHint}).
   */
  private static int handleParameterException(CommandLine.ParameterException ex, String[] args) {
    CommandLine.ParameterException problem = unknownOptionFirst(ex, args);
    CommandLine cmd = problem.getCommandLine();
    PrintWriter err = cmd.getErr();
    String message = asTyped(naturalMessage(problem), problem, args);
    String hint = null;
    if (problem instanceof CommandLine.UnmatchedArgumentException unmatched) {
      KeyValueFlagHint.Hint keyValue = KeyValueFlagHint.of(unmatched, args);
      if (keyValue != null) {
        message = keyValue.message();
        hint = keyValue.didYouMean();
      } else {
        hint = suggestion(unmatched);
      }
    }
    // picocli's own messages for argument groups already start with "Error: "
    err.println(message.startsWith("Error: ") ? message : "Error: " + message);
    if (hint != null) {
      err.println(hint);
    }
    err.println("Try '" + cmd.getCommandSpec().qualifiedName() + " --help' for more information.");
    err.flush();
    return EXIT_USAGE;
  }

  /**
   * picocli checks required options before it reports unknown ones, so {@code produce --bootstrap-servr H:P --topic
   * t} would say that --bootstrap-server is missing and never point at the typo. When a command misses a required
   * option and an argument looks like an option it does not have, the unknown option is the problem reported.
   */
  private static CommandLine.ParameterException unknownOptionFirst(
      CommandLine.ParameterException ex, String[] args) {
    if (!(ex instanceof CommandLine.MissingParameterException) || args == null) {
      return ex;
    }
    CommandLine cmd = ex.getCommandLine();
    CommandLine.Model.CommandSpec spec = cmd.getCommandSpec();
    List<String> unknown = new ArrayList<>();
    for (String arg : args) {
      if (arg.equals("--")) {
        break; // the rest are positional parameters
      }
      if (!arg.startsWith("-") || arg.length() < 2 || NEGATIVE_NUMBER.matcher(arg).matches()) {
        continue;
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg : arg.substring(0, eq);
      if (spec.findOption(name) == null) {
        unknown.add(arg);
      }
    }
    return unknown.isEmpty() ? ex : new CommandLine.UnmatchedArgumentException(cmd, unknown);
  }

  private static final Pattern NEGATIVE_NUMBER = Pattern.compile("-\\d.*");

  /**
   * picocli 4.7's message for a {@code KEY=VALUE} option given without {@code =} says "Value for option option
   * '--config' (KEY=VALUE) should be in KEY=VALUE format but was x" (its option description already starts with
   * "option"; a multi-value option adds "at index N"); this says {@code --config must be KEY=VALUE, was 'x'}, as
   * this CLI's own checks do.
   */
  private static final Pattern KEY_VALUE_MESSAGE =
      Pattern.compile("Value for option (?:option )?'([^']+)'(?: at index \\d+)? \\([^)]*\\)"
          + " should be in KEY=VALUE format but was (.*)",
          Pattern.DOTALL);

  static String naturalMessage(CommandLine.ParameterException ex) {
    String message = String.valueOf(ex.getMessage());
    Matcher m = KEY_VALUE_MESSAGE.matcher(message);
    if (m.matches()) {
      return m.group(1) + " must be KEY=VALUE, was '" + m.group(2) + "'";
    }
    return message.replace("option option '", "option '");
  }

  /**
   * picocli names an option by its longest name in its messages: {@code perf produce --producer-props garbage} said
   * "--command-property must be KEY=VALUE" (Kafka 4's alias of that option). This puts back the name the user typed.
   */
  static String asTyped(String message, CommandLine.ParameterException ex, String[] args) {
    if (!(ex.getArgSpec() instanceof CommandLine.Model.OptionSpec option) || option.names().length < 2
        || args == null) {
      return message;
    }
    for (String arg : args) {
      if (arg.equals("--")) {
        break;
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg : arg.substring(0, eq);
      if (List.of(option.names()).contains(name)) {
        return name.equals(option.longestName()) ? message : message.replace(option.longestName(), name);
      }
    }
    return message;
  }

  /**
   * "Did you mean ...?" for an unknown option or command that is within two typing errors of a real one (or the
   * start of one), else null. picocli's own suggestions are every name sharing a pair of letters with the typo
   * ({@code --bogus-flag} → {@code --bootstrap-server}), which misleads more than it helps.
   */
  private static String suggestion(CommandLine.UnmatchedArgumentException ex) {
    List<String> unmatched = ex.getUnmatched();
    if (unmatched.isEmpty()) {
      return null;
    }
    String typed = unmatched.get(0);
    int eq = typed.indexOf('=');
    if (typed.startsWith("-") && eq > 0) {
      typed = typed.substring(0, eq);
    }
    CommandLine.Model.CommandSpec spec = ex.getCommandLine().getCommandSpec();
    boolean option = typed.startsWith("-");
    List<String> names = new ArrayList<>();
    if (option) {
      spec.options().forEach(o -> names.addAll(List.of(o.names())));
    } else {
      names.addAll(spec.subcommands().keySet());
    }
    List<String> close = new ArrayList<>(EditDistance.closest(typed, names, 2));
    String bare = typed.replaceFirst("^-+", "");
    if (bare.length() >= 3) {
      for (String name : names) {
        if (name.startsWith(typed) && !close.contains(name)) {
          close.add(name); // an abbreviation: --bootstrap for --bootstrap-server
        }
      }
    }
    if (close.isEmpty()) {
      return null;
    }
    List<String> shown = close.subList(0, Math.min(3, close.size()));
    String prefix = option ? "" : spec.qualifiedName() + " ";
    StringBuilder b = new StringBuilder("Did you mean ");
    for (int i = 0; i < shown.size(); i++) {
      b.append(i == 0 ? "" : " or ").append(prefix).append(shown.get(i));
    }
    return b.append('?').toString();
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
