package io.tributary.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * An application embedding a node ({@link EmbeddingMain}) with <b>Akka's jars before Tributary's</b> on its class path:
 * Akka's {@code reference.conf} then wins over Tributary's for every Akka key both set, and Akka's classes are loaded
 * instead of the three Tributary replaces. The node must start, serve, keep its topic metadata and records across a
 * restart, and say what it lost and how to get it back. (Tried as a new user would: {@code Tributary.get} threw
 * {@code IllegalArgumentException: tributary.broker.message.max.bytes must be between 64 and 196608}.)
 */
class EmbeddingClassPathIT {

  @Test
  void aNodeStartsAndServesWithAkkasJarsFirst() throws Exception {
    Path dir = JavaProcesses.testDir("EmbeddingClassPathIT", "akkaJarsFirst");
    List<String> entries = classPathEntries();
    List<String> akkaFirst = new ArrayList<>();
    for (String e : entries) {
      if (e.contains(File.separator + "com" + File.separator + "typesafe" + File.separator + "akka" + File.separator)) {
        akkaFirst.add(e);
      }
    }
    assertTrue(akkaFirst.size() >= 5, "Akka's jars on the class path: " + akkaFirst);
    for (String e : entries) {
      if (!akkaFirst.contains(e)) {
        akkaFirst.add(e);
      }
    }
    String classPath = String.join(File.pathSeparator, akkaFirst);
    Path data = dir.resolve("data");
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }

    Run created = run(classPath, dir, "create", data, port);
    assertEquals(0, created.code(), created.describe());
    assertTrue(created.out().contains("OK create"), created.describe());
    // Akka's 256 KiB frame: Kafka's default of 1 MiB is cut to what a frame holds, and the node says why
    assertTrue(created.out().contains("message.max.bytes=196608"), created.describe());
    assertTrue(created.err().contains("tributary.broker.message.max.bytes is 196608 bytes on this node"),
        created.describe());
    // Akka's own framing and TCP reading classes were loaded: the node names what that costs and the fix
    assertTrue(created.err().contains("Put Tributary's jar before akka-stream's and akka-remote's"), created.describe());

    Run reopened = run(classPath, dir, "reopen", data, port);
    assertEquals(0, reopened.code(), reopened.describe());
    assertTrue(reopened.out().contains("OK reopen"), reopened.describe());
  }

  record Run(int code, String out, String err) {
    String describe() {
      return "exit " + code + "\n--- stdout\n" + out + "\n--- stderr (end)\n"
          + err.substring(Math.max(0, err.length() - 6000));
    }
  }

  private static Run run(String classPath, Path dir, String mode, Path data, int port) throws Exception {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    Path out = dir.resolve(mode + ".stdout");
    Path err = dir.resolve(mode + ".stderr");
    Process p = new ProcessBuilder(java, "-Xmx384m", "-cp", classPath, EmbeddingMain.class.getName(), mode,
        data.toString(), Integer.toString(port))
        .directory(dir.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
        .redirectOutput(out.toFile())
        .redirectError(err.toFile())
        .start();
    try {
      if (!p.waitFor(180, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        return new Run(-1, read(out), read(err) + "\n(killed after 180 s)");
      }
      return new Run(p.exitValue(), read(out), read(err));
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
    }
  }

  private static String read(Path file) throws IOException {
    return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
  }

  /**
   * The test JVM's class path entries; under failsafe that can be one manifest-only jar whose {@code Class-Path}
   * lists the real entries (as URLs), which are returned instead.
   */
  static List<String> classPathEntries() throws IOException {
    String[] raw = System.getProperty("java.class.path").split(File.pathSeparator);
    List<String> entries = new ArrayList<>();
    for (String e : raw) {
      String manifestPath = null;
      if (raw.length == 1 && e.endsWith(".jar")) {
        try (JarFile jar = new JarFile(e)) {
          if (jar.getManifest() != null) {
            manifestPath = jar.getManifest().getMainAttributes().getValue("Class-Path");
          }
        }
      }
      if (manifestPath == null) {
        entries.add(e);
      } else {
        Path base = Path.of(e).toAbsolutePath().getParent();
        for (String url : manifestPath.trim().split("\\s+")) {
          URI uri = base.toUri().resolve(url);
          entries.add(Path.of(uri).toString());
        }
      }
    }
    return entries;
  }
}
