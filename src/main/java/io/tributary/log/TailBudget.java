package io.tributary.log;

import akka.actor.AbstractExtensionId;
import akka.actor.ExtendedActorSystem;
import akka.actor.Extension;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Adapter;
import com.typesafe.config.Config;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide bound on the partitions' in-memory tails ({@code tributary.log.tail-total-max-bytes}): without it a
 * node's heap would have to hold {@code tail-max-bytes} (8 MiB) for every partition replica written in the last
 * {@code tail-idle-ms}, and a node with a hundred busy partitions would run out of heap. Kafka has no such cache (it
 * serves recent reads from the OS page cache, which the OS bounds).
 *
 * <p>Each partition's tail keeps up to {@code tail-max-bytes} while the node's tails together stay within the budget.
 * When they do not, a partition that appends sheds the excess from its own tail (its oldest batches), but not below
 * its fair share, the budget divided by the number of partitions with a non-empty tail (and never its newest batch).
 * So the total stays near the budget: above it only by the tails of partitions that have not appended since the
 * budget filled (until their next append or until {@code tail-idle-ms} drops them) and by a batch per partition.
 * A fetch below a partition's tail reads the journal, as every fetch below the tail does: slower, never wrong.
 *
 * <p>An Akka extension (one per ActorSystem: one per broker node, also when tests run several nodes in one JVM).
 * Thread-safe (partition actors on any thread report to it); a {@link PartitionLog} reports every change of its tail,
 * and gives its bytes back when its actor stops or restarts.
 */
public final class TailBudget implements Extension {

  /** The extension's id. */
  public static final Id ID = new Id();

  /** Config key of the budget: a size in bytes, or {@code auto} (any case) for a quarter of the JVM's maximum heap. */
  public static final String CONFIG_KEY = "tributary.log.tail-total-max-bytes";

  private final long maxBytes;
  private final AtomicLong usedBytes = new AtomicLong();
  private final AtomicInteger holders = new AtomicInteger();

  /**
   * A budget of {@code maxBytes} bytes for all tails of one node.
   *
   * @throws IllegalArgumentException if {@code maxBytes} is negative
   */
  public TailBudget(long maxBytes) {
    if (maxBytes < 0) {
      throw new IllegalArgumentException("tail budget must be >= 0 bytes, not " + maxBytes);
    }
    this.maxBytes = maxBytes;
  }

  /** A budget that never trims (tests of one partition). */
  public static TailBudget unlimited() {
    return new TailBudget(Long.MAX_VALUE);
  }

  /** The extension of {@code system}. */
  public static TailBudget get(ActorSystem<?> system) {
    return ID.get(Adapter.toClassic(system));
  }

  /**
   * The budget {@link #CONFIG_KEY} gives: its size, or a quarter of {@code maxHeapBytes} for {@code auto} or when the
   * key is absent.
   *
   * @throws com.typesafe.config.ConfigException.BadValue if it is neither {@code auto} nor a size of at least 0
   */
  public static long fromConfig(Config config, long maxHeapBytes) {
    if (!config.hasPath(CONFIG_KEY)
        || "auto".equalsIgnoreCase(String.valueOf(config.getValue(CONFIG_KEY).unwrapped()))) {
      return Math.max(0, maxHeapBytes / 4);
    }
    long bytes = config.getBytes(CONFIG_KEY);
    if (bytes < 0) {
      throw new com.typesafe.config.ConfigException.BadValue(CONFIG_KEY, "must be auto or a size >= 0, not " + bytes);
    }
    return bytes;
  }

  /** The node's budget, bytes. */
  public long maxBytes() {
    return maxBytes;
  }

  /** Bytes in all tails of the node now. */
  public long usedBytes() {
    return usedBytes.get();
  }

  /** Partitions with a non-empty tail now. */
  public int holders() {
    return holders.get();
  }

  /**
   * How many bytes a partition's tail of {@code ownBytes} may keep after an append, given its own cap {@code
   * tailMaxBytes}: the cap while the node is within budget; beyond it, what is left after shedding the node's excess,
   * but not less than the fair share (the budget divided by the partitions with a tail), so that a busy partition
   * keeps most of a budget that idle partitions' small tails leave free, and a partition above its share gives back.
   */
  long limitFor(long tailMaxBytes, long ownBytes) {
    long used = usedBytes.get();
    if (used <= maxBytes) {
      return tailMaxBytes;
    }
    long fair = maxBytes / Math.max(1, holders.get());
    return Math.min(tailMaxBytes, Math.max(fair, ownBytes - (used - maxBytes)));
  }

  /** A partition's tail changed from {@code before} to {@code after} bytes (both &ge; 0). */
  void changed(long before, long after) {
    if (before == after) {
      return;
    }
    usedBytes.addAndGet(after - before);
    if (before == 0) {
      holders.incrementAndGet();
    } else if (after == 0) {
      holders.decrementAndGet();
    }
  }

  /** Creates the extension from the system's config ({@link #fromConfig}). */
  public static final class Id extends AbstractExtensionId<TailBudget> {
    private Id() {}

    @Override
    public TailBudget createExtension(ExtendedActorSystem system) {
      return new TailBudget(fromConfig(system.settings().config(), Runtime.getRuntime().maxMemory()));
    }
  }
}
