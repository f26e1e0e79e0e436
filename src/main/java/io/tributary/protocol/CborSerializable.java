package io.tributary.protocol;

/**
 * Marker for control-plane messages (admin, metadata, offsets lookups, controller commands) that cross JVMs encoded
 * with Jackson CBOR (bound in {@code reference.conf} under {@code akka.actor.serialization-bindings}). Never used for
 * record batches: those go through {@link io.tributary.serialization.TributarySerializer}.
 */
public interface CborSerializable {}
