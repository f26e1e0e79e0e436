package io.tributary.log;

import akka.dispatch.DispatcherPrerequisites;
import akka.dispatch.Envelope;
import akka.dispatch.ExecutorServiceConfigurator;
import akka.dispatch.ExecutorServiceFactory;
import akka.dispatch.Mailbox;
import akka.persistence.AtomicWrite;
import akka.persistence.JournalProtocol;
import akka.persistence.PersistentEnvelope;
import akka.persistence.PersistentRepr;
import com.typesafe.config.Config;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of the journals' dispatcher ({@code tributary.journal.dispatcher}, an Akka
 * {@code ExecutorServiceConfigurator}): a journal's small writes run on the thread of the actor that sends them, while
 * the journal is idle and LevelDB keeps up; everything else runs on the journals' own threads.
 *
 * <h2>Why</h2>
 * A partition leader persists a record batch by sending the journal a write and waiting for its reply. With the
 * journal on a thread of its own (Akka's default for journal plugins), every write wakes that thread, and its reply
 * wakes the actors' thread again: two thread wake-ups (futex, context switch; on a VM an inter-processor interrupt
 * each) per produce request, besides the one that brings the request in. Kafka's request path has one hand-off
 * (network thread to request handler thread). Run on the sender's thread, the write is a function call: the leader
 * finds the journal's replies in its own mailbox when its current message is done, on the same thread.
 *
 * <h2>When a journal's mailbox runs on the caller's thread</h2>
 * Akka hands this executor a journal's mailbox when a message arrives while the journal is idle (the mailbox is not
 * already scheduled: Akka runs one mailbox on one thread at a time). It runs it right there, on the calling thread,
 * only if all of these hold, and otherwise passes it to the journals' own threads:
 *
 * <ul>
 *   <li>the caller is a thread of a fork-join pool (the actors' dispatcher), not one of the journals' or the read
 *       threads, and it is not already running a journal mailbox (no nesting);
 *   <li>the next message is a journal write ({@link JournalProtocol.WriteMessages}) of at most {@code inline-max-bytes}
 *       of record batches: never a deletion, a replay or LevelDB's range compaction after deletions, which may take
 *       seconds (the dispatcher's {@code throughput = 1} makes a run process exactly that one message);
 *   <li>the journal has no system message waiting (its start, its stop, which closes the store after reads in
 *       progress, a death watch);
 *   <li>LevelDB's last look (at most 50 ms before the journal's last write) found fewer than
 *       {@value TunedLeveldbJournal#LEVEL0_BEHIND} level-0 tables: with more, compaction is behind and LevelDB will
 *       soon delay writes ({@link TunedLeveldbJournal#writesMayStall});
 *   <li>no write of any journal of this dispatcher took longer than {@code stall-threshold} within the last
 *       {@code hand-off-after-stall}. LevelDB delays a write when its level-0 tables pile up (1 ms per write) and
 *       blocks it while a full memtable waits for the one before it to be flushed; a write that shows such a stall
 *       sends every write to the journals' threads for a while, so that the actors (cluster heartbeats among them)
 *       stop sharing a thread with a store that is catching up. The first stalled write still holds its caller for
 *       its duration (a memtable flush, tens of milliseconds). The default threshold, 20 ms, is above the broker's
 *       GC pauses (G1, {@code MaxGCPauseMillis=20}), which stop the write's thread too: at 2 ms, young collections
 *       during writes sent every write to the journals' threads most of the time.
 * </ul>
 *
 * <p>Measured (two brokers side by side, 10 alternating rounds after the same warm-up, broker CPU per run, medians):
 * 200k records of 100 B at 20,000 records/s, {@code acks=all}: -13%; 1M records of 100 B into 6 partitions,
 * {@code acks=1}: -13%, throughput +4%.
 *
 * <p>Keys of the dispatcher's {@code journal-executor} section: {@code threads} (int, the journals' own threads, one
 * per journal instance as Akka's default pinned dispatcher had), {@code inline-max-bytes} (size, bytes),
 * {@code stall-threshold} (duration), {@code hand-off-after-stall} (duration). {@code inline-max-bytes = 0} turns
 * running on the caller's thread off.
 *
 * <p>Thread-safe. Uses Akka internals that are public in the bytecode ({@link Mailbox#messageQueue()}, the default
 * unbounded mailbox's queue); with another mailbox type every run goes to the journals' threads.
 */
public final class JournalDispatcher extends ExecutorServiceConfigurator {
  private static final Logger log = LoggerFactory.getLogger(JournalDispatcher.class);

  private final int threads;
  private final long inlineMaxBytes;
  private final long stallThresholdNanos;
  private final long handOffNanos;

  /**
   * The constructor Akka calls with the dispatcher's config ({@code executor = "io.tributary.log.JournalDispatcher"}).
   *
   * @throws com.typesafe.config.ConfigException if a key of {@code journal-executor} is missing or of the wrong type
   * @throws IllegalArgumentException if {@code threads} is below 1 or a size or duration is negative
   */
  public JournalDispatcher(Config config, DispatcherPrerequisites prerequisites) {
    super(config, prerequisites);
    Config c = config.getConfig("journal-executor");
    this.threads = c.getInt("threads");
    this.inlineMaxBytes = c.getBytes("inline-max-bytes");
    this.stallThresholdNanos = c.getDuration("stall-threshold").toNanos();
    this.handOffNanos = c.getDuration("hand-off-after-stall").toNanos();
    if (threads < 1 || inlineMaxBytes < 0 || stallThresholdNanos < 0 || handOffNanos < 0) {
      throw new IllegalArgumentException("journal-executor: threads must be >= 1 and sizes and durations >= 0, was "
          + c.root().render());
    }
  }

  /**
   * Called by Akka once per dispatcher: the journals' pool ({@code threads} threads from Akka's {@code threadFactory},
   * idle ones end after 60 s) behind an executor that runs small writes on the caller's thread.
   *
   * @param id the dispatcher's config id, in log lines
   */
  @Override
  public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
    return () -> {
      ThreadPoolExecutor pool =
          new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threadFactory);
      pool.allowCoreThreadTimeOut(true);
      return new Executor(id, pool, inlineMaxBytes, stallThresholdNanos, handOffNanos);
    };
  }

  /** Runs small journal writes on the caller's thread, everything else on {@code pool} (see the class comment). */
  static final class Executor extends AbstractExecutorService {
    private static final ThreadLocal<Boolean> RUNNING_INLINE = new ThreadLocal<>();

    private final String id;
    private final ThreadPoolExecutor pool;
    private final long inlineMaxBytes;
    private final long stallThresholdNanos;
    private final long handOffNanos;
    // System.nanoTime() before which every run goes to the pool (a write stalled); meaningful once handOffSeen
    private final AtomicLong handOffUntil = new AtomicLong();
    private volatile boolean handOffSeen;
    private final AtomicLong inlineRuns = new AtomicLong();

    Executor(String id, ThreadPoolExecutor pool, long inlineMaxBytes, long stallThresholdNanos, long handOffNanos) {
      this.id = id;
      this.pool = pool;
      this.inlineMaxBytes = inlineMaxBytes;
      this.stallThresholdNanos = stallThresholdNanos;
      this.handOffNanos = handOffNanos;
    }

    @Override
    public void execute(Runnable task) {
      if (task instanceof Mailbox mailbox && runsHere(mailbox)) {
        RUNNING_INLINE.set(Boolean.TRUE);
        inlineRuns.incrementAndGet();
        long start = System.nanoTime();
        try {
          mailbox.run();
        } finally {
          RUNNING_INLINE.remove();
          long took = System.nanoTime() - start;
          if (took > stallThresholdNanos) {
            stalled(took);
          }
        }
        return;
      }
      pool.execute(task);
    }

    private boolean runsHere(Mailbox mailbox) {
      if (inlineMaxBytes == 0 || !(Thread.currentThread() instanceof ForkJoinWorkerThread)
          || RUNNING_INLINE.get() != null) {
        return false;
      }
      if (handOffSeen && System.nanoTime() - handOffUntil.get() < 0) {
        return false;
      }
      return !mailbox.hasSystemMessages() // e.g. the journal's stop, which closes the store: not on an actor
          && mailbox.messageQueue() instanceof Queue<?> queue
          && queue.peek() instanceof Envelope envelope
          && envelope.message() instanceof JournalProtocol.WriteMessages write
          && recordBytes(write, inlineMaxBytes) <= inlineMaxBytes
          && mailbox.actor() != null
          && !(mailbox.actor().actor() instanceof TunedLeveldbJournal journal && journal.writesMayStall());
    }

    private void stalled(long tookNanos) {
      handOffUntil.set(System.nanoTime() + handOffNanos);
      handOffSeen = true;
      log.debug("{}: a journal write on the caller's thread took {} ms; journal writes go to the journals' threads "
          + "for the next {} ms", id, tookNanos / 1_000_000, handOffNanos / 1_000_000);
    }

    /** Whether the journals' threads have nothing to run or running (for tests). */
    boolean poolIdle() {
      return pool.getActiveCount() == 0 && pool.getQueue().isEmpty();
    }

    /** Mailbox runs started on callers' threads so far (for tests). */
    long inlineRuns() {
      return inlineRuns.get();
    }

    @Override
    public void shutdown() {
      pool.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
      return pool.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
      return pool.isShutdown();
    }

    @Override
    public boolean isTerminated() {
      return pool.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
      return pool.awaitTermination(timeout, unit);
    }
  }

  /**
   * The record batch bytes of {@code write} ({@link PartitionLeader.RecordsAppended} events; other events count 64
   * bytes each), counted until they pass {@code limit}.
   */
  static long recordBytes(JournalProtocol.WriteMessages write, long limit) {
    long bytes = 0;
    scala.collection.Iterator<PersistentEnvelope> writes = write.messages().iterator();
    while (writes.hasNext() && bytes <= limit) {
      if (!(writes.next() instanceof AtomicWrite atomic)) {
        return Long.MAX_VALUE;
      }
      scala.collection.Iterator<PersistentRepr> events = atomic.payload().iterator();
      while (events.hasNext()) {
        bytes += events.next().payload() instanceof PartitionLeader.RecordsAppended r ? r.batch().length : 64;
      }
    }
    return bytes;
  }
}
