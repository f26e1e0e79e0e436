package io.tributary.net;

import akka.actor.ActorRef;
import akka.io.ChannelRegistration;
import akka.io.SelectionHandler;
import akka.io.Tcp;
import akka.util.ByteString;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Function0;
import scala.runtime.BoxedUnit;

/**
 * The selector of incoming pull-mode akka.io TCP connections (Artery's inbound connections, any akka-stream TCP
 * server): one thread per JVM ({@value #THREAD_NAME}) that waits for the connections' readiness and, unlike akka.io's
 * selector, reads a connection's bytes itself when the connection's reader has asked for them, as Kafka's network
 * threads read on the thread that selects. Used by {@code akka.io.TcpIncomingConnection} (Tributary's replacement of
 * Akka's class of that name); everything else of akka.io keeps Akka's selectors.
 *
 * <p><b>Why.</b> akka.io's selector takes a connection's read interest off each time the connection is readable and
 * sends the connection actor {@code ChannelReadable}; the actor reads once and hands the bytes on, and when the reader
 * (akka-stream's TCP stage) wants more, it sends {@code ResumeReading}, the actor probes with a read that finds
 * nothing, and asks the selector to watch the connection again, waking the selector's thread for it. With requests
 * that arrive one at a time (a producer at 20,000 records/s sends ~130 requests/s), that is per request: two wake-ups
 * of the selector thread, an eventfd write and read, an {@code epoll_ctl} delete and add, a read that returns
 * nothing, and two messages to the connection actor. Here read interest stays on while the reader keeps up: on
 * {@code ResumeReading} the connection actor only records the demand ({@link Reads#demand()}, a compare-and-set),
 * and the selector thread reads the bytes when they arrive and sends them to the reader as Akka's actor would
 * ({@code Tcp.Received}, sender the connection actor).
 *
 * <p><b>Protocol</b> (per connection, {@link Reads}): {@code OFF} = read interest off, the connection actor may read
 * (it probes on {@code ResumeReading}, as Akka's does, so that a busy connection is read without the selector);
 * {@code DEMAND} = read interest on, the reader wants one chunk: the selector reads it (at most
 * {@code akka.io.tcp.direct-buffer-size} and {@code max-received-message-size} bytes, as Akka's actor) and moves to
 * {@code IDLE}; {@code IDLE} = read interest on, no demand: readiness now turns interest off ({@code OFF}), a
 * {@code ResumeReading} first moves back to {@code DEMAND}; {@code ACTOR} = Akka's behaviour for good (after
 * end-of-stream, an I/O error, or {@code SuspendReading}): the selector turns interest off and sends
 * {@code ChannelReadable}, the actor reads. Exactly one side reads in each state, so at most one {@code Received}
 * goes out per {@code ResumeReading}, which akka-stream's stage relies on.
 *
 * <p>Interest changes, registrations and closes run on the selector thread ({@link #execute}), as Akka's; a closed
 * connection's {@code andThen} runs after the selector has selected once more, so that the socket has left the
 * kernel's epoll set (Akka's reason, JDK 11+).
 *
 * <p>Thread-safe. The thread is a daemon and lives as long as the JVM; it blocks in {@code select} when no connection
 * is active (no periodic wake-ups but one every {@value #MAX_SELECT_MILLIS} ms, as Akka's selector).
 */
public final class ReadingSelector {

  /** The name of the selector's thread. */
  public static final String THREAD_NAME = "tributary-tcp-reads";

  /** The longest a {@code select} blocks, in ms; Akka's {@code SelectionHandler.MaxSelectMillis}. */
  static final long MAX_SELECT_MILLIS = 10_000;

  private static final Logger LOG = LoggerFactory.getLogger(ReadingSelector.class);

  private static volatile ReadingSelector instance;

  private final Selector selector;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean wakeUp = new AtomicBoolean(false);
  /** Runs after the next select (selector thread only). */
  private List<Runnable> afterNextSelect = new ArrayList<>();
  /** Reads done on the selector thread that handed bytes on (diagnostics and tests). */
  private final LongAdder selectorReads = new LongAdder();
  /** The selector thread's read buffer, grown to the largest read any connection allows. */
  private ByteBuffer buffer = ByteBuffer.allocateDirect(64 * 1024);

  private ReadingSelector() throws IOException {
    selector = Selector.open();
    Thread thread = new Thread(this::loop, THREAD_NAME);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * The JVM's reading selector, started at the first call.
   *
   * @throws IllegalStateException when no selector can be opened (the JDK's {@link Selector#open} failed)
   */
  public static ReadingSelector get() {
    ReadingSelector s = instance;
    if (s == null) {
      synchronized (ReadingSelector.class) {
        s = instance;
        if (s == null) {
          try {
            s = instance = new ReadingSelector();
          } catch (IOException e) {
            throw new IllegalStateException("cannot open the selector of incoming TCP connections", e);
          }
        }
      }
    }
    return s;
  }

  /**
   * Registers a connected, non-blocking channel with no interest; once registered (on the selector thread), sends
   * {@code connection} its {@link ChannelRegistration} (whose {@code enableInterest}, {@code disableInterest} and
   * {@code cancelAndClose} behave as Akka's). A channel closed meanwhile is not registered and nothing is sent, as
   * Akka's {@code ChannelRegistry}.
   *
   * @param maxReadBytes the most bytes one read hands on (Akka's {@code direct-buffer-size}, capped at
   *     {@code max-received-message-size}), at least 1
   * @return the connection's read state, through which its actor records demand
   */
  public Reads register(SocketChannel channel, ActorRef connection, int maxReadBytes) {
    Reads reads = new Reads(channel, connection, Math.max(1, maxReadBytes));
    execute(() -> {
      try {
        reads.key = channel.register(selector, 0, reads);
        connection.tell(reads.registration, ActorRef.noSender());
      } catch (ClosedChannelException e) {
        // closed in the same moment: the connection actor times out waiting for its registration, as with Akka's
      }
    });
    return reads;
  }

  /** How many reads the selector thread made that handed bytes on, since the JVM started. */
  public long selectorReads() {
    return selectorReads.sum();
  }

  private void execute(Runnable task) {
    tasks.add(task);
    if (wakeUp.compareAndSet(false, true)) selector.wakeup();
  }

  private void loop() {
    while (selector.isOpen()) {
      try {
        List<Runnable> thunks = afterNextSelect;
        afterNextSelect = new ArrayList<>();
        int n = thunks.isEmpty() ? selector.select(MAX_SELECT_MILLIS) : selector.selectNow();
        wakeUp.set(false);
        if (n > 0) {
          Iterator<SelectionKey> it = selector.selectedKeys().iterator();
          while (it.hasNext()) {
            SelectionKey key = it.next();
            it.remove();
            if (key.isValid()) ready(key);
          }
        }
        for (Runnable thunk : thunks) run(thunk);
        Runnable task;
        while ((task = tasks.poll()) != null) run(task);
      } catch (Throwable t) {  // the thread must go on: every incoming connection of the JVM depends on it
        LOG.error("Selector of incoming TCP connections: {}", t.toString(), t);
      }
    }
  }

  private static void run(Runnable task) {
    try {
      task.run();
    } catch (CancelledKeyException e) {
      // the connection was closed meanwhile, as in Akka's selector
    } catch (RuntimeException e) {
      LOG.error("Selector task of incoming TCP connections failed: {}", e.toString(), e);
    }
  }

  private void ready(SelectionKey key) {
    Reads reads = (Reads) key.attachment();
    try {
      int readyOps = key.readyOps();
      int other = readyOps & ~SelectionKey.OP_READ;
      if (other != 0) {
        key.interestOps(key.interestOps() & ~other);
        if ((other & SelectionKey.OP_WRITE) != 0) {
          reads.connection.tell(SelectionHandler.ChannelWritable$.MODULE$, ActorRef.noSender());
        }
        if ((other & SelectionKey.OP_CONNECT) != 0) {
          reads.connection.tell(SelectionHandler.ChannelConnectable$.MODULE$, ActorRef.noSender());
        }
      }
      if ((readyOps & SelectionKey.OP_READ) != 0) readable(key, reads);
    } catch (CancelledKeyException e) {
      // closed by its actor meanwhile
    }
  }

  private void readable(SelectionKey key, Reads reads) {
    AtomicInteger state = reads.state;
    for (;;) {
      int s = state.get();
      if (s == Reads.DEMAND) {
        if (state.compareAndSet(Reads.DEMAND, Reads.IDLE)) {
          read(key, reads);
          return;
        }
      } else if (s == Reads.IDLE) {
        if (state.compareAndSet(Reads.IDLE, Reads.OFF)) {
          key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
          return;
        }
      } else {  // OFF (a readiness selected before interest went off) or ACTOR (Akka's behaviour)
        key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
        if (s == Reads.ACTOR) reads.connection.tell(SelectionHandler.ChannelReadable$.MODULE$, ActorRef.noSender());
        return;
      }
    }
  }

  private void read(SelectionKey key, Reads reads) {
    if (buffer.capacity() < reads.maxReadBytes) buffer = ByteBuffer.allocateDirect(reads.maxReadBytes);
    ByteBuffer b = buffer;
    b.clear();
    b.limit(reads.maxReadBytes);
    int n;
    try {
      n = reads.channel.read(b);
    } catch (IOException e) {
      n = -1;  // the actor reads again and reports the error as Akka's does
    }
    if (n > 0) {
      b.flip();
      byte[] bytes = new byte[n];
      b.get(bytes);
      reads.handler.tell(new Tcp.Received(ByteString.fromArrayUnsafe(bytes)), reads.connection);
      selectorReads.increment();
    } else if (n == 0) {
      reads.state.compareAndSet(Reads.IDLE, Reads.DEMAND);  // nothing after all: the demand stands
    } else {  // end of stream or an error: Akka's actor handles them (it reads again and gets the same)
      reads.state.set(Reads.ACTOR);
      key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
      reads.connection.tell(SelectionHandler.ChannelReadable$.MODULE$, ActorRef.noSender());
    }
  }

  /**
   * One connection's read state (see the class comment for the protocol). The connection actor calls
   * {@link #demand}, {@link #actorReads} and {@link #toActor} from its own thread; the selector thread reads.
   */
  public final class Reads {
    static final int OFF = 0;
    static final int DEMAND = 1;
    static final int IDLE = 2;
    static final int ACTOR = 3;

    final SocketChannel channel;
    final ActorRef connection;
    final int maxReadBytes;
    final AtomicInteger state = new AtomicInteger(OFF);
    /** The reader of the bytes, set by the actor before it records demand (the compare-and-set publishes it). */
    volatile ActorRef handler;
    /** Set on the selector thread at registration, before the actor gets {@link #registration}. */
    volatile SelectionKey key;
    final ChannelRegistration registration = new Registration();

    Reads(SocketChannel channel, ActorRef connection, int maxReadBytes) {
      this.channel = channel;
      this.connection = connection;
      this.maxReadBytes = maxReadBytes;
    }

    /**
     * Records that {@code reader} wants the next bytes (the connection actor's {@code ResumeReading}).
     *
     * @return true when recorded, and the selector will read; false when the actor must read itself, as Akka's
     *     (state {@code OFF}: read interest is off, so bytes may already wait; or {@code ACTOR})
     */
    public boolean demand(ActorRef reader) {
      handler = reader;
      for (;;) {
        int s = state.get();
        if (s == DEMAND) return true;
        if (s == IDLE) {
          if (state.compareAndSet(IDLE, DEMAND)) return true;
        } else {
          return false;
        }
      }
    }

    /** Whether Akka's behaviour holds for good (state {@code ACTOR}): the actor reads on {@code ChannelReadable}. */
    public boolean actorReads() {
      return state.get() == ACTOR;
    }

    /** Akka's behaviour from now on (the actor got {@code SuspendReading}): the selector no longer reads. */
    public void toActor() {
      state.set(ACTOR);
    }

    private final class Registration implements ChannelRegistration {
      @Override
      public void enableInterest(int ops) {
        // Akka's actor enables read interest after a read that found nothing: the reader still wants bytes
        if ((ops & SelectionKey.OP_READ) != 0) state.compareAndSet(OFF, DEMAND);
        execute(() -> {
          SelectionKey k = key;
          int current = k.interestOps();
          if ((current | ops) != current) k.interestOps(current | ops);
        });
      }

      @Override
      public void disableInterest(int ops) {
        execute(() -> {
          SelectionKey k = key;
          int current = k.interestOps();
          if ((current & ~ops) != current) k.interestOps(current & ~ops);
        });
      }

      @Override
      public void cancelAndClose(Function0<BoxedUnit> andThen) {
        execute(() -> {
          SelectionKey k = key;
          if (k != null) k.cancel();
          try {
            channel.close();
          } catch (IOException | RuntimeException e) {
            LOG.debug("Closing an incoming TCP connection: {}", e.toString());
          }
          afterNextSelect.add(andThen::apply);
        });
      }
    }
  }
}
