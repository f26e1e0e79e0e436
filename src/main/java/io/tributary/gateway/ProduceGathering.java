package io.tributary.gateway;

import akka.actor.typed.ActorRef;
import io.tributary.protocol.ErrorCode;
import io.tributary.protocol.MultiProduceRequest;
import io.tributary.protocol.MultiProduceResponse;
import io.tributary.protocol.ProduceRequest;
import io.tributary.protocol.ProduceResponse;
import io.tributary.record.ByteUtils;
import io.tributary.record.RecordBatch;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The gateway's bookkeeping of {@link MultiProduceRequest}s in flight: {@link #register} turns a request's entries
 * into one {@link ProduceRequest} each, numbered with correlation ids (as Kafka's request header's) and answered to
 * one gatherer ref (the gateway's message adapter); {@link #onResponse} files each leader's answer under its entry and
 * answers the client, in entry order, once every entry is answered; {@link #expire} answers the entries whose leader
 * has not answered within the request's {@code timeoutMs}, or, for a request of an idempotent producer only, within
 * {@link #STRAGGLER_GRACE_NANOS} of the first answered entry, REQUEST_TIMED_OUT (retriable: an idempotent producer's
 * retry of a batch that was appended after all is recognised as a duplicate; a producer without idempotence would
 * append it twice, so its entries wait for the whole {@code timeoutMs}, as Kafka's). No actor per request, no timer
 * per request: the owner ticks {@link #expire} while {@link #isEmpty()} is false.
 *
 * <p>Not thread-safe: confined to the actor that owns it (the {@link Gateway}; public for gateways of tests).
 */
public final class ProduceGathering {

  /**
   * How long the other entries of a request may take once one of its entries is answered, ns: then the rest are
   * answered REQUEST_TIMED_OUT, so that a leader that died with an entry (whose answer is lost) holds up the other
   * entries' answers for this long, not for the whole {@code timeoutMs}. One request's entries are normally answered
   * within milliseconds of each other. Only for requests whose batches all carry a producer id (an idempotent
   * producer's): a busy leader can take longer than this, and a retried batch without a producer id is appended again
   * (a 200-partition {@code acks=1} run stored 1,031,309 of 1,000,000 records before this rule).
   */
  static final long STRAGGLER_GRACE_NANOS = 2_000_000_000L;

  private final ActorRef<ProduceResponse> gatherer;
  private final Map<Integer, Pending> byId = new HashMap<>();
  private int nextId = 1;

  private static final class Pending {
    final MultiProduceRequest request;
    final ProduceResponse[] responses;
    final int firstId;
    final long deadlineNanos;
    /** Whether every entry's batch carries a producer id, so that {@link #STRAGGLER_GRACE_NANOS} may cut it short. */
    final boolean idempotent;
    int missing;
    /** When the first entry was answered (0: none yet). */
    long firstAnsweredNanos;

    Pending(MultiProduceRequest request, int firstId, long deadlineNanos) {
      this.request = request;
      this.responses = new ProduceResponse[request.entries().size()];
      this.firstId = firstId;
      this.deadlineNanos = deadlineNanos;
      this.missing = responses.length;
      boolean all = true;
      for (MultiProduceRequest.Entry e : request.entries()) {
        all &= hasProducerId(e);
      }
      this.idempotent = all;
    }
  }

  /** @param gatherer where the entries' leaders answer: the owner's ref whose {@link ProduceResponse}s it passes here */
  public ProduceGathering(ActorRef<ProduceResponse> gatherer) {
    this.gatherer = gatherer;
  }

  /**
   * Registers a request and returns its entries as requests to route, in entry order: each of the request's version,
   * acks and timeout, answered to the gatherer under its own correlation id (never 0).
   *
   * @param r a request with a reply-to and at least one entry
   * @param nowNanos {@link System#nanoTime()}: its deadline is {@code timeoutMs} later
   * @throws IllegalArgumentException if {@code r} has no reply-to or no entries
   */
  public List<ProduceRequest> register(MultiProduceRequest r, long nowNanos) {
    int n = r.entries().size();
    if (r.replyTo() == null || n == 0) {
      throw new IllegalArgumentException("a gathered request needs a reply-to and entries");
    }
    if (nextId <= 0 || nextId > Integer.MAX_VALUE - n) { // ids of one request are contiguous, never 0
      nextId = 1;
    }
    int first = nextId;
    nextId += n;
    Pending p = new Pending(r, first, nowNanos + Math.max(1, r.timeoutMs()) * 1_000_000L);
    List<ProduceRequest> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      MultiProduceRequest.Entry e = r.entries().get(i);
      byId.put(first + i, p);
      out.add(new ProduceRequest(r.version(), e.topic(), e.partition(), r.acks(), r.timeoutMs(), e.batchBuffer(),
          e.batchOffset(), e.batchLength(), gatherer, first + i));
    }
    return out;
  }

  /**
   * Files an entry's answer; when it is the request's last, answers the client.
   *
   * @return false if no entry in flight has its correlation id (answered twice, or after its request expired)
   */
  public boolean onResponse(ProduceResponse response) {
    Pending p = byId.remove(response.correlationId());
    if (p == null) {
      return false;
    }
    int index = response.correlationId() - p.firstId;
    if (p.responses[index] == null) {
      p.responses[index] = response.withCorrelationId(0);
      if (p.firstAnsweredNanos == 0) {
        p.firstAnsweredNanos = System.nanoTime() | 1;
      }
      if (--p.missing == 0) {
        p.request.replyTo().tell(new MultiProduceResponse(Arrays.asList(p.responses)));
      }
    }
    return true;
  }

  /** Answers every request whose deadline has passed, its unanswered entries REQUEST_TIMED_OUT. */
  public void expire(long nowNanos) {
    List<Pending> expired = null;
    for (Iterator<Pending> it = byId.values().iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (nowNanos - p.deadlineNanos >= 0
          || (p.idempotent && p.firstAnsweredNanos != 0
              && nowNanos - p.firstAnsweredNanos >= STRAGGLER_GRACE_NANOS)) {
        it.remove();
        if (expired == null) {
          expired = new ArrayList<>();
        }
        if (!expired.contains(p)) {
          expired.add(p);
        }
      }
    }
    if (expired == null) {
      return;
    }
    for (Pending p : expired) {
      for (int i = 0; i < p.responses.length; i++) {
        if (p.responses[i] == null) {
          MultiProduceRequest.Entry e = p.request.entries().get(i);
          p.responses[i] = ProduceResponse.failed(e.topic(), e.partition(), ErrorCode.REQUEST_TIMED_OUT,
              "The leader of " + e.topic() + "-" + e.partition() + " did not answer within "
                  + (nowNanos - p.deadlineNanos >= 0 ? p.request.timeoutMs() + " ms"
                      : STRAGGLER_GRACE_NANOS / 1_000_000 + " ms of the request's other partitions"));
        }
      }
      p.request.replyTo().tell(new MultiProduceResponse(Arrays.asList(p.responses)));
    }
  }

  /** Whether the entry's batch carries a producer id (&ge; 0); false for a batch too short to hold its header. */
  static boolean hasProducerId(MultiProduceRequest.Entry e) {
    return e.batchBuffer() != null && e.batchLength() >= RecordBatch.RECORDS_OFFSET
        && ByteUtils.readLong(e.batchBuffer(), e.batchOffset() + RecordBatch.PRODUCER_ID_OFFSET) >= 0;
  }

  /** Whether no request is in flight (the owner can stop ticking {@link #expire}). */
  public boolean isEmpty() {
    return byId.isEmpty();
  }
}
