/*
 * Replaces the class of the same binary name in akka-actor 2.6.21 (Apache License 2.0, Lightbend Inc.) with the same
 * constructor and behaviour, except that a pull-mode connection's bytes are read on Tributary's reading selector.
 */
package akka.io;

import akka.actor.ActorRef;
import io.tributary.net.ReadingSelector;
import java.nio.channels.SocketChannel;
import scala.Option;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The actor of an accepted TCP connection, as Akka 2.6.21's (created by akka.io's {@code TcpListener} with the same
 * constructor arguments). One difference: a connection in pull mode ({@code Tcp.Bind(pullMode = true)}, which is how
 * akka-stream's TCP server and so Artery's inbound connections bind) is registered with
 * {@link ReadingSelector}, whose thread reads the connection's bytes when its reader has asked for them
 * ({@code ResumeReading}) and sends them on as {@code Tcp.Received}, instead of akka.io's round trip per read (the
 * selector turns read interest off, this actor reads, the reader asks again, this actor probes and the selector is
 * woken to turn read interest back on). See {@link ReadingSelector} for the protocol and the measured reason.
 *
 * <p>What stays Akka's: the messages a handler gets and when (one {@code Received} per {@code ResumeReading} at most,
 * {@code PeerClosed}, {@code ErrorClosed} and the rest), writes, closing and aborting, the registration timeout, the
 * death pact with the listener's handler; a connection in push mode uses Akka's selector and Akka's code throughout.
 * When bytes already wait as the reader asks (a busy connection), this actor reads them itself as Akka's does. After
 * end-of-stream, an I/O error or a {@code SuspendReading}, the connection goes back to Akka's behaviour for good.
 *
 * <p>Tributary's jar must come before akka-actor's on the classpath for this class to replace Akka's
 * ({@code io.tributary.broker.Tributary} warns at a broker's start when it did not), as for
 * {@code akka.remote.artery.tcp.TcpFraming}. Confined to the actor, as Akka's.
 */
public class TcpIncomingConnection extends TcpConnection {

  /** Marks this class as Tributary's replacement (looked up by reflection; see the class comment). */
  public static final boolean READS_ON_SELECTOR = true;

  private final ActorRef bindHandler;
  private final scala.collection.immutable.Iterable<Inet.SocketOption> options;
  /** The read state on the reading selector; null in push mode (Akka's selector and behaviour). */
  private final ReadingSelector.Reads reads;
  /** True while Akka's resumeReading probes the channel on this actor's thread (its doRead must read then). */
  private boolean probing;

  /**
   * Akka's constructor, called by akka.io's {@code TcpListener} through {@code Props}.
   *
   * @param registry Akka's selector, used in push mode only
   * @param readThrottling pull mode: read only when the handler sends {@code ResumeReading}
   */
  public TcpIncomingConnection(
      TcpExt tcp,
      SocketChannel channel,
      ChannelRegistry registry,
      ActorRef bindHandler,
      scala.collection.immutable.Iterable<Inet.SocketOption> options,
      boolean readThrottling) {
    super(tcp, channel, readThrottling);
    this.bindHandler = bindHandler;
    this.options = options;
    signDeathPact(bindHandler);
    if (readThrottling) {
      TcpExt.Settings settings = tcp.Settings();
      int maxRead = Math.min(settings.DirectBufferSize(), settings.ReceivedMessageSizeLimit());
      reads = ReadingSelector.get().register(channel, self(), maxRead);
    } else {
      reads = null;
      registry.register(channel, 0, self());
    }
  }

  @Override
  public PartialFunction<Object, BoxedUnit> receive() {
    return new AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(Object message) {
        return message instanceof ChannelRegistration;
      }

      @Override
      public <A1, B1> B1 applyOrElse(A1 message, scala.Function1<A1, B1> fallback) {
        if (!(message instanceof ChannelRegistration)) return fallback.apply(message);
        completeConnect((ChannelRegistration) message, bindHandler, options);
        @SuppressWarnings("unchecked")
        B1 unit = (B1) BoxedUnit.UNIT;
        return unit;
      }
    };
  }

  /**
   * {@code ResumeReading}: records the demand, for the reading selector to read the next bytes when they arrive;
   * when read interest is off (bytes may already wait) or after end-of-stream, reads here as Akka's does.
   */
  @Override
  public void resumeReading(TcpConnection.ConnectionInfo info, Option<ActorRef> closeCommander) {
    if (reads != null && reads.demand(info.handler())) return;
    probing = true;
    try {
      super.resumeReading(info, closeCommander);
    } finally {
      probing = false;
    }
  }

  /** Akka's read, when this actor reads (see {@link #resumeReading}); a stale {@code ChannelReadable} is ignored. */
  @Override
  public void doRead(TcpConnection.ConnectionInfo info, Option<ActorRef> closeCommander) {
    if (reads == null || probing || reads.actorReads()) super.doRead(info, closeCommander);
  }

  /** {@code SuspendReading}: Akka's, and Akka's behaviour for good. */
  @Override
  public void suspendReading(TcpConnection.ConnectionInfo info) {
    if (reads != null) reads.toActor();
    super.suspendReading(info);
  }
}
