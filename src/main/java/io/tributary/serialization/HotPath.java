package io.tributary.serialization;

/**
 * Marker for messages on the data path (produce, fetch, journal events, partition snapshots and the partition
 * leader's commands). They are encoded by {@link TributarySerializer} over a hand-written binary layout, never by
 * Jackson (bound in {@code reference.conf}).
 */
public interface HotPath {}
