package io.tributary.client;

import java.nio.charset.StandardCharsets;

/** Turns a key or value into bytes, as Kafka's {@code Serializer}. Must be thread-safe. */
@FunctionalInterface
public interface Serializer<T> {
  /** The bytes of {@code data}; {@code null} stays {@code null}. */
  byte[] serialize(String topic, T data);

  /** UTF-8 strings. */
  static Serializer<String> string() {
    return (topic, s) -> s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  /** Byte arrays as they are. */
  static Serializer<byte[]> byteArray() {
    return (topic, b) -> b;
  }
}
