package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Akka Streams' per-connection stage errors reach the broker's log at most 10 times per window. */
class RateLimitedTurboFilterTest {

  private static long count(ListAppender<ILoggingEvent> app, String logger, String prefix) {
    return app.list.stream()
        .filter(e -> e.getLoggerName().equals(logger) && e.getFormattedMessage().startsWith(prefix))
        .count();
  }

  @Test
  void streamStageErrorsAreCappedAndCountedAndOtherLoggersAreNot() {
    LoggerContext ctx = new LoggerContext();
    AtomicLong clock = new AtomicLong(1_000);
    List<Runnable> windowEnds = new ArrayList<>();
    RateLimitedTurboFilter filter = new RateLimitedTurboFilter(clock::get, windowEnds::add);
    filter.setContext(ctx);
    filter.start();
    ctx.addTurboFilter(filter);
    ListAppender<ILoggingEvent> app = new ListAppender<>();
    app.setContext(ctx);
    app.start();
    ctx.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(app);
    Logger stage = ctx.getLogger(RateLimitedTurboFilter.STREAM_STAGE_ERRORS);
    Logger cluster = ctx.getLogger("akka.cluster.Cluster");

    for (int i = 0; i < 100; i++) {
      assertTrue(stage.isErrorEnabled(), "asking whether a level is enabled is not a line");
    }
    for (int i = 0; i < 25; i++) {
      stage.error("Error in stage [akka.remote.artery.tcp.TcpFraming$$anon$1-ByteStringParser]: truncated data",
          new IllegalStateException("truncated data in ByteStringParser"));
      cluster.warn("Cluster warning {}", i);
    }
    assertEquals(10, count(app, RateLimitedTurboFilter.STREAM_STAGE_ERRORS, "Error in stage"));
    assertEquals(25, count(app, "akka.cluster.Cluster", "Cluster warning"));
    String self = RateLimitedTurboFilter.class.getName();
    assertEquals(1, count(app, self, "More than 10 warnings and errors of akka.actor.RepointableActorRef in 10 s"));

    clock.addAndGet(TimeUnit.SECONDS.toNanos(10));
    assertEquals(1, windowEnds.size());
    windowEnds.remove(0).run();
    assertEquals(1, count(app, self, "15 warnings and errors of akka.actor.RepointableActorRef were suppressed"));
    stage.error("Error in stage [...]: truncated data");
    assertEquals(11, count(app, RateLimitedTurboFilter.STREAM_STAGE_ERRORS, "Error in stage"), "a new window");
  }
}
