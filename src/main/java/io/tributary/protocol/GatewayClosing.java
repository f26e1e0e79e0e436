package io.tributary.protocol;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A node's notice to the clients that used its client listener that the listener is closing (the node stops through
 * its coordinated shutdown): a client moves to another node of its bootstrap list at once, as on a lost connection,
 * instead of waiting for its failure detector. Sent to the client's gateway failover actor at {@value #CLIENT_PATH}
 * in the client's ActorSystem. Control plane (CBOR). Clients that do not know it drop it.
 *
 * @param gateway the Akka address of the closing listener ({@code akka://tributary@host:port}), so that a client
 *     whose current gateway is elsewhere ignores it
 */
public record GatewayClosing(@JsonProperty("gateway") String gateway) implements CborSerializable {
  /** Path, in a remote client's ActorSystem, of the actor that takes this notice. */
  public static final String CLIENT_PATH = "/system/tributary-gateway-failover";

  @JsonCreator
  public GatewayClosing {}
}
