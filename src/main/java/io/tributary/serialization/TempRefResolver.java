package io.tributary.serialization;

import akka.actor.ActorPath;
import akka.actor.ActorRef;
import akka.actor.Address;
import akka.actor.ExtendedActorSystem;
import akka.actor.RootActorPath;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Resolves the serialized reply-to of a request from another JVM when it is a temporary actor (an ask's reply actor,
 * {@code akka://system@host:port/temp/NAME#uid}) without Akka's generic path parsing, which is a measurable part of a
 * broker's CPU per request (~3% at 100-byte records): {@code ActorRefProvider.resolveActorRef(String)} parses every
 * path with {@code java.net.URI} and then puts it into a per-thread LRU cache that a temporary path, used once, only
 * churns.
 *
 * <p>The result is the same reference Akka's resolution gives ({@link ActorRef#equals}: same path, same uid): the
 * path is built with {@link ActorPath#$div} below the {@link RootActorPath} of its address and handed to {@code
 * ActorRefProvider.resolveActorRef(ActorPath)}, which creates the same remote reference the string form does. The root
 * of an address is taken from Akka's own resolution of the first path seen with that address (at most {@value
 * #MAX_ADDRESSES} addresses are kept; beyond that the table starts again). Everything else returns {@code null},
 * and the caller resolves it as before: a path that is not below {@code /temp}, an address of this actor system (the
 * local provider also checks the uid of a local actor), a name with a character outside Akka's plain path characters
 * (e.g. a {@code %}-escape), an unparsable uid.
 *
 * <p>Thread-safe (serializers are called from any thread).
 */
final class TempRefResolver {
  /**
   * Addresses whose roots are kept (client JVMs and nodes seen); when a new one would exceed this, all are forgotten
   * and learnt again, so a broker that outlives many short-lived clients keeps the fast path for the new ones.
   */
  static final int MAX_ADDRESSES = 4096;

  private static final String SCHEME = "akka://";
  private static final String TEMP = "/temp/";

  private final ExtendedActorSystem system;
  /** "akka://system@host:port" -> its root path. */
  private final ConcurrentHashMap<String, RootActorPath> roots = new ConcurrentHashMap<>();

  private final int maxAddresses;

  TempRefResolver(ExtendedActorSystem system) {
    this(system, MAX_ADDRESSES);
  }

  /** With a smaller table, for tests. */
  TempRefResolver(ExtendedActorSystem system, int maxAddresses) {
    this.system = system;
    this.maxAddresses = maxAddresses;
  }

  /**
   * The temporary actor {@code path} names, or {@code null} if the caller must resolve it with Akka's resolver.
   *
   * @param path a serialized actor path, as {@code ActorRefResolver.toSerializationFormat} writes it
   */
  ActorRef resolve(String path) {
    int rootEnd = path.indexOf('/', SCHEME.length());
    if (rootEnd < 0 || !path.startsWith(SCHEME) || !path.startsWith(TEMP, rootEnd)) {
      return null;
    }
    RootActorPath root = roots.get(path.substring(0, rootEnd));
    if (root == null) {
      return null;
    }
    ActorPath p = root.$div("temp");
    int from = rootEnd + TEMP.length();
    while (from <= path.length()) {
      int to = path.indexOf('/', from);
      boolean last = to < 0;
      if (last) {
        to = path.length();
      }
      if (to > from) { // Akka skips empty elements ("a//b") too
        if (!plain(path, from, to, last)) {
          return null;
        }
        try {
          p = p.$div(path.substring(from, to));
        } catch (NumberFormatException e) { // a uid out of int range: Akka's resolution decides
          return null;
        }
      }
      from = to + 1;
    }
    return system.provider().resolveActorRef(p);
  }

  /**
   * Remembers the root of {@code resolved}'s address, which Akka resolved from {@code path}, so that the next
   * temporary path of that address takes {@link #resolve}: only for an address of another actor system, with a host
   * and a port, whose string form is exactly the path's prefix.
   */
  void learn(String path, ActorRef resolved) {
    if (resolved == null) {
      return;
    }
    int rootEnd = path.indexOf('/', SCHEME.length());
    if (rootEnd < 0 || !path.startsWith(SCHEME) || !path.startsWith(TEMP, rootEnd)) {
      return;
    }
    Address address = resolved.path().address();
    if (address.host().isEmpty() || address.port().isEmpty() || isLocal(address)) {
      return;
    }
    String prefix = path.substring(0, rootEnd);
    if (address.toString().equals(prefix) && !roots.containsKey(prefix)) {
      if (roots.size() >= maxAddresses) {
        roots.clear(); // each client JVM has an address of its own: forget the old ones rather than stop learning
      }
      roots.putIfAbsent(prefix, new RootActorPath(address, "/"));
    }
  }

  private boolean isLocal(Address address) {
    return address.equals(system.provider().getDefaultAddress())
        || address.equals(system.provider().rootPath().address());
  }

  /**
   * Whether {@code s[from, to)} is an actor name of ASCII letters, digits and Akka's plain path symbols only (no
   * {@code %}-escapes), the last element optionally followed by {@code #} and a decimal uid.
   */
  private static boolean plain(String s, int from, int to, boolean last) {
    for (int i = from; i < to; i++) {
      char c = s.charAt(i);
      if (c == '#') {
        if (!last || i == from || i + 1 >= to) {
          return false;
        }
        int d = s.charAt(i + 1) == '-' ? i + 2 : i + 1;
        if (d >= to) {
          return false;
        }
        for (int j = d; j < to; j++) {
          char x = s.charAt(j);
          if (x < '0' || x > '9') {
            return false;
          }
        }
        return true;
      }
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "-_.*$+:@&=,!~';".indexOf(c) >= 0)) {
        return false;
      }
    }
    return true;
  }
}
