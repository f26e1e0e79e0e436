package io.tributary.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.Options;
import org.junit.jupiter.api.Test;

class TunedLeveldbJournalTest {
  @Test
  void theJournalConfigOfReferenceConfReachesLevelDbsOptions() {
    var plugin = ConfigFactory.load().getConfig("tributary.persistence.journal-1");
    assertEquals(TunedLeveldbJournal.class.getName(), plugin.getString("class"), "every instance uses the tuned journal");
    Options o = TunedLeveldbJournal.apply(new Options(), plugin);
    assertEquals(plugin.getBytes("write-buffer-size").intValue(), o.writeBufferSize());
    assertEquals(plugin.getBytes("block-size").intValue(), o.blockSize());
    assertEquals(plugin.getBytes("cache-size").longValue(), o.cacheSize());
    assertEquals(CompressionType.SNAPPY, o.compressionType());
  }

  @Test
  void explicitValuesAreApplied() {
    Options o = TunedLeveldbJournal.apply(new Options(), ConfigFactory.parseString(
        "write-buffer-size = 16 MiB, block-size = 64 KiB, compression = NONE, cache-size = 1 MiB"));
    assertEquals(16 << 20, o.writeBufferSize());
    assertEquals(64 << 10, o.blockSize());
    assertEquals(CompressionType.NONE, o.compressionType());
    assertEquals(1 << 20, o.cacheSize());
  }

  @Test
  void anUnknownCompressionIsAClearError() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TunedLeveldbJournal.apply(new Options(), ConfigFactory.parseString("compression = lz4")));
    assertEquals("journal compression must be snappy or none, was lz4", e.getMessage());
  }
}
