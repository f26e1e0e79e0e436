package io.tributary.protocol;

/**
 * A request that a client sends to a node's gateway ({@code /system/tributary-gateway}). Every request carries the
 * protocol {@link #version()} of its sender and a {@code replyTo} for its response.
 */
public interface ClientRequest {
  /** The protocol version the sender speaks, see {@link ProtocolVersions}. */
  short version();
}
