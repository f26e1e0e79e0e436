package io.tributary.cli.chaos;

import io.tributary.client.Producer;
import io.tributary.client.ProducerRecord;
import io.tributary.client.Serializer;
import io.tributary.client.TributaryClient;
import io.tributary.client.TributaryException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * A producer that sends a continuous, paced stream of records whose values are {@link Ledger#value} (its id and a
 * sequence number from 0) and books every send, acknowledgement and failure in a {@link Ledger}. Keys cycle over 64
 * values per producer, so the records spread over the partitions (murmur2) and each key's records keep their order.
 *
 * <p>At most {@code maxInFlight} sends are unanswered at once: while the cluster cannot acknowledge (a leader moving,
 * too few in-sync replicas), the stream pauses instead of filling the buffer.
 *
 * <p>Thread-safe: {@link #start()} runs the sending loop on a thread of its own; the other methods may be called from
 * any thread.
 */
public final class ChaosProducer implements AutoCloseable {
  private static final int KEYS = 64;

  private final int id;
  private final String topic;
  private final Ledger ledger;
  private final Producer<String, String> producer;
  private final double ratePerSecond;
  private final Semaphore inFlight;
  private final int maxInFlight;
  private final Thread thread;
  private volatile boolean running = true;
  private final AtomicLong sent = new AtomicLong();
  private final LongAdder answered = new LongAdder();
  private final Map<Integer, LongAdder> ackedByPartition = new ConcurrentHashMap<>();
  private final LongAdder acknowledged = new LongAdder();
  private final AtomicLong highestAcknowledged = new AtomicLong(-1);
  private final LongAdder nonRetriable = new LongAdder();
  private final List<String> nonRetriableExamples = new ArrayList<>();

  /**
   * A producer of {@code client} (not started yet).
   *
   * @param id this producer's id in the values ({@code p<id>-<seq>}), unique per ledger
   * @param config producer settings (e.g. {@code acks=all}); see {@link io.tributary.client.ClientConfig}
   * @param ratePerSecond records per second to aim at; 0 or less: as fast as the in-flight bound allows
   * @param maxInFlight sends unanswered at most at once (≥ 1)
   */
  public ChaosProducer(TributaryClient client, String topic, int id, Ledger ledger, Map<String, ?> config,
      double ratePerSecond, int maxInFlight) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1, was " + maxInFlight);
    }
    this.id = id;
    this.topic = topic;
    this.ledger = ledger;
    this.ratePerSecond = ratePerSecond;
    this.maxInFlight = maxInFlight;
    this.inFlight = new Semaphore(maxInFlight);
    this.producer = client.producer(config, Serializer.string(), Serializer.string());
    this.thread = new Thread(this::sendLoop, "chaos-producer-" + id);
    this.thread.setDaemon(true);
  }

  /** Starts sending. */
  public void start() {
    thread.start();
  }

  private void sendLoop() {
    long t0 = System.nanoTime();
    long seq = 0;
    while (running) {
      if (ratePerSecond > 0) {
        long due = t0 + (long) (seq * 1e9 / ratePerSecond);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          // pacing the stream (not waiting for an event)
          LockSupport.parkNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
          continue;
        }
      }
      try {
        if (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
          continue;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      long s = seq++;
      ledger.sent(id, s);
      sent.incrementAndGet();
      try {
        producer.send(new ProducerRecord<>(topic, "p" + id + "-k" + (s % KEYS), Ledger.value(id, s)))
            .whenComplete((md, ex) -> {
              if (ex == null) {
                ledger.acknowledged(id, s, md.partition(), md.offset());
                acknowledged.increment();
                highestAcknowledged.accumulateAndGet(s, Math::max);
                ackedByPartition.computeIfAbsent(md.partition(), p -> new LongAdder()).increment();
              } else {
                failed(s, ex);
              }
              answered.increment();
              inFlight.release();
            });
      } catch (RuntimeException e) {
        failed(s, e);
        answered.increment();
        inFlight.release();
      }
    }
  }

  private void failed(long seq, Throwable ex) {
    ledger.failed(id, seq, ex);
    Throwable t = ex;
    while (t.getCause() != null && !(t instanceof TributaryException)) {
      t = t.getCause();
    }
    if (!(t instanceof TributaryException te && te.isRetriable())) {
      nonRetriable.increment();
      synchronized (nonRetriableExamples) {
        if (nonRetriableExamples.size() < 5) {
          nonRetriableExamples.add(Ledger.value(id, seq) + ": " + t);
        }
      }
    }
  }

  /** Stops handing new records to {@code send()} and waits for the sending thread to end. Idempotent. */
  public void stopSending() {
    running = false;
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Waits until every send so far has been answered (acknowledged or failed), at most {@code timeout}.
   *
   * @return whether all were answered
   */
  public boolean awaitAnswers(Duration timeout) {
    producer.flush();
    try {
      if (inFlight.tryAcquire(maxInFlight, timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        inFlight.release(maxInFlight);
        return true;
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** This producer's id. */
  public int id() {
    return id;
  }

  /** Records handed to {@code send()} so far. */
  public long sent() {
    return sent.get();
  }

  /** Records acknowledged so far. */
  public long acknowledged() {
    return acknowledged.sum();
  }

  /** The highest sequence number acknowledged so far, or -1. */
  public long highestAcknowledged() {
    return highestAcknowledged.get();
  }

  /** Records acknowledged so far in {@code partition}. */
  public long acknowledged(int partition) {
    LongAdder a = ackedByPartition.get(partition);
    return a == null ? 0 : a.sum();
  }

  /** Sends not answered yet. */
  public long unanswered() {
    return sent.get() - answered.sum();
  }

  /** Sends that failed with an error that is not retriable (anything but a retriable {@link TributaryException}). */
  public long nonRetriableFailures() {
    return nonRetriable.sum();
  }

  /** The first few non-retriable failures, described. */
  public List<String> nonRetriableExamples() {
    synchronized (nonRetriableExamples) {
      return List.copyOf(nonRetriableExamples);
    }
  }

  /** Stops sending and closes the producer, waiting at most 10 s for what is still buffered. Idempotent. */
  @Override
  public void close() {
    stopSending();
    producer.close(Duration.ofSeconds(10));
  }
}
