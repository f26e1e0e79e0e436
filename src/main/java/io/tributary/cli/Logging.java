package io.tributary.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import java.io.IOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Logging of the command line. stdout belongs to the commands' output (records, perf lines, summaries), so nothing of
 * Akka's may print there:
 *
 * <ul>
 *   <li>Client commands use {@code logback.xml}: WARN and above to stderr, {@code akka.remote} and
 *       {@code akka.cluster} only at ERROR (so a broker that is down does not spam association warnings).
 *   <li>{@code server} and {@code quickstart} switch to {@code logback-server.xml}: INFO and above to
 *       {@code <data-dir>/logs/tributary.log} (directory from the system property {@value #LOG_DIR_PROPERTY}), WARN
 *       and above to stderr as well.
 *   <li>Akka's own stdout logger (active until the SLF4J logger has started) is switched off with the system property
 *       {@code akka.stdout-loglevel=OFF}, and every ActorSystem logs through SLF4J ({@code akka.loggers}).
 * </ul>
 *
 * <p>Only {@link Main#main} changes process-wide settings ({@link #initForCommandLine}); commands run in-process by
 * tests leave the test JVM's logging alone.
 */
public final class Logging {
  /** System property read by {@code logback-server.xml}: the directory of {@code tributary.log}. */
  public static final String LOG_DIR_PROPERTY = "tributary.log.dir";

  private static volatile boolean managed;

  private Logging() {}

  /**
   * Called first thing in {@code main}: sets the Akka logging system properties (unless the user set them with
   * {@code -D}) before any ActorSystem or logger exists, and lets commands reconfigure logging.
   */
  static void initForCommandLine() {
    setIfAbsent("akka.stdout-loglevel", "OFF");
    setIfAbsent("akka.loggers.0", "akka.event.slf4j.Slf4jLogger");
    setIfAbsent("akka.logging-filter", io.tributary.util.RateLimitedLoggingFilter.class.getName());
    // Initialize SLF4J now, on this thread: if Akka's threads were first, SLF4J would print "replaying intercepted
    // logging calls" warnings on stderr.
    LoggerFactory.getILoggerFactory();
    managed = true;
  }

  /**
   * Sends INFO logs to {@code logDir/tributary.log} (and WARN to stderr) for a broker run by this process. Does
   * nothing unless started through {@link Main#main}.
   *
   * @return the log file, or {@code null} when logging was left alone
   */
  static Path useServerLogging(Path logDir) {
    if (!managed) {
      return null;
    }
    try {
      Files.createDirectories(logDir);
    } catch (IOException e) {
      throw new CliException("Cannot create the log directory " + logDir + ": " + e.getMessage(), e);
    }
    System.setProperty(LOG_DIR_PROPERTY, logDir.toAbsolutePath().toString());
    ILoggerFactory factory = LoggerFactory.getILoggerFactory();
    URL config = Logging.class.getResource("/logback-server.xml");
    if (factory instanceof LoggerContext context && config != null) {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      context.reset();
      try {
        configurator.doConfigure(config);
      } catch (JoranException e) {
        throw new CliException("Cannot configure logging from " + config + ": " + e.getMessage(), e);
      }
    }
    return logDir.resolve("tributary.log");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }
}
