package io.tributary.serialization;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Minimal big-endian writer and bounds-checked reader over {@code byte[]} for {@link TributarySerializer}. Strings
 * are an int32 byte length (-1 = null) then UTF-8; byte arrays are an int32 length (-1 = null) then the bytes.
 */
final class Wire {
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);

  private Wire() {}

  /** Growable output buffer. Not thread-safe. */
  static final class Out {
    private byte[] buf;
    private int pos;

    Out(int initial) {
      buf = new byte[Math.max(16, initial)];
    }

    private void need(int n) {
      if (pos + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, pos + n));
      }
    }

    Out i8(int v) {
      need(1);
      buf[pos++] = (byte) v;
      return this;
    }

    Out i16(short v) {
      need(2);
      SHORT.set(buf, pos, v);
      pos += 2;
      return this;
    }

    Out i32(int v) {
      need(4);
      INT.set(buf, pos, v);
      pos += 4;
      return this;
    }

    Out i64(long v) {
      need(8);
      LONG.set(buf, pos, v);
      pos += 8;
      return this;
    }

    Out str(String s) {
      if (s == null) {
        return i32(-1);
      }
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      i32(b.length);
      need(b.length);
      System.arraycopy(b, 0, buf, pos, b.length);
      pos += b.length;
      return this;
    }

    Out bytes(byte[] b) {
      if (b == null) {
        return i32(-1);
      }
      i32(b.length);
      need(b.length);
      System.arraycopy(b, 0, buf, pos, b.length);
      pos += b.length;
      return this;
    }

    byte[] toArray() {
      return pos == buf.length ? buf : Arrays.copyOf(buf, pos);
    }
  }

  /** Bounds-checked reader; every failure is a {@link MalformedMessageException}. Not thread-safe. */
  static final class In {
    private final byte[] buf;
    private int pos;

    In(byte[] buf) {
      this.buf = buf;
    }

    private void need(int n) {
      if (n < 0 || pos + n > buf.length) {
        throw new MalformedMessageException(
            "message truncated: need " + n + " bytes at position " + pos + " of " + buf.length);
      }
    }

    int i8() {
      need(1);
      return buf[pos++];
    }

    short i16() {
      need(2);
      short v = (short) SHORT.get(buf, pos);
      pos += 2;
      return v;
    }

    int i32() {
      need(4);
      int v = (int) INT.get(buf, pos);
      pos += 4;
      return v;
    }

    long i64() {
      need(8);
      long v = (long) LONG.get(buf, pos);
      pos += 8;
      return v;
    }

    String str() {
      int n = i32();
      if (n == -1) {
        return null;
      }
      need(n);
      String s = new String(buf, pos, n, StandardCharsets.UTF_8);
      pos += n;
      return s;
    }

    byte[] bytes() {
      int n = i32();
      if (n == -1) {
        return null;
      }
      need(n);
      byte[] b = Arrays.copyOfRange(buf, pos, pos + n);
      pos += n;
      return b;
    }

    /** Fails unless every byte was read. */
    void end() {
      if (pos != buf.length) {
        throw new MalformedMessageException((buf.length - pos) + " unexpected trailing bytes");
      }
    }
  }
}
