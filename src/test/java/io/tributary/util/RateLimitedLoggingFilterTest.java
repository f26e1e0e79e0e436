package io.tributary.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.actor.testkit.typed.javadsl.ActorTestKit;
import akka.actor.testkit.typed.javadsl.TestProbe;
import akka.actor.typed.javadsl.Adapter;
import akka.event.Logging;
import java.time.Duration;
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
    akka.actor.ActorSystem classic = Adapter.toClassic(testKit.system());
    RateLimitedLoggingFilter filter =
        new RateLimitedLoggingFilter(classic.settings(), classic.eventStream(), clock::get);
    TestProbe<Logging.Warning> probe = notices();

    for (int i = 0; i < RateLimitedLoggingFilter.PER_WINDOW; i++) {
      assertTrue(filter.isWarningEnabled(decoder, "decoder-src"), "line " + i);
      clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
    }
    assertFalse(filter.isWarningEnabled(decoder, "decoder-src"));
    assertTrue(nextNotice(probe).message().toString().startsWith("More than 10 warnings and errors of "
        + "akka.remote.artery.Decoder in 10 s"));
    assertFalse(filter.isWarningEnabled(decoder, "decoder-src"));
    assertFalse(filter.isErrorEnabled(decoder, "decoder-src"), "errors share the stage's window");
    // another stage and every other logger have their own window or none
    assertTrue(filter.isErrorEnabled(deserializer, "deserializer-src"));
    for (int i = 0; i < 100; i++) {
      assertTrue(filter.isWarningEnabled(RateLimitedLoggingFilterTest.class, "other"));
    }

    clock.addAndGet(TimeUnit.SECONDS.toNanos(RateLimitedLoggingFilter.WINDOW_SECONDS));
    assertTrue(filter.isWarningEnabled(decoder, "decoder-src"), "a new window");
    Logging.Warning counted = nextNotice(probe);
    assertEquals("3 warnings and errors of akka.remote.artery.Decoder were suppressed in the last window (at most 10 "
        + "per 10 s)", counted.message());
    assertEquals("decoder-src", counted.logSource());
  }
}
