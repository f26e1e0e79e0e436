package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.broker.TestNodes;
import io.tributary.net.PartialFrameBudget;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A broker under connections that each send most of a large Artery frame and then wait (a newcomer's ~300 such
 * connections of 1.99 MB ran a 512 MB broker out of heap): with {@code queued.max.request.bytes} lowered to 1 MiB,
 * the first connection's 700,000 bytes are held, the second one's would pass the limit and the broker closes it,
 * a client meanwhile produces and consumes as usual, and the first connection's bytes return to the budget when it
 * closes.
 */
class PartialFrameBudgetIntegrationTest {
  private static final int LIMIT = 1 << 20;
  private static final int PARTIAL = 700_000;
  private OneNode one;
  private long limitBefore = PartialFrameBudget.limit();
  private final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
    PartialFrameBudget.setLimit(limitBefore);
    PartialFrameBudget.setTimeoutMs(PartialFrameBudget.DEFAULT_TIMEOUT_MS);
    if (one != null) {
      one.close();
    }
  }

  private static void await(String what, BooleanSupplier condition) {
    io.tributary.testing.Await.await(what, condition, () -> "held: " + PartialFrameBudget.used());
  }

  /**
   * Connects to the broker's Artery port and sends the magic, stream id 2 and PARTIAL bytes of a 1.9 MB frame, or as
   * many of them as the broker reads before it closes the connection.
   */
  private Socket partialFrame(int port) throws IOException {
    Socket s = new Socket();
    sockets.add(s);
    s.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
    ByteBuffer head = ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN);
    head.put("AKKA".getBytes(StandardCharsets.US_ASCII)).put((byte) 2).putInt(1_900_000);
    OutputStream out = s.getOutputStream();
    byte[] body = new byte[PARTIAL - 4];
    body[12] = 5; // where an envelope has its serializer id (the frame never completes anyway)
    try {
      out.write(head.array());
      out.write(body);
      out.flush();
    } catch (IOException closedWhileWriting) {
      // the broker closed it before all was written (a connection past the budget): the caller sees it closed
    }
    return s;
  }

  /** True when the peer closed or reset the connection within 30 s. */
  private static boolean closedByPeer(Socket s) throws IOException {
    s.setSoTimeout(30_000);
    InputStream in = s.getInputStream();
    try {
      return in.read() == -1;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException reset) {
      return true;
    }
  }

  @Test
  void connectionsPastTheBudgetAreClosedAndTheBrokerServesOn() throws Exception {
    one = OneNode.start();
    limitBefore = PartialFrameBudget.limit();
    await("no incomplete frames held", () -> PartialFrameBudget.used() == 0);
    PartialFrameBudget.setLimit(LIMIT);
    PartialFrameBudget.setTimeoutMs(0); // the first connection holds its bytes for as long as this test takes
    int port = TestNodes.clientPort(one.node);

    Socket first = partialFrame(port);
    await("the first connection's bytes held", () -> PartialFrameBudget.used() == PARTIAL);
    long refusedBefore = PartialFrameBudget.refusedConnections();
    Socket second = partialFrame(port);
    assertTrue(closedByPeer(second), "the broker closes the connection that would pass the budget");
    assertTrue(PartialFrameBudget.refusedConnections() > refusedBefore);
    assertEquals(PARTIAL, PartialFrameBudget.used(), "the refused connection holds nothing");

    // the broker serves a client as usual meanwhile
    try (Admin admin = one.client.admin()) {
      admin.createTopic("budget", 1, (short) 1, Map.of());
    }
    List<CompletionStage<RecordMetadata>> sent = new ArrayList<>();
    try (Producer<String, String> producer =
        one.client.producer(Map.of(ClientConfig.ACKS, "all"), Serializer.string(), Serializer.string())) {
      for (int i = 0; i < 500; i++) {
        sent.add(producer.send(new ProducerRecord<>("budget", null, "value-" + i)));
      }
      producer.flush();
    }
    for (int i = 0; i < sent.size(); i++) {
      assertEquals(i, sent.get(i).toCompletableFuture().get(30, TimeUnit.SECONDS).offset());
    }
    try (Consumer<String, String> consumer = one.client.consumer(
        Map.of(ClientConfig.AUTO_OFFSET_RESET, "earliest"), Deserializer.string(), Deserializer.string())) {
      consumer.assign(List.of(new TopicPartition("budget", 0)));
      List<String> read = new ArrayList<>();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (read.size() < 500 && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          read.add(r.value());
        }
      }
      assertEquals(500, read.size());
      assertEquals("value-499", read.get(499));
    }

    // the first connection still holds its bytes until it closes
    assertEquals(PARTIAL, PartialFrameBudget.used());
    first.close();
    await("the first connection's bytes returned", () -> PartialFrameBudget.used() == 0);
  }

  /**
   * A peer that stops in the middle of a frame is closed after {@code incomplete.frame.timeout.ms} (1 s here) and its
   * bytes return to the budget; the broker's own client connections, idle between requests meanwhile, go on.
   */
  @Test
  void aConnectionStalledInTheMiddleOfAFrameIsClosedAfterTheTimeout() throws Exception {
    one = OneNode.start();
    limitBefore = PartialFrameBudget.limit();
    await("no incomplete frames held", () -> PartialFrameBudget.used() == 0);
    PartialFrameBudget.setTimeoutMs(1000);
    int port = TestNodes.clientPort(one.node);
    try (Admin admin = one.client.admin()) {
      admin.createTopic("stalled", 1, (short) 1, Map.of());
    }

    long timedOutBefore = PartialFrameBudget.timedOutConnections();
    Socket stalled = partialFrame(port);
    assertTrue(closedByPeer(stalled), "the broker closes a connection whose frame stays incomplete");
    assertTrue(PartialFrameBudget.timedOutConnections() > timedOutBefore);
    await("the stalled connection's bytes returned", () -> PartialFrameBudget.used() == 0);

    // the client's connections were idle for longer than the timeout: they still carry requests
    try (Producer<String, String> producer =
        one.client.producer(Map.of(ClientConfig.ACKS, "all"), Serializer.string(), Serializer.string())) {
      assertEquals(0, producer.send(new ProducerRecord<>("stalled", null, "after")).toCompletableFuture()
          .get(30, TimeUnit.SECONDS).offset());
    }
  }
}
