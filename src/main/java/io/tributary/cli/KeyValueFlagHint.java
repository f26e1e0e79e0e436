package io.tributary.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Plain words for the two ways a command line goes wrong with {@code KEY=VALUE} flags, which picocli reports as
 * unknown options or unmatched arguments. Used by {@link Main}'s usage error handler. Pure functions.
 *
 * <ul>
 *   <li>Another tool's flag for client settings: {@code produce --producer-props acks=all linger.ms=5} (the perf tools'
 *       flag; picocli: "Unknown options: '--producer-props', 'acks=all', 'linger.ms=5'") says that {@code produce}'s
 *       flag is {@code --producer-property KEY=VALUE}, once per setting, and suggests {@code --producer-property
 *       acks=all --producer-property linger.ms=5}. The flags known this way are {@link #CLIENT_SETTING_FLAGS}; the
 *       command's own one is named whichever of them it has.
 *   <li>Several values after a flag that takes one: {@code --producer-property a=1 b=2} (picocli: "Unmatched argument
 *       at index 7: 'b=2'") says that each KEY=VALUE needs its own {@code --producer-property}, and suggests {@code
 *       --producer-property a=1 --producer-property b=2}. This holds for every single-value map option
 *       ({@code --property}, {@code --config}, ...).
 * </ul>
 */
final class KeyValueFlagHint {
  /**
   * The flags Tributary's commands and Kafka's tools take client settings with: the console tools' {@code
   * --producer-property} and {@code --consumer-property} (one {@code KEY=VALUE} each), the perf tools' {@code
   * --producer-props} and {@code --consumer-props} (several after one flag), and Kafka 4's {@code --command-property}.
   */
  static final Set<String> CLIENT_SETTING_FLAGS = Set.of(
      "--producer-property", "--consumer-property", "--producer-props", "--consumer-props", "--command-property");

  /** A shell word that needs no quotes. */
  private static final Pattern PLAIN_WORD = Pattern.compile("[A-Za-z0-9._=,:/@%+-]+");

  /**
   * What to print instead of picocli's message.
   *
   * @param message the error (without the {@code Error: } prefix)
   * @param didYouMean a "Did you mean ...?" line with the arguments rewritten, or null
   */
  record Hint(String message, String didYouMean) {}

  private KeyValueFlagHint() {}

  /**
   * The hint for {@code ex}, or null when it is not one of the two cases of the class comment.
   *
   * @param args the whole command line, as given to the parameter exception handler
   */
  static Hint of(CommandLine.UnmatchedArgumentException ex, String[] args) {
    if (args == null || ex.getUnmatched().isEmpty()) {
      return null;
    }
    CommandSpec spec = ex.getCommandLine().getCommandSpec();
    Hint hint = anotherToolsFlag(spec, ex.getUnmatched(), args);
    return hint != null ? hint : severalValuesAfterOneFlag(spec, ex.getUnmatched(), args);
  }

  private static Hint anotherToolsFlag(CommandSpec spec, List<String> unmatched, String[] args) {
    String typed = null;
    for (String u : unmatched) {
      if (u.startsWith("-") && CLIENT_SETTING_FLAGS.contains(nameOf(u))) {
        typed = nameOf(u);
        break;
      }
    }
    if (typed == null) {
      return null;
    }
    OptionSpec own = null;
    String ownName = null;
    for (OptionSpec option : spec.options()) {
      for (String name : option.names()) {
        if (CLIENT_SETTING_FLAGS.contains(name) && (ownName == null || ownName.equals("--command-property"))) {
          own = option;
          ownName = name; // the tool's own name rather than Kafka 4's --command-property
        }
      }
    }
    if (own == null) {
      return null;
    }
    boolean several = own.arity().max() > 1;
    String what = ownName.contains("consumer") ? "consumer settings"
        : ownName.contains("producer") ? "producer settings" : "client settings";
    String message = "Unknown option: '" + typed + "': " + commandName(spec) + " takes " + what + " as " + ownName
        + (several ? " KEY=VALUE [KEY=VALUE...]" : " KEY=VALUE, once per setting");

    List<String> values = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].startsWith("-") && nameOf(args[i]).equals(typed)) {
        int eq = args[i].indexOf('=');
        if (eq > 0) {
          values.add(args[i].substring(eq + 1));
        }
        for (int k = i + 1; k < args.length && isKeyValue(args[k]); k++) {
          values.add(args[k]);
        }
        break;
      }
    }
    if (values.isEmpty()) {
      return new Hint(message, null);
    }
    StringBuilder rewritten = new StringBuilder();
    for (int i = 0; i < values.size(); i++) {
      if (i == 0 || !several) {
        rewritten.append(i == 0 ? "" : " ").append(ownName);
      }
      rewritten.append(' ').append(shellWord(values.get(i)));
    }
    return new Hint(message, "Did you mean " + rewritten + "?");
  }

  private static Hint severalValuesAfterOneFlag(CommandSpec spec, List<String> unmatched, String[] args) {
    String extra = unmatched.get(0);
    if (!isKeyValue(extra)) {
      return null;
    }
    for (int i = 0; i < args.length; i++) {
      if (!args[i].equals(extra)) {
        continue;
      }
      int j = i - 1;
      while (j >= 0 && isKeyValue(args[j])) {
        j--;
      }
      if (j < 0 || !args[j].startsWith("-")) {
        continue;
      }
      String flag = nameOf(args[j]);
      OptionSpec option = spec.findOption(flag);
      if (option == null || !option.typeInfo().isMap() || option.arity().max() != 1) {
        continue;
      }
      int eq = args[j].indexOf('=');
      List<String> values = new ArrayList<>();
      if (eq > 0) {
        values.add(args[j].substring(eq + 1));
      }
      for (int k = j + 1; k < args.length && isKeyValue(args[k]); k++) {
        values.add(args[k]);
      }
      if (values.size() < 2) {
        continue;
      }
      List<String> extras = values.subList(1, values.size());
      StringBuilder quoted = new StringBuilder();
      StringBuilder rewritten = new StringBuilder();
      for (String v : extras) {
        quoted.append(quoted.length() == 0 ? "" : ", ").append('\'').append(v).append('\'');
      }
      for (String v : values) {
        rewritten.append(rewritten.length() == 0 ? "" : " ").append(flag).append(' ').append(shellWord(v));
      }
      String message = quoted + (extras.size() == 1 ? " follows " : " follow ") + flag + " " + shellWord(values.get(0))
          + ", but each KEY=VALUE needs its own " + flag;
      return new Hint(message, "Did you mean " + rewritten + "?");
    }
    return null;
  }

  /** The option name of {@code arg}: {@code --opt} of {@code --opt=value}. */
  private static String nameOf(String arg) {
    int eq = arg.indexOf('=');
    return eq < 0 ? arg : arg.substring(0, eq);
  }

  /** Whether {@code arg} looks like a {@code KEY=VALUE} argument (not an option). */
  private static boolean isKeyValue(String arg) {
    return !arg.startsWith("-") && arg.indexOf('=') > 0;
  }

  /** The command's name after {@code tributary}: {@code produce}, {@code perf produce}. */
  private static String commandName(CommandSpec spec) {
    String qualified = spec.qualifiedName();
    int space = qualified.indexOf(' ');
    return space < 0 ? qualified : qualified.substring(space + 1);
  }

  /** {@code word} as it can be typed in a shell: as is, or in single quotes. */
  private static String shellWord(String word) {
    return PLAIN_WORD.matcher(word).matches() ? word : "'" + word.replace("'", "'\\''") + "'";
  }
}
