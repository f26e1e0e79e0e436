package io.tributary.protocol;

import akka.actor.typed.ActorRef;

/**
 * Reads record batches of one partition starting at {@code fetchOffset}, as Kafka's Fetch request for one partition.
 *
 * <p>If {@code fetchOffset} equals the high watermark, the leader holds the request for up to {@code maxWaitMs}
 * (long poll) and answers as soon as new records are committed. The response holds whole batches: the first batch may
 * start before {@code fetchOffset} (the consumer skips those records) and, as in Kafka, the first batch is returned even
 * if it is larger than {@code maxBytes}, so that one big record never blocks a partition.
 *
 * @param version protocol version of the sender
 * @param topic topic name
 * @param partition partition number
 * @param fetchOffset the first offset wanted; must be in [log start offset, high watermark]
 * @param maxBytes soft limit on the response's batch bytes (at least 1), as Kafka's {@code max.partition.fetch.bytes}
 * @param maxWaitMs how long to wait at the log end for new records, ms (0 = answer at once)
 * @param replyTo where the {@link FetchResponse} goes
 */
public record FetchRequest(
    short version,
    String topic,
    int partition,
    long fetchOffset,
    int maxBytes,
    int maxWaitMs,
    ActorRef<FetchResponse> replyTo)
    implements ClientRequest, io.tributary.serialization.HotPath {}
