package io.tributary.cli;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine;

/**
 * The {@code --property key=value} settings of the console producer and consumer (Kafka's names). Unknown keys and
 * bad values are usage errors. Separator values may use the escapes {@code \t}, {@code \n}, {@code \r} and
 * {@code \\}, so {@code --property key.separator=\t} means a tab as in Kafka's documentation.
 */
final class CliProperties {
  private final Map<String, String> values;
  private final CommandLine commandLine;

  CliProperties(Map<String, String> values, Set<String> known, CommandLine commandLine) {
    this.values = values;
    this.commandLine = commandLine;
    for (String key : values.keySet()) {
      if (!known.contains(key)) {
        throw new CommandLine.ParameterException(
            commandLine, "Unknown --property '" + key + "'; known: " + String.join(", ", new TreeSet<>(known)));
      }
    }
  }

  boolean flag(String key, boolean defaultValue) {
    String v = values.get(key);
    if (v == null) {
      return defaultValue;
    }
    if (v.equalsIgnoreCase("true")) {
      return true;
    }
    if (v.equalsIgnoreCase("false")) {
      return false;
    }
    throw new CommandLine.ParameterException(commandLine, "--property " + key + " must be true or false, was '" + v
        + "'");
  }

  /** The value with escapes ({@code \t \n \r \\}) replaced, or {@code defaultValue}. */
  String text(String key, String defaultValue) {
    String v = values.get(key);
    return v == null ? defaultValue : unescape(v);
  }

  static String unescape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(i + 1);
        switch (n) {
          case 't' -> b.append('\t');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case '\\' -> b.append('\\');
          default -> {
            b.append(c).append(n);
          }
        }
        i++;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
