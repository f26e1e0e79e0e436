package io.tributary.gateway;

import akka.Done;
import akka.actor.ActorPath;
import akka.actor.Address;
import akka.actor.BootstrapSetup;
import akka.actor.RootActorPath;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.Props;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.cluster.ClusterEvent;
import akka.cluster.Member;
import akka.cluster.typed.Cluster;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.GatewayClosing;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.ProduceRequest;
import io.tributary.util.LogRateLimiter;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The node's client listener (Kafka's {@code listeners}): the address remote clients connect to, apart from the
 * cluster port on which members talk. It is an ActorSystem of its own, named {@value #SYSTEM_NAME}, with Artery on
 * {@code tributary.broker.listeners} ({@code HOST:PORT}), in Artery's untrusted mode, holding one actor: the door at
 * {@value Gateway#PATH}, which passes clients' requests to the node's {@link Gateway}. Nothing else of the node can be
 * reached through it:
 *
 * <ul>
 *   <li>it is not a cluster member and runs no cluster, Distributed Data, singleton or partition actor: a {@code
 *       Down}, {@code Leave} or {@code Join} (cluster messages), a Distributed Data message, any message to another
 *       path finds nothing there (dead letters);
 *   <li>untrusted mode drops {@code PoisonPill}, {@code Kill}, every system message (remote watch, remote
 *       deployment) and every actor selection except of the door's path and of Akka's remote watcher ({@code
 *       trusted-selection-paths}; the remote watcher answers the heartbeats of clients' failure detectors, which
 *       arrive by selection), so {@code Identify} by selection of any other actor goes unanswered;
 *   <li>the door passes on only the protocol's requests ({@link ClientRequest}: produce, fetch, list offsets, admin and
 *       group requests), and only when every actor reference in them ({@code replyTo}, a joining member's actor) is
 *       an actor of another JVM than the cluster's nodes: a request that would make the node answer one of its own
 *       actors (or this listener's) is dropped. Everything else is dropped; each kind of drop is logged at WARN, at
 *       most {@value LogRateLimiter#PER_WINDOW} lines per {@value LogRateLimiter#WINDOW_SECONDS} s.
 * </ul>
 *
 * <p>Each reference in a request is re-resolved in the node's own ActorSystem before the request is passed on, so
 * that the node answers and death-watches clients through its cluster transport, exactly as it would a client that
 * reached the cluster port; the listener sends clients nothing but its own liveness (Artery heartbeats, which it
 * answers so that a client's failure detector can tell a live node from a dead one) and, when it closes, a {@link
 * GatewayClosing} notice to every client it served (at most {@value #MAX_CLIENTS} remembered), so that they move to
 * another node at once. Clients cannot death-watch the door (untrusted mode drops the watch); a killed node is still
 * noticed by their failure detector, whose heartbeats the listener answers.
 *
 * <p>The listener's system runs on the node's own dispatcher (no second thread pool: a request costs one more mailbox
 * hop on the same threads). {@link #start} binds it; {@link #close} sends the notices and terminates it.
 *
 * <p>Thread-safe.
 */
public final class ClientListener {
  /** The name of the listener's ActorSystem: what a {@code host:port} bootstrap address implies. */
  public static final String SYSTEM_NAME = "tributary";

  /** The config key: {@code HOST:PORT} of the client listener, or empty for none (Kafka's {@code listeners}). */
  public static final String LISTENERS_KEY = "tributary.broker.listeners";

  /** Akka's remote watcher, which answers the heartbeats of clients' failure detectors. */
  static final String REMOTE_WATCHER_PATH = "/system/remote-watcher";

  /** The most client JVM addresses remembered for the closing notice (the least recently seen are forgotten). */
  static final int MAX_CLIENTS = 4096;

  private static final Duration NOTICE_TIMEOUT = Duration.ofSeconds(2);

  /**
   * Where the client listener binds: {@code tributary.broker.listeners}.
   *
   * @param host the interface (and the address clients use), e.g. {@code 127.0.0.1}
   * @param port the TCP port, 0..65535; 0 = any free port
   */
  public record Settings(String host, int port) {
    /**
     * Reads {@value #LISTENERS_KEY}.
     *
     * @return null when the key is empty (no client listener: only in-process clients)
     * @throws IllegalArgumentException naming the key when the value is not {@code HOST:PORT} with a port 0..65535
     * @throws com.typesafe.config.ConfigException when the key is missing or not a string
     */
    public static Settings create(Config config) {
      String value = config.getString(LISTENERS_KEY).trim();
      if (value.isEmpty()) {
        return null;
      }
      String hostPort = value.startsWith("PLAINTEXT://") ? value.substring("PLAINTEXT://".length()) : value;
      int colon = hostPort.lastIndexOf(':');
      String host = colon > 0 ? hostPort.substring(0, colon) : "";
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      String port = colon > 0 ? hostPort.substring(colon + 1) : "";
      if (host.isEmpty() || host.contains(",") || host.contains(" ") || !port.matches("\\d{1,5}")
          || Integer.parseInt(port) > 65535) {
        throw new IllegalArgumentException(LISTENERS_KEY + " must be HOST:PORT (port 0..65535, 0 = any free port) or"
            + " empty for none, was '" + value + "'");
      }
      return new Settings(host, Integer.parseInt(port));
    }
  }

  private final ActorSystem<Void> system;
  private final ActorRef<Object> door;
  private final Address address;

  private ClientListener(ActorSystem<Void> system, ActorRef<Object> door) {
    this.system = system;
    this.door = door;
    this.address = system.address();
  }

  /**
   * Binds the listener and starts its door.
   *
   * @param node the node's ActorSystem (a cluster member running {@code gateway})
   * @param gateway the node's gateway
   * @param settings where to bind
   * @return the running listener
   * @throws IllegalStateException when the port cannot be bound (e.g. it is in use), naming it
   */
  public static ClientListener start(ActorSystem<?> node, ActorRef<ClientRequest> gateway, Settings settings) {
    Map<String, Object> o = new HashMap<>();
    o.put("akka.actor.provider", "remote");
    o.put("akka.remote.artery.transport", "tcp");
    o.put("akka.remote.artery.canonical.hostname", settings.host());
    o.put("akka.remote.artery.canonical.port", settings.port());
    o.put("akka.remote.artery.bind.hostname", settings.host());
    o.put("akka.remote.artery.bind.port", "");
    o.put("akka.remote.artery.untrusted-mode", "on");
    // the remote watcher too: a client's failure detector sends its heartbeats by actor selection, and a listener
    // that dropped them would look dead to every client 5 s after it connected (heartbeats are not PossiblyHarmful;
    // watches, Terminated, PoisonPill and Kill stay dropped)
    o.put("akka.remote.artery.trusted-selection-paths", List.of(Gateway.PATH, REMOTE_WATCHER_PATH));
    o.put("akka.remote.warn-about-direct-use", "off");
    o.put("akka.remote.warn-unsafe-watch-outside-cluster", "off");
    o.put("akka.extensions", List.of());
    o.put("akka.coordinated-shutdown.exit-jvm", "off");
    o.put("akka.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    o.put("akka.jvm-shutdown-hooks", "off");
    o.put("akka.log-dead-letters", "off");
    Config config = ConfigFactory.parseMap(o).withFallback(node.settings().config());
    ActorSystem<Void> system;
    try {
      system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME,
          BootstrapSetup.create(config).withDefaultExecutionContext(node.executionContext()));
    } catch (RuntimeException e) {
      throw new IllegalStateException("Cannot open the client listener on " + settings.host() + ":" + settings.port()
          + " (" + LISTENERS_KEY + "): " + rootMessage(e), e);
    }
    ActorRef<Object> door = system.systemActorOf(Door.create(node, gateway), Gateway.NAME, Props.empty());
    return new ClientListener(system, door);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** What clients put in their bootstrap list: {@code host:port} as bound (the real port when 0 was asked). */
  public String bootstrapServer() {
    return address.getHost().orElse("127.0.0.1") + ":" + address.getPort().orElse(0);
  }

  /** The listener's Artery address, {@code akka://tributary@host:port}. */
  public Address address() {
    return address;
  }

  /** The listener's ActorSystem (tests). */
  public ActorSystem<Void> system() {
    return system;
  }

  /**
   * Tells every client it served that it is closing ({@link GatewayClosing}), waits until each has answered that it
   * took the notice (at most {@code 2 s}: a client that has gone does not answer), then terminates its ActorSystem.
   * Idempotent.
   *
   * @return completes when the listener's system has terminated
   */
  public CompletionStage<Done> close() {
    CompletableFuture<Done> noticed = new CompletableFuture<>();
    door.tell(new Close(noticed));
    return noticed
        .completeOnTimeout(Done.getInstance(), NOTICE_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
        .thenCompose(d -> {
          system.terminate();
          return system.getWhenTerminated();
        });
  }

  /** The door's local command: send the closing notices, then complete {@code done}. Not serializable. */
  private record Close(CompletableFuture<Done> done) implements akka.actor.NoSerializationVerificationNeeded {}

  /** The request could not be passed on: why, for the log. */
  private static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** The door: checks a client's request, re-resolves its references in the node's system, passes it on. */
  private static final class Door {
    private final ActorContext<Object> ctx;
    private final ActorRef<ClientRequest> gateway;
    private final akka.actor.ActorRefProvider nodeProvider;
    private final Cluster cluster;
    private final Address nodeAddress;
    private final Address self;
    private final LogRateLimiter warnings;
    /** Client JVMs served, least recently seen first, for the closing notice. */
    private final LinkedHashMap<Address, Boolean> clients = new LinkedHashMap<>(16, 0.75f, true);
    /** While closing: the clients told that have not answered yet ({@link GatewayClosing.Seen}). */
    private final Set<String> unanswered = new java.util.HashSet<>();
    private Close closing;
    private ClusterEvent.CurrentClusterState seenState;
    private Set<Address> members = Set.of();

    private Door(ActorContext<Object> ctx, ActorSystem<?> node, ActorRef<ClientRequest> gateway) {
      this.ctx = ctx;
      this.gateway = gateway;
      this.nodeProvider = ((akka.actor.ExtendedActorSystem) Adapter.toClassic(node)).provider();
      this.cluster = Cluster.get(node);
      this.nodeAddress = node.address();
      this.self = ctx.getSystem().address();
      this.warnings = new LogRateLimiter((source, notice) -> ctx.getLog().warn(notice));
    }

    static Behavior<Object> create(ActorSystem<?> node, ActorRef<ClientRequest> gateway) {
      return Behaviors.setup(ctx -> {
        Door door = new Door(ctx, node, gateway);
        return Behaviors.receive(Object.class).onAnyMessage(door::onMessage).build();
      });
    }

    private Behavior<Object> onMessage(Object message) {
      if (message instanceof ClientRequest request) {
        try {
          gateway.tell(toNode(request));
        } catch (Refused e) {
          warn("request", "Dropped a " + request.getClass().getSimpleName() + " from a client: " + e.getMessage());
        }
      } else if (message instanceof Close close) {
        GatewayClosing notice = new GatewayClosing(self.toString(), ctx.getSelf().narrow());
        for (Address client : clients.keySet()) {
          ActorPath path = new RootActorPath(client, "/").$div("system").$div(
              GatewayClosing.CLIENT_PATH.substring("/system/".length()));
          Adapter.toClassic(ctx.getSystem()).provider().resolveActorRef(path).tell(notice, akka.actor.ActorRef.noSender());
          unanswered.add(client.toString());
        }
        clients.clear();
        closing = close;
        if (unanswered.isEmpty()) {
          close.done().complete(Done.getInstance());
        }
      } else if (message instanceof GatewayClosing.Seen seen) {
        if (closing != null && unanswered.remove(seen.client()) && unanswered.isEmpty()) {
          closing.done().complete(Done.getInstance());
        }
      } else {
        warn("other", "Dropped a message of type " + (message == null ? "null" : message.getClass().getName())
            + " sent to the client listener's gateway: only client requests are accepted");
      }
      return Behaviors.same();
    }

    private void warn(String kind, String line) {
      if (warnings.admit("io.tributary.gateway.ClientListener." + kind, "ClientListener")) {
        ctx.getLog().warn(line);
      }
    }

    /** {@code r} with every reference re-resolved in the node's system. */
    private ClientRequest toNode(ClientRequest r) throws Refused {
      if (r instanceof ProduceRequest p) {
        return new ProduceRequest(p.version(), p.topic(), p.partition(), p.acks(), p.timeoutMs(), p.batchBuffer(),
            p.batchOffset(), p.batchLength(), ref(p.replyTo(), true), p.correlationId());
      } else if (r instanceof FetchRequest f) {
        return new FetchRequest(f.version(), f.topic(), f.partition(), f.fetchOffset(), f.maxBytes(), f.maxWaitMs(),
            ref(f.replyTo(), false));
      } else if (r instanceof ListOffsetsRequest l) {
        return new ListOffsetsRequest(l.version(), l.topic(), l.partition(), l.timestamp(), ref(l.replyTo(), false));
      } else if (r instanceof MultiProduceRequest m) {
        return new MultiProduceRequest(m.version(), m.acks(), m.timeoutMs(), m.entries(), ref(m.replyTo(), true));
      } else if (r instanceof AdminRequest a) {
        return a.withReplyTo(ref(a.replyTo(), true));
      } else if (r instanceof GroupProtocol.JoinGroup j) {
        return new GroupProtocol.JoinGroup(j.version(), j.groupId(), j.memberId(), j.groupInstanceId(), j.clientId(),
            j.topics(), j.topicPattern(), j.assignors(), j.sessionTimeoutMs(), j.rebalanceTimeoutMs(), j.owned(),
            ref(j.member(), false), ref(j.replyTo(), false));
      } else if (r instanceof GroupProtocol.AssignmentAck) {
        return r; // no reference
      } else if (r instanceof GroupProtocol.GroupRequest g) {
        return GroupProtocol.withReplyTo(g, ref(g.replyTo(), false));
      }
      throw new Refused("not a request of the client protocol");
    }

    /**
     * {@code ref} re-resolved in the node's system.
     *
     * @param mayBeNull whether the request may have no reference there (a request nobody waits for)
     * @throws Refused if it is missing where required, or names an actor of this listener or of a cluster member
     */
    private <T> ActorRef<T> ref(ActorRef<T> ref, boolean mayBeNull) throws Refused {
      if (ref == null) {
        if (mayBeNull) {
          return null;
        }
        throw new Refused("it has no reference to answer to");
      }
      ActorPath path = Adapter.toClassic(ref).path();
      Address a = path.address();
      if (!a.hasGlobalScope() || a.equals(self) || a.equals(nodeAddress) || members().contains(a)) {
        throw new Refused("it names " + path + ", an actor of this node or of a cluster member, not of the client");
      }
      clients.put(a, Boolean.TRUE);
      if (clients.size() > MAX_CLIENTS) {
        clients.remove(clients.keySet().iterator().next());
      }
      return Adapter.toTyped(nodeProvider.resolveActorRef(path));
    }

    /** The addresses of the cluster's members, as this node sees them now. */
    private Set<Address> members() {
      ClusterEvent.CurrentClusterState state = cluster.state();
      if (state != seenState) {
        Set<Address> set = new HashSet<>();
        for (Member m : state.getMembers()) {
          set.add(m.address());
        }
        for (Member m : state.getUnreachable()) {
          set.add(m.address());
        }
        members = set;
        seenState = state;
      }
      return members;
    }
  }
}
