package io.tributary.client;

import akka.actor.ActorIdentity;
import akka.actor.ActorSelection;
import akka.actor.Identify;
import akka.actor.CoordinatedShutdown;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorSystem;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.pattern.Patterns;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.GatewayClosing;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gateway of a remote client that knows several nodes: a local actor that stands for "the cluster's gateway",
 * forwards every {@link ClientRequest} to the gateway of one node, and moves to another node's gateway when that one
 * is gone. Producers, consumers (and their group member actors) and admins talk to this actor and never see the
 * switch, only the retriable errors (REQUEST_TIMED_OUT, NETWORK_EXCEPTION) of the requests that were in flight to the
 * lost node, which they retry.
 *
 * <h2>When the gateway is suspected</h2>
 *
 * <ul>
 *   <li>its node says it is closing ({@link GatewayClosing}: the node stops through its coordinated shutdown and
 *       its client listener, which clients cannot death-watch, tells every client it served);
 *   <li>Akka death watch reports it terminated: the node stopped or left (its ActorSystem terminated), or Artery's
 *       remote failure detector lost it (a killed node, after {@code akka.remote.watch-failure-detector}'s
 *       acceptable pause), or it was quarantined;
 *   <li>a request sent through it got no answer within {@code request.timeout.ms} and no other request through the
 *       same gateway was answered since that request was sent ({@link Health#timedOut}). A slow partition behind a
 *       live gateway does not move the client (other answers keep coming); a dead or hung node does, after one
 *       request timeout, as Kafka's client drops a connection whose request timed out;
 *   <li>another actor answers at its path: its node was killed and started again on the same address within
 *       seconds, which death watch does not report (checked every {@value #INCARNATION_CHECK_MS} ms while requests
 *       are in flight, {@link #checkIncarnation}).
 * </ul>
 *
 * <h2>Requests in flight</h2>
 *
 * The client's ask path registers every request before it hands it to this actor ({@link Health#register}), and this
 * actor records each one it forwards with the generation of the gateway it went to ({@link Health#forwarded}). When
 * the gateway is given up (gone or suspected), the requests forwarded to it and still in flight are failed at once
 * with NETWORK_EXCEPTION (retriable), so that their senders retry through the next gateway instead of waiting for
 * {@code request.timeout.ms}: a SIGKILLed node costs the failure detector's pause, not that plus a request timeout.
 * Requests not forwarded yet (in the mailbox, or held while probing) are not failed: they go to the next gateway.
 * (Retried produce requests are deduplicated by the idempotent producer; without idempotence a retry may duplicate,
 * as in Kafka when a connection is dropped.)
 *
 * <h2>While the client's ActorSystem or the JVM shuts down</h2>
 *
 * Then a lost gateway is no reason to look for another: on a JVM shutdown, remoting may be torn down under the client
 * (which makes every node look gone), and the system's actors are about to stop. The actor then starts no probe;
 * it fails the requests in flight, and from then on the ask path fails new requests at once with NETWORK_EXCEPTION
 * ({@link Health#stopping}), so that a {@code close()} running meanwhile ends quickly instead of waiting for answers
 * that cannot come.
 *
 * <h2>Finding another gateway</h2>
 *
 * Every known gateway (the bootstrap list: for a local cluster it holds every node) is asked at once with Akka's
 * built-in {@link Identify}, which any live actor answers without a protocol message of ours. The first gateway other
 * than the suspected one that identifies itself becomes current (the ref in its answer, watched from then on); the
 * suspected one is kept only if it is the only one that answers. Requests that arrive meanwhile are held (at most
 * {@value #MAX_HELD} of them) and sent to the new gateway in order; those held longer than {@code request.timeout.ms}
 * are dropped (their senders have timed out and retry). If no gateway answers, the probe is repeated every {@code
 * retry.backoff.ms} (doubling, at most 1 s), for as long as it takes. A probe round waits at most {@code
 * min(request.timeout.ms, 5 s)} for answers.
 *
 * <p>The probe goes to each gateway's path through an {@link ActorSelection}, never through the gateway's ref: when
 * death watch gives a node up, Artery quarantines that incarnation of the node and from then on drops every message
 * to a ref at its address. Only actor selections pass; they make Artery connect to the address again and shake hands
 * with whatever incarnation listens there now, which lifts the quarantine. (Probing through the ref, a client never
 * found its node again when the node came back on the same address after Artery had stopped the quarantined
 * association's streams, {@code akka.remote.artery.advanced.stop-quarantined-after-idle} after death watch's last
 * heartbeat: about 8 s after a SIGKILL.)
 *
 * <p>An actor: its state is confined to it. {@link Health} is the thread-safe part that the client's ask path uses.
 */
final class GatewayFailover {

  /** The most requests held while no gateway is known. */
  static final int MAX_HELD = 10_000;

  private static final long MAX_PROBE_TIMEOUT_MS = 5_000L;

  /**
   * How often (ms) the current gateway's incarnation is checked while requests are in flight ({@link
   * #checkIncarnation}).
   */
  static final long INCARNATION_CHECK_MS = 1_000L;
  private static final long MAX_PROBE_BACKOFF_MS = 1_000L;

  /**
   * What the client's request path shares with the failover actor: the current gateway's generation (bumped at each
   * switch) and when a request through it was last answered. Thread-safe.
   */
  static final class Health {
    private final AtomicInteger generation = new AtomicInteger();
    private volatile long lastAnswerNanos = System.nanoTime();
    volatile ActorRef<Object> failover;
    /** Requests in flight: each one's future, with the generation of the gateway it was forwarded to. */
    private final Map<CompletableFuture<?>, Integer> inFlight = new ConcurrentHashMap<>();
    /**
     * Requests asked but not yet forwarded to a gateway (in the failover actor's mailbox, or held while it probes),
     * by identity. Giving a gateway up does not fail these: they were never sent to it, and go to the next one.
     */
    private final Map<Identity, CompletableFuture<?>> unsent = new ConcurrentHashMap<>();
    /** Why the client stopped sending (its ActorSystem or the JVM shuts down), or null. */
    private volatile String stopping;

    /**
     * Registers {@code request}, about to be sent to the failover actor, until {@code future} completes; it counts as
     * in flight through a gateway only once the actor {@link #forwarded} it (the exact instance: a local send).
     */
    void register(ClientRequest request, CompletableFuture<?> future) {
      Identity key = new Identity(request);
      unsent.put(key, future);
      future.whenComplete((r, f) -> {
        unsent.remove(key);
        inFlight.remove(future);
      });
    }

    /** The failover actor sent {@code request} to the gateway of generation {@code gen}. */
    void forwarded(ClientRequest request, int gen) {
      CompletableFuture<?> future = unsent.remove(new Identity(request));
      if (future != null && !future.isDone()) {
        inFlight.put(future, gen);
        if (future.isDone()) {
          inFlight.remove(future); // completed meanwhile: its own removal may have run before the put
        }
      }
    }

    /**
     * Fails, with a retriable NETWORK_EXCEPTION, every tracked request sent under generation {@code gen} or earlier.
     *
     * @return how many were failed
     */
    int failInFlight(int gen, String reason) {
      int failed = 0;
      for (Map.Entry<CompletableFuture<?>, Integer> e : inFlight.entrySet()) {
        if (e.getValue() - gen <= 0
            && e.getKey().completeExceptionally(new TributaryException(ErrorCode.NETWORK_EXCEPTION, reason))) {
          failed++;
        }
      }
      return failed;
    }

    /** Fails every tracked request with NETWORK_EXCEPTION ({@code reason}). */
    void failAllInFlight(String reason) {
      for (CompletableFuture<?> f : inFlight.keySet()) {
        f.completeExceptionally(new TributaryException(ErrorCode.NETWORK_EXCEPTION, reason));
      }
      for (CompletableFuture<?> f : unsent.values()) {
        f.completeExceptionally(new TributaryException(ErrorCode.NETWORK_EXCEPTION, reason));
      }
    }

    /** How many tracked requests are in flight (forwarded or not yet). */
    int inFlight() {
      return inFlight.size() + unsent.size();
    }

    /** Why requests are refused at once (the client's ActorSystem or the JVM shuts down), or null while they are not. */
    String stopping() {
      return stopping;
    }

    /** The generation of the current gateway, to pass back to {@link #answered} / {@link #timedOut}. */
    int generation() {
      return generation.get();
    }

    /** A request sent under {@code gen} was answered now. */
    void answered(int gen) {
      if (gen == generation.get()) {
        lastAnswerNanos = System.nanoTime();
      }
    }

    /**
     * A request sent under {@code gen} at {@code sentNanos} timed out: suspect the gateway unless something sent
     * through it was answered after that request was sent.
     */
    void timedOut(int gen, long sentNanos, String what) {
      ActorRef<Object> ref = failover;
      if (ref != null && gen == generation.get() && lastAnswerNanos - sentNanos < 0) {
        ref.tell(new Suspect(gen, what + " timed out"));
      }
    }

    private void switched(int newGeneration) {
      lastAnswerNanos = System.nanoTime();
      generation.set(newGeneration);
      lostGateway = null;
    }

    /** Why the client has no gateway right now (it gave the last one up and looks for another), or null. */
    private volatile String lostGateway;

    /**
     * While the client looks for a gateway after giving one up: why, e.g. "the Tributary gateway akka://... is gone
     * (its node stopped or was killed) and no node of the bootstrap list has answered since"; null while it has one.
     */
    String lostGateway() {
      return lostGateway;
    }
  }

  /** A key that is equal only to itself's referent (requests are records: their equals compares contents). */
  private record Identity(Object referent) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Identity other && other.referent == referent;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(referent);
    }
  }

  /** Suspect the gateway of generation {@code generation}. */
  record Suspect(int generation, String reason) {}

  /** Stop the failover actor (the client is closed). */
  enum Shutdown {
    INSTANCE
  }

  private record GatewayTerminated(int generation) {}

  /** Time to ask the current gateway's path who answers there ({@link #checkIncarnation}). */
  private enum CheckIncarnation {
    INSTANCE
  }

  /**
   * The actor that answered an {@code Identify} at the path of the gateway of generation {@code generation}.
   * Package-private for tests.
   */
  record IncarnationAnswer(int generation, akka.actor.ActorRef gateway) {}

  /** Stop sending: the local ActorSystem or the JVM shuts down. */
  private record Stop(String reason) {}

  private record ProbeAnswer(int round, int index, ActorRef<ClientRequest> gateway) {}

  private record ProbeFailed(int round, int index) {}

  private record NextRound(int round) {}

  private record Held(ClientRequest request, long sinceNanos) {}

  private final ActorContext<Object> context;
  private final TimerScheduler<Object> timers;
  private final List<ActorRef<ClientRequest>> gateways;
  private final Health health;
  private final long requestTimeoutMs;
  private final long retryBackoffMs;
  private final ArrayDeque<Held> held = new ArrayDeque<>();

  private ActorRef<ClientRequest> current;
  /** The actor UID of the current gateway as last identified (its incarnation), or 0 while not known yet. */
  private int currentUid;
  private int currentIndex;
  private int generation;
  private boolean probing;
  private int round;
  private int failedThisRound;
  private ActorRef<ClientRequest> suspectAnswer;
  private long backoffMs;
  /**
   * The last listener that said it was closing ({@link GatewayClosing#replyTo}: its address and actor UID), or null:
   * while it finishes telling its clients it still answers probes, and must not be taken back; the same node started
   * again has another UID.
   */
  private akka.actor.ActorPath closed;

  /**
   * The failover actor's behavior.
   *
   * @param gateways the gateways of all known nodes (remote refs resolved from the bootstrap addresses)
   * @param initial the index of the gateway that answered at connect time
   * @param health shared with the client's ask path; this actor registers itself in it
   * @param requestTimeoutMs {@code request.timeout.ms}
   * @param retryBackoffMs {@code retry.backoff.ms}
   */
  static Behavior<Object> create(
      List<ActorRef<ClientRequest>> gateways, int initial, Health health, long requestTimeoutMs, long retryBackoffMs) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  GatewayFailover f =
                      new GatewayFailover(context, timers, gateways, initial, health, requestTimeoutMs, retryBackoffMs);
                  return Behaviors.receive(Object.class).onAnyMessage(f::onMessage).build();
                }));
  }

  private GatewayFailover(
      ActorContext<Object> context,
      TimerScheduler<Object> timers,
      List<ActorRef<ClientRequest>> gateways,
      int initial,
      Health health,
      long requestTimeoutMs,
      long retryBackoffMs) {
    this.context = context;
    this.timers = timers;
    this.gateways = List.copyOf(gateways);
    this.health = health;
    this.requestTimeoutMs = requestTimeoutMs;
    this.retryBackoffMs = retryBackoffMs;
    health.failover = context.getSelf();
    use(initial, this.gateways.get(initial));
    timers.startTimerWithFixedDelay(CheckIncarnation.INSTANCE, Duration.ofMillis(INCARNATION_CHECK_MS));
  }

  private Behavior<Object> onMessage(Object message) {
    if (message instanceof ClientRequest request) {
      if (probing) {
        hold(request);
      } else {
        current.tell(request);
        health.forwarded(request, generation);
      }
    } else if (message instanceof Suspect s) {
      if (s.generation() == generation && !probing && !stopIfShuttingDown()) {
        context.getLog().warn("Tributary gateway {} suspected ({}); looking for another node", current.path(),
            s.reason());
        giveUpCurrent("suspected: " + s.reason());
      }
    } else if (message instanceof GatewayClosing c) {
      if (c.replyTo() != null) {
        c.replyTo().tell(new GatewayClosing.Seen(context.getSystem().address().toString()));
        closed = c.replyTo().path();
      }
      if (!probing && c.gateway().equals(current.path().address().toString()) && !stopIfShuttingDown()) {
        context.getLog().warn("Tributary gateway {} is closing (its node stops); looking for another node",
            current.path());
        giveUpCurrent("closing (its node stops)");
      }
    } else if (message instanceof GatewayTerminated t) {
      if (t.generation() == generation && !probing && !stopIfShuttingDown()) {
        context.getLog().warn("Tributary gateway {} is gone; looking for another node", current.path());
        giveUpCurrent("gone");
      }
    } else if (message == CheckIncarnation.INSTANCE) {
      checkIncarnation();
    } else if (message instanceof IncarnationAnswer a) {
      onIncarnationAnswer(a);
    } else if (message instanceof ProbeAnswer a) {
      onProbeAnswer(a);
    } else if (message instanceof ProbeFailed f) {
      onProbeFailed(f);
    } else if (message instanceof NextRound n) {
      if (probing && n.round() == round && !stopIfShuttingDown()) {
        probeRound();
      }
    } else if (message == Shutdown.INSTANCE) {
      return Behaviors.stopped();
    }
    return Behaviors.same();
  }

  private void use(int index, ActorRef<ClientRequest> gateway) {
    if (current != null) {
      context.unwatch(current);
    }
    current = gateway;
    currentUid = gateway.path().uid(); // 0 for a ref resolved from a bootstrap address: learnt at the first check
    currentIndex = index;
    generation++;
    health.switched(generation);
    context.watchWith(gateway, new GatewayTerminated(generation));
  }

  /**
   * While requests are in flight (or the current gateway's incarnation is not known yet), asks the current gateway's
   * path, by actor selection as the probe does, which actor answers there. A node killed and started again within
   * seconds on the same address is not reported by death watch (the new process answers its heartbeats) and its new
   * gateway answers new requests, so neither rule of the class comment gives the old one up; the requests in flight
   * to the old process would wait for {@code request.timeout.ms}. The new gateway has another actor UID: {@link
   * #onIncarnationAnswer} gives the old one up, which fails those requests for a retry at once, as Kafka's client
   * retries when the broker's TCP connection drops.
   */
  private void checkIncarnation() {
    if (probing || (currentUid != 0 && health.inFlight() == 0)) {
      return;
    }
    int gen = generation;
    // null: nobody there, or no answer in time: nothing learnt
    identifyAt(current.path(), Duration.ofMillis(INCARNATION_CHECK_MS), ref -> new IncarnationAnswer(gen, ref));
  }

  /**
   * Asks the actor at {@code path} with {@code Identify}, by path rather than through a ref: Artery drops every
   * message to a ref of a quarantined node, but lets an actor selection through and then shakes hands with whatever
   * incarnation now listens there (see the class comment). The answer comes back to this actor as {@code
   * toMessage.apply(ref)}, with the answering actor's ref (its UID included), or null when nobody is there or no
   * answer came within {@code timeout}.
   */
  private void identifyAt(
      akka.actor.ActorPath path, Duration timeout, java.util.function.Function<akka.actor.ActorRef, Object> toMessage) {
    ActorSelection selection = Adapter.toClassic(context.getSystem()).actorSelection(path);
    CompletionStage<Object> answer = Patterns.ask(selection, new Identify(0), timeout);
    context.pipeToSelf(answer, (reply, failure) -> toMessage.apply(
        reply instanceof ActorIdentity identity && identity.getActorRef().isPresent()
            ? identity.getActorRef().get() : null));
  }

  /** See {@link #checkIncarnation}: another actor at the current gateway's path means its node restarted. */
  private void onIncarnationAnswer(IncarnationAnswer a) {
    if (a.gateway() == null || a.generation() != generation || probing) {
      return;
    }
    int uid = a.gateway().path().uid();
    if (currentUid == 0) {
      currentUid = uid;
    } else if (uid != currentUid && !stopIfShuttingDown()) {
      context.getLog().warn("Tributary gateway {} restarted (another incarnation answers at its address); looking "
          + "for a node", current.path());
      giveUpCurrent("restarted");
    }
  }

  /**
   * When the local ActorSystem or the JVM shuts down: stops probing, drops the held requests, fails the requests in
   * flight and makes the ask path refuse new ones. Returns whether it did.
   */
  private boolean stopIfShuttingDown() {
    String reason = shutdownReason(context.getSystem());
    if (reason == null) {
      return false;
    }
    if (health.stopping == null) {
      health.stopping = "the Tributary client is shutting down (" + reason + ")";
      context.getLog().debug("Tributary gateway {} lost while {}: no failover", current.path(), reason);
    }
    probing = false;
    held.clear();
    timers.cancelAll();
    health.failAllInFlight(health.stopping);
    return true;
  }

  /** The current gateway is given up: its requests in flight fail at once (retriable), and the probing starts. */
  private void giveUpCurrent(String why) {
    health.lostGateway = "the Tributary gateway " + current.path() + " is " + ("gone".equals(why)
        ? "gone (its node stopped or was killed)" : why) + " and no node of the bootstrap list has answered since";
    int failed = health.failInFlight(generation, "Tributary gateway " + current.path() + " " + why
        + "; retry through another node");
    if (failed > 0) {
      context.getLog().info("{} request(s) in flight through {} failed for a retry", failed, current.path());
    }
    startProbing();
  }

  /**
   * Why {@code system} cannot be used much longer: it terminated, its coordinated shutdown runs, or the JVM shuts
   * down (its shutdown hooks run); null if none of these.
   */
  static String shutdownReason(ActorSystem<?> system) {
    if (system.whenTerminated().isCompleted()) {
      return "its ActorSystem terminated";
    }
    if (CoordinatedShutdown.get(system).getShutdownReason().isPresent()) {
      return "its ActorSystem shuts down";
    }
    if (jvmShuttingDown()) {
      return "the JVM shuts down";
    }
    return null;
  }

  /** Whether the JVM runs its shutdown hooks (adding one is then refused). */
  static boolean jvmShuttingDown() {
    Thread probe = new Thread(() -> {});
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException e) {
      return true;
    } catch (SecurityException e) {
      return false;
    }
  }

  private void hold(ClientRequest request) {
    if (held.size() >= MAX_HELD) {
      held.pollFirst(); // the oldest: its sender is the closest to its timeout
    }
    held.addLast(new Held(request, System.nanoTime()));
  }

  private void startProbing() {
    probing = true;
    backoffMs = Math.max(1, retryBackoffMs);
    probeRound();
  }

  private void probeRound() {
    round++;
    failedThisRound = 0;
    suspectAnswer = null;
    Duration timeout = Duration.ofMillis(Math.max(1, Math.min(requestTimeoutMs, MAX_PROBE_TIMEOUT_MS)));
    for (int i = 0; i < gateways.size(); i++) {
      int index = i;
      int thisRound = round;
      identifyAt(gateways.get(i).path(), timeout, ref -> ref != null
          ? new ProbeAnswer(thisRound, index, Adapter.<ClientRequest>toTyped(ref))
          : new ProbeFailed(thisRound, index));
    }
  }

  private void onProbeAnswer(ProbeAnswer a) {
    if (!probing || a.round() != round) {
      return;
    }
    akka.actor.ActorPath answered = a.gateway().path();
    if (closed != null && answered.address().equals(closed.address()) && answered.uid() == closed.uid()) {
      onProbeFailed(new ProbeFailed(a.round(), a.index())); // the closing listener, still telling its clients
      return;
    }
    if (a.index() == currentIndex && gateways.size() > 1) {
      suspectAnswer = a.gateway(); // alive, but prefer another node
      if (failedThisRound == gateways.size() - 1) {
        switchTo(a.index(), a.gateway());
      }
      return;
    }
    switchTo(a.index(), a.gateway());
  }

  private void onProbeFailed(ProbeFailed f) {
    if (!probing || f.round() != round) {
      return;
    }
    failedThisRound++;
    if (suspectAnswer != null && failedThisRound == gateways.size() - 1) {
      switchTo(currentIndex, suspectAnswer);
    } else if (failedThisRound == gateways.size()) {
      dropExpiredHeld();
      timers.startSingleTimer(new NextRound(round), Duration.ofMillis(backoffMs));
      backoffMs = Math.min(MAX_PROBE_BACKOFF_MS, backoffMs * 2);
    }
  }

  private void switchTo(int index, ActorRef<ClientRequest> gateway) {
    probing = false;
    if (index != currentIndex) {
      context.getLog().warn("Tributary client now uses the gateway {}", gateway.path());
    } else {
      // the same node answered again (it came back, or only seemed lost): say so after the "looking for" line
      context.getLog().warn("Tributary gateway {} answers again", gateway.path());
    }
    use(index, gateway);
    dropExpiredHeld();
    while (!held.isEmpty()) {
      ClientRequest request = held.pollFirst().request();
      current.tell(request);
      health.forwarded(request, generation);
    }
  }

  private void dropExpiredHeld() {
    long now = System.nanoTime();
    long limit = Duration.ofMillis(requestTimeoutMs).toNanos();
    while (!held.isEmpty() && now - held.peekFirst().sinceNanos() > limit) {
      held.pollFirst();
    }
  }

  /** Whether {@code failure} (of an ask) is a timeout. */
  static boolean isTimeout(Throwable failure) {
    Throwable t = failure;
    while (t != null && !(t instanceof TimeoutException)) {
      t = t.getCause();
    }
    return t != null;
  }
}
