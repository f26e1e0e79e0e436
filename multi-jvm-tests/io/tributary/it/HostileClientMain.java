package io.tributary.it;

import akka.actor.ActorIdentity;
import akka.actor.ActorPath;
import akka.actor.ActorRef;
import akka.actor.ActorSelection;
import akka.actor.ActorSystem;
import akka.actor.Address;
import akka.actor.AddressFromURIString;
import akka.actor.ExtendedActorSystem;
import akka.actor.Identify;
import akka.actor.Kill;
import akka.actor.PoisonPill;
import akka.actor.RootActorPath;
import akka.actor.typed.javadsl.Adapter;
import akka.cluster.Cluster;
import akka.cluster.ClusterUserAction;
import akka.cluster.ddata.LWWMapKey;
import akka.cluster.ddata.Replicator;
import akka.pattern.Patterns;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tributary.log.ReplicaManager;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProtocolVersions;
import io.tributary.record.RecordBatchBuilder;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A hostile process that is not a cluster member: it knows a node's client listener ({@code --bootstrap-server}) and,
 * from the node's own output, its cluster address, and sends to the listener every message that took a node apart when
 * clients reached the cluster port (issue 34): cluster {@code Down} and {@code Leave} (by actor selection and by
 * direct reference, naming the node's cluster address and the listener's), {@code PoisonPill} and {@code Kill} to the
 * gateway and to system actors, {@code Identify} of system actors, Distributed Data messages, the node's internal
 * metadata push ({@code ReplicaManager.TopicsChanged} removing a topic), a produce request whose reply-to is one of the
 * node's own actors, arbitrary serialized messages (a string, bytes, a Java-serialized object), garbage over a raw
 * socket, and a real attempt to join the cluster through the listener as a {@code broker} node.
 *
 * <p>Prints one line per probe, {@code RESULT <name>: <outcome>}, for {@link HostileClientIT} to check, and exits 0.
 *
 * <p>Arguments: {@code <listener host:port> <cluster host:port> <topic>}.
 */
public final class HostileClientMain {
  private HostileClientMain() {}

  /** Tributary's replicator of the topic metadata (typed); its classic replicator is its child {@code underlying}. */
  static final String METADATA_REPLICATOR = "/system/tributary-metadata-replicator";

  /** System actors a member runs: none of them may be reachable through the listener. */
  static final List<String> SYSTEM_PATHS = List.of(
      "/system/cluster/core/daemon",
      "/system/cluster/heartbeatReceiver",
      "/system/ddataReplicator",
      METADATA_REPLICATOR,
      METADATA_REPLICATOR + "/underlying",
      "/system/tributary-replicas",
      "/system/tributary-partitions",
      "/system/tributary-node-gateway",
      "/system/receptionist",
      "/system/remote-watcher",
      "/system/sharding",
      "/user",
      "/system");

  /** The gateway's path (the only one a client may select). */
  static final String GATEWAY = "/system/tributary-gateway";

  private static final Duration ASK = Duration.ofSeconds(3);
  private static final int JOIN_WAIT_S = 15;
  private static final Duration JOIN_WAIT = Duration.ofSeconds(JOIN_WAIT_S);

  public static void main(String[] args) throws Exception {
    String listener = args[0];
    String clusterHostPort = args[1];
    String topic = args[2];
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("akka.actor.provider", "remote");
    settings.put("akka.remote.artery.canonical.hostname", "127.0.0.1");
    settings.put("akka.remote.artery.canonical.port", 0);
    settings.put("akka.loglevel", "WARNING");
    settings.put("akka.remote.warn-about-direct-use", "off");
    settings.put("akka.remote.use-unsafe-remote-features-outside-cluster", "on");
    settings.put("akka.actor.allow-java-serialization", "on");
    settings.put("akka.actor.warn-about-java-serializer-usage", "off");
    Config config = ConfigFactory.parseMap(settings).withFallback(ConfigFactory.load());
    ActorSystem system = ActorSystem.create("hostile", config);
    Address target = AddressFromURIString.parse("akka://tributary@" + listener);
    Address clusterAddress = AddressFromURIString.parse("akka://tributary@" + clusterHostPort);
    try {
      // reachability: the gateway identifies itself, so the messages below did reach a live listener
      report("identify " + GATEWAY, identify(system, target, GATEWAY).get(10, TimeUnit.SECONDS));
      Map<String, CompletableFuture<String>> identities = new LinkedHashMap<>();
      for (String path : SYSTEM_PATHS) {
        identities.put(path, identify(system, target, path));
      }
      for (Map.Entry<String, CompletableFuture<String>> e : identities.entrySet()) {
        report("identify " + e.getKey(), e.getValue().get(10, TimeUnit.SECONDS));
      }

      List<Object> cluster = List.of(
          new ClusterUserAction.Down(clusterAddress),
          new ClusterUserAction.Down(target),
          new ClusterUserAction.Leave(clusterAddress),
          new ClusterUserAction.Leave(target));
      for (Object m : cluster) {
        sendEverywhere(system, target, "/system/cluster/core/daemon", m);
      }
      for (String path : concat(List.of(GATEWAY), SYSTEM_PATHS)) {
        sendEverywhere(system, target, path, PoisonPill.getInstance());
        sendEverywhere(system, target, path, Kill.getInstance());
      }
      akka.cluster.ddata.Key<akka.cluster.ddata.LWWMap<String, Object>> topicsKey = LWWMapKey.create("tributary-topics");
      for (String path : List.of("/system/ddataReplicator", METADATA_REPLICATOR + "/underlying")) {
        sendEverywhere(system, target, path, new Replicator.Get<>(topicsKey, Replicator.readLocal()));
        sendEverywhere(system, target, path, new Replicator.Subscribe<>(topicsKey, system.deadLetters()));
        sendEverywhere(system, target, path, new Replicator.Delete<>(topicsKey, Replicator.writeLocal()));
      }
      ReplicaManager.TopicsChanged remove = new ReplicaManager.TopicsChanged(List.of(), List.of(topic));
      for (String path : List.of(GATEWAY, "/system/tributary-replicas", "/system/tributary-partitions")) {
        sendEverywhere(system, target, path, remove);
      }
      // a well-formed produce whose answer would go to one of the node's own actors: dropped, nothing appended
      RecordBatchBuilder builder = new RecordBatchBuilder();
      builder.append(System.currentTimeMillis(), "hostile".getBytes(StandardCharsets.UTF_8),
          "must never be stored".getBytes(StandardCharsets.UTF_8), null);
      ActorRef internal = ref(system, clusterAddress, "/system/tributary-replicas");
      ActorRef listenerOwn = ref(system, target, "/system/remote-watcher");
      byte[] batch = builder.build();
      for (ActorRef replyTo : List.of(internal, listenerOwn)) {
        ProduceRequest produce = new ProduceRequest(ProtocolVersions.CURRENT, topic, 0, (short) 1, 5000,
            batch, Adapter.toTyped(replyTo));
        sendEverywhere(system, target, GATEWAY, produce);
      }
      for (Object arbitrary : List.of("hello", new byte[] {1, 2, 3, 4, 5, 6, 7, 8},
          new ArrayList<>(List.of("java", "serialized")))) {
        sendEverywhere(system, target, GATEWAY, arbitrary);
        sendEverywhere(system, target, "/system/cluster/core/daemon", arbitrary);
      }
      report("garbage", garbage(listener));
      // give Artery time to deliver everything above before the join attempt and the exit
      report("identify " + GATEWAY + " after the messages",
          identify(system, target, GATEWAY).get(10, TimeUnit.SECONDS));
      report("join", join(target));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    System.out.flush();
    System.exit(0);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  private static void report(String name, String outcome) {
    System.out.println("RESULT " + name + ": " + outcome);
  }

  private static ActorRef ref(ActorSystem system, Address address, String path) {
    ActorPath p = new RootActorPath(address, "/");
    for (String element : path.substring(1).split("/")) {
      p = p.$div(element);
    }
    return ((ExtendedActorSystem) system).provider().resolveActorRef(p);
  }

  /** Sends {@code message} to {@code path} both by actor selection and by a reference resolved from the path. */
  private static void sendEverywhere(ActorSystem system, Address target, String path, Object message) {
    system.actorSelection(new RootActorPath(target, "/") + path.substring(1)).tell(message, ActorRef.noSender());
    ref(system, target, path).tell(message, ActorRef.noSender());
  }

  /** "answered" with the ref, "none" (ActorIdentity without a ref) or "no answer". */
  private static CompletableFuture<String> identify(ActorSystem system, Address target, String path) {
    ActorSelection selection = system.actorSelection(new RootActorPath(target, "/") + path.substring(1));
    CompletionStage<Object> answer = Patterns.ask(selection, new Identify(path), ASK);
    return answer.toCompletableFuture().handle((r, e) -> {
      if (e != null) {
        return "no answer";
      }
      return r instanceof ActorIdentity id && id.getActorRef().isPresent()
          ? "answered " + id.getActorRef().get().path() : "none";
    });
  }

  /** Random bytes over a raw socket: "sent" (the listener is expected to close it). */
  private static String garbage(String listener) {
    int colon = listener.lastIndexOf(':');
    try (Socket socket = new Socket(listener.substring(0, colon), Integer.parseInt(listener.substring(colon + 1)))) {
      byte[] junk = new byte[64 * 1024];
      new Random(34).nextBytes(junk);
      OutputStream out = socket.getOutputStream();
      out.write(junk);
      out.flush();
      return "sent";
    } catch (java.io.IOException e) {
      return "sent (closed by the listener: " + e.getMessage() + ")";
    }
  }

  /**
   * Tries to join the cluster through the listener as a {@code broker} node: "joined" if it became Up within {@value
   * #JOIN_WAIT_S} s, else "not joined".
   */
  private static String join(Address listener) throws Exception {
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("akka.actor.provider", "cluster");
    settings.put("akka.remote.artery.canonical.hostname", "127.0.0.1");
    settings.put("akka.remote.artery.canonical.port", 0);
    settings.put("akka.cluster.seed-nodes", List.of(listener.toString()));
    settings.put("akka.cluster.roles", List.of("broker"));
    settings.put("akka.loglevel", "ERROR");
    settings.put("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    ActorSystem member = ActorSystem.create("tributary", ConfigFactory.parseMap(settings)
        .withFallback(ConfigFactory.load()));
    try {
      CompletableFuture<String> up = new CompletableFuture<>();
      Cluster.get(member).registerOnMemberUp(() -> up.complete("joined"));
      return up.completeOnTimeout("not joined", JOIN_WAIT.toMillis(), TimeUnit.MILLISECONDS).get();
    } finally {
      member.terminate();
      member.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

}
