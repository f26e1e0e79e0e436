package io.tributary.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import akka.event.Logging;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Artery's per-frame decoding warnings are capped per stage and window; every other logger is untouched. */
class RateLimitedLoggingFilterTest {

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** The filter's own notices, in the order it published them. */
  private static TestProbe<Logging.Warning> notices() {
    TestProbe<Logging.Warning> probe = testKit.createTestProbe();
    Adapter.toClassic(testKit.system()).eventStream().subscribe(Adapter.toClassic(probe.ref()), Logging.Warning.class);
    return probe;
  }

  private static Logging.Warning nextNotice(TestProbe<Logging.Warning> probe) {
    while (true) {
      Logging.Warning w = probe.receiveMessage(Duration.ofSeconds(5));
      if (w.logClass() == RateLimitedLoggingFilter.class) {
        return w;
      }
    }
  }

  @Test
  void decoderWarningsAreCappedPerWindowAndTheSuppressedAreCounted() throws Exception {
    Class<?> decoder = Class.forName("akka.remote.artery.Decoder");
    Class<?> deserializer = Class.forName("akka.remote.artery.Deserializer");
    AtomicLong clock = new AtomicLong(1_000);
    List<Runnable> windowEnds = new ArrayList<>();
    akka.actor.ActorSystem classic = Adapter.toClassic(testKit.system());
    RateLimitedLoggingFilter filter =
        new RateLimitedLoggingFilter(classic.settings(), classic.eventStream(), clock::get, windowEnds::add);
    TestProbe<Logging.Warning> probe = notices();

    for (int i = 0; i < RateLimitedLoggingFilter.PER_WINDOW; i++) {
      assertTrue(filter.isWarningEnabled(decoder, "decoder-src"), "line " + i);
      clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
    }
    assertFalse(filter.isWarningEnabled(decoder, "decoder-src"));
    assertTrue(nextNotice(probe).message().toString().startsWith("More than 10 warnings and errors of "
        + "akka.remote.artery.Decoder in 10 s"));
    assertFalse(filter.isWarningEnabled(decoder, "decoder-src"));
    assertFalse(filter.isErrorEnabled(decoder, "decoder-src"), "errors share the class's window");
    assertEquals(1, windowEnds.size(), "one count per window, when it ends");
    // another class and every other logger have their own window or none
    assertTrue(filter.isErrorEnabled(deserializer, "deserializer-src"));
    for (int i = 0; i < 100; i++) {
      assertTrue(filter.isWarningEnabled(RateLimitedLoggingFilterTest.class, "other"));
    }

    // the next line after the window gives the count, and the window's end then has nothing more to say
    clock.addAndGet(TimeUnit.SECONDS.toNanos(RateLimitedLoggingFilter.WINDOW_SECONDS));
    assertTrue(filter.isWarningEnabled(decoder, "decoder-src"), "a new window");
    Logging.Warning counted = nextNotice(probe);
    assertEquals("3 warnings and errors of akka.remote.artery.Decoder were suppressed in the last window (at most 10 "
        + "per 10 s)", counted.message());
    assertEquals("decoder-src", counted.logSource());
    windowEnds.remove(0).run();

    // without a next line, the window's end gives the count (the window of the first line above ended: 10 of 15 pass)
    for (int i = 0; i < RateLimitedLoggingFilter.PER_WINDOW + 5; i++) {
      filter.isErrorEnabled(deserializer, "deserializer-src");
    }
    assertTrue(nextNotice(probe).message().toString().startsWith("More than 10 warnings and errors of "
        + "akka.remote.artery.Deserializer"));
    clock.addAndGet(TimeUnit.SECONDS.toNanos(RateLimitedLoggingFilter.WINDOW_SECONDS));
    windowEnds.remove(0).run();
    assertEquals("5 warnings and errors of akka.remote.artery.Deserializer were suppressed in the last window (at "
        + "most 10 per 10 s)", nextNotice(probe).message());
    assertTrue(windowEnds.isEmpty());
    assertTrue(filter.isErrorEnabled(deserializer, "deserializer-src"), "a new window");
  }

  @Test
  void onlyAkkasRemotingIsLimited() throws Exception {
    assertTrue(RateLimitedLoggingFilter.limited(Class.forName("akka.remote.artery.ArteryTransport")));
    assertTrue(RateLimitedLoggingFilter.limited(Class.forName("akka.remote.artery.tcp.ArteryTcpTransport")));
    assertFalse(RateLimitedLoggingFilter.limited(Class.forName("akka.actor.RepointableActorRef")),
        "logged without asking akka.logging-filter: RateLimitedTurboFilter");
    assertFalse(RateLimitedLoggingFilter.limited(Class.forName("akka.cluster.Cluster")));
    assertFalse(RateLimitedLoggingFilter.limited(Class.forName("io.tributary.log.PartitionLeader")));
    assertFalse(RateLimitedLoggingFilter.limited(null));
  }
}
