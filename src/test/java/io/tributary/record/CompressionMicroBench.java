package io.tributary.record;

import java.util.SplittableRandom;

/**
 * A quick microbenchmark, not a test (run by hand): the cost of building (compressing) and of {@link
 * RecordBatch#validate} (decompressing and walking the records, as the broker does on every produce) for 64 KiB
 * batches of 100-byte records, per codec. Two payloads: every record the same 100 random uppercase letters (what
 * Kafka's and Tributary's {@code perf produce} send), and different random letters per record.
 *
 * <p>Run: {@code mvn -q test-compile && java -cp target/classes:target/test-classes:$(cat cp.txt)
 * io.tributary.record.CompressionMicroBench} (cp.txt from {@code mvn dependency:build-classpath}).
 */
public final class CompressionMicroBench {

  public static void main(String[] args) {
    for (boolean samePayload : new boolean[] {true, false}) {
      for (CompressionType type :
          new CompressionType[] {CompressionType.NONE, CompressionType.LZ4, CompressionType.ZSTD, CompressionType.GZIP}) {
        run(type, samePayload);
      }
    }
  }

  private static void run(CompressionType type, boolean samePayload) {
    Compression.Compressor compressor =
        type == CompressionType.NONE ? null : new Compression.Compressor(type, type.defaultLevel());
    SplittableRandom random = new SplittableRandom(0);
    byte[][] payloads = new byte[samePayload ? 1 : 1024][100];
    for (byte[] p : payloads) {
      for (int i = 0; i < p.length; i++) {
        p[i] = (byte) (random.nextInt(26) + 65);
      }
    }
    int iterations = 3000;
    long buildNanos = 0;
    long validateNanos = 0;
    long inBytes = 0;
    long outBytes = 0;
    int records = 0;
    for (int it = 0; it < iterations + 1000; it++) {
      RecordBatchBuilder b = new RecordBatchBuilder(0L, -1L, (short) -1, -1, -1, 65536);
      int n = 0;
      while (b.hasRoomFor(65536, 1_700_000_000_000L, null, payloads[n % payloads.length], null)) {
        b.append(1_700_000_000_000L, null, payloads[n % payloads.length], null);
        n++;
      }
      int uncompressed = b.estimatedSizeInBytes();
      long t0 = System.nanoTime();
      byte[] bytes = b.build(compressor);
      long t1 = System.nanoTime();
      RecordBatch.validate(bytes);
      long t2 = System.nanoTime();
      if (it >= 1000) { // warm-up first
        buildNanos += t1 - t0;
        validateNanos += t2 - t1;
        inBytes += uncompressed;
        outBytes += bytes.length;
        records = n;
      }
    }
    System.out.printf(
        "%-4s %-10s %d records/batch, %6d -> %6d bytes (ratio %.3f), build %6.1f us, validate %6.1f us%n",
        type.configName,
        samePayload ? "same" : "random",
        records,
        inBytes / iterations,
        outBytes / iterations,
        (double) outBytes / inBytes,
        buildNanos / 1e3 / iterations,
        validateNanos / 1e3 / iterations);
  }
}
