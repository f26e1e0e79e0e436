package io.tributary.log;

/** Placeholder until the idempotence branch lands (replaced by the real table). */
final class ProducerStateTable {
  void onAppended(long producerId, short epoch, int baseSequence, int lastSequence, long baseOffset, long lastOffset,
      long maxTimestampMs) {}

  void truncateTo(long offset) {}

  byte[] toBytes() {
    return new byte[0];
  }

  static ProducerStateTable fromBytes(byte[] bytes) {
    return new ProducerStateTable();
  }
}
