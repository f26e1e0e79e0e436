package akka.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.AbstractActor;
import akka.actor.ActorRef;
import akka.actor.ActorSystem;
import akka.actor.Props;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.stream.javadsl.Flow;
import akka.stream.javadsl.Sink;
import akka.stream.javadsl.Tcp;
import akka.util.ByteString;
import io.tributary.net.ReadingSelector;
import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Tributary's {@link TcpIncomingConnection} (replacing Akka's), whose pull-mode connections are read on
 * {@link ReadingSelector}: every byte arrives once and in order, whether the reader waits for bytes (the selector
 * reads) or bytes wait for the reader (the connection actor reads); a peer's close, and a reset, end the server's
 * stream; many connections share the selector; a push-mode connection still works through Akka's selector.
 */
class TcpIncomingConnectionTest {
  private static final ActorTestKit KIT = ActorTestKit.create();
  private static final long WAIT_S = 30;

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void theReplacementIsTheClassLoaded() throws Exception {
    assertTrue(Class.forName("akka.io.TcpIncomingConnection").getField("READS_ON_SELECTOR").getBoolean(null));
  }

  /** An echo server over akka-stream's TCP (pull mode, as Artery's inbound connections); its bound port. */
  private static int echoServer(Flow<ByteString, ByteString, ?> handler) throws Exception {
    Tcp.ServerBinding binding = Tcp.get(KIT.system()).bind("127.0.0.1", 0)
        .to(Sink.foreach(connection -> connection.handleWith(handler, KIT.system())))
        .run(KIT.system())
        .toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
    return binding.localAddress().getPort();
  }

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static Socket connect(int port) throws Exception {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", port), (int) TimeUnit.SECONDS.toMillis(WAIT_S));
    s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(WAIT_S));
    s.setTcpNoDelay(true);
    return s;
  }

  @Test
  void requestsSentOneAtATimeAreEchoedWholeAndInOrder() throws Exception {
    // each request is written only after the previous one came back: the reader is waiting, the selector reads
    int port = echoServer(Flow.create());
    long selectorReadsBefore = ReadingSelector.get().selectorReads();
    try (Socket s = connect(port)) {
      OutputStream out = s.getOutputStream();
      DataInputStream in = new DataInputStream(s.getInputStream());
      Random sizes = new Random(7);
      for (int i = 0; i < 300; i++) {
        byte[] request = random(1 + sizes.nextInt(i % 10 == 0 ? 300_000 : 20_000), i);
        out.write(request);
        out.flush();
        byte[] echo = new byte[request.length];
        in.readFully(echo);
        assertArrayEquals(request, echo, "request " + i);
      }
    }
    // requests that found the reader waiting were read by the selector's thread (most; at least a tenth)
    assertTrue(ReadingSelector.get().selectorReads() - selectorReadsBefore >= 30,
        "reads on the selector: " + (ReadingSelector.get().selectorReads() - selectorReadsBefore));
  }

  @Test
  void aPipelinedStreamIntoASlowReaderArrivesWholeAndInOrder() throws Exception {
    // bytes wait for the reader (throttled): the connection actor reads them as Akka's, the selector in between
    int port = echoServer(Flow.<ByteString>create().throttle(200, Duration.ofMillis(10)));
    byte[] sent = random(6 * 1024 * 1024, 42);
    try (Socket s = connect(port)) {
      CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
        try {
          byte[] echo = new byte[sent.length];
          new DataInputStream(s.getInputStream()).readFully(echo);
          return echo;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      OutputStream out = s.getOutputStream();
      Random sizes = new Random(3);
      for (int off = 0; off < sent.length; ) {
        int n = Math.min(sent.length - off, 1 + sizes.nextInt(100_000));
        out.write(sent, off, n);
        off += n;
      }
      out.flush();
      assertArrayEquals(sent, received.get(WAIT_S, TimeUnit.SECONDS));
    }
  }

  @Test
  void aPeersCloseCompletesTheServersStreamWithEveryByte() throws Exception {
    CompletableFuture<Long> total = new CompletableFuture<>();
    int port = boundPort(total);
    byte[] sent = random(1_000_000, 9);
    try (Socket s = connect(port)) {
      s.getOutputStream().write(sent);
      s.shutdownOutput();  // FIN: the server's stream completes after the last byte
      assertEquals(sent.length, total.get(WAIT_S, TimeUnit.SECONDS));
      // the server echoed every byte and then closed its side
      assertArrayEquals(sent, s.getInputStream().readAllBytes());
    }
  }

  /** A server whose connection completes {@code total} with the number of bytes it read; its bound port. */
  private static int boundPort(CompletableFuture<Long> total) throws Exception {
    Tcp.ServerBinding binding = Tcp.get(KIT.system()).bind("127.0.0.1", 0)
        .to(Sink.foreach(connection -> connection.flow()
            .joinMat(Flow.<ByteString>create().alsoToMat(
                Sink.fold(0L, (acc, b) -> acc + b.length()), (m1, m2) -> m2), (m1, m2) -> m2)
            .run(KIT.system())
            .whenComplete((n, e) -> {
              if (e != null) total.completeExceptionally(e);
              else total.complete(n);
            })))
        .run(KIT.system()).toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
    return binding.localAddress().getPort();
  }

  @Test
  void aResetConnectionEndsTheServersStream() throws Exception {
    CompletableFuture<Long> total = new CompletableFuture<>();
    int port = boundPort(total);
    try (Socket s = connect(port)) {
      s.getOutputStream().write(random(50_000, 1));
      s.setSoLinger(true, 0);  // close sends RST
    }
    // completes or fails, but ends: the connection actor and the selector let go of the socket
    CompletableFuture<Object> ended = total.handle((n, e) -> e == null ? n : e);
    ended.get(WAIT_S, TimeUnit.SECONDS);
  }

  @Test
  void manyConnectionsAtOnceShareTheSelector() throws Exception {
    int port = echoServer(Flow.create());
    List<CompletableFuture<Void>> clients = new ArrayList<>();
    for (int c = 0; c < 16; c++) {
      int id = c;
      clients.add(CompletableFuture.runAsync(() -> {
        try (Socket s = connect(port)) {
          DataInputStream in = new DataInputStream(s.getInputStream());
          for (int i = 0; i < 50; i++) {
            byte[] request = random(1 + (i * 997 + id * 31) % 40_000, id * 1000L + i);
            s.getOutputStream().write(request);
            byte[] echo = new byte[request.length];
            in.readFully(echo);
            assertArrayEquals(request, echo, "client " + id + " request " + i);
          }
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }));
    }
    CompletableFuture.allOf(clients.toArray(new CompletableFuture<?>[0])).get(WAIT_S, TimeUnit.SECONDS);
  }

  /** A classic akka.io echo handler for one push-mode connection. */
  static final class PushEcho extends AbstractActor {
    private final ActorRef connection;

    PushEcho(ActorRef connection) {
      this.connection = connection;
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(akka.io.Tcp.Received.class, r -> connection.tell(TcpMessage.write(r.data()), self()))
          .match(akka.io.Tcp.ConnectionClosed.class, c -> getContext().stop(self()))
          .build();
    }
  }

  /** Binds push mode ({@code pullMode = false}) and echoes each connection; tells {@code bound} the port. */
  static final class PushServer extends AbstractActor {
    private final CompletableFuture<Integer> bound;

    PushServer(CompletableFuture<Integer> bound) {
      this.bound = bound;
    }

    @Override
    public void preStart() {
      akka.io.Tcp.get(getContext().getSystem()).manager()
          .tell(TcpMessage.bind(self(), new InetSocketAddress("127.0.0.1", 0), 100), self());
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(akka.io.Tcp.Bound.class, b -> bound.complete(b.localAddress().getPort()))
          .match(akka.io.Tcp.CommandFailed.class, f -> bound.completeExceptionally(new IllegalStateException("" + f)))
          .match(akka.io.Tcp.Connected.class, c -> {
            ActorRef connection = sender();  // not sender() inside the creator: that runs later, on another thread
            ActorRef handler = getContext().actorOf(Props.create(PushEcho.class, () -> new PushEcho(connection)));
            connection.tell(TcpMessage.register(handler), self());
          })
          .build();
    }
  }

  @Test
  void aPushModeConnectionStillWorksThroughAkkasSelector() throws Exception {
    CompletableFuture<Integer> bound = new CompletableFuture<>();
    ActorSystem classic = ActorSystem.create("push-mode");
    try (Socket s = connect(pushServer(classic, bound))) {
      byte[] sent = random(200_000, 5);
      s.getOutputStream().write(sent);
      byte[] echo = new byte[sent.length];
      InputStream in = s.getInputStream();
      new DataInputStream(in).readFully(echo);
      assertArrayEquals(sent, echo);
    } finally {
      classic.terminate();
      classic.getWhenTerminated().toCompletableFuture().get(WAIT_S, TimeUnit.SECONDS);
    }
  }

  private static int pushServer(ActorSystem classic, CompletableFuture<Integer> bound) throws Exception {
    classic.actorOf(Props.create(PushServer.class, () -> new PushServer(bound)));
    return bound.get(WAIT_S, TimeUnit.SECONDS);
  }
}
