package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code tributary quickstart} in-process, on real input (the first 2,000 verses of the bundled King James Bible):
 * an embedded broker, a 3-partition topic, every line produced with acks=all and read back, verified.
 */
class QuickstartTest {
  @TempDir Path tmp;

  @Test
  void quickstartStreamsARealFileAndVerifiesEveryLine() throws IOException {
    Path file = tmp.resolve("genesis-to-numbers.txt");
    Files.write(file, QuickstartVerifierTest.bundledPrefix(2_000));
    Path dataDir = tmp.resolve("data");

    CommandLine cmd = Main.newCommandLine();
    QuickstartCommand quickstart = cmd.getSubcommands().get("quickstart").getCommand();
    quickstart.brokerOverrides = Map.of("akka.cluster.jmx.multi-mbeans-in-same-jvm", "on");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));

    int code = cmd.execute("quickstart", "--file", file.toString(), "--data-dir", dataDir.toString());

    assertEquals(Main.EXIT_OK, code, out + "\n" + err);
    String output = out.toString();
    assertTrue(output.contains("Created topic quickstart-"), output);
    assertTrue(output.contains("Quickstart passed: 2000 lines"), output);
    assertTrue(output.contains("consumed:            2000 records"), output);
    assertFalse(output.contains("FAILED"), output);
    assertTrue(Files.isDirectory(dataDir), "a data dir given with --data-dir is kept");
  }
}
