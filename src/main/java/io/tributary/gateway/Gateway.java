package io.tributary.gateway;


import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import akka.actor.typed.javadsl.TimerScheduler;
import io.tributary.cluster.Controller;
import io.tributary.group.GroupCoordinator;
import io.tributary.log.LocalLeaders;
import io.tributary.log.PartitionLeader;
import io.tributary.protocol.AdminRequest;
import io.tributary.protocol.AdminResponse;
import io.tributary.protocol.ClientRequest;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.FetchRequest;
import io.tributary.protocol.FetchResponse;
import io.tributary.protocol.GroupProtocol;
import io.tributary.protocol.ListOffsetsRequest;
import io.tributary.protocol.ListOffsetsResponse;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.protocol.TopicNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The entry point of every node for clients, at the well-known path {@value #PATH}: a client JVM (not a cluster
 * member) reaches it over Artery as {@code akka://<system>@<host>:<port>/system/tributary-gateway}.
 *
 * <p>It checks what it can check cheaply (protocol version, topic name, partition ≥ 0) and routes: produce, fetch
 * and list-offsets requests go straight to the partition's leader replica when the node's metadata places it on this
 * node ({@link LocalLeaders}), else through the node's partition router ({@link io.tributary.log.ReplicaManager});
 * the leader answers the client directly, the gateway is not on the response path; the entries of a {@link
 * MultiProduceRequest} are routed alike and their leaders' answers gathered into one answer ({@link
 * ProduceGathering}, through the gateway's message adapter); admin requests go to the
 * {@link Controller} singleton, group requests ({@link GroupProtocol.GroupRequest}) to the {@link GroupCoordinator}
 * singleton. A request it rejects is answered with UNSUPPORTED_VERSION, INVALID_TOPIC_EXCEPTION or
 * UNKNOWN_TOPIC_OR_PARTITION.
 *
 * <p>Admin requests go through a short-lived child that answers the client itself: with the controller's answer, or
 * with REQUEST_TIMED_OUT (retriable; the admin client retries) when the controller has not answered within the
 * gateway's controller timeout (twice {@code metadata.write.timeout.ms}, 10 s by default). A request sent while the
 * controller singleton moves off a node that just died is lost on the way; without this the client would wait its
 * whole {@code request.timeout.ms} (30 s) before retrying. Group requests other than joins (answered only when their
 * rebalance completes) and assignment acks (not answered) go the same way, answered COORDINATOR_NOT_AVAILABLE after
 * the same timeout when the group coordinator singleton does not answer.
 *
 * <p>One per node; its only state is the multi-partition produce requests in flight ({@link ProduceGathering}).
 */
public final class Gateway {
  /**
   * Actor name under {@code /system} of the client listener's door ({@link ClientListener}): what clients look for at
   * a bootstrap address.
   */
  public static final String NAME = "tributary-gateway";
  /** Path of the client listener's door, {@code /system/tributary-gateway}. */
  public static final String PATH = "/system/" + NAME;
  /**
   * Actor name under {@code /system} of the node's own gateway, in the node's ActorSystem (cluster port). Another name
   * than the door's, so that a client given a cluster port finds no gateway there and is told so, instead of being
   * served past the client listener.
   */
  public static final String NODE_NAME = "tributary-node-gateway";
  /** Path of the node's own gateway, {@code /system/tributary-node-gateway}. */
  public static final String NODE_PATH = "/system/" + NODE_NAME;

  private Gateway() {}

  /** Default of how long an admin request waits for the controller (twice the default metadata write timeout). */
  public static final Duration DEFAULT_CONTROLLER_TIMEOUT = Duration.ofSeconds(10);

  /** The gateway behavior, routing to {@code partitions} and {@code controller}. */
  public static Behavior<ClientRequest> create(
      ActorRef<PartitionLeader.Command> partitions,
      ActorRef<Controller.Command> controller,
      ActorRef<GroupCoordinator.Command> groups) {
    return create(partitions, controller, groups, DEFAULT_CONTROLLER_TIMEOUT);
  }

  /**
   * The gateway behavior, routing to {@code partitions} and {@code controller}; an admin request the controller does
   * not answer within {@code controllerTimeout} is answered REQUEST_TIMED_OUT.
   */
  public static Behavior<ClientRequest> create(
      ActorRef<PartitionLeader.Command> partitions,
      ActorRef<Controller.Command> controller,
      ActorRef<GroupCoordinator.Command> groups,
      Duration controllerTimeout) {
    return create(partitions, controller, groups, controllerTimeout, DEFAULT_JOIN_TIMEOUT);
  }

  /** Default of {@code tributary.join-timeout}. */
  public static final Duration DEFAULT_JOIN_TIMEOUT = Duration.ofSeconds(20);

  /**
   * The gateway behavior, routing to {@code partitions} and {@code controller}; an admin request the controller does
   * not answer within {@code controllerTimeout} is answered REQUEST_TIMED_OUT; once {@code joinTimeout} has passed
   * since the gateway started without this node joining a cluster, admin and group requests are answered
   * BROKER_NOT_AVAILABLE at once, with a message that names seed nodes and joining ({@code tributary.join-timeout}).
   */
  public static Behavior<ClientRequest> create(
      ActorRef<PartitionLeader.Command> partitions,
      ActorRef<Controller.Command> controller,
      ActorRef<GroupCoordinator.Command> groups,
      Duration controllerTimeout,
      Duration joinTimeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      LocalLeaders leaders = LocalLeaders.get(ctx.getSystem());
      JoinCheck join = JoinCheck.create(ctx.getSystem(), joinTimeout);
      ProduceGathering gathering = new ProduceGathering(ctx.messageAdapter(ProduceResponse.class, Gathered::new));
      return Behaviors.receive(ClientRequest.class)
          .onMessage(ProduceRequest.class, r -> {
            produce(leaders, partitions, r);
            return Behaviors.same();
          })
          .onMessage(MultiProduceRequest.class, r -> {
            multiProduce(leaders, partitions, gathering, timers, r);
            return Behaviors.same();
          })
          .onMessage(Gathered.class, g -> {
            gathering.onResponse(g.response());
            return Behaviors.same();
          })
          .onMessage(ExpireGathered.class, t -> {
            gathering.expire(System.nanoTime());
            if (gathering.isEmpty()) {
              timers.cancel(ExpireGathered.INSTANCE);
            }
            return Behaviors.same();
          })
          .onMessage(FetchRequest.class, r -> {
            String error = check(r.version(), r.topic(), r.partition());
            if (error == null) {
              route(leaders, partitions, r.topic(), r.partition()).tell(new PartitionLeader.Fetch(r));
            } else {
              r.replyTo().tell(FetchResponse.failed(r.topic(), r.partition(), code(r.version(), r.partition()), error,
                  -1, -1));
            }
            return Behaviors.same();
          })
          .onMessage(ListOffsetsRequest.class, r -> {
            String error = check(r.version(), r.topic(), r.partition());
            if (error == null) {
              route(leaders, partitions, r.topic(), r.partition()).tell(new PartitionLeader.ListOffsets(r));
            } else {
              r.replyTo().tell(new ListOffsetsResponse(r.topic(), r.partition(), code(r.version(), r.partition()),
                  error, -1, -1));
            }
            return Behaviors.same();
          })
          .onMessage(GroupProtocol.GroupRequest.class, r -> {
            String refusal = join == null || r.replyTo() == null ? null : join.refusal();
            if (refusal != null) {
              GroupProtocol.fail(r, ErrorCode.BROKER_NOT_AVAILABLE, refusal);
            } else if (r instanceof GroupProtocol.JoinGroup || r.replyTo() == null) {
              // a join is answered when its rebalance completes (up to the member's rebalance timeout), an
              // assignment ack not at all: both go straight to the coordinator, which checks the version
              groups.tell(new GroupCoordinator.Request(r));
            } else {
              ctx.spawnAnonymous(forwardGroup(groups, r, controllerTimeout));
            }
            return Behaviors.same();
          })
          .onMessage(AdminRequest.class, r -> {
            if (!ProtocolVersions.isSupported(r.version())) {
              replyAdmin(r, AdminResponse.failed(ErrorCode.UNSUPPORTED_VERSION, unsupported(r.version())));
            } else if (join != null && join.refusal() != null) {
              replyAdmin(r, AdminResponse.failed(ErrorCode.BROKER_NOT_AVAILABLE, join.refusal()));
            } else {
              // a node that has not joined yet gets until the join timeout, then says why it cannot serve
              Duration wait = join == null || join.joined() ? controllerTimeout
                  : join.remaining().compareTo(controllerTimeout) < 0 ? join.remaining() : controllerTimeout;
              ctx.spawnAnonymous(forwardAdmin(controller, r, wait, join));
            }
            return Behaviors.same();
          })
          .build();
    }));
  }

  /** Checks and routes one partition's produce request; a request it refuses is answered here. */
  private static void produce(
      LocalLeaders leaders, ActorRef<PartitionLeader.Command> partitions, ProduceRequest r) {
    String error = check(r.version(), r.topic(), r.partition());
    if (error == null && TopicNames.CONSUMER_OFFSETS.equals(r.topic())) {
      // only the group coordinator writes there (straight to the partition, not through a gateway): a client's
      // record would be read as a commit at the next load (as Kafka: "Cannot append to internal topic")
      r.reply(ProduceResponse.failed(r.topic(), r.partition(), ErrorCode.INVALID_TOPIC_EXCEPTION,
          "Cannot append to internal topic " + r.topic()));
    } else if (error == null) {
      route(leaders, partitions, r.topic(), r.partition()).tell(new PartitionLeader.Produce(r));
    } else {
      r.reply(ProduceResponse.failed(r.topic(), r.partition(), code(r.version(), r.partition()), error));
    }
  }

  /**
   * A {@link MultiProduceRequest}: each entry goes its way as a {@link ProduceRequest} (checked and routed as one sent
   * alone), numbered and answered to the gateway's gatherer ({@link ProduceGathering}), which answers the client once.
   * An entry repeating an earlier entry's partition is answered INVALID_REQUEST. Without a reply-to (nobody waits) the
   * entries are routed unanswered. A request of a version without multi-partition requests is refused per entry.
   */
  private static void multiProduce(
      LocalLeaders leaders,
      ActorRef<PartitionLeader.Command> partitions,
      ProduceGathering gathering,
      TimerScheduler<ClientRequest> timers,
      MultiProduceRequest r) {
    List<MultiProduceRequest.Entry> entries = r.entries();
    if (!ProtocolVersions.isSupported(r.version()) || r.version() < ProtocolVersions.MULTI_PRODUCE) {
      if (r.replyTo() != null) {
        List<ProduceResponse> refused = new ArrayList<>(entries.size());
        for (MultiProduceRequest.Entry e : entries) {
          refused.add(ProduceResponse.failed(e.topic(), e.partition(), ErrorCode.UNSUPPORTED_VERSION,
              unsupported(r.version())));
        }
        r.replyTo().tell(new MultiProduceResponse(refused));
      }
      return;
    }
    List<ProduceRequest> requests;
    if (r.replyTo() == null) {
      requests = new ArrayList<>(entries.size());
      for (MultiProduceRequest.Entry e : entries) {
        requests.add(e.toProduceRequest(r.version(), r.acks(), r.timeoutMs(), null));
      }
    } else if (entries.isEmpty()) {
      r.replyTo().tell(new MultiProduceResponse(List.of()));
      return;
    } else {
      requests = gathering.register(r, System.nanoTime());
      if (!timers.isTimerActive(ExpireGathered.INSTANCE)) {
        timers.startTimerWithFixedDelay(ExpireGathered.INSTANCE, GATHER_EXPIRY_TICK);
      }
    }
    Set<String> seen = requests.size() > 1 ? new HashSet<>() : null;
    for (ProduceRequest request : requests) {
      if (seen != null && !seen.add(request.partition() + "/" + request.topic())) {
        request.reply(ProduceResponse.failed(request.topic(), request.partition(), ErrorCode.INVALID_REQUEST,
            "Partition " + request.topic() + "-" + request.partition()
                + " appears more than once in one produce request"));
        continue;
      }
      produce(leaders, partitions, request);
    }
  }

  /** How often the gateway answers the multi-partition requests whose timeout passed, while any is in flight. */
  static final Duration GATHER_EXPIRY_TICK = Duration.ofMillis(100);

  /** A leader's answer to an entry of a multi-partition request, through the gateway's message adapter. */
  private record Gathered(ProduceResponse response) implements ClientRequest {
    @Override
    public short version() {
      return ProtocolVersions.CURRENT;
    }
  }

  /** Timer: answer the multi-partition requests whose timeout passed. */
  private enum ExpireGathered implements ClientRequest {
    INSTANCE;

    @Override
    public short version() {
      return ProtocolVersions.CURRENT;
    }
  }

  /** The partition's leader replica if it runs on this node ({@link LocalLeaders}), else the node's router. */
  private static ActorRef<PartitionLeader.Command> route(
      LocalLeaders leaders, ActorRef<PartitionLeader.Command> router, String topic, int partition) {
    ActorRef<PartitionLeader.Command> local = leaders.leader(topic, partition);
    return local != null ? local : router;
  }

  private enum SingletonTimeout {
    INSTANCE
  }

  /**
   * A child that sends a request answered to itself ({@code send} builds it from the child's ref), passes the first
   * answer on to the client ({@code passOn}), or, when none came within {@code timeout}, has {@code onTimeout} answer
   * the client with a retriable error; then it stops. Serves the controller and the group coordinator: a request sent
   * while such a singleton moves off a node that just died is lost on the way, and the client would otherwise wait
   * its whole {@code request.timeout.ms} (30 s).
   */
  private static Behavior<Object> forward(
      java.util.function.Consumer<ActorRef<Object>> send,
      java.util.function.Consumer<Object> passOn,
      Runnable onTimeout,
      Duration timeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startSingleTimer(SingletonTimeout.INSTANCE, timeout);
      send.accept(ctx.getSelf());
      return Behaviors.receive(Object.class)
          .onMessage(SingletonTimeout.class, t -> {
            onTimeout.run();
            return Behaviors.stopped();
          })
          .onAnyMessage(answer -> {
            passOn.accept(answer);
            return Behaviors.stopped();
          })
          .build();
    }));
  }

  /** {@link #forward} of an admin request to the controller; REQUEST_TIMED_OUT (the admin client retries it). */
  private static Behavior<Object> forwardAdmin(
      ActorRef<Controller.Command> controller, AdminRequest r, Duration timeout, JoinCheck join) {
    return forward(
        self -> controller.tell(new Controller.Admin(r.withReplyTo(self.narrow()))),
        answer -> replyAdmin(r, (AdminResponse) answer),
        () -> {
          String refusal = join == null ? null : join.refusal();
          replyAdmin(r, refusal != null ? AdminResponse.failed(ErrorCode.BROKER_NOT_AVAILABLE, refusal)
              : AdminResponse.failed(ErrorCode.REQUEST_TIMED_OUT, "The controller did not answer within "
                  + timeout.toMillis() + " ms (it may be moving to another node after a node failure); retry"));
        },
        timeout);
  }

  /**
   * {@link #forward} of a group request to the group coordinator; COORDINATOR_NOT_AVAILABLE (retriable, as Kafka's
   * answer while a coordinator moves), in the request's own response type.
   */
  @SuppressWarnings("unchecked")
  private static Behavior<Object> forwardGroup(
      ActorRef<GroupCoordinator.Command> groups, GroupProtocol.GroupRequest r, Duration timeout) {
    return forward(
        self -> groups.tell(new GroupCoordinator.Request(GroupProtocol.withReplyTo(r, self))),
        answer -> ((ActorRef<Object>) r.replyTo()).tell(answer),
        () -> GroupProtocol.fail(r, ErrorCode.COORDINATOR_NOT_AVAILABLE, "The group coordinator did not answer within "
            + timeout.toMillis() + " ms (it may be moving to another node after a node failure); retry"),
        timeout);
  }

  private static void replyAdmin(AdminRequest r, AdminResponse response) {
    if (r.replyTo() != null) {
      r.replyTo().tell(response);
    }
  }

  /** Null if the request may be routed, else why not. */
  private static String check(short version, String topic, int partition) {
    if (!ProtocolVersions.isSupported(version)) {
      return unsupported(version);
    }
    String invalid = TopicNames.invalidReason(topic);
    if (invalid != null) {
      return invalid;
    }
    if (partition < 0) {
      return "Partition " + partition + " of " + topic + " does not exist";
    }
    return null;
  }

  private static ErrorCode code(short version, int partition) {
    if (!ProtocolVersions.isSupported(version)) {
      return ErrorCode.UNSUPPORTED_VERSION;
    }
    return partition < 0 ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_TOPIC_EXCEPTION;
  }

  private static String unsupported(short version) {
    return "Protocol version " + version + " is not supported by this broker (supported: "
        + ProtocolVersions.MIN_SUPPORTED + ".." + ProtocolVersions.CURRENT + ")";
  }
}
