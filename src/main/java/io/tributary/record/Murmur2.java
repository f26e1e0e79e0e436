package io.tributary.record;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Kafka's 32-bit murmur2 hash and key partitioner, bit for bit as {@code org.apache.kafka.common.utils.Utils#murmur2}
 * (seed {@code 0x9747b28c}), so that a key lands in the same partition as with Kafka's {@code DefaultPartitioner} /
 * {@code BuiltInPartitioner}.
 *
 * <p>All methods are static, stateless and thread-safe.
 */
public final class Murmur2 {

  /** Kafka's murmur2 seed. */
  public static final int SEED = 0x9747b28c;

  private static final int M = 0x5bd1e995;
  private static final int R = 24;
  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private Murmur2() {}

  /**
   * The murmur2 hash of {@code data}, as Kafka's {@code Utils.murmur2(byte[])}.
   *
   * @param data the bytes to hash (typically a serialized record key); non-null, may be empty
   * @return the hash, possibly negative
   * @throws NullPointerException if {@code data} is null
   */
  public static int murmur2(byte[] data) {
    int length = data.length;
    int h = SEED ^ length;
    int length4 = length & ~3;
    for (int i = 0; i < length4; i += 4) {
      int k = (int) INT_LE.get(data, i);
      k *= M;
      k ^= k >>> R;
      k *= M;
      h *= M;
      h ^= k;
    }
    int tail = length & 3; // the last 1 to 3 bytes, as Kafka's fall-through switch
    if (tail == 3) {
      h ^= (data[length4 + 2] & 0xff) << 16;
    }
    if (tail >= 2) {
      h ^= (data[length4 + 1] & 0xff) << 8;
    }
    if (tail >= 1) {
      h ^= data[length4] & 0xff;
      h *= M;
    }
    h ^= h >>> 13;
    h *= M;
    h ^= h >>> 15;
    return h;
  }

  /**
   * Maps any int to a non-negative one by clearing the sign bit, as Kafka's {@code Utils.toPositive} (not {@code
   * Math.abs}, which stays negative for {@code Integer.MIN_VALUE}).
   */
  public static int toPositive(int number) {
    return number & 0x7fffffff;
  }

  /**
   * The partition for a non-null key: {@code toPositive(murmur2(key)) % numPartitions}, as Kafka's {@code
   * BuiltInPartitioner.partitionForKey} (and the former {@code DefaultPartitioner}). Records without a key are not
   * placed by this method; the producer spreads them (round robin or sticky).
   *
   * @param key the serialized key; non-null
   * @param numPartitions the topic's partition count, at least 1
   * @return a partition in {@code [0, numPartitions)}
   * @throws NullPointerException if {@code key} is null
   * @throws IllegalArgumentException if {@code numPartitions < 1}
   */
  public static int partitionForKey(byte[] key, int numPartitions) {
    if (numPartitions < 1) {
      throw new IllegalArgumentException("numPartitions must be at least 1, was " + numPartitions);
    }
    return toPositive(murmur2(key)) % numPartitions;
  }
}
