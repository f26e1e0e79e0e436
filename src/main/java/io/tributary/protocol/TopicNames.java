package io.tributary.protocol;

import java.util.regex.Pattern;

/** Kafka's topic name rules: 1 to 249 characters of {@code [a-zA-Z0-9._-]}, and neither {@code .} nor {@code ..}. */
public final class TopicNames {
  /** The longest legal topic name, as Kafka's {@code Topic.MAX_NAME_LENGTH}. */
  public static final int MAX_LENGTH = 249;

  /** The internal topic of committed offsets (Kafka's); it cannot be deleted. */
  public static final String CONSUMER_OFFSETS = "__consumer_offsets";

  private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

  private TopicNames() {}

  /**
   * Why {@code name} is not a legal topic name.
   *
   * @return {@code null} if the name is legal, else a message for {@link ErrorCode#INVALID_TOPIC_EXCEPTION}
   */
  public static String invalidReason(String name) {
    if (name == null || name.isEmpty()) {
      return "Topic name is empty";
    }
    if (name.equals(".") || name.equals("..")) {
      return "Topic name cannot be \".\" or \"..\"";
    }
    if (name.length() > MAX_LENGTH) {
      return "Topic name is longer than " + MAX_LENGTH + " characters: " + name.length();
    }
    if (!LEGAL.matcher(name).matches()) {
      return "Topic name \"" + name + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_'"
          + " and '-'";
    }
    return null;
  }

  /**
   * Whether {@code name} is an internal topic's, by Tributary's rule: it starts with {@code __} (as
   * {@value #CONSUMER_OFFSETS}). Internal topics are left out of listings unless asked for, and get as many replicas as
   * there are brokers when fewer than asked for are up.
   */
  public static boolean isInternal(String name) {
    return name.startsWith("__");
  }

  /** Whether {@code name} is a legal topic name. */
  public static boolean isValid(String name) {
    return invalidReason(name) == null;
  }
}
