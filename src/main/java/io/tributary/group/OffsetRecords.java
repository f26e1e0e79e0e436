package io.tributary.group;

import io.tributary.protocol.GroupProtocol.PartitionOffset;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The record layout of {@code __consumer_offsets}. One record per committed offset, keyed by (group, topic,
 * partition) so that the newest record of a key is its current value (compaction semantics); a record with a null
 * value is a tombstone (offset deleted).
 *
 * <pre>
 * key   = int8 type (1 = offset) | int16 len | groupId UTF-8 | int16 len | topic UTF-8 | int32 partition
 * value = int8 version (0) | int64 offset | int16 len | metadata UTF-8 (len -1 = null)
 * </pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class OffsetRecords {
  /** Key type of a committed offset. */
  public static final byte TYPE_OFFSET = 1;

  private OffsetRecords() {}

  /** A decoded key. */
  public record Key(String groupId, String topic, int partition) {}

  /** The key of a committed offset. */
  public static byte[] key(String groupId, String topic, int partition) {
    byte[] g = groupId.getBytes(StandardCharsets.UTF_8);
    byte[] t = topic.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(1 + 2 + g.length + 2 + t.length + 4);
    b.put(TYPE_OFFSET).putShort((short) g.length).put(g).putShort((short) t.length).put(t).putInt(partition);
    return b.array();
  }

  /** The value of a committed offset. */
  public static byte[] value(long offset, String metadata) {
    byte[] m = metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(1 + 8 + 2 + (m == null ? 0 : m.length));
    b.put((byte) 0).putLong(offset).putShort((short) (m == null ? -1 : m.length));
    if (m != null) {
      b.put(m);
    }
    return b.array();
  }

  /**
   * Decodes a key.
   *
   * @return the key, or {@code null} if the bytes are not an offset key of this version (skipped by loaders)
   */
  public static Key parseKey(byte[] key) {
    try {
      ByteBuffer b = ByteBuffer.wrap(key);
      if (b.get() != TYPE_OFFSET) {
        return null;
      }
      String group = str(b);
      String topic = str(b);
      int partition = b.getInt();
      return b.hasRemaining() ? null : new Key(group, topic, partition);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Decodes a value for {@code key}; {@code null} for a tombstone or bytes that do not decode. */
  public static PartitionOffset parseValue(Key key, byte[] value) {
    if (value == null) {
      return null;
    }
    try {
      ByteBuffer b = ByteBuffer.wrap(value);
      b.get();
      long offset = b.getLong();
      short len = b.getShort();
      String metadata = null;
      if (len >= 0) {
        byte[] m = new byte[len];
        b.get(m);
        metadata = new String(m, StandardCharsets.UTF_8);
      }
      return new PartitionOffset(key.topic(), key.partition(), offset, metadata);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static String str(ByteBuffer b) {
    short len = b.getShort();
    byte[] s = new byte[len];
    b.get(s);
    return new String(s, StandardCharsets.UTF_8);
  }
}
