package io.tributary.cli;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Finds the keys of a broker's config file ({@code tributary server --config FILE}) that look like broker settings but
 * that nothing reads, e.g. {@code tributary.broker.num.partitons} or, written as in Kafka's {@code server.properties},
 * {@code num.partitions} at the top level. Kafka logs such keys as "supplied but not used"; the server prints one
 * warning line per key on stderr, with the known setting within two typing errors when there is one, and starts all
 * the same (a config file may hold other things too).
 *
 * <p>Known settings are those of {@code reference.conf} (it documents every {@code tributary} key). Checked keys:
 * every key under {@code tributary}, and top-level keys that look like broker or topic settings (their first word is
 * that of a broker setting, e.g. {@code log.} or {@code num.}, or they are near one). Keys under {@code akka} and
 * anything else are left alone. Maps with a {@code "*"} entry in reference.conf ({@code compaction-intervals}) take
 * any key.
 */
final class ServerConfigCheck {
  private static final String TRIBUTARY = "tributary.";
  private static final String BROKER = "tributary.broker.";

  /** Kafka's names of settings that Tributary spells differently: Kafka's key → Tributary's key and a note. */
  private static final Map<String, String[]> KAFKA_NAMES = Map.of(
      "log.retention.hours", new String[] {BROKER + "log.retention.ms", "in milliseconds"},
      "log.retention.minutes", new String[] {BROKER + "log.retention.ms", "in milliseconds"},
      "log.dirs", new String[] {"tributary.data-dir", "one directory"},
      "log.dir", new String[] {"tributary.data-dir", "one directory"},
      "retention.ms", new String[] {BROKER + "log.retention.ms", "the broker default of the topic config"},
      "retention.bytes", new String[] {BROKER + "log.retention.bytes", "the broker default of the topic config"},
      "max.message.bytes", new String[] {BROKER + "message.max.bytes", "the broker default of the topic config"});

  private ServerConfigCheck() {}

  /**
   * One warning line per unknown key of {@code file}, sorted by key; empty when there is none or the file cannot be
   * read as a whole (its errors are reported when the node's config is loaded).
   *
   * @param file the config file the node was started with
   * @param nodeConfig the node's resolved config, to resolve substitutions of the file against
   */
  static List<String> warnings(Path file, Config nodeConfig) {
    Config fileConfig;
    try {
      fileConfig = ConfigFactory.parseFile(file.toFile())
          .resolveWith(nodeConfig, ConfigResolveOptions.defaults().setAllowUnresolved(true));
    } catch (ConfigException e) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (String key : unknownKeys(fileConfig, ConfigFactory.defaultReference())) {
      out.add("Warning: " + file + ": key '" + key + "' is not a Tributary setting and is ignored"
          + hint(key, ConfigFactory.defaultReference()));
    }
    return out;
  }

  /** The keys of {@code userConfig} that look like broker settings but are not in {@code reference}, sorted. */
  static List<String> unknownKeys(Config userConfig, Config reference) {
    Set<String> known = tributaryKeys(reference);
    Set<String> firstWords = new TreeSet<>();
    for (String k : known) {
      if (k.startsWith(BROKER)) {
        firstWords.add(ConfigUtil.splitPath(k.substring(BROKER.length())).get(0));
      }
    }
    for (String k : KAFKA_NAMES.keySet()) {
      firstWords.add(ConfigUtil.splitPath(k).get(0));
    }
    List<String> unknown = new ArrayList<>();
    for (String key : new TreeSet<>(keysOf(userConfig))) {
      if (key.startsWith("akka.") || known.contains(key) || isInWildcardMap(key, reference)) {
        continue;
      }
      if (key.startsWith(TRIBUTARY)
          || firstWords.contains(ConfigUtil.splitPath(key).get(0))
          || suggestion(key, known) != null) {
        unknown.add(key);
      }
    }
    return unknown;
  }

  /** {@code ; did you mean X?} for the nearest known setting (at most 2 edits), or "". */
  private static String hint(String key, Config reference) {
    String s = suggestion(key, tributaryKeys(reference));
    if (s != null) {
      return "; did you mean " + s + "?";
    }
    String bare = key.startsWith(BROKER) ? key.substring(BROKER.length())
        : key.startsWith(TRIBUTARY) ? key.substring(TRIBUTARY.length()) : key;
    List<String> kafka = EditDistance.closest(bare, KAFKA_NAMES.keySet(), 2);
    if (!kafka.isEmpty()) {
      String[] tributary = KAFKA_NAMES.get(kafka.get(0));
      return "; did you mean " + tributary[0] + "? (for Kafka's " + kafka.get(0) + "; " + tributary[1] + ")";
    }
    return "";
  }

  /**
   * The known setting nearest to {@code key} within 2 edits, also trying the key under {@code tributary.broker} (a
   * Kafka broker key written at the top level or under {@code tributary}); null if none.
   */
  static String suggestion(String key, Set<String> known) {
    List<String> forms = new ArrayList<>();
    forms.add(key);
    if (!key.startsWith(TRIBUTARY)) {
      forms.add(BROKER + key);
    } else if (!key.startsWith(BROKER)) {
      forms.add(BROKER + key.substring(TRIBUTARY.length()));
    }
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String form : forms) {
      for (String candidate : EditDistance.closest(form, known, 2)) {
        int d = EditDistance.between(form, candidate);
        if (d < bestDistance) {
          best = candidate;
          bestDistance = d;
        }
      }
    }
    return best;
  }

  /** Every leaf key under {@code tributary} in {@code reference}, with its {@code tributary.} prefix. */
  private static Set<String> tributaryKeys(Config reference) {
    Set<String> keys = new TreeSet<>();
    if (reference.hasPath("tributary")) {
      for (String k : keysOf(reference.getConfig("tributary"))) {
        keys.add(TRIBUTARY + k);
      }
    }
    return keys;
  }

  /** The leaf keys of {@code config}; subtrees that stayed unresolved are skipped. */
  private static Set<String> keysOf(Config config) {
    Set<String> keys = new TreeSet<>();
    collect(config.root(), "", keys);
    return keys;
  }

  private static void collect(ConfigObject object, String prefix, Set<String> keys) {
    for (String name : object.keySet()) {
      String path = prefix + ConfigUtil.joinPath(name);
      try {
        if (object.get(name).valueType() == ConfigValueType.OBJECT) {
          collect((ConfigObject) object.get(name), path + ".", keys);
        } else {
          keys.add(path);
        }
      } catch (ConfigException.NotResolved e) {
        // a substitution that could not be resolved: not a key we can judge
      }
    }
  }

  /** Whether an object above {@code key} in {@code reference} is a map with a {@code "*"} entry (any key goes). */
  private static boolean isInWildcardMap(String key, Config reference) {
    List<String> segments = ConfigUtil.splitPath(key);
    for (int i = 1; i < segments.size(); i++) {
      String prefix = ConfigUtil.joinPath(segments.subList(0, i));
      try {
        if (reference.hasPath(prefix) && reference.getValue(prefix).valueType() == ConfigValueType.OBJECT
            && reference.getObject(prefix).containsKey("*")) {
          return true;
        }
      } catch (ConfigException e) {
        return false;
      }
    }
    return false;
  }
}
