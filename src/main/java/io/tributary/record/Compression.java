package io.tributary.record;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import io.tributary.protocol.ErrorCode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FrameInputStream;
import net.jpountz.xxhash.XXHashFactory;

/**
 * Compression of the records section of a record batch (everything after the {@link RecordBatch#HEADER_SIZE}-byte
 * header), as Kafka's magic-2 batches: the whole section is one compressed stream, the header stays plain.
 *
 * <h2>Stream formats</h2>
 *
 * <ul>
 *   <li>gzip: RFC 1952 ({@code java.util.zip.GZIPOutputStream}, 8 KiB buffer), as Kafka.
 *   <li>lz4: the standard LZ4 frame format: 64 KiB independent blocks compressed by lz4-java, no block or content
 *       checksum (the batch CRC32C covers the bytes), no content size; framed here as Kafka's {@code
 *       KafkaLZ4BlockOutputStream} frames them, byte for byte what lz4-java's {@code LZ4FrameOutputStream} writes
 *       with these settings. Any valid LZ4 frame is read (lz4-java's {@code LZ4FrameInputStream}).
 *   <li>zstd: one standard zstd frame with the content size (zstd-jni's one-shot {@code Zstd.compressByteArray}).
 *       Any valid zstd stream (several frames, no content size) is read.
 * </ul>
 *
 * Snappy is not supported: {@link Compressor} refuses it and {@link #decompress} throws {@link
 * ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}.
 *
 * <h2>Errors</h2>
 *
 * A compressed section that does not decompress (garbage behind a valid CRC, a truncated stream, trailing bytes the
 * codec rejects) throws {@link InvalidRecordException} with {@link ErrorCode#INVALID_RECORD}, never a codec's own
 * exception; so does one that decompresses to more than {@link #MAX_DECOMPRESSED_SIZE} bytes (a decompression bomb).
 *
 * <p>This class is stateless and thread-safe; a {@link Compressor} is not thread-safe.
 */
public final class Compression {

  /**
   * The largest records section a batch may decompress to, in bytes (256 MiB): more is refused with {@link
   * ErrorCode#INVALID_RECORD}. Output buffers grow with the bytes really produced, never to a size a stream only
   * claims.
   */
  public static final int MAX_DECOMPRESSED_SIZE = 256 << 20;

  /** LZ4 frame block size, as Kafka's {@code KafkaLZ4BlockOutputStream} (64 KiB). */
  private static final int LZ4_BLOCK_BYTES = 64 << 10;

  /**
   * The 7-byte header of every LZ4 frame written: magic {@code 0x184D2204} (little-endian), FLG {@code 0x60}
   * (version 01, independent blocks, no block checksum, no content size, no content checksum), BD {@code 0x40} (64
   * KiB blocks), and the header checksum, the second byte of the XXH32 (seed 0) of FLG and BD, as the frame format
   * specifies.
   */
  static final byte[] LZ4_FRAME_HEADER = lz4FrameHeader();

  private static byte[] lz4FrameHeader() {
    byte[] h = {0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0};
    h[6] = (byte) ((XXHashFactory.fastestInstance().hash32().hash(h, 4, 2, 0) >> 8) & 0xFF);
    return h;
  }

  /** gzip stream buffer, as Kafka (8 KiB). */
  private static final int GZIP_BUFFER_SIZE = 8 * 1024;

  private Compression() {}

  /**
   * Compresses records sections with one codec and level, reusing its output buffer and codec objects between calls
   * (e.g. one per producer). Not thread-safe: use it from one thread at a time.
   */
  public static final class Compressor {
    private final CompressionType type;
    private final int level;
    private final LZ4Compressor lz4;
    private final Output out = new Output(0);

    /**
     * A compressor for {@code type} at {@code level}.
     *
     * @param type a supported codec other than {@link CompressionType#NONE}
     * @param level a level in {@code [type.minLevel(), type.maxLevel()]}
     * @throws IllegalArgumentException if the codec is none or not supported, or the level is out of range
     */
    public Compressor(CompressionType type, int level) {
      if (type == CompressionType.NONE || !type.isSupported()) {
        throw new IllegalArgumentException("compression type " + type.configName + " cannot be used to compress");
      }
      if (level < type.minLevel() || level > type.maxLevel()) {
        throw new IllegalArgumentException(
            "compression level " + level + " of " + type.configName + " is not in [" + type.minLevel() + ", "
                + type.maxLevel() + "]");
      }
      this.type = type;
      this.level = level;
      if (type == CompressionType.LZ4) {
        LZ4Factory factory = LZ4Factory.fastestInstance();
        this.lz4 = level == type.defaultLevel() ? factory.fastCompressor() : factory.highCompressor(level);
      } else {
        this.lz4 = null;
      }
    }

    /** The codec. */
    public CompressionType type() {
      return type;
    }

    /** The level. */
    public int level() {
      return level;
    }

    /**
     * Compresses {@code src[offset, offset + length)} into a new array that starts with {@code headroom} zero bytes
     * (room for the batch header) followed by the compressed stream, exactly sized.
     *
     * @param src the uncompressed records
     * @param offset start in {@code src}
     * @param length bytes to compress
     * @param headroom bytes to leave free at the start of the result
     * @return {@code headroom} bytes, then the compressed stream
     * @throws InvalidRecordException ({@link ErrorCode#MESSAGE_TOO_LARGE}) if the output would not fit an array
     */
    public byte[] compress(byte[] src, int offset, int length, int headroom) {
      out.reset(headroom);
      try {
        switch (type) {
          case ZSTD:
            compressZstd(src, offset, length);
            break;
          case LZ4:
            compressLz4Frame(src, offset, length);
            break;
          case GZIP:
            try (OutputStream s = new LevelGzipOutputStream(out, level)) {
              s.write(src, offset, length);
            }
            break;
          default:
            throw new IllegalStateException("cannot compress with " + type);
        }
      } catch (IOException e) {
        // only Output throws, when the result would not fit an array
        throw new InvalidRecordException(ErrorCode.MESSAGE_TOO_LARGE, "compressed records too large: " + e);
      }
      byte[] result = Arrays.copyOf(out.buf, out.count);
      Arrays.fill(result, 0, headroom, (byte) 0);
      out.release();
      return result;
    }

    /**
     * Writes {@code src[offset, offset + length)} as one LZ4 frame, byte for byte what lz4-java's {@code
     * LZ4FrameOutputStream} writes with 64 KiB independent blocks and no checksums or content size (see {@code
     * LZ4_FRAME_HEADER}): the header, then per 64 KiB of input a little-endian block size and the block compressed by
     * lz4-java (or stored plain, size with the high bit set, if it does not shrink), then a zero end mark. As Kafka's
     * {@code KafkaLZ4BlockOutputStream} frames lz4-java's blocks itself: the stream class allocates two 64 KiB
     * buffers and hashes its header per frame, which cost twice the compression of a 40 KiB batch.
     */
    private void compressLz4Frame(byte[] src, int offset, int length) throws IOException {
      out.ensure((long) out.count + LZ4_FRAME_HEADER.length + 4
          + (long) (length / LZ4_BLOCK_BYTES + 1) * (4 + lz4.maxCompressedLength(LZ4_BLOCK_BYTES)));
      byte[] buf = out.buf;
      int pos = out.count;
      System.arraycopy(LZ4_FRAME_HEADER, 0, buf, pos, LZ4_FRAME_HEADER.length);
      pos += LZ4_FRAME_HEADER.length;
      for (int at = offset, end = offset + length; at < end; ) {
        int chunk = Math.min(LZ4_BLOCK_BYTES, end - at);
        int n = lz4.compress(src, at, chunk, buf, pos + 4, buf.length - pos - 4);
        if (n < chunk) {
          writeIntLe(buf, pos, n);
        } else {
          System.arraycopy(src, at, buf, pos + 4, chunk);
          writeIntLe(buf, pos, chunk | 0x80000000);
          n = chunk;
        }
        pos += 4 + n;
        at += chunk;
      }
      writeIntLe(buf, pos, 0); // end mark
      out.count = pos + 4;
    }

    private static void writeIntLe(byte[] b, int pos, int v) {
      b[pos] = (byte) v;
      b[pos + 1] = (byte) (v >>> 8);
      b[pos + 2] = (byte) (v >>> 16);
      b[pos + 3] = (byte) (v >>> 24);
    }

    private void compressZstd(byte[] src, int offset, int length) throws IOException {
      long bound = Zstd.compressBound(length);
      out.ensure(out.count + bound);
      long n = Zstd.compressByteArray(out.buf, out.count, out.buf.length - out.count, src, offset, length, level);
      if (Zstd.isError(n)) {
        throw new IllegalStateException("zstd compression failed: " + Zstd.getErrorName(n));
      }
      out.count += (int) n;
    }
  }

  /** {@code GZIPOutputStream} at a chosen level, as Kafka's {@code GzipOutputStream}. */
  private static final class LevelGzipOutputStream extends GZIPOutputStream {
    LevelGzipOutputStream(OutputStream out, int level) throws IOException {
      super(out, GZIP_BUFFER_SIZE);
      def.setLevel(level);
    }
  }

  /**
   * Decompresses a records section into {@code out} (from its position 0; the result is {@code out.buf[0,
   * out.count)}).
   *
   * @param codec the batch's codec id (bits 0-2 of its attributes), not {@link RecordBatch#COMPRESSION_NONE}
   * @param src the batch bytes
   * @param offset start of the compressed section
   * @param length length of the compressed section
   * @param out where the records go; reset first, grown as needed up to {@link #MAX_DECOMPRESSED_SIZE}
   * @throws InvalidRecordException ({@link ErrorCode#UNSUPPORTED_COMPRESSION_TYPE}) for snappy or an unassigned id;
   *     ({@link ErrorCode#INVALID_RECORD}) if the stream does not decompress or is too large
   */
  static void decompress(int codec, byte[] src, int offset, int length, Output out) {
    CompressionType type = CompressionType.forId(codec);
    if (type == null || !type.isSupported() || type == CompressionType.NONE) {
      throw new InvalidRecordException(
          ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "record batch compression type " + codec + " is not supported");
    }
    out.reset(0);
    try {
      switch (type) {
        case ZSTD:
          if (!zstdOneShot(src, offset, length, out)) {
            out.reset(0);
            try (InputStream in = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(src, offset, length))) {
              out.readFully(in);
            }
          }
          break;
        case LZ4:
          try (InputStream in =
              new LZ4FrameInputStream(
                  new ByteArrayInputStream(src, offset, length),
                  LZ4Factory.fastestInstance().safeDecompressor(),
                  XXHashFactory.fastestInstance().hash32())) {
            out.readFully(in);
          }
          break;
        case GZIP:
          try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(src, offset, length), GZIP_BUFFER_SIZE)) {
            out.readFully(in);
          }
          break;
        default:
          throw new IllegalStateException("cannot decompress " + type);
      }
    } catch (InvalidRecordException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new InvalidRecordException(
          "the " + length + "-byte " + type.configName + " records section does not decompress: " + e);
    }
  }

  /**
   * Decompresses a single zstd frame that declares a plausible content size in one call; returns false (nothing
   * decided) if the size is not declared or implausible, or the one-shot call fails (e.g. several frames).
   */
  private static boolean zstdOneShot(byte[] src, int offset, int length, Output out) throws IOException {
    long declared = Zstd.getFrameContentSize(src, offset, length);
    if (declared < 0 || declared > Math.min(MAX_DECOMPRESSED_SIZE, (1L << 20) + 64L * length)) {
      return false;
    }
    out.ensure(declared);
    long n = Zstd.decompressByteArray(out.buf, 0, (int) declared, src, offset, length);
    if (Zstd.isError(n) || n != declared) {
      return false;
    }
    out.count = (int) n;
    return true;
  }

  /**
   * A growable byte buffer capped at {@link #MAX_DECOMPRESSED_SIZE} bytes: the target of compression (an {@link
   * OutputStream}) and of decompression. Not thread-safe.
   */
  static final class Output extends OutputStream {
    /** Capacity above which {@link #release} drops the buffer instead of keeping it for the next use. */
    private static final int KEEP_LIMIT = 4 << 20;

    byte[] buf;
    int count;

    Output(int initialCapacity) {
      buf = new byte[initialCapacity];
    }

    void reset(int position) {
      ensureUnchecked(position);
      count = position;
    }

    /** Drops a buffer that grew past {@link #KEEP_LIMIT}, so one huge batch does not pin memory. */
    void release() {
      if (buf.length > KEEP_LIMIT) {
        buf = new byte[0];
      }
      count = 0;
    }

    void ensure(long capacity) throws IOException {
      if (capacity > MAX_DECOMPRESSED_SIZE + RecordBatch.HEADER_SIZE) {
        throw new IOException("more than " + MAX_DECOMPRESSED_SIZE + " bytes");
      }
      ensureUnchecked((int) capacity);
    }

    private void ensureUnchecked(int capacity) {
      if (capacity > buf.length) {
        int grown = (int) Math.min(MAX_DECOMPRESSED_SIZE + (long) RecordBatch.HEADER_SIZE, 2L * buf.length);
        buf = Arrays.copyOf(buf, Math.max(capacity, Math.max(grown, 256)));
      }
    }

    @Override
    public void write(int b) throws IOException {
      ensure(count + 1L);
      buf[count++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      ensure((long) count + len);
      System.arraycopy(b, off, buf, count, len);
      count += len;
    }

    /** Reads {@code in} to its end. */
    void readFully(InputStream in) throws IOException {
      while (true) {
        if (count == buf.length) {
          ensure(count + 1L);
        }
        int n = in.read(buf, count, buf.length - count);
        if (n < 0) {
          return;
        }
        count += n;
        if (count > MAX_DECOMPRESSED_SIZE) {
          throw new IOException("more than " + MAX_DECOMPRESSED_SIZE + " bytes");
        }
      }
    }
  }
}
