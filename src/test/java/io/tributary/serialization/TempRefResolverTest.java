package io.tributary.serialization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import akka.actor.ExtendedActorSystem;
import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.ActorRef;
import akka.actor.typed.ActorRefResolver;
import akka.actor.typed.javadsl.Adapter;
import akka.actor.typed.javadsl.AskPattern;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link TempRefResolver} against Akka's own resolution, with two actor systems over Artery on loopback: the "client"
 * asks, the "broker" resolves the serialized reply-to.
 */
class TempRefResolverTest {
  private static ActorTestKit broker;
  private static ActorTestKit client;

  @BeforeAll
  static void start() {
    broker = ActorTestKit.create("broker", config());
    client = ActorTestKit.create("client", config());
  }

  private static com.typesafe.config.Config config() {
    return ConfigFactory.parseString("akka.actor.provider = cluster\nakka.remote.artery.canonical.port = 0\n"
            + "akka.remote.artery.canonical.hostname = 127.0.0.1\n")
        .withFallback(ConfigFactory.load());
  }

  @AfterAll
  static void stop() {
    client.shutdownTestKit();
    broker.shutdownTestKit();
  }

  private static ExtendedActorSystem classic(ActorTestKit kit) {
    return (ExtendedActorSystem) Adapter.toClassic(kit.system());
  }

  /** An ask from the client whose reply-to the probe receives; the ask stays open until the test answers it. */
  private record Ask(CompletionStage<String> answer, ActorRef<String> replyTo) {}

  private static Ask ask() {
    TestProbe<ActorRef<String>> seen = client.createTestProbe();
    ActorRef<ActorRef<String>> target = client.spawn(Behaviors.receiveMessage(r -> {
      seen.getRef().tell(r);
      return Behaviors.same();
    }));
    CompletionStage<String> answer =
        AskPattern.ask(target, r -> r, Duration.ofSeconds(10), client.system().scheduler());
    return new Ask(answer, seen.receiveMessage());
  }

  private static String serialized(ActorRef<?> ref) {
    return ActorRefResolver.get(client.system()).toSerializationFormat(ref);
  }

  @Test
  void aTemporaryReplyToResolvesToTheReferenceAkkaGivesOnceItsAddressIsKnown() throws Exception {
    TempRefResolver resolver = new TempRefResolver(classic(broker));
    Ask first = ask();
    String firstPath = serialized(first.replyTo());
    assertNull(resolver.resolve(firstPath), "address not learnt yet: Akka's resolution decides");
    akka.actor.ActorRef akkaFirst = classic(broker).provider().resolveActorRef(firstPath);
    resolver.learn(firstPath, akkaFirst);
    assertEquals(akkaFirst, resolver.resolve(firstPath));
    for (int i = 0; i < 20; i++) {
      Ask a = ask();
      String path = serialized(a.replyTo());
      akka.actor.ActorRef fast = resolver.resolve(path);
      assertNotNull(fast, path);
      akka.actor.ActorRef expected = classic(broker).provider().resolveActorRef(path);
      assertEquals(expected, fast, path);
      assertEquals(expected.path().uid(), fast.path().uid(), path);
      assertEquals(expected.path().toSerializationFormat(), fast.path().toSerializationFormat());
      // and the answer sent through it from the broker's system reaches the asker
      fast.tell("answer " + i, akka.actor.ActorRef.noSender());
      assertEquals("answer " + i, a.answer().toCompletableFuture().get(10, TimeUnit.SECONDS));
    }
    first.replyTo().tell("done");
  }

  /** A full table starts again: the newest address is learnt, the older ones go back to Akka's resolution. */
  @Test
  void aFullTableForgetsTheOldAddressesAndKeepsLearning() throws Exception {
    TempRefResolver resolver = new TempRefResolver(classic(broker), 1);
    Ask a = ask();
    String clientPath = serialized(a.replyTo());
    resolver.learn(clientPath, classic(broker).provider().resolveActorRef(clientPath));
    assertNotNull(resolver.resolve(clientPath));
    String otherPath = "akka://other@127.0.0.1:1/temp/x#17";
    akka.actor.ActorRef other = classic(broker).provider().resolveActorRef(otherPath);
    resolver.learn(otherPath, other);
    assertEquals(other, resolver.resolve(otherPath));
    assertNull(resolver.resolve(clientPath), "forgotten when the table was full");
    resolver.learn(clientPath, classic(broker).provider().resolveActorRef(clientPath));
    assertNotNull(resolver.resolve(clientPath), "and learnt again");
    a.replyTo().tell("done");
  }

  @Test
  void everythingButAPlainTemporaryPathOfAKnownOtherSystemIsLeftToAkka() throws Exception {
    TempRefResolver resolver = new TempRefResolver(classic(broker));
    Ask a = ask();
    String path = serialized(a.replyTo());
    resolver.learn(path, classic(broker).provider().resolveActorRef(path));
    String root = path.substring(0, path.indexOf("/temp/"));
    List<String> leftToAkka = List.of(
        root + "/user/gateway", // not temporary: Akka's cache keeps those
        root + "/temp/a%24b", // an escape
        root + "/temp/a b",
        root + "/temp/a#", // an empty uid
        root + "/temp/a#x1",
        root + "/temp/a#99999999999", // out of int range
        root + "/temp/a#1/b", // a uid before the last element
        root + "/tempx/a",
        "akka://other@127.0.0.1:1/temp/a", // an address not learnt
        "akka.tcp://" + root.substring("akka://".length()) + "/temp/a",
        "akka://broker/temp/a",
        "",
        "akka://",
        "/temp/a",
        "garbage");
    for (String s : leftToAkka) {
      assertNull(resolver.resolve(s), s);
    }
    // this system's own temporary actors are never learnt: the local provider also checks their uid
    TempRefResolver local = new TempRefResolver(classic(broker));
    ActorRef<String> own = broker.createTestProbe(String.class).getRef();
    String ownPath = ActorRefResolver.get(broker.system()).toSerializationFormat(own);
    String ownTemp = ownPath.substring(0, ownPath.indexOf('/', "akka://".length())) + "/temp/x";
    local.learn(ownTemp, classic(broker).provider().resolveActorRef(ownTemp));
    assertNull(local.resolve(ownTemp));
    // a path with empty elements resolves as Akka resolves it
    String doubled = path.replace("/temp/", "/temp//");
    assertEquals(classic(broker).provider().resolveActorRef(doubled), resolver.resolve(doubled));
    a.replyTo().tell("done");
  }
}
