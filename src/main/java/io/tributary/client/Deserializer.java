package io.tributary.client;

import java.nio.charset.StandardCharsets;

/** Turns bytes back into a key or value, as Kafka's {@code Deserializer}. */
@FunctionalInterface
public interface Deserializer<T> {
  /** The value of {@code data}; {@code null} stays {@code null}. */
  T deserialize(String topic, byte[] data);

  /** UTF-8 strings. */
  static Deserializer<String> string() {
    return (topic, b) -> b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** Byte arrays as they are. */
  static Deserializer<byte[]> byteArray() {
    return (topic, b) -> b;
  }
}
