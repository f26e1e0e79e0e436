package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's log ({@code logback-server.xml} as shipped) writes a peer's truncated connection as one line without
 * Akka's stack trace, and every other exception with its stack trace.
 */
class PeerTruncationThrowableConverterTest {

  @Test
  void aTruncatedConnectionIsOneLineAndOtherErrorsKeepTheirStackTrace(@TempDir Path dir) throws Exception {
    LoggerContext ctx = new LoggerContext();
    ctx.putProperty("tributary.log.dir", dir.toString());
    ctx.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
    ctx.start();
    JoranConfigurator joran = new JoranConfigurator();
    joran.setContext(ctx);
    joran.doConfigure(getClass().getResource("/logback-server.xml"));
    // the stderr appender is in the same configuration; only the file is read here
    ctx.getLogger(RateLimitedTurboFilter.STREAM_STAGE_ERRORS).error(
        "Error in stage [akka.remote.artery.tcp.TcpFraming$$anon$1-ByteStringParser]: "
            + PeerTruncationThrowableConverter.TRUNCATED,
        new IllegalStateException(PeerTruncationThrowableConverter.TRUNCATED));
    ctx.getLogger(RateLimitedTurboFilter.STREAM_STAGE_ERRORS).error("Error in stage [y]: Not an Artery envelope",
        new akka.stream.scaladsl.Framing.FramingException("Not an Artery envelope"));
    ctx.getLogger(RateLimitedTurboFilter.STREAM_STAGE_ERRORS).error("Error in stage [x]: boom",
        new IllegalStateException("boom"));
    ctx.getLogger("io.tributary.broker.Something").error("failed", new IllegalArgumentException("bad"));
    ctx.stop();

    List<String> lines = Files.readAllLines(dir.resolve("tributary.log"), StandardCharsets.UTF_8);
    Supplier<String> head = () -> String.join("\n", lines.subList(0, Math.min(6, lines.size())));
    assertEquals(1, lines.stream().filter(l -> l.contains("truncated data in ByteStringParser")).count(), head);
    assertTrue(lines.get(0).contains("Error in stage"), head);
    assertTrue(lines.get(1).contains("Error in stage [y]: Not an Artery envelope"), head);
    assertTrue(lines.get(2).contains("Error in stage [x]: boom"), head);
    assertEquals("java.lang.IllegalStateException: boom", lines.get(3), head);
    assertTrue(lines.get(4).startsWith("\tat io.tributary.cli.PeerTruncationThrowableConverterTest"), head);
    assertTrue(lines.contains("java.lang.IllegalArgumentException: bad"), head);
  }
}
