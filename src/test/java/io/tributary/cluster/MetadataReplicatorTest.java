package io.tributary.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import akka.cluster.ddata.ReplicatorSettings;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import io.tributary.broker.BrokerNode;
import io.tributary.broker.Gw;
import io.tributary.broker.TestNodes;
import io.tributary.broker.Tributary;
import io.tributary.protocol.ErrorCode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The topic metadata lives in Tributary's own replicator ({@link MetadataReplicator}, {@code
 * tributary.metadata.replicator}), so Tributary sets no key of Akka's {@code akka.cluster.distributed-data} and its
 * metadata does not depend on which jar's reference.conf comes first on the class path (issue 35).
 */
class MetadataReplicatorTest {

  private static final String AKKA_DURABLE_KEYS = "akka.cluster.distributed-data.durable.keys";

  @Test
  void topicMetadataSurvivesARestartWhenAkkasDurableKeysAreEmpty() {
    Path dir = TestNodes.tempDataDir();
    // what every node saw when akka-distributed-data's reference.conf came before Tributary's on the class path
    Map<String, Object> akkaReferenceFirst = Map.of(AKKA_DURABLE_KEYS, List.of());
    try (BrokerNode node = TestNodes.start(dir, akkaReferenceFirst)) {
      Config config = node.system().settings().config();
      assertEquals(List.of(), config.getStringList(AKKA_DURABLE_KEYS));
      assertEquals(List.of("tributary-topics"), config.getStringList(MetadataReplicator.CONFIG_PATH + ".durable.keys"));
      assertEquals(ErrorCode.NONE, new Gw(node).create("kept", 2, Map.of()).error());
    }
    try (BrokerNode node = TestNodes.start(dir, akkaReferenceFirst)) {
      assertEquals(List.of("kept"), new Gw(node).list());
    }
  }

  @Test
  void tributarysReferenceConfSetsNoKeyOfAkkasReplicator() throws Exception {
    // Tributary's own reference.conf (not the first one on the class path, which may be any library's)
    Path own = Path.of(Tributary.class.getProtectionDomain().getCodeSource().getLocation().toURI())
        .resolve("reference.conf");
    // resolved on its own, the ${akka.cluster.distributed-data} of tributary.metadata.replicator stays unresolved
    Config tributarys = ConfigFactory.parseFile(own.toFile())
        .resolve(ConfigResolveOptions.defaults().setAllowUnresolved(true));
    assertTrue(tributarys.hasPath("tributary.data-dir"), own.toString());
    assertFalse(tributarys.hasPathOrNull("akka.cluster.distributed-data"));

    // so every library's reference.conf together leaves Akka's values there
    Config reference = ConfigFactory.defaultReference();
    assertEquals(List.of(), reference.getStringList(AKKA_DURABLE_KEYS));
    assertEquals("akka.cluster.ddata.LmdbDurableStore",
        reference.getString("akka.cluster.distributed-data.durable.store-actor-class"));
    assertEquals("ddataReplicator", reference.getString("akka.cluster.distributed-data.name"));
  }

  @Test
  void theSettingsAreAkkasLayoutWithTributarysDurableKeysAndRole() {
    Config reference = ConfigFactory.defaultReference();
    ReplicatorSettings settings = MetadataReplicator.settings(reference, "broker");
    assertEquals(Set.of("tributary-topics"), CollectionConverters.asJava(settings.durableKeys()));
    assertEquals(Set.of("broker"), CollectionConverters.asJava(settings.roles()));
    // keys Tributary does not set are Akka's
    assertEquals(reference.getDuration("akka.cluster.distributed-data.gossip-interval"),
        Duration.ofMillis(settings.gossipInterval().toMillis()));
    assertEquals(Set.of(), CollectionConverters.asJava(MetadataReplicator.settings(reference, "").roles()));
    assertEquals("tributary-metadata-replicator", reference.getString(MetadataReplicator.CONFIG_PATH + ".name"));
  }
}
