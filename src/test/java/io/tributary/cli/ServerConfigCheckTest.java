package io.tributary.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tributary.broker.BrokerNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The warnings of {@code tributary server} about keys of its config file that nothing reads. No broker needed. */
class ServerConfigCheckTest {
  @TempDir Path tmp;

  List<String> warningsFor(String content) throws IOException {
    Path file = tmp.resolve("server.conf");
    Files.writeString(file, content);
    return ServerConfigCheck.warnings(file, BrokerNode.config(file, Map.of("tributary.data-dir", tmp.toString())));
  }

  String warning(String key, String hint) {
    return "Warning: " + tmp.resolve("server.conf") + ": key '" + key + "' is not a Tributary setting and is ignored"
        + hint;
  }

  @Test
  void knownKeysAkkaKeysAndOtherThingsGetNoWarning() throws IOException {
    assertEquals(List.of(), warningsFor("""
        include classpath("tributary-broker.conf")
        tributary.broker.num.partitions = 3
        tributary.broker.log.retention.ms = 5000
        tributary.journal.instances = 2
        tributary.persistence.journal-1.fsync = on
        tributary.persistence.journal-0.compaction-intervals { "orders-0" = 10 }
        tributary.client.port = 0
        akka.remote.artery.canonical.port = 9093
        akka.some.setting.of.akkas = 1
        myapp.greeting = hello
        """));
  }

  @Test
  void aMisspelledBrokerKeyIsNamedWithTheKeyMeant() throws IOException {
    assertEquals(List.of(warning("tributary.broker.num.partitons", "; did you mean tributary.broker.num.partitions?")),
        warningsFor("tributary.broker.num.partitons = 3\n"));
  }

  @Test
  void kafkaStyleTopLevelKeysPointToTheirPlaceUnderTributaryBroker() throws IOException {
    assertEquals(List.of(
            warning("log.retention.hour", "; did you mean tributary.broker.log.retention.ms? (for Kafka's"
                + " log.retention.hours; in milliseconds)"),
            warning("num.partitions", "; did you mean tributary.broker.num.partitions?"),
            warning("num.partitons", "; did you mean tributary.broker.num.partitions?")),
        warningsFor("num.partitons=3\nlog.retention.hour=5\nnum.partitions=2\n"));
  }

  @Test
  void anUnknownKeyUnderTributaryWithNothingCloseIsStillNamed() throws IOException {
    assertEquals(List.of(warning("tributary.broker.log.segment.bytes", ""), warning("tributary.frobnicate", "")),
        warningsFor("tributary.broker.log.segment.bytes = 1000\ntributary.frobnicate = yes\n"));
  }

  @Test
  void aKeyUnderTheWrongSectionIsPointedToTheBrokerSection() throws IOException {
    assertEquals(List.of(warning("tributary.num.partitions", "; did you mean tributary.broker.num.partitions?")),
        warningsFor("tributary.num.partitions = 3\n"));
  }

  @Test
  void substitutionsOfTheFileAreResolvedAgainstTheNodesConfig() throws IOException {
    assertEquals(List.of(warning("tributary.broker.num.partitons", "; did you mean tributary.broker.num.partitions?")),
        warningsFor("tributary.broker.num.partitons = ${tributary.broker.default.replication.factor}\n"));
  }
}
