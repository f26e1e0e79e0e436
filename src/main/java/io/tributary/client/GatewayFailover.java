package io.tributary.client;

import akka.actor.ActorIdentity;
import akka.actor.Identify;
import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.ActorContext;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import akka.pattern.Patterns;
import io.tributary.protocol.ClientRequest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletionStage;
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
 *   <li>Akka death watch reports it terminated: the node stopped or left (its ActorSystem terminated), or Artery's
 *       remote failure detector lost it (a killed node, after {@code akka.remote.watch-failure-detector}'s
 *       acceptable pause), or it was quarantined;
 *   <li>a request sent through it got no answer within {@code request.timeout.ms} and no other request through the
 *       same gateway was answered since that request was sent ({@link Health#timedOut}). A slow partition behind a
 *       live gateway does not move the client (other answers keep coming); a dead or hung node does, after one
 *       request timeout, as Kafka's client drops a connection whose request timed out.
 * </ul>
 *
 * <h2>Finding another gateway</h2>
 *
 * Every known gateway (the bootstrap list: for a local cluster it holds every node) is asked at once with Akka's
 * built-in {@link Identify}, which any live actor answers without a protocol message of ours. The first gateway other
 * than the suspected one that identifies itself becomes current; the suspected one is kept only if it is the only one
 * that answers. Requests that arrive meanwhile are held (at most {@value #MAX_HELD} of them) and sent to the new
 * gateway in order; those held longer than {@code request.timeout.ms} are dropped (their senders have timed out and
 * retry). If no gateway answers, the probe is repeated every {@code retry.backoff.ms} (doubling, at most 1 s). A
 * probe round waits at most {@code min(request.timeout.ms, 5 s)} for answers.
 *
 * <p>An actor: its state is confined to it. {@link Health} is the thread-safe part that the client's ask path uses.
 */
final class GatewayFailover {

  /** The most requests held while no gateway is known. */
  static final int MAX_HELD = 10_000;

  private static final long MAX_PROBE_TIMEOUT_MS = 5_000L;
  private static final long MAX_PROBE_BACKOFF_MS = 1_000L;

  /**
   * What the client's request path shares with the failover actor: the current gateway's generation (bumped at each
   * switch) and when a request through it was last answered. Thread-safe.
   */
  static final class Health {
    private final AtomicInteger generation = new AtomicInteger();
    private volatile long lastAnswerNanos = System.nanoTime();
    volatile ActorRef<Object> failover;

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
    }
  }

  /** Suspect the gateway of generation {@code generation}. */
  record Suspect(int generation, String reason) {}

  /** Stop the failover actor (the client is closed). */
  enum Shutdown {
    INSTANCE
  }

  private record GatewayTerminated(int generation) {}

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
  private int currentIndex;
  private int generation;
  private boolean probing;
  private int round;
  private int failedThisRound;
  private ActorRef<ClientRequest> suspectAnswer;
  private long backoffMs;

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
  }

  private Behavior<Object> onMessage(Object message) {
    if (message instanceof ClientRequest request) {
      if (probing) {
        hold(request);
      } else {
        current.tell(request);
      }
    } else if (message instanceof Suspect s) {
      if (s.generation() == generation && !probing) {
        context.getLog().warn("Tributary gateway {} suspected ({}); looking for another node", current.path(),
            s.reason());
        startProbing();
      }
    } else if (message instanceof GatewayTerminated t) {
      if (t.generation() == generation && !probing) {
        context.getLog().warn("Tributary gateway {} is gone; looking for another node", current.path());
        startProbing();
      }
    } else if (message instanceof ProbeAnswer a) {
      onProbeAnswer(a);
    } else if (message instanceof ProbeFailed f) {
      onProbeFailed(f);
    } else if (message instanceof NextRound n) {
      if (probing && n.round() == round) {
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
    currentIndex = index;
    generation++;
    health.switched(generation);
    context.watchWith(gateway, new GatewayTerminated(generation));
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
      CompletionStage<Object> answer =
          Patterns.ask(Adapter.toClassic(gateways.get(i)), new Identify(index), timeout);
      context.pipeToSelf(
          answer,
          (reply, failure) -> {
            if (reply instanceof ActorIdentity identity && identity.getActorRef().isPresent()) {
              ActorRef<ClientRequest> ref = Adapter.toTyped(identity.getActorRef().get());
              return new ProbeAnswer(thisRound, index, ref);
            }
            return new ProbeFailed(thisRound, index);
          });
    }
  }

  private void onProbeAnswer(ProbeAnswer a) {
    if (!probing || a.round() != round) {
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
    }
    use(index, gateway);
    dropExpiredHeld();
    while (!held.isEmpty()) {
      current.tell(held.pollFirst().request());
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
