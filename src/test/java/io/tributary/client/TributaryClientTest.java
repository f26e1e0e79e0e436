package io.tributary.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tributary.protocol.ErrorCode;
import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TributaryClientTest {

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** Connects to {@code servers} with {@code request.timeout.ms}; asserts NETWORK_EXCEPTION and returns the message. */
  private static String connectFailure(String servers, Object requestTimeoutMs) {
    TributaryException e = assertThrows(TributaryException.class,
        () -> TributaryClient.connect(servers, Map.of(ClientConfig.REQUEST_TIMEOUT_MS, requestTimeoutMs)));
    assertEquals(ErrorCode.NETWORK_EXCEPTION, e.errorCode(), e.getMessage());
    return e.getMessage();
  }

  @Test
  void connectToAClosedPortFailsWithNetworkException() throws IOException {
    int port = closedPort();
    String message = connectFailure("127.0.0.1:" + port, "2000");
    // said as it is: nothing listens there; no request timed out (it fails at once)
    assertEquals("NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port + " (Connection refused):"
        + " nothing accepts connections there; is the broker running?", message);
  }

  @Test
  void connectToAPortThatAcceptsButIsNoBrokerFailsAfterTheRequestTimeoutSayingSo() throws IOException {
    // a listening socket nobody accepts on: the kernel completes TCP handshakes, nothing ever answers
    try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      int port = silent.getLocalPort();
      String message = connectFailure("127.0.0.1:" + port, "1000");
      assertEquals("NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port + " within"
          + " request.timeout.ms=1000 ms: something accepts connections there, but it is not a Tributary broker, or"
          + " not a ready one", message);
    }
  }

  /**
   * A broker killed while the client connects: its port accepted the client's TCP probe and Artery's connection,
   * then nothing listens any more. The client says so after one round of asking (not after request.timeout.ms, here a
   * minute, and not that something not a broker listens there).
   */
  @Test
  void aBrokerThatStopsWhileTheClientConnectsIsReportedAsGone() throws Exception {
    ServerSocket dying = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
    int port = dying.getLocalPort();
    java.util.List<java.net.Socket> accepted = new java.util.ArrayList<>();
    Thread acceptor = new Thread(() -> {
      try (dying) {
        accepted.add(dying.accept()); // the client's TCP probe
        accepted.add(dying.accept()); // Artery's connection: the "broker" dies now, without answering
        for (java.net.Socket s : accepted) {
          s.close();
        }
      } catch (IOException e) {
        // closed: the test is over
      }
    }, "dying-acceptor");
    acceptor.setDaemon(true);
    acceptor.start();
    try {
      String message = connectFailure("127.0.0.1:" + port, "60000");
      assertEquals("NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port + ": nothing accepts"
          + " connections there any more (it stopped while the client connected); is the broker running?",
          message);
    } finally {
      dying.close();
    }
  }

  @Test
  void connectToAPeerThatClosesEveryConnectionSaysSoWithoutBlamingATimeout() throws Exception {
    // as an HTTP server or any other service does with Artery's handshake: accept, then close
    try (ServerSocket closing = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      Thread acceptor = new Thread(() -> {
        while (!closing.isClosed()) {
          try {
            closing.accept().close();
          } catch (IOException e) {
            return; // the server socket was closed: the test is over
          }
        }
      }, "closing-acceptor");
      acceptor.setDaemon(true);
      acceptor.start();
      int port = closing.getLocalPort();
      String message = connectFailure("127.0.0.1:" + port, "30000");
      assertEquals("NETWORK_EXCEPTION: No Tributary broker answered at 127.0.0.1:" + port + ": something accepts"
          + " connections there, but it is not a Tributary broker, or not a ready one", message);
    }
  }

  @Test
  void connectToAnUnknownHostSaysTheNameDoesNotResolve() {
    String message = connectFailure("nosuchhost.invalid:9092", "2000");
    assertEquals("NETWORK_EXCEPTION: No Tributary broker answered at nosuchhost.invalid:9092 (unknown host): the host"
        + " name does not resolve", message);
  }

  @Test
  void connectWithSeveralClosedPortsNamesThemAll() throws IOException {
    int a = closedPort();
    int b = closedPort();
    String message = connectFailure("127.0.0.1:" + a + ", tributary@127.0.0.1:" + b, 1000);
    assertTrue(message.contains("127.0.0.1:" + a) && message.contains("127.0.0.1:" + b), message);
  }

  @Test
  void connectRejectsAMalformedServerListBeforeStartingAnything() {
    assertThrows(IllegalArgumentException.class, () -> TributaryClient.connect("localhost"));
    assertThrows(IllegalArgumentException.class, () -> TributaryClient.connect(""));
    assertThrows(
        IllegalArgumentException.class,
        () -> TributaryClient.connect("127.0.0.1:1", Map.of(ClientConfig.REQUEST_TIMEOUT_MS, "soon")));
  }

  @Test
  void clientSystemConfigIsARemoteNonClusterSystemOnLoopback() {
    var config = TributaryClient.clientSystemConfig();
    assertEquals("remote", config.getString("akka.actor.provider"));
    assertEquals("tcp", config.getString("akka.remote.artery.transport"));
    assertEquals("127.0.0.1", config.getString("akka.remote.artery.canonical.hostname"));
    assertEquals(0, config.getInt("akka.remote.artery.canonical.port"));
    assertFalse(config.getBoolean("akka.coordinated-shutdown.exit-jvm"));
    assertEquals("WARNING", config.getString("akka.loglevel"));
  }
}
