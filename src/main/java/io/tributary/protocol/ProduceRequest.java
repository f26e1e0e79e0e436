package io.tributary.protocol;

import akka.actor.typed.ActorRef;

/**
 * Appends one record batch to one partition, as Kafka's Produce request (one partition per request: a producer sends
 * one request per ready batch and pipelines them).
 *
 * <p>Hot path: encoded by {@link io.tributary.serialization.TributarySerializer}, never Jackson. The batch bytes are
 * not copied by the broker; the partition leader assigns the base offset and leader epoch in place.
 *
 * @param version protocol version of the sender
 * @param topic topic name
 * @param partition partition number, 0-based
 * @param acks -1 (all in-sync replicas, as Kafka's {@code acks=all}), 1 (leader persisted) or 0 (no reply is sent)
 * @param timeoutMs how long the broker may wait for replication before answering {@link ErrorCode#REQUEST_TIMED_OUT}
 * @param batch exactly one record batch in the v2 layout of {@link io.tributary.record.RecordBatch}
 * @param replyTo where the {@link ProduceResponse} goes; {@code null} when {@code acks=0}
 */
public record ProduceRequest(
    short version,
    String topic,
    int partition,
    short acks,
    int timeoutMs,
    byte[] batch,
    ActorRef<ProduceResponse> replyTo)
    implements ClientRequest, io.tributary.serialization.HotPath {}
