package io.tributary.group.assignor;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Looks up the partition assignors by the names used in {@code partition.assignment.strategy}.
 *
 * <p>Valid names: {@code "range"} ({@link RangeAssignor}), {@code "roundrobin"} ({@link RoundRobinAssignor}) and
 * {@code "cooperative-sticky"} ({@link CooperativeStickyAssignor}, the {@link #DEFAULT}). So that Kafka
 * configurations work unchanged, the fully qualified names of Kafka's corresponding classes
 * ({@code org.apache.kafka.clients.consumer.RangeAssignor}, {@code ...RoundRobinAssignor},
 * {@code ...CooperativeStickyAssignor}) are accepted too. Names are matched ignoring case and surrounding
 * whitespace. The assignors are stateless, so the same instances are handed out every time.
 */
public final class Assignors {

  /** The default assignor's name, as Kafka's default for new consumers: "cooperative-sticky". */
  public static final String DEFAULT = CooperativeStickyAssignor.NAME;

  private static final PartitionAssignor RANGE = new RangeAssignor();
  private static final PartitionAssignor ROUND_ROBIN = new RoundRobinAssignor();
  private static final PartitionAssignor COOPERATIVE_STICKY = new CooperativeStickyAssignor();

  private static final List<String> NAMES =
      List.of(RangeAssignor.NAME, RoundRobinAssignor.NAME, CooperativeStickyAssignor.NAME);

  private static final Map<String, PartitionAssignor> BY_NAME = Map.of(
      RangeAssignor.NAME, RANGE,
      RoundRobinAssignor.NAME, ROUND_ROBIN,
      CooperativeStickyAssignor.NAME, COOPERATIVE_STICKY,
      "org.apache.kafka.clients.consumer.rangeassignor", RANGE,
      "org.apache.kafka.clients.consumer.roundrobinassignor", ROUND_ROBIN,
      "org.apache.kafka.clients.consumer.cooperativestickyassignor", COOPERATIVE_STICKY);

  private Assignors() {}

  /**
   * The assignor called {@code name}.
   *
   * @param name a name from {@link #names()} (any case), or the fully qualified name of the matching Kafka class
   * @return the shared instance of that assignor
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if no assignor has that name; the message lists the valid names
   */
  public static PartitionAssignor byName(String name) {
    Objects.requireNonNull(name, "assignor name");
    PartitionAssignor assignor = BY_NAME.get(name.trim().toLowerCase(Locale.ROOT));
    if (assignor == null) {
      throw new IllegalArgumentException(
          "unknown partition assignor '" + name + "'; valid names: " + String.join(", ", NAMES));
    }
    return assignor;
  }

  /**
   * Whether {@link #byName(String)} accepts {@code name}.
   *
   * @param name a candidate name, may be null
   * @return true if {@link #byName(String)} would return an assignor for it
   */
  public static boolean isKnown(String name) {
    return name != null && BY_NAME.containsKey(name.trim().toLowerCase(Locale.ROOT));
  }

  /**
   * The valid (canonical) names.
   *
   * @return "range", "roundrobin", "cooperative-sticky", in that order (unmodifiable)
   */
  public static List<String> names() {
    return NAMES;
  }

  /**
   * The {@link #DEFAULT} assignor.
   *
   * @return the shared {@link CooperativeStickyAssignor}
   */
  public static PartitionAssignor defaultAssignor() {
    return COOPERATIVE_STICKY;
  }
}
