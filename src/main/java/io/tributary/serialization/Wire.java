package io.tributary.serialization;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Minimal big-endian writer and bounds-checked reader over a {@link ByteBuffer} for {@link TributarySerializer}:
 * either Artery's envelope buffer (so hot-path messages are written into and read from the frame with no
 * intermediate array) or a heap buffer for the {@code byte[]} API. Strings are an int32 byte length (-1 = null) then
 * UTF-8; byte arrays are an int32 length (-1 = null) then the bytes.
 */
final class Wire {
  private Wire() {}

  /**
   * Output over a buffer: a heap buffer that grows ({@link #Out(int)}), or a caller's buffer of fixed capacity
   * ({@link #Out(ByteBuffer)}; writing past its limit throws {@link java.nio.BufferOverflowException}, which Artery
   * reports as an oversized message). Not thread-safe.
   */
  static final class Out {
    private ByteBuffer buf;
    private final boolean growable;

    /** A growable heap buffer of {@code initial} bytes to start with. */
    Out(int initial) {
      buf = ByteBuffer.allocate(Math.max(16, initial));
      growable = true;
    }

    /**
     * Writes into {@code target} from its position on, never beyond its limit. Sets the buffer's byte order to
     * big-endian: a caller that shares the buffer restores its order afterwards.
     */
    Out(ByteBuffer target) {
      buf = target.order(ByteOrder.BIG_ENDIAN);
      growable = false;
    }

    private void need(int n) {
      if (growable && buf.remaining() < n) {
        ByteBuffer bigger = ByteBuffer.allocate(Math.max(buf.capacity() * 2, buf.position() + n));
        buf.flip();
        bigger.put(buf);
        buf = bigger;
      }
    }

    Out i8(int v) {
      need(1);
      buf.put((byte) v);
      return this;
    }

    Out i16(short v) {
      need(2);
      buf.putShort(v);
      return this;
    }

    Out i32(int v) {
      need(4);
      buf.putInt(v);
      return this;
    }

    Out i64(long v) {
      need(8);
      buf.putLong(v);
      return this;
    }

    Out str(String s) {
      if (s == null) {
        return i32(-1);
      }
      return bytes(s.getBytes(StandardCharsets.UTF_8));
    }

    Out bytes(byte[] b) {
      if (b == null) {
        return i32(-1);
      }
      i32(b.length);
      need(b.length);
      buf.put(b);
      return this;
    }

    /** As {@link #bytes(byte[])} for the range {@code b[offset, offset + length)}; {@code b == null} writes null. */
    Out bytes(byte[] b, int offset, int length) {
      if (b == null) {
        return i32(-1);
      }
      i32(length);
      need(length);
      buf.put(b, offset, length);
      return this;
    }

    /** The bytes written (heap mode only). */
    byte[] toArray() {
      if (buf.position() == buf.capacity()) {
        return buf.array();
      }
      return Arrays.copyOf(buf.array(), buf.position());
    }
  }

  /**
   * Bounds-checked reader from a buffer's position to its limit; every failure is a {@link
   * MalformedMessageException}. Byte arrays and strings are copied out, so the buffer may be reused afterwards, except
   * what {@link #range()} reads from a heap buffer. Not thread-safe.
   */
  static final class In {
    private final ByteBuffer buf;
    private final int start;

    In(byte[] bytes) {
      this(ByteBuffer.wrap(bytes));
    }

    /** Reads {@code buf} from its position to its limit; sets its byte order to big-endian (callers restore it). */
    In(ByteBuffer buf) {
      this.buf = buf.order(ByteOrder.BIG_ENDIAN);
      this.start = buf.position();
    }

    /** Bytes from the start of the message to its end. */
    int length() {
      return buf.limit() - start;
    }

    private void need(int n) {
      if (n < 0 || n > buf.remaining()) {
        throw new MalformedMessageException("message truncated: need " + n + " bytes at position "
            + (buf.position() - start) + " of " + length());
      }
    }

    int i8() {
      need(1);
      return buf.get();
    }

    short i16() {
      need(2);
      return buf.getShort();
    }

    int i32() {
      need(4);
      return buf.getInt();
    }

    long i64() {
      need(8);
      return buf.getLong();
    }

    String str() {
      int n = i32();
      if (n == -1) {
        return null;
      }
      need(n);
      String s;
      if (buf.hasArray()) {
        s = new String(buf.array(), buf.arrayOffset() + buf.position(), n, StandardCharsets.UTF_8);
        buf.position(buf.position() + n);
      } else {
        byte[] b = new byte[n];
        buf.get(b);
        s = new String(b, StandardCharsets.UTF_8);
      }
      return s;
    }

    byte[] bytes() {
      int n = i32();
      if (n == -1) {
        return null;
      }
      need(n);
      if (buf.hasArray()) {
        // Arrays.copyOfRange allocates without zeroing the array first (C2 intrinsic), buf.get(new byte[n]) does not:
        // a produce request's record batch is most of its frame (up to batch.size, 64 KiB by default)
        int from = buf.arrayOffset() + buf.position();
        byte[] b = Arrays.copyOfRange(buf.array(), from, from + n);
        buf.position(buf.position() + n);
        return b;
      }
      byte[] b = new byte[n];
      buf.get(b);
      return b;
    }

    /**
     * Reads a length-prefixed byte field as {@link #bytes()} does, but, when the buffer is a heap buffer, without
     * copying it: the range of the buffer's own array that holds it. Only for a buffer whose array nobody writes
     * again (a received Artery TCP frame: see {@link TributarySerializer#fromBinary(ByteBuffer, String)}); a direct
     * buffer's bytes are copied, as by {@link #bytes()}.
     *
     * @return the field's bytes, or {@code null} for a null field
     */
    Range range() {
      if (!buf.hasArray()) {
        byte[] b = bytes();
        return b == null ? null : new Range(b, 0, b.length);
      }
      int n = i32();
      if (n == -1) {
        return null;
      }
      need(n);
      int from = buf.arrayOffset() + buf.position();
      buf.position(buf.position() + n);
      return new Range(buf.array(), from, n);
    }

    /** Fails unless every byte was read. */
    void end() {
      if (buf.hasRemaining()) {
        throw new MalformedMessageException(buf.remaining() + " unexpected trailing bytes");
      }
    }
  }

  /** {@code length} bytes of {@code array} from {@code offset}: a field read by {@link In#range()}. */
  record Range(byte[] array, int offset, int length) {}
}
