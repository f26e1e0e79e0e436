package io.tributary.log;

import io.tributary.broker.TopicConfig;

/**
 * An immutable snapshot of a {@link PartitionLog} (everything but the in-memory tail), saved every
 * {@code tributary.log.snapshot-every-batches} events and after each retention step, so that recovery replays only
 * the events after it. Encoded by {@link io.tributary.serialization.TributarySerializer} (manifest {@code SN}).
 *
 * <p>The four {@code chunk…} arrays are the {@link OffsetIndex} chunks, oldest first, all of the same length; the
 * {@code epoch…} arrays the leader epoch cache; the {@code truncation…} arrays the log truncations readers still
 * apply; {@code producerState} the {@link ProducerStateTable} in its own binary form (empty = no producers).
 */
public record PartitionSnapshot(
    PartitionLog.Status status,
    String topicId,
    TopicConfig config,
    long logStartOffset,
    long logEndOffset,
    long highWatermark,
    int leaderEpoch,
    long lastSeqNr,
    long pendingDeleteToSeqNr,
    long[] chunkBaseOffsets,
    long[] chunkSeqNrs,
    long[] chunkBytes,
    long[] chunkMaxTimestamps,
    int[] epochNumbers,
    long[] epochStartOffsets,
    long[] truncationOffsets,
    long[] truncationSeqNrs,
    byte[] producerState)
    implements io.tributary.serialization.HotPath {}
