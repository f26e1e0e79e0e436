package io.tributary.protocol;

import akka.actor.typed.ActorRef;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * A node's notice to the clients that used its client listener that the listener is closing (the node stops through
 * its coordinated shutdown): a client moves to another node of its bootstrap list at once, as on a lost connection,
 * instead of waiting for its failure detector. Sent to the client's gateway failover actor at {@value #CLIENT_PATH}
 * in the client's ActorSystem. Control plane (CBOR). Clients that do not know it drop it.
 *
 * <p>A client answers {@link Seen} to {@code replyTo}, and the listener waits for those answers (a bounded time)
 * before its ActorSystem terminates: Artery tells remote systems that a system terminates on its control stream, which
 * can overtake this notice on the ordinary one, and a client would then see its gateway "gone" instead of "closing".
 *
 * @param gateway the Akka address of the closing listener ({@code akka://tributary@host:port}), so that a client
 *     whose current gateway is elsewhere ignores it
 * @param replyTo where the client's {@link Seen} goes; {@code null} for no answer
 */
public record GatewayClosing(
    @JsonProperty("gateway") String gateway, @JsonProperty("replyTo") ActorRef<Seen> replyTo)
    implements CborSerializable {
  /** Path, in a remote client's ActorSystem, of the actor that takes this notice. */
  public static final String CLIENT_PATH = "/system/tributary-gateway-failover";

  @JsonCreator
  public GatewayClosing {}

  /** A notice that asks no answer. */
  public GatewayClosing(String gateway) {
    this(gateway, null);
  }

  /**
   * A client's answer to {@link GatewayClosing}: it has taken the notice. Control plane (CBOR).
   *
   * @param client the Akka address of the client's ActorSystem ({@code akka://name@host:port})
   */
  public record Seen(@JsonProperty("client") String client) implements CborSerializable {
    @JsonCreator
    public Seen {}
  }
}
