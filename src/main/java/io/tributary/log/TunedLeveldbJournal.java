package io.tributary.log;

import akka.persistence.journal.leveldb.LeveldbJournal;
import com.typesafe.config.Config;
import java.util.Locale;
import org.iq80.leveldb.CompressionType;
import org.iq80.leveldb.Options;

/**
 * Akka's LevelDB journal with LevelDB's table options taken from the plugin config, which Akka's own plugin does not
 * expose (it opens every store with LevelDB's defaults: 4 MiB write buffer, 4 KiB blocks, Snappy, 8 MiB block cache).
 *
 * <p>Plugin config keys, besides Akka's ({@code dir}, {@code fsync}, {@code native}, ...):
 *
 * <ul>
 *   <li>{@code write-buffer-size} (bytes): memtable size; LevelDB keeps up to two per store in memory. Larger means
 *       fewer, larger level-0 tables and less compaction work per byte written.
 *   <li>{@code block-size} (bytes): size of the uncompressed data blocks of a table.
 *   <li>{@code compression} ({@code snappy} or {@code none}): block compression. Snappy shrinks repetitive payloads
 *       on disk; it is wasted CPU on payloads a producer already compressed (lz4, zstd).
 *   <li>{@code cache-size} (bytes): the block cache of reads below the memtables.
 * </ul>
 *
 * <p>It is a journal plugin class ({@code class = "io.tributary.log.TunedLeveldbJournal"}), instantiated by Akka
 * Persistence with the plugin's config; confined to its actor like the journal it extends. The options are set on
 * the store's {@link Options} before the journal opens the store (Akka opens it in {@code preStart}).
 *
 * @throws IllegalArgumentException (from the constructor) on an unknown {@code compression} value
 */
public final class TunedLeveldbJournal extends LeveldbJournal {

  /**
   * Creates the journal for the plugin config {@code cfg}.
   *
   * @param cfg the plugin's config (Akka's LevelDB journal keys plus the keys listed on the class)
   */
  public TunedLeveldbJournal(Config cfg) {
    super(cfg);
    apply(leveldbOptions(), cfg);
  }

  /** Sets the options {@code cfg} names on {@code options}; keys that are absent keep LevelDB's defaults. */
  static Options apply(Options options, Config cfg) {
    if (cfg.hasPath("write-buffer-size")) {
      options.writeBufferSize((int) cfg.getBytes("write-buffer-size").longValue());
    }
    if (cfg.hasPath("block-size")) {
      options.blockSize((int) cfg.getBytes("block-size").longValue());
    }
    if (cfg.hasPath("cache-size")) {
      options.cacheSize(cfg.getBytes("cache-size"));
    }
    if (cfg.hasPath("compression")) {
      String c = cfg.getString("compression").toLowerCase(Locale.ROOT);
      switch (c) {
        case "snappy" -> options.compressionType(CompressionType.SNAPPY);
        case "none" -> options.compressionType(CompressionType.NONE);
        default -> throw new IllegalArgumentException(
            "journal compression must be snappy or none, was " + cfg.getString("compression"));
      }
    }
    return options;
  }
}
