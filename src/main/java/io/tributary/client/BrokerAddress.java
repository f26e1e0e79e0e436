package io.tributary.client;

import java.util.ArrayList;
import java.util.List;

/**
 * One entry of a bootstrap server list: the ActorSystem name, host and Artery port of a Tributary node.
 *
 * <p>Accepted forms, comma-separated in a list: {@code host:port} (system {@value #DEFAULT_SYSTEM}), {@code
 * system@host:port}, and the same with an {@code akka://} prefix; an IPv6 host goes in brackets ({@code [::1]:9092}).
 *
 * @param system the node's ActorSystem name
 * @param host host name or address (IPv6 without brackets)
 * @param port Artery TCP port, 1 to 65535
 */
record BrokerAddress(String system, String host, int port) {

  /** The ActorSystem name of a broker node when the address does not give one. */
  static final String DEFAULT_SYSTEM = "tributary";

  /** The path of the gateway actor (a node's client listener's door) on every node. */
  static final String GATEWAY_PATH = "/system/tributary-gateway";

  /** The path of a node's own gateway on its cluster port, where clients are not served. */
  static final String NODE_GATEWAY_PATH = "/system/tributary-node-gateway";

  /**
   * Parses a comma-separated bootstrap list.
   *
   * @return the addresses in order, at least one
   * @throws IllegalArgumentException if the list is empty or an entry is malformed (the message quotes it)
   */
  static List<BrokerAddress> parseList(String servers) {
    if (servers == null || servers.isBlank()) {
      throw new IllegalArgumentException("bootstrap server list is empty");
    }
    List<BrokerAddress> out = new ArrayList<>();
    for (String entry : servers.split(",")) {
      if (!entry.isBlank()) {
        out.add(parse(entry.trim()));
      }
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException("bootstrap server list is empty: \"" + servers + "\"");
    }
    return List.copyOf(out);
  }

  /**
   * Parses one entry.
   *
   * @throws IllegalArgumentException if it is malformed
   */
  static BrokerAddress parse(String entry) {
    String s = entry.trim();
    if (s.startsWith("akka://")) {
      s = s.substring("akka://".length());
    }
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    String system = DEFAULT_SYSTEM;
    int at = s.indexOf('@');
    if (at >= 0) {
      system = s.substring(0, at);
      s = s.substring(at + 1);
      if (system.isEmpty() || !system.matches("[a-zA-Z0-9][a-zA-Z0-9_-]*")) {
        throw bad(entry, "invalid ActorSystem name \"" + system + "\"");
      }
    }
    String host;
    String portText;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw bad(entry, "expected [ipv6]:port");
      }
      host = s.substring(1, close);
      portText = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon < 0) {
        throw bad(entry, "expected host:port");
      }
      host = s.substring(0, colon);
      portText = s.substring(colon + 1);
      if (host.indexOf(':') >= 0) {
        throw bad(entry, "put an IPv6 address in brackets, as [::1]:9092");
      }
    }
    if (host.isEmpty()) {
      throw bad(entry, "the host is empty");
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw bad(entry, "the port \"" + portText + "\" is not a number");
    }
    if (port < 1 || port > 65535) {
      throw bad(entry, "the port " + port + " is not in [1, 65535]");
    }
    return new BrokerAddress(system, host, port);
  }

  /**
   * {@code addresses} with each entry whose host is a name preceded by the same entry at each address the name
   * resolves to (in resolver order, duplicates left out): a node's Artery address is the host it was given
   * (127.0.0.1 by default), and Artery drops a message addressed to {@code localhost} at a node bound as
   * {@code 127.0.0.1}; so {@code localhost:9092} works wherever {@code 127.0.0.1:9092} does (a node bound by its name
   * answers at the name, a second later: the client prefers the earlier entries of the list for that long). A name
   * that does not resolve stays alone.
   *
   * @param addresses a parsed bootstrap list
   * @return the list to probe, the entries of {@code addresses} in their order
   */
  static List<BrokerAddress> withResolvedForms(List<BrokerAddress> addresses) {
    java.util.LinkedHashSet<BrokerAddress> out = new java.util.LinkedHashSet<>();
    for (BrokerAddress a : addresses) {
      if (!isLiteral(a.host())) {
        try {
          for (java.net.InetAddress ip : java.net.InetAddress.getAllByName(a.host())) {
            out.add(new BrokerAddress(a.system(), ip.getHostAddress(), a.port()));
          }
        } catch (java.net.UnknownHostException e) {
          // left as given: the connection attempt reports the unknown host
        }
      }
      out.add(a);
    }
    return List.copyOf(out);
  }

  /** Whether {@code host} is an IPv4 or IPv6 address rather than a name. */
  private static boolean isLiteral(String host) {
    return host.indexOf(':') >= 0 || host.matches("\\d{1,3}(\\.\\d{1,3}){3}");
  }

  /** The Akka address of the gateway actor on this node, {@code akka://system@host:port/system/tributary-gateway}. */
  String gatewayUri() {
    return "akka://" + system + "@" + hostPort() + GATEWAY_PATH;
  }

  /** The Akka address of the node's own gateway if this address is a node's cluster port. */
  String nodeGatewayUri() {
    return "akka://" + system + "@" + hostPort() + NODE_GATEWAY_PATH;
  }

  /** {@code host:port} (IPv6 in brackets), for messages. */
  String hostPort() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  private static IllegalArgumentException bad(String entry, String why) {
    return new IllegalArgumentException("invalid bootstrap server \"" + entry + "\": " + why);
  }
}
