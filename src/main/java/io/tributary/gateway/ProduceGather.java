package io.tributary.gateway;

import akka.actor.typed.ActorRef;
import akka.actor.typed.Behavior;
import akka.actor.typed.javadsl.Behaviors;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Gathers the partition leaders' {@link ProduceResponse}s to the entries of one {@link MultiProduceRequest} and
 * answers the client once, with a {@link MultiProduceResponse} in entry order: when every entry is answered, or when
 * the request's {@code timeoutMs} is up, the entries not answered by then as REQUEST_TIMED_OUT (retriable: an
 * idempotent producer's retry of a batch that was appended after all is recognised as a duplicate). Then it stops.
 *
 * <p>A response is matched to the first unanswered entry of its topic and partition (the gateway refuses a second
 * entry of a partition, see {@link Duplicate}); a response matching none (a leader answering twice) is ignored.
 *
 * <p>Messages: {@link ProduceResponse} from the leaders (its ref is handed to them as the entries' reply-to, and may
 * cross to another node when a leader is there), {@link Duplicate} from the gateway. Confined to its actor; one per
 * multi-partition request, a child of the gateway ({@link Gateway}; public for gateways of tests, which answer as it
 * does).
 */
public final class ProduceGather {

  /** The gateway answered entry {@code index} itself: it repeats an earlier entry's partition (INVALID_REQUEST). */
  public record Duplicate(int index) {}

  private enum Timeout {
    INSTANCE
  }

  private ProduceGather() {}

  /**
   * @param entries the request's entries (their topic and partition are what responses are matched by)
   * @param replyTo the client
   * @param timeout how long to wait for the leaders, the request's {@code timeoutMs}
   */
  public static Behavior<Object> create(
      List<MultiProduceRequest.Entry> entries, ActorRef<MultiProduceResponse> replyTo, Duration timeout) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startSingleTimer(Timeout.INSTANCE, timeout);
      ProduceResponse[] responses = new ProduceResponse[entries.size()];
      int[] missing = {entries.size()};
      return Behaviors.receive(Object.class)
          .onMessage(ProduceResponse.class, r -> {
            for (int i = 0; i < responses.length; i++) {
              MultiProduceRequest.Entry e = entries.get(i);
              if (responses[i] == null && e.partition() == r.partition() && e.topic().equals(r.topic())) {
                return answered(responses, missing, i, r, replyTo);
              }
            }
            return Behaviors.same();
          })
          .onMessage(Duplicate.class, d -> answered(responses, missing, d.index(),
              ProduceResponse.failed(entries.get(d.index()).topic(), entries.get(d.index()).partition(),
                  ErrorCode.INVALID_REQUEST, "Partition " + entries.get(d.index()).topic() + "-"
                      + entries.get(d.index()).partition() + " appears more than once in one produce request"),
              replyTo))
          .onMessage(Timeout.class, t -> {
            for (int i = 0; i < responses.length; i++) {
              if (responses[i] == null) {
                MultiProduceRequest.Entry e = entries.get(i);
                responses[i] = ProduceResponse.failed(e.topic(), e.partition(), ErrorCode.REQUEST_TIMED_OUT,
                    "The leader of " + e.topic() + "-" + e.partition() + " did not answer within "
                        + timeout.toMillis() + " ms");
              }
            }
            replyTo.tell(new MultiProduceResponse(Arrays.asList(responses)));
            return Behaviors.stopped();
          })
          .build();
    }));
  }

  private static Behavior<Object> answered(
      ProduceResponse[] responses, int[] missing, int index, ProduceResponse r,
      ActorRef<MultiProduceResponse> replyTo) {
    if (responses[index] != null) {
      return Behaviors.same();
    }
    responses[index] = r;
    if (--missing[0] > 0) {
      return Behaviors.same();
    }
    replyTo.tell(new MultiProduceResponse(Arrays.asList(responses)));
    return Behaviors.stopped();
  }
}
