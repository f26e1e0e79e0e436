package io.tributary.protocol;

import java.util.List;

/**
 * The answer to a {@link MultiProduceRequest}: one {@link ProduceResponse} per entry of the request, in the request's
 * entry order, each as the same batch sent alone in a {@link ProduceRequest} would have been answered (success with
 * its base offset, or its own error).
 *
 * @param responses one per entry of the request, same order
 */
public record MultiProduceResponse(List<ProduceResponse> responses) implements io.tributary.serialization.HotPath {
  public MultiProduceResponse {
    responses = List.copyOf(responses);
  }
}
