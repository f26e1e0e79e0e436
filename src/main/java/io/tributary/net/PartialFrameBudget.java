package io.tributary.net;

import com.typesafe.config.Config;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JVM-wide budget for the bytes that incoming Artery connections hold in frames not yet complete, as Kafka's
 * {@code queued.max.request.bytes} bounds the bytes of requests read but not yet handled. Artery's TCP framing
 * (Tributary's {@code akka.remote.artery.tcp.TcpFraming}) buffers a frame until its last byte arrives, up to {@code
 * maximum-frame-size} (2 MiB) per connection; without a bound, a few hundred connections that each send most of a
 * large frame and then wait fill any heap (a newcomer's ~300 connections holding 1.99 MB each ran a 512 MB broker out
 * of memory within 5 s, and it died of {@code OutOfMemoryError} 80 s later).
 *
 * <p>Each connection holds, at any moment, the bytes it has buffered of its current incomplete frame, its 4-byte
 * length included ({@link Holder#hold}); they return to the budget when the frame completes or the connection closes
 * ({@link Holder#releaseAll}). A connection whose buffered bytes would take the JVM's total above the limit is refused
 * ({@link Holder#hold} returns false) and its framing stage closes it, so memory stays bounded whatever the peers do;
 * the peer's Artery reconnects, as after any connection failure, and its message is sent again by the layer above (a
 * Tributary client retries a request that timed out). Connections whose frames arrive whole in one read never hold
 * anything. Kafka mutes a socket when its pool is empty instead; a framing stage cannot stop reading in the middle of
 * a frame, and a muted connection would hold its bytes for as long as the peer waits.
 *
 * <p>A frame, and a connection's 5-byte header (which an Artery peer sends as soon as it connects), may also stay
 * incomplete for at most {@code tributary.network.incomplete.frame.timeout.ms} (default 30 s, from when its first bytes
 * were buffered or the connection was accepted; {@link #timeoutMs}; checked every tenth of it, so closed within 1.1
 * times it): a connection whose peer stopped sending in the middle of a frame, crashed without closing, trickles its
 * bytes, or never sends its header, is closed then and its bytes return to the budget, so a flood of such
 * connections holds the budget for that long at most. Every Artery peer sends a frame (at most {@code
 * maximum-frame-size}, 2 MiB) as a whole, so on a working network it never waits that long.
 *
 * <p>The limit is {@code tributary.network.queued.max.request.bytes} (bytes; by default a quarter of the JVM's maximum
 * heap), read at a broker's and a client's start ({@link #configure}). Thread-safe: every method may be called from
 * any thread; each {@link Holder} is confined to its framing stage.
 */
public final class PartialFrameBudget {

  /** The config key of the limit, in bytes; a value of 0 or less means a quarter of the maximum heap. */
  public static final String CONFIG_KEY = "tributary.network.queued.max.request.bytes";

  /**
   * The config key of the longest time a connection's frame (or connection header) may stay incomplete, from when its
   * first bytes were buffered: a number of ms, or a HOCON duration such as {@code 45s}; 0 or less turns the check off.
   */
  public static final String TIMEOUT_CONFIG_KEY = "tributary.network.incomplete.frame.timeout.ms";

  /** The default of {@link #TIMEOUT_CONFIG_KEY}: 30 s, Kafka's default {@code request.timeout.ms}. */
  public static final long DEFAULT_TIMEOUT_MS = 30_000;

  private static final Logger LOG = LoggerFactory.getLogger(PartialFrameBudget.class);
  private static volatile long timeoutMs = DEFAULT_TIMEOUT_MS;
  private static final LongAdder timedOut = new LongAdder();

  /** The shortest time between two warnings about refused connections, in ms (the others are counted). */
  static final long WARN_INTERVAL_MS = 10_000;

  private static final AtomicLong used = new AtomicLong();
  private static volatile long limit = defaultLimit();
  private static final LongAdder refused = new LongAdder();
  private static final WarnLimiter refusedWarnings = new WarnLimiter();
  private static final WarnLimiter timeoutWarnings = new WarnLimiter();

  /**
   * One kind of warning at most every {@link #WARN_INTERVAL_MS}, counting the events in between. Thread-safe.
   */
  private static final class WarnLimiter {
    private final AtomicLong lastWarnMs = new AtomicLong(Long.MIN_VALUE / 2);
    private final LongAdder sinceWarn = new LongAdder();

    /** Counts one event; returns the events since the last warning (this one included) when one is due, else 0. */
    long countAndTake() {
      sinceWarn.increment();
      long now = System.currentTimeMillis();
      long last = lastWarnMs.get();
      return now - last >= WARN_INTERVAL_MS && lastWarnMs.compareAndSet(last, now) ? sinceWarn.sumThenReset() : 0;
    }
  }

  private PartialFrameBudget() {}

  /** A quarter of the JVM's maximum heap ({@link Runtime#maxMemory}), in bytes. */
  public static long defaultLimit() {
    return Math.max(1, Runtime.getRuntime().maxMemory() / 4);
  }

  /**
   * Sets the limit from {@link #CONFIG_KEY} in {@code config} when it is above 0; a value of 0 or less (the default)
   * or a config without the key (one built without Tributary's {@code reference.conf}) leaves the limit as it is,
   * {@link #defaultLimit()} unless set before. One limit for every ActorSystem of the JVM, as they share its heap: of
   * two ActorSystems that set it (say an embedded broker and a client), the last one started wins.
   *
   * @param config an ActorSystem's config (root)
   * @throws com.typesafe.config.ConfigException if the key is not a size in bytes
   */
  public static void configure(Config config) {
    if (config.hasPath(TIMEOUT_CONFIG_KEY)) {
      setTimeoutMs(config.getDuration(TIMEOUT_CONFIG_KEY, TimeUnit.MILLISECONDS)); // a number of ms, or "30s"
    }
    if (!config.hasPath(CONFIG_KEY)) {
      return;
    }
    long bytes = config.getBytes(CONFIG_KEY);
    if (bytes > 0) {
      setLimit(bytes);
    }
  }

  /**
   * Sets the longest time a connection's frame may stay incomplete ({@link #TIMEOUT_CONFIG_KEY}), in ms; 0 or less
   * turns the check off. Framing stages started before keep the interval of their checks (a tenth of the timeout
   * they started with) and compare against the new value; those started while it was off never check.
   */
  public static void setTimeoutMs(long ms) {
    timeoutMs = ms;
  }

  /** The longest time a frame may stay incomplete, in ms; 0 or less when not checked. */
  public static long timeoutMs() {
    return timeoutMs;
  }

  /** How many connections were closed since the JVM started because a frame stayed incomplete too long. */
  public static long timedOutConnections() {
    return timedOut.sum();
  }

  /**
   * Counts a connection closed because {@code what} (its connection header, or a frame) stayed incomplete too long;
   * logs at WARN, one line per {@link #WARN_INTERVAL_MS} at most, with the counts since the last such line and in all.
   */
  public static void countTimedOut(String what, long heldBytes, long incompleteForMs) {
    timedOut.increment();
    long n = timeoutWarnings.countAndTake();
    if (n > 0) {
      LOG.warn("Closed an incoming connection whose {} stayed incomplete for {} ms with {} bytes buffered ({} = {}; "
          + "connections closed so: {} since the last such warning, one warning every {} s at most, {} in all)", what,
          incompleteForMs, heldBytes, TIMEOUT_CONFIG_KEY, timeoutMs, n,
          WARN_INTERVAL_MS / 1000, timedOut.sum());
    }
  }

  /**
   * Sets the limit, in bytes (at least 1). Bytes already held stay held; a connection above the new limit is refused
   * at its next read of an incomplete frame.
   */
  public static void setLimit(long bytes) {
    limit = Math.max(1, bytes);
  }

  /** The limit, in bytes. */
  public static long limit() {
    return limit;
  }

  /** The bytes held now by incomplete frames of all connections of the JVM. */
  public static long used() {
    return used.get();
  }

  /** How many connections were refused (closed) since the JVM started. */
  public static long refusedConnections() {
    return refused.sum();
  }

  /** A new holder, for one connection's framing stage, holding nothing. */
  public static Holder holder() {
    return new Holder();
  }

  /** One connection's share of the budget. Confined to its framing stage (not thread-safe). */
  public static final class Holder {
    private long held;

    private Holder() {}

    /**
     * Holds {@code bytes} in all for this connection's incomplete frame (more or fewer than it held before).
     *
     * @param bytes the bytes the connection has buffered of its incomplete frame, at least 0
     * @return false when the JVM's total would pass the limit: nothing more is held, and the caller closes the
     *     connection (then calls {@link #releaseAll})
     */
    public boolean hold(long bytes) {
      long delta = bytes - held;
      if (delta <= 0) {
        used.addAndGet(delta);
        held = bytes;
        return true;
      }
      long total = used.addAndGet(delta);
      if (total > limit) {
        used.addAndGet(-delta);
        refused.increment();
        warn(total - delta);
        return false;
      }
      held = bytes;
      return true;
    }

    /** Returns everything this connection holds to the budget (its frame completed, or it closed). */
    public void releaseAll() {
      if (held != 0) {
        used.addAndGet(-held);
        held = 0;
      }
    }

    /** The bytes this connection holds. */
    public long held() {
      return held;
    }
  }

  private static void warn(long usedBefore) {
    long n = refusedWarnings.countAndTake();
    if (n > 0) {
      LOG.warn("Closed an incoming connection in the middle of a frame ({} since the last such warning, one warning "
          + "every {} s at most; {} in all): incomplete frames of all connections already held {} bytes, and {} = {} "
          + "(frames that arrive whole are never refused; a peer reconnects)",
          n, WARN_INTERVAL_MS / 1000, refused.sum(), usedBefore, CONFIG_KEY, limit);
    }
  }
}
