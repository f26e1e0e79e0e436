package io.tributary.broker;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * An embedding application's config resolved before its {@code tributary.data-dir} was there (a newcomer's {@code
 * parseString(...).withFallback(ConfigFactory.load())}): the node's journals would go to {@code ./data}, another
 * broker's directory perhaps. The node refuses it, naming the keys and the way to build the config.
 */
class DataDirResolutionTest {

  @Test
  void aConfigResolvedBeforeTheDataDirIsRefused() {
    Path dir = TestNodes.tempDataDir();
    Config wrong = ConfigFactory.parseString("tributary.data-dir = \"" + dir + "\"").withFallback(ConfigFactory.load());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> Tributary.checkDirectoriesFollowDataDir(wrong, BrokerSettings.create(wrong)));
    assertTrue(e.getMessage().contains("tributary.persistence.journal-0.dir"), e.getMessage());
    assertTrue(e.getMessage().contains("tributary.metadata.replicator.durable.leveldb.dir"), e.getMessage());
    assertTrue(e.getMessage().contains("ConfigFactory.load(yourConfig)"), e.getMessage());

    Config right = ConfigFactory.load(ConfigFactory.parseString("tributary.data-dir = \"" + dir + "\""));
    Tributary.checkDirectoriesFollowDataDir(right, BrokerSettings.create(right)); // no exception
    Config defaults = ConfigFactory.load();
    Tributary.checkDirectoriesFollowDataDir(defaults, BrokerSettings.create(defaults)); // ./data, consistently
  }
}
