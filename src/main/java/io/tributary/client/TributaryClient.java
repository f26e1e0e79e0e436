package io.tributary.client;

import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GatewayClosing;
import io.tributary.util.Completions;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The entry point of the client library: a connection to a Tributary cluster through a node's gateway actor, from
 * which {@link Admin}, {@link Producer} and {@link Consumer} instances are made (as Kafka's clients, but sharing one
 * connection).
 *
 * <p>A remote client ({@link #connect}) runs its own small {@code ActorSystem} named {@value #CLIENT_SYSTEM_NAME}{@code
 * -}<i>16 hex digits</i> (a name of its own, see {@link #CLIENT_SYSTEM_NAME}; Artery TCP, not a cluster member) and
 * talks to the gateway {@code /system/tributary-gateway} of a node over Artery remoting; an application that is itself
 * a Tributary node uses {@link #embedded} instead. Either way, requests are the messages of {@link
 * io.tributary.protocol}.
 *
 * <p>The client's own ActorSystem is configured on top of {@code ConfigFactory.load()} with: remote provider, Artery
 * TCP on {@code tributary.client.hostname} (default 127.0.0.1) and {@code tributary.client.port} (default 0, any free
 * port; both also taken from the settings map given to {@link #connect(String, Map)}), log level WARNING, no
 * dead-letter logging, no JVM exit on shutdown, and no Akka JVM shutdown hooks: the client's ActorSystem (remoting
 * included) stops when the client is closed, so an application closes its client (or its consumer) in its own shutdown
 * hook, as with Kafka's clients, and that close still reaches the brokers. Death watch of the gateway uses {@code
 * tributary.client.watch-heartbeat-interval} (default 1 s) and {@code
 * tributary.client.watch-acceptable-heartbeat-pause} (default 4 s) as Artery's {@code
 * akka.remote.watch-failure-detector}, so that a killed node is noticed within about 5 s. It is not a cluster member,
 * so Akka's "remote features outside cluster" are switched on only to keep its start-up warning quiet.
 *
 * <h2>Several nodes, failover</h2>
 *
 * A remote client keeps every address of its bootstrap list (for a local cluster, list all nodes: {@code
 * "127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094"}; any node's gateway serves every request). It uses one node's
 * gateway at a time; when that node dies, leaves or stops answering, it moves to another node of the list that answers
 * (see {@link GatewayFailover}: Akka death watch, or a request timeout with no answer since). Admins, producers and
 * consumers see only the retriable errors of the requests that were in flight (REQUEST_TIMED_OUT, NETWORK_EXCEPTION),
 * which they retry within their timeouts. The client learns no other node than those listed (nothing is added to the
 * protocol for it). An {@link #embedded} client uses the gateway it is given and has no failover.
 *
 * <p>This class is thread-safe. {@link #close()} closes every admin, producer and consumer made from it.
 *
 * <pre>{@code
 * try (TributaryClient client = TributaryClient.connect("127.0.0.1:9092")) {
 *   Producer<String, String> producer =
 *       client.producer(Map.of("acks", "all"), Serializer.string(), Serializer.string());
 *   producer.send(new ProducerRecord<>("events", "key", "value")).toCompletableFuture().join();
 * }
 * }</pre>
 */
public final class TributaryClient implements AutoCloseable {

  /**
   * How the name of the ActorSystem a remote client starts begins: {@code tributary-client-} and then 16 hex digits
   * drawn for each client, so that no two clients (or two runs of one on a fixed {@code tributary.client.port}) share
   * an Artery address. A node answers clients through its cluster transport, which quarantines the address of a
   * client that terminated; a later client with the same name, host and port would get no answer from it.
   */
  public static final String CLIENT_SYSTEM_NAME = "tributary-client";

  /** The smallest Artery frame of a client's ActorSystem, 2 MiB: a 1 MiB request and the envelope fit. */
  static final long CLIENT_FRAME_BYTES = 2L * 1024 * 1024;

  /** {@value #CLIENT_SYSTEM_NAME}{@code -} and 16 hex digits, new for each call. */
  static String clientSystemName() {
    return String.format("%s-%016x", CLIENT_SYSTEM_NAME, java.util.concurrent.ThreadLocalRandom.current().nextLong());
  }

  private static final Duration TERMINATION_TIMEOUT = Duration.ofSeconds(30);
  /** {@code tributary.client.watch-heartbeat-interval} when not configured. */
  static final Duration DEFAULT_WATCH_HEARTBEAT_INTERVAL = Duration.ofSeconds(1);
  /** {@code tributary.client.watch-acceptable-heartbeat-pause} when not configured. */
  static final Duration DEFAULT_WATCH_ACCEPTABLE_PAUSE = Duration.ofSeconds(4);

  private final ActorSystem<?> system;
  /** Where requests go: the gateway itself (embedded), or the local {@link GatewayFailover} actor. */
  private final ActorRef<ClientRequest> gateway;
  /** With failover: the request path's view of the current gateway; else null. */
  private final GatewayFailover.Health health;
  /** With failover: the failover actor, stopped on close; else null. */
  private final ActorRef<Object> failover;
  private final boolean ownsSystem;
  private final Map<String, Object> baseConfig;
  private final int requestTimeoutMs;
  private final Set<AutoCloseable> resources = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger producerIds = new AtomicInteger();

  private TributaryClient(
      ActorSystem<?> system, ActorRef<ClientRequest> gateway, boolean ownsSystem, Map<String, ?> config) {
    this(system, gateway, null, null, ownsSystem, config);
  }

  private TributaryClient(
      ActorSystem<?> system,
      ActorRef<ClientRequest> gateway,
      GatewayFailover.Health health,
      ActorRef<Object> failover,
      boolean ownsSystem,
      Map<String, ?> config) {
    this.system = system;
    io.tributary.protocol.FrameLimits.allowInboundFrames(system.settings().config());
    io.tributary.net.PartialFrameBudget.configure(system.settings().config());
    this.gateway = gateway;
    this.health = health;
    this.failover = failover;
    this.ownsSystem = ownsSystem;
    this.baseConfig = config == null ? Map.of() : new HashMap<>(config);
    this.requestTimeoutMs =
        ClientConfig.getInt(
            config,
            ClientConfig.REQUEST_TIMEOUT_MS,
            ClientConfig.DEFAULT_REQUEST_TIMEOUT_MS,
            0,
            Integer.MAX_VALUE);
  }

  /**
   * {@code connect(bootstrapServers, Map.of())}.
   *
   * @param bootstrapServers comma-separated {@code host:port} or {@code system@host:port} entries
   * @return a connected client; close it to stop its ActorSystem
   * @throws TributaryException NETWORK_EXCEPTION if no node answers within {@code request.timeout.ms} (30 s), or at
   *     once when no node of the list accepts a TCP connection
   * @throws IllegalArgumentException if the server list is malformed
   */
  public static TributaryClient connect(String bootstrapServers) {
    return connect(bootstrapServers, Map.of());
  }

  /**
   * Starts a client ActorSystem and connects to the first node of {@code bootstrapServers} that answers.
   *
   * <p>All nodes of the list are asked at once (Akka's Identify to each gateway, answered even while the controller
   * moves); the first node of the list whose gateway answers becomes this client's gateway (nodes before it that do
   * not answer are passed over one second after a later node answered).
   * Blocks up to {@code request.timeout.ms}. The others are kept: when the gateway's node is lost, the client moves
   * to another node of the list (see the class comment).
   *
   * @param bootstrapServers comma-separated {@code host:port} (ActorSystem {@code tributary}) or {@code
   *     system@host:port} entries: the Artery address of broker nodes
   * @param config settings (see {@link ClientConfig}); they are also the defaults of every admin, producer and
   *     consumer made from this client. Used here: {@code request.timeout.ms}
   * @return a connected client; close it to stop its ActorSystem
   * @throws TributaryException NETWORK_EXCEPTION if no node answered within {@code request.timeout.ms}, or at once
   *     when no node of the list accepts a TCP connection; the ActorSystem is then already stopped (or never
   *     started)
   * @throws IllegalArgumentException if the server list or a setting is malformed
   */
  public static TributaryClient connect(String bootstrapServers, Map<String, ?> config) {
    List<BrokerAddress> addresses = BrokerAddress.parseList(bootstrapServers);
    int timeoutMs =
        ClientConfig.getInt(
            config,
            ClientConfig.REQUEST_TIMEOUT_MS,
            ClientConfig.DEFAULT_REQUEST_TIMEOUT_MS,
            0,
            Integer.MAX_VALUE);
    refuseIfNothingListens(addresses, timeoutMs);
    addresses = BrokerAddress.withResolvedForms(addresses);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), clientSystemName(), clientSystemConfig(config));
    try {
      ActorRefResolver resolver = ActorRefResolver.get(system);
      List<ActorRef<ClientRequest>> gateways = new ArrayList<>();
      for (BrokerAddress address : addresses) {
        gateways.add(resolver.resolveActorRef(address.gatewayUri()));
      }
      java.util.concurrent.atomic.AtomicReferenceArray<ActorRef<ClientRequest>> identified =
          new java.util.concurrent.atomic.AtomicReferenceArray<>(gateways.size());
      int first = findGateway(system, gateways, identified, addresses, timeoutMs);
      // the ref that answered carries its actor's UID: the failover's incarnation check compares later answers to it
      if (identified.get(first) != null) {
        gateways.set(first, identified.get(first));
      }
      return withFailover(system, gateways, first, true, config);
    } catch (RuntimeException | Error e) {
      terminate(system);
      throw e;
    }
  }

  /**
   * Fails at once when no address of the list accepts a TCP connection (typically: nothing listens there), instead of
   * waiting {@code request.timeout.ms} for Artery to give up. An address that accepts is left to the real handshake.
   * The message says that nothing accepts connections there, not that a request timed out: {@code No Tributary broker
   * answered at 127.0.0.1:9092 (Connection refused): nothing accepts connections there; is the broker running?}
   */
  private static void refuseIfNothingListens(List<BrokerAddress> addresses, int timeoutMs) {
    List<String> refused = new ArrayList<>();
    boolean allUnresolved = true;
    for (BrokerAddress a : addresses) {
      IOException failure = tcpConnect(a, Math.min(timeoutMs, 5000));
      if (failure == null) {
        return; // something listens: let the Artery handshake decide
      } else if (failure instanceof java.net.UnknownHostException) {
        refused.add(a.hostPort() + " (unknown host)");
      } else {
        allUnresolved = false;
        refused.add(a.hostPort() + " (" + failure.getMessage() + ")");
      }
    }
    throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "No Tributary broker answered at "
        + String.join(", ", refused) + (allUnresolved
            ? ": the host name does not resolve"
            : ": nothing accepts connections there; is the broker running?"));
  }

  /**
   * A client over {@code gateways} with failover between them (see {@link GatewayFailover}), starting with {@code
   * gateways.get(initial)}. Library-internal; {@link #connect} uses it, and tests with in-process gateways.
   *
   * @param ownsSystem whether {@link #close()} terminates {@code system}
   */
  static TributaryClient withFailover(
      ActorSystem<?> system,
      List<ActorRef<ClientRequest>> gateways,
      int initial,
      boolean ownsSystem,
      Map<String, ?> config) {
    int requestTimeoutMs =
        ClientConfig.getInt(
            config, ClientConfig.REQUEST_TIMEOUT_MS, ClientConfig.DEFAULT_REQUEST_TIMEOUT_MS, 0, Integer.MAX_VALUE);
    long retryBackoffMs =
        ClientConfig.getLong(
            config, ClientConfig.RETRY_BACKOFF_MS, ClientConfig.DEFAULT_RETRY_BACKOFF_MS, 0, Long.MAX_VALUE);
    GatewayFailover.Health health = new GatewayFailover.Health();
    ActorRef<Object> failover =
        system.systemActorOf(
            GatewayFailover.create(gateways, initial, health, requestTimeoutMs, retryBackoffMs),
            // in a client's own system, at the path where nodes send their GatewayClosing notice
            ownsSystem
                ? GatewayClosing.CLIENT_PATH.substring("/system/".length())
                : "tributary-gateway-failover-" + java.util.UUID.randomUUID(),
            akka.actor.typed.Props.empty());
    return new TributaryClient(system, failover.narrow(), health, failover, ownsSystem, config);
  }

  /**
   * {@code embedded(system, gateway, Map.of())}.
   *
   * @param system an ActorSystem of the application, e.g. a Tributary node's own
   * @param gateway the gateway actor (local or remote)
   * @return a client over {@code system}
   */
  public static TributaryClient embedded(ActorSystem<?> system, ActorRef<ClientRequest> gateway) {
    return embedded(system, gateway, Map.of());
  }

  /**
   * A client that uses an existing ActorSystem and gateway, for an application that embeds Tributary. Does not check
   * that the gateway answers. {@link #close()} closes the admins, producers and consumers but leaves {@code system}
   * running.
   *
   * @param system an ActorSystem of the application
   * @param gateway the gateway actor (local or remote)
   * @param config default settings of every admin, producer and consumer made from this client
   * @return a client over {@code system}; closing it leaves {@code system} running
   */
  public static TributaryClient embedded(
      ActorSystem<?> system, ActorRef<ClientRequest> gateway, Map<String, ?> config) {
    Objects.requireNonNull(system, "system");
    Objects.requireNonNull(gateway, "gateway");
    return new TributaryClient(system, gateway, false, config);
  }

  /**
   * A new admin client. Thread-safe; closed with this client if not before.
   *
   * @return the admin client
   * @throws IllegalStateException if this client is closed
   * @throws IllegalArgumentException if a setting of the client's config is malformed
   */
  public Admin admin() {
    return admin(Map.of());
  }

  /**
   * A new admin client with its own settings laid over the client's: {@code request.timeout.ms}, {@code
   * default.api.timeout.ms}, {@code retry.backoff.ms}.
   *
   * @param config admin settings, laid over the client's
   * @return the admin client
   * @throws IllegalStateException if this client is closed
   * @throws IllegalArgumentException if a setting is malformed (the message names the key)
   */
  public Admin admin(Map<String, ?> config) {
    checkOpen();
    TributaryAdmin admin = new TributaryAdmin(this, AdminSettings.from(ClientConfig.merge(baseConfig, config)));
    register(admin);
    return admin;
  }

  /**
   * A new producer. Thread-safe; closed with this client if not before.
   *
   * @param config producer settings (see {@link ClientConfig}), laid over the client's
   * @param keySerializer turns keys into bytes
   * @param valueSerializer turns values into bytes
   * @param <K> key type
   * @param <V> value type
   * @return the producer
   * @throws IllegalStateException if this client is closed
   * @throws IllegalArgumentException if a setting is malformed (the message names the key)
   */
  public <K, V> Producer<K, V> producer(
      Map<String, ?> config, Serializer<K> keySerializer, Serializer<V> valueSerializer) {
    checkOpen();
    Objects.requireNonNull(keySerializer, "keySerializer");
    Objects.requireNonNull(valueSerializer, "valueSerializer");
    warnUnknown("producer", config);
    ProducerSettings settings = ProducerSettings.from(ClientConfig.merge(baseConfig, config));
    TributaryProducer<K, V> producer =
        new TributaryProducer<>(this, settings, keySerializer, valueSerializer, producerIds.incrementAndGet());
    register(producer);
    return producer;
  }

  /**
   * A new consumer. Not thread-safe (one thread per consumer); closed with this client if not before.
   *
   * @param config consumer settings (see {@link ClientConfig}), laid over the client's
   * @param keyDeserializer turns key bytes into keys
   * @param valueDeserializer turns value bytes into values
   * @param <K> key type
   * @param <V> value type
   * @return the consumer
   * @throws IllegalStateException if this client is closed
   * @throws IllegalArgumentException if a setting is malformed (the message names the key)
   */
  public <K, V> Consumer<K, V> consumer(
      Map<String, ?> config, Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
    checkOpen();
    Objects.requireNonNull(keyDeserializer, "keyDeserializer");
    Objects.requireNonNull(valueDeserializer, "valueDeserializer");
    warnUnknown("consumer", config);
    ConsumerSettings settings = ConsumerSettings.from(ClientConfig.merge(baseConfig, config));
    TributaryConsumer<K, V> consumer =
        new TributaryConsumer<>(this, settings, keyDeserializer, valueDeserializer);
    register(consumer);
    return consumer;
  }

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TributaryClient.class);

  /** As Kafka's clients: a setting no part of the client uses is ignored, with a warning naming it. */
  private static void warnUnknown(String what, Map<String, ?> config) {
    for (String key : ClientConfig.unknownKeys(config)) {
      LOG.warn("The {} setting '{}' was supplied but is not a known setting; it is ignored", what, key);
    }
  }

  /**
   * Closes every admin, producer and consumer made from this client that is still open (a producer gets up to {@code
   * request.timeout.ms} to deliver what it buffered), then, for a client made by {@link #connect}, stops its
   * ActorSystem and waits (up to 30 s) until it has terminated. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (AutoCloseable resource : new ArrayList<>(resources)) {
      try {
        if (resource instanceof Producer<?, ?> producer) {
          producer.close(Duration.ofMillis(requestTimeoutMs));
        } else {
          resource.close();
        }
      } catch (Exception e) {
        // closing goes on for the others
      }
    }
    resources.clear();
    if (failover != null) {
      failover.tell(GatewayFailover.Shutdown.INSTANCE);
    }
    if (ownsSystem) {
      terminate(system);
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Library-internal

  /** The ActorSystem requests go through. */
  ActorSystem<?> system() {
    return system;
  }

  /**
   * Sends a request and returns its answer.
   *
   * @param factory builds the request around the reply-to ref
   * @param timeoutMs how long to wait, ms
   * @return completes with the answer, or exceptionally with a {@link TimeoutException} (see {@link #toException}),
   *     or with NETWORK_EXCEPTION when the gateway it went through is given up before answering ({@link
   *     GatewayFailover}) or the client cannot be used any more ({@link #unusableReason})
   */
  <R> CompletionStage<R> ask(Function<ActorRef<R>, ClientRequest> factory, long timeoutMs) {
    String unusable = unusableReason();
    if (unusable != null) {
      return CompletableFuture.failedFuture(new TributaryException(ErrorCode.NETWORK_EXCEPTION, unusable));
    }
    if (health == null) {
      return Completions.direct(
          AskPattern.ask(gateway, factory::apply, Duration.ofMillis(Math.max(1, timeoutMs)), system.scheduler()));
    }
    int generation = health.generation();
    long sentNanos = System.nanoTime();
    CompletableFuture<R> result = new CompletableFuture<>();
    CompletionStage<R> answer;
    try {
      // failed at once if the gateway it is forwarded to is given up before it is answered
      answer = AskPattern.ask(gateway, replyTo -> {
        ClientRequest request = factory.apply(replyTo);
        health.register(request, result);
        return request;
      }, Duration.ofMillis(Math.max(1, timeoutMs)), system.scheduler());
    } catch (RuntimeException e) { // e.g. the scheduler of a terminated ActorSystem
      result.completeExceptionally(new TributaryException(ErrorCode.NETWORK_EXCEPTION, e.toString(), e));
      return result;
    }
    answer.whenCompleteAsync( // on the replying Akka thread (see Completions: no thread per answer)
        (response, failure) -> {
          if (failure == null) {
            health.answered(generation);
            result.complete(response);
          } else {
            if (GatewayFailover.isTimeout(failure) && !result.isDone()) {
              health.timedOut(generation, sentNanos, "a request");
            }
            result.completeExceptionally(failure);
          }
        },
        Completions.DIRECT);
    return result;
  }

  /**
   * Tells the failover actor that {@code gateway} answered an {@code Identify} at the current gateway's path, as its
   * incarnation check does every second while requests are in flight. For tests: another incarnation of a node that
   * was killed and started again cannot be made in one JVM without death watch noticing.
   */
  void incarnationAnsweredForTest(akka.actor.ActorRef gateway) {
    failover.tell(new GatewayFailover.IncarnationAnswer(health.generation(), gateway));
  }

  /** Hands {@code message} to the failover actor, as a node's notice would arrive. For tests. */
  void tellFailoverForTest(Object message) {
    failover.tell(message);
  }

  /** How many requests sent through the failover are in flight (0 for an embedded client). For tests. */
  int inFlightRequests() {
    return health == null ? 0 : health.inFlight();
  }

  /**
   * Why requests cannot be answered any more, or null while they can: the client's ActorSystem terminated or runs its
   * coordinated shutdown, or the client lost its gateway while shutting down (see {@link GatewayFailover}). Retry
   * loops give up at once then, instead of retrying until their timeouts.
   */
  String unusableReason() {
    if (health != null && health.stopping() != null) {
      return health.stopping();
    }
    if (system.whenTerminated().isCompleted()) {
      return "the Tributary client's ActorSystem terminated";
    }
    if (CoordinatedShutdown.get(system).getShutdownReason().isPresent()) {
      return "the Tributary client's ActorSystem shuts down";
    }
    return null;
  }

  /**
   * The gateway actor requests go to (for actors of the library that ask it themselves): with failover, the local
   * {@link GatewayFailover} actor, which forwards to the current node's gateway.
   */
  ActorRef<ClientRequest> gateway() {
    return gateway;
  }

  /** Forgets a closed resource. */
  void unregister(AutoCloseable resource) {
    resources.remove(resource);
  }

  /**
   * The exception for a failed ask: a {@link TributaryException} as it is, a timeout as REQUEST_TIMED_OUT, anything
   * else as NETWORK_EXCEPTION.
   */
  static TributaryException toException(Throwable failure, String what, long timeoutMs) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof TributaryException te) {
      return te;
    }
    if (t instanceof TimeoutException) {
      return new TributaryException(
          ErrorCode.REQUEST_TIMED_OUT,
          what + ": no answer from the broker within " + ClientConfig.REQUEST_TIMEOUT_MS + "=" + timeoutMs + " ms");
    }
    return new TributaryException(ErrorCode.NETWORK_EXCEPTION, what + ": " + t, t);
  }

  /**
   * Why this client has no gateway right now (it gave the last one up, e.g. its node was killed, and none of the
   * bootstrap list has answered since), for error messages; null while it has one, and for an embedded client.
   */
  String lostGateway() {
    return health == null ? null : health.lostGateway();
  }

  /** Waits for a stage up to {@code timeoutMs} (plus a small grace), mapping failures with {@link #toException}. */
  static <R> R await(CompletionStage<R> stage, String what, long timeoutMs) {
    try {
      return stage.toCompletableFuture().get(saturatedAdd(timeoutMs, 1_000), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, what + ": interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw toException(e, what, timeoutMs);
    }
  }

  /** {@code a + b}, saturated at {@link Long#MAX_VALUE} (both non-negative). */
  static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }

  private void register(AutoCloseable resource) {
    resources.add(resource);
    if (closed.get()) {
      resources.remove(resource);
      try {
        resource.close();
      } catch (Exception e) {
        // already closing
      }
      throw new IllegalStateException("the TributaryClient is closed");
    }
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("the TributaryClient is closed");
    }
  }

  /** The config of a client ActorSystem: fixed remote settings on top of {@code ConfigFactory.load()}. */
  static Config clientSystemConfig() {
    return clientSystemConfig(Map.of());
  }

  /**
   * The config of a client ActorSystem: fixed remote settings on top of the {@code tributary.client.*} keys of
   * {@code config} (a client's settings map) and then {@code ConfigFactory.load()}.
   */
  static Config clientSystemConfig(Map<String, ?> config) {
    Map<String, Object> given = new HashMap<>();
    if (config != null) {
      config.forEach((k, v) -> {
        if (k.startsWith("tributary.client.") && v != null) {
          given.put(k, v.toString());
        }
      });
    }
    Config loaded = ConfigFactory.parseMap(given).withFallback(ConfigFactory.load());
    String host =
        loaded.hasPath("tributary.client.hostname") ? loaded.getString("tributary.client.hostname") : "127.0.0.1";
    int port = loaded.hasPath("tributary.client.port") ? loaded.getInt("tributary.client.port") : 0;
    Map<String, Object> settings = new HashMap<>();
    settings.put("akka.actor.provider", "remote");
    settings.put("akka.remote.artery.transport", "tcp");
    settings.put("akka.remote.artery.canonical.hostname", host);
    settings.put("akka.remote.artery.canonical.port", port);
    settings.put("akka.remote.artery.bind.hostname", "");
    settings.put("akka.remote.artery.bind.port", "");
    // record batches up to 1 MiB (max.request.size, Kafka's default) in one message: Artery's frame must hold them
    // with room for the envelope (a broker's tributary-broker.conf sets the same); a larger frame size given is kept
    long frame = Math.max(CLIENT_FRAME_BYTES, loaded.getBytes("akka.remote.artery.advanced.maximum-frame-size"));
    settings.put("akka.remote.artery.advanced.maximum-frame-size", frame + "b");
    settings.put("akka.remote.artery.advanced.buffer-pool-size", 64); // at most 64 frames kept (Akka's: 128)
    // responses are addressed to temporary reply-to refs, which never repeat: nothing for Artery's actor-ref
    // compression to win, only its per-message heavy-hitter counting to pay (the broker turns it off as well)
    settings.put("akka.remote.artery.advanced.compression.actor-refs.max", "off");
    settings.put("akka.remote.artery.advanced.compression.manifests.max", "off");
    settings.put("akka.remote.warn-about-direct-use", "off");
    settings.put("akka.remote.warn-unsafe-watch-outside-cluster", "off");
    // a client is never a cluster member; this only turns Akka's start-up warning about that into an info line
    settings.put("akka.remote.use-unsafe-remote-features-outside-cluster", "on");
    settings.put("akka.loglevel", "WARNING");
    settings.put("akka.stdout-loglevel", "OFF");
    settings.put("akka.log-dead-letters", "off");
    settings.put("akka.log-dead-letters-during-shutdown", "off");
    settings.put("akka.coordinated-shutdown.exit-jvm", "off");
    // The client's ActorSystem is stopped by close(), not by Akka's JVM shutdown hooks: Artery's own hook would tear
    // down remoting at SIGTERM while the application's shutdown hook still closes its consumer (commit, LeaveGroup),
    // whose requests would then wait for their timeouts, and every node would look dead to the failover.
    settings.put("akka.jvm-shutdown-hooks", "off");
    // A killed node is noticed by death watch after about heartbeat interval + acceptable pause (Akka's default 1 s +
    // 10 s); the client then moves to another node and resends what was in flight.
    settings.put("akka.remote.watch-failure-detector.heartbeat-interval",
        durationSetting(loaded, "tributary.client.watch-heartbeat-interval", DEFAULT_WATCH_HEARTBEAT_INTERVAL));
    settings.put("akka.remote.watch-failure-detector.acceptable-heartbeat-pause",
        durationSetting(loaded, "tributary.client.watch-acceptable-heartbeat-pause", DEFAULT_WATCH_ACCEPTABLE_PAUSE));
    return ConfigFactory.parseMap(settings).withFallback(loaded);
  }

  /** {@code path} of {@code config} as "N ms", or {@code fallback} when it is not set. */
  private static String durationSetting(Config config, String path, Duration fallback) {
    Duration d = config.hasPath(path) ? config.getDuration(path) : fallback;
    return d.toMillis() + " ms";
  }

  /**
   * How long a node that answered waits for the nodes before it in the bootstrap list: a live node answers Identify
   * in milliseconds, a dead address never does (its ask runs into request.timeout.ms).
   */
  static final long EARLIER_NODE_GRACE_MS = 1_000;

  /** How long one round of {@link #findGateway} waits for an answer before it checks that anything still listens. */
  static final int CONNECT_ATTEMPT_MS = 3_000;

  /**
   * Asks every node's gateway at once with Akka's built-in {@link akka.actor.Identify} (answered by the gateway actor
   * itself, so a node whose controller is moving still counts as reachable); the first in list order that exists
   * wins once every node before it has failed, or {@link #EARLIER_NODE_GRACE_MS} after a later one answered (a dead
   * first address costs a second, not the whole request timeout). Returns its index.
   *
   * <p>It asks in rounds of at most {@link #CONNECT_ATTEMPT_MS} until {@code timeoutMs}: after a round without an
   * answer it checks with a plain TCP connect that something still listens at one of the addresses. If nothing does
   * (the broker stopped or was killed while the client connected) it fails at once, saying so, instead of waiting out
   * the request timeout; otherwise it asks again (a broker that restarts meanwhile is found, as Kafka's client keeps
   * retrying its bootstrap servers).
   *
   * @throws TributaryException ({@link ErrorCode#NETWORK_EXCEPTION}) when no gateway answered, with why
   */
  private static int findGateway(ActorSystem<?> system, List<ActorRef<ClientRequest>> gateways,
      java.util.concurrent.atomic.AtomicReferenceArray<ActorRef<ClientRequest>> identified,
      List<BrokerAddress> addresses, int timeoutMs) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (true) {
      long remainingMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      int attemptMs = (int) Math.min(remainingMs, CONNECT_ATTEMPT_MS);
      Throwable failure;
      try {
        return identifyFirst(system, gateways, identified, attemptMs);
      } catch (ExecutionException | TimeoutException e) {
        failure = e;
      }
      boolean timedOut = failure instanceof TimeoutException || isAskTimeout(failure.getCause());
      String where = addresses.stream().map(BrokerAddress::hostPort).collect(Collectors.joining(", "));
      if (timedOut && !anythingListens(addresses, CONNECT_ATTEMPT_MS)) {
        throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "No Tributary broker answered at " + where
            + ": nothing accepts connections there any more (it stopped while the client connected); is the broker"
            + " running?");
      }
      if (timedOut && System.nanoTime() - deadline < 0) {
        continue; // something listens: ask again
      }
      String clusterPorts = clusterPortsAmong(system, addresses);
      if (clusterPorts != null) {
        throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "No Tributary client listener at " + where + ": "
            + clusterPorts + " is the cluster port of a Tributary node, which only cluster members use; give the"
            + " node's client listener instead (tributary.broker.listeners; bin/tributary server --port, by default"
            + " 100 below the cluster port)");
      }
      // connect() got here only after an address accepted a TCP connection: with one address, that one did
      String why = addresses.size() == 1
          ? ": something accepts connections there, but it is not a Tributary broker, or not a ready one"
          : " (nothing listening, or not a Tributary broker)";
      // a peer that closes the connection (e.g. an HTTP server) fails the handshake before the timeout
      String when = timedOut ? " within " + ClientConfig.REQUEST_TIMEOUT_MS + "=" + timeoutMs + " ms" : "";
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "No Tributary broker answered at " + where + when + why);
    }
  }

  /**
   * The addresses among {@code addresses} where a node's own gateway answers Identify (a cluster port, not a client
   * listener), comma-separated, or null if none does within a second.
   */
  private static String clusterPortsAmong(ActorSystem<?> system, List<BrokerAddress> addresses) {
    ActorRefResolver resolver = ActorRefResolver.get(system);
    List<String> found = new ArrayList<>();
    for (BrokerAddress a : addresses) {
      try {
        Object answer = akka.pattern.Patterns.ask(
            akka.actor.typed.javadsl.Adapter.toClassic(resolver.resolveActorRef(a.nodeGatewayUri())),
            new akka.actor.Identify(0), Duration.ofSeconds(1)).toCompletableFuture().get(2, TimeUnit.SECONDS);
        if (answer instanceof akka.actor.ActorIdentity id && id.getActorRef().isPresent()) {
          found.add(a.hostPort());
        }
      } catch (ExecutionException | TimeoutException e) {
        // no answer: not a cluster port (or not reachable)
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return null;
      }
    }
    return found.isEmpty() ? null : String.join(", ", found);
  }

  /** Whether a plain TCP connect to one of {@code addresses} succeeds. */
  private static boolean anythingListens(List<BrokerAddress> addresses, int timeoutMs) {
    return addresses.stream().anyMatch(a -> tcpConnect(a, timeoutMs) == null);
  }

  /**
   * Opens and closes a plain TCP connection to {@code a} within {@code timeoutMs}: {@code null} when something
   * accepted it, else why not ({@link java.net.UnknownHostException} for a name that does not resolve).
   */
  private static IOException tcpConnect(BrokerAddress a, int timeoutMs) {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new java.net.InetSocketAddress(a.host(), a.port()), Math.max(1, timeoutMs));
      return null;
    } catch (IOException e) {
      return e;
    }
  }

  /**
   * One round of {@link #findGateway}: the index of the first gateway (in list order) that answers Identify within
   * {@code timeoutMs}; each gateway that answers is put into {@code identified} at its index (the answering actor's
   * ref, with its UID).
   *
   * @throws ExecutionException if every gateway failed (the cause: the last failure, e.g. an ask timeout)
   * @throws TimeoutException if the round did not end in time
   */
  private static int identifyFirst(ActorSystem<?> system, List<ActorRef<ClientRequest>> gateways,
      java.util.concurrent.atomic.AtomicReferenceArray<ActorRef<ClientRequest>> identified, int timeoutMs)
      throws ExecutionException, TimeoutException {
    CompletableFuture<Integer> first = new CompletableFuture<>();
    AtomicInteger failures = new AtomicInteger();
    // 0 = no answer yet, 1 = its gateway exists, -1 = failed: the first live node in list order wins
    int[] state = new int[gateways.size()];
    for (int i = 0; i < gateways.size(); i++) {
      int index = i;
      ActorRef<ClientRequest> gateway = gateways.get(i);
      CompletionStage<Object> answer =
          akka.pattern.Patterns.ask(
              akka.actor.typed.javadsl.Adapter.toClassic(gateway),
              new akka.actor.Identify(index),
              Duration.ofMillis(Math.max(1, timeoutMs)));
      answer.whenComplete(
          (response, failure) -> {
            boolean found = failure == null && response instanceof akka.actor.ActorIdentity id
                && id.getActorRef().isPresent();
            if (found) {
              identified.set(index, akka.actor.typed.javadsl.Adapter.toTyped(
                  ((akka.actor.ActorIdentity) response).getActorRef().get()));
            }
            synchronized (state) {
              state[index] = found ? 1 : -1;
              for (int k = 0; k < state.length; k++) {
                if (state[k] == 1) {
                  first.complete(k);
                  break;
                } else if (state[k] == 0) {
                  break;
                }
              }
            }
            if (found && !first.isDone()) {
              // nodes before this one have not answered yet: give them a moment, then take the first that has
              system.scheduler().scheduleOnce(Duration.ofMillis(EARLIER_NODE_GRACE_MS), () -> {
                synchronized (state) {
                  for (int k = 0; k < state.length; k++) {
                    if (state[k] == 1) {
                      first.complete(k);
                      break;
                    }
                  }
                }
              }, system.executionContext());
            }
            if (!found && failures.incrementAndGet() == gateways.size()) {
              first.completeExceptionally(failure != null ? failure
                  : new IllegalStateException("no Tributary gateway at " + gateways.get(index).path()));
            }
          });
    }
    try {
      return first.get(saturatedAdd(timeoutMs, 2_000), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TributaryException(ErrorCode.NETWORK_EXCEPTION, "interrupted while connecting", e);
    }
  }

  private static boolean isAskTimeout(Throwable t) {
    return t instanceof akka.pattern.AskTimeoutException || t instanceof TimeoutException;
  }

  private static void terminate(ActorSystem<?> system) {
    // the connections to the brokers are torn down on purpose: no warning about each aborted stream
    akka.actor.typed.javadsl.Adapter.toClassic(system).eventStream().setLogLevel(akka.event.Logging.ErrorLevel());
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(TERMINATION_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // bounded wait: give up
    }
  }
}
