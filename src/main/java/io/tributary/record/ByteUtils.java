package io.tributary.record;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Allocation-free primitives for reading and writing the record batch v2 layout directly on a {@code byte[]}.
 *
 * <p>Fixed-width integers are big-endian (network order), as in Kafka. Variable-length integers are zigzag-encoded
 * base-128 varints, exactly as Kafka's {@code org.apache.kafka.common.utils.ByteUtils#writeVarint} / {@code
 * writeVarlong}: the value is zigzag-mapped ({@code (v << 1) ^ (v >> 31)}) so that small negative numbers are short,
 * then written 7 bits at a time, least significant group first, with the high bit of each byte set when more bytes
 * follow. A varint takes 1 to 5 bytes, a varlong 1 to 10.
 *
 * <p>Every method takes the array and an absolute position. Write methods return the position just after what they
 * wrote. Read methods do no bounds checking of their own beyond the JVM's: when the bytes come from outside, first
 * find the end of a varint with {@link #varintEnd(byte[], int, int)} / {@link #varlongEnd(byte[], int, int)}, which
 * never read past a given limit, and only then decode it.
 *
 * <p>All methods are static, stateless and thread-safe (callers must not share an array being written concurrently).
 */
public final class ByteUtils {

  /** Maximum number of bytes of a varint (a zigzag-encoded {@code int}). */
  public static final int MAX_VARINT_SIZE = 5;

  /** Maximum number of bytes of a varlong (a zigzag-encoded {@code long}). */
  public static final int MAX_VARLONG_SIZE = 10;

  private static final VarHandle SHORT_BE =
      MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  private ByteUtils() {}

  // ---------------------------------------------------------------------------------------------------------------
  // Fixed width, big-endian

  /**
   * Reads a big-endian {@code int16} at {@code pos}.
   *
   * @throws ArrayIndexOutOfBoundsException if {@code pos + 2 > buf.length}
   */
  public static short readShort(byte[] buf, int pos) {
    return (short) SHORT_BE.get(buf, pos);
  }

  /**
   * Reads a big-endian {@code int32} at {@code pos}.
   *
   * @throws ArrayIndexOutOfBoundsException if {@code pos + 4 > buf.length}
   */
  public static int readInt(byte[] buf, int pos) {
    return (int) INT_BE.get(buf, pos);
  }

  /**
   * Reads a big-endian {@code uint32} at {@code pos} (as Kafka's {@code ByteUtils.readUnsignedInt}).
   *
   * @return the value in {@code [0, 2^32)}
   * @throws ArrayIndexOutOfBoundsException if {@code pos + 4 > buf.length}
   */
  public static long readUnsignedInt(byte[] buf, int pos) {
    return readInt(buf, pos) & 0xFFFF_FFFFL;
  }

  /**
   * Reads a big-endian {@code int64} at {@code pos}.
   *
   * @throws ArrayIndexOutOfBoundsException if {@code pos + 8 > buf.length}
   */
  public static long readLong(byte[] buf, int pos) {
    return (long) LONG_BE.get(buf, pos);
  }

  /**
   * Writes {@code value} as a big-endian {@code int16} at {@code pos}.
   *
   * @return {@code pos + 2}
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeShort(short value, byte[] buf, int pos) {
    SHORT_BE.set(buf, pos, value);
    return pos + 2;
  }

  /**
   * Writes {@code value} as a big-endian {@code int32} at {@code pos}.
   *
   * @return {@code pos + 4}
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeInt(int value, byte[] buf, int pos) {
    INT_BE.set(buf, pos, value);
    return pos + 4;
  }

  /**
   * Writes the low 32 bits of {@code value} as a big-endian {@code uint32} at {@code pos} (as Kafka's {@code
   * ByteUtils.writeUnsignedInt}).
   *
   * @return {@code pos + 4}
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeUnsignedInt(long value, byte[] buf, int pos) {
    return writeInt((int) value, buf, pos);
  }

  /**
   * Writes {@code value} as a big-endian {@code int64} at {@code pos}.
   *
   * @return {@code pos + 8}
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeLong(long value, byte[] buf, int pos) {
    LONG_BE.set(buf, pos, value);
    return pos + 8;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Zigzag varints

  /**
   * Writes {@code value} as a zigzag varint at {@code pos}, as Kafka's {@code ByteUtils.writeVarint}.
   *
   * @return the position after the last byte written ({@code pos + sizeOfVarint(value)})
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeVarint(int value, byte[] buf, int pos) {
    int v = (value << 1) ^ (value >> 31);
    while ((v & 0xFFFF_FF80) != 0) {
      buf[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[pos++] = (byte) v;
    return pos;
  }

  /**
   * Writes {@code value} as a zigzag varlong at {@code pos}, as Kafka's {@code ByteUtils.writeVarlong}.
   *
   * @return the position after the last byte written ({@code pos + sizeOfVarlong(value)})
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeVarlong(long value, byte[] buf, int pos) {
    long v = (value << 1) ^ (value >> 63);
    while ((v & 0xFFFF_FFFF_FFFF_FF80L) != 0L) {
      buf[pos++] = (byte) ((v & 0x7F) | 0x80);
      v >>>= 7;
    }
    buf[pos++] = (byte) v;
    return pos;
  }

  /**
   * Decodes the zigzag varint that starts at {@code pos}, as Kafka's {@code ByteUtils.readVarint}. Non-minimal
   * encodings (extra {@code 0x80} groups) are accepted, as in Kafka.
   *
   * @throws IllegalArgumentException if the varint is longer than {@value #MAX_VARINT_SIZE} bytes
   * @throws ArrayIndexOutOfBoundsException if it runs past the end of the array; use {@link #varintEnd} first on
   *     untrusted input
   */
  public static int readVarint(byte[] buf, int pos) {
    int value = 0;
    int shift = 0;
    int b;
    while (((b = buf[pos++]) & 0x80) != 0) {
      value |= (b & 0x7F) << shift;
      shift += 7;
      if (shift > 28) {
        throw new IllegalArgumentException("varint is longer than " + MAX_VARINT_SIZE + " bytes");
      }
    }
    value |= b << shift;
    return (value >>> 1) ^ -(value & 1);
  }

  /**
   * Decodes the zigzag varlong that starts at {@code pos}, as Kafka's {@code ByteUtils.readVarlong}.
   *
   * @throws IllegalArgumentException if the varlong is longer than {@value #MAX_VARLONG_SIZE} bytes
   * @throws ArrayIndexOutOfBoundsException if it runs past the end of the array; use {@link #varlongEnd} first on
   *     untrusted input
   */
  public static long readVarlong(byte[] buf, int pos) {
    long value = 0L;
    int shift = 0;
    long b;
    while (((b = buf[pos++]) & 0x80) != 0) {
      value |= (b & 0x7F) << shift;
      shift += 7;
      if (shift > 63) {
        throw new IllegalArgumentException("varlong is longer than " + MAX_VARLONG_SIZE + " bytes");
      }
    }
    value |= b << shift;
    return (value >>> 1) ^ -(value & 1);
  }

  /**
   * Finds the end of the varint that starts at {@code pos} without reading at or past {@code limit}.
   *
   * @param limit exclusive upper bound of the readable bytes ({@code <= buf.length})
   * @return the position just after the varint's last byte, or {@code -1} if the varint does not end before {@code
   *     limit} or is longer than {@value #MAX_VARINT_SIZE} bytes (then {@link #readVarint} would fail)
   */
  public static int varintEnd(byte[] buf, int pos, int limit) {
    return encodedEnd(buf, pos, limit, MAX_VARINT_SIZE);
  }

  /**
   * Finds the end of the varlong that starts at {@code pos} without reading at or past {@code limit}.
   *
   * @param limit exclusive upper bound of the readable bytes ({@code <= buf.length})
   * @return the position just after the varlong's last byte, or {@code -1} if the varlong does not end before {@code
   *     limit} or is longer than {@value #MAX_VARLONG_SIZE} bytes (then {@link #readVarlong} would fail)
   */
  public static int varlongEnd(byte[] buf, int pos, int limit) {
    return encodedEnd(buf, pos, limit, MAX_VARLONG_SIZE);
  }

  private static int encodedEnd(byte[] buf, int pos, int limit, int maxSize) {
    int end = Math.min(limit, pos + maxSize);
    for (int p = pos; p < end; p++) {
      if ((buf[p] & 0x80) == 0) {
        return p + 1;
      }
    }
    return -1;
  }

  /**
   * The number of bytes {@link #writeVarint} writes for {@code value} (1 to 5), as Kafka's {@code
   * ByteUtils.sizeOfVarint}.
   */
  public static int sizeOfVarint(int value) {
    int v = (value << 1) ^ (value >> 31);
    int leadingZeros = Integer.numberOfLeadingZeros(v);
    // ceil((32 - leadingZeros) / 7), with 1 for zero; the multiplication is a branch-free division by 7.
    int leadingZerosBelow38DividedBy7 = ((38 - leadingZeros) * 0b10010010010010011) >>> 19;
    return leadingZerosBelow38DividedBy7 + (leadingZeros >>> 5);
  }

  /**
   * The number of bytes {@link #writeVarlong} writes for {@code value} (1 to 10), as Kafka's {@code
   * ByteUtils.sizeOfVarlong}.
   */
  public static int sizeOfVarlong(long value) {
    long v = (value << 1) ^ (value >> 63);
    int leadingZeros = Long.numberOfLeadingZeros(v);
    int leadingZerosBelow70DividedBy7 = ((70 - leadingZeros) * 0b10010010010010011) >>> 19;
    return leadingZerosBelow70DividedBy7 + (leadingZeros >>> 6);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // UTF-8 without intermediate arrays

  /**
   * The number of bytes of {@code s} in UTF-8, exactly as {@code s.getBytes(StandardCharsets.UTF_8).length} (an
   * unpaired surrogate counts as the one-byte replacement {@code '?'}), without allocating.
   *
   * @throws NullPointerException if {@code s} is null
   */
  public static int utf8Length(String s) {
    int len = s.length();
    int bytes = len;
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        continue;
      }
      if (c < 0x800) {
        bytes += 1;
      } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
        bytes += 2; // 4 bytes for 2 chars
        i++;
      } else if (Character.isSurrogate(c)) {
        // unpaired surrogate: replaced by '?', one byte
      } else {
        bytes += 2;
      }
    }
    return bytes;
  }

  /**
   * Writes {@code s} as UTF-8 at {@code pos}, byte for byte as {@code s.getBytes(StandardCharsets.UTF_8)}.
   *
   * @return {@code pos + utf8Length(s)}
   * @throws ArrayIndexOutOfBoundsException if it does not fit
   */
  public static int writeUtf8(String s, byte[] buf, int pos) {
    int len = s.length();
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        buf[pos++] = (byte) c;
      } else if (c < 0x800) {
        buf[pos++] = (byte) (0xC0 | (c >> 6));
        buf[pos++] = (byte) (0x80 | (c & 0x3F));
      } else if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        buf[pos++] = (byte) (0xF0 | (cp >> 18));
        buf[pos++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
        buf[pos++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
        buf[pos++] = (byte) (0x80 | (cp & 0x3F));
      } else if (Character.isSurrogate(c)) {
        buf[pos++] = (byte) '?';
      } else {
        buf[pos++] = (byte) (0xE0 | (c >> 12));
        buf[pos++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        buf[pos++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    return pos;
  }
}
